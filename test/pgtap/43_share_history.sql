-- The share history (allot.share_history, allot.status_share_history;
-- docs/status-page.md): what run_transitioner writes each minute, what it
-- deletes, who may read and write it, and a workload's finished_at.
-- Runs as a superuser in a fresh database with pgtap and allot created;
-- virtual time is 2026-01-01, and the login roles made here go with the
-- rollback.
BEGIN;
SELECT plan(50);

CREATE ROLE allot_test_hist_monitor LOGIN IN ROLE allot_monitor;
CREATE ROLE allot_test_hist_web LOGIN IN ROLE allot_web;
CREATE ROLE allot_test_hist_admin LOGIN IN ROLE allot_admin;

-- ---------------------------------------------------------------------------
-- The catalog and the privileges.
SELECT has_table('allot', 'share_history', 'allot.share_history exists');
SELECT has_view('allot', 'status_share_history', 'allot.status_share_history exists');
SELECT is(allot.expire_assignments('2026-01-01 00:00:00+00'), 0::bigint,
          'a first call loads the library, which defines the setting');
SELECT is(current_setting('allot.share_history_retention'), '1d', 'the history is kept a day by default');
SELECT throws_ok($$SET allot.share_history_retention = '32d'$$, '22023', NULL,
                 'and 31 days at most');
SELECT is((SELECT share_history_retention FROM allot.status_settings), interval '1 day',
          'status_settings says so');
SELECT ok(has_table_privilege('allot_test_hist_monitor', 'allot.status_share_history', 'SELECT'),
          'allot_monitor may read status_share_history');
SELECT is((SELECT count(*)::int FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p
            WHERE has_table_privilege('allot_test_hist_monitor', 'allot.share_history', p)
               OR has_table_privilege('allot_test_hist_web', 'allot.share_history', p)
               OR has_table_privilege('public', 'allot.share_history', p)),
          0, 'allot_monitor, allot_web and PUBLIC have no privilege on the table behind it');
SELECT ok(NOT has_table_privilege('allot_test_hist_web', 'allot.status_share_history', 'SELECT')
          AND NOT has_table_privilege('public', 'allot.status_share_history', 'SELECT'),
          'allot_web and PUBLIC may not read the view');
SELECT ok(has_table_privilege('allot_test_hist_admin', 'allot.share_history', 'SELECT, INSERT, UPDATE, DELETE')
          AND has_table_privilege('allot_test_hist_admin', 'allot.status_share_history', 'SELECT'),
          'allot_admin keeps the table''s rows and reads the view');
SELECT ok(current_setting('server_version_num')::int < 150000
          OR has_parameter_privilege('allot_admin', 'allot.share_history_retention', 'SET'),
          'allot_admin may set allot.share_history_retention (PostgreSQL 15)');

-- ---------------------------------------------------------------------------
-- A farm.  Assignment workloads: 1 and 2 active (2 of twice the
-- throughput), 3 paused and idle, 4 paused with a host still on it, 5
-- finished.  Job workloads: 11 active with unsent jobs, 12 active with
-- none.  Hosts 1, 2 on workload 1 (4 + 4 threads), host 3 on 2 (8), host 4
-- on 4 (4).
SET allot.assignment_ttl = '1d';
INSERT INTO allot.workload (id, name, engine, throughput, state) VALUES
    (1, 'SF: a', 'Stockfish', 1000, 'active'), (2, 'SF: b', 'Stockfish', 2000, 'active'),
    (3, 'Eth: paused', 'Ethereal', 1000, 'paused'), (4, 'Eth: held', 'Ethereal', 1000, 'paused'),
    (5, 'Old', 'Berserk', 1000, 'finished');
INSERT INTO allot.host (id, name, threads) VALUES (1, 'a', 4), (2, 'b', 4), (3, 'c', 8), (4, 'd', 4);
INSERT INTO allot.assignment (host_id, workload_id, threads, focus, assigned_at, seen_at, counted)
SELECT h, w, t, false, '2026-01-01 10:00+00', '2026-01-01 10:00+00', true
  FROM (VALUES (1, 1, 4), (2, 1, 4), (3, 2, 8), (4, 4, 4)) v(h, w, t);
