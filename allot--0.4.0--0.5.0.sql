/* allot 0.4.0 -> 0.5.0: untrusted web roles and hosts, self-registering
 * hosts, status views, OpenBench to the letter, and catalog comments.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.5.0'" to load this file. \quit

/* ---------------------------------------------------------------------------
 * Policy, ownership and untrusted input.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * OpenBench to the letter.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Hosts that register themselves (the BOINC front end).
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Status views and the allot_monitor role.
 *
 * What a farm's status page shows, as views that psql reads as easily as a
 * page does: allot.status_farm (one row), status_workload, status_host,
 * status_app and status_transitioner.  A page refreshes every few seconds,
 * so the views read the counters allot keeps anyway (workload_usage,
 * job_usage) instead of counting jobs or assignments; each view's comment
 * says what it costs.  Three things were not kept before and are now:
 *   job_usage.done / .error  jobs finished per workload, by the same trigger
 *                            that counts unsent and in-progress jobs;
 *   allot.host_credit        credit granted per host, by that trigger too;
 *   allot.transitioner_run   the last 100 runs of run_transitioner, a ring
 *                            of slots that run_transitioner overwrites
 *                            (src/transitioner.c), so it never grows.
 *
 * allot_monitor is a NOLOGIN group role like allot_web and allot_admin: it
 * may read these views and nothing else, no table, no function.  The views
 * belong to the extension's owner and read the tables with its rights, so
 * they call no allot function (a caller needs EXECUTE on the functions a
 * view calls): REC is decayed inline, as allot.decay does it.  They show no
 * host secret (tokens, or anything a web layer keeps in allot.host), only
 * the columns named here.
 * ------------------------------------------------------------------------- */
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'allot_monitor') THEN
        CREATE ROLE allot_monitor NOLOGIN;
    ELSIF EXISTS (SELECT FROM pg_catalog.pg_roles
                   WHERE rolname = 'allot_monitor' AND (rolcanlogin OR rolsuper)) THEN
        RAISE EXCEPTION 'role "allot_monitor" exists and can log in or is a superuser'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'allot uses it as a NOLOGIN group role; rename or alter it first.';
    END IF;
END
$$;

/* Finished jobs per workload, next to the unsent and in-progress counts. */
ALTER TABLE allot.job_usage
    ADD COLUMN done bigint NOT NULL DEFAULT 0,
    ADD COLUMN error bigint NOT NULL DEFAULT 0;

COMMENT ON COLUMN allot.job_usage.done IS
    'Jobs of the workload in state done';
COMMENT ON COLUMN allot.job_usage.error IS
    'Jobs of the workload in state error or timed_out';

INSERT INTO allot.job_usage AS u (workload_id, done, error)
SELECT workload_id, count(*) FILTER (WHERE state = 'done'),
       count(*) FILTER (WHERE state IN ('error', 'timed_out'))
  FROM allot.job GROUP BY workload_id
ON CONFLICT (workload_id) DO UPDATE SET done = excluded.done, error = excluded.error;

/* Credit granted to the jobs a host did.  No foreign key, like job_usage:
 * its rows follow the jobs, which is what the trigger sees.  numeric, so
 * that a total is exactly the sum of its jobs' credits in any order. */
CREATE TABLE allot.host_credit (
    host_id bigint PRIMARY KEY,
    credit  numeric NOT NULL DEFAULT 0,
    jobs    bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 50);

COMMENT ON TABLE allot.host_credit IS
    'Credit granted per host: the sum of job.credit over the host''s jobs; kept by the trigger on allot.job';
COMMENT ON COLUMN allot.host_credit.host_id IS 'The host (allot.host.id)';
COMMENT ON COLUMN allot.host_credit.credit IS 'Sum of the credit of its jobs, in cobblestones';
COMMENT ON COLUMN allot.host_credit.jobs IS 'Its jobs that have credit';

INSERT INTO allot.host_credit (host_id, credit, jobs)
SELECT host_id, sum(credit::numeric), count(*)
  FROM allot.job WHERE credit IS NOT NULL AND host_id IS NOT NULL GROUP BY host_id;

