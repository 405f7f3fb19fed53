-- A request reads the host, its assignment, the usage rows and the watch
-- list of lapsing assignments without the executor (src/table_read.c).
-- What it reads must be what a SELECT would: the lapsed assignments of the
-- watch list subtracted, for a request that writes and for one that only
-- reads; the privileges a SELECT needs; and a column an operator changed
-- the type of or renamed refused by name, never misread.
BEGIN;
SELECT plan(29);

INSERT INTO allot.workload (id, engine) VALUES (1, 'E'), (2, 'F');
INSERT INTO allot.host (id, threads) VALUES (1, 16), (2, 2), (3, 4), (4, 4), (5, 4);

-- Host 1 on workload 1 at 00:00:00, host 2 on workload 2 at 00:01:40; each
-- request that finds the watch list short of its cutoff rebuilds it, so
-- after the second the list watches every assignment seen before 00:00:10.
SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:00+00', '{2}', 1)),
          1::bigint, 'host 1 takes workload 1');
SELECT is((SELECT workload_id FROM allot.assign_workload(2, '2026-01-01 00:01:40+00', '{1}', 1)),
          2::bigint, 'host 2 takes workload 2');
SELECT is((SELECT watched_below FROM allot.assignment_horizon),
          '2026-01-01 00:00:10+00'::timestamptz, 'the list watches up to 00:00:10');
SELECT is((SELECT array_agg(host_id) FROM allot.assignment_watch w
             JOIN allot.assignment_horizon h USING (generation)),
          '{1}'::bigint[], 'and holds host 1');

-- At 00:02:10 host 1 was last seen 130 s ago: it no longer counts, though
-- allot.workload_usage still holds its 16 threads until a sweep.
SELECT is((SELECT threads FROM allot.workload_usage WHERE workload_id = 1),
          16::bigint, 'the usage row still counts host 1');
SELECT results_eq(
    $$SELECT workload_id, threads FROM allot.explain_assignment(3, '2026-01-01 00:02:10+00') ORDER BY 1$$,
    $$VALUES (1::bigint, 0::float8), (2, 2)$$,
    'a read subtracts the lapsed assignment it finds in the list');
-- A request with an exclude list reads the candidates' usage whole, and
-- sweeps the lapsed hosts that read found in the list as well.
SAVEPOINT excluding;
SELECT is((SELECT workload_id FROM allot.assign_workload(3, '2026-01-01 00:02:10+00', '{2}', 1)),
          1::bigint, 'a request with an exclude list takes workload 1');
SELECT is((SELECT counted FROM allot.assignment WHERE host_id = 1), false,
          'and sweeps host 1, which its read found lapsed');
ROLLBACK TO excluding;
SELECT is((SELECT workload_id FROM allot.assign_workload(3, '2026-01-01 00:02:10+00', seed => 1)),
          1::bigint, 'a request that writes does too: workload 1 is the idle one');
SELECT results_eq(
    $$SELECT host_id, workload_id, counted FROM allot.assignment ORDER BY 1$$,
    $$VALUES (1::bigint, 1::bigint, false), (2, 2, true), (3, 1, true)$$,
    'and it swept host 1 after its own write');

-- Its cutoff (00:00:10) had spent the list's lead: it renewed the list
-- after its writes, watching 30 s past its cutoff, so that the requests
-- after it keep finding a list that reaches their cutoff.  A request with
-- more than half the lead left (00:02:12: 28 s) leaves the list alone.
SELECT is((SELECT watched_below FROM allot.assignment_horizon),
          '2026-01-01 00:00:40+00'::timestamptz, 'a request that finds the list due renews it');
CREATE TEMP TABLE generation_then AS SELECT generation FROM allot.assignment_horizon;
SELECT is((SELECT workload_id FROM allot.assign_workload(4, '2026-01-01 00:02:12+00', '{1}', 1)),
          2::bigint, 'host 4 takes workload 2');
SELECT is((SELECT generation FROM allot.assignment_horizon),
          (SELECT generation FROM generation_then), 'a list with lead to spare is kept');

-- A column whose type an operator changed, or that is gone, is refused by name.
SAVEPOINT retype;
ALTER TABLE allot.host ALTER COLUMN sockets TYPE bigint;
SELECT throws_ok($$SELECT * FROM allot.assign_workload(5, '2026-01-01 00:02:20+00')$$,
                 '42804', 'column "sockets" of allot.host is of type bigint, not integer',
                 'a host column of another type is an error, not a misread');
ROLLBACK TO retype;
SAVEPOINT retype;
ALTER TABLE allot.workload_usage RENAME COLUMN focus_threads TO focus;
SELECT throws_ok($$SELECT * FROM allot.explain_assignment(5, '2026-01-01 00:02:20+00')$$,
                 '42703', 'column "focus_threads" of allot.workload_usage does not exist',
                 'and a column that is gone');
ROLLBACK TO retype;

-- The reads need what a SELECT needs: a role that may run the function but
-- may not read allot.host is refused, unless the function runs as its
-- owner (SECURITY DEFINER, as allot installs it).
SAVEPOINT grants;
CREATE ROLE allot_test_stranger;
GRANT USAGE ON SCHEMA allot TO allot_test_stranger;
ALTER FUNCTION allot.explain_assignment(bigint, timestamptz, bigint[]) SECURITY INVOKER;
GRANT EXECUTE ON FUNCTION allot.explain_assignment(bigint, timestamptz, bigint[]) TO allot_test_stranger;
SET LOCAL ROLE allot_test_stranger;
SELECT throws_ok($$SELECT * FROM allot.explain_assignment(5)$$,
                 '42501', 'permission denied for table allot.host',
                 'an invoker without SELECT on allot.host cannot read it through a request');
