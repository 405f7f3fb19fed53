-- The status views and the allot_monitor role (docs/status-page.md): the
-- monitor reads the seven status views and nothing else, and the views show
-- what a farm built here holds, worked out by hand and against recounts of
-- the tables.  Run as a superuser in a fresh database with allot installed;
-- the login roles are created here and dropped by the rollback.
BEGIN;
SELECT plan(74);

CREATE ROLE allot_test_monitor LOGIN IN ROLE allot_monitor;
CREATE ROLE allot_test_monitor_admin LOGIN IN ROLE allot_admin;
CREATE ROLE allot_test_monitor_web LOGIN IN ROLE allot_web;

-- ---------------------------------------------------------------------------
-- The catalog.
SELECT ok((SELECT NOT rolcanlogin AND NOT rolsuper FROM pg_roles WHERE rolname = 'allot_monitor'),
          'allot_monitor is a NOLOGIN group role, not a superuser');

CREATE TEMP VIEW status_views AS
SELECT unnest(ARRAY['status_settings', 'status_farm', 'status_workload', 'status_host',
                    'status_app', 'status_transitioner', 'status_share_history']) AS name;
GRANT SELECT ON status_views TO allot_test_monitor;

SELECT set_eq(
    $$SELECT relname::text FROM pg_class WHERE relnamespace = 'allot'::regnamespace AND relkind = 'v'$$,
    $$SELECT name FROM status_views$$,
    'schema allot has the seven status views');
SELECT set_eq(
    $$SELECT relname::text FROM pg_class
       WHERE relnamespace = 'allot'::regnamespace
         AND has_table_privilege('allot_test_monitor', oid, 'SELECT')$$,
    $$SELECT name FROM status_views$$,
    'allot_monitor can read the seven status views and no table or sequence');
SELECT is((SELECT count(*)::int FROM pg_class
            WHERE relnamespace = 'allot'::regnamespace
              AND (has_table_privilege('allot_test_monitor', oid, 'INSERT')
                   OR has_table_privilege('allot_test_monitor', oid, 'UPDATE')
                   OR has_table_privilege('allot_test_monitor', oid, 'DELETE')
                   OR has_table_privilege('allot_test_monitor', oid, 'TRUNCATE'))),
          0, 'allot_monitor can write nothing');
SELECT is((SELECT count(*)::int FROM pg_proc
            WHERE pronamespace = 'allot'::regnamespace
              AND has_function_privilege('allot_test_monitor', oid, 'EXECUTE')),
          0, 'allot_monitor can execute no allot function');
SELECT ok(NOT has_schema_privilege('allot_monitor', 'allot', 'CREATE'),
          'allot_monitor cannot create objects in schema allot');
SELECT is((SELECT count(*)::int FROM status_views
            WHERE NOT has_table_privilege('allot_test_monitor_admin', 'allot.' || name, 'SELECT')),
          0, 'allot_admin can read every status view');
SELECT is((SELECT count(*)::int FROM status_views
            WHERE has_table_privilege('allot_test_monitor_web', 'allot.' || name, 'SELECT')),
          0, 'allot_web can read no status view');
SELECT is((SELECT count(*)::int FROM status_views
            WHERE has_table_privilege('public', 'allot.' || name, 'SELECT')),
          0, 'PUBLIC can read no status view');

-- Every view and column of the status views and of what 0.5.0 and 0.7.0
-- added to keep them cheap carries a comment.
SELECT is((SELECT string_agg(c.relname, ', ') FROM pg_class c
            WHERE c.relnamespace = 'allot'::regnamespace
              AND (c.relkind = 'v' OR c.relname IN ('host_credit', 'transitioner_run', 'share_history'))
              AND obj_description(c.oid, 'pg_class') IS NULL),
          NULL, 'every status view and new table has a comment');
