-- Bad arguments to the assignment functions (docs/errors.md): each is an
-- ERROR with a stable SQLSTATE and a message that names the value, and leaves
-- no trace.  Also: a transaction that fails after assigning leaves nothing
-- behind, and repeated heartbeats and releases are harmless.
-- Rows a table rejects (CHECK constraints) are in 11_bad_rows.sql.
--
-- The harness runs this file in a fresh database with pgtap and allot
-- created.  "Unchanged" compares every row of every allot table, as text,
-- with a snapshot taken before the bad call.
BEGIN;
SELECT plan(84);

-- ---------------------------------------------------------------------------
-- Fixture.  Explicit ids keep the statements below readable; virtual time
-- 2026-01-01 00:00 UTC.  Host 103 has no assignment.
INSERT INTO allot.engine (name, compiler, compiler_min) VALUES ('Stockfish', 'gcc', '10.2');
INSERT INTO allot.engine (name) VALUES ('Ethereal');
INSERT INTO allot.workload (id, name, engine, throughput) VALUES
    (11, 'sf-dev', 'Stockfish', 1000),
    (12, 'eth-dev', 'Ethereal', 2000);
INSERT INTO allot.workload (id, name, engine, state) VALUES (13, 'sf-old', 'Stockfish', 'paused');
INSERT INTO allot.host (id, name, os, compilers, threads, physical_cores, sockets) VALUES
    (101, 'h1', 'Linux', '{"gcc": "12.2.0"}', 8, NULL, 1),
    (102, 'h2', 'Linux', '{"gcc": "12.2.0"}', 16, 8, 2),
    (103, 'h3', 'Windows', '{"gcc": "12.2.0"}', 4, NULL, 1);

CREATE TEMP TABLE fixture_assigned ON COMMIT DROP AS
SELECT 101 AS host_id, a.* FROM allot.assign_workload(101, '2026-01-01 00:00:00+00', seed => 1) a
UNION ALL
SELECT 102, a.* FROM allot.assign_workload(102, '2026-01-01 00:00:10+00', seed => 2) a;

SELECT is((SELECT count(*) FROM allot.assignment), 2::bigint,
          'fixture: hosts 101 and 102 hold an assignment');

-- Every row of every allot table, and unchanged(description).
\ir lib/state.sql

SELECT is_empty('SELECT * FROM allot.check_invariants()', 'fixture: invariants hold');

-- ---------------------------------------------------------------------------
-- Unknown host: P0002, "host N does not exist".
SELECT throws_ok($$SELECT * FROM allot.assign_workload(424242, '2026-01-01 00:01:00+00')$$,
                 'P0002', 'host 424242 does not exist', 'assign_workload: unknown host');
SELECT pg_temp.unchanged('assign_workload: unknown host changes nothing');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'assign_workload: unknown host, invariants hold');

SELECT throws_ok($$SELECT * FROM allot.explain_assignment(424242, '2026-01-01 00:01:00+00')$$,
                 'P0002', 'host 424242 does not exist', 'explain_assignment: unknown host');
SELECT pg_temp.unchanged('explain_assignment: unknown host changes nothing');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'explain_assignment: unknown host, invariants hold');

SELECT throws_ok($$SELECT allot.heartbeat(424242, '2026-01-01 00:01:00+00')$$,
                 'P0002', 'host 424242 does not exist', 'heartbeat: unknown host');
SELECT pg_temp.unchanged('heartbeat: unknown host changes nothing');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'heartbeat: unknown host, invariants hold');

SELECT throws_ok($$SELECT allot.release_assignment(424242)$$,
                 'P0002', 'host 424242 does not exist', 'release_assignment: unknown host');
SELECT pg_temp.unchanged('release_assignment: unknown host changes nothing');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'release_assignment: unknown host, invariants hold');

-- Ids at the edges of bigint are named as given.
SELECT throws_ok($$SELECT * FROM allot.assign_workload(-1, '2026-01-01 00:01:00+00')$$,
                 'P0002', 'host -1 does not exist', 'assign_workload: negative host id');
SELECT throws_ok($$SELECT allot.heartbeat(9223372036854775807, '2026-01-01 00:01:00+00')$$,
                 'P0002', 'host 9223372036854775807 does not exist', 'heartbeat: largest bigint host id');