INSERT INTO allot.app (id, name) VALUES (1, 'folding');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (11, 'folding batch', 'folding', 1, 1000, '2 days'), (12, 'folding done', 'folding', 1, 1000, '2 days');
INSERT INTO allot.job (workload_id) SELECT 11 FROM generate_series(1, 3);

-- ---------------------------------------------------------------------------
-- Rows written per run: one per workload that is active or has a share or
-- a fair share (1, 2, 4, 11, 12: not the idle paused 3 nor the finished
-- 5), stamped with the minute of the run's now, as status_workload says.
SELECT allot.run_transitioner('2026-01-01 10:00:30+00') AS first \gset
SELECT is((:'first'::jsonb ->> 'shares_recorded')::int, 5, 'the first run records five rows');
SELECT results_eq(
    $$SELECT sampled_at, workload_id, kind, share, fair_share, used
        FROM allot.status_share_history ORDER BY workload_id$$,
    $$SELECT '2026-01-01 10:00+00'::timestamptz, w.workload_id, w.kind, w.share, w.fair_share,
             coalesce(w.threads::float8, w.peak_flops)
        FROM allot.status_workload w WHERE w.workload_id IN (1, 2, 4, 11, 12) ORDER BY w.workload_id$$,
    'the rows are status_workload''s shares, fair shares and use, at the minute of the run');
SELECT results_eq(
    $$SELECT workload_id, share, fair_share FROM allot.share_history WHERE NOT jobs ORDER BY 1$$,
    $$VALUES (1::bigint, 0.4::float8, 1 / 3::float8), (2, 0.4, 2 / 3::float8), (4, 0.2, 0)$$,
    'worked out by hand: threads 8, 8, 4 of 20; fair 1000 and 2000 of 3000');
SELECT results_eq(
    $$SELECT workload_id, share, fair_share FROM allot.share_history WHERE jobs ORDER BY 1$$,
    $$VALUES (11::bigint, 0::float8, 1::float8), (12, 0, 0)$$,
    'job workloads: 11 alone in contention, 12 active but without a job (before 0.7.0 it took half)');

SELECT allot.run_transitioner('2026-01-01 10:00:59+00') AS again \gset
SELECT is((:'again'::jsonb ->> 'shares_recorded')::int, 0, 'a second run in the same minute records nothing');
SELECT is((SELECT count(*)::int FROM allot.share_history), 5, 'the table still holds five rows');
SELECT results_eq(
    $$SELECT shares_recorded, shares_deleted FROM allot.status_transitioner ORDER BY run$$,
    $$VALUES (5::bigint, 0::bigint), (0, 0)$$,
    'status_transitioner counts what each run did to the history');

-- The next minute, after host 4 left workload 4: a row fewer.
DELETE FROM allot.assignment WHERE host_id = 4;
SELECT is((allot.run_transitioner('2026-01-01 10:01:00+00') ->> 'shares_recorded')::int, 4,
          'the next minute records four rows: the paused workload 4 no longer holds a host');
SELECT results_eq(
    $$SELECT workload_id, share FROM allot.status_share_history
       WHERE sampled_at = '2026-01-01 10:01+00' AND kind = 'assignment' ORDER BY 1$$,
    $$VALUES (1::bigint, 0.5::float8), (2, 0.5)$$,
    'and the shares moved: 8 and 8 threads of 16');

-- The minute is UTC, whatever the session's time zone: St John's is 3:30
-- behind UTC, and Kolkata 5:30 ahead.
SET TIME ZONE 'America/St_Johns';
SELECT allot.run_transitioner('2026-01-01 10:02:45+00');
SET TIME ZONE 'Asia/Kolkata';
SELECT allot.run_transitioner('2026-01-01 10:02:59+00');
RESET TIME ZONE;
SELECT results_eq(
    $$SELECT sampled_at, count(*) FROM allot.share_history
       WHERE sampled_at >= '2026-01-01 10:02+00' GROUP BY 1$$,
    $$VALUES ('2026-01-01 10:02+00'::timestamptz, 4::bigint)$$,
    'two runs of one minute in sessions of different time zones write one minute''s rows');

-- The name comes from the workload; the view reads it for the monitor.
SET ROLE allot_test_hist_monitor;
SELECT results_eq(
    $$SELECT DISTINCT name FROM allot.status_share_history WHERE workload_id = 2$$,
    $$VALUES ('SF: b'::text)$$, 'the monitor reads the history, with the workload''s name');
