-- A repeat writes its assignment's seen_at without the executor
-- (src/table_write.c).  What it leaves must be what the UPDATE would: the
-- row with seen_at moved and nothing else, an index entry for every
-- version that is not heap-only (amcheck finds each row from each index),
-- no usage or watch change; and where the UPDATE would do more (an
-- operator's trigger, a clock that went back) the UPDATE itself runs.
BEGIN;
SELECT plan(30);

CREATE EXTENSION amcheck;
INSERT INTO allot.workload (id, engine) VALUES (1, 'E');
INSERT INTO allot.host (id, threads) SELECT g, 4 FROM generate_series(1, 40) g;
SELECT is((SELECT count(*) FROM allot.host h, allot.assign_workload(h.id, '2026-01-01 00:00:00+00')),
          40::bigint, 'forty hosts on workload 1');
CREATE TEMP TABLE watch_then AS SELECT host_id FROM allot.assignment_watch;

-- Thirty rounds of repeats in this one transaction: the versions it leaves
-- cannot be pruned while it runs, so the pages fill and later versions go
-- to other pages, each needing index entries of its own.
DO $$
BEGIN
    FOR r IN 1..30 LOOP
        PERFORM allot.assign_workload(h, '2026-01-01 00:00:00+00'::timestamptz + r * interval '1 s')
        FROM generate_series(1, 40) h;
    END LOOP;
END
$$;

SELECT cmp_ok(pg_stat_get_xact_tuples_updated('allot.assignment'::regclass)
              - pg_stat_get_xact_tuples_hot_updated('allot.assignment'::regclass), '>', 0::bigint,
              'some versions were not heap-only');
SELECT results_eq(
    $$SELECT count(*), min(seen_at), max(seen_at), min(assigned_at), max(assigned_at),
             bool_and(counted), min(workload_id), max(threads) FROM allot.assignment$$,
    $$VALUES (40::bigint, '2026-01-01 00:00:30+00'::timestamptz, '2026-01-01 00:00:30+00'::timestamptz,
              '2026-01-01 00:00:00+00'::timestamptz, '2026-01-01 00:00:00+00'::timestamptz,
              true, 1::bigint, 4)$$,
    'each row has its last seen_at and nothing else changed');
SELECT lives_ok($$SELECT bt_index_check('allot.assignment_pkey', true)$$,
                'the key index holds every row');
SELECT lives_ok($$SELECT bt_index_check('allot.assignment_workload_idx', true)$$,
                'the workload index holds every row');
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT is((SELECT count(*) FROM generate_series(1, 40) h
            WHERE EXISTS (SELECT FROM allot.assignment a
                           WHERE a.host_id = h AND a.seen_at = '2026-01-01 00:00:30+00')),
          40::bigint, 'each host finds its latest version through the key');
SELECT is((SELECT count(*) FROM allot.assignment WHERE workload_id = 1),
          40::bigint, 'and through the workload index');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT is((SELECT threads FROM allot.workload_usage WHERE workload_id = 1),
          160::bigint, 'the usage is as it was');
SELECT set_eq($$SELECT host_id FROM allot.assignment_watch$$,
              $$SELECT host_id FROM watch_then$$, 'the watch list is as it was');

-- A clock that went back: the UPDATE runs, seen_at goes back with it.
SELECT is((SELECT repeated FROM allot.assign_workload(1, '2026-01-01 00:00:10+00')),
          true, 'a request from the past is a repeat');
SELECT is((SELECT seen_at FROM allot.assignment WHERE host_id = 1),
          '2026-01-01 00:00:10+00'::timestamptz, 'and its seen_at is written as it says');

-- An operator's CHECK, a NOT VALID one, a generated column (issue 30): the
-- direct write passes none of them by.  A CHECK on seen_at is evaluated on
-- the new row, and a row it refuses is refused as the UPDATE refuses it.
ALTER TABLE allot.assignment ADD CONSTRAINT operator_seen_bound
    CHECK (seen_at < '2026-01-01 00:02:00+00');
SELECT is((SELECT repeated FROM allot.assign_workload(3, '2026-01-01 00:01:00+00')),
          true, 'an operator''s CHECK on seen_at lets a row that meets it be written');
SELECT is((SELECT seen_at FROM allot.assignment WHERE host_id = 3),
          '2026-01-01 00:01:00+00'::timestamptz, 'and writes it');
SELECT throws_ok($$SELECT * FROM allot.assign_workload(3, '2026-01-01 00:02:30+00')$$, '23514',
                 'new row for relation "assignment" violates check constraint "operator_seen_bound"',
                 'a repeat whose row breaks an operator''s CHECK is refused, as the UPDATE refuses it');
ALTER TABLE allot.assignment DROP CONSTRAINT operator_seen_bound;
-- A NOT VALID CHECK that the rows already break (threads 4): the UPDATE
-- checks the new row, so the repeat is refused.
ALTER TABLE allot.assignment ADD CONSTRAINT operator_threads CHECK (threads > 4) NOT VALID;
SELECT throws_ok($$SELECT * FROM allot.assign_workload(4, '2026-01-01 00:01:00+00')$$, '23514',
                 'new row for relation "assignment" violates check constraint "operator_threads"',
                 'a NOT VALID CHECK the row breaks refuses the repeat, as the UPDATE does');
ALTER TABLE allot.assignment DROP CONSTRAINT operator_threads;
-- A stored generated column that reads seen_at is computed again.
ALTER TABLE allot.assignment ADD COLUMN seen_minute int
    GENERATED ALWAYS AS (extract(minute FROM seen_at AT TIME ZONE 'UTC')::int) STORED;
SELECT is((SELECT repeated FROM allot.assign_workload(5, '2026-01-01 00:02:00+00')),
          true, 'host 5 repeats beside a generated column');
SELECT is((SELECT seen_minute FROM allot.assignment WHERE host_id = 5), 2,
          'the generated column that reads seen_at follows it');
ALTER TABLE allot.assignment DROP COLUMN seen_minute;

-- A switch writes host.last_workload_id where it read the row: the key
-- checked as its trigger checks it (the workload's row locked FOR KEY SHARE
-- by this transaction), an index on last_workload_id holding the new
-- version (an operator's: allot has none from 0.8.1), and the host's NOT
-- VALID CHECK evaluated on the new row.
CREATE EXTENSION pgrowlocks;
CREATE INDEX operator_last_workload_idx ON allot.host (last_workload_id);
INSERT INTO allot.workload (id, engine, throughput) VALUES (2, 'F', 1000000);
SELECT is((SELECT workload_id FROM allot.assign_workload(6, '2026-01-01 00:04:00+00')),
          2::bigint, 'host 6 switches to workload 2, whose throughput leaves it owed');
SELECT is((SELECT last_workload_id FROM allot.host WHERE id = 6), 2::bigint,
          'its last_workload_id is 2');
SELECT ok((SELECT 'For Key Share' = ANY (modes) AND pg_current_xact_id()::text::xid = ANY (xids)
             FROM pgrowlocks('allot.workload') WHERE locked_row = (SELECT ctid FROM allot.workload WHERE id = 2)),
          'workload 2''s row is locked FOR KEY SHARE by this transaction, as the key''s check locks it');
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT is((SELECT array_agg(id) FROM allot.host WHERE last_workload_id = 2), ARRAY[6::bigint],
          'the operator''s index on last_workload_id finds host 6 under workload 2');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT lives_ok($$SELECT bt_index_check('allot.operator_last_workload_idx', true)$$,
                'the operator''s index on last_workload_id holds every host row');
ALTER TABLE allot.host ADD CONSTRAINT operator_threads CHECK (threads > 4) NOT VALID;
SELECT throws_ok($$SELECT * FROM allot.assign_workload(7, '2026-01-01 00:04:00+00')$$, '23514',
                 'new row for relation "host" violates check constraint "operator_threads"',
                 'a switch of a host row that breaks a NOT VALID CHECK is refused, as the UPDATE refuses it');
ALTER TABLE allot.host DROP CONSTRAINT operator_threads;

-- A counted assignment that switches is written where it was read too: its
-- usage moves between the two workloads' rows as the usage trigger moves
-- it, assigned_at is the switch's time, the workload index finds the new
-- version; an operator's CHECK on a written column refuses a row that
-- breaks it, as the UPDATE does.
-- (Hosts 9 and 10 were swept by host 6's request at 00:04: counted again
-- on workload 1 first, with workload 2 paused.)
UPDATE allot.workload SET state = 'paused' WHERE id = 2;
SELECT count(*) FROM generate_series(9, 10) h, allot.assign_workload(h, '2026-01-01 00:04:30+00');
UPDATE allot.workload SET state = 'active' WHERE id = 2;
SELECT is((SELECT workload_id FROM allot.assign_workload(9, '2026-01-01 00:05:00+00')),
          2::bigint, 'host 9, counted on workload 1, switches to workload 2');
SELECT results_eq($$SELECT workload_id, assigned_at, seen_at, counted FROM allot.assignment WHERE host_id = 9$$,
                  $$VALUES (2::bigint, '2026-01-01 00:05:00+00'::timestamptz,
                            '2026-01-01 00:05:00+00'::timestamptz, true)$$,
                  'its row is the switch''s: workload 2, assigned and seen at 00:05');
SELECT is((SELECT count(*)::int FROM allot.check_invariants()), 0,
          'the usage rows follow the switch');
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT is((SELECT array_agg(host_id ORDER BY host_id) FROM allot.assignment WHERE workload_id = 2),
          ARRAY[6::bigint, 9], 'the workload index finds the switched row under workload 2');
RESET enable_seqscan;
RESET enable_bitmapscan;
ALTER TABLE allot.assignment ADD CONSTRAINT operator_threads_max CHECK (threads < 4) NOT VALID;
SELECT throws_ok($$SELECT * FROM allot.assign_workload(10, '2026-01-01 00:05:00+00')$$, '23514',
                 'new row for relation "assignment" violates check constraint "operator_threads_max"',
                 'a switch whose row breaks an operator''s CHECK is refused, as the UPDATE refuses it');
ALTER TABLE allot.assignment DROP CONSTRAINT operator_threads_max;
UPDATE allot.workload SET state = 'paused' WHERE id = 2;

-- An operator's trigger on the table: the UPDATE runs, and so the trigger.
CREATE TEMP TABLE touched (host_id bigint, seen_at timestamptz);
GRANT INSERT ON touched TO PUBLIC;                    -- the trigger runs as allot's owner
CREATE FUNCTION pg_temp.note_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO touched VALUES (NEW.host_id, NEW.seen_at);
    RETURN NEW;
END
$$;
CREATE TRIGGER operator_note BEFORE UPDATE ON allot.assignment
    FOR EACH ROW EXECUTE FUNCTION pg_temp.note_touch();
SELECT is((SELECT repeated FROM allot.assign_workload(2, '2026-01-01 00:00:40+00')),
          true, 'host 2 repeats');
SELECT results_eq($$SELECT host_id, seen_at FROM touched$$,
                  $$VALUES (2::bigint, '2026-01-01 00:00:40+00'::timestamptz)$$,
                  'the operator''s trigger saw the write');

SELECT * FROM finish();
ROLLBACK;
