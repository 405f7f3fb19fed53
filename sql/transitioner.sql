-- Seed 004: the percentile, estimates, the transitioner's FLOPS per app
-- unit, credit, timeouts and validation.  Numbers are worked by hand in the
-- comments.
SELECT reset_farm();

-- 1. The O(N) selection equals percentile_disc(0.05) over the same values:
--    300 arrays of 4 to 600 values, from a fixed seed, with duplicates (ten
--    distinct mantissas) and values over 21 orders of magnitude.
SELECT setseed(0.5);
CREATE TEMP TABLE arrays AS
SELECT g, array_agg(floor(random() * 10)::float8 * 10 ^ (floor(random() * 21) - 10)) AS a
  FROM generate_series(1, 300) g, generate_series(1, 1 + (g * 7919) % 600) k
 GROUP BY g;
SELECT count(*) AS arrays, min(cardinality(a)) AS shortest, max(cardinality(a)) AS longest,
       count(*) FILTER (WHERE allot.percentile_disc(a, 0.05) IS DISTINCT FROM
                              (SELECT percentile_disc(0.05) WITHIN GROUP (ORDER BY x)
                                 FROM unnest(a) x)) AS mismatches
  FROM arrays;
-- Edges: one value; all equal; sorted and reversed; fractions 0 and 1.
SELECT allot.percentile_disc('{7}', 0.05) AS one,
       allot.percentile_disc('{2,2,2,2}', 0.05) AS equal,
       allot.percentile_disc(ARRAY(SELECT g::float8 FROM generate_series(1, 100) g), 0.05) AS sorted,
       allot.percentile_disc(ARRAY(SELECT g::float8 FROM generate_series(100, 1, -1) g), 0.05) AS reversed,
       allot.percentile_disc('{3,1,2}', 0) AS p0, allot.percentile_disc('{3,1,2}', 1) AS p1;

-- A farm: app 1 has a CPU and a GPU version, app 2 only a GPU version, app 3
-- only a CPU version.  Hosts have 1 GFLOPS CPUs and 10 GFLOPS GPUs.
INSERT INTO allot.app (id, name) VALUES (1, 'both'), (2, 'gpu-only'), (3, 'cpu-only');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (11, 1, 'cpu', 1, 0), (12, 1, 'nvidia', 0, 1), (22, 2, 'nvidia', 0, 1), (31, 3, 'cpu', 1, 0);
INSERT INTO allot.workload (id, engine, app_id, delay_bound) VALUES
    (1, 'E', 1, '1 day'), (2, 'E', 2, '1 day'), (3, 'E', 3, '1 hour');
INSERT INTO allot.host (id, os, threads, cpu_flops)
SELECT g, 'Linux', 4, 1e9 FROM generate_series(1, 3) g;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT g, 'nvidia', 1, 1e10 FROM generate_series(1, 3) g;

-- A job of version v run on host h, reported successfully and validated:
-- the transitioner learns from validated successes only.
CREATE FUNCTION done_job(v bigint, h bigint, app_units float8, elapsed float8,
                         raw_flops float8, predicted float8 DEFAULT 1,
                         reference boolean DEFAULT false) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    j bigint;
BEGIN
    INSERT INTO allot.job (workload_id, state, host_id, app_version_id, sent_at,
                           predicted_app_units, reference)
    SELECT w.id, 'in_progress', h, v, '2026-01-01', predicted, reference
      FROM allot.app_version av JOIN allot.workload w ON w.app_id = av.app_id
     WHERE av.id = v
    RETURNING id INTO j;
    PERFORM allot.report_job(h, j, 'success', app_units, elapsed, raw_flops, '2026-01-01 01:00');
    PERFORM allot.validate_job(j, true);
    RETURN j;
END $$;

-- 2. The estimate and bound.  App 3 gets four validated reports from host 1
--    with predicted 1 and actual 1, 1, 2, 2 app units: actual mean 1.5,
--    predicted mean 1, and actual/predicted has mean 1.5 and sample variance
--    4 * 0.5^2 / 3 = 1/3, stdev 0.57735 (one host: its reports are the whole
--    window, each a quarter of its voice).  The factor is
--    1.5 + 2 * 0.57735 = 2.65470 for the estimate, 1.5 + 4 * 0.57735 =
--    3.80940 for the bound.  Nothing is learnt until the transitioner runs.
SELECT done_job(31, 1, 1, 100, 1e9), done_job(31, 1, 1, 100, 1e9),
       done_job(31, 1, 2, 200, 1e9), done_job(31, 1, 2, 200, 1e9);
SELECT n_reports FROM allot.app WHERE id = 3;
-- 3. raw_flops_per_au = elapsed * raw_flops_per_sec / app_units; with
--    flops_sample_size 4 and percentile 0.05, the figure is the smallest
--    of four (the first value past 0.05 of the voices).  The four reports
--    gave 100 * 1e9 / 1 = 1e11 and 200 * 1e9 / 2 = 1e11: figure 1e11, which
--    initialises the estimate.
SET allot.flops_sample_size = 4;
SELECT allot.run_transitioner('2026-01-01 02:00') - 'expired_assignments';
SELECT n_reports, actual_au_mean, predicted_au_mean, au_ratio_mean,
       round(au_ratio_m2::numeric, 6) AS au_ratio_m2
  FROM allot.app WHERE id = 3;
