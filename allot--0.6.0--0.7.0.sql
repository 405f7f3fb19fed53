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


/* ---------------------------------------------------------------------------
 * A voice is earned (issue 30), part 1: owners.
 *
 * 0.6.0 gave each host one voice, but a host costs nothing to make: one
 * account made 300 hosts in seconds.  From 0.7.0 a host may belong to an
 * owner (a BOINC account, an OpenBench user, the operator): an opaque key
 * the front end passes to register_host, or the operator sets.  Statistics
 * and medians count owners, not hosts (src/voices.h): however many hosts an
 * owner has, their reports share one voice.  A host without an owner is its
 * own owner, as every host was before.  register_host refuses a host
 * beyond allot.owner_max_hosts per owner, or beyond
 * allot.owner_max_new_hosts_per_day made in the last 24 hours.
 * ------------------------------------------------------------------------- */
CREATE TABLE allot.owner (
    id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    key        text NOT NULL UNIQUE,
    trusted    boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT owner_key_length CHECK (length(key) BETWEEN 1 AND 200),
    CONSTRAINT owner_key_shown CHECK (allot.name_problem(key) IS NULL)
);
COMMENT ON TABLE allot.owner IS
    'Who owns hosts: a BOINC account, an OpenBench user, the operator. Each owner is one voice in statistics and medians, and never gets two replicas of a job';
COMMENT ON COLUMN allot.owner.id IS 'Owner id (allot.host.owner_id)';
COMMENT ON COLUMN allot.owner.key IS
    'Opaque key the front end names the owner by (register_host''s owner), 1 to 200 characters with nothing hidden, unique';
COMMENT ON COLUMN allot.owner.trusted IS
    'The operator vouches for this owner''s hosts: their claims and results count as proven without quorum (the operator''s own machines)';
COMMENT ON COLUMN allot.owner.created_at IS 'When the owner was first named';

ALTER TABLE allot.host ADD COLUMN owner_id bigint REFERENCES allot.owner (id);
COMMENT ON COLUMN allot.host.owner_id IS
    'Its owner (allot.owner). NULL: the host is its own owner, one voice of its own';
-- An owner's hosts, and those it registered lately, for the limits.
CREATE INDEX host_owner_idx ON allot.host (owner_id, registered_at) WHERE owner_id IS NOT NULL;

SELECT pg_catalog.pg_extension_config_dump('allot.owner', '');
SELECT pg_catalog.pg_extension_config_dump('allot.owner_id_seq', '');

/* Voices in the apps' arrays (src/voices.h): a host without an owner is
 * its id, an owner is minus its id.  0.6.0 kept values from before it
 * under -1, -2, ...: they move below -2^62, out of the owners' way, and
 * stay a voice each. */
UPDATE allot.app
   SET cpu_sample_hosts = ARRAY(SELECT CASE WHEN h < 0 THEN h - 4611686018427387904 ELSE h END
                                  FROM pg_catalog.unnest(cpu_sample_hosts) WITH ORDINALITY AS u(h, o)
                                 ORDER BY o),
       gpu_sample_hosts = ARRAY(SELECT CASE WHEN h < 0 THEN h - 4611686018427387904 ELSE h END
                                  FROM pg_catalog.unnest(gpu_sample_hosts) WITH ORDINALITY AS u(h, o)
                                 ORDER BY o)
 WHERE EXISTS (SELECT FROM pg_catalog.unnest(cpu_sample_hosts || gpu_sample_hosts) h WHERE h < 0);

COMMENT ON COLUMN allot.app.au_hosts IS
    'Allot writes: the voice of each validated success its statistics come from, oldest first (at most allot.app_unit_window): the host''s id, or minus its owner''s id';
COMMENT ON COLUMN allot.app.cpu_sample_hosts IS
    'Allot writes: the voice of each value of cpu_samples, in the same order: the host''s id, or minus its owner''s id (below -2^62: a value kept from before 0.6.0, a voice of its own)';
COMMENT ON COLUMN allot.app.actual_au_mean IS
    'Mean app units of a validated success, each voice (owner) one voice, after screening, each report counted up to au_ratio_bound times its prediction';
COMMENT ON COLUMN allot.app.predicted_au_mean IS
    'Mean predicted app units of those reports, each voice (owner) one voice';
COMMENT ON COLUMN allot.app.au_ratio_mean IS
    'Mean of actual / predicted app units, each voice (owner) one voice, after screening, each ratio counted up to au_ratio_bound';
COMMENT ON COLUMN allot.status_app.voices IS
    'Voices among those reports (owners, or hosts without one): each one voice, however many reports it sent';
COMMENT ON COLUMN allot.app.gpu_sample_hosts IS
    'Allot writes: the voice of each value of gpu_samples, in the same order: the host''s id, or minus its owner''s id (below -2^62: a value kept from before 0.6.0, a voice of its own)';

/* The limits register_host applies to an owner's hosts, as this session's
 * settings say (C: loading the library applies the operator's values, and
 * refuses while one could not be applied). */
CREATE FUNCTION allot.owner_host_limits(OUT max_hosts int, OUT max_new_hosts_per_day int)
    LANGUAGE c STABLE
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_owner_host_limits';
COMMENT ON FUNCTION allot.owner_host_limits() IS
    'allot.owner_max_hosts and allot.owner_max_new_hosts_per_day, the limits register_host applies to an owner''s hosts';

DROP FUNCTION allot.register_host(bigint, text, text, text[], int, double precision, jsonb);
CREATE FUNCTION allot.register_host(
        host_id   bigint,
        name      text,
        os        text,
        cpu_flags text[],
        threads   int,
        cpu_flops double precision,
        coprocs   jsonb DEFAULT '{}',
        owner     text DEFAULT NULL)
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    max_flags   CONSTANT int := 1024;
    max_threads CONSTANT int := 4096;
    flag        text;
    flags       text[];
    registered  timestamptz;
    rsc         text;
    spec        jsonb;
    n           jsonb;
    given       text[] := '{}';
    counts      int[] := '{}';
    peaks       double precision[] := '{}';
    id_         bigint := host_id;
    attempt     int;
    owner_      bigint;
    had_owner   bigint;
    limits      record;
    held        bigint;
    lately      bigint;