SELECT pg_temp.unchanged('edge host ids change nothing');

-- ---------------------------------------------------------------------------
-- NULL host_id and NULL now: 22004; an infinite now: 22023.
SELECT throws_ok($$SELECT * FROM allot.assign_workload(NULL, '2026-01-01 00:01:00+00')$$,
                 '22004', 'host_id must not be NULL', 'assign_workload: NULL host_id');
SELECT throws_ok($$SELECT * FROM allot.assign_workload(101, NULL)$$,
                 '22004', 'now must not be NULL', 'assign_workload: NULL now');
SELECT throws_ok($$SELECT * FROM allot.assign_workload(101, 'infinity')$$,
                 '22023', 'now must be a timestamp between 1970-01-01 and 9999-12-31, not infinity', 'assign_workload: now infinity');
SELECT throws_ok($$SELECT * FROM allot.assign_workload(101, '-infinity')$$,
                 '22023', 'now must be a timestamp between 1970-01-01 and 9999-12-31, not -infinity', 'assign_workload: now -infinity');
SELECT pg_temp.unchanged('assign_workload: NULL or infinite arguments change nothing');

SELECT throws_ok($$SELECT * FROM allot.explain_assignment(NULL, '2026-01-01 00:01:00+00')$$,
                 '22004', 'host_id must not be NULL', 'explain_assignment: NULL host_id');
SELECT throws_ok($$SELECT * FROM allot.explain_assignment(101, NULL)$$,
                 '22004', 'now must not be NULL', 'explain_assignment: NULL now');
SELECT throws_ok($$SELECT * FROM allot.explain_assignment(101, 'infinity')$$,
                 '22023', 'now must be a timestamp between 1970-01-01 and 9999-12-31, not infinity', 'explain_assignment: now infinity');
SELECT pg_temp.unchanged('explain_assignment: NULL or infinite arguments change nothing');

SELECT throws_ok($$SELECT allot.heartbeat(NULL, '2026-01-01 00:01:00+00')$$,
                 '22004', 'host_id must not be NULL', 'heartbeat: NULL host_id');
SELECT throws_ok($$SELECT allot.heartbeat(101, NULL)$$,
                 '22004', 'now must not be NULL', 'heartbeat: NULL now');
SELECT throws_ok($$SELECT allot.heartbeat(101, 'infinity')$$,
                 '22023', 'now must be a timestamp between 1970-01-01 and 9999-12-31, not infinity', 'heartbeat: now infinity');
SELECT pg_temp.unchanged('heartbeat: NULL or infinite arguments change nothing');

SELECT throws_ok($$SELECT allot.release_assignment(NULL)$$,
                 '22004', 'host_id must not be NULL', 'release_assignment: NULL host_id');
SELECT pg_temp.unchanged('release_assignment: NULL host_id changes nothing');

-- expire_assignments takes now like the others: NULL is an error, not a
-- silent NULL result (a scheduled sweep must not "succeed" doing nothing).
SELECT throws_ok($$SELECT allot.expire_assignments(NULL)$$,
                 '22004', 'now must not be NULL', 'expire_assignments: NULL now');
SELECT throws_ok($$SELECT allot.expire_assignments('infinity')$$,
                 '22023', 'now must be a timestamp between 1970-01-01 and 9999-12-31, not infinity', 'expire_assignments: now infinity');
SELECT pg_temp.unchanged('expire_assignments: NULL or infinite now changes nothing');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'NULL and infinite arguments: invariants hold');

-- ---------------------------------------------------------------------------
-- Malformed exclude: 2-D is 2202E, a NULL element is 22004.
SELECT throws_ok($$SELECT * FROM allot.assign_workload(101, '2026-01-01 00:01:00+00', '{{1,2},{3,4}}')$$,
                 '2202E', 'exclude must be a one-dimensional array of workload ids, not 2-dimensional',
                 'assign_workload: two-dimensional exclude');
SELECT throws_ok($$SELECT * FROM allot.assign_workload(101, '2026-01-01 00:01:00+00', '{11,NULL}')$$,
                 '22004', 'exclude must not contain NULL (element 2)',
                 'assign_workload: exclude containing NULL');