SELECT cpu_flops_per_au, gpu_flops_per_au, est_flops_per_au, cpu_samples FROM allot.app WHERE id = 3;
-- Host 1's seconds per app unit: every report says 100 s per unit, so the
-- average is 100 (as fast as the app's 1e11 FLOPs per unit allow at 1
-- GFLOPS, no faster).  A job predicted at 2 units: 100 * 2 * 2.65470 =
-- 530.94 s, bound 100 * 2 * 3.80940 = 761.88 s.
INSERT INTO allot.job (id, workload_id, predicted_app_units) VALUES (1000, 3, 2);
SELECT app_version_id, round(est_secs::numeric, 2) AS est, round(bound_secs::numeric, 2) AS bound,
       peak_flops_per_sec FROM allot.estimate_job(1, 1000);
-- Host 2 has no history: the app's 1e11 FLOPs per unit over its 1 GFLOPS,
-- 100 s per unit.  Without an app figure, the default 3600 s per unit:
-- 3600 * 2 * 2.65470 = 19113.84 s; with 2e11, 200 * 2 * 2.65470 = 1061.88 s.
SELECT round(est_secs::numeric, 2) AS est FROM allot.estimate_job(2, 1000);
UPDATE allot.app SET est_flops_per_au = NULL WHERE id = 3;
SELECT round(est_secs::numeric, 2) AS est FROM allot.estimate_job(2, 1000);
UPDATE allot.app SET est_flops_per_au = 2e11 WHERE id = 3;
SELECT round(est_secs::numeric, 2) AS est FROM allot.estimate_job(2, 1000);
UPDATE allot.app SET est_flops_per_au = 1e11 WHERE id = 3;

-- Four more, at 3e11, 2e11, 4e11 and 5e11: figure 2e11, and the average
-- moves a tenth of the way: 1e11 + 0.1 * (2e11 - 1e11) = 1.1e11.
SELECT done_job(31, 2, 1, 300, 1e9), done_job(31, 2, 1, 200, 1e9),
       done_job(31, 2, 1, 400, 1e9), done_job(31, 2, 1, 500, 1e9);
SELECT allot.run_transitioner('2026-01-01 02:00') ->> 'flops_estimates' AS estimates;
SELECT cpu_flops_per_au, est_flops_per_au FROM allot.app WHERE id = 3;
-- Fewer than four new values make no figure: they wait in the array.
SELECT done_job(31, 2, 1, 50, 1e9);
SELECT allot.run_transitioner('2026-01-01 02:00') ->> 'flops_estimates' AS estimates;
SELECT cpu_samples, est_flops_per_au FROM allot.app WHERE id = 3;
-- Nine more in one call, at 1e11 .. 9e11: with the one waiting, ten values,
-- oldest first.  Every full four makes a figure: [5e10, 1e11, 2e11, 3e11]
-- gives 5e10, [4e11 .. 7e11] gives 4e11, and 8e11, 9e11 wait.  The
-- estimate takes both in turn: 1.1e11 + 0.1 * (5e10 - 1.1e11) = 1.04e11,
-- then 1.04e11 + 0.1 * (4e11 - 1.04e11) = 1.336e11.
SELECT count(done_job(31, 2, 1, 100 * g, 1e9)) AS reports FROM generate_series(1, 9) g;
SELECT allot.run_transitioner('2026-01-01 02:00') ->> 'flops_estimates' AS estimates;
SELECT cpu_samples, cpu_flops_per_au, est_flops_per_au FROM allot.app WHERE id = 3;

-- 4. An app with both kinds takes the lesser figure (note 1).  App 1: CPU
--    jobs at 4e10 per unit, GPU jobs at 9e10 (GPUs are less efficient):
--    estimate 4e10.
SELECT done_job(11, 1, 1, 40, 1e9) FROM generate_series(1, 4);
SELECT done_job(12, 1, 1, 9, 1e10) FROM generate_series(1, 4);
SELECT allot.run_transitioner('2026-01-01 02:00') ->> 'flops_estimates' AS estimates;
SELECT cpu_flops_per_au, gpu_flops_per_au, est_flops_per_au FROM allot.app WHERE id = 1;

