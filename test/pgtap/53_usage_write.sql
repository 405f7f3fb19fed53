-- A switch adds its host's threads to the two usage rows at the rows
-- themselves (src/table_write.c, allot_add_usage), where the UPDATE of
-- src/usage.c would do nothing more: no SQL statement runs, so the usage
-- table's statement trigger (the signal that every backend's copy of the
-- usage is stale) never fires, and the write sends its signal itself.
-- Where the UPDATE would do more (an operator's trigger) or there is no
-- row yet, SQL runs as before.  Every outcome leaves the rows equal to the
-- sums of their counted assignments (check_invariants).
BEGIN;
SELECT plan(15);

SET LOCAL track_functions = 'all';
CREATE FUNCTION pg_temp.signals() RETURNS bigint LANGUAGE sql AS
$$SELECT coalesce(pg_stat_get_xact_function_calls('allot.usage_signal_trigger()'::regprocedure), 0)$$;
CREATE FUNCTION pg_temp.usage() RETURNS TABLE (workload_id bigint, threads bigint, hosts int)
    LANGUAGE sql AS $$SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1$$;

INSERT INTO allot.workload (id, engine) VALUES (1, 'E'), (2, 'F');
INSERT INTO allot.host (id, threads) VALUES (1, 8), (2, 4);

-- The first host of a workload: its usage row does not exist yet, so SQL
-- inserts it, and the statement's trigger signals.
SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:00+00', '{2}')),
          1::bigint, 'host 1 takes workload 1');
SELECT is((SELECT workload_id FROM allot.assign_workload(2, '2026-01-01 00:00:00+00', '{1}')),
          2::bigint, 'host 2 takes workload 2');
SELECT cmp_ok(pg_temp.signals(), '>', 0::bigint, 'the rows were made by SQL, whose trigger fired');
-- The same trigger function signals changes to the watch list of lapsing
-- assignments; a request at 00:01 renews the list first, so that the
-- switch below changes nothing of it.  It reads this backend's copy of the
-- usage (a request without an exclude list), which the switch must make
-- stale.
SELECT is((SELECT workload_id FROM allot.assign_workload(2, '2026-01-01 00:01:00+00', seed => 7)),
          2::bigint, 'host 2 stays on workload 2');
CREATE TEMP TABLE before AS SELECT pg_temp.signals() AS n;

-- A switch of host 1 from workload 1 to workload 2: both rows exist, the
-- threads move at the rows, no statement runs.
SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:01:00+00', '{1}')),
          2::bigint, 'host 1 moves to workload 2');
SELECT results_eq($$SELECT * FROM pg_temp.usage()$$,
                  $$VALUES (1::bigint, 0::bigint, 0), (2, 12, 2)$$,
                  'its threads left workload 1 and joined workload 2');
SELECT is(pg_temp.signals(), (SELECT n FROM before), 'no statement on the usage table ran');
SELECT is((SELECT count(*) FROM allot.check_invariants()), 0::bigint, 'the usage is the sum of the assignments');

-- The signal was sent all the same: the next request of this transaction
-- reads its copy of the usage again.  Host 2 (4 threads) shares workload 2
-- with host 1 (8), and workload 1 is idle: it moves there.  With the copy
-- from before the move, workload 1 would hold host 1 and workload 2 nobody
-- but host 2 itself, and host 2 would stay.
SELECT results_eq(
    $$SELECT workload_id, threads FROM allot.explain_assignment(2, '2026-01-01 00:01:10+00') ORDER BY 1$$,
    $$VALUES (1::bigint, 0::float8), (2, 8)$$,
    'a read of the usage sees the move');
SELECT is((SELECT workload_id FROM allot.assign_workload(2, '2026-01-01 00:01:10+00', seed => 7)),
          1::bigint, 'and host 2 leaves the crowded workload 2 for the idle one');
SELECT is((SELECT count(*) FROM allot.check_invariants()), 0::bigint, 'the usage is still the sum');

-- An operator's trigger on the usage table: the write would skip it, so
-- the UPDATE runs, and the trigger sees each row it changes.
-- (It runs as the role that updates the usage, allot's: it may write.)
CREATE TABLE public.seen (workload_id bigint);
GRANT INSERT ON public.seen TO PUBLIC;
CREATE FUNCTION public.note() RETURNS trigger LANGUAGE plpgsql AS
$$BEGIN INSERT INTO public.seen VALUES (NEW.workload_id); RETURN NULL; END$$;
CREATE TRIGGER operator_note AFTER UPDATE ON allot.workload_usage
    FOR EACH ROW EXECUTE FUNCTION public.note();
TRUNCATE before;
INSERT INTO before SELECT pg_temp.signals();
SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:01:20+00', '{2}')),
          1::bigint, 'host 1 moves back to workload 1');
SELECT bag_eq($$SELECT workload_id FROM public.seen$$, $$VALUES (1::bigint), (2)$$,
              'the operator''s trigger saw both rows change');
SELECT cmp_ok(pg_temp.signals(), '>', (SELECT n FROM before), 'through SQL, whose trigger fired');
SELECT is((SELECT count(*) FROM allot.check_invariants()), 0::bigint, 'the usage is still the sum');

SELECT * FROM finish();
ROLLBACK;