SELECT pg_temp.unchanged('assign_workload: malformed exclude changes nothing');
SELECT throws_ok($$SELECT * FROM allot.explain_assignment(101, '2026-01-01 00:01:00+00', '{{1,2},{3,4}}')$$,
                 '2202E', 'exclude must be a one-dimensional array of workload ids, not 2-dimensional',
                 'explain_assignment: two-dimensional exclude');
SELECT throws_ok($$SELECT * FROM allot.explain_assignment(101, '2026-01-01 00:01:00+00', '{NULL}')$$,
                 '22004', 'exclude must not contain NULL (element 1)',
                 'explain_assignment: exclude containing NULL');
SELECT pg_temp.unchanged('explain_assignment: malformed exclude changes nothing');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'malformed exclude: invariants hold');

-- A NULL exclude means "exclude nothing".
SELECT results_eq(
    $$SELECT * FROM allot.explain_assignment(103, '2026-01-01 00:01:00+00', NULL) ORDER BY workload_id$$,
    $$SELECT * FROM allot.explain_assignment(103, '2026-01-01 00:01:00+00', '{}') ORDER BY workload_id$$,
    'explain_assignment: NULL exclude is the same as an empty one');
SELECT is((SELECT count(*) FROM allot.explain_assignment(103, '2026-01-01 00:01:00+00', NULL)),
          2::bigint, 'explain_assignment: NULL exclude reports both active workloads');

-- ---------------------------------------------------------------------------
-- A transaction that fails after assigning leaves no assignment.

-- (a) Work done under a savepoint, then ROLLBACK TO SAVEPOINT (what a client
-- does when a later statement of its transaction fails).  psql variables
-- survive the rollback; pgTAP's own counters would not, so no test runs
-- inside the savepoint.
SAVEPOINT before_assign;
SELECT count(*) AS tx_rows FROM allot.assign_workload(103, '2026-01-01 00:01:00+00', seed => 5) \gset
SELECT count(*) AS tx_released FROM allot.release_assignment(101) r WHERE r \gset
SELECT count(*) AS tx_reassigned FROM allot.assign_workload(102, '2026-01-01 00:01:00+00', '{11,12}', 6) \gset
SELECT allot.expire_assignments('2026-01-02 00:00:00+00') AS tx_expired \gset
SELECT count(*) AS tx_counted FROM allot.assignment WHERE counted \gset
ROLLBACK TO SAVEPOINT before_assign;

SELECT is(:tx_rows::int, 1, 'savepoint: assign_workload(103) had returned a workload');
SELECT is(:tx_released::int, 1, 'savepoint: release_assignment(101) had released');
SELECT is(:tx_reassigned::int, 0, 'savepoint: host 102, everything excluded, had got nothing');
SELECT is(:tx_expired::int, 1, 'savepoint: expire_assignments had expired host 103');
SELECT is(:tx_counted::int, 0, 'savepoint: no counted assignment was left');
SELECT pg_temp.unchanged('ROLLBACK TO SAVEPOINT leaves every table as before');
SELECT is_empty('SELECT * FROM allot.assignment WHERE host_id = 103',
                'ROLLBACK TO SAVEPOINT: host 103 holds no assignment');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'ROLLBACK TO SAVEPOINT: invariants hold');

-- (b) The same work, then an error in the same transaction.
SELECT throws_ok($sql$
    DO $do$
    BEGIN
        PERFORM * FROM allot.assign_workload(103, '2026-01-01 00:01:00+00', seed => 5);
        PERFORM * FROM allot.assign_workload(101, '2026-01-01 00:01:00+00', '{11}', 7);
        PERFORM allot.heartbeat(102, '2026-01-01 00:01:30+00');
        PERFORM allot.release_assignment(102);
        PERFORM allot.expire_assignments('2026-01-02 00:00:00+00');
        INSERT INTO allot.workload (engine, throughput) VALUES ('Stockfish', 0);
    END
    $do$$sql$,
    '23514', 'new row for relation "workload" violates check constraint "workload_throughput_positive_finite"',
    'assign, heartbeat, release, expire, then a failing statement: the error surfaces');
SELECT pg_temp.unchanged('failed transaction: every table as before');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'failed transaction: invariants hold');

