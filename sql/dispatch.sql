-- request_work, rule by rule (docs/concepts.md "Job workloads"; seeds 001 and 003).
-- Virtual time starts at 2026-01-01 00:00 UTC.  Every estimate below comes
-- from allot.default_seconds_per_app_unit (3600 s) unless a test says so.
SELECT reset_farm();
SET allot.default_seconds_per_app_unit = 3600;

-- An app with a CPU and a GPU version, and a CPU-only app.
INSERT INTO allot.app (id, name) VALUES (1, 'both'), (2, 'cpu-only');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (11, 1, 'cpu', 1, 0),
    (12, 1, 'nvidia', 0.5, 1),
    (21, 2, 'cpu', 1, 0);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES
    (1, 'both', 'E1', 1, '1 day'),
    (2, 'cpu-only', 'E2', 2, '1 day');
INSERT INTO allot.job (workload_id) SELECT 1 FROM generate_series(1, 40);
INSERT INTO allot.job (workload_id) SELECT 2 FROM generate_series(1, 40);
-- Host 1: 4 CPUs of 1 GFLOPS and one GPU of 10 GFLOPS.  Host 2: CPUs only.
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES
    (1, 'Linux', 4, 1e9), (2, 'Linux', 4, 1e9), (3, 'Linux', 4, 1e9);
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (1, 'nvidia', 1, 1e10);

-- A compact view of a reply: each job as workload/version/resource, then
-- each resource's status and backoff.
CREATE FUNCTION sent(reply jsonb) RETURNS TABLE (jobs text, resources text)
LANGUAGE sql AS $$
    SELECT (SELECT string_agg(format('w%s/v%s/%s', j ->> 'workload_id', j ->> 'app_version_id',
                                     j ->> 'resource'), ' ' ORDER BY ord)
              FROM jsonb_array_elements(reply -> 'jobs') WITH ORDINALITY AS x(j, ord)),
           (SELECT string_agg(format('%s:%s/%s', key, value ->> 'status', value ->> 'backoff_secs'),
                              ' ' ORDER BY key)
              FROM jsonb_each(reply -> 'resources'));
$$;

-- 1. A GPU-only request gets only GPU jobs: version 12, one instance.
SELECT * FROM sent(allot.request_work(1, '{"resources": {"nvidia": {"req_instances": 1}}}',
                                      '2026-01-01 00:00+00', seed => 1));

-- 2. req_instances alone is honoured: 3 CPUs, 3 jobs (ncpus 1 each).
SELECT * FROM sent(allot.request_work(2, '{"resources": {"cpu": {"req_instances": 3}}}',
                                      '2026-01-01 00:00+00', seed => 1));

-- 3. As in BOINC's scheduler, jobs are sent while seconds or instances are
--    wanted, so the last one may overshoot both.  5000 s of CPU: the first
--    3600 s job leaves 1400 s wanted, the second overshoots to -2200 and
--    ends it: 2 jobs.  Instances 1.5 with ncpus-1 jobs: the first leaves
--    0.5 wanted, the second ends it: 2 jobs (half an instance gets a job).
SELECT * FROM sent(allot.request_work(3, '{"resources": {"cpu": {"req_secs": 5000}}}',
                                      '2026-01-01 00:00+00', seed => 1));
SELECT * FROM sent(allot.request_work(3, '{"resources": {"cpu": {"req_instances": 1.5}}}',
                                      '2026-01-01 00:00+00', seed => 1));

-- 4. A GPU job does not decrement the CPU request, and coprocessors go
--    first: one GPU job, then two CPU jobs.
SELECT * FROM sent(allot.request_work(1, '{"resources": {"cpu": {"req_instances": 2},
                                                         "nvidia": {"req_instances": 1}}}',
                                      '2026-01-01 00:01+00', seed => 2));

-- 5. 'unsupported' (no version could run there: host 2 has no GPU) versus
--    'no_work' (a version runs there, but nothing is available now).
UPDATE allot.workload SET state = 'paused';
SELECT * FROM sent(allot.request_work(2, '{"resources": {"cpu": {"req_instances": 1},
                                                         "nvidia": {"req_instances": 1}}}',
                                      '2026-01-01 00:02+00'));

-- 6. Backoff: 600 s on the first empty answer, doubling to 24 h at most,
--    and cleared when a job of that type is sent.
SELECT (allot.request_work(2, '{"resources": {"cpu": {"req_instances": 1}}}',
                           '2026-01-01 00:03+00') -> 'resources' -> 'cpu' ->> 'backoff_secs') AS backoff
  FROM generate_series(1, 9);
SELECT resource, backoff_secs FROM allot.host_resource WHERE host_id = 2 ORDER BY 1;
UPDATE allot.workload SET state = 'active';
SELECT * FROM sent(allot.request_work(2, '{"resources": {"cpu": {"req_instances": 1}}}',
                                      '2026-01-01 00:04+00', seed => 3));