SELECT throws_ok($$SELECT * FROM allot.share_history$$, '42501', NULL,
                 'the monitor cannot read the table behind the view');
SELECT throws_ok($$UPDATE allot.share_history SET share = 1$$, '42501', NULL,
                 'nor write it');
SELECT throws_ok($$SET allot.share_history_retention = '1h'$$, '42501', NULL,
                 'nor set the retention');
RESET ROLE;
SET ROLE allot_test_hist_web;
SELECT throws_ok($$SELECT * FROM allot.status_share_history$$, '42501', NULL,
                 'a web login cannot read the history');
SELECT throws_ok($$INSERT INTO allot.share_history VALUES (now(), 1, 1, 1, 1, false)$$, '42501', NULL,
                 'nor write it');
SELECT throws_ok($$SELECT allot.run_transitioner()$$, '42501', NULL, 'nor run the transitioner');
RESET ROLE;

-- ---------------------------------------------------------------------------
-- Bounded: at most allot.transitioner_batch rows written a run, the
-- largest shares first.
SET allot.transitioner_batch = 2;
SELECT is((allot.run_transitioner('2026-01-01 10:03:00+00') ->> 'shares_recorded')::int, 2,
          'with transitioner_batch = 2, a run records two rows');
SELECT results_eq(
    $$SELECT workload_id FROM allot.share_history WHERE sampled_at = '2026-01-01 10:03+00' ORDER BY 1$$,
    $$VALUES (2::bigint), (11)$$,
    'those of the largest share or fair share (2: 0.5 and 2/3; 11: fair 1)');
RESET allot.transitioner_batch;

-- Bounded retention: rows older than allot.share_history_retention go,
-- at most allot.transitioner_batch a run, the oldest first.
SELECT is((SELECT count(*)::int FROM allot.share_history), 15, 'fixture: 15 rows over four minutes');
SET allot.share_history_retention = '2min';
SET allot.transitioner_batch = 3;
SELECT allot.run_transitioner('2026-01-01 10:04:10+00') AS pruned \gset
SELECT is((:'pruned'::jsonb ->> 'shares_deleted')::int, 3,
          'with a retention of 2 min, a run at 10:04 deletes three rows (its batch)');
SELECT is((SELECT count(*)::int FROM allot.share_history WHERE sampled_at = '2026-01-01 10:00+00'), 2,
          'the oldest first: three of 10:00''s five');
SELECT is((SELECT shares_deleted FROM allot.status_transitioner LIMIT 1), 3::bigint,
          'status_transitioner counts them');
SELECT is((SELECT sum((allot.run_transitioner('2026-01-01 10:04:20+00') ->> 'shares_deleted')::int)
             FROM generate_series(1, 4)), 6::bigint,
          'the next runs delete the other six rows older than 10:02, three at most each');
SELECT is((SELECT min(sampled_at) FROM allot.share_history), '2026-01-01 10:02+00'::timestamptz,
          'what is left is within the retention');
RESET allot.transitioner_batch;

-- Over three hours of runs a minute apart, with an hour's retention, the
-- table holds the last hour: 61 minutes.
SET allot.share_history_retention = '1h';
SELECT is((SELECT count(*) FROM (SELECT allot.run_transitioner('2026-01-01 10:05+00'::timestamptz
                                                               + make_interval(mins => m))
                                   FROM generate_series(0, 180) m) r), 181::bigint,
          'fixture: 181 runs, a minute apart');
SELECT results_eq(
    $$SELECT count(DISTINCT sampled_at), min(sampled_at), max(sampled_at), count(*) FROM allot.share_history$$,
    $$VALUES (61::bigint, '2026-01-01 12:05+00'::timestamptz, '2026-01-01 13:05+00'::timestamptz, 61 * 4::bigint)$$,
    'an hour''s retention keeps 61 minutes of four rows');

-- A retention of 0 keeps nothing: no row is written, and the old ones go.
SET allot.share_history_retention = 0;
SELECT allot.run_transitioner('2026-01-01 13:06+00') AS off \gset
SELECT is((:'off'::jsonb ->> 'shares_recorded')::int, 0, 'a retention of 0 records nothing');
SELECT is((SELECT count(*)::int FROM allot.share_history), 0, 'and deletes every older row');
RESET allot.share_history_retention;

