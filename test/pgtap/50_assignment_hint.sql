-- Where a host's assignment is (0.8.0): host.assignment_tid, the TID at
-- which the assignment's HOT chain starts, lets assign_workload read the
-- assignment without its key index.  The hint is checked at every read, so
-- any value there (an operator's, a restore's, a stale one) is safe: it
-- costs one read through the key.  The right place is written with a
-- switch, a new assignment, or where the host's row says nothing.  Which
-- way a request read is counted by PostgreSQL itself: the scans of
-- allot.assignment_pkey in this transaction.
BEGIN;
SELECT plan(31);

-- The scans of the assignment's key index one request makes.
\ir lib/key_scans.sql
-- No assignment lapses here (a request that meets lapsed ones reads them).
SET LOCAL allot.assignment_ttl = '1d';

INSERT INTO allot.workload (id, engine) VALUES (1, 'E'), (2, 'F');
UPDATE allot.workload SET state = 'paused' WHERE id = 2;
INSERT INTO allot.host (id, threads) SELECT g, 4 FROM generate_series(1, 3) g;

-- 1. A new assignment: the host's row says where it was inserted.
SELECT is((SELECT sum(pg_temp.key_scans(g, '2026-01-01 00:00:00+00')) FROM generate_series(1, 3) g),
          3::numeric, 'three first requests look for an assignment through the key');
SELECT is((SELECT count(*) FROM allot.host h JOIN allot.assignment a ON a.host_id = h.id
             WHERE h.assignment_tid = a.ctid),
          3::bigint, 'and each host''s row says where its new assignment is');

-- 2. A repeat reads its assignment where its host's row says, and writes it there.
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:00:10+00'), 0::bigint,
          'a repeat reads its assignment without the key');
SELECT is((SELECT seen_at FROM allot.assignment WHERE host_id = 1),
          '2026-01-01 00:00:10+00'::timestamptz, 'and its seen_at is written');
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:00:20+00', 'allot.host_pkey'), 1::bigint,
          'and its host through the host''s key (the counter counts)');

-- 3. Sixty rounds of repeats in this one transaction: the versions it leaves
-- cannot be pruned while it runs, so the rows move to other pages (updates
-- that are not heap-only start a chain of their own).  A host's row is not
-- written for that: after a move its requests read through the key, right,
-- until its next switch.
CREATE TEMP TABLE first_place AS SELECT host_id, ctid AS root FROM allot.assignment;
CREATE TEMP TABLE host_writes AS
    SELECT pg_stat_get_xact_tuples_updated('allot.host'::regclass) AS before;
SELECT cmp_ok((SELECT sum(pg_temp.key_scans(h, '2026-01-01 00:01:00+00'::timestamptz + r * interval '1 s'))
                 FROM generate_series(1, 60) r, generate_series(1, 3) h),
              '>', 0::numeric, 'repeats after a move read through the key');
SELECT cmp_ok((SELECT count(*) FROM allot.assignment a JOIN first_place f USING (host_id)
                WHERE (a.ctid::text::point)[0] <> (f.root::text::point)[0]),
              '>', 0::bigint, 'some assignments moved to another page');
SELECT is(pg_stat_get_xact_tuples_updated('allot.host'::regclass) - (SELECT before FROM host_writes),
          0::bigint, 'and no host''s row was written for it');
SELECT results_eq(
    $$SELECT count(*), min(seen_at), max(seen_at), bool_and(counted), min(workload_id)
        FROM allot.assignment$$,
    $$VALUES (3::bigint, '2026-01-01 00:02:00+00'::timestamptz, '2026-01-01 00:02:00+00'::timestamptz,
              true, 1::bigint)$$,
    'each assignment has its last seen_at, on workload 1');

-- 4. A switch moves the row (workload_id is indexed); the hint follows it.
UPDATE allot.workload SET state = 'active' WHERE id = 2;
UPDATE allot.workload SET state = 'paused' WHERE id = 1;
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:03:00+00'), 0::bigint,
          'a switch reads its assignment without the key');
