-- bench/months.sh: one simulated day of a farm's finished jobs, written
-- directly, as request_work, report_job, validate_job and the transitioner
-- leave them: running them all through allot at a million jobs a day would
-- take the months it simulates.  psql variables day (1, 2, ...), per_day
-- (jobs finished that day), day0 (the first day's midnight, a timestamptz)
-- and nhosts.  The draws are seeded by the day, so a rerun writes the same
-- history.
--
-- Each job finished at a random instant of its day, on a random host, after
-- 10 minutes to 2 hours of running, with a deadline 3 days after it was
-- sent:
--   97% done: a success of 0.5 to 1.5 app units, validated, learnt from and
--       credited (the app's credit per job); one in ten of these had an
--       earlier sending that timed out on another host (a timed_out report
--       at its deadline, sending 2);
--   3% error: four sendings reported as errors by four hosts, after which
--       the job gave up (max_error_results 3).
-- Every sending that ended has its row of allot.job_report, with the reply
-- report_job gives.  One statement for the jobs and their reports, so the
-- statement trigger on allot.job counts the day's jobs and credit once.
\set ON_ERROR_STOP on

SELECT setseed(:day / 10000.0);

WITH day AS (SELECT :'day0'::timestamptz + (:day - 1) * interval '1 day' AS start),
drawn AS (
    SELECT n, 1 + (n - 1) % 20 AS workload, 1 + floor(random() * :nhosts)::bigint AS host,
           random() AS outcome_draw, random() AS retry_draw, random() AS gpu_draw,
           day.start + random() * interval '1 day' AS returned,
           600 + 6600 * random() AS elapsed, 0.5 + random() AS units
      FROM day, generate_series(1, :per_day) AS n),
job AS (
    SELECT d.*, 1 + (d.workload - 1) / 5 AS app,
           d.outcome_draw < 0.03 AS failed,
           d.gpu_draw < 0.25 AND (1 + (d.workload - 1) / 5) % 2 = 1 AS gpu,
           CASE WHEN d.outcome_draw < 0.03 THEN 4 WHEN d.retry_draw < 0.1 THEN 2 ELSE 1 END AS sendings,
           d.returned - make_interval(secs => d.elapsed) AS sent
      FROM drawn d),
inserted AS (
    INSERT INTO allot.job (workload_id, state, host_id, app_version_id, predicted_app_units,
                           sent_at, deadline, est_secs, returned_at, outcome, app_units,
                           elapsed_secs, raw_flops_per_sec, peak_flops_per_sec, validated,
                           credit, sampled, sending, tries, failures)
    SELECT j.workload, CASE WHEN j.failed THEN 'error' ELSE 'done' END, j.host,
           CASE WHEN j.gpu THEN 10 + j.app ELSE j.app END, 1,
           j.sent, j.sent + interval '3 days', 3600, j.returned,
           CASE WHEN j.failed THEN 'error' ELSE 'success' END,
           CASE WHEN j.failed THEN NULL ELSE j.units END, j.elapsed,
           CASE WHEN j.failed THEN NULL ELSE (CASE WHEN j.gpu THEN 5e12 ELSE 3e9 END) * (0.3 + 0.6 * j.retry_draw) END,
           CASE WHEN j.gpu THEN 5e12 ELSE 3e9 END,
           CASE WHEN j.failed THEN NULL ELSE true END,
           CASE WHEN j.failed THEN NULL ELSE 1e13 * j.app / 4.32e11 END,
           NOT j.failed, j.sendings, j.sendings,
           CASE WHEN j.failed THEN 4 ELSE j.sendings - 1 END
      FROM job j
     ORDER BY j.n
    RETURNING id, host_id, sent_at, returned_at, state, sending, app_units, elapsed_secs,
              raw_flops_per_sec)
INSERT INTO allot.job_report (job_id, host_id, sent_at, outcome, app_units, elapsed_secs,
                              raw_flops_per_sec, reported_at, reply, sending)
SELECT i.id,
       -- the sending that finished it on the job's host, earlier ones on others
       CASE WHEN s = i.sending THEN i.host_id ELSE 1 + (i.host_id + s - 1) % :nhosts END,
       i.sent_at - (i.sending - s) * interval '3 days',
       CASE WHEN i.state = 'error' THEN 'error' WHEN s = i.sending THEN 'success' ELSE 'timed_out' END,
       CASE WHEN i.state = 'error' OR s = i.sending THEN i.app_units END,
       CASE WHEN i.state = 'error' OR s = i.sending THEN i.elapsed_secs END,
       CASE WHEN s = i.sending THEN i.raw_flops_per_sec END,
       CASE WHEN s = i.sending THEN i.returned_at
            ELSE i.sent_at - (i.sending - s - 1) * interval '3 days' END,
       jsonb_build_object('quota', 100, 'job_id', i.id,
                          'outcome', CASE WHEN i.state = 'error' THEN 'error'
                                          WHEN s = i.sending THEN 'success' ELSE 'timed_out' END,
                          'state', CASE WHEN s = i.sending THEN i.state ELSE 'unsent' END),
       s
  FROM inserted i, generate_series(1, i.sending) AS s;