SELECT is((SELECT string_agg(c.relname || '.' || a.attname, ', ') FROM pg_class c
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE c.relnamespace = 'allot'::regnamespace
              AND (c.relkind = 'v' OR c.relname IN ('host_credit', 'transitioner_run', 'share_history'))
              AND col_description(c.oid, a.attnum) IS NULL),
          NULL, 'every column of those has a comment');
SELECT ok(col_description('allot.job_usage'::regclass, 6) IS NOT NULL
          AND col_description('allot.job_usage'::regclass, 5) IS NOT NULL,
          'job_usage.done and job_usage.error have comments');

-- ---------------------------------------------------------------------------
-- The farm.  Assignment workloads: 1 and 2 of engine Stockfish, 3 of
-- Ethereal at twice the throughput, 4 at a lower priority, 5 paused.  Their
-- hosts are assigned directly (the trigger keeps workload_usage): workload 1
-- holds hosts of 4 and 8 threads, 2 a focus-assigned host of 2 threads and
-- an expired one of 32, 3 a host of 16, the paused 5 a host of 4.
INSERT INTO allot.workload (id, name, engine, throughput, priority, state) VALUES
    (1, 'SF: new eval', 'Stockfish', 1000, 0, 'active'),
    (2, 'SF: LMR', 'Stockfish', 1000, 0, 'active'),
    (3, 'Eth: SPSA', 'Ethereal', 2000, 0, 'active'),
    (4, 'Eth: long shot', 'Ethereal', 1000, -1, 'active'),
    (5, 'Berserk: paused', 'Berserk', 1000, 0, 'paused');
INSERT INTO allot.host (id, name, os, threads, cpu_flops, tokens) VALUES
    (1, 'a', 'Linux', 4, NULL, '{secret-token}'), (2, 'b', 'Linux', 8, NULL, '{}'),
    (3, 'c', 'Linux', 16, NULL, '{}'), (4, 'd', 'Linux', 4, NULL, '{}'),
    (5, 'e', 'Linux', 2, NULL, '{}'), (6, 'f', 'Linux', 32, NULL, '{}');
INSERT INTO allot.assignment (host_id, workload_id, threads, focus, assigned_at, seen_at, counted)
SELECT h, w, t, f, now(), now(), c
  FROM (VALUES (1, 1, 4, false, true), (2, 1, 8, false, true), (3, 3, 16, false, true),
               (4, 5, 4, false, true), (5, 2, 2, true, true), (6, 2, 32, false, false))
       v(h, w, t, f, c);

-- Job workloads: 11 of app 1 (a CPU and a GPU version), 12 of app 2 (CPU
-- only) at three times the throughput, 13 of app 1 with no unsent job (two
-- done jobs host 11 did, credited 2.5 each, loaded as they are).
INSERT INTO allot.app (id, name) VALUES (1, 'folding'), (2, 'climate');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (1, 1, 'cpu', 1, 0), (2, 1, 'nvidia', 0, 1), (3, 2, 'cpu', 1, 0);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (11, 'folding batch', 'folding', 1, 1000, '2 days'),
    (12, 'climate run', 'climate', 2, 3000, '2 days'),
    (13, 'folding old', 'folding', 1, 1000, '2 days');
INSERT INTO allot.host (id, name, os, threads, cpu_flops) VALUES
    (11, 'cruncher', 'Linux', 4, 1e9), (12, 'gpu-box', 'Linux', 2, 1e9);
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (12, 'nvidia', 1, 1e12);
INSERT INTO allot.job (id, workload_id) SELECT g, 11 FROM generate_series(1, 10) g;
INSERT INTO allot.job (id, workload_id) SELECT g, 12 FROM generate_series(21, 30) g;
INSERT INTO allot.job (id, workload_id, state, host_id, app_version_id, sent_at, credit, validated)
SELECT g, 13, 'done', 11, 1, now(), 2.5, true FROM generate_series(31, 32) g;