SELECT resource, backoff_secs FROM allot.host_resource WHERE host_id = 2 ORDER BY 1;

-- 7. Deadline check.  A 2-hour delay bound; jobs of 3600 s.  A host that
--    says its CPUs are busy for 5000 s more gets nothing (5000 + 3600 >
--    7200); an idle host gets the job.  Within one request each job sent
--    adds its share of the queue: with 1 CPU and 3000 s of delay, the
--    first job fits (3000 + 3600 <= 7200), the second does not.
UPDATE allot.workload SET delay_bound = '2 hours';
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (4, 'Linux', 1, 1e9), (5, 'Linux', 1, 1e9);
SELECT * FROM sent(allot.request_work(4, '{"resources": {"cpu": {"req_secs": 7200,
                                                                  "estimated_delay": 5000}}}',
                                      '2026-01-01 00:05+00', seed => 4));
SELECT * FROM sent(allot.request_work(5, '{"resources": {"cpu": {"req_secs": 7200,
                                                                  "estimated_delay": 0}}}',
                                      '2026-01-01 00:05+00', seed => 4));
SELECT * FROM sent(allot.request_work(4, '{"resources": {"cpu": {"req_secs": 20000,
                                                                  "estimated_delay": 3000}}}',
                                      '2026-01-01 00:06+00', seed => 4));
UPDATE allot.workload SET delay_bound = '1 day';

-- 8. Daily quota per (host, app version).  With a quota of 2, host 6 gets
--    2 jobs of each version in a day, then nothing; the next day again.
SET allot.daily_quota = 2;
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (6, 'Linux', 8, 1e9);
SELECT * FROM sent(allot.request_work(6, '{"resources": {"cpu": {"req_instances": 8}}}',
                                      '2026-01-02 00:00+00', seed => 5));
SELECT * FROM sent(allot.request_work(6, '{"resources": {"cpu": {"req_instances": 8}}}',
                                      '2026-01-02 12:00+00', seed => 5));
SELECT * FROM sent(allot.request_work(6, '{"resources": {"cpu": {"req_instances": 1}}}',
                                      '2026-01-03 00:00+00', seed => 5));
RESET allot.daily_quota;

-- 9. Old clients: work_req_seconds, any resource, one pool of seconds.
--    7000 s: GPU first; two GPU jobs of 3600 s take the pool to -200, so
--    the CPU's turn never comes and the reply says nothing of it.
SELECT * FROM sent(allot.request_work(1, '{"work_req_seconds": 7000}', '2026-01-03 00:00+00', seed => 6));
-- no_gpus keeps the GPU out even for an old client.
SELECT * FROM sent(allot.request_work(1, '{"work_req_seconds": 3000, "no_gpus": true}',
                                      '2026-01-03 00:00+00', seed => 6));

-- 10. The exclude list removes workloads: only workload 2 can serve.
SELECT * FROM sent(allot.request_work(3, '{"resources": {"cpu": {"req_instances": 2}}, "exclude": [1]}',
                                      '2026-01-03 00:00+00', seed => 7));

-- 11. The app version with the highest projected FLOPS: a second GPU
--     version of app 1 needing 2 GPUs is skipped on a 1-GPU host; on a
--     2-GPU host it projects 2 * 10 GFLOPS and wins.
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES (13, 1, 'nvidia', 1, 2);
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (7, 'Linux', 4, 1e9);
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (7, 'nvidia', 2, 1e10);
SELECT * FROM sent(allot.request_work(1, '{"resources": {"nvidia": {"req_instances": 1}}}',
                                      '2026-01-03 00:00+00', seed => 8));
SELECT * FROM sent(allot.request_work(7, '{"resources": {"nvidia": {"req_instances": 2}}}',
                                      '2026-01-03 00:00+00', seed => 8));
-- What the client states of a version is its projected FLOPS, at most its
-- peak (seed 004: raw FLOPS are the peak or less): here the 2-GPU version
-- does only 5 GFLOPS, less than the 1-GPU one's 10, which is chosen.  A
-- claim above the peak, 3e10 for version 12, would count as 1e10 and lose.
SELECT * FROM sent(allot.request_work(7, '{"resources": {"nvidia": {"req_instances": 1}},
                                           "app_versions": {"13": {"raw_flops_per_sec": 5e9}}}',
                                      '2026-01-03 00:01+00', seed => 8));

-- 12. The reply carries, per job, what the host needs to run it.
SELECT jsonb_pretty(j - 'job_id')
  FROM jsonb_array_elements(allot.request_work(3, '{"resources": {"cpu": {"req_instances": 1}}}',
                                               '2026-01-03 00:02+00', seed => 9) -> 'jobs') j;

