-- ALTER EXTENSION allot UPDATE from 0.6.0 (through 0.7.0, to the current
-- version) gives the farm what CREATE EXTENSION gives it: the share history's table, view, setting and
-- grants, workload.finished_at and its triggers, the status views' new
-- columns; and run_transitioner, one C library for both, works on either
-- side of the update, in one session.
--
-- Runs as a superuser in a fresh database with pgtap and allot created (at
-- the current version); it reinstalls allot at 0.6.0 inside its
-- transaction and updates it.
BEGIN;
SELECT plan(11);

-- What schema allot holds, as text (pg_temp.catalog()).
\ir lib/catalog.sql
CREATE TEMP TABLE installed AS SELECT * FROM pg_temp.catalog() c;
SELECT ok((SELECT count(*) FROM installed WHERE c LIKE 'share_history %'
                                              OR c LIKE 'status_share_history %'
                                              OR c LIKE 'workload.finished_at %'
                                              OR c LIKE 'allot.share_history_retention %'
                                              OR c LIKE 'dumped: %allot.share_history%') = 5,
          'CREATE EXTENSION makes the history''s table (dumped), view, setting grant and workload.finished_at');

DROP EXTENSION allot CASCADE;
CREATE EXTENSION allot VERSION '0.6.0';
SET allot.assignment_ttl = '1d';
INSERT INTO allot.workload (id, name, engine, state) VALUES
    (1, 'a', 'E', 'active'), (2, 'b', 'F', 'active'), (3, 'done', 'G', 'finished');
INSERT INTO allot.host (id, name, threads) VALUES (1, 'h1', 4), (2, 'h2', 12);
INSERT INTO allot.assignment (host_id, workload_id, threads, focus, assigned_at, seen_at, counted)
VALUES (1, 1, 4, false, '2026-01-01 10:00+00', '2026-01-01 10:00+00', true),
       (2, 2, 12, false, '2026-01-01 10:00+00', '2026-01-01 10:00+00', true);

SELECT is(allot.run_transitioner('2026-01-01 10:00+00') ->> 'shares_recorded', '0',
          'under 0.6.0 the transitioner runs, and has no history to record');
SELECT is(to_regclass('allot.share_history'), NULL, 'and 0.6.0 has no allot.share_history');

ALTER EXTENSION allot UPDATE;

SELECT set_eq('SELECT * FROM pg_temp.catalog()', 'SELECT * FROM installed',
              'after the update, schema allot is what CREATE EXTENSION makes');
SELECT results_eq(
    $$SELECT run, shares_recorded, shares_deleted FROM allot.status_transitioner$$,
    $$VALUES (1::bigint, 0::bigint, 0::bigint)$$,
    'the run recorded under 0.6.0 is kept, with nothing done to a history');
SELECT is((SELECT finished_at FROM allot.workload WHERE id = 3), NULL,
          'a workload finished before the update has no finished_at');

-- In the same session, after the update: the transitioner records shares.
SELECT is(allot.run_transitioner('2026-01-01 10:01:30+00') ->> 'shares_recorded', '2',
          'after the update, in the same session, the transitioner records the two workloads');
SELECT results_eq(
    $$SELECT sampled_at, workload_id, share, fair_share FROM allot.status_share_history ORDER BY 2$$,
    $$VALUES ('2026-01-01 10:01+00'::timestamptz, 1::bigint, 0.25::float8, 0.5::float8),
             ('2026-01-01 10:01+00', 2, 0.75, 0.5)$$,
    'their shares (4 and 12 threads) against their fair shares');
SELECT results_eq(
    $$SELECT run, shares_recorded FROM allot.status_transitioner$$,
    $$VALUES (2::bigint, 2::bigint), (1, 0)$$,
    'and status_transitioner counts them');
UPDATE allot.workload SET state = 'finished' WHERE id = 2;
SELECT is((SELECT finished_at FROM allot.workload WHERE id = 2), now(),
          'a workload finished after the update has its finished_at');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');

SELECT * FROM finish();
ROLLBACK;
