-- Retention (issue 33): finished jobs older than allot.retention_period
-- leave allot.job and allot.job_report, oldest first, at most a batch at a
-- time, into allot.job_archive or nowhere; what the farm knows of them
-- stays.  Sections:
--
--   1  the settings: defaults, ranges, and values refused with 22023
--   2  a farm of 2 apps: jobs done (validated and credited, or not
--      validated), given up in error, held back (validated, never credited),
--      finished lately, in progress and unsent
--   3  purge_finished: the oldest finished jobs first, a batch at most,
--      only those finished before now - period and not held back, with
--      their reports
--   4  what stays: hosts' credit (host_credit(), status_host), the
--      workloads' and apps' counts, the apps' statistics, quotas, debts;
--      check_invariants() empty; the purged totals
--   5  the archive: one row per purge, every job with every column and
--      every report, a column added later included
--   6  run_transitioner purges as its last step and reports it; retention
--      off purges nothing; the archive off deletes
--   7  a purged job is gone for every call that names it
--   8  merge_host moves a purged host's credit; an edit of a purged total
--      (as a restore makes) moves the counters; an operator's DELETE of a
--      finished job still takes it from the counts
--   9  bad input and privileges
--
-- Virtual time from T0 = 2026-01-01 00:00 UTC.  Runs as a superuser in a
-- fresh database with pgtap and allot created.
BEGIN;
SELECT plan(79);

-- ---------------------------------------------------------------------------
-- 1. Settings.
SELECT is(allot.expire_assignments('2026-01-01 00:00:00+00'), 0::bigint, 'a first call loads the library');
SELECT is(current_setting('allot.retention_period'), '30d', 'retention_period: 30 days by default');
SELECT is(current_setting('allot.retention_batch'), '10000', 'retention_batch: 10000 by default');
SELECT is(current_setting('allot.retention_archive'), 'on', 'retention_archive: on by default');

SELECT throws_ok($$SET allot.retention_period = 30$$, '22023',
                 'invalid value for parameter "allot.retention_period": 30',
                 'retention_period 30 (seconds, meant as days?) is refused');
SELECT throws_ok($$SET allot.retention_period = '59min'$$, '22023',
                 'invalid value for parameter "allot.retention_period": 3540',
                 'retention_period under an hour is refused, naming the value in seconds');
SELECT throws_ok($$SET allot.retention_period = '-1d'$$, '22023', NULL, 'a negative retention_period is refused');
SELECT throws_ok($$SET allot.retention_batch = 0$$, '22023', NULL, 'retention_batch 0 is refused');
SELECT throws_ok($$SET allot.retention_archive = 'maybe'$$, '22023',
                 'parameter "allot.retention_archive" requires a Boolean value', 'retention_archive maybe');
SELECT is(current_setting('allot.retention_period') || ' ' || current_setting('allot.retention_batch'),
          '30d 10000', 'the settings keep their values');
SELECT lives_ok($$SET allot.retention_period = 0; SET allot.retention_period = '1h'; RESET allot.retention_period$$,
                'retention_period 0 (off) and 1h are accepted');

-- ---------------------------------------------------------------------------
-- 2. The farm.  App 1 has an estimate, so its validated jobs are credited;
-- app 2 has none, so its validated jobs wait for credit.  Workload w's jobs
-- are requested alone (the others excluded).
CREATE FUNCTION pg_temp.take(h bigint, w bigint, at timestamptz, n int)
RETURNS SETOF bigint LANGUAGE sql AS $f$
    SELECT (x ->> 'job_id')::bigint
      FROM jsonb_array_elements(allot.request_work(h,
               jsonb_build_object('resources', jsonb_build_object('cpu', jsonb_build_object('req_instances', n)),
                                  'exclude', (SELECT coalesce(jsonb_agg(id), '[]') FROM allot.workload WHERE id <> w)),
               at, h) -> 'jobs') x
$f$;

INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'crunch', 1e12), (2, 'fresh', NULL);
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1), (2, 2, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES
    (1, 'crunch', 'crunch', 1, '3 days'), (2, 'fresh', 'fresh', 2, '3 days');
INSERT INTO allot.job (id, workload_id) SELECT g, 1 FROM generate_series(1, 12) g;
INSERT INTO allot.job (id, workload_id) SELECT g, 2 FROM generate_series(21, 22) g;
INSERT INTO allot.host (id, name, os, threads, cpu_flops)
SELECT g, 'host ' || g, 'Linux', 4, 1e9 FROM generate_series(1, 4) g;
-- Job 6 gives up at its first error.
UPDATE allot.job SET max_error_results = 0 WHERE id = 6;

-- T0: hosts 1-4 take two jobs each of workload 1 (jobs 1-8), host 1 both
-- of workload 2 (21, 22).
SELECT is((SELECT count(*) FROM generate_series(1, 4) h, pg_temp.take(h, 1, '2026-01-01', 2)), 8::bigint,
          'hosts 1-4 take jobs 1-8');
SELECT is((SELECT array_agg(j ORDER BY j) FROM pg_temp.take(1, 2, '2026-01-01', 2) j), '{21,22}'::bigint[],
          'host 1 takes jobs 21 and 22');

-- Reports, each host an hour after the last: host 1's at 01:00, host 2's
-- at 02:00, host 3's at 03:00 (job 6 an error: it gives up), host 4 keeps
-- its jobs (7, 8).  Jobs 21 and 22 succeed at 01:30.
SELECT is((SELECT count(allot.report_job(host_id, id, CASE WHEN id = 6 THEN 'error' ELSE 'success' END,
                                         1, 3600, NULL, '2026-01-01'::timestamptz + host_id * interval '1 hour'))
             FROM allot.job WHERE state = 'in_progress' AND host_id IN (1, 2, 3) AND workload_id = 1),
          6::bigint, 'hosts 1-3 report jobs 1-6');
SELECT is((SELECT count(allot.report_job(1, id, 'success', 1, 3600, NULL, '2026-01-01 01:30'))
             FROM allot.job WHERE id IN (21, 22)), 2::bigint, 'host 1 reports jobs 21, 22');
SELECT is((SELECT string_agg(id || ' ' || state, ', ' ORDER BY id) FROM allot.job WHERE id <= 8),
          '1 done, 2 done, 3 done, 4 done, 5 done, 6 error, 7 in_progress, 8 in_progress',
          'jobs 1-5 done, 6 gave up, 7 and 8 in progress');
-- Validation: all but job 4.
SELECT is((SELECT count(allot.validate_job(id, true)) FROM allot.job WHERE id IN (1, 2, 3, 5, 21, 22)),
          6::bigint, 'jobs 1, 2, 3, 5, 21 and 22 are validated; job 4 is not');
SELECT is((SELECT (r ->> 'credited')::int FROM allot.run_transitioner('2026-01-01 04:00') r), 4,
          'the transitioner credits jobs 1, 2, 3 and 5 (app 2 has no estimate)');
-- Job 9, taken on day 19 and done on day 20: finished lately.
SELECT is((SELECT count(allot.report_job(2, j, 'success', 1, 3600, NULL, '2026-01-21'))
             FROM pg_temp.take(2, 1, '2026-01-20', 1) j), 1::bigint, 'job 9 finishes on day 20');

-- What the farm knows now.
CREATE TEMP TABLE before_credit AS SELECT * FROM allot.host_credit(ARRAY[1, 2, 3, 4]::bigint[]);
CREATE TEMP TABLE before_status_host AS SELECT host_id, credit, credited_jobs FROM allot.status_host;
CREATE TEMP TABLE before_workload AS
    SELECT workload_id, jobs_done, jobs_error, jobs_unsent, jobs_in_progress, rec, debt FROM allot.status_workload;
CREATE TEMP TABLE before_app AS SELECT * FROM allot.status_app;
CREATE TEMP TABLE before_app_row AS
    SELECT id, n_reports, actual_au_mean, actual_au_m2, predicted_au_mean, au_ratio_mean, au_ratio_m2,
           au_ratio_bound, est_flops_per_au, cpu_samples, cpu_sample_hosts, au_hosts FROM allot.app;
CREATE TEMP TABLE before_hav AS SELECT * FROM allot.host_app_version;
CREATE TEMP TABLE before_reports AS SELECT * FROM allot.job_report;
SELECT is((SELECT count(*) FROM before_reports WHERE job_id IN (1, 2, 3, 4, 5, 6)), 6::bigint,
          'jobs 1-6 have a report each');

-- ---------------------------------------------------------------------------
-- 3. purge_finished.  At T0 + 31 days the cutoff is T0 + 1 day: jobs 1-6
-- finished before it; 21 and 22 too, but wait for credit; 9 finished after
-- it; 7, 8 and the unsent jobs are not finished.
SELECT is(allot.purge_finished('2026-02-01', 2) - 'cutoff',
          '{"purged": 2, "reports": 2, "archived": 2, "busy": false}'::jsonb,
          'a batch of 2: two jobs go, with their reports, to the archive');
SELECT is((SELECT allot.purge_finished('2026-02-01', 2) ->> 'cutoff')::timestamptz, '2026-01-02 00:00+00'::timestamptz,
          'the cutoff is now - allot.retention_period');
SELECT is((SELECT array_agg(id ORDER BY id) FROM allot.job WHERE id <= 6), '{5,6}'::bigint[],
          'the oldest finished went first: host 1''s (01:00), then host 2''s (02:00); host 3''s are left');
SELECT is(allot.purge_finished('2026-02-01') - 'cutoff',
          '{"purged": 2, "reports": 2, "archived": 2, "busy": false}'::jsonb,
          'the default batch takes the rest: jobs 5 and 6');
SELECT is((SELECT array_agg(id ORDER BY id) FROM allot.job), '{7,8,9,10,11,12,21,22}'::bigint[],
          'left: jobs in progress (7, 8), finished lately (9), unsent (10-12), waiting for credit (21, 22)');
SELECT is((SELECT count(*) FROM allot.job_report WHERE job_id <= 6), 0::bigint,
          'the purged jobs'' reports are gone');
SELECT set_eq($$SELECT job_id, host_id, sent_at, outcome, reply FROM allot.job_report$$,
              $$SELECT job_id, host_id, sent_at, outcome, reply FROM before_reports WHERE job_id > 6$$,
              'every other report stays');
SELECT is(allot.purge_finished('2026-02-01') ->> 'purged', '0', 'a purge with nothing to do purges nothing');

-- ---------------------------------------------------------------------------
-- 4. What stays.
SELECT results_eq($$SELECT * FROM allot.host_credit(ARRAY[1, 2, 3, 4]::bigint[])$$,
                  $$SELECT * FROM before_credit$$,
                  'host_credit(): every host''s total and recent average credit are as before');
SELECT set_eq($$SELECT host_id, credit, credited_jobs FROM allot.status_host$$,
              $$SELECT * FROM before_status_host$$, 'status_host: the same credit and credited jobs');
SELECT set_eq($$SELECT workload_id, jobs_done, jobs_error, jobs_unsent, jobs_in_progress, rec, debt
                  FROM allot.status_workload$$,
              $$SELECT * FROM before_workload$$, 'status_workload: the same counts of done and errored jobs');
SELECT set_eq($$SELECT * FROM allot.status_app$$, $$SELECT * FROM before_app$$,
              'status_app: the same statistics, estimate, credit per job and counts');
SELECT set_eq($$SELECT id, n_reports, actual_au_mean, actual_au_m2, predicted_au_mean, au_ratio_mean, au_ratio_m2,
                       au_ratio_bound, est_flops_per_au, cpu_samples, cpu_sample_hosts, au_hosts FROM allot.app$$,
              $$SELECT * FROM before_app_row$$, 'the apps'' windows, statistics and FLOPS samples are untouched');
SELECT set_eq($$SELECT * FROM allot.host_app_version$$, $$SELECT * FROM before_hav$$,
              'quotas and per-version speeds are untouched');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');
SELECT results_eq($$SELECT workload_id, done, error FROM allot.purged_jobs ORDER BY 1$$,
                  $$VALUES (1::bigint, 5::bigint, 1::bigint)$$, 'purged_jobs: workload 1, 5 done and 1 error');
SELECT results_eq($$SELECT host_id, jobs, round(credit, 6), decayed_at FROM allot.purged_credit ORDER BY 1$$,
                  $$SELECT host_id, count(*), round(sum(credit)::numeric, 6), max(returned_at)
                      FROM (SELECT (j ->> 'host_id')::bigint AS host_id, (j ->> 'credit')::float8 AS credit,
                                   (j ->> 'returned_at')::timestamptz AS returned_at
                              FROM allot.job_archive a, json_array_elements(a.jobs) e, LATERAL (SELECT e -> 'job' AS j) x) c
                     WHERE credit IS NOT NULL GROUP BY host_id ORDER BY 1$$,
                  'purged_credit: per host, the credit of its purged jobs, at their latest return');

-- ---------------------------------------------------------------------------
-- 5. The archive.
SELECT results_eq($$SELECT archived_at, job_count, first_job_id, last_job_id, finished_from, finished_to
                      FROM allot.job_archive ORDER BY first_job_id$$,
                  $$VALUES ('2026-02-01 00:00+00'::timestamptz, 2, 1::bigint, 2::bigint,
                            '2026-01-01 01:00+00'::timestamptz, '2026-01-01 01:00+00'::timestamptz),
                           ('2026-02-01 00:00+00', 2, 3, 4, '2026-01-01 02:00+00', '2026-01-01 02:00+00'),
                           ('2026-02-01 00:00+00', 2, 5, 6, '2026-01-01 03:00+00', '2026-01-01 03:00+00')$$,
                  'one row per purge: when, how many, which ids, finished when');
SELECT is((SELECT array_agg((e -> 'job' ->> 'id')::bigint ORDER BY (e -> 'job' ->> 'id')::bigint)
             FROM allot.job_archive a, json_array_elements(a.jobs) e), '{1,2,3,4,5,6}'::bigint[],
          'every purged job is archived once');
SELECT is((SELECT e -> 'job' ->> 'state' || ' ' || (e -> 'job' ->> 'failures') || ' '
                  || (e -> 'reports' -> 0 ->> 'outcome') || ' ' || json_array_length(e -> 'reports')
             FROM allot.job_archive a, json_array_elements(a.jobs) e WHERE e -> 'job' ->> 'id' = '6'),
          'error 1 error 1', 'job 6: its row (state, failures) and its one report (an error)');
SELECT set_eq($$SELECT key FROM allot.job_archive a, json_array_elements(a.jobs) e, json_object_keys(e -> 'job') key$$,
              $$SELECT attname::text FROM pg_attribute WHERE attrelid = 'allot.job'::regclass AND attnum > 0
                                                      AND NOT attisdropped$$,
              'an archived job has every column of allot.job');
SELECT is((SELECT (e -> 'reports' -> 0 ->> 'reply')::jsonb FROM allot.job_archive a, json_array_elements(a.jobs) e
            WHERE e -> 'job' ->> 'id' = '1'),
          (SELECT reply FROM before_reports WHERE job_id = 1), 'an archived report keeps its reply');
-- A column a later release adds is archived with no change to the purge.
ALTER TABLE allot.job ADD COLUMN probe int DEFAULT 7;
SELECT is(allot.purge_finished('2026-02-21') ->> 'purged', '1', 'at T0 + 51 days, job 9 goes too');
SELECT is((SELECT e -> 'job' ->> 'probe' FROM allot.job_archive a, json_array_elements(a.jobs) e
            WHERE e -> 'job' ->> 'id' = '9'), '7', 'with a column added to allot.job after the purge was written');
ALTER TABLE allot.job DROP COLUMN probe;

-- ---------------------------------------------------------------------------
-- 6. The transitioner, retention off, the archive off.  Jobs 21 and 22
-- wait for credit: app 2 gets an estimate, the transitioner credits them.
SET allot.retention_period = 0;
UPDATE allot.app SET est_flops_per_au = 1e12 WHERE id = 2;
SELECT is((SELECT (r ->> 'credited')::int || ' ' || (r ->> 'purged') FROM allot.run_transitioner('2026-02-22') r),
          '2 0', 'retention off: the transitioner credits jobs 21 and 22 and purges nothing');
SELECT is(allot.purge_finished('2026-02-22'),
          '{"purged": 0, "reports": 0, "archived": 0, "busy": false, "cutoff": null}'::jsonb,
          'retention off: purge_finished purges nothing and has no cutoff');
RESET allot.retention_period;
SET allot.retention_archive = off;
SELECT is((SELECT r ->> 'purged' FROM allot.run_transitioner('2026-02-22') r), '2',
          'run_transitioner purges jobs 21 and 22 as its last step');
SELECT is((SELECT purged FROM allot.status_transitioner LIMIT 1), 2::bigint, 'status_transitioner shows it');
SELECT is((SELECT count(*) FROM allot.job_archive WHERE last_job_id >= 21), 0::bigint,
          'the archive off: they are deleted, not archived');
RESET allot.retention_archive;
SELECT is((SELECT array_agg(id ORDER BY id) FROM allot.job), '{7,8,10,11,12}'::bigint[],
          'jobs 7 and 8 (timed out at T0 + 3 days: back to unsent) and the unsent stay');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');

-- ---------------------------------------------------------------------------
-- 7. A purged job is gone.
SELECT throws_ok($$SELECT allot.report_job(1, 1, 'success', 1, 3600, NULL, '2026-02-22')$$, 'P0002',
                 'job 1 does not exist', 'a late repeat of job 1''s report: the job does not exist');
SELECT throws_ok($$SELECT allot.validate_job(4, true)$$, 'P0002', 'job 4 does not exist',
                 'validating job 4 after it left: the job does not exist');
SELECT throws_ok($$SELECT allot.requeue_job(6, '2026-02-22')$$, 'P0002', 'job 6 does not exist',
                 'requeueing job 6 after it left: the job does not exist');

-- ---------------------------------------------------------------------------
-- 8. Merges and edits.  Host 2 (jobs 3, 4 and 9 purged, 3 and 9 credited)
-- came back as itself under host 4's id: merged into host 4.
SELECT (SELECT total_credit FROM allot.host_credit(ARRAY[2]::bigint[])) AS credit2,
       (SELECT total_credit FROM allot.host_credit(ARRAY[4]::bigint[])) AS credit4 \gset
SELECT cmp_ok(:credit2::float8, '>', 0::float8, 'host 2 has credit, all of it from purged jobs');
SELECT is(allot.merge_host(4, 2) ->> 'merged', '2', 'host 2 is merged into host 4');
SELECT ok(abs((SELECT total_credit FROM allot.host_credit(ARRAY[4]::bigint[])) - (:credit2 + :credit4)) < 1e-9,
          'host 4 has both hosts'' credit, host 2''s purged jobs'' included');
SELECT results_eq($$SELECT host_id FROM allot.purged_credit ORDER BY 1$$, $$VALUES (1::bigint), (3), (4)$$,
                  'host 2''s purged total is host 4''s now');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty after the merge');
-- A restore loads the purged totals after the counters were rebuilt from
-- the jobs: deleting and loading one again moves the counters both ways.
CREATE TEMP TABLE saved AS SELECT * FROM allot.purged_credit WHERE host_id = 3;
DELETE FROM allot.purged_credit WHERE host_id = 3;
SELECT is((SELECT total_credit FROM allot.host_credit(ARRAY[3]::bigint[])), 0::float8,
          'deleting host 3''s purged total takes its credit from host_credit');
INSERT INTO allot.purged_credit SELECT * FROM saved;
CREATE TEMP TABLE saved_jobs AS SELECT * FROM allot.purged_jobs;
DELETE FROM allot.purged_jobs;
INSERT INTO allot.purged_jobs SELECT * FROM saved_jobs;
SELECT results_eq($$SELECT total_credit, expavg_credit FROM allot.host_credit(ARRAY[3]::bigint[])$$,
                  $$SELECT total_credit, expavg_credit FROM before_credit WHERE host_id = 3$$,
                  'loading it again gives it back, recent average included');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$,
                'check_invariants() is empty after the purged totals were deleted and loaded again');