SELECT is((SELECT workload_id FROM allot.assignment WHERE host_id = 1), 2::bigint,
          'and moves the host to workload 2');
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:03:10+00'), 0::bigint,
          'the repeat after it finds the moved row without the key');

-- 5. Wrong places, as an operator, a restore or a stale write leaves them:
-- each costs one read through the key, and the request is right.  A place
-- that is only wrong is left to the next switch; where the row says nothing
-- (NULL, or line 0), the place is written back.
SELECT is((SELECT sum(pg_temp.key_scans(h, '2026-01-01 00:04:00+00')) FROM generate_series(2, 3) h),
          2::numeric, 'hosts 2 and 3, whose rows moved in 3, switch through the key');
SELECT is((SELECT sum(pg_temp.key_scans(h, '2026-01-01 00:04:10+00')) FROM generate_series(2, 3) h),
          0::numeric, 'and their switches wrote where the rows are now');
CREATE TEMP TABLE host2 AS SELECT * FROM allot.assignment WHERE host_id = 2;
UPDATE allot.host SET assignment_tid = (SELECT assignment_tid FROM allot.host WHERE id = 2)
 WHERE id = 1;
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:05:00+00'), 1::bigint,
          'another host''s row: read through the key');
SELECT is((SELECT seen_at FROM allot.assignment WHERE host_id = 1),
          '2026-01-01 00:05:00+00'::timestamptz, 'the host''s own row is written');
SELECT set_eq('SELECT * FROM allot.assignment WHERE host_id = 2', 'SELECT * FROM host2',
              'and the other host''s row is not');
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:05:10+00'), 1::bigint,
          'a repeat leaves the wrong place to the next switch');

UPDATE allot.host SET assignment_tid = '(4294967295,1)' WHERE id = 1;
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:06:00+00'), 1::bigint,
          'a block past the table''s end: read through the key');
UPDATE allot.host SET assignment_tid = '(0,65535)' WHERE id = 1;
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:06:10+00'), 1::bigint,
          'a line past the page''s last: read through the key');
-- Where the row was before it moved: versions this transaction replaced.
UPDATE allot.host SET assignment_tid = (SELECT root FROM first_place WHERE host_id = 1)
 WHERE id = 1;
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:06:20+00'), 1::bigint,
          'the row''s old place, all of it replaced: read through the key');
UPDATE allot.host SET assignment_tid = '(0,0)' WHERE id = 1;
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:06:30+00'), 1::bigint,
          'line 0: read through the key');
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:06:40+00'), 0::bigint,
          'and the place written back, as for none');
UPDATE allot.host SET assignment_tid = NULL WHERE id = 1;
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:06:50+00'), 1::bigint,
          'none: read through the key');
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:06:55+00'), 0::bigint,
          'and the place written back');
SELECT results_eq(
    $$SELECT count(*), max(seen_at), min(workload_id) FROM allot.assignment WHERE host_id = 1$$,
    $$VALUES (1::bigint, '2026-01-01 00:06:55+00'::timestamptz, 2::bigint)$$,
    'host 1 still has one assignment, seen last, on workload 2');

-- 6. Nothing fits: the assignment goes, the hint stays behind; when
-- something fits again, the new row is found through the key (not at the
-- hint) and its place written.
UPDATE allot.workload SET state = 'paused' WHERE id = 2;
SELECT is((SELECT count(*) FROM allot.assign_workload(1, '2026-01-01 00:07:00+00')), 0::bigint,
          'nothing fits: no assignment');
UPDATE allot.workload SET state = 'active' WHERE id = 2;
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:07:10+00'), 1::bigint,
          'a deleted row at the hint: the key says there is none');
SELECT is(pg_temp.key_scans(1, '2026-01-01 00:07:20+00'), 0::bigint,
          'the new row''s place was written with it');

SELECT is_empty('SELECT * FROM allot.check_invariants()', 'the invariants hold');
-- Only the operator (and the extension's own functions) may write the column.
SELECT ok(NOT has_column_privilege('allot_web', 'allot.host', 'assignment_tid', 'UPDATE'),
          'the web login may not write a host''s assignment_tid');

SELECT * FROM finish();
ROLLBACK;