-- (c) A workload added in a failed transaction is not served afterwards
-- (the per-backend workload cache must not keep it).  At priority 9 it wins
-- inside; the error reports what was assigned.
SELECT throws_ok($sql$
    DO $do$
    DECLARE w bigint;
    BEGIN
        INSERT INTO allot.workload (id, name, engine, priority) VALUES (99, 'ghost', 'Ethereal', 9);
        SELECT workload_id INTO w FROM allot.assign_workload(103, '2026-01-01 00:01:00+00', seed => 5);
        RAISE EXCEPTION 'assigned workload %, now failing', w;
    END
    $do$$sql$,
    'P0001', 'assigned workload 99, now failing',
    'a new workload assigned in a failed transaction');
SELECT pg_temp.unchanged('failed transaction with a new workload: every table as before');
SELECT is_empty($$SELECT * FROM allot.explain_assignment(103, '2026-01-01 00:01:00+00') WHERE workload_id = 99$$,
                'the rolled-back workload is not offered afterwards');

-- ---------------------------------------------------------------------------
-- Repeated heartbeats and releases are harmless.
SELECT is(allot.heartbeat(101, '2026-01-01 00:01:00+00'), true, 'heartbeat: host 101 holds an assignment');
UPDATE snapshot SET state = pg_temp.allot_state();
SELECT is(allot.heartbeat(101, '2026-01-01 00:01:00+00'), true, 'heartbeat repeated: still true');
SELECT pg_temp.unchanged('heartbeat repeated: nothing changes');
SELECT is(allot.heartbeat(101, '2026-01-01 00:00:30+00'), true, 'heartbeat replayed with an older now: true');
SELECT pg_temp.unchanged('heartbeat with an older now does not move seen_at or last_seen back');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'repeated heartbeats: invariants hold');

SELECT is(allot.release_assignment(101), true, 'release: host 101 had an assignment');
SELECT is_empty('SELECT * FROM allot.assignment WHERE host_id = 101', 'release: its row is gone');
UPDATE snapshot SET state = pg_temp.allot_state();
SELECT is(allot.release_assignment(101), false, 'release repeated: false');
SELECT pg_temp.unchanged('release repeated: nothing changes');
SELECT is(allot.heartbeat(101, '2026-01-01 00:01:10+00'), false, 'heartbeat after release: false');
SELECT is_empty('SELECT * FROM allot.assignment WHERE host_id = 101',
                'heartbeat after release does not bring the assignment back');
SELECT is(allot.release_assignment(103), false, 'release of a host that never had an assignment: false');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'repeated releases: invariants hold');

-- A sweep repeated at the same now expires nothing more.
SELECT is(allot.expire_assignments('2026-01-01 01:00:00+00'), 1::bigint, 'expire: host 102 expires');
UPDATE snapshot SET state = pg_temp.allot_state();
SELECT is(allot.expire_assignments('2026-01-01 01:00:00+00'), 0::bigint, 'expire repeated: nothing more');
SELECT pg_temp.unchanged('expire repeated: nothing changes');
SELECT is(allot.release_assignment(102), true, 'release of an expired (uncounted) assignment: true');
SELECT is(allot.release_assignment(102), false, 'and repeated: false');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'repeated sweeps: invariants hold');

-- ---------------------------------------------------------------------------
-- After all those failures the functions still work, and a NULL exclude is
-- accepted as empty.
SELECT isnt_empty($$SELECT * FROM allot.assign_workload(103, '2026-01-01 00:02:00+00', NULL, 5)$$,
                  'assign_workload: NULL exclude is accepted and a workload is returned');
SELECT ok((SELECT workload_id IN (11, 12) FROM allot.assignment WHERE host_id = 103),
          'host 103 is on a workload that exists (not the rolled-back 99)');
SELECT isnt_empty($$SELECT * FROM allot.assign_workload(101, '2026-01-01 00:02:00+00', NULL, NULL)$$,
                  'assign_workload: NULL exclude and NULL seed are accepted');
SELECT is((SELECT count(*) FROM allot.assignment WHERE counted), 2::bigint,
          'hosts 101 and 103 hold counted assignments');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'at the end: invariants hold');

SELECT * FROM finish();
ROLLBACK;
