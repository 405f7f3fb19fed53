/* allot 0.6.0 -> 0.7.0.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.7.0'" to load this file. \quit

/* ---------------------------------------------------------------------------
 * The status page over time: each workload's share against its fair share,
 * minute by minute, and when a workload finished.
 *
 * status_workload says what a workload's share is now, but nothing allot
 * kept said what it was an hour ago: an assignment is replaced when its
 * host moves on, a job sent again loses its first sending's times, and a
 * workload's priority, throughput and state, which decide its fair share,
 * keep no past.  So run_transitioner (pg_cron runs it every minute) copies
 * what status_workload says into allot.share_history: a row per workload
 * that is active or has a share or a fair share, a minute's rows written by
 * the first run in that minute, at most allot.transitioner_batch rows a
 * run.  The same runs
 * delete the rows older than allot.share_history_retention (a day by
 * default), at most allot.transitioner_batch a run, so the table holds
 * about retention x workloads x one row a minute.  One run at a time
 * records (it tries an advisory lock and skips the step when another run
 * holds it), so concurrent runs never wait for each other here.  Unlike
 * transitioner_run (this server's log of its runs) it is the farm's
 * history, so pg_dump keeps it: a restored farm still draws its last day.
 *
 * A workload's finished_at is set when its state becomes finished, so the
 * status page can still list a test that finished a while ago.
 * ------------------------------------------------------------------------- */
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::int >= 150000 THEN
        EXECUTE 'GRANT SET ON PARAMETER allot.share_history_retention TO allot_admin';
    END IF;
END
$$;

CREATE TABLE allot.share_history (
    sampled_at  timestamptz NOT NULL,
    workload_id bigint NOT NULL,
    share       double precision NOT NULL,
    fair_share  double precision NOT NULL,
    used        double precision NOT NULL,
    jobs        boolean NOT NULL,
    CONSTRAINT share_history_pkey PRIMARY KEY (sampled_at, workload_id)
);

SELECT pg_catalog.pg_extension_config_dump('allot.share_history', '');

COMMENT ON TABLE allot.share_history IS
    'Each workload''s share and fair share, a row per workload and minute, written by run_transitioner and kept for allot.share_history_retention (allot writes)';
COMMENT ON COLUMN allot.share_history.sampled_at IS 'The minute of the run''s now (UTC, seconds cut off)';
COMMENT ON COLUMN allot.share_history.workload_id IS 'allot.workload.id (no foreign key: the history outlives a deleted workload)';
COMMENT ON COLUMN allot.share_history.share IS 'status_workload.share at that minute';
COMMENT ON COLUMN allot.share_history.fair_share IS 'status_workload.fair_share at that minute';
COMMENT ON COLUMN allot.share_history.used IS 'What the share is a part of: threads (assignment), peak FLOPS (jobs), or REC under allot.fairness = recent';
COMMENT ON COLUMN allot.share_history.jobs IS 'A job workload (shares of FLOPS); false: an assignment workload (shares of threads)';

ALTER TABLE allot.workload ADD COLUMN finished_at timestamptz;
COMMENT ON COLUMN allot.workload.finished_at IS
    'When its state became finished (allot writes, from 0.7.0; NULL for a workload finished before, or not finished)';

/* finished_at follows the state: set when a workload becomes finished
 * (unless the same statement sets it, as a restore does), cleared when it
 * leaves that state.  Only a change of state fires it. */
CREATE FUNCTION allot.workload_finished_at() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.state <> 'finished' THEN
        NEW.finished_at := NULL;
    ELSIF NEW.finished_at IS NULL
          OR (TG_OP = 'UPDATE' AND OLD.state <> 'finished'
              AND NEW.finished_at IS NOT DISTINCT FROM OLD.finished_at) THEN
        NEW.finished_at := pg_catalog.now();
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION allot.workload_finished_at() IS
    'Row trigger on allot.workload: finished_at is when its state became finished';
CREATE TRIGGER workload_finished_at_insert BEFORE INSERT ON allot.workload
    FOR EACH ROW WHEN (NEW.state = 'finished' OR NEW.finished_at IS NOT NULL)
    EXECUTE FUNCTION allot.workload_finished_at();
CREATE TRIGGER workload_finished_at_update BEFORE UPDATE OF state, finished_at ON allot.workload
    FOR EACH ROW WHEN (NEW.state IS DISTINCT FROM OLD.state OR NEW.finished_at IS DISTINCT FROM OLD.finished_at)
    EXECUTE FUNCTION allot.workload_finished_at();