-- Jobs in progress, steered with exclude: two CPU jobs of 11 on host 11
-- (1 GFLOPS each), one GPU job of 11 on host 12 (1 TFLOPS), one CPU job of
-- 12 on host 11.
SELECT is(jsonb_array_length(allot.request_work(11,
              '{"resources": {"cpu": {"req_instances": 2}}, "exclude": [12, 13]}') -> 'jobs'),
          2, 'fixture: host 11 takes two CPU jobs of workload 11');
SELECT is(jsonb_array_length(allot.request_work(12,
              '{"resources": {"nvidia": {"req_instances": 1}}, "exclude": [12, 13]}') -> 'jobs'),
          1, 'fixture: host 12 takes a GPU job of workload 11');
SELECT is(jsonb_array_length(allot.request_work(11,
              '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [11, 13]}') -> 'jobs'),
          1, 'fixture: host 11 takes a CPU job of workload 12');

-- ---------------------------------------------------------------------------
-- As the monitor: every view reads, nothing else does.
SET ROLE allot_test_monitor;
SELECT lives_ok(format('SELECT * FROM allot.%I', name), 'allot_monitor reads allot.' || name)
  FROM status_views;
SELECT throws_ok($$SELECT * FROM allot.host$$, '42501', NULL,
                 'allot_monitor cannot read allot.host (tokens live there)');
SELECT throws_ok($$SELECT * FROM allot.job$$, '42501', NULL, 'allot_monitor cannot read allot.job');
SELECT throws_ok($$SELECT * FROM allot.transitioner_run$$, '42501', NULL,
                 'allot_monitor cannot read the table behind status_transitioner');
SELECT throws_ok($$SELECT * FROM allot.host_credit$$, '42501', NULL,
                 'allot_monitor cannot read allot.host_credit');
SELECT throws_ok($$SELECT * FROM allot.share_history$$, '42501', NULL,
                 'allot_monitor cannot read the table behind status_share_history');
SELECT throws_ok($$SELECT * FROM allot.workload_credit$$, '42501', NULL,
                 'allot_monitor cannot read allot.workload_credit');
SELECT throws_ok($$SELECT allot.run_transitioner()$$, '42501', NULL,
                 'allot_monitor cannot run the transitioner');
SELECT throws_ok($$SELECT allot.request_work(11, '{}')$$, '42501', NULL,
                 'allot_monitor cannot request work');
SELECT throws_ok($$SELECT * FROM allot.fairness_state()$$, '42501', NULL,
                 'allot_monitor cannot call fairness_state');
SELECT throws_ok($$SELECT * FROM allot.check_invariants()$$, '42501', NULL,
                 'allot_monitor cannot call check_invariants');
SELECT throws_ok($$SELECT nextval('allot.transitioner_run_seq')$$, '42501', NULL,
                 'allot_monitor cannot draw run numbers');
SELECT throws_ok($$UPDATE allot.status_transitioner SET credited = 0$$, '42501', NULL,
                 'allot_monitor cannot write through a view');
SELECT throws_ok($$INSERT INTO allot.workload (engine) VALUES ('X')$$, '42501', NULL,
                 'allot_monitor cannot add a workload');
SELECT throws_ok($$DELETE FROM allot.assignment$$, '42501', NULL,
                 'allot_monitor cannot drop assignments');
RESET ROLE;

-- The views read no host secret.
SELECT is((SELECT count(*)::int FROM pg_attribute
            WHERE attrelid = 'allot.status_host'::regclass AND attname IN ('tokens', 'compilers')),
          0, 'status_host has no tokens or compilers column');

