-- Hosts lie: no report, and no one host, may move an app's estimates or
-- credit by more than a bounded amount, and an app whose estimates exceed
-- every deadline is still probed so that it can recover.  Everything goes
-- through request_work, report_job, validate_job, estimate_job and
-- run_transitioner, in virtual time from 2026-01-01 00:00 UTC.  Every host
-- has 1 GFLOPS CPUs; estimates start from
-- allot.default_seconds_per_app_unit = 3600 s, and a job predicts 1 app unit.
--
-- The rules (src/app_unit_stats.c, src/transitioner_learn.c): the app's
-- statistics learn from validated successes only, each host one voice, a
-- report's ratio of actual to predicted app units counted up to the bound
-- (mean + 4 sd) found from twice the median ratio upward; the job keeps the
-- claim, and its raw FLOPS at most its peak.
SELECT reset_farm();
SET allot.default_seconds_per_app_unit = 3600;
SET allot.flops_sample_size = 21;

-- Apps 1 to 4, each with one CPU version (11, 21, 31, 41) and one job
-- workload of the same id with 40 jobs.  Workloads 1 to 3 have a 3-day delay
-- bound (259,200 s); workload 4 has 30 minutes, shorter than any estimate.
INSERT INTO allot.app (id, name) VALUES (1, 'new'), (2, 'lied-to'), (3, 'honest'), (4, 'slow');
INSERT INTO allot.app_version (id, app_id, resource, ncpus)
SELECT 10 * g + 1, g, 'cpu', 1 FROM generate_series(1, 4) g;
INSERT INTO allot.workload (id, engine, app_id, delay_bound)
SELECT g, 'E' || g, g, CASE WHEN g = 4 THEN interval '30 minutes' ELSE interval '3 days' END
  FROM generate_series(1, 4) g;
INSERT INTO allot.job (workload_id) SELECT w FROM generate_series(1, 4) w, generate_series(1, 40);
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES
    (1, 'Linux', 1, 1e9), (2, 'Linux', 1, 1e9), (3, 'Linux', 64, 1e9), (4, 'Linux', 1, 1e9),
    (5, 'Linux', 4, 1e9), (6, 'Linux', 4, 1e9), (7, 'Linux', 4, 1e9);

-- One request of host h for n CPU instances of workload w only: how many
-- jobs, and the resource's status.
CREATE FUNCTION ask(h bigint, w bigint, n float8, at timestamptz, delay float8 DEFAULT 0)
RETURNS TABLE (jobs int, status text) LANGUAGE sql AS $$
    SELECT jsonb_array_length(r -> 'jobs'), r -> 'resources' -> 'cpu' ->> 'status'
      FROM allot.request_work(h,
               jsonb_build_object(
                   'resources', jsonb_build_object('cpu', jsonb_build_object(
                       'req_instances', n, 'estimated_delay', delay)),
                   'exclude', (SELECT jsonb_agg(id) FROM allot.workload WHERE id <> w)),
               at, 1) r
$$;
-- The estimate for host h of workload w's next unsent job.
CREATE FUNCTION est(h bigint, w bigint) RETURNS TABLE (est_secs float8, bound_secs float8)
LANGUAGE sql AS $$
    SELECT round(e.est_secs::numeric, 1)::float8, round(e.bound_secs::numeric, 1)::float8
      FROM allot.estimate_job(h, (SELECT min(id) FROM allot.job
                                   WHERE workload_id = w AND state = 'unsent')) e
$$;

-- 1. The first report of a new app claims 100 app units for an hour's run
--    (predicted 1) and 1e20 FLOPS.  The job keeps the claim and its FLOPS
--    as the job's peak, 1e9.  The project's validator rejects its output:
--    nothing is learnt, and other hosts' estimates stay 3600 s.  (Before
--    0.6.0 every report counted at once, validated or not.)
SELECT * FROM ask(1, 1, 1, '2026-01-01 00:00');
SELECT * FROM est(2, 1);
SELECT id AS first_job FROM allot.job WHERE host_id = 1 \gset
SELECT allot.report_job(1, :first_job, 'success', 100, 3600, 1e20, '2026-01-01 01:00') ->> 'state' AS state;
SELECT j.app_units AS kept, r.app_units AS claimed,
       j.raw_flops_per_sec AS counted_flops, r.raw_flops_per_sec AS claimed_flops
  FROM allot.job j JOIN allot.job_report r ON r.job_id = j.id WHERE j.id = :first_job;
SELECT allot.validate_job(:first_job, false);
SELECT allot.run_transitioner('2026-01-01 01:01') ->> 'reports_read' AS reports_read;
SELECT n_reports, actual_au_mean, au_ratio_mean FROM allot.app WHERE id = 1;
SELECT * FROM est(2, 1);
SELECT * FROM ask(2, 1, 1, '2026-01-01 01:00');