/* The record of each run counts what it did to the history. */
ALTER TABLE allot.transitioner_run
    ADD COLUMN shares_recorded bigint NOT NULL DEFAULT 0,
    ADD COLUMN shares_deleted bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN allot.transitioner_run.shares_recorded IS 'Rows written to allot.share_history';
COMMENT ON COLUMN allot.transitioner_run.shares_deleted IS 'Rows of allot.share_history past allot.share_history_retention deleted';

/* The settings the views use, and now how long the history is kept. */
CREATE OR REPLACE VIEW allot.status_settings AS
SELECT coalesce(nullif(pg_catalog.current_setting('allot.fairness', true), ''), 'current')
           AS fairness,
       coalesce(nullif(pg_catalog.current_setting('allot.balance_engine_throughputs', true), ''),
                'off')::boolean AS balance_engine_throughputs,
       coalesce(nullif(pg_catalog.current_setting('allot.rec_half_life', true), ''), '10d')::interval
           AS rec_half_life,
       coalesce(nullif(pg_catalog.current_setting('allot.assignment_ttl', true), ''), '2min')::interval
           AS assignment_ttl,
       coalesce(nullif(pg_catalog.current_setting('allot.share_history_retention', true), ''),
                '1d')::interval AS share_history_retention;
COMMENT ON COLUMN allot.status_settings.share_history_retention IS
    'allot.share_history_retention: how long allot.status_share_history keeps its rows';

/* status_workload, as in 0.5.0, with when the workload finished.  And a job
 * workload that never had a job is not in contention: 0.5.0 left its
 * contending NULL (no job_usage row), so it took a fair share. */
CREATE OR REPLACE VIEW allot.status_workload AS
WITH w AS (
    SELECT w.id, w.name, w.app_id IS NOT NULL AS jobs, w.engine, a.name AS app, w.priority,
           w.state, w.throughput,
           CASE WHEN w.app_id IS NULL THEN coalesce(wu.hosts, 0) END AS hosts,
           CASE WHEN w.app_id IS NULL THEN coalesce(wu.threads + wu.focus_threads, 0) END AS threads,
           CASE WHEN w.app_id IS NOT NULL THEN coalesce(ju.mflops, 0) * 1e6::float8 END AS peak_flops,
           ju.unsent, ju.in_progress, ju.done, ju.error, a.est_flops_per_au,
           cr.rec, cr.debt,
           w.state = 'active' AND (w.app_id IS NULL OR coalesce(ju.unsent, 0) > 0) AS contending,
           s.fairness, s.balance_engine_throughputs AND s.fairness <> 'debt' AS balance,
           w.finished_at
      FROM allot.workload w
     CROSS JOIN allot.status_settings s
      LEFT JOIN allot.workload_usage wu ON wu.workload_id = w.id
      LEFT JOIN LATERAL (
          -- job_usage keeps a row per shard: the workload's is their sum
          SELECT sum(u.unsent)::bigint AS unsent, sum(u.in_progress)::bigint AS in_progress,
                 sum(u.mflops) AS mflops, sum(u.done)::bigint AS done, sum(u.error)::bigint AS error
            FROM allot.job_usage u WHERE u.workload_id = w.id
          HAVING count(*) > 0) ju ON true
      LEFT JOIN allot.app a ON a.id = w.app_id
      LEFT JOIN LATERAL (
          -- REC decayed to now as allot.decay does: no decay for a negative
          -- age, 0 past 1000 half-lives or below 1e-6 (never an underflow).
          SELECT sum(CASE WHEN x.age <= 0 THEN c.rec
                          WHEN x.age >= 1000 * x.half_life OR c.rec < 1e-6 THEN 0
                          ELSE c.rec * pg_catalog.power(0.5::float8, x.age / x.half_life) END) AS rec,
                 sum(c.debt) AS debt
            FROM allot.workload_credit c,
                 LATERAL (SELECT extract(epoch FROM pg_catalog.now() - c.rec_at)::float8 AS age,
                                 extract(epoch FROM s.rec_half_life)::float8 AS half_life) x
           WHERE c.workload_id = w.id) cr ON true),
top AS (
    SELECT w.*,
           w.contending AND w.priority = max(w.priority) FILTER (WHERE w.contending)
                                             OVER (PARTITION BY w.jobs) AS fair_in
      FROM w),
