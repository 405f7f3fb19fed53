-- bench/soak.sh: one job host's visit, in two transactions or more (after
-- bench/dispatch_soak.sql, with failures and a record of what is sent).
--
-- pgbench -D lap=L -D k=0 -D clients=C (and -D single, below): client c
-- (0-based :client_id) owns the job hosts 1 + c + C*k for k = 0 .. L-1 and
-- visits them round-robin (:k is a client variable and persists between
-- transactions, whichever script they run).  No two clients share a job
-- host, so no report can race another for the same job: a report refused
-- here is a bug, not a race.
--
-- 1. The host returns every job it holds: 1% as errors, 2% aborted (back to
--    unsent for another host), the rest successes with app units within 20%
--    of the prediction and 30..90 minutes of run time, so that the app
--    statistics and the transitioner's FLOPS samples vary.  Reports go in
--    (app, workload, job) order: a success takes its app's statistics row,
--    then its workload's job_usage row, and workload ids rise with app ids
--    (dispatch_data.sql).  With -D single=0 they all go in one statement,
--    as a BOINC scheduler request reports all its results at once; with
--    -D single=1 each in its own transaction (soak_data.sql's
--    public.soak_report_each), as a web layer calling once per report.
-- 2. It asks for 8 CPU and 1 NVIDIA instance.  For every job it is sent, one
--    new unsent job joins the same workload, so the unsent pool stays where
--    it was (aborts and timeouts only add to it), and the job and its host
--    go to public.soak_sent, stamped after request_work has returned: the
--    checks account for every job's sends and reports from it.
\set id 1 + :client_id + :clients * :k
\set k (:k + 1) % :lap
\if :single
CALL public.soak_report_each(:id);
\else
SELECT count(allot.report_job(:id, r.id,
                              CASE WHEN r.x < 0.01 THEN 'error' WHEN r.x < 0.03 THEN 'aborted'
                                   ELSE 'success' END,
                              r.predicted_app_units * (0.8 + 0.4 * random()),
                              1800 + 3600 * random(), NULL))
  FROM (SELECT j.id, j.predicted_app_units, random() AS x
          FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id
         WHERE j.host_id = :id AND j.state = 'in_progress'
         ORDER BY w.app_id, j.workload_id, j.id) AS r;
\endif
WITH r AS (SELECT allot.request_work(:id, '{"resources": {"cpu": {"req_instances": 8}, "nvidia": {"req_instances": 1}}}') AS reply),
     sent AS (SELECT (x ->> 'job_id')::bigint AS job_id, (x ->> 'workload_id')::bigint AS workload_id
                FROM r, jsonb_array_elements(r.reply -> 'jobs') AS x),
     more AS (INSERT INTO allot.job (workload_id, predicted_app_units)
              SELECT workload_id, 0.5 + random() FROM sent),
     record AS (INSERT INTO public.soak_sent (job_id, host_id, at)
                SELECT job_id, :id, clock_timestamp() FROM sent)
SELECT jsonb_array_length(reply -> 'jobs') FROM r;