-- An operator's DELETE of a finished job is not a purge: the job never was.
SELECT is((SELECT count(allot.report_job(1, t, 'success', 1, 3600, NULL, '2026-02-22 01:00'))
             FROM pg_temp.take(1, 1, '2026-02-22', 1) t), 1::bigint,
          'host 1 takes and finishes one more job');
DELETE FROM allot.job WHERE state = 'done';
SELECT is((SELECT jobs_done FROM allot.status_workload WHERE workload_id = 1),
          (SELECT jobs_done FROM before_workload WHERE workload_id = 1) + 1 - 1,
          'the operator''s DELETE takes it from the counts, the purged ones stay');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');

-- ---------------------------------------------------------------------------
-- 9. Bad input and privileges.
SELECT throws_ok($$SELECT allot.purge_finished(NULL)$$, '22004', 'now must not be NULL', 'now NULL');
SELECT throws_ok($$SELECT allot.purge_finished('infinity')$$, '22023', NULL, 'now infinity');
SELECT throws_ok($$SELECT allot.purge_finished(now(), 0)$$, '22023', 'batch must be at least 1, not 0', 'batch 0');
-- Only operators purge or read the archive and the purged totals.
CREATE ROLE allot_test_ret_web LOGIN IN ROLE allot_web;
CREATE ROLE allot_test_ret_monitor LOGIN IN ROLE allot_monitor;
CREATE ROLE allot_test_ret_admin LOGIN IN ROLE allot_admin;
SET ROLE allot_test_ret_web;
SELECT throws_ok($$SELECT allot.purge_finished()$$, '42501', NULL, 'allot_web cannot purge');
SELECT throws_ok($$SELECT count(*) FROM allot.job_archive$$, '42501', NULL, 'allot_web cannot read the archive');
SELECT throws_ok($$SELECT count(*) FROM allot.purged_credit$$, '42501', NULL, 'allot_web cannot read the purged totals');
RESET ROLE;
SET ROLE allot_test_ret_monitor;
SELECT throws_ok($$SELECT allot.purge_finished()$$, '42501', NULL, 'allot_monitor cannot purge');
SELECT throws_ok($$SELECT count(*) FROM allot.job_archive$$, '42501', NULL, 'allot_monitor cannot read the archive');
RESET ROLE;
SET ROLE allot_test_ret_admin;
SELECT is(allot.purge_finished('2026-03-30') ->> 'busy', 'false', 'allot_admin purges');
SELECT lives_ok($$DELETE FROM allot.job_archive WHERE archived_at < '2026-02-02'$$,
                'allot_admin deletes what it no longer needs from the archive');
RESET ROLE;
SELECT is((SELECT count(*) FROM allot.job_archive), 1::bigint, 'the archive keeps the rest');
-- TRUNCATE of the jobs wipes their history, the purged totals with it.
TRUNCATE allot.job, allot.job_report;
SELECT is((SELECT count(*) FROM allot.purged_jobs) + (SELECT count(*) FROM allot.purged_credit)
          + (SELECT count(*) FROM allot.job_usage) + (SELECT count(*) FROM allot.host_credit),
          0::bigint, 'TRUNCATE allot.job empties the purged totals and the counters');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty after it');
SELECT throws_ok($$SET TRANSACTION READ ONLY; SELECT allot.purge_finished()$$, '25006',
                 'allot.purge_finished cannot run in a read-only transaction', 'a read-only transaction');
SELECT * FROM finish();
ROLLBACK;
