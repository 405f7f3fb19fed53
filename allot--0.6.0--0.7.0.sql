/* allot 0.6.0 -> 0.7.0.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.7.0'" to load this file. \quit

/* ---------------------------------------------------------------------------
 * assign_workload at a one-row UPDATE's cost (issue 33): no GUC switch
 * where none is needed, and a row type looked up, not built, per call.
 *
 * A SET clause costs every call a GUC switch and back: the value parsed,
 * the old one saved, both passed through their hooks; 0.6.0's repeat
 * assignment spent 9% of its instructions on it, and a switch paid it once
 * more for each firing of the usage trigger.  The search_path a statement
 * is analysed under matters only to the statements a function runs.  So:
 *   - assign_workload runs no statement at all for a repeat (its reads and
 *     its write go to the tables directly); the first statement any other
 *     request needs pins search_path = pg_catalog, pg_temp first, in C
 *     (allot_pin_search_path, src/entry.c), exactly as the SET clause did.
 *     It stays SECURITY DEFINER, owned by allot_owner: fmgr still switches
 *     to the owner, which costs no GUC switch;
 *   - assignment_usage_trigger pins it the same way before its statements,
 *     and only if it is not already so: fired by a request's own statements
 *     it is, so a switch pays nothing more;
 *   - usage_signal_trigger runs no statement and looks no name up by path.
 * A caller that puts its own schema before pg_catalog reaches none of
 * their statements (test/pgtap/30_privileges.sql tries).
 *
 * A function declared RETURNS TABLE returns record with OUT parameters,
 * whose row type every execution builds again from pg_proc (4% of a
 * repeat).  assign_workload returns the same columns as a named row type,
 * allot.assignment_reply, which the type cache keeps; so it is created
 * again (a function's result type cannot be altered), with its grants.
 * Its callers see the same columns and pass the same arguments by name.
 * ------------------------------------------------------------------------- */
CREATE TYPE allot.assignment_reply AS (
    workload_id         bigint,
    cutechess_count     int,
    concurrency_per     int,
    games_per_cutechess int,
    focus_assigned      boolean,
    repeated            boolean
);
COMMENT ON TYPE allot.assignment_reply IS
    'What assign_workload returns: the workload assigned, its concurrency settings (seed 000), whether the host is focus-assigned and whether the workload was repeated';

DROP FUNCTION allot.assign_workload(bigint, timestamptz, bigint[], bigint);
CREATE FUNCTION allot.assign_workload(
        host_id bigint,
        now     timestamptz DEFAULT now(),
        exclude bigint[]    DEFAULT '{}',
        seed    bigint      DEFAULT NULL)
    RETURNS SETOF allot.assignment_reply
    LANGUAGE c VOLATILE CALLED ON NULL INPUT SECURITY DEFINER ROWS 1
    AS 'MODULE_PATHNAME', 'allot_assign_workload';
COMMENT ON FUNCTION allot.assign_workload(bigint, timestamptz, bigint[], bigint) IS
    'Pick the fairest assignment workload the host can run (seed 000), record it, and return its concurrency settings; zero rows when nothing fits';
ALTER FUNCTION allot.assign_workload(bigint, timestamptz, bigint[], bigint) OWNER TO allot_owner;
REVOKE ALL ON FUNCTION allot.assign_workload(bigint, timestamptz, bigint[], bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.assign_workload(bigint, timestamptz, bigint[], bigint)
    TO allot_web, allot_admin;

ALTER FUNCTION allot.assignment_usage_trigger() RESET search_path;
ALTER FUNCTION allot.usage_signal_trigger() RESET search_path;

/* ---------------------------------------------------------------------------
 * The watch list of lapsing assignments, signalled (issue 33).
 *
 * Every request read the list's horizon row and scanned the list for the
 * assignments lapsed at its cutoff: a tenth of a repeat, and on a farm in
 * service the scan finds nothing most of the time.  A backend now keeps
 * what it last read (the generation, the horizon, the earliest seen_at
 * listed) and reads again only after a signal: each statement that adds to
 * the list or moves its horizon queues a relcache invalidation of an empty
 * table, allot.assignment_watch_signal, which nobody opens, as
 * workload_usage_signal does for the usage copy.  Sweeps take entries off
 * the list, which cannot make a lapsed one appear, and signal nothing.  A
 * request whose cutoff is up to the horizon and the earliest entry has
 * nothing lapsed to subtract, and reads neither table
 * (src/assignment_usage.c).
 * ------------------------------------------------------------------------- */
CREATE TABLE allot.assignment_watch_signal ();
COMMENT ON TABLE allot.assignment_watch_signal IS
    'Holds no rows: a change that adds to allot.assignment_watch or moves allot.assignment_horizon invalidates this table''s relcache entry, which tells every backend that what it knows of the watch list is stale';
REVOKE ALL ON allot.assignment_watch_signal FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON allot.assignment_watch_signal TO allot_admin;

CREATE TRIGGER assignment_watch_signal
    AFTER INSERT OR UPDATE ON allot.assignment_watch
    FOR EACH STATEMENT EXECUTE FUNCTION allot.usage_signal_trigger('assignment_watch_signal');
CREATE TRIGGER assignment_horizon_signal
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON allot.assignment_horizon
    FOR EACH STATEMENT EXECUTE FUNCTION allot.usage_signal_trigger('assignment_watch_signal');