-- 5. A GPU-only app is scaled by the GPU efficiency of apps with both
--    (note 2): app 1's 4e10 / 9e10 = 4/9.  App 2's GPU figure 1.8e11
--    becomes 1.8e11 * 4/9 = 8e10.
SELECT done_job(22, 3, 1, 18, 1e10) FROM generate_series(1, 4);
SELECT allot.run_transitioner('2026-01-01 02:00') ->> 'flops_estimates' AS estimates;
SELECT gpu_flops_per_au, round(est_flops_per_au::numeric) AS est_flops_per_au FROM allot.app WHERE id = 2;
-- With no app having both kinds, the configured factor: 0.25 * 1.8e11 = 4.5e10.
UPDATE allot.app SET gpu_flops_per_au = NULL WHERE id = 1;
UPDATE allot.app SET est_flops_per_au = NULL WHERE id = 2;
SET allot.gpu_efficiency = 0.25;
SELECT done_job(22, 3, 1, 18, 1e10) FROM generate_series(1, 4);
SELECT allot.run_transitioner('2026-01-01 02:00') ->> 'flops_estimates' AS estimates;
SELECT gpu_flops_per_au, est_flops_per_au FROM allot.app WHERE id = 2;
RESET allot.gpu_efficiency;

-- 6. Reference jobs (note 3): an app that declares them learns from those
--    only.  Three ordinary jobs that "end at once" (1e8 per unit) and four
--    reference jobs at 6e11: figure 6e11.  Had the short jobs counted, the
--    5th percentile would have been 1e8.
UPDATE allot.app SET reference_jobs = true, est_flops_per_au = NULL, cpu_samples = '{}' WHERE id = 3;
SELECT done_job(31, 1, 1, 0.1, 1e9) FROM generate_series(1, 3);
SELECT done_job(31, 1, 1, 600, 1e9, reference => true) FROM generate_series(1, 4);
SELECT allot.run_transitioner('2026-01-01 02:00') ->> 'flops_samples' AS samples_used;
SELECT cpu_flops_per_au, est_flops_per_au FROM allot.app WHERE id = 3;

-- 7. Credit: app.actual_au_mean * est_flops_per_au in cobblestones of
--    1e9 * 86400 / 200 = 4.32e11 FLOPs, the same for every job of the app.
--    App 1 (estimate 4e10) has host 1's eight validated reports of 1 app
--    unit.  Host 2 reports one more job of 1 unit, host 3 one claiming 10.
--    Each host is one voice, host 1's eight reports one of them: mean
--    (1 + 1 + 10) / 3 = 4 app units (among three hosts a tenfold claim is
--    within the bound, mean + 4 sd, and counts in full; among a farm's
--    hundreds it would be one voice of hundreds).  Credit = 4 * 4e10 /
--    4.32e11 = 0.37037 for both jobs: the claim earns its host nothing the
--    other does not get.
SELECT done_job(11, 2, 1, 40, 1e9) AS honest \gset
SELECT done_job(11, 3, 10, 40, 1e9) AS inflated \gset
SELECT allot.run_transitioner('2026-01-01 02:00') ->> 'credited' AS credited;
SELECT round(actual_au_mean::numeric, 4) AS mean_app_units, n_reports, au_hosts FROM allot.app WHERE id = 1;
SELECT id = :honest AS honest, round(credit::numeric, 5) AS credit
  FROM allot.job WHERE id IN (:honest, :inflated) ORDER BY id;
-- An invalid verdict withdraws the credit; a job not done cannot be validated.
SELECT allot.validate_job(:inflated, false);
SELECT credit FROM allot.job WHERE id = :inflated;
SELECT allot.validate_job(1000, true);
SELECT allot.validate_job(424242, true);

-- 8. Timeouts: a job past its deadline goes back to unsent, is sent to
--    another host, and the late report of the first host is refused; the
--    late host's quota drops by one.
SELECT reset_farm();
INSERT INTO allot.app (id, name) VALUES (1, 'a');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, engine, app_id, delay_bound) VALUES (1, 'E', 1, '2 hours');
INSERT INTO allot.job (id, workload_id) VALUES (1, 1);
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (1, 'Linux', 1, 1e9), (2, 'Linux', 1, 1e9);
SELECT allot.request_work(1, '{"resources": {"cpu": {"req_instances": 1}}}', '2026-01-01 00:00') -> 'jobs' -> 0 ->> 'deadline' AS deadline;
SELECT allot.run_transitioner('2026-01-01 01:59') ->> 'timed_out' AS before_deadline;
SELECT allot.run_transitioner('2026-01-01 02:01') ->> 'timed_out' AS after_deadline;
SELECT state, host_id FROM allot.job WHERE id = 1;
SELECT quota FROM allot.host_app_version WHERE host_id = 1;
SELECT jsonb_array_length(allot.request_work(2, '{"resources": {"cpu": {"req_instances": 1}}}',
                                             '2026-01-01 02:02') -> 'jobs') AS sent_to_host_2;
SELECT allot.report_job(1, 1, 'success', 1, 3600, now => '2026-01-01 02:03');
SELECT allot.report_job(2, 1, 'success', 1, 3000, now => '2026-01-01 02:50') ->> 'state' AS state;
SELECT count(*) AS reports, count(*) FILTER (WHERE outcome = 'success') AS successes
  FROM allot.job_report WHERE job_id = 1;
SELECT * FROM allot.check_invariants();