BEGIN
    -- The host's own figures.
    IF threads IS NULL THEN
        RAISE EXCEPTION 'threads must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass the number of CPUs the host offers (BOINC: p_ncpus).';
    END IF;
    IF threads < 1 OR threads > max_threads THEN
        RAISE EXCEPTION 'threads must be between 1 and %, not %', max_threads, threads
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF cpu_flops IS NOT NULL AND NOT (cpu_flops BETWEEN 1 AND 1e18) THEN
        RAISE EXCEPTION 'cpu_flops must be between 1 and 1e+18, not %', cpu_flops
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass NULL when the host does not know its speed: allot then uses the fleet median.';
    END IF;
    IF length(name) > 255 OR name ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'name must be at most 255 printable characters, not %',
                        to_json(left(name, 40) || CASE WHEN length(name) > 40 THEN '...' ELSE '' END)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF length(os) > 64 OR os !~ '^[A-Za-z0-9][A-Za-z0-9_.+ -]*$' THEN
        RAISE EXCEPTION 'os must be at most 64 letters, digits, spaces and "_.+-", not %',
                        to_json(left(os, 40) || CASE WHEN length(os) > 40 THEN '...' ELSE '' END)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'App versions name the os they run on in allot.app_version.platform.';
    END IF;
    -- The owner: an opaque key, shown to people as a name is.
    IF owner IS NOT NULL THEN
        IF length(owner) NOT BETWEEN 1 AND 200 THEN
            RAISE EXCEPTION 'owner must be 1 to 200 characters, not %',
                            to_json(left(owner, 40) || CASE WHEN length(owner) > 40 THEN '...' ELSE '' END)
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Pass the front end''s key of the account the host belongs to, or NULL.';
        END IF;
        PERFORM allot.check_name('owner', owner);
    END IF;

    -- CPU flags: a plain list of short names.
    IF cpu_flags IS NULL THEN
        RAISE EXCEPTION 'cpu_flags must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass ''{}'' for a host without flags.';
    END IF;
    IF array_ndims(cpu_flags) > 1 THEN
        RAISE EXCEPTION 'cpu_flags must be a one-dimensional array, not %-dimensional', array_ndims(cpu_flags)
            USING ERRCODE = 'array_subscript_error';
    END IF;
    IF cardinality(cpu_flags) > max_flags THEN
        RAISE EXCEPTION 'cpu_flags must hold at most % flags, not %', max_flags, cardinality(cpu_flags)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOREACH flag IN ARRAY cpu_flags LOOP
        IF flag IS NULL THEN
            RAISE EXCEPTION 'cpu_flags must not contain NULL'
                USING ERRCODE = 'null_value_not_allowed';
        END IF;
        IF flag !~ '^[A-Za-z0-9_.+-]{1,64}$' THEN
            RAISE EXCEPTION 'cpu flag % is not 1 to 64 letters, digits or "_.+-"',
                            to_json(left(flag, 40) || CASE WHEN length(flag) > 40 THEN '...' ELSE '' END)
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END LOOP;
    flags := ARRAY(SELECT DISTINCT f FROM unnest(cpu_flags) f ORDER BY f);

    -- Coprocessors: {"nvidia": {"count": 2, "peak_flops": 1.2e13}, ...}.
    coprocs := coalesce(coprocs, '{}');
    IF jsonb_typeof(coprocs) <> 'object' THEN
        RAISE EXCEPTION 'coprocs must be a JSON object, not %', left(coprocs::text, 40)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'For example {"nvidia": {"count": 1, "peak_flops": 1.2e13}}.';
    END IF;
    FOR rsc, spec IN SELECT key, value FROM jsonb_each(coprocs) ORDER BY key LOOP
        IF rsc = 'cpu' OR NOT EXISTS (SELECT FROM allot.resource r WHERE r.name = rsc) THEN
            RAISE EXCEPTION 'unknown coprocessor type % in coprocs', to_json(left(rsc, 40))
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Coprocessor types are the rows of allot.resource other than cpu.';
        END IF;
        IF jsonb_typeof(spec) <> 'object' THEN
            RAISE EXCEPTION 'coprocs.% must be an object with count and peak_flops, not %', rsc, left(spec::text, 40)
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF spec - 'count' - 'peak_flops' <> '{}' THEN
            RAISE EXCEPTION 'unknown key % in coprocs.%',
                            to_json(left((SELECT min(k) FROM jsonb_object_keys(spec - 'count' - 'peak_flops') k), 40)), rsc
                USING ERRCODE = 'invalid_parameter_value', HINT = 'A coprocessor has a count and a peak_flops.';
        END IF;
        n := spec -> 'count';
        IF jsonb_typeof(n) IS DISTINCT FROM 'number' OR n::numeric <> trunc(n::numeric)
           OR n::numeric NOT BETWEEN 1 AND 1024 THEN
            RAISE EXCEPTION 'coprocs.%.count must be an integer between 1 and 1024, not %', rsc,
                            coalesce(left(n::text, 40), 'missing')
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        counts := counts || n::numeric::int;
        n := spec -> 'peak_flops';
        IF jsonb_typeof(n) IS DISTINCT FROM 'number' OR n::numeric NOT BETWEEN 1 AND 1e18 THEN
            RAISE EXCEPTION 'coprocs.%.peak_flops must be a number between 1 and 1e+18, not %', rsc,
                            coalesce(left(n::text, 40), 'missing')
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        peaks := peaks || n::numeric::double precision;
        given := given || rsc;
    END LOOP;

    IF id_ IS NOT NULL THEN
        -- The host row first, as request_work locks it: one host's calls
        -- are serialised and never deadlock with each other.
        SELECT h.registered_at, h.owner_id INTO registered, had_owner
          FROM allot.host h WHERE h.id = id_ FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'host % does not exist', id_
                USING ERRCODE = 'no_data_found';
        END IF;
        IF registered IS NULL THEN
            RAISE EXCEPTION 'host % was added by the operator: register_host does not change it', id_
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'register_host updates only hosts it registered itself.';
        END IF;
    END IF;

    -- A new host of an owner, or a host given its first owner, counts
    -- against the owner's limits.  The owner's row is locked first, so that
    -- its registrations take turns and cannot pass a limit together.
    IF owner IS NOT NULL THEN
        SELECT o.id INTO owner_ FROM allot.owner o WHERE o.key = owner;
        IF id_ IS NOT NULL AND had_owner IS NOT NULL THEN
            IF owner_ IS DISTINCT FROM had_owner THEN
                RAISE EXCEPTION 'host % belongs to another owner', id_
                    USING ERRCODE = 'insufficient_privilege',
                          DETAIL = 'A host''s owner does not change through register_host.',
                          HINT = 'Register the machine as a new host of this owner, or have the operator change allot.host.owner_id.';
            END IF;
        ELSE
            INSERT INTO allot.owner AS o (key) VALUES (owner)
            ON CONFLICT (key) DO UPDATE SET key = o.key
            RETURNING o.id INTO owner_;
            limits := allot.owner_host_limits();
            SELECT count(*), count(*) FILTER (WHERE h.registered_at > now() - interval '1 day')
              INTO held, lately
              FROM allot.host h WHERE h.owner_id = owner_;
            IF held >= limits.max_hosts THEN
                RAISE EXCEPTION 'owner % has % hosts, the most allowed', to_json(left(owner, 40)), held
                    USING ERRCODE = 'configuration_limit_exceeded',
                          DETAIL = pg_catalog.format('allot.owner_max_hosts is %s.', limits.max_hosts),
                          HINT = 'Merge or delete hosts the owner no longer uses (allot.merge_host), or raise allot.owner_max_hosts.';
            END IF;
            IF lately >= limits.max_new_hosts_per_day THEN
                RAISE EXCEPTION 'owner % registered % hosts in the last 24 hours, the most allowed',
                                to_json(left(owner, 40)), lately
                    USING ERRCODE = 'configuration_limit_exceeded',
                          DETAIL = pg_catalog.format('allot.owner_max_new_hosts_per_day is %s.', limits.max_new_hosts_per_day),
                          HINT = 'Try again tomorrow, or raise allot.owner_max_new_hosts_per_day.';
            END IF;
        END IF;
    END IF;

    IF id_ IS NULL THEN
        -- Ids the operator inserted by hand do not advance the identity
        -- sequence: step over them rather than fail a stranger's request.
        FOR attempt IN 1..100 LOOP
            INSERT INTO allot.host (name, os, cpu_flags, threads, cpu_flops, registered_at, owner_id)
            VALUES (name, os, flags, threads, cpu_flops, now(), owner_)
            ON CONFLICT (id) DO NOTHING
            RETURNING id INTO id_;
            EXIT WHEN id_ IS NOT NULL;
        END LOOP;
        IF id_ IS NULL THEN
            RAISE EXCEPTION 'no free host id after 100 tries of the identity sequence of allot.host'
                USING ERRCODE = 'unique_violation',
                      HINT = 'Move the sequence past the ids inserted by hand: SELECT setval(pg_get_serial_sequence(''allot.host'', ''id''), max(id)) FROM allot.host;';
        END IF;
    ELSE
        -- Unchanged figures write nothing: a scheduler calls this on every
        -- contact.
        UPDATE allot.host h
           SET name = register_host.name, os = register_host.os, cpu_flags = flags,
               threads = register_host.threads, cpu_flops = register_host.cpu_flops,
               sockets = least(h.sockets, register_host.threads),
               physical_cores = CASE WHEN h.physical_cores > register_host.threads
                                     THEN NULL ELSE h.physical_cores END,
               owner_id = coalesce(h.owner_id, owner_)
         WHERE h.id = id_
           AND (h.name, h.os, h.cpu_flags, h.threads, h.cpu_flops, h.owner_id)
               IS DISTINCT FROM (register_host.name, register_host.os, flags,
                                 register_host.threads, register_host.cpu_flops,
                                 coalesce(h.owner_id, owner_));
        DELETE FROM allot.host_coproc c WHERE c.host_id = id_ AND c.resource <> ALL (given);
    END IF;

    INSERT INTO allot.host_coproc AS c (host_id, resource, count, peak_flops)
    SELECT id_, g.resource, g.count, g.peak_flops
      FROM unnest(given, counts, peaks) AS g (resource, count, peak_flops)
     ORDER BY g.resource
    ON CONFLICT ON CONSTRAINT host_coproc_pkey DO UPDATE
       SET count = excluded.count, peak_flops = excluded.peak_flops
     WHERE (c.count, c.peak_flops) IS DISTINCT FROM (excluded.count, excluded.peak_flops);

    RETURN id_;
END
$$;

COMMENT ON FUNCTION allot.register_host(bigint, text, text, text[], int, double precision, jsonb, text) IS
    'A host registers itself (host_id NULL, returns its new id) or updates what it states about itself: name, os, CPU flags, threads, CPU FLOPS, coprocessors, and the owner it belongs to (within allot.owner_max_hosts and allot.owner_max_new_hosts_per_day); only hosts it registered';
ALTER FUNCTION allot.register_host(bigint, text, text, text[], int, double precision, jsonb, text)
    OWNER TO allot_owner;
REVOKE ALL ON FUNCTION allot.register_host(bigint, text, text, text[], int, double precision, jsonb, text),
                       allot.owner_host_limits() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.register_host(bigint, text, text, text[], int, double precision, jsonb, text)
    TO allot_web, allot_admin;
GRANT EXECUTE ON FUNCTION allot.owner_host_limits() TO allot_admin, allot_owner;
-- register_host checks owner keys as names, and allot.owner's CHECK does.
GRANT EXECUTE ON FUNCTION allot.check_name(text, text), allot.name_problem(text) TO allot_owner;
GRANT SELECT, INSERT, UPDATE, DELETE ON allot.owner TO allot_admin, allot_owner;
GRANT USAGE, SELECT ON SEQUENCE allot.owner_id_seq TO allot_admin, allot_owner;

/* ---------------------------------------------------------------------------
 * Part 2: proven work, and each host's reliability.
 *
 * A host's claims (its FLOPS) and its reports move the farm's figures only
 * once its work is proven: a host the operator added (registered_at NULL),
 * a host of an owner the operator trusts, or a host with a valid result in
 * a decided job (validate_job; with min_quorum above 1, a result that
 * agreed with other owners').  A host that has proven nothing counts, per
 * instance, for at most the farm's median FLOPS (allot.resource
 * .median_flops, now over proven hosts, each owner one voice), and before
 * there is a median for at most allot.unproven_cpu_flops or
 * allot.unproven_coproc_flops: never without a bound (dispatch_host.c).
 *
 * host_reliability is BOINC's "reliable host": consecutive valid results
 * and an error rate, which adaptive replication reads (reliability.h).
 * ------------------------------------------------------------------------- */
