-- bench/soak.sh: what must hold after the soak, one row per check:
-- name | t or f | detail.  The counts are recomputed here from the rows
-- themselves, not taken from allot's own check_invariants() alone, so that
-- a check does not trust the code it checks.  psql variables: soak_start
-- (a timestamptz just before the soak) and unsent_before (unsent jobs then).
\set ON_ERROR_STOP on

-- 1. allot's own consistency check.
SELECT 'allot.check_invariants() is empty', count(*) = 0,
       coalesce(string_agg(c, '; '), 'empty')
  FROM (SELECT c FROM allot.check_invariants() AS c LIMIT 5) AS i;

-- 2. job_usage (its shards summed) against a recount of allot.job, per workload.
WITH j AS (
    SELECT workload_id,
           count(*) FILTER (WHERE state = 'unsent') AS unsent,
           count(*) FILTER (WHERE state = 'in_progress') AS in_progress,
           coalesce(sum(round(peak_flops_per_sec / 1e6)::bigint) FILTER (WHERE state = 'in_progress'), 0) AS mflops
      FROM allot.job GROUP BY workload_id),
bad AS (
    SELECT coalesce(u.workload_id, j.workload_id) AS workload_id,
           format('workload %s: usage %s/%s/%s, jobs %s/%s/%s', coalesce(u.workload_id, j.workload_id),
                  u.unsent, u.in_progress, u.mflops, j.unsent, j.in_progress, j.mflops) AS line
      FROM (SELECT workload_id, sum(unsent) AS unsent, sum(in_progress) AS in_progress,
                   sum(mflops) AS mflops
              FROM allot.job_usage GROUP BY workload_id) u FULL JOIN j USING (workload_id)
     WHERE coalesce(u.unsent, 0) <> coalesce(j.unsent, 0)
        OR coalesce(u.in_progress, 0) <> coalesce(j.in_progress, 0)
        OR coalesce(u.mflops, 0) <> coalesce(j.mflops, 0))
SELECT 'allot.job_usage (unsent/in progress/MFLOPS) equals a recount of allot.job',
       count(*) = 0,
       CASE WHEN count(*) = 0
            THEN (SELECT format('%s workloads; %s unsent, %s in progress',
                                count(DISTINCT workload_id), sum(unsent), sum(in_progress))
                    FROM allot.job_usage)
            ELSE format('%s workloads differ: %s', count(*),
                        string_agg(line, '; ' ORDER BY workload_id)) END
  FROM bad;

-- 3. workload_usage against a recount of the counted assignments.
WITH a AS (
    SELECT workload_id, count(*) AS hosts,
           coalesce(sum(threads) FILTER (WHERE NOT focus), 0) AS threads,
           coalesce(sum(threads) FILTER (WHERE focus), 0) AS focus_threads
      FROM allot.assignment WHERE counted GROUP BY workload_id),
bad AS (
    SELECT format('workload %s: usage %s/%s/%s, assignments %s/%s/%s',
                  coalesce(u.workload_id, a.workload_id), u.hosts, u.threads, u.focus_threads,
                  a.hosts, a.threads, a.focus_threads) AS line
      FROM allot.workload_usage u FULL JOIN a USING (workload_id)
     WHERE coalesce(u.hosts, 0) <> coalesce(a.hosts, 0)
        OR coalesce(u.threads, 0) <> coalesce(a.threads, 0)
        OR coalesce(u.focus_threads, 0) <> coalesce(a.focus_threads, 0))
SELECT 'allot.workload_usage (hosts/threads/focus threads) equals a recount of counted assignments',
       count(*) = 0,
       CASE WHEN count(*) = 0
            THEN (SELECT format('%s assignments, %s counted', count(*), count(*) FILTER (WHERE counted))
                    FROM allot.assignment)
            ELSE format('%s workloads differ: %s', count(*), string_agg(line, '; ')) END
  FROM bad;