/* The trigger of 0.2.0, counting done and errored jobs too, and a host's
 * credit.  Requests and reports change no credit: their host_credit
 * statement finds no row with credit and writes nothing.  Rows are written
 * in workload id, then host id order, so that concurrent statements cannot
 * deadlock over them. */
CREATE OR REPLACE FUNCTION allot.job_usage_trigger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO allot.job_usage AS u (workload_id, unsent, in_progress, mflops, done, error)
        SELECT workload_id, count(*) FILTER (WHERE state = 'unsent'),
               count(*) FILTER (WHERE state = 'in_progress'),
               coalesce(sum(allot.job_mflops(peak_flops_per_sec)) FILTER (WHERE state = 'in_progress'), 0),
               count(*) FILTER (WHERE state = 'done'),
               count(*) FILTER (WHERE state IN ('error', 'timed_out'))
          FROM new_rows GROUP BY workload_id ORDER BY workload_id
        ON CONFLICT (workload_id) DO UPDATE
           SET unsent = u.unsent + excluded.unsent,
               in_progress = u.in_progress + excluded.in_progress,
               mflops = u.mflops + excluded.mflops,
               done = u.done + excluded.done,
               error = u.error + excluded.error;
        INSERT INTO allot.host_credit AS c (host_id, credit, jobs)
        SELECT host_id, sum(credit::numeric), count(*)
          FROM new_rows WHERE credit IS NOT NULL AND host_id IS NOT NULL
         GROUP BY host_id ORDER BY host_id
        ON CONFLICT (host_id) DO UPDATE
           SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO allot.job_usage AS u (workload_id, unsent, in_progress, mflops, done, error)
        SELECT workload_id, sum(unsent), sum(in_progress), sum(mflops), sum(done), sum(error)
          FROM (SELECT workload_id, (state = 'unsent')::int AS unsent,
                       (state = 'in_progress')::int AS in_progress,
                       CASE WHEN state = 'in_progress'
                            THEN allot.job_mflops(peak_flops_per_sec) ELSE 0 END AS mflops,
                       (state = 'done')::int AS done,
                       (state IN ('error', 'timed_out'))::int AS error
                  FROM new_rows
                UNION ALL
                SELECT workload_id, -(state = 'unsent')::int, -(state = 'in_progress')::int,
                       CASE WHEN state = 'in_progress'
                            THEN -allot.job_mflops(peak_flops_per_sec) ELSE 0 END,
                       -(state = 'done')::int, -(state IN ('error', 'timed_out'))::int
                  FROM old_rows) d
         GROUP BY workload_id
        HAVING sum(unsent) <> 0 OR sum(in_progress) <> 0 OR sum(mflops) <> 0
            OR sum(done) <> 0 OR sum(error) <> 0
         ORDER BY workload_id
        ON CONFLICT (workload_id) DO UPDATE
           SET unsent = u.unsent + excluded.unsent,
               in_progress = u.in_progress + excluded.in_progress,
               mflops = u.mflops + excluded.mflops,
               done = u.done + excluded.done,
               error = u.error + excluded.error;
        INSERT INTO allot.host_credit AS c (host_id, credit, jobs)
        SELECT host_id, sum(credit), sum(jobs)
          FROM (SELECT host_id, credit::numeric AS credit, 1 AS jobs
                  FROM new_rows WHERE credit IS NOT NULL AND host_id IS NOT NULL
                UNION ALL
                SELECT host_id, -credit::numeric, -1
                  FROM old_rows WHERE credit IS NOT NULL AND host_id IS NOT NULL) d
         GROUP BY host_id
        HAVING sum(credit) <> 0 OR sum(jobs) <> 0
         ORDER BY host_id
        ON CONFLICT (host_id) DO UPDATE
           SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs;
    ELSE
        INSERT INTO allot.job_usage AS u (workload_id, unsent, in_progress, mflops, done, error)
        SELECT workload_id, -count(*) FILTER (WHERE state = 'unsent'),
               -count(*) FILTER (WHERE state = 'in_progress'),
               -coalesce(sum(allot.job_mflops(peak_flops_per_sec)) FILTER (WHERE state = 'in_progress'), 0),
               -count(*) FILTER (WHERE state = 'done'),
               -count(*) FILTER (WHERE state IN ('error', 'timed_out'))
          FROM old_rows GROUP BY workload_id ORDER BY workload_id
        ON CONFLICT (workload_id) DO UPDATE
           SET unsent = u.unsent + excluded.unsent,
               in_progress = u.in_progress + excluded.in_progress,
               mflops = u.mflops + excluded.mflops,
               done = u.done + excluded.done,
               error = u.error + excluded.error;
        INSERT INTO allot.host_credit AS c (host_id, credit, jobs)
        SELECT host_id, -sum(credit::numeric), -count(*)
          FROM old_rows WHERE credit IS NOT NULL AND host_id IS NOT NULL
         GROUP BY host_id ORDER BY host_id
        ON CONFLICT (host_id) DO UPDATE
           SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION allot.job_truncate_trigger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM allot.job_usage;
    DELETE FROM allot.host_credit;
    RETURN NULL;