CREATE TABLE allot.host_reliability (
    host_id           bigint PRIMARY KEY,
    valid_results     bigint NOT NULL DEFAULT 0,
    invalid_results   bigint NOT NULL DEFAULT 0,
    failed_sendings   bigint NOT NULL DEFAULT 0,
    consecutive_valid int NOT NULL DEFAULT 0,
    error_rate        double precision NOT NULL DEFAULT 0,
    proven_at         timestamptz,
    reliable_at       timestamptz,
    CONSTRAINT host_reliability_counts_nonnegative
        CHECK (valid_results >= 0 AND invalid_results >= 0 AND failed_sendings >= 0
               AND consecutive_valid >= 0),
    CONSTRAINT host_reliability_error_rate_range CHECK (error_rate BETWEEN 0 AND 1)
) WITH (fillfactor = 70);
COMMENT ON TABLE allot.host_reliability IS
    'Allot writes: what each host''s results have shown (BOINC''s reliable hosts): valid and invalid results, failed sendings, consecutive valid results and an error rate. No row: nothing yet';
COMMENT ON COLUMN allot.host_reliability.host_id IS 'The host';
COMMENT ON COLUMN allot.host_reliability.valid_results IS 'Its results found valid in decided jobs';
COMMENT ON COLUMN allot.host_reliability.invalid_results IS 'Its results found invalid (by the validator, or outvoted by a quorum)';
COMMENT ON COLUMN allot.host_reliability.failed_sendings IS 'Its sendings that ended in an error, an abort, a loss or a timeout';
COMMENT ON COLUMN allot.host_reliability.consecutive_valid IS
    'Valid results since its last invalid result or failed sending: at allot.reliable_after it is reliable';
COMMENT ON COLUMN allot.host_reliability.error_rate IS
    'Average of its sendings'' failures (1: invalid or failed, 0: valid), each new one weighing 1/20; above allot.reliable_max_error_rate it is not reliable';
COMMENT ON COLUMN allot.host_reliability.proven_at IS
    'When its first result was found valid in a decided job: from then on its claims count as proven. NULL: never';
COMMENT ON COLUMN allot.host_reliability.reliable_at IS
    'When its consecutive valid results last reached allot.reliable_after. NULL: not reliable now';
SELECT pg_catalog.pg_extension_config_dump('allot.host_reliability', '');

COMMENT ON COLUMN allot.resource.median_flops IS
    'Allot writes (the transitioner): median peak FLOPS of one instance over the proven hosts that have it, each owner one voice; a proven host counts at most 10 times this, a host that has proven nothing at most this. NULL: no proven host has it yet (allot.unproven_cpu_flops or allot.unproven_coproc_flops bound unproven hosts)';
COMMENT ON COLUMN allot.resource.median_hosts IS
    'Allot writes: how many voices (owners, or hosts without one) median_flops was taken over';

/* ---------------------------------------------------------------------------
 * Part 3: quorum replication (BOINC's min_quorum and target_nresults).
 *
 * A job may need the agreement of several owners: min_quorum successful
 * results that agree, from target_nresults replicas sent at once to
 * distinct owners.  Defaults 1 and 1: a job is sent once and the
 * validator's verdict decides it, as before.
 *
 * A replica is a job row of its own (replica_of: the job it replicates),
 * made when the job is first sent with target_nresults above 1, or when
 * adaptive replication sends a job to a host it does not trust: each
 * replica is sent, reported, timed out and retried as any job, and counts
 * in the usage and the host's credit as one.  The validator judges each
 * replica (validate_job's sending and digest): the job is decided when
 * min_quorum replicas of distinct owners are valid with the same digest;
 * those are valid, and credited; the others are invalid, failures of their
 * hosts.  Only decided work is learnt from.  Disagreement with no replica
 * left to wait for sends another, up to the job's max_total_results.
 * No owner is ever sent two replicas of one job: allot.job_voice keeps the
 * owners each replicated job went to.  (src/quorum.h has the rule.)
 * ------------------------------------------------------------------------- */
ALTER TABLE allot.job
    ADD COLUMN min_quorum int NOT NULL DEFAULT 1,
    ADD COLUMN target_nresults int NOT NULL DEFAULT 1,
    ADD COLUMN replica_of bigint REFERENCES allot.job (id) ON DELETE CASCADE,
    ADD COLUMN verdict boolean,
    ADD COLUMN digest text,
    ADD CONSTRAINT job_quorum_range
        CHECK (min_quorum BETWEEN 1 AND 100 AND target_nresults BETWEEN min_quorum AND 100),
    ADD CONSTRAINT job_digest_length CHECK (length(digest) <= 1000),
    ADD CONSTRAINT job_replica_not_itself CHECK (replica_of <> id);
CREATE INDEX job_replica_idx ON allot.job (replica_of) WHERE replica_of IS NOT NULL;
-- Dispatch sends unsent replicas (each made when its job was sent) before
-- a workload's older jobs.
CREATE INDEX job_replica_unsent_idx ON allot.job (workload_id, id)
    WHERE state = 'unsent' AND replica_of IS NOT NULL;

COMMENT ON COLUMN allot.job.min_quorum IS
    'Valid results of distinct owners that must agree (the same digest) before the job is decided (1 to 100; 1: the validator''s verdict alone). Adaptive replication raises it to 2';
COMMENT ON COLUMN allot.job.target_nresults IS
    'Replicas sent at once, each to another owner (min_quorum to 100): the job''s first sending makes the others, which dispatch sends before older jobs';
COMMENT ON COLUMN allot.job.replica_of IS
    'Allot writes: the job this row is a replica of (its own min_quorum and target_nresults are the job''s). NULL: the job itself';
COMMENT ON COLUMN allot.job.verdict IS
    'Allot writes: the validator''s verdict on this replica''s result (validate_job), before the job is decided. NULL: none yet';
COMMENT ON COLUMN allot.job.digest IS
    'Allot writes: what the validator says the result is (validate_job''s digest), at most 1000 characters: valid results agree when their digests are equal. NULL: one class of its own';
COMMENT ON COLUMN allot.job.validated IS
    'The decision: true once the job is decided and this result is among the agreeing (credited, learnt from); false when found invalid. NULL: not decided yet';

CREATE TABLE allot.job_voice (
    group_id bigint NOT NULL,
    voice    bigint NOT NULL,
    sent_at  timestamptz NOT NULL,
    PRIMARY KEY (group_id, voice)
);
COMMENT ON TABLE allot.job_voice IS
    'Allot writes: the owners each replicated job was sent to, one row per (job, owner): no owner is sent a second replica';
COMMENT ON COLUMN allot.job_voice.group_id IS 'The job (the id its replicas'' replica_of names)';
COMMENT ON COLUMN allot.job_voice.voice IS
    'The owner a replica went to, as a voice: minus the owner''s id, or the host''s id for a host without an owner';
COMMENT ON COLUMN allot.job_voice.sent_at IS 'When it was first sent a replica';
SELECT pg_catalog.pg_extension_config_dump('allot.job_voice', '');

/* host_reliability and job_voice have no foreign keys, as job_usage and
 * host_credit have none: a key on them would make TRUNCATE of allot.host
 * or allot.job, which wipes a farm, fail.  Their rows follow their hosts'
 * and jobs' instead. */
CREATE FUNCTION allot.forget_trigger() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_TABLE_NAME = 'host' THEN
        IF TG_OP = 'TRUNCATE' THEN
            DELETE FROM allot.host_reliability;
        ELSE
            DELETE FROM allot.host_reliability r USING gone_rows g WHERE r.host_id = g.id;
        END IF;
    ELSIF TG_OP = 'TRUNCATE' THEN
        DELETE FROM allot.job_voice;
    ELSE
        DELETE FROM allot.job_voice v USING gone_rows g WHERE v.group_id = g.id AND g.replica_of IS NULL;
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION allot.forget_trigger() IS
    'Statement trigger on allot.host and allot.job: deleted hosts'' reliability and deleted jobs'' owners go with them';
CREATE TRIGGER host_forget AFTER DELETE ON allot.host
    REFERENCING OLD TABLE AS gone_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.forget_trigger();
CREATE TRIGGER host_forget_all AFTER TRUNCATE ON allot.host
    FOR EACH STATEMENT EXECUTE FUNCTION allot.forget_trigger();
CREATE TRIGGER job_forget AFTER DELETE ON allot.job
    REFERENCING OLD TABLE AS gone_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.forget_trigger();
CREATE TRIGGER job_forget_all AFTER TRUNCATE ON allot.job
    FOR EACH STATEMENT EXECUTE FUNCTION allot.forget_trigger();
REVOKE ALL ON FUNCTION allot.forget_trigger() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.forget_trigger() TO allot_admin;

/* ---------------------------------------------------------------------------
 * Part 4: adaptive replication.  A job of a workload with
 * adaptive_replication is sent alone only to a reliable host (allot
 * .reliable_after consecutive valid results, an error rate within allot
 * .reliable_max_error_rate; or a host the operator vouches for), and then
 * only with probability allot.reliable_alone_probability; otherwise it is
 * replicated (min_quorum and target_nresults 2), so that another owner's
 * result must agree.  An invalid result or a failed sending makes its host
 * unreliable again.
 * ------------------------------------------------------------------------- */
ALTER TABLE allot.workload ADD COLUMN adaptive_replication boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN allot.workload.adaptive_replication IS
    'Job workloads: replicate each job sent to a host that is not reliable (and a share of the others, allot.reliable_alone_probability) with a quorum of 2';