-- 4. No job held twice, none lost.  Every send is in public.soak_sent and
-- every report (the hosts', and the transitioner's timeouts) in
-- allot.job_report, so a job's sends minus its reports is 1 while it is in
-- progress and 0 otherwise, and a job in progress is on the host it was
-- last sent to.  A job handed to a second host while the first still held
-- it breaks the first rule (sends - reports = 2, or 1 for a job no longer
-- in progress); one moved to another host without a send breaks the second.
WITH s AS (
    SELECT DISTINCT ON (job_id) job_id, host_id AS last_host,
           count(*) OVER (PARTITION BY job_id) AS sends
      FROM public.soak_sent ORDER BY job_id, at DESC),
r AS (SELECT job_id, count(*) AS reports FROM allot.job_report GROUP BY job_id),
ids AS (SELECT job_id FROM s UNION SELECT job_id FROM r
        UNION SELECT id FROM allot.job WHERE state = 'in_progress'),
bad AS (
    SELECT ids.job_id,
           format('job %s: %s sends, %s reports, %s on host %s, last sent to host %s', ids.job_id,
                  coalesce(s.sends, 0), coalesce(r.reports, 0), j.state, j.host_id, s.last_host) AS line
      FROM ids LEFT JOIN s USING (job_id) LEFT JOIN r USING (job_id)
      LEFT JOIN allot.job j ON j.id = ids.job_id
     WHERE coalesce(s.sends, 0) - coalesce(r.reports, 0) <> (j.state = 'in_progress')::int
        OR (j.state = 'in_progress' AND j.host_id IS DISTINCT FROM s.last_host))
SELECT 'every job: sends = reports + (1 if in progress), and in progress on its last receiver',
       count(*) = 0,
       CASE WHEN count(*) = 0
            THEN (SELECT format('%s sends of %s distinct jobs, %s reports', count(*), count(DISTINCT job_id),
                                (SELECT count(*) FROM allot.job_report))
                    FROM public.soak_sent)
            ELSE format('%s jobs, e.g. %s', count(*),
                        (SELECT string_agg(line, '; ') FROM (SELECT line FROM bad ORDER BY job_id LIMIT 5) AS b)) END
  FROM bad;

-- 5. The unsent pool: each job sent was replaced by a new unsent one in the
-- same statement, so over the soak it changed by the jobs that came back:
-- aborted by their host or timed out.
SELECT 'unsent jobs: after - before = aborted + timed-out reports of the soak',
       u.n - :unsent_before = r.back,
       format('%s - %s = %s; %s aborted + %s timed out', u.n, :unsent_before, u.n - :unsent_before,
              r.aborted, r.timed_out)
  FROM (SELECT count(*) AS n FROM allot.job WHERE state = 'unsent') AS u,
       (SELECT count(*) FILTER (WHERE outcome IN ('aborted', 'timed_out')) AS back,
               count(*) FILTER (WHERE outcome = 'aborted') AS aborted,
               count(*) FILTER (WHERE outcome = 'timed_out') AS timed_out
          FROM allot.job_report WHERE reported_at >= :'soak_start') AS r;

-- 6. Debt mode was in effect and each fold left the largest debt of every
-- (resource, kind of workload) at 0 (docs/concepts.md "Fairness over time": a new
-- workload starts there, debt-free).
SELECT 'workload_credit: rows written, and the largest debt per (resource, kind) is 0',
       coalesce(bool_and(top = 0), false),
       coalesce(string_agg(format('%s %s: %s rows, debts %s .. %s', resource,
                                  CASE WHEN jobs THEN 'jobs' ELSE 'assignments' END,
                                  n, round(low::numeric, 0), top), '; ' ORDER BY resource, jobs),
                'no rows: is allot.fairness = debt in effect?')
  FROM (SELECT c.resource, w.app_id IS NOT NULL AS jobs, count(*) AS n,
               min(c.debt) AS low, max(c.debt) AS top
          FROM allot.workload_credit c JOIN allot.workload w ON w.id = c.workload_id
         GROUP BY 1, 2) AS t;