END
$$;

/* check_invariants also checks the finished-job counts and host credit. */
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
            OR u.hosts = 0
        UNION ALL
        SELECT pg_catalog.format(
                   'workload %s: job_usage holds unsent %s, in_progress %s, mflops %s, done %s, error %s;'
                   ' its jobs hold %s, %s, %s, %s, %s',
                   coalesce(u.workload_id, j.workload_id),
                   coalesce(u.unsent, 0), coalesce(u.in_progress, 0), coalesce(u.mflops, 0),
                   coalesce(u.done, 0), coalesce(u.error, 0),
                   coalesce(j.unsent, 0), coalesce(j.in_progress, 0), coalesce(j.mflops, 0),
                   coalesce(j.done, 0), coalesce(j.error, 0))
          FROM allot.job_usage u
          FULL JOIN (SELECT workload_id,
                            count(*) FILTER (WHERE state = 'unsent') AS unsent,
                            count(*) FILTER (WHERE state = 'in_progress') AS in_progress,
                            sum(allot.job_mflops(peak_flops_per_sec))
                                FILTER (WHERE state = 'in_progress') AS mflops,
                            count(*) FILTER (WHERE state = 'done') AS done,
                            count(*) FILTER (WHERE state IN ('error', 'timed_out')) AS error
                       FROM allot.job
                      GROUP BY workload_id) j ON j.workload_id = u.workload_id
         WHERE coalesce(u.unsent, 0) <> coalesce(j.unsent, 0)
            OR coalesce(u.in_progress, 0) <> coalesce(j.in_progress, 0)
            OR coalesce(u.mflops, 0) <> coalesce(j.mflops, 0)
            OR coalesce(u.done, 0) <> coalesce(j.done, 0)
            OR coalesce(u.error, 0) <> coalesce(j.error, 0)
        UNION ALL
        SELECT pg_catalog.format(
                   'host %s: host_credit holds credit %s of %s jobs; its jobs hold %s of %s',
                   coalesce(c.host_id, j.host_id), coalesce(c.credit, 0), coalesce(c.jobs, 0),
                   coalesce(j.credit, 0), coalesce(j.jobs, 0))
          FROM allot.host_credit c
          FULL JOIN (SELECT host_id, sum(credit::numeric) AS credit, count(*) AS jobs
                       FROM allot.job
                      WHERE credit IS NOT NULL AND host_id IS NOT NULL
                      GROUP BY host_id) j ON j.host_id = c.host_id
         WHERE coalesce(c.credit, 0) <> coalesce(j.credit, 0)
            OR coalesce(c.jobs, 0) <> coalesce(j.jobs, 0)
    ) lines ORDER BY 1
$$;

/* The last runs of run_transitioner: run n is written to slot n % 100, so
 * the table holds at most 100 rows and each run costs one upsert (a HOT
 * update once the ring is full).  The sequence numbers runs without a lock
 * between concurrent runs; a run that rolls back leaves a gap and no row.
 * Not dumped: it is this server's log, like pg_stat_*, not the farm. */
CREATE SEQUENCE allot.transitioner_run_seq;