DROP FUNCTION allot.validate_job(bigint, boolean);
CREATE FUNCTION allot.validate_job(
        job_id  bigint,
        valid   boolean,
        sending int         DEFAULT NULL,
        digest  text        DEFAULT NULL,
        now     timestamptz DEFAULT now())
    RETURNS boolean
    LANGUAGE c VOLATILE CALLED ON NULL INPUT
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'allot_validate_job';
COMMENT ON FUNCTION allot.validate_job(bigint, boolean, int, text, timestamptz) IS
    'The validator''s verdict on a done job''s result (of that sending, if named): valid or not, and what it says (digest). With min_quorum 1 it decides the job; with more, the job is decided when enough owners'' valid results agree';
REVOKE ALL ON FUNCTION allot.validate_job(bigint, boolean, int, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.validate_job(bigint, boolean, int, text, timestamptz) TO allot_admin;

/* ---------------------------------------------------------------------------
 * Part 5: bounded influence (src/voices.h).  Claims implausible by far are
 * left out before the seed's formulas run: a voice whose median ratio of
 * actual to predicted app units, or whose median FLOPS per app unit as
 * claimed, lies a hundred times or more from the voices' median, with all
 * its reports; and any report beyond that band.  An app's window keeps
 * each report's FLOPS per app unit as claimed (au_flops) for it.  Among
 * fewer than ten voices nothing is left out; on an honest farm the seed's
 * formulas run unchanged.
 * ------------------------------------------------------------------------- */
ALTER TABLE allot.app ADD COLUMN au_flops double precision[] NOT NULL DEFAULT '{}';
COMMENT ON COLUMN allot.app.au_flops IS
    'Allot writes: the FLOPS per app unit each report of the window claimed (elapsed x raw FLOPS / app units), in the same order as au_hosts; 0: the report said nothing of it';
UPDATE allot.app
   SET au_flops = ARRAY(SELECT 0::float8 FROM pg_catalog.generate_series(1, pg_catalog.cardinality(au_hosts)))
 WHERE pg_catalog.cardinality(au_hosts) > 0;

CREATE FUNCTION allot.app_unit_statistics(
        voices bigint[], actual double precision[], predicted double precision[],
        flops_per_au double precision[],
        OUT n_reports bigint, OUT actual_au_mean double precision, OUT actual_au_m2 double precision,
        OUT predicted_au_mean double precision, OUT predicted_au_m2 double precision,
        OUT au_ratio_mean double precision, OUT au_ratio_m2 double precision,
        OUT au_ratio_bound double precision)
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_app_unit_statistics_sql';
COMMENT ON FUNCTION allot.app_unit_statistics(bigint[], double precision[], double precision[], double precision[]) IS
    'An app''s statistics from a window of validated reports (voices, actual and predicted app units, FLOPS per app unit as claimed), as 0.7.0''s transitioner computes them: claims implausible by far left out, each voice one voice, each report counted up to the seed''s bound';
REVOKE ALL ON FUNCTION allot.app_unit_statistics(bigint[], double precision[], double precision[], double precision[])
    FROM PUBLIC;

/* Each window's statistics as 0.7.0 computes them: screened. */
UPDATE allot.app a
   SET (n_reports, actual_au_mean, actual_au_m2, predicted_au_mean, predicted_au_m2,
        au_ratio_mean, au_ratio_m2, au_ratio_bound)
           = (SELECT s.n_reports, s.actual_au_mean, s.actual_au_m2, s.predicted_au_mean,
                     s.predicted_au_m2, s.au_ratio_mean, s.au_ratio_m2, s.au_ratio_bound
                FROM allot.app_unit_statistics(a.au_hosts, a.au_actual, a.au_predicted, a.au_flops) s)
 WHERE pg_catalog.cardinality(a.au_hosts) > 0;
GRANT EXECUTE ON FUNCTION allot.app_unit_statistics(bigint[], double precision[], double precision[], double precision[])
    TO allot_admin;

/* ---------------------------------------------------------------------------
 * Smaller holes (issue 30, item 6).
 *
 * Engine names are checked like the names of hosts, apps and workloads
 * (src/names.c): an engine named with a hidden character looks like
 * another on every page that lists workloads.
 * ------------------------------------------------------------------------- */
CREATE TRIGGER engine_name_check BEFORE INSERT OR UPDATE OF name ON allot.engine
    FOR EACH ROW EXECUTE FUNCTION allot.name_check_trigger('engine name');

/* A job in progress keeps its id: its host reports it by that id, and a
 * renumbered job's report found no job (P0002).  Refused like its DELETE
 * (55000).  The trigger fires only for statements that set id, so that
 * allot's own writes pay nothing for it.  (A job an operator moves out of
 * progress by hand is recorded as taken back by the job trigger, in C, so
 * that its host's report is told so and the host is not sent it again.) */
CREATE FUNCTION allot.job_renumber_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'job % is in progress on host %: its id cannot change', OLD.id, OLD.host_id
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = pg_catalog.format('Its host reports it as job %s.', OLD.id),
              HINT = 'Wait for its report or its deadline, or take it back first with allot.requeue_job.';
END
$$;
COMMENT ON FUNCTION allot.job_renumber_guard() IS
    'Row trigger: the id of a job in progress does not change';
CREATE TRIGGER job_renumber_guard BEFORE UPDATE OF id ON allot.job
    FOR EACH ROW WHEN (OLD.state = 'in_progress' AND NEW.id IS DISTINCT FROM OLD.id)
    EXECUTE FUNCTION allot.job_renumber_guard();
REVOKE ALL ON FUNCTION allot.job_renumber_guard() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.job_renumber_guard() TO allot_admin;

/* check_invariants also reports engine names that hide characters, owners
 * holding two replicas of one job, and windows (now with their FLOPS
 * claims) whose statistics are not what they hold: it is restated once,
 * with those checks and the purged totals', in the retention section below. */

/* ---------------------------------------------------------------------------
 * Settings.
 * ------------------------------------------------------------------------- */
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::int >= 150000 THEN
        EXECUTE 'GRANT SET ON PARAMETER allot.owner_max_hosts, allot.owner_max_new_hosts_per_day,
                     allot.unproven_cpu_flops, allot.unproven_coproc_flops, allot.reliable_after,
                     allot.reliable_alone_probability, allot.reliable_max_error_rate
                 TO allot_admin';
    END IF;
END
$$;

/* ---------------------------------------------------------------------------
 * Grants (keep last): operators keep every table's rows; allot_owner, which
 * runs request_work and report_job, writes what they write.  PUBLIC keeps
 * nothing.
 * ------------------------------------------------------------------------- */
REVOKE ALL ON allot.owner, allot.host_reliability, allot.job_voice FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON allot.host_reliability, allot.job_voice
    TO allot_admin, allot_owner;

/* ---------------------------------------------------------------------------
 * Retention: finished jobs leave the hot tables (src/retention.c).
 *
 * Until 0.6.0 nothing ever left allot.job: with five million finished jobs
 * the table held 1.4 GB, about 280 bytes a job before its reports, and a
 * farm of a million jobs a day grows by gigabytes a day for ever.  From
 * 0.7.0 the transitioner's last step moves finished jobs (done, error)
 * that ended more than allot.retention_period ago (30 days unless set; 0
 * keeps them) out of allot.job and their rows out of allot.job_report, at
 * most allot.retention_batch per run, oldest first: into allot.job_archive
 * (allot.retention_archive, on unless set), or nowhere.
 *
 * What the farm knows of them stays: a workload's counts of done and
 * errored jobs (job_usage), a host's credit and decayed credit
 * (host_credit) are left as they were, and the purged jobs are added to
 * allot.purged_jobs and allot.purged_credit, which check_invariants()
 * counts with the jobs still there.  A change to a purged total made by
 * anything but a purge (a restore, merge_host, an operator's edit) moves
 * those counters by its trigger, as a change to jobs does: the purged
 * totals are dumped, the counters are not, and a restore rebuilds them from
 * both.  An app's statistics, quotas and debts never read old jobs.
 * ------------------------------------------------------------------------- */

CREATE TABLE allot.purged_jobs (
    workload_id bigint PRIMARY KEY,
    done        bigint NOT NULL DEFAULT 0,
    error       bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 50);
COMMENT ON TABLE allot.purged_jobs IS
    'Allot writes: per workload, the finished jobs retention removed from allot.job; allot.job_usage still counts them';
COMMENT ON COLUMN allot.purged_jobs.workload_id IS 'The workload (no foreign key: the counts outlive it, as job_usage''s do)';
COMMENT ON COLUMN allot.purged_jobs.done IS 'Jobs done that were purged';
COMMENT ON COLUMN allot.purged_jobs.error IS 'Jobs in error (or the old timed_out) that were purged';

CREATE TABLE allot.purged_credit (
    host_id    bigint PRIMARY KEY,
    credit     numeric NOT NULL DEFAULT 0,
    jobs       bigint NOT NULL DEFAULT 0,
    decayed    double precision NOT NULL DEFAULT 0,
    decayed_at timestamptz NOT NULL
) WITH (fillfactor = 50);
COMMENT ON TABLE allot.purged_credit IS
    'Allot writes: per host, the credit of its jobs retention removed from allot.job; allot.host_credit still counts it';
COMMENT ON COLUMN allot.purged_credit.host_id IS 'The host (no foreign key, as allot.host_credit)';
COMMENT ON COLUMN allot.purged_credit.credit IS 'Sum of the credit of its purged jobs, in cobblestones';
COMMENT ON COLUMN allot.purged_credit.jobs IS 'Its purged jobs that had credit';
COMMENT ON COLUMN allot.purged_credit.decayed IS
    'Their credit decayed with a half-life of one week from their return to decayed_at';
COMMENT ON COLUMN allot.purged_credit.decayed_at IS 'The instant decayed is taken at: the latest return purged';

/* The archive: one row per purge, the jobs it moved as a JSON array, each
 * {"job": its row of allot.job, "reports": its rows of allot.job_report}.
 * JSON, so that a column a later release adds to either table is archived
 * without a change here; text JSON (cast it to jsonb to query it), which
 * is built and compressed three times faster than jsonb; a whole purge in
 * one value, so that TOAST compresses the names that repeat from one job
 * to the next: about 160 bytes a job, where a job alone as jsonb takes
 * 1.1 kB.  The operator looks a job up by its id (first_job_id ..
 * last_job_id), and exports and deletes by day (docs/production.md,
 * "Retention"). */
CREATE TABLE allot.job_archive (
    archived_at   timestamptz NOT NULL,
    job_count     int NOT NULL,
    first_job_id  bigint NOT NULL,
    last_job_id   bigint NOT NULL,
    finished_from timestamptz NOT NULL,
    finished_to   timestamptz NOT NULL,
    jobs          json NOT NULL,
    CONSTRAINT job_archive_ids_ordered CHECK (first_job_id <= last_job_id),
    CONSTRAINT job_archive_count_positive CHECK (job_count >= 1)
);
CREATE INDEX job_archive_first_job_idx ON allot.job_archive (first_job_id);
CREATE INDEX job_archive_archived_at_idx ON allot.job_archive (archived_at);
COMMENT ON TABLE allot.job_archive IS
    'Allot writes: finished jobs retention moved out of allot.job (allot.retention_archive on), one row per purge; the operator deletes what it no longer needs';
COMMENT ON COLUMN allot.job_archive.archived_at IS 'The now of the purge';
COMMENT ON COLUMN allot.job_archive.job_count IS 'Jobs in jobs';
COMMENT ON COLUMN allot.job_archive.first_job_id IS 'The least job id in jobs';
COMMENT ON COLUMN allot.job_archive.last_job_id IS 'The greatest job id in jobs';
COMMENT ON COLUMN allot.job_archive.finished_from IS
    'When the first of them finished (its last report, or the deadline of the sending it gave up at)';
COMMENT ON COLUMN allot.job_archive.finished_to IS 'When the last of them finished';
COMMENT ON COLUMN allot.job_archive.jobs IS
    'The jobs, by id, a JSON array: each {"job": its row of allot.job, every column, "reports": its rows of allot.job_report, every sending that ended, oldest first}';

/* What a purge takes, oldest first: the finished jobs the transitioner is
 * done with (not validated, or validated and both learnt from and
 * credited), by the instant they finished.  Its expression and predicate
 * are those of the purge's query (src/retention.c).  Built by this update,
 * in one read of allot.job, while writes to the table wait. */
CREATE INDEX job_finished_idx ON allot.job ((coalesce(returned_at, deadline)))
    WHERE state IN ('done', 'error', 'timed_out')
      AND (validated IS NOT TRUE OR (sampled AND credit IS NOT NULL));

CREATE FUNCTION allot.retention_purging() RETURNS boolean
    LANGUAGE c VOLATILE
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_retention_purging_sql';
COMMENT ON FUNCTION allot.retention_purging() IS
    'True while this session''s purge removes jobs: the counters then keep what they count';

CREATE FUNCTION allot.purge_finished(now timestamptz DEFAULT now(), batch int DEFAULT NULL)
    RETURNS jsonb
    LANGUAGE c VOLATILE CALLED ON NULL INPUT
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_purge_finished_sql';
COMMENT ON FUNCTION allot.purge_finished(timestamptz, int) IS
    'Move at most batch (NULL: allot.retention_batch) finished jobs that ended more than allot.retention_period before now, oldest first, and their reports out of allot.job and allot.job_report, into allot.job_archive when allot.retention_archive is on; their counts and credit stay. run_transitioner does the same as its last step';

/* A purged total changed by anything but a purge moves the counters it
 * stands for, as a change of jobs moves them (the job trigger): in this
 * backend's shard of job_usage, per workload, and in host_credit, per
 * host, with its decayed credit merged at the later of the two instants.
 * The statement's rows are gathered by kind of statement (a transition
 * table exists only for the events that have it), then added in one
 * upsert, in id order, as every writer of the counters takes their rows. */
CREATE FUNCTION allot.purged_totals_trigger() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ids      bigint[];
    credit   numeric[];
    jobs     bigint[];
    done     bigint[];
    error    bigint[];
    decayed  double precision[];
    at       timestamptz[];
BEGIN
    IF allot.retention_purging() THEN
        RETURN NULL;    -- a purge: the jobs' counts never left the counters
    END IF;
    IF TG_TABLE_NAME = 'purged_jobs' THEN
        IF TG_OP = 'INSERT' THEN
            SELECT array_agg(n.workload_id), array_agg(n.done), array_agg(n.error)
              INTO ids, done, error FROM new_rows n;
        ELSIF TG_OP = 'DELETE' THEN
            SELECT array_agg(o.workload_id), array_agg(-o.done), array_agg(-o.error)
              INTO ids, done, error FROM old_rows o;
        ELSE
            SELECT array_agg(d.workload_id), array_agg(d.done), array_agg(d.error)
              INTO ids, done, error
              FROM (SELECT n.workload_id, n.done, n.error FROM new_rows n
                    UNION ALL
                    SELECT o.workload_id, -o.done, -o.error FROM old_rows o) d;
        END IF;
        INSERT INTO allot.job_usage AS u (workload_id, shard, done, error)
        SELECT d.id, allot.usage_shard(), sum(d.done), sum(d.error)
          FROM unnest(ids, done, error) AS d (id, done, error)
         GROUP BY d.id HAVING sum(d.done) <> 0 OR sum(d.error) <> 0
         ORDER BY d.id
        ON CONFLICT (workload_id, shard) DO UPDATE
           SET done = u.done + excluded.done, error = u.error + excluded.error;
    ELSE
        IF TG_OP = 'INSERT' THEN
            SELECT array_agg(n.host_id), array_agg(n.credit), array_agg(n.jobs),
                   array_agg(n.decayed), array_agg(n.decayed_at)
              INTO ids, credit, jobs, decayed, at FROM new_rows n;
        ELSIF TG_OP = 'DELETE' THEN
            SELECT array_agg(o.host_id), array_agg(-o.credit), array_agg(-o.jobs),
                   array_agg(-o.decayed), array_agg(o.decayed_at)
              INTO ids, credit, jobs, decayed, at FROM old_rows o;
        ELSE
            SELECT array_agg(d.host_id), array_agg(d.credit), array_agg(d.jobs),
                   array_agg(d.decayed), array_agg(d.decayed_at)
              INTO ids, credit, jobs, decayed, at
              FROM (SELECT n.host_id, n.credit, n.jobs, n.decayed, n.decayed_at FROM new_rows n
                    UNION ALL
                    SELECT o.host_id, -o.credit, -o.jobs, -o.decayed, o.decayed_at FROM old_rows o) d;
        END IF;
        INSERT INTO allot.host_credit AS c (host_id, credit, jobs, decayed, decayed_at)
        SELECT d.id, sum(d.credit), sum(d.jobs),
               sum(allot.credit_decay(d.decayed, extract(epoch FROM d.t - d.at)::double precision)), d.t
          FROM (SELECT x.*, max(x.at) OVER (PARTITION BY x.id) AS t
                  FROM unnest(ids, credit, jobs, decayed, at) AS x (id, credit, jobs, decayed, at)) d
         GROUP BY d.id, d.t
        HAVING sum(d.credit) <> 0 OR sum(d.jobs) <> 0
         ORDER BY d.id
        ON CONFLICT (host_id) DO UPDATE
           SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs,
               decayed = allot.credit_decay(c.decayed, extract(epoch FROM
                             greatest(c.decayed_at, excluded.decayed_at) - c.decayed_at)::double precision)
                       + allot.credit_decay(excluded.decayed, extract(epoch FROM
                             greatest(c.decayed_at, excluded.decayed_at) - excluded.decayed_at)::double precision),
               decayed_at = greatest(c.decayed_at, excluded.decayed_at);
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION allot.purged_totals_trigger() IS
    'Statement trigger on allot.purged_jobs and allot.purged_credit: a change made by anything but a purge (a restore, merge_host, an edit) is added to allot.job_usage and allot.host_credit, as a change of jobs is';

CREATE TRIGGER purged_jobs_insert AFTER INSERT ON allot.purged_jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_jobs_update AFTER UPDATE ON allot.purged_jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_jobs_delete AFTER DELETE ON allot.purged_jobs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_credit_insert AFTER INSERT ON allot.purged_credit
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_credit_update AFTER UPDATE ON allot.purged_credit
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_credit_delete AFTER DELETE ON allot.purged_credit
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();

/* The runs of the transitioner record what retention purged. */
ALTER TABLE allot.transitioner_run ADD COLUMN purged bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN allot.transitioner_run.purged IS
    'Finished jobs moved out of allot.job by retention (0 before 0.7.0)';

CREATE OR REPLACE VIEW allot.status_transitioner AS
SELECT r.run, r.started_at, r.finished_at,
       extract(epoch FROM r.finished_at - r.started_at)::float8 * 1000 AS duration_ms,
       r.now_given, r.fairness, r.timed_out, r.expired_assignments, r.reports_read,
       r.flops_samples, r.flops_estimates, r.credited, r.debts_folded, r.hosts_seen,
       r.shares_recorded, r.shares_deleted, r.purged
  FROM allot.transitioner_run r
 ORDER BY r.run DESC;
COMMENT ON COLUMN allot.status_transitioner.purged IS
    'Finished jobs moved out of allot.job by retention';

/* TRUNCATE of the jobs empties the counters (0.5.0): the farm's jobs never
 * were.  The purged jobs' totals go with them, first, while there are
 * counters for their triggers to subtract from. */
CREATE OR REPLACE FUNCTION allot.job_truncate_trigger() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM allot.purged_jobs;
    DELETE FROM allot.purged_credit;
    DELETE FROM allot.job_usage;
    DELETE FROM allot.host_credit;
    RETURN NULL;
END
$$;

/* check_invariants, restated once for 0.7.0: engine names, replicas held
 * twice by an owner, windows with their FLOPS claims (the voices), and the
 * purged totals counted with the jobs still there (retention). */
CREATE OR REPLACE FUNCTION allot.check_invariants() RETURNS SETOF text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT line FROM (
        SELECT pg_catalog.format(
                   'workload %s: workload_usage holds threads %s, focus_threads %s, hosts %s;'
                   ' its counted assignments hold %s, %s, %s',
                   coalesce(u.workload_id, a.workload_id),
                   coalesce(u.threads, 0), coalesce(u.focus_threads, 0), coalesce(u.hosts, 0),
                   coalesce(a.threads, 0), coalesce(a.focus_threads, 0), coalesce(a.hosts, 0)) AS line
          FROM allot.workload_usage u
          FULL JOIN (SELECT workload_id,
                            sum(threads) FILTER (WHERE NOT focus) AS threads,
                            sum(threads) FILTER (WHERE focus) AS focus_threads,
                            count(*) AS hosts
                       FROM allot.assignment
                      WHERE counted
                      GROUP BY workload_id) a ON a.workload_id = u.workload_id
         WHERE coalesce(u.threads, 0) <> coalesce(a.threads, 0)
            OR coalesce(u.focus_threads, 0) <> coalesce(a.focus_threads, 0)
            OR coalesce(u.hosts, 0) <> coalesce(a.hosts, 0)
        UNION ALL
        SELECT pg_catalog.format(
                   'workload %s: job_usage holds unsent %s, in_progress %s, mflops %s, done %s, error %s;'
                   ' its jobs hold %s, %s, %s, %s, %s%s',
                   coalesce(u.workload_id, j.workload_id),
                   coalesce(u.unsent, 0), coalesce(u.in_progress, 0), coalesce(u.mflops, 0),
                   coalesce(u.done, 0), coalesce(u.error, 0),
                   coalesce(j.unsent, 0), coalesce(j.in_progress, 0), coalesce(j.mflops, 0),
                   coalesce(j.done, 0) + coalesce(p.done, 0), coalesce(j.error, 0) + coalesce(p.error, 0),
                   CASE WHEN p.workload_id IS NOT NULL
                        THEN pg_catalog.format(' (with the purged: done %s, error %s)', p.done, p.error)
                        ELSE '' END)
          FROM (SELECT workload_id, sum(unsent) AS unsent, sum(in_progress) AS in_progress,
                       sum(mflops) AS mflops, sum(done) AS done, sum(error) AS error
                  FROM allot.job_usage GROUP BY workload_id) u
          FULL JOIN (SELECT workload_id,
                            count(*) FILTER (WHERE state = 'unsent') AS unsent,
                            count(*) FILTER (WHERE state = 'in_progress') AS in_progress,
                            sum(allot.job_mflops(peak_flops_per_sec))
                                FILTER (WHERE state = 'in_progress') AS mflops,
                            count(*) FILTER (WHERE state = 'done') AS done,
                            count(*) FILTER (WHERE state IN ('error', 'timed_out')) AS error
                       FROM allot.job
                      GROUP BY workload_id) j ON j.workload_id = u.workload_id
          /* the finished jobs retention purged count on (0.7.0) */
          FULL JOIN allot.purged_jobs p ON p.workload_id = coalesce(u.workload_id, j.workload_id)
         WHERE coalesce(u.unsent, 0) <> coalesce(j.unsent, 0)
            OR coalesce(u.in_progress, 0) <> coalesce(j.in_progress, 0)
            OR coalesce(u.mflops, 0) <> coalesce(j.mflops, 0)
            OR coalesce(u.done, 0) <> coalesce(j.done, 0) + coalesce(p.done, 0)
            OR coalesce(u.error, 0) <> coalesce(j.error, 0) + coalesce(p.error, 0)
        UNION ALL
        /* Counters in range: no count may be negative (a shard's MFLOPS are
         * held within a bigint by a constraint, and requests add shards as
         * doubles). */
        SELECT pg_catalog.format(
                   'workload %s: job_usage holds a counter out of range (unsent %s, in_progress %s,'
                   ' mflops %s, done %s, error %s)',
                   workload_id, unsent, in_progress, mflops, done, error)
          FROM (SELECT workload_id, sum(unsent) AS unsent, sum(in_progress) AS in_progress,
                       sum(mflops) AS mflops, sum(done) AS done, sum(error) AS error
                  FROM allot.job_usage GROUP BY workload_id) u
         WHERE unsent < 0 OR in_progress < 0 OR done < 0 OR error < 0
            OR mflops < 0
        UNION ALL
        SELECT pg_catalog.format('job %s: peak_flops_per_sec %s is out of range (0 to 2.048e21)',
                                 j.id, j.peak_flops_per_sec)
          FROM allot.job j
         WHERE j.peak_flops_per_sec NOT BETWEEN 0 AND 2.048e21
        UNION ALL
        SELECT pg_catalog.format(
                   'host %s: host_credit holds credit %s of %s jobs; its jobs hold %s of %s%s',
                   coalesce(c.host_id, j.host_id, p.host_id), coalesce(c.credit, 0), coalesce(c.jobs, 0),
                   coalesce(j.credit, 0) + coalesce(p.credit, 0), coalesce(j.jobs, 0) + coalesce(p.jobs, 0),
                   CASE WHEN p.host_id IS NOT NULL
                        THEN pg_catalog.format(' (with the purged: %s of %s)', p.credit, p.jobs)
                        ELSE '' END)
          FROM allot.host_credit c
          FULL JOIN (SELECT host_id, sum(credit::numeric) AS credit, count(*) AS jobs
                       FROM allot.job
                      WHERE credit IS NOT NULL AND host_id IS NOT NULL
                      GROUP BY host_id) j ON j.host_id = c.host_id
          FULL JOIN allot.purged_credit p ON p.host_id = coalesce(c.host_id, j.host_id)
         WHERE coalesce(c.credit, 0) <> coalesce(j.credit, 0) + coalesce(p.credit, 0)
            OR coalesce(c.jobs, 0) <> coalesce(j.jobs, 0) + coalesce(p.jobs, 0)
        UNION ALL
        /* The decayed credit kept is what its jobs give at decayed_at,
         * with the purged total's, decayed from its own instant. */
        SELECT pg_catalog.format('host %s: host_credit holds decayed credit %s at %s; its jobs give %s',
                                 c.host_id, c.decayed, c.decayed_at, coalesce(j.decayed, 0) + coalesce(p.decayed, 0))
          FROM allot.host_credit c
          LEFT JOIN LATERAL (
              SELECT sum(allot.credit_decay(j.credit,
                         extract(epoch FROM c.decayed_at - coalesce(j.returned_at, c.decayed_at))::double precision))
                         AS decayed
                FROM allot.job j WHERE j.host_id = c.host_id AND j.credit IS NOT NULL) j ON true
          LEFT JOIN LATERAL (
              SELECT allot.credit_decay(p.decayed,
                         extract(epoch FROM c.decayed_at - p.decayed_at)::double precision) AS decayed
                FROM allot.purged_credit p WHERE p.host_id = c.host_id) p ON true
         WHERE abs(c.decayed - coalesce(j.decayed, 0) - coalesce(p.decayed, 0)) > 1e-6 * greatest(abs(c.decayed), 1)
        UNION ALL
        SELECT pg_catalog.format('job %s names host %s, which does not exist', j.id, j.host_id)
          FROM allot.job j
         WHERE j.host_id IS NOT NULL AND NOT EXISTS (SELECT FROM allot.host h WHERE h.id = j.host_id)
        UNION ALL
        SELECT pg_catalog.format('job %s names app version %s, which does not exist', j.id, j.app_version_id)
          FROM allot.job j
         WHERE j.app_version_id IS NOT NULL
           AND NOT EXISTS (SELECT FROM allot.app_version v WHERE v.id = j.app_version_id)
        UNION ALL
        SELECT pg_catalog.format('workload %s has %s jobs but no app: they can never be sent',
                                 w.id, (SELECT count(*) FROM allot.job j WHERE j.workload_id = w.id))
          FROM allot.workload w
         WHERE w.app_id IS NULL AND EXISTS (SELECT FROM allot.job j WHERE j.workload_id = w.id)
        UNION ALL
        /* Names written before 0.6.0 that it would refuse. */
        SELECT pg_catalog.format('host %s: its name %s', h.id, allot.name_problem(h.name))
          FROM allot.host h WHERE allot.name_problem(h.name) IS NOT NULL
        UNION ALL
        SELECT pg_catalog.format('app %s: its name %s', a.id, allot.name_problem(a.name))
          FROM allot.app a WHERE allot.name_problem(a.name) IS NOT NULL
        UNION ALL
        SELECT pg_catalog.format('workload %s: its name %s', w.id, allot.name_problem(w.name))
          FROM allot.workload w WHERE allot.name_problem(w.name) IS NOT NULL
        UNION ALL
        SELECT pg_catalog.format('engine %s: its name %s', pg_catalog.to_json(e.name), allot.name_problem(e.name))
          FROM allot.engine e WHERE allot.name_problem(e.name) IS NOT NULL
        UNION ALL
        /* No owner holds two replicas of one job (0.7.0). */
        SELECT pg_catalog.format('job %s: owner %s holds %s of its replicas', g.group_id, g.voice, g.n)
          FROM (SELECT coalesce(j.replica_of, j.id) AS group_id,
                       CASE WHEN h.owner_id IS NULL THEN j.host_id ELSE -h.owner_id END AS voice,
                       count(*) AS n
                  FROM allot.job j JOIN allot.host h ON h.id = j.host_id
                 WHERE j.state IN ('in_progress', 'done')
                   AND (j.replica_of IS NOT NULL OR j.target_nresults > 1 OR j.min_quorum > 1)
                 GROUP BY 1, 2 HAVING count(*) > 1) g
        UNION ALL
        SELECT pg_catalog.format('job %s is a replica of job %s, itself a replica', j.id, j.replica_of)
          FROM allot.job j JOIN allot.job o ON o.id = j.replica_of
         WHERE o.replica_of IS NOT NULL
        UNION ALL
        /* Each app's statistics are what its window gives. */
        SELECT pg_catalog.format('app %s: its statistics are not those of its window of %s reports',
                                 a.id, pg_catalog.cardinality(a.au_hosts))
          FROM allot.app a
         WHERE pg_catalog.cardinality(a.au_hosts) > 0
           AND (pg_catalog.cardinality(a.au_actual) <> pg_catalog.cardinality(a.au_hosts)
                OR pg_catalog.cardinality(a.au_predicted) <> pg_catalog.cardinality(a.au_hosts)
                OR pg_catalog.cardinality(a.au_flops) <> pg_catalog.cardinality(a.au_hosts)
                OR EXISTS (SELECT FROM allot.app_unit_statistics(a.au_hosts, a.au_actual, a.au_predicted, a.au_flops) s
                            WHERE s.n_reports <> a.n_reports
                               OR abs(s.au_ratio_mean - a.au_ratio_mean) > 1e-9 * greatest(abs(s.au_ratio_mean), 1)
                               OR abs(s.au_ratio_m2 - a.au_ratio_m2) > 1e-9 * greatest(abs(s.au_ratio_m2), 1)
                               OR abs(s.actual_au_mean - a.actual_au_mean) > 1e-9 * greatest(abs(s.actual_au_mean), 1)))
        UNION ALL
        SELECT pg_catalog.format('app %s: %s FLOPS samples but %s hosts for them', a.id,
                                 pg_catalog.cardinality(a.cpu_samples) + pg_catalog.cardinality(a.gpu_samples),
                                 pg_catalog.cardinality(a.cpu_sample_hosts) + pg_catalog.cardinality(a.gpu_sample_hosts))
          FROM allot.app a
         WHERE pg_catalog.cardinality(a.cpu_samples) <> pg_catalog.cardinality(a.cpu_sample_hosts)
            OR pg_catalog.cardinality(a.gpu_samples) <> pg_catalog.cardinality(a.gpu_sample_hosts)
        UNION ALL
        /* Purged totals only grow: a purge adds, nothing else subtracts
         * but an operator's edit. */
        SELECT pg_catalog.format('workload %s: purged_jobs holds done %s, error %s, below 0',
                                 p.workload_id, p.done, p.error)
          FROM allot.purged_jobs p WHERE p.done < 0 OR p.error < 0
        UNION ALL
        SELECT pg_catalog.format('host %s: purged_credit holds %s jobs, below 0', p.host_id, p.jobs)
          FROM allot.purged_credit p WHERE p.jobs < 0
    ) lines ORDER BY 1
$$;

/* merge_host moves the credit of the merged host's purged jobs too. */
CREATE OR REPLACE FUNCTION allot.merge_host(keep bigint, gone bigint) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    missing bigint;
    jobs bigint;
    reports bigint;
BEGIN
    /* As the C writers say it (allot_require_writable). */
    IF pg_catalog.pg_is_in_recovery() THEN
        RAISE EXCEPTION 'allot.merge_host cannot run on a standby: the server is in recovery, and read-only'
            USING ERRCODE = 'read_only_sql_transaction', DETAIL = 'allot.merge_host writes allot''s tables.',
                  HINT = 'Call it on the primary. A standby serves the status views and allot''s read-only functions.';
    END IF;
    IF pg_catalog.current_setting('transaction_read_only')::boolean THEN
        RAISE EXCEPTION 'allot.merge_host cannot run in a read-only transaction'
            USING ERRCODE = 'read_only_sql_transaction', DETAIL = 'allot.merge_host writes allot''s tables.',
                  HINT = 'Call it in a read-write transaction (transaction_read_only off).';
    END IF;
    IF keep IS NULL OR gone IS NULL THEN
        RAISE EXCEPTION 'keep and gone must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF keep = gone THEN
        RAISE EXCEPTION 'host % cannot be merged into itself', keep
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    /* What a DELETE of a host takes (allot.edit_lock), taken first: every
     * request, report and transitioner step waits until this commits. */
    LOCK TABLE allot.job, allot.assignment IN EXCLUSIVE MODE;
    PERFORM FROM allot.host h WHERE h.id IN (keep, gone) ORDER BY h.id FOR UPDATE;
    SELECT x INTO missing FROM pg_catalog.unnest(ARRAY[keep, gone]) x
     WHERE NOT EXISTS (SELECT FROM allot.host h WHERE h.id = x) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'host % does not exist', missing
            USING ERRCODE = 'no_data_found', HINT = 'Hosts are the rows of allot.host.';
    END IF;

    UPDATE allot.job j SET host_id = keep WHERE j.host_id = gone;
    GET DIAGNOSTICS jobs = ROW_COUNT;
    WITH moved AS (DELETE FROM allot.job_report r WHERE r.host_id = gone RETURNING r.*)
    INSERT INTO allot.job_report
           (job_id, host_id, sent_at, outcome, app_units, elapsed_secs, raw_flops_per_sec,
            reported_at, reply, sending)
    SELECT m.job_id, keep, m.sent_at, m.outcome, m.app_units, m.elapsed_secs, m.raw_flops_per_sec,
           m.reported_at, m.reply, m.sending
      FROM moved m
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS reports = ROW_COUNT;
    /* Per version: the counts add up; the lower quota, and the older
     * host's estimates where it has them. */
    INSERT INTO allot.host_app_version AS hv
           (host_id, app_version_id, seconds_per_app_unit, raw_flops_per_sec, quota,
            quota_day, jobs_today, n_success, n_error)
    SELECT keep, g.app_version_id, g.seconds_per_app_unit, g.raw_flops_per_sec, g.quota,
           g.quota_day, g.jobs_today, g.n_success, g.n_error
      FROM allot.host_app_version g WHERE g.host_id = gone
     ORDER BY g.app_version_id
    ON CONFLICT (host_id, app_version_id) DO UPDATE
       SET seconds_per_app_unit = coalesce(hv.seconds_per_app_unit, excluded.seconds_per_app_unit),
           raw_flops_per_sec = coalesce(hv.raw_flops_per_sec, excluded.raw_flops_per_sec),
           quota = least(hv.quota, excluded.quota),
           n_success = hv.n_success + excluded.n_success,
           n_error = hv.n_error + excluded.n_error;
    /* The credit of its jobs that retention purged (0.7.0): the triggers
     * of allot.purged_credit move it from the one host's total to the
     * other's, as the UPDATE above moved its jobs' credit. */
    WITH moved AS (DELETE FROM allot.purged_credit p WHERE p.host_id = gone RETURNING p.*)
    INSERT INTO allot.purged_credit AS p (host_id, credit, jobs, decayed, decayed_at)
    SELECT keep, m.credit, m.jobs, m.decayed, m.decayed_at FROM moved m
    ON CONFLICT (host_id) DO UPDATE
       SET credit = p.credit + excluded.credit, jobs = p.jobs + excluded.jobs,
           decayed = allot.credit_decay(p.decayed, extract(epoch FROM
                         greatest(p.decayed_at, excluded.decayed_at) - p.decayed_at)::double precision)
                   + allot.credit_decay(excluded.decayed, extract(epoch FROM
                         greatest(p.decayed_at, excluded.decayed_at) - excluded.decayed_at)::double precision),
           decayed_at = greatest(p.decayed_at, excluded.decayed_at);
    DELETE FROM allot.host h WHERE h.id = gone;
    DELETE FROM allot.host_credit c WHERE c.host_id = gone AND c.credit = 0 AND c.jobs = 0;
    RETURN pg_catalog.jsonb_build_object('host_id', keep, 'merged', gone,
                                         'jobs', jobs, 'reports', reports);
END
$$;

/* Settings, privileges and dumps. */
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::int >= 150000 THEN
        EXECUTE 'GRANT SET ON PARAMETER allot.retention_period, allot.retention_batch,
                     allot.retention_archive TO allot_admin';
    END IF;
END
$$;

REVOKE ALL ON allot.purged_jobs, allot.purged_credit, allot.job_archive FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON allot.purged_jobs, allot.purged_credit, allot.job_archive
    TO allot_admin;
REVOKE ALL ON FUNCTION allot.retention_purging(), allot.purge_finished(timestamptz, int),
                       allot.purged_totals_trigger() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.retention_purging(), allot.purge_finished(timestamptz, int),
                          allot.purged_totals_trigger() TO allot_admin;

/* The purged totals are the farm's history, like its jobs: dumped, and
 * added to the counters (not dumped) when restored.  So is the archive. */
SELECT pg_catalog.pg_extension_config_dump('allot.purged_jobs', '');
SELECT pg_catalog.pg_extension_config_dump('allot.purged_credit', '');
SELECT pg_catalog.pg_extension_config_dump('allot.job_archive', '');

/* ---------------------------------------------------------------------------
 * Bounded influence over owners' voices (issue 30, "collusion breakdown").
 *
 * The app's statistics leave out, besides the claims screening finds a
 * hundred times off, a voice far from the voices' median (two standard
 * errors of the spread within voices) whose reports the voices chance
 * allows would show less than once in a million (src/app_unit_stats.c): a
 * quarter of the owners claiming fifty times the prediction every job
 * moved estimate, bound and credit by +100% and more.  Nothing changes in
 * the schema: app_unit_statistics, in C, computes what the transitioner
 * does, and the windows' statistics above were computed with it.  Its
 * comment says so.
 * ------------------------------------------------------------------------- */
COMMENT ON FUNCTION allot.app_unit_statistics(bigint[], double precision[], double precision[], double precision[]) IS
    'An app''s statistics from a window of validated reports (voices, actual and predicted app units, FLOPS per app unit as claimed), as 0.7.0''s transitioner computes them: claims implausible by far left out, and voices whose mean lies far from the voices'' median with reports that honest voices would seldom show as often; each voice one voice, each report counted up to the seed''s bound';

/* ---------------------------------------------------------------------------
 * Issue 32: bounds that fit, jobs that end, errors that cost.
 *
 * Bounds.  Most BOINC apps never report app units, so every report says
 * what was predicted and seed 004's bound (mean + 4 standard deviations of
 * actual / predicted app units) equals the estimate: a job in ten that runs
 * ten times longer is aborted by a client that enforces rsc_fpops_bound.
 * The transitioner now also learns the spread of run time per predicted app
 * unit (elapsed x raw FLOPS / predicted app units) from the same window of
 * validated reports, screened and one voice per owner as the app-unit
 * statistics are: run_flops_n and run_flops_bound (mean + 4 standard
 * deviations of that figure).  When the app units say nothing of the
 * spread, the bound is the estimate's base times run_flops_bound over the
 * app's FLOPs per app unit; before allot.bound_min_reports reports, times
 * allot.default_bound_factor.  An operator's bound_factor (per app, per
 * job: BOINC's rsc_fpops_bound by hand) is a floor: the bound is at least
 * that many times the estimate.
 *
 * Jobs end.  A host is never sent a job it failed, so a job failed by every
 * host that asks would wait unsent for ever.  A job that has failed and
 * stays unsent for allot.unsendable_after since its last failure, while
 * hosts asked for work after it, ends in error with reason 'unsendable' (or, with allot.retry_failed_hosts, goes
 * once to a host that failed it once: resend_to_failed; then it ends).
 * Every job that ends in error says why (job.reason), and
 * allot.status_job_error lists them for the status page.
 *
 * Errors cost.  A failed sending halves its host's daily quota for the
 * version (not below 1; a success doubles it back, up to
 * allot.daily_quota), and a host whose sendings fail in a row is told to
 * wait: allot.error_backoff after the first, doubling with each, at most
 * allot.max_error_backoff; request_work sends it nothing until then.
 * ------------------------------------------------------------------------- */
ALTER TABLE allot.app
    ADD COLUMN bound_factor double precision,
    ADD COLUMN run_flops_n bigint NOT NULL DEFAULT 0,
    ADD COLUMN run_flops_bound double precision,
    ADD COLUMN au_ratio_tail double precision,
    ADD CONSTRAINT app_bound_factor_range CHECK (bound_factor BETWEEN 1 AND 1e6);
COMMENT ON COLUMN allot.app.bound_factor IS
    'Operator sets: every job of the app gets a bound (rsc_fpops_bound) of at least this many times its estimate. NULL: none';
COMMENT ON COLUMN allot.app.run_flops_n IS
    'Allot writes (the transitioner): how many reports of the window counted in run_flops_bound';
COMMENT ON COLUMN allot.app.run_flops_bound IS
    'Allot writes: mean + 4 standard deviations of FLOPs (elapsed x raw FLOPS) per predicted app unit over the window''s screened reports, each owner one voice (at least the figure one voice in 16 reaches, as for au_ratio_tail); the bound when app units say nothing of the spread. NULL: no report said';
COMMENT ON COLUMN allot.app.au_ratio_tail IS
    'Allot writes: the ratio of actual to predicted app units that one voice in 16 reached, where the search for au_ratio_bound stalled below it: a tail rarer than one report in 17, which mean + 4 standard deviations never reaches, counts up to it, and every job''s bound is at least its base times this. NULL: none';

/* The dispatch cache holds these too (the transitioner's update of an
 * app's statistics sets est_flops_per_au each time already). */
DROP TRIGGER app_cache_invalidate ON allot.app;
CREATE TRIGGER app_cache_invalidate
    AFTER INSERT OR UPDATE OF id, est_flops_per_au, bound_factor, run_flops_n, run_flops_bound
          OR DELETE OR TRUNCATE ON allot.app
    FOR EACH STATEMENT EXECUTE FUNCTION allot.workload_cache_invalidate();

ALTER TABLE allot.job
    ADD COLUMN bound_factor double precision,
    ADD COLUMN reason text,
    ADD COLUMN resend_to_failed boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT job_bound_factor_range CHECK (bound_factor BETWEEN 1 AND 1e6),
    ADD CONSTRAINT job_reason_known
        CHECK (reason IN ('too many errors', 'too many sendings', 'unsendable'));
COMMENT ON COLUMN allot.job.bound_factor IS
    'Operator sets: the job''s bound (rsc_fpops_bound) is at least this many times its estimate (with the app''s, the greater counts). NULL: none';
COMMENT ON COLUMN allot.job.reason IS
    'Allot writes: why the job ended in error: ''too many errors'' (more failed sendings than max_error_results), ''too many sendings'' (max_total_results made), ''unsendable'' (failed, and no host it had not failed on took it within allot.unsendable_after). NULL: it did not, or before 0.7.0';
COMMENT ON COLUMN allot.job.resend_to_failed IS
    'Allot writes: with allot.retry_failed_hosts, an unsendable job may go to a host that failed it once';

ALTER TABLE allot.host_reliability
    ADD COLUMN error_streak int NOT NULL DEFAULT 0,
    ADD COLUMN backoff_until timestamptz,
    ADD CONSTRAINT host_reliability_error_streak_nonnegative CHECK (error_streak >= 0);
COMMENT ON COLUMN allot.host_reliability.error_streak IS
    'Its sendings that failed since its last success';
COMMENT ON COLUMN allot.host_reliability.backoff_until IS
    'Until when request_work sends it nothing after its failures (allot.error_backoff, doubling per failure in a row, at most allot.max_error_backoff). NULL: no backoff';

/* Jobs of the transitioner's unsendable step (failed, unsent), and of
 * status_job_error. */
CREATE INDEX job_unsent_failed_idx ON allot.job (id) WHERE state = 'unsent' AND failures > 0;
CREATE INDEX job_error_idx ON allot.job (id) WHERE state = 'error';

CREATE VIEW allot.status_job_error AS
SELECT j.id AS job_id, j.workload_id, w.name AS workload, j.reason, j.failures, j.tries,
       j.host_id AS last_host_id, j.returned_at
  FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id
 WHERE j.state = 'error';
COMMENT ON VIEW allot.status_job_error IS
    'Jobs that ended in error, with why (job.reason), for the status page';
COMMENT ON COLUMN allot.status_job_error.job_id IS 'The job';
COMMENT ON COLUMN allot.status_job_error.workload_id IS 'Its workload';
COMMENT ON COLUMN allot.status_job_error.workload IS 'Its workload''s name';
COMMENT ON COLUMN allot.status_job_error.failures IS 'Its failed sendings (errors, aborts, losses, timeouts, invalid results)';
COMMENT ON COLUMN allot.status_job_error.tries IS 'Its sendings';
COMMENT ON COLUMN allot.status_job_error.last_host_id IS 'The host of its last sending, when it gave up on one; NULL when it ended unsent';
COMMENT ON COLUMN allot.status_job_error.returned_at IS 'When its last sending was reported';
COMMENT ON COLUMN allot.status_job_error.reason IS
    'Why it ended: ''too many errors'', ''too many sendings'', ''unsendable''; NULL: an error before 0.7.0, or set by hand';
REVOKE ALL ON allot.status_job_error FROM PUBLIC;
GRANT SELECT ON allot.status_job_error TO allot_monitor, allot_admin;

DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::int >= 150000 THEN
        EXECUTE 'GRANT SET ON PARAMETER allot.default_bound_factor, allot.bound_min_reports,
                     allot.unsendable_after, allot.retry_failed_hosts, allot.error_backoff,
                     allot.max_error_backoff
                 TO allot_admin';
    END IF;
END
$$;