effective AS (
    SELECT top.*,
           CASE WHEN NOT top.fair_in THEN 0
                WHEN top.balance
                THEN top.throughput / count(*) FILTER (WHERE top.fair_in)
                                         OVER (PARTITION BY top.jobs, top.engine)
                ELSE top.throughput END AS effective_throughput,
           CASE WHEN top.fairness = 'recent' THEN coalesce(top.rec, 0)
                WHEN top.jobs THEN top.peak_flops
                ELSE top.threads END AS usage
      FROM top)
SELECT e.id AS workload_id, e.name,
       CASE WHEN e.jobs THEN 'jobs' ELSE 'assignment' END AS kind,
       e.engine, e.app, e.priority, e.state, e.throughput,
       e.hosts, e.threads, e.peak_flops, e.fairness,
       coalesce(e.usage / nullif(sum(e.usage) OVER (PARTITION BY e.jobs), 0), 0) AS share,
       coalesce(e.effective_throughput
                    / nullif(sum(e.effective_throughput) OVER (PARTITION BY e.jobs), 0), 0)
           AS fair_share,
       e.rec, e.debt,
       e.unsent AS jobs_unsent, e.in_progress AS jobs_in_progress,
       e.done AS jobs_done, e.error AS jobs_error, e.est_flops_per_au,
       e.finished_at
  FROM effective e
 ORDER BY e.jobs, e.priority DESC, e.id;
COMMENT ON COLUMN allot.status_workload.finished_at IS
    'When its state became finished (set from 0.7.0 on); NULL when it is not finished or finished before';

/* The runs, with what each did to the history. */
CREATE OR REPLACE VIEW allot.status_transitioner AS
SELECT r.run, r.started_at, r.finished_at,
       extract(epoch FROM r.finished_at - r.started_at)::float8 * 1000 AS duration_ms,
       r.now_given, r.fairness, r.timed_out, r.expired_assignments, r.reports_read,
       r.flops_samples, r.flops_estimates, r.credited, r.debts_folded, r.hosts_seen,
       r.shares_recorded, r.shares_deleted
  FROM allot.transitioner_run r
 ORDER BY r.run DESC;
COMMENT ON COLUMN allot.status_transitioner.shares_recorded IS 'Rows written to the share history';
COMMENT ON COLUMN allot.status_transitioner.shares_deleted IS 'Rows of the share history past its retention deleted';

/* The history, as the status page reads it: a range of minutes is a range
 * of the primary key. */
CREATE VIEW allot.status_share_history AS
SELECT h.sampled_at, h.workload_id, w.name,
       CASE WHEN h.jobs THEN 'jobs' ELSE 'assignment' END AS kind,
       h.share, h.fair_share, h.used
  FROM allot.share_history h
  LEFT JOIN allot.workload w ON w.id = h.workload_id;

COMMENT ON VIEW allot.status_share_history IS
    'Each workload''s share against its fair share over time: a row per workload and minute, as status_workload said it then, kept for allot.share_history_retention. '
    'Cost: with WHERE sampled_at > ..., an index range of the rows asked for (workloads x minutes)';
COMMENT ON COLUMN allot.status_share_history.sampled_at IS 'The minute (UTC) the transitioner took it, from the now it was given';
COMMENT ON COLUMN allot.status_share_history.workload_id IS 'allot.workload.id';
COMMENT ON COLUMN allot.status_share_history.name IS 'The workload''s name now; NULL once the workload is deleted';
COMMENT ON COLUMN allot.status_share_history.kind IS 'assignment (shares of threads) or jobs (shares of peak FLOPS)';
COMMENT ON COLUMN allot.status_share_history.share IS 'Its share then, 0 to 1, of its kind (status_workload.share)';
COMMENT ON COLUMN allot.status_share_history.fair_share IS 'Its fair share then, 0 to 1 (status_workload.fair_share)';
COMMENT ON COLUMN allot.status_share_history.used IS 'What it used then: threads, peak FLOPS, or under allot.fairness = recent its REC';

REVOKE ALL ON allot.share_history FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON allot.share_history TO allot_admin;
GRANT SELECT ON allot.status_share_history TO allot_monitor, allot_admin;
REVOKE ALL ON FUNCTION allot.workload_finished_at() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.workload_finished_at() TO allot_admin;

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