RESET ROLE;
ROLLBACK TO grants;

-- A repeat writes seen_at alone; the usage trigger names the columns it
-- looks at (0.5.2), so that such an UPDATE skips it unread, while an
-- operator's edit of one of them still moves the usage row.
SELECT is((SELECT array_agg(a.attname ORDER BY a.attnum)
             FROM pg_trigger t
             JOIN pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = ANY (t.tgattr)
            WHERE t.tgrelid = 'allot.assignment'::regclass AND t.tgname = 'assignment_usage_change'),
          '{workload_id,threads,focus,counted}'::name[], 'the usage trigger names its columns');
UPDATE allot.assignment SET threads = 6 WHERE host_id = 2;
SELECT is((SELECT threads FROM allot.workload_usage WHERE workload_id = 2),
          10::bigint, 'an edit of threads still moves the usage row (host 2: 6, host 4: 4)');

SELECT is((SELECT count(*) FROM allot.check_invariants()), 0::bigint, 'the invariants hold');

-- What a backend knows of the watch list (0.7.0) is read again after a
-- signal.  Host 11 (8 threads) on workload 11 since 00:10, host 12 (4) on
-- workload 12 since 00:12:30; at 00:13 host 11 has lapsed.  Host 13's
-- request subtracts it and takes workload 11, and its sweep stops counting
-- it; host 15's request then knows the list to hold nothing before the
-- cutoff.  An operator counts host 11 again with its old seen_at: the watch
-- trigger lists it, and its statement signals.  Host 14's request, at the
-- same cutoff, must subtract host 11 again (workload 11: 2 threads, not 10)
-- and take workload 11; with the list as known before the signal it would
-- take workload 12.
INSERT INTO allot.workload (id, engine) VALUES (11, 'G'), (12, 'H');
INSERT INTO allot.host (id, threads) VALUES (11, 8), (12, 4), (13, 1), (14, 1), (15, 1);
UPDATE allot.workload SET state = 'paused' WHERE id IN (1, 2);
SELECT count(*) FROM allot.assign_workload(11, '2026-01-01 00:10:00+00', '{12}', 1);
SELECT count(*) FROM allot.assign_workload(12, '2026-01-01 00:12:30+00', '{11}', 1);
SELECT is((SELECT workload_id FROM allot.assign_workload(13, '2026-01-01 00:13:00+00')),
          11::bigint, 'host 13 takes workload 11, whose host has lapsed');
SELECT is((SELECT counted FROM allot.assignment WHERE host_id = 11), false,
          'and its request stopped counting the lapsed host');
SELECT is((SELECT workload_id FROM allot.assign_workload(15, '2026-01-01 00:13:00+00')),
          11::bigint, 'host 15 takes workload 11 too, having read a list with nothing lapsed');
UPDATE allot.assignment SET counted = true WHERE host_id = 11;
SELECT is((SELECT threads FROM allot.workload_usage WHERE workload_id = 11), 10::bigint,
          'the operator counts host 11 again: workload 11''s usage row holds 10 threads');
SELECT is((SELECT workload_id FROM allot.assign_workload(14, '2026-01-01 00:13:00+00')),
          11::bigint, 'host 14 subtracts the lapsed host listed since, and takes workload 11');

-- The transitioner drops the usage rows of workloads no longer active that
-- no host counts on, and, when there are none, runs no DELETE: a DELETE
-- fires the usage table's statement trigger, whose signal makes every
-- backend read its usage copy again.
CREATE TEMP TABLE usage_deletes (n int);
CREATE FUNCTION pg_temp.count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_deletes VALUES (1);
    RETURN NULL;
END
$$;
GRANT INSERT ON usage_deletes TO PUBLIC;
CREATE TRIGGER operator_count AFTER DELETE ON allot.workload_usage
    FOR EACH STATEMENT EXECUTE FUNCTION pg_temp.count_delete();
UPDATE allot.workload SET state = 'active' WHERE id IN (1, 2);
DELETE FROM allot.assignment WHERE workload_id IN (1, 2) AND NOT counted;
SELECT lives_ok($$SELECT allot.run_transitioner('2026-01-01 00:13:30+00')$$, 'the transitioner runs');
SELECT is((SELECT count(*)::int FROM usage_deletes), 0,
          'with no unused usage row, it runs no DELETE on allot.workload_usage');
UPDATE allot.workload SET state = 'finished' WHERE id = 12;
DELETE FROM allot.assignment WHERE workload_id = 12;
SELECT lives_ok($$SELECT allot.run_transitioner('2026-01-01 00:14:00+00')$$, 'the transitioner runs again');
SELECT is((SELECT count(*)::int FROM usage_deletes), 1,
          'with one (workload 12 finished, no host), one DELETE');
SELECT is((SELECT count(*)::int FROM allot.workload_usage WHERE workload_id = 12), 0,
          'which drops it');

SELECT * FROM finish();
ROLLBACK;
