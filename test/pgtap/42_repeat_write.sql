-- A repeat writes its assignment's seen_at without the executor
-- (src/table_write.c).  What it leaves must be what the UPDATE would: the
-- row with seen_at moved and nothing else, an index entry for every
-- version that is not heap-only (amcheck finds each row from each index),
-- no usage or watch change; and where the UPDATE would do more (an
-- operator's trigger, a clock that went back) the UPDATE itself runs.
BEGIN;
SELECT plan(13);

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