-- ---------------------------------------------------------------------------
-- Assignment workloads under allot.fairness = current.  In use: 4 + 8, 2,
-- 16, 0, 4 threads (34 in all; host 6's assignment does not count).  In
-- contention: 1, 2 and 3 (4 has a lower priority, 5 is paused): fair
-- 1000 : 1000 : 2000.
SET allot.fairness = current;
SET allot.balance_engine_throughputs = off;
SET ROLE allot_test_monitor;
SELECT results_eq(
    $$SELECT workload_id, kind, hosts, threads, peak_flops, share, fair_share
        FROM allot.status_workload WHERE kind = 'assignment' ORDER BY workload_id$$,
    $$VALUES (1::bigint, 'assignment', 2, 12::bigint, NULL::float8, 12 / 34::float8, 0.25::float8),
             (2, 'assignment', 1, 2, NULL, 2 / 34::float8, 0.25),
             (3, 'assignment', 1, 16, NULL, 16 / 34::float8, 0.5),
             (4, 'assignment', 0, 0, NULL, 0, 0),
             (5, 'assignment', 1, 4, NULL, 4 / 34::float8, 0)$$,
    'current: hosts, threads, share and fair share of each assignment workload');
SELECT results_eq(
    $$SELECT name, engine, app, priority, state, throughput, fairness, jobs_unsent
        FROM allot.status_workload WHERE workload_id = 4$$,
    $$VALUES ('Eth: long shot'::text, 'Ethereal'::text, NULL::text, -1, 'active'::text,
              1000::float8, 'current'::text, NULL::bigint)$$,
    'a workload''s name, engine, priority, state, throughput and mode');
RESET ROLE;

-- Balancing: Stockfish's two workloads share one engine's throughput.
SET allot.balance_engine_throughputs = on;
SET ROLE allot_test_monitor;
SELECT results_eq(
    $$SELECT fair_share FROM allot.status_workload WHERE kind = 'assignment' ORDER BY workload_id$$,
    $$VALUES (500 / 3000::float8), (500 / 3000::float8), (2000 / 3000::float8), (0), (0)$$,
    'balance_engine_throughputs: fair shares of the effective throughputs 500, 500, 2000');
RESET ROLE;
SET allot.balance_engine_throughputs = off;

-- ---------------------------------------------------------------------------
-- Job workloads.  In progress: 11 holds 2 x 1 GFLOPS + 1 TFLOPS, 12 holds
-- 1 GFLOPS.  In contention: 11 and 12 (13 has no unsent job): 1 : 3.
SET ROLE allot_test_monitor;
SELECT results_eq(
    $$SELECT workload_id, app, hosts, threads, peak_flops, share, fair_share,
             jobs_unsent, jobs_in_progress, jobs_done, jobs_error
        FROM allot.status_workload WHERE kind = 'jobs' ORDER BY workload_id$$,
    $$VALUES (11::bigint, 'folding'::text, NULL::int, NULL::bigint, 1.002e12::float8,
              1.002e12 / 1.003e12::float8, 0.25::float8, 7::bigint, 3::bigint, 0::bigint, 0::bigint),
             (12, 'climate', NULL, NULL, 1e9, 1e9 / 1.003e12::float8, 0.75, 9, 1, 0, 0),
             (13, 'folding', NULL, NULL, 0, 0, 0, 0, 0, 2, 0)$$,
    'current: peak FLOPS in use, shares and job counts of each job workload');
RESET ROLE;
SELECT results_eq(
    $$SELECT workload_id, peak_flops FROM allot.status_workload WHERE kind = 'jobs' ORDER BY 1$$,
    $$SELECT w.id, coalesce(sum(j.peak_flops_per_sec), 0)
        FROM allot.workload w LEFT JOIN allot.job j ON j.workload_id = w.id AND j.state = 'in_progress'
       WHERE w.app_id IS NOT NULL GROUP BY w.id ORDER BY 1$$,
    'peak FLOPS in use equal a recount of the jobs in progress');

-- Reports: host 11 returns one job of 11 done and one in error; host 12 its
-- GPU job done.  Both successes are validated; folding earns
-- mean app units (1) x 3 x 4.32e11 FLOPs / 4.32e11 = 3 credits a job.
SELECT min(id) AS cpu_done, max(id) AS cpu_error FROM allot.job
 WHERE host_id = 11 AND workload_id = 11 AND state = 'in_progress' \gset
SELECT id AS gpu_done FROM allot.job WHERE host_id = 12 AND state = 'in_progress' \gset
SELECT is(allot.report_job(11, :cpu_done, 'success', 1, 3600) ->> 'state', 'done',
          'fixture: host 11 reports a success');
-- No retry for this one: its first error is final.
UPDATE allot.job SET max_error_results = 0 WHERE id = :cpu_error;
SELECT is(allot.report_job(11, :cpu_error, 'error') ->> 'state', 'error',
          'fixture: host 11 reports an error');
SELECT is(allot.report_job(12, :gpu_done, 'success', 1, 7.2) ->> 'state', 'done',
          'fixture: host 12 reports a success');
UPDATE allot.app SET est_flops_per_au = 3 * 4.32e11 WHERE id = 1;
SELECT ok(allot.validate_job(:cpu_done, true) AND allot.validate_job(:gpu_done, true),
          'fixture: both successes are valid');
SELECT allot.run_transitioner() AS reply \gset
SELECT is((:'reply'::jsonb ->> 'credited')::int, 2, 'fixture: the transitioner credits them');

SET ROLE allot_test_monitor;
SELECT results_eq(
    $$SELECT workload_id, jobs_unsent, jobs_in_progress, jobs_done, jobs_error, peak_flops, share
        FROM allot.status_workload WHERE kind = 'jobs' ORDER BY workload_id$$,
    $$VALUES (11::bigint, 7::bigint, 0::bigint, 2::bigint, 1::bigint, 0::float8, 0::float8),
             (12, 9, 1, 0, 0, 1e9, 1), (13, 0, 0, 2, 0, 0, 0)$$,
    'after the reports: done and errored jobs counted, only 12''s job in use');
SELECT results_eq(
    $$SELECT app_id, name, resources, workloads, n_reports, est_flops_per_au, credit_per_job,
             samples_pending, jobs_unsent, jobs_in_progress, jobs_done, jobs_error
        FROM allot.status_app ORDER BY app_id$$,
    $$VALUES (1::bigint, 'folding'::text, '{cpu,nvidia}'::text[], 2::bigint, 2::bigint,
              1.296e12::float8, 3::float8, 2, 7::numeric, 0::numeric, 4::numeric, 1::numeric),
             (2, 'climate', '{cpu}', 1, 0, NULL, NULL, 0, 9, 1, 0, 0)$$,
    'apps: resources, workloads, reports, estimate, credit per job, samples, jobs');
SELECT results_eq(
    $$SELECT host_id, workload_id, assignment_counted, jobs_in_progress, peak_flops_in_progress,
             credit, credited_jobs, coprocessors
        FROM allot.status_host WHERE host_id IN (1, 6, 11, 12) ORDER BY host_id$$,
    $$VALUES (1::bigint, 1::bigint, true, 0::bigint, 0::float8, 0::float8, 0::bigint, NULL::jsonb),
             (6, 2, false, 0, 0, 0, 0, NULL),
             (11, NULL, NULL, 1, 1e9, 3 + 2.5 + 2.5, 3, NULL),
             (12, NULL, NULL, 0, 0, 3, 1, '{"nvidia": 1}')$$,
    'hosts: assignment, jobs in progress, credit (2.5 x 2 loaded, 3 earned) and coprocessors');
RESET ROLE;
SELECT results_eq(
    $$SELECT host_id, credit FROM allot.status_host WHERE credited_jobs > 0 ORDER BY 1$$,
    $$SELECT host_id, sum(credit) FROM allot.job WHERE credit IS NOT NULL GROUP BY 1 ORDER BY 1$$,
    'host credit equals a recount of the jobs');
SELECT is((SELECT last_seen FROM allot.status_host WHERE host_id = 11), now(),
          'a host''s last_seen is when it last asked for work');
SELECT is((SELECT credit FROM allot.job WHERE id = :cpu_done),
          (SELECT credit_per_job FROM allot.status_app WHERE app_id = 1),
          'credit_per_job is what the transitioner granted');

-- Withdrawn credit leaves the host's total; the job goes back to unsent,
-- for another host.
SELECT ok(allot.validate_job(:gpu_done, false), 'fixture: host 12''s job is found invalid');
SELECT results_eq(
    $$SELECT credit, credited_jobs FROM allot.status_host WHERE host_id = 12$$,
    $$VALUES (0::float8, 0::bigint)$$, 'its credit is withdrawn from host 12');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');

-- ---------------------------------------------------------------------------
-- The farm row.
SET ROLE allot_test_monitor;
SELECT results_eq(
    $$SELECT fairness, hosts, active_workloads, assigned_hosts, threads_in_use, peak_flops_in_use,
             jobs_unsent, jobs_in_progress, jobs_done, jobs_error, transitioner_last_run IS NOT NULL
        FROM allot.status_farm$$,
    $$VALUES ('current'::text, 8::bigint, 7::bigint, 5::bigint, 34::numeric, 1e9::float8,
              17::numeric, 1::numeric, 3::numeric, 1::numeric, true)$$,
    'status_farm: hosts, workloads, what is in use, jobs, the last run');
RESET ROLE;

-- ---------------------------------------------------------------------------
-- The transitioner's runs: what each returned, newest first, 100 kept.
SELECT allot.run_transitioner() AS second \gset
SET ROLE allot_test_monitor;
SELECT results_eq(
    $$SELECT jsonb_build_object('timed_out', timed_out, 'expired_assignments', expired_assignments,
                                'reports_read', reports_read, 'flops_samples', flops_samples,
                                'flops_estimates', flops_estimates, 'credited', credited,
                                'debts_folded', debts_folded, 'hosts_seen', hosts_seen,
                                'shares_recorded', shares_recorded, 'shares_deleted', shares_deleted,
                                'purged', purged)
        FROM allot.status_transitioner$$,
    ARRAY[:'second'::jsonb, :'reply'::jsonb],
    'status_transitioner: both runs, newest first, with what each returned');
SELECT ok((SELECT bool_and(now_given = now() AND fairness = 'current' AND duration_ms >= 0
                           AND finished_at >= started_at)
             FROM allot.status_transitioner),
          'each run has its now, mode, times and duration');
RESET ROLE;
SELECT is((SELECT max(run) - min(run) FROM allot.status_transitioner), 1::bigint,
          'runs are numbered one after the other');
SELECT is((SELECT count(*) FROM (SELECT allot.run_transitioner() FROM generate_series(1, 150)) r),
          150::bigint, '150 more runs');
SELECT results_eq(
    $$SELECT count(*), max(run) - min(run), count(DISTINCT slot) FROM allot.transitioner_run$$,
    $$VALUES (100::bigint, 99::bigint, 100::bigint)$$,
    'the last 100 runs are kept, one per slot, and no more');

-- ---------------------------------------------------------------------------
-- recent: the share is of the recent estimated credit, decayed to now.
-- Work handed out under recent writes credit: host 11 takes two more CPU
-- jobs, one of each job workload; host 7 is assigned workload 3.
SET allot.fairness = recent;
SELECT is(jsonb_array_length(allot.request_work(11,
              '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [12, 13]}') -> 'jobs')
          + jsonb_array_length(allot.request_work(11,
              '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [11, 13]}') -> 'jobs'),
          2, 'fixture: under recent, host 11 takes a job of 11 and one of 12');
INSERT INTO allot.host (id, name, threads) VALUES (7, 'g', 8);
SELECT is((SELECT workload_id FROM allot.assign_workload(7, exclude => '{1,2}')), 3::bigint,
          'fixture: under recent, host 7 is assigned workload 3');
-- (Compared as the superuser, who may read the tables too.)
SELECT results_eq(
    $$SELECT workload_id, fairness, rec, share FROM allot.status_workload ORDER BY workload_id$$,
    $$SELECT w.id, 'recent'::text, f.rec,
             coalesce(f.rec / sum(f.rec) OVER (PARTITION BY w.app_id IS NULL), 0)
        FROM allot.workload w
        LEFT JOIN (SELECT workload_id, sum(rec) AS rec FROM allot.fairness_state() GROUP BY 1) f
          ON f.workload_id = w.id
       ORDER BY w.id$$,
    'recent: REC and its share per kind, as fairness_state() decays it');
SELECT ok((SELECT share FROM allot.status_workload WHERE workload_id = 3) = 1
          AND (SELECT share FROM allot.status_workload WHERE workload_id = 11) > 0
          AND (SELECT share FROM allot.status_workload WHERE workload_id = 12) > 0,
          'recent: only workloads given work under recent have a share');

-- debt: share is of what is in use, and the debt is the fold's.  Host 11
-- takes a job of 12 under debt, and the transitioner folds its credit.
SET allot.fairness = debt;
SELECT is(jsonb_array_length(allot.request_work(11,
              '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [11, 13]}') -> 'jobs'),
          1, 'fixture: under debt, host 11 takes a job of 12');
SELECT is((allot.run_transitioner() ->> 'debts_folded')::int > 0, true, 'fixture: debts folded');
SELECT ok((SELECT count(DISTINCT debt) > 1 FROM allot.workload_credit), 'fixture: debts differ');
SELECT results_eq(
    $$SELECT workload_id, debt, share FROM allot.status_workload ORDER BY workload_id$$,
    $$SELECT w.id, f.debt,
             coalesce(coalesce(u.threads + u.focus_threads, ju.mflops * 1e6::float8, 0)
                      / sum(coalesce(u.threads + u.focus_threads, ju.mflops * 1e6::float8, 0))
                            OVER (PARTITION BY w.app_id IS NULL), 0)
        FROM allot.workload w
        LEFT JOIN allot.workload_usage u ON u.workload_id = w.id
        LEFT JOIN (SELECT workload_id, sum(mflops) AS mflops FROM allot.job_usage GROUP BY 1) ju
          ON ju.workload_id = w.id
        LEFT JOIN (SELECT workload_id, sum(debt) AS debt FROM allot.fairness_state() GROUP BY 1) f
          ON f.workload_id = w.id
       ORDER BY w.id$$,
    'debt: the fold''s debt per workload, and the share of what is in use');
SELECT is((SELECT fairness FROM allot.status_transitioner LIMIT 1), 'debt',
          'the last run says it ran under debt');

-- ---------------------------------------------------------------------------
-- check_invariants() covers the new counters: a negative control.
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');
UPDATE allot.job_usage SET done = done + 1 WHERE workload_id = 13;
UPDATE allot.host_credit SET credit = credit + 1 WHERE host_id = 11;
SELECT results_eq(
    $$SELECT * FROM allot.check_invariants()$$,
    $$VALUES ('host 11: host_credit holds credit 9.0 of 3 jobs; its jobs hold 8.0 of 3'::text),
             ('workload 13: job_usage holds unsent 0, in_progress 0, mflops 0, done 3, error 0;'
              ' its jobs hold 0, 0, 0, 2, 0')$$,
    'check_invariants() reports a wrong done count and a wrong host credit');

-- TRUNCATE of the jobs clears both counters.
UPDATE allot.host_credit SET credit = credit - 1 WHERE host_id = 11;
TRUNCATE allot.job, allot.job_report;
SELECT is((SELECT count(*) FROM allot.host_credit) + (SELECT count(*) FROM allot.job_usage),
          0::bigint, 'TRUNCATE allot.job empties job_usage and host_credit');

SELECT * FROM finish();
ROLLBACK;