-- 13. No job was sent twice, and the usage counters agree with the jobs.
SELECT count(*) AS in_progress, count(DISTINCT id) AS distinct_jobs
  FROM allot.job WHERE state = 'in_progress';
SELECT * FROM allot.check_invariants();

-- 14. report_job.  Success: done, the quota doubles (up to the maximum),
--     the host learns seconds per app unit (elapsed / app units = 1000 s),
--     and the app's statistics take the report.  A repeat is harmless.
SELECT id AS job FROM allot.job WHERE host_id = 3 AND state = 'in_progress' ORDER BY id LIMIT 1 \gset
SELECT allot.report_job(3, :job, 'success', 2, 2000, now => '2026-01-03 01:00+00') - 'job_id' AS reply;
SELECT allot.report_job(3, :job, 'success', 2, 2000, now => '2026-01-03 01:00+00') - 'job_id' AS repeated;
SELECT state, app_units, elapsed_secs, raw_flops_per_sec = peak_flops_per_sec AS raw_defaults_to_peak
  FROM allot.job WHERE id = :job;
SELECT seconds_per_app_unit, quota, n_success, n_error
  FROM allot.host_app_version hv JOIN allot.job j ON j.app_version_id = hv.app_version_id
 WHERE j.id = :job AND hv.host_id = 3;
-- Error and aborted: each a failed sending, back to unsent for another
-- host (its first failure, within max_error_results = 3); the quota halves
-- each time (100 -> 50 -> 25).
SELECT id AS job2 FROM allot.job WHERE host_id = 3 AND state = 'in_progress' ORDER BY id LIMIT 1 \gset
SELECT allot.report_job(3, :job2, 'error', now => '2026-01-03 01:00+00') - 'job_id' AS reply;
SELECT id AS job3 FROM allot.job WHERE host_id = 3 AND state = 'in_progress' ORDER BY id LIMIT 1 \gset
SELECT allot.report_job(3, :job3, 'aborted', now => '2026-01-03 01:00+00') - 'job_id' AS reply;
SELECT state, host_id, sent_at FROM allot.job WHERE id = :job3;
-- A success doubles a lowered quota: 10 -> 20.
UPDATE allot.host_app_version SET quota = 10 WHERE host_id = 3;
SELECT id AS job4 FROM allot.job WHERE host_id = 3 AND state = 'in_progress' AND app_version_id = 21
 ORDER BY id LIMIT 1 \gset
SELECT allot.report_job(3, :job4, 'success', 1, 1000, now => '2026-01-03 01:00+00') ->> 'quota' AS quota;
SELECT * FROM allot.check_invariants();

-- 15. host_queue and the buffer form, on a fresh app without history (so
--     every estimate is the default 3600 s).  Host 8 has 2 CPUs and takes
--     two jobs at 10:00.  At 10:10 each has 3000 s left: nothing idle,
--     saturated (and busy) for 3000 s, and until max_buf = 7200 s the two
--     CPUs stand idle 2 x (7200 - 3000) = 8400 s.
INSERT INTO allot.app (id, name) VALUES (4, 'fresh');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES (41, 4, 'cpu', 1, 0);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES (4, 'fresh', 'E4', 4, '1 day');
INSERT INTO allot.job (workload_id) SELECT 4 FROM generate_series(1, 10);
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (8, 'Linux', 2, 1e9);
SELECT * FROM sent(allot.request_work(8, '{"resources": {"cpu": {"req_instances": 2}}, "exclude": [1, 2]}',
                                      '2026-01-04 10:00+00', seed => 10));
SELECT * FROM allot.host_queue(8, 3600, 7200, '2026-01-04 10:10+00');
-- A thin client sends only its buffer: saturated 3000 s < min 3600 s, so
-- the server asks for the shortfall, 8400 s, with 3000 s of delay: jobs of
-- 3600 s until the seconds are spent (8400 -> 4800 -> 1200 -> -2400): 3.
SELECT * FROM sent(allot.request_work(8, '{"buffer": {"min_secs": 3600, "max_secs": 7200}, "exclude": [1, 2]}',
                                      '2026-01-04 10:10+00', seed => 11));
-- Now 5 jobs are queued on 2 CPUs: saturated well past min_secs, so the
-- buffer asks for nothing and the reply is empty.
SELECT resource, idle_instances, saturated_secs FROM allot.host_queue(8, 3600, 7200, '2026-01-04 10:10+00');
SELECT * FROM sent(allot.request_work(8, '{"buffer": {"min_secs": 3600, "max_secs": 7200}, "exclude": [1, 2]}',
                                      '2026-01-04 10:10+00', seed => 12));
SELECT * FROM allot.check_invariants();