CREATE TABLE allot.transitioner_run (
    slot                int PRIMARY KEY,
    run                 bigint NOT NULL,
    started_at          timestamptz NOT NULL,
    finished_at         timestamptz NOT NULL,
    now_given           timestamptz NOT NULL,
    fairness            text NOT NULL,
    timed_out           bigint NOT NULL,
    expired_assignments bigint NOT NULL,
    reports_read        bigint NOT NULL,
    flops_samples       bigint NOT NULL,
    flops_estimates     bigint NOT NULL,
    credited            bigint NOT NULL,
    debts_folded        bigint NOT NULL,
    CONSTRAINT transitioner_run_slot_range CHECK (slot >= 0 AND slot < 100)
) WITH (fillfactor = 50);

COMMENT ON SEQUENCE allot.transitioner_run_seq IS
    'Numbers the runs of run_transitioner';
COMMENT ON TABLE allot.transitioner_run IS
    'The last 100 runs of run_transitioner, one row per slot (run % 100), written at the end of each run';
COMMENT ON COLUMN allot.transitioner_run.slot IS 'run % 100: where the run is kept';
COMMENT ON COLUMN allot.transitioner_run.run IS 'Run number, from allot.transitioner_run_seq';
COMMENT ON COLUMN allot.transitioner_run.started_at IS 'Wall-clock time the run started';
COMMENT ON COLUMN allot.transitioner_run.finished_at IS 'Wall-clock time the run finished (before its transaction committed)';
COMMENT ON COLUMN allot.transitioner_run.now_given IS 'The now the run was given: its clock for deadlines and expiry';
COMMENT ON COLUMN allot.transitioner_run.fairness IS 'allot.fairness during the run';
COMMENT ON COLUMN allot.transitioner_run.timed_out IS 'Jobs past their deadline sent back to unsent';
COMMENT ON COLUMN allot.transitioner_run.expired_assignments IS 'Assignments that stopped counting';
COMMENT ON COLUMN allot.transitioner_run.reports_read IS 'Successful reports read for FLOPS estimates';
COMMENT ON COLUMN allot.transitioner_run.flops_samples IS 'FLOPS-per-app-unit values added to the apps'' samples';
COMMENT ON COLUMN allot.transitioner_run.flops_estimates IS 'Percentiles taken, each moving an app''s estimate';
COMMENT ON COLUMN allot.transitioner_run.credited IS 'Validated jobs granted credit';
COMMENT ON COLUMN allot.transitioner_run.debts_folded IS 'Debt rows folded (allot.fairness = debt)';

/* Settings as a view reads them.  In a session that has not loaded allot's
 * library a setting is a placeholder (set for the database or the role) or
 * unknown; unknown ones take allot's defaults. */
CREATE VIEW allot.status_settings AS
SELECT coalesce(nullif(pg_catalog.current_setting('allot.fairness', true), ''), 'current')
           AS fairness,
       coalesce(nullif(pg_catalog.current_setting('allot.balance_engine_throughputs', true), ''),
                'off')::boolean AS balance_engine_throughputs,
       coalesce(nullif(pg_catalog.current_setting('allot.rec_half_life', true), ''), '10d')::interval
           AS rec_half_life,
       coalesce(nullif(pg_catalog.current_setting('allot.assignment_ttl', true), ''), '2min')::interval
           AS assignment_ttl;

COMMENT ON VIEW allot.status_settings IS
    'The allot settings the status views use, as this session sees them. Cost: none (no table)';
COMMENT ON COLUMN allot.status_settings.fairness IS 'allot.fairness: current, recent or debt';
COMMENT ON COLUMN allot.status_settings.balance_engine_throughputs IS 'allot.balance_engine_throughputs';
COMMENT ON COLUMN allot.status_settings.rec_half_life IS 'allot.rec_half_life, used to decay recent credit';
COMMENT ON COLUMN allot.status_settings.assignment_ttl IS 'allot.assignment_ttl';

/* Per workload.  Share and fair share compare workloads of one kind only
 * (assignment workloads in threads, job workloads in FLOPS), as the
 * selection does.  The workloads in contention are the active ones that
 * can be picked (an assignment workload, or a job workload with unsent
 * jobs) at the highest priority among those of their kind; fair share is
 * their effective throughput (seed 000 step 3; balancing does not apply
 * under debt) over the sum of theirs, and 0 for every other workload. */
