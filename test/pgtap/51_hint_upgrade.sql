-- ALTER EXTENSION allot UPDATE from 0.7.0 (to 0.8.0, and on to the current
-- version) gives the farm what CREATE EXTENSION gives it
-- (host.assignment_tid), and assign_workload, one
-- C library for both, works on either side of the update in one session:
-- through the assignment's key before it, and after it through the key
-- once per host, until the host's row says where its assignment is.
--
-- Runs as a superuser in a fresh database with pgtap and allot created (at
-- the current version); it reinstalls allot at 0.7.0 inside its
-- transaction and updates it.
BEGIN;
SELECT plan(8);

-- What schema allot holds, as text (pg_temp.catalog()).
\ir lib/catalog.sql
CREATE TEMP TABLE installed AS SELECT * FROM pg_temp.catalog() c;
SELECT ok(EXISTS (SELECT FROM installed WHERE c LIKE 'host.assignment_tid tid %'),
          'CREATE EXTENSION makes host.assignment_tid');

DROP EXTENSION allot CASCADE;
CREATE EXTENSION allot VERSION '0.7.0';
INSERT INTO allot.workload (id, engine) VALUES (1, 'E');
INSERT INTO allot.host (id, threads) SELECT g, 4 FROM generate_series(1, 2) g;

-- The scans of the assignment's key index one request makes.
\ir lib/key_scans.sql

SELECT is((SELECT sum(pg_temp.key_scans(h, '2026-01-01 00:00:00+00')) FROM generate_series(1, 2) h),
          2::numeric, 'under 0.7.0 two hosts get their assignments');
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:00:10+00'), 1::bigint,
          'and a repeat reads its assignment through the key');

ALTER EXTENSION allot UPDATE;

SELECT set_eq('SELECT * FROM pg_temp.catalog()', 'SELECT * FROM installed',
              'after the update, schema allot is what CREATE EXTENSION makes');
SELECT is((SELECT count(*) FROM allot.host WHERE assignment_tid IS NULL), 2::bigint,
          'the update fills in no hint');
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:00:20+00'), 1::bigint,
          'a host''s first request after it reads through the key');
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:00:30+00'), 0::bigint,
          'and its second where its host''s row now says');
SELECT results_eq(
    $$SELECT host_id, workload_id, seen_at FROM allot.assignment ORDER BY host_id$$,
    $$VALUES (1::bigint, 1::bigint, '2026-01-01 00:00:30+00'::timestamptz),
             (2::bigint, 1::bigint, '2026-01-01 00:00:00+00'::timestamptz)$$,
    'the assignments made under 0.7.0 carry on');

SELECT * FROM finish();
ROLLBACK;
