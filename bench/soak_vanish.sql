-- bench/soak.sh: a job host that takes work and vanishes, so that the
-- transitioner's first step, timing out late jobs, runs under load too.
--
-- Job deadlines are days away (delay_bound 3 days), so the request is made
-- four days in the past (request_work's now): its jobs are late at once, and
-- the next transitioner round sends them back to unsent, writes a
-- 'timed_out' report and lowers the host's quota.  These hosts
-- (vanish_first .. vanish_last) are nobody's in soak_job.sql and never
-- report, so no report can race a timeout: a refused late report would be
-- the client's fault, not allot's.  Two CPU instances per request keep the
-- timeouts a few per cent of the jobs sent.  The pool is topped up, and
-- what is sent recorded, as in soak_job.sql.
\set id random(:vanish_first, :vanish_last)
WITH r AS (SELECT allot.request_work(:id, '{"resources": {"cpu": {"req_instances": 2}}}',
                                     now() - interval '4 days') AS reply),
     sent AS (SELECT (x ->> 'job_id')::bigint AS job_id, (x ->> 'workload_id')::bigint AS workload_id
                FROM r, jsonb_array_elements(r.reply -> 'jobs') AS x),
     more AS (INSERT INTO allot.job (workload_id, predicted_app_units)
              SELECT workload_id, 0.5 + random() FROM sent),
     record AS (INSERT INTO public.soak_sent (job_id, host_id, at)
                SELECT job_id, :id, clock_timestamp() FROM sent)
SELECT jsonb_array_length(reply -> 'jobs') FROM r;