CREATE VIEW allot.status_workload AS
WITH w AS (
    SELECT w.id, w.name, w.app_id IS NOT NULL AS jobs, w.engine, a.name AS app, w.priority,
           w.state, w.throughput,
           CASE WHEN w.app_id IS NULL THEN coalesce(wu.hosts, 0) END AS hosts,
           CASE WHEN w.app_id IS NULL THEN coalesce(wu.threads + wu.focus_threads, 0) END AS threads,
           CASE WHEN w.app_id IS NOT NULL THEN coalesce(ju.mflops, 0) * 1e6::float8 END AS peak_flops,
           ju.unsent, ju.in_progress, ju.done, ju.error, a.est_flops_per_au,
           cr.rec, cr.debt,
           w.state = 'active' AND (w.app_id IS NULL OR ju.unsent > 0) AS contending,
           s.fairness, s.balance_engine_throughputs AND s.fairness <> 'debt' AS balance
      FROM allot.workload w
     CROSS JOIN allot.status_settings s
      LEFT JOIN allot.workload_usage wu ON wu.workload_id = w.id
      LEFT JOIN allot.job_usage ju ON ju.workload_id = w.id
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
       e.done AS jobs_done, e.error AS jobs_error, e.est_flops_per_au
  FROM effective e
 ORDER BY e.jobs, e.priority DESC, e.id;

COMMENT ON VIEW allot.status_workload IS
    'One row per workload: what it is, what it holds, its share against its fair share under allot.fairness, and its jobs. '
    'Cost: O(workloads): one row of workload_usage, job_usage and app per workload and its workload_credit rows; no host, assignment or job is read';
COMMENT ON COLUMN allot.status_workload.workload_id IS 'allot.workload.id';
COMMENT ON COLUMN allot.status_workload.name IS 'allot.workload.name';
COMMENT ON COLUMN allot.status_workload.kind IS 'assignment (one host at a time, assign_workload) or jobs (an app''s jobs, request_work)';
COMMENT ON COLUMN allot.status_workload.engine IS 'Its engine: the balancing and focus key';
COMMENT ON COLUMN allot.status_workload.app IS 'Name of its app; NULL for an assignment workload';
COMMENT ON COLUMN allot.status_workload.priority IS 'Its priority: only the highest runnable priority is picked';
COMMENT ON COLUMN allot.status_workload.state IS 'active, paused or finished';
COMMENT ON COLUMN allot.status_workload.throughput IS 'Its throughput: its weight in the fair share';
COMMENT ON COLUMN allot.status_workload.hosts IS 'Assignment workloads: hosts whose assignment to it counts (as of the last sweep of stale ones). NULL for job workloads, whose hosts are not counted';
COMMENT ON COLUMN allot.status_workload.threads IS 'Assignment workloads: threads of those hosts. NULL for job workloads';
COMMENT ON COLUMN allot.status_workload.peak_flops IS 'Job workloads: peak FLOPS of its jobs in progress, on every resource. NULL for assignment workloads';
COMMENT ON COLUMN allot.status_workload.fairness IS 'allot.fairness, which decides what share measures';
COMMENT ON COLUMN allot.status_workload.share IS 'Its part (0 to 1) of what its kind uses: under current and debt, of the threads or peak FLOPS in use now; under recent, of the recent estimated credit';
COMMENT ON COLUMN allot.status_workload.fair_share IS 'Its fair part (0 to 1): its effective throughput over that of the workloads in contention of its kind, 0 when it is not in contention';
COMMENT ON COLUMN allot.status_workload.rec IS 'Recent estimated credit, decayed to now, summed over resources (FLOPs or thread-seconds); NULL when none was recorded';
COMMENT ON COLUMN allot.status_workload.debt IS 'Long-term debt as of the last fold, summed over resources (0 is the most owed); NULL when none was recorded';
COMMENT ON COLUMN allot.status_workload.jobs_unsent IS 'Job workloads: jobs waiting for a host';
COMMENT ON COLUMN allot.status_workload.jobs_in_progress IS 'Job workloads: jobs sent and not yet reported';
COMMENT ON COLUMN allot.status_workload.jobs_done IS 'Job workloads: jobs reported successfully';
COMMENT ON COLUMN allot.status_workload.jobs_error IS 'Job workloads: jobs that ended in error';
COMMENT ON COLUMN allot.status_workload.est_flops_per_au IS 'Job workloads: its app''s estimate of FLOPs per app unit';

/* Per host.  Read it with ORDER BY ... LIMIT: the jobs in progress are
 * counted per host through the index on them, for the rows returned. */
CREATE VIEW allot.status_host AS
SELECT h.id AS host_id, h.name, h.os, h.threads, h.cpu_flops,
       (SELECT pg_catalog.jsonb_object_agg(c.resource, c.count)
          FROM allot.host_coproc c WHERE c.host_id = h.id) AS coprocessors,
       h.last_seen,
       a.workload_id, a.counted AS assignment_counted, a.seen_at AS assignment_seen_at,
       j.jobs_in_progress, j.peak_flops_in_progress,
       coalesce(hc.credit, 0)::float8 AS credit, coalesce(hc.jobs, 0) AS credited_jobs
  FROM allot.host h
  LEFT JOIN allot.assignment a ON a.host_id = h.id
  LEFT JOIN allot.host_credit hc ON hc.host_id = h.id
  LEFT JOIN LATERAL (
      SELECT count(*) AS jobs_in_progress,
             coalesce(sum(jb.peak_flops_per_sec), 0) AS peak_flops_in_progress
        FROM allot.job jb WHERE jb.host_id = h.id AND jb.state = 'in_progress') j ON true;

COMMENT ON VIEW allot.status_host IS
    'One row per host: when it was last seen, what it holds (its assignment, its jobs in progress) and its credit. '
    'Cost: O(hosts) for the whole view; with ORDER BY last_seen DESC LIMIT n, a sort of the host rows and index lookups for the n rows returned';
COMMENT ON COLUMN allot.status_host.host_id IS 'allot.host.id';
COMMENT ON COLUMN allot.status_host.name IS 'allot.host.name';
COMMENT ON COLUMN allot.status_host.os IS 'Its operating system';
COMMENT ON COLUMN allot.status_host.threads IS 'Its CPU threads';
COMMENT ON COLUMN allot.status_host.cpu_flops IS 'Peak FLOPS of one CPU, as stated; NULL when unknown';
COMMENT ON COLUMN allot.status_host.coprocessors IS 'Its coprocessors: {"resource": count}; NULL when it has none';
COMMENT ON COLUMN allot.status_host.last_seen IS 'When it last asked for work or checked in (kept to the minute)';
COMMENT ON COLUMN allot.status_host.workload_id IS 'The assignment workload it is assigned; NULL when none';
COMMENT ON COLUMN allot.status_host.assignment_counted IS 'Whether that assignment counts (its host was seen within allot.assignment_ttl at the last sweep)';
COMMENT ON COLUMN allot.status_host.assignment_seen_at IS 'When the host last confirmed that assignment';
COMMENT ON COLUMN allot.status_host.jobs_in_progress IS 'Jobs in progress on it';
COMMENT ON COLUMN allot.status_host.peak_flops_in_progress IS 'Peak FLOPS of those jobs';
COMMENT ON COLUMN allot.status_host.credit IS 'Credit granted for its jobs, in cobblestones';
COMMENT ON COLUMN allot.status_host.credited_jobs IS 'Its jobs that were granted credit';

/* Per app. */
CREATE VIEW allot.status_app AS
SELECT a.id AS app_id, a.name,
       (SELECT pg_catalog.array_agg(DISTINCT v.resource ORDER BY v.resource)
          FROM allot.app_version v WHERE v.app_id = a.id) AS resources,
       (SELECT count(*) FROM allot.workload w WHERE w.app_id = a.id) AS workloads,
       a.n_reports, a.est_flops_per_au, a.cpu_flops_per_au, a.gpu_flops_per_au,
       pg_catalog.cardinality(a.cpu_samples) + pg_catalog.cardinality(a.gpu_samples)
           AS samples_pending,
       a.actual_au_mean,
       a.actual_au_mean * a.est_flops_per_au / (1e9 * 86400 / 200) AS credit_per_job,
       u.unsent AS jobs_unsent, u.in_progress AS jobs_in_progress,
       u.done AS jobs_done, u.error AS jobs_error
  FROM allot.app a
  LEFT JOIN LATERAL (
      SELECT coalesce(sum(ju.unsent), 0) AS unsent, coalesce(sum(ju.in_progress), 0) AS in_progress,
             coalesce(sum(ju.done), 0) AS done, coalesce(sum(ju.error), 0) AS error
        FROM allot.workload w JOIN allot.job_usage ju ON ju.workload_id = w.id
       WHERE w.app_id = a.id) u ON true;

COMMENT ON VIEW allot.status_app IS
    'One row per app: its versions'' resources, its FLOPS-per-app-unit estimate, the credit a job earns, and its jobs. '
    'Cost: O(apps + workloads): the app rows with their sample arrays, their versions, and one job_usage row per workload';
COMMENT ON COLUMN allot.status_app.app_id IS 'allot.app.id';
COMMENT ON COLUMN allot.status_app.name IS 'allot.app.name';
COMMENT ON COLUMN allot.status_app.resources IS 'Resources its versions run on';
COMMENT ON COLUMN allot.status_app.workloads IS 'Workloads of the app';
COMMENT ON COLUMN allot.status_app.n_reports IS 'Successful reports its statistics learned from';
COMMENT ON COLUMN allot.status_app.est_flops_per_au IS 'Estimated FLOPs per app unit (the transitioner''s moving average); NULL until the first percentile';
COMMENT ON COLUMN allot.status_app.cpu_flops_per_au IS 'Last percentile of its CPU versions'' FLOPs per app unit';
COMMENT ON COLUMN allot.status_app.gpu_flops_per_au IS 'Last percentile of its GPU versions'' FLOPs per app unit';
COMMENT ON COLUMN allot.status_app.samples_pending IS 'Values collected toward the next percentile (allot.flops_sample_size per kind)';
COMMENT ON COLUMN allot.status_app.actual_au_mean IS 'Mean app units of a successful job';
COMMENT ON COLUMN allot.status_app.credit_per_job IS 'Credit a validated job earns now, in cobblestones (mean app units x estimate / 4.32e11); NULL without an estimate';
COMMENT ON COLUMN allot.status_app.jobs_unsent IS 'Unsent jobs of its workloads';
COMMENT ON COLUMN allot.status_app.jobs_in_progress IS 'Jobs of its workloads in progress';
COMMENT ON COLUMN allot.status_app.jobs_done IS 'Jobs of its workloads done';
COMMENT ON COLUMN allot.status_app.jobs_error IS 'Jobs of its workloads that ended in error';

/* The last runs of the transitioner, newest first. */
CREATE VIEW allot.status_transitioner AS
SELECT r.run, r.started_at, r.finished_at,
       extract(epoch FROM r.finished_at - r.started_at)::float8 * 1000 AS duration_ms,
       r.now_given, r.fairness, r.timed_out, r.expired_assignments, r.reports_read,
       r.flops_samples, r.flops_estimates, r.credited, r.debts_folded
  FROM allot.transitioner_run r
 ORDER BY r.run DESC;

COMMENT ON VIEW allot.status_transitioner IS
    'The last 100 runs of run_transitioner that committed, newest first. Cost: at most 100 rows';
COMMENT ON COLUMN allot.status_transitioner.run IS 'Run number';
COMMENT ON COLUMN allot.status_transitioner.started_at IS 'Wall-clock time the run started';
COMMENT ON COLUMN allot.status_transitioner.finished_at IS 'Wall-clock time it finished';
COMMENT ON COLUMN allot.status_transitioner.duration_ms IS 'How long it took, in milliseconds';
COMMENT ON COLUMN allot.status_transitioner.now_given IS 'The now it was given';
COMMENT ON COLUMN allot.status_transitioner.fairness IS 'allot.fairness during the run';
COMMENT ON COLUMN allot.status_transitioner.timed_out IS 'Jobs past their deadline sent back to unsent';
COMMENT ON COLUMN allot.status_transitioner.expired_assignments IS 'Assignments that stopped counting';
COMMENT ON COLUMN allot.status_transitioner.reports_read IS 'Successful reports read for FLOPS estimates';
COMMENT ON COLUMN allot.status_transitioner.flops_samples IS 'FLOPS-per-app-unit values collected';
COMMENT ON COLUMN allot.status_transitioner.flops_estimates IS 'Percentiles taken';
COMMENT ON COLUMN allot.status_transitioner.credited IS 'Jobs granted credit';
COMMENT ON COLUMN allot.status_transitioner.debts_folded IS 'Debt rows folded';

/* The farm in one row. */
CREATE VIEW allot.status_farm AS
SELECT s.fairness, s.assignment_ttl, s.rec_half_life, s.balance_engine_throughputs,
       (SELECT count(*) FROM allot.host) AS hosts,
       (SELECT count(*) FROM allot.workload WHERE state = 'active') AS active_workloads,
       (SELECT coalesce(sum(hosts), 0) FROM allot.workload_usage) AS assigned_hosts,
       (SELECT coalesce(sum(threads + focus_threads), 0) FROM allot.workload_usage) AS threads_in_use,
       j.peak_flops_in_use, j.jobs_unsent, j.jobs_in_progress, j.jobs_done, j.jobs_error,
       (SELECT max(finished_at) FROM allot.transitioner_run) AS transitioner_last_run
  FROM allot.status_settings s,
       LATERAL (SELECT coalesce(sum(mflops), 0) * 1e6::float8 AS peak_flops_in_use,
                       coalesce(sum(unsent), 0) AS jobs_unsent,
                       coalesce(sum(in_progress), 0) AS jobs_in_progress,
                       coalesce(sum(done), 0) AS jobs_done,
                       coalesce(sum(error), 0) AS jobs_error
                  FROM allot.job_usage) j;

COMMENT ON VIEW allot.status_farm IS
    'The whole farm in one row: settings, hosts, what is in use, jobs, the last transitioner run. '
    'Cost: counting allot.host (an index-only scan, O(hosts)), the rows of workload, workload_usage and job_usage';
COMMENT ON COLUMN allot.status_farm.fairness IS 'allot.fairness';
COMMENT ON COLUMN allot.status_farm.assignment_ttl IS 'allot.assignment_ttl';
COMMENT ON COLUMN allot.status_farm.rec_half_life IS 'allot.rec_half_life';
COMMENT ON COLUMN allot.status_farm.balance_engine_throughputs IS 'allot.balance_engine_throughputs';
COMMENT ON COLUMN allot.status_farm.hosts IS 'Hosts (rows of allot.host)';
COMMENT ON COLUMN allot.status_farm.active_workloads IS 'Workloads in state active';
COMMENT ON COLUMN allot.status_farm.assigned_hosts IS 'Hosts whose assignment counts';
COMMENT ON COLUMN allot.status_farm.threads_in_use IS 'Their threads';
COMMENT ON COLUMN allot.status_farm.peak_flops_in_use IS 'Peak FLOPS of all jobs in progress';
COMMENT ON COLUMN allot.status_farm.jobs_unsent IS 'Jobs waiting for a host';
COMMENT ON COLUMN allot.status_farm.jobs_in_progress IS 'Jobs in progress';
COMMENT ON COLUMN allot.status_farm.jobs_done IS 'Jobs done';
COMMENT ON COLUMN allot.status_farm.jobs_error IS 'Jobs that ended in error';
COMMENT ON COLUMN allot.status_farm.transitioner_last_run IS 'When the last recorded transitioner run finished';

GRANT USAGE ON SCHEMA allot TO allot_monitor;
GRANT SELECT ON allot.status_settings, allot.status_farm, allot.status_workload,
                allot.status_host, allot.status_app, allot.status_transitioner
    TO allot_monitor, allot_admin;
-- Operators keep every table; the job trigger, which runs as its owner,
-- writes host_credit; run_transitioner writes the ring of runs.
GRANT SELECT, INSERT, UPDATE, DELETE ON allot.host_credit, allot.transitioner_run TO allot_admin;
GRANT USAGE, SELECT ON SEQUENCE allot.transitioner_run_seq TO allot_admin;


/* ---------------------------------------------------------------------------
 * Catalog comments.
 * ------------------------------------------------------------------------- */
