-- A switch's write of the host's row is heap-only (0.8.1).  A switch writes
-- host.last_workload_id; under 0.8.0 an index held that column, so each
-- switch made a new version of the host's row outside its HOT chain, with
-- an entry in each of allot.host's indexes.  0.8.1 drops the index: the new
-- version stays on its page, in the chain, and no index changes.  The
-- foreign key stays, so a deleted workload still clears its hosts' column.
--
-- Runs as a superuser in a fresh database with pgtap and allot created (at
-- the current version); it reinstalls allot at 0.8.0 inside its
-- transaction and updates it.  The host's page is looked at with
-- pageinspect.
CREATE EXTENSION IF NOT EXISTS pageinspect;
BEGIN;
SELECT plan(8);

\ir lib/catalog.sql
CREATE TEMP TABLE installed AS SELECT * FROM pg_temp.catalog() c;
SELECT is(to_regclass('allot.host_last_workload_idx'), NULL,
          'CREATE EXTENSION makes no index on host.last_workload_id');

-- Whether host h's current row version is heap-only (HEAP_ONLY_TUPLE).
CREATE FUNCTION pg_temp.heap_only(h bigint) RETURNS boolean LANGUAGE sql AS $$
    SELECT (i.t_infomask2 & 32768) <> 0
      FROM allot.host x,
           heap_page_items(get_raw_page('allot.host', (x.ctid::text::point)[0]::int)) i
     WHERE x.id = h AND i.lp = (x.ctid::text::point)[1]::int
$$;

DROP EXTENSION allot CASCADE;
CREATE EXTENSION allot VERSION '0.8.0';
INSERT INTO allot.workload (id, engine) VALUES (1, 'E'), (2, 'F');
INSERT INTO allot.host (id, threads) VALUES (1, 4), (2, 4);
SELECT count(*) FROM allot.assign_workload(1, '2026-01-01 00:00:00+00', ARRAY[2]::bigint[]);

SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:10+00', ARRAY[1]::bigint[])),
          2::bigint, 'under 0.8.0 host 1 switches to workload 2');
SELECT is(pg_temp.heap_only(1), false,
          'and the new version of its row is not heap-only: the index on last_workload_id takes it');

ALTER EXTENSION allot UPDATE;

SELECT set_eq('SELECT * FROM pg_temp.catalog()', 'SELECT * FROM installed',
              'after the update, schema allot is what CREATE EXTENSION makes');
SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:20+00', ARRAY[2]::bigint[])),
          1::bigint, 'after it host 1 switches back to workload 1');
SELECT is(pg_temp.heap_only(1), true, 'and the new version of its row is heap-only');

-- The foreign key without its index: a deleted workload still clears the
-- column (a scan of allot.host), and a workload that does not exist is
-- refused.
DELETE FROM allot.workload WHERE id = 1;
SELECT is((SELECT last_workload_id FROM allot.host WHERE id = 1), NULL,
          'deleting workload 1 clears host 1''s last_workload_id');
SELECT throws_ok($$UPDATE allot.host SET last_workload_id = 99 WHERE id = 2$$, '23503', NULL,
                 'a last_workload_id that names no workload is refused');

SELECT * FROM finish();
ROLLBACK;