-- Under recent, used is the recent estimated credit, as the share is.
SET allot.fairness = recent;
INSERT INTO allot.host (id, name, threads, cpu_flops) VALUES (7, 'cruncher', 4, 1e9);
SELECT is(jsonb_array_length(allot.request_work(7, '{"resources": {"cpu": {"req_instances": 1}}}',
                                                '2026-01-01 13:07+00') -> 'jobs'),
          1, 'fixture: under recent, a host takes a job of workload 11');
SELECT allot.run_transitioner('2026-01-01 13:07+00');
SELECT results_eq(
    $$SELECT workload_id, used, share FROM allot.share_history WHERE jobs ORDER BY 1$$,
    $$SELECT workload_id, coalesce(rec, 0), share FROM allot.status_workload WHERE kind = 'jobs' ORDER BY 1$$,
    'under recent, used and share are of the recent estimated credit');
SELECT ok((SELECT used > 0 AND share = 1 FROM allot.share_history WHERE workload_id = 11),
          'workload 11, which sent a job under recent, has it all');
RESET allot.fairness;

-- A minute is the first run's: a workload that arrives within it is
-- sampled from the next minute on.
SELECT allot.run_transitioner('2026-01-01 13:08:00+00');
INSERT INTO allot.workload (id, name, engine, throughput) VALUES (8, 'new', 'Berserk', 1000);
SELECT is((allot.run_transitioner('2026-01-01 13:08:40+00') ->> 'shares_recorded')::int, 0,
          'a run later in the minute records nothing, not even the workload that arrived');
SELECT allot.run_transitioner('2026-01-01 13:09:00+00');
SELECT results_eq(
    $$SELECT sampled_at, workload_id, fair_share FROM allot.share_history
       WHERE sampled_at >= '2026-01-01 13:08+00' AND NOT jobs ORDER BY 1, 2$$,
    $$VALUES ('2026-01-01 13:08+00'::timestamptz, 1::bigint, 1 / 3::float8),
             ('2026-01-01 13:08+00', 2, 2 / 3::float8),
             ('2026-01-01 13:09+00', 1, 0.25), ('2026-01-01 13:09+00', 2, 0.5),
             ('2026-01-01 13:09+00', 8, 0.25)$$,
    'the next minute has it: fair shares 1000, 2000 and 1000 of 4000');

-- ---------------------------------------------------------------------------
-- finished_at: set when a workload becomes finished, kept while it stays
-- so, cleared when it comes back; an INSERT may bring its own.
SELECT is((SELECT finished_at FROM allot.workload WHERE id = 5), now(),
          'a workload inserted finished is finished now');
UPDATE allot.workload SET finished_at = '2025-12-31 00:00+00' WHERE id = 5;
UPDATE allot.workload SET state = 'active' WHERE id = 1;
SELECT results_eq(
    $$SELECT id, finished_at FROM allot.workload WHERE id IN (1, 5) ORDER BY id$$,
    $$VALUES (1::bigint, NULL::timestamptz), (5, '2025-12-31 00:00+00')$$,
    'an operator may set when a finished workload finished; an active one has none');
UPDATE allot.workload SET state = 'finished' WHERE id = 1;
UPDATE allot.workload SET throughput = 1500 WHERE id = 1;
SELECT is((SELECT finished_at FROM allot.workload WHERE id = 1), now(),
          'finishing sets finished_at, and another change keeps it');
UPDATE allot.workload SET state = 'paused' WHERE id = 1;
SELECT is((SELECT finished_at FROM allot.workload WHERE id = 1), NULL,
          'leaving finished clears it');
INSERT INTO allot.workload (id, engine, state, finished_at) VALUES (6, 'E', 'finished', '2025-06-01 00:00+00');
SELECT results_eq(
    $$SELECT workload_id, finished_at FROM allot.status_workload WHERE state = 'finished' ORDER BY 1$$,
    $$VALUES (5::bigint, '2025-12-31 00:00+00'::timestamptz), (6, '2025-06-01 00:00+00')$$,
    'a restored row keeps its finished_at, and status_workload shows it');

SELECT * FROM finish();
ROLLBACK;