-- 2. Host 3 sends 20 honest reports (1 app unit, an hour) and then one
--    claiming 100, all validated.  One host is one voice, here the only
--    one: the bound starts at twice the median ratio, 2; counted so, the
--    ratio's mean is 22/21 = 1.047619 and its sample variance
--    (20 (1/21)^2 + (20/21)^2) / 20 = 1/21, stdev 0.218218, so the bound
--    would be 1.047619 + 4 x 0.218218 = 1.92 < 2: it rises no further and
--    the claim counts as 2.  The estimate's factor is 1.047619 +
--    2 x 0.218218 = 1.484055: 3600 -> 5342.6 s (counted as claimed it
--    would be 48.9x); the bound's 1.920491: 6913.8 s.  App 3 gets 21
--    honest reports.
SELECT * FROM ask(3, 2, 21, '2026-01-01 00:00');
SELECT * FROM ask(3, 3, 21, '2026-01-01 00:00');
SELECT count(*) FILTER (WHERE allot.report_job(3, id, 'success', 1, 3600, NULL, '2026-01-01 01:00')
                                 ->> 'state' = 'done' AND allot.validate_job(id, true)) AS honest_reports
  FROM (SELECT id FROM allot.job WHERE host_id = 3 AND workload_id = 2 ORDER BY id LIMIT 20) j;
SELECT allot.run_transitioner('2026-01-01 01:01') ->> 'reports_read' AS reports_read;
SELECT * FROM est(4, 2);
SELECT max(id) AS lie FROM allot.job WHERE host_id = 3 AND workload_id = 2 \gset
SELECT allot.report_job(3, :lie, 'success', 100, 3600, NULL, '2026-01-01 01:00') ->> 'state' AS state;
SELECT allot.validate_job(:lie, true);
SELECT allot.run_transitioner('2026-01-01 01:02') ->> 'reports_read' AS reports_read;
SELECT n_reports, round(actual_au_mean::numeric, 6) AS actual_au_mean,
       round(au_ratio_mean::numeric, 6) AS au_ratio_mean, round(au_ratio_bound::numeric, 6) AS bound
  FROM allot.app WHERE id = 2;
SELECT * FROM est(4, 2);
SELECT count(*) FILTER (WHERE allot.report_job(3, id, 'success', 1, 3600, NULL, '2026-01-01 01:00')
                                 ->> 'state' = 'done' AND allot.validate_job(id, true)) AS honest_reports
  FROM (SELECT id FROM allot.job WHERE host_id = 3 AND workload_id = 3) j;

-- 3. Credit.  With flops_sample_size 21 the transitioner makes each app's
--    FLOPS per app unit from its 21 reports: the 5th percentile is the 2nd
--    smallest of elapsed x raw FLOPS / app units (the first value past 5%
--    of the voices: one host, each report 1/21), 3.6e12 for both (the
--    lie's 3600 x 1e9 / 2, its app units counted at the bound, 1.8e12, is
--    the smallest).  A validated job
--    earns actual_au_mean x est_flops_per_au / 4.32e11: 8.3333 for the
--    honest app, 22/21 of it, 8.7302, for the lied-to one (counted as
--    claimed: 120/21 of it, 47.6190).
SELECT allot.run_transitioner('2026-01-01 02:00') ->> 'flops_estimates' AS flops_estimates;
SELECT id, est_flops_per_au FROM allot.app WHERE id IN (2, 3) ORDER BY id;
SELECT allot.run_transitioner('2026-01-01 02:01') ->> 'credited' AS credited;
SELECT workload_id, round(min(credit)::numeric, 4) AS credit, count(*) AS jobs FROM allot.job
 WHERE credit IS NOT NULL GROUP BY workload_id ORDER BY workload_id;
SELECT round((max(credit) FILTER (WHERE workload_id = 2) /
              max(credit) FILTER (WHERE workload_id = 3))::numeric, 4) AS lied_to_over_honest
  FROM allot.job WHERE credit IS NOT NULL;

-- 4. A probe.  Workload 4's jobs are estimated at 3600 s on every host,
--    over its 30-minute delay bound.  An idle resource still gets one job
--    when the workload has none in progress: host 7, whose request says its
--    CPUs are busy for 600 s, gets none; host 5, idle, gets one; while it
--    runs, neither host 6 nor host 5 gets another.  Host 5 reports it (an
--    honest minute), and it is validated.  With flops_sample_size 1 the
--    transitioner makes the app's figure 60 s x 1e9 / 1 = 6e10 FLOPs per
--    app unit, so every host's estimate is 60 s, and dispatch is normal
--    again: 4 jobs each.
SET allot.flops_sample_size = 1;
SELECT * FROM est(6, 4);
SELECT * FROM ask(7, 4, 4, '2026-01-01 03:00', 600);
SELECT * FROM ask(5, 4, 4, '2026-01-01 03:00');
SELECT * FROM ask(6, 4, 4, '2026-01-01 03:01');
SELECT * FROM ask(5, 4, 4, '2026-01-01 03:01');
SELECT id AS probe FROM allot.job WHERE workload_id = 4 AND state = 'in_progress' \gset
SELECT allot.report_job(5, :probe, 'success', 1, 60, NULL, '2026-01-01 03:02') ->> 'state' AS state;
SELECT allot.validate_job(:probe, true);
SELECT allot.run_transitioner('2026-01-01 03:03') ->> 'flops_estimates' AS flops_estimates;
SELECT est_flops_per_au FROM allot.app WHERE id = 4;
SELECT * FROM est(6, 4);
SELECT * FROM ask(6, 4, 4, '2026-01-01 03:04');
SELECT * FROM ask(5, 4, 4, '2026-01-01 03:04');
SELECT * FROM allot.check_invariants();

RESET allot.flops_sample_size;
RESET allot.default_seconds_per_app_unit;
