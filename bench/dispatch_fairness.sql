-- bench/dispatch.sh: fairness among the top-priority job workloads, from
-- what is in progress now.  Usage is what the selection balances: the peak
-- FLOPS of the jobs in progress (allot.job_usage.mflops, summed over the
-- shards: a workload has a row per shard of the backends that wrote it),
-- over all resources.
--
-- A GPU job's peak FLOPS (1e12..1e13) dwarf a CPU job's (1e9..5e9), so a
-- workload whose app has a GPU version is, by that measure, far ahead of one
-- that has only CPU jobs: CPU picks go to the CPU-only workloads and GPU
-- picks to the GPU-capable ones (seed 003 example 1: GPU 75/25, CPU 100% to
-- the other).  Shares are therefore shown over all top workloads (what the
-- issue asks) and within each group (where throughput should set the share).
\pset footer off
\pset null -
WITH top AS (
    SELECT max(priority) AS p FROM allot.workload WHERE app_id IS NOT NULL AND state = 'active'),
w AS (
    SELECT w.id, w.app_id, w.throughput,
           EXISTS (SELECT FROM allot.app_version v
                    WHERE v.app_id = w.app_id AND v.resource <> 'cpu') AS gpu_app,
           coalesce(u.mflops, 0) AS mflops, coalesce(u.in_progress, 0) AS in_progress,
           coalesce(u.unsent, 0) AS unsent
      FROM allot.workload w CROSS JOIN top
      LEFT JOIN (SELECT workload_id, sum(mflops) AS mflops, sum(in_progress) AS in_progress,
                        sum(unsent) AS unsent
                   FROM allot.job_usage GROUP BY workload_id) u ON u.workload_id = w.id
     WHERE w.app_id IS NOT NULL AND w.state = 'active' AND w.priority = top.p),
jobs AS (
    SELECT j.workload_id, count(*) FILTER (WHERE v.resource = 'cpu') AS cpu_jobs,
           count(*) FILTER (WHERE v.resource <> 'cpu') AS gpu_jobs
      FROM allot.job j JOIN allot.app_version v ON v.id = j.app_version_id
     WHERE j.state = 'in_progress' GROUP BY j.workload_id),
s AS (
    SELECT w.*, coalesce(jobs.cpu_jobs, 0) AS cpu_jobs, coalesce(jobs.gpu_jobs, 0) AS gpu_jobs,
           w.throughput / sum(w.throughput) OVER () AS tp_share,
           w.mflops::float8 / nullif(sum(w.mflops) OVER (), 0) AS use_share,
           w.throughput / sum(w.throughput) OVER (PARTITION BY gpu_app) AS tp_share_g,
           w.mflops::float8 / nullif(sum(w.mflops) OVER (PARTITION BY gpu_app), 0) AS use_share_g
      FROM w LEFT JOIN jobs ON jobs.workload_id = w.id)
SELECT id AS workload, app_id AS app, CASE WHEN gpu_app THEN 'cpu+gpu' ELSE 'cpu' END AS versions,
       throughput, cpu_jobs AS "cpu jobs", gpu_jobs AS "gpu jobs",
       round(mflops / 1e6, 1) AS "peak TFLOPS",
       round(100 * tp_share::numeric, 2) AS "tp share %",
       round(100 * use_share::numeric, 2) AS "use share %",
       round(100 * tp_share_g::numeric, 2) AS "tp share in group %",
       round(100 * use_share_g::numeric, 2) AS "use share in group %",
       round((use_share_g / tp_share_g)::numeric, 3) AS "use/tp in group"
  FROM s ORDER BY gpu_app DESC, id;

-- One line per group: how far the use shares are from the throughput shares.
WITH top AS (
    SELECT max(priority) AS p FROM allot.workload WHERE app_id IS NOT NULL AND state = 'active'),
w AS (
    SELECT w.throughput,
           EXISTS (SELECT FROM allot.app_version v
                    WHERE v.app_id = w.app_id AND v.resource <> 'cpu') AS gpu_app,
           coalesce(u.mflops, 0)::float8 AS mflops
      FROM allot.workload w CROSS JOIN top
      LEFT JOIN (SELECT workload_id, sum(mflops) AS mflops, sum(in_progress) AS in_progress,
                        sum(unsent) AS unsent
                   FROM allot.job_usage GROUP BY workload_id) u ON u.workload_id = w.id
     WHERE w.app_id IS NOT NULL AND w.state = 'active' AND w.priority = top.p),
s AS (
    SELECT gpu_app, (mflops / nullif(sum(mflops) OVER (PARTITION BY gpu_app), 0))
                    / (throughput / sum(throughput) OVER (PARTITION BY gpu_app)) AS r,
           mflops
      FROM w)
SELECT CASE WHEN gpu_app THEN 'cpu+gpu' ELSE 'cpu' END AS "group", count(*) AS workloads,
       round(sum(mflops)::numeric / 1e6, 1) AS "peak TFLOPS",
       round(min(r)::numeric, 3) AS "min use/tp", round(max(r)::numeric, 3) AS "max use/tp",
       round(avg(abs(r - 1))::numeric, 3) AS "mean |use/tp - 1|"
  FROM s GROUP BY gpu_app ORDER BY gpu_app DESC;

SELECT count(*) AS "in progress outside the top priority"
  FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id
 WHERE j.state = 'in_progress'
   AND w.priority < (SELECT max(priority) FROM allot.workload WHERE app_id IS NOT NULL);
