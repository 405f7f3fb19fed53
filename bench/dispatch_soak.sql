-- bench/dispatch.sh soak: one host's cycle, in two transactions.
--
-- pgbench -D lap=L -D k=0 -D clients=C: client c (0-based :client_id) owns the
-- hosts 1 + c + C*k for k = 0 .. L-1 and visits them round-robin (:k is a
-- client variable and persists from one transaction to the next).  The
-- script first runs one untimed lap (pgbench -t L), so in the timed run every
-- visit finds the jobs the host took on its previous visit: the cost of a
-- cycle does not change during the run.  No two clients share a host, so no
-- report races another for the same job.
--
-- 1. The host returns every job it holds, as a success of 1 app unit in one
--    hour.  Each report locks its app's statistics row and then its
--    workload's job_usage row; taking them in (app, workload) order, and with
--    workload ids rising with app ids (dispatch_data.sql), every transaction
--    here and in request_work locks them in one global order: no deadlocks.
-- 2. It asks for 8 CPU and 1 NVIDIA instance, and for every job it is sent,
--    one new unsent job joins the same workload (the data-modifying CTE), so
--    the pool of unsent jobs of every workload stays where it was: it never
--    runs dry, and what changes over the run is dead tuples, index entries
--    and done jobs, which is what the soak is about.  The new jobs' usage
--    rows are those request_work has just locked.
\set id 1 + :client_id + :clients * :k
\set k (:k + 1) % :lap
SELECT count(allot.report_job(:id, r.id, 'success', 1, 3600, NULL))
  FROM (SELECT j.id FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id
         WHERE j.host_id = :id AND j.state = 'in_progress'
         ORDER BY w.app_id, j.workload_id, j.id) AS r;
WITH r AS (SELECT allot.request_work(:id, '{"resources": {"cpu": {"req_instances": 8}, "nvidia": {"req_instances": 1}}}') AS reply),
     more AS (INSERT INTO allot.job (workload_id, predicted_app_units)
              SELECT (x ->> 'workload_id')::bigint, 0.5 + random()
                FROM r, jsonb_array_elements(r.reply -> 'jobs') AS x)
SELECT jsonb_array_length(reply -> 'jobs') FROM r;
