-- A voice is earned (issue 30), part 2: quorum replication, host
-- reliability and adaptive replication, and two smaller holes.  0.6.0 sent
-- each job once and believed its one result.
--
--   1  a job with min_quorum 2 and target_nresults 2 goes to two owners
--      (its first sending makes its replica, which is sent before older jobs),
--      never twice to one (two hosts of one owner, or one host asking for
--      two); it is decided, credited and learnt from only when both agree
--   2  owners that disagree: another replica, to a third owner; the pair
--      that agrees is valid, the other invalid, without credit, and its
--      host loses reliability
--   3  an invalid result while the job is undecided is sent again
--   4  adaptive replication: a new host's job is replicated; after
--      allot.reliable_after consecutive valid results it runs jobs alone;
--      an invalid result takes that back
--   5  a job in progress keeps its id; an engine's name is checked; a
--      sending an operator ends by hand is told so when its host reports
--   6  retention takes a replicated job with its replicas, and not before
--      every one of them has finished and is old
--
-- Hosts register themselves (no host is the operator's, so none is
-- vouched for).  Virtual time from 2026-03-01 00:00 UTC.  Runs as a
-- superuser in a fresh database with pgtap and allot created.
BEGIN;
SELECT plan(47);
SET LOCAL timezone = 'UTC';

INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'q', 1e11);
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES
    (1, 'quorum', 'q', 1, '1 day'), (2, 'adaptive', 'q', 1, '1 day');
UPDATE allot.workload SET adaptive_replication = true WHERE id = 2;

-- Owners a (two hosts), b, c, d, e: one host each.
SELECT allot.register_host(NULL, 'a1', 'Linux', '{}', 2, 1e9, '{}', 'a') AS a1,
       allot.register_host(NULL, 'a2', 'Linux', '{}', 2, 1e9, '{}', 'a') AS a2,
       allot.register_host(NULL, 'b', 'Linux', '{}', 2, 1e9, '{}', 'b') AS b,
       allot.register_host(NULL, 'c', 'Linux', '{}', 2, 1e9, '{}', 'c') AS c,
       allot.register_host(NULL, 'd', 'Linux', '{}', 2, 1e9, '{}', 'd') AS d,
       allot.register_host(NULL, 'e', 'Linux', '{}', 2, 1e9, '{}', 'e') AS e \gset

-- Host h asks for n CPUs of workload w at minute m: the job ids it gets.
CREATE FUNCTION pg_temp.ask(h bigint, w bigint, m int, n int DEFAULT 1) RETURNS bigint[]
LANGUAGE sql AS $$
    SELECT coalesce(array_agg((j ->> 'job_id')::bigint ORDER BY (j ->> 'job_id')::bigint), '{}')
      FROM jsonb_array_elements(allot.request_work(h,
               jsonb_build_object('resources', jsonb_build_object('cpu', jsonb_build_object('req_instances', n)),
                                  'exclude', jsonb_build_array(3 - w)),
               '2026-03-01'::timestamptz + make_interval(mins => m), m) -> 'jobs') j
$$;
-- Host h reports job j a success of one app unit at minute m.
CREATE FUNCTION pg_temp.done(h bigint, j bigint, m int) RETURNS text LANGUAGE sql AS $$
    SELECT allot.report_job(h, j, 'success', 1, 100, NULL,
                            '2026-03-01'::timestamptz + make_interval(mins => m)) ->> 'state'
$$;

-- ---------------------------------------------------------------------------
-- 1. A quorum of 2.
INSERT INTO allot.job (workload_id, min_quorum, target_nresults) VALUES (1, 2, 2) RETURNING id AS j1 \gset
SELECT is(cardinality(pg_temp.ask(:a1, 1, 0, 2)), 1, '1: a host asking for two gets one replica, not both');
SELECT results_eq(format($$SELECT count(*)::int, min(replica_of), min(state) FROM allot.job
                            WHERE workload_id = 1 AND replica_of IS NOT NULL$$),
                  format($$VALUES (1, %s::bigint, 'unsent'::text)$$, :j1),
                  '1: its first sending made its replica, unsent, for another owner');
SELECT id AS replica FROM allot.job WHERE replica_of = :j1 \gset
SELECT is(pg_temp.ask(:a2, 1, 1), '{}'::bigint[], '1: another host of the same owner gets none');
SELECT is(cardinality(pg_temp.ask(:b, 1, 2)), 1, '1: another owner''s host gets the other');
SELECT is((SELECT count(DISTINCT h.owner_id)::int FROM allot.job j JOIN allot.host h ON h.id = j.host_id
            WHERE j.id IN (:j1, :replica)), 2, '1: the two replicas are with two owners');
SELECT is(pg_temp.done(host_id, id, 30), 'done', format('1: host %s reports its replica', host_id))
  FROM allot.job WHERE id IN (:j1, :replica) ORDER BY id;
SELECT ok(allot.validate_job(:j1, true, 1, 'same output', '2026-03-01 00:40'),
          '1: the validator finds the first result valid');
SELECT results_eq(format($$SELECT validated, verdict FROM allot.job WHERE id = %s$$, :j1), $$VALUES (NULL::boolean, true)$$,
                  '1: one owner''s word decides nothing: verdict recorded, not validated');
SELECT results_eq($$SELECT (r ->> 'reports_read')::int, (r ->> 'credited')::int
                      FROM allot.run_transitioner('2026-03-01 00:41') r$$,
                  $$VALUES (0, 0)$$, '1: nothing is learnt or credited before the quorum');
SELECT ok(allot.validate_job(:replica, true, 1, 'same output', '2026-03-01 00:42'),
          '1: the second, of another owner, with the same output');
SELECT results_eq(format($$SELECT count(*)::int FROM allot.job WHERE id IN (%s, %s) AND validated$$, :j1, :replica),
                  $$VALUES (2)$$, '1: the job is decided: both valid');
SELECT results_eq($$SELECT (r ->> 'reports_read')::int, (r ->> 'credited')::int
                      FROM allot.run_transitioner('2026-03-01 00:43') r$$,
                  $$VALUES (2, 2)$$, '1: both are learnt from and credited');
SELECT results_eq(format($$SELECT host_id, valid_results::int, consecutive_valid FROM allot.host_reliability
                            WHERE host_id IN (%s, %s) ORDER BY host_id$$, :a1, :b),
                  format($$VALUES (%s::bigint, 1, 1), (%s, 1, 1)$$, :a1, :b),
                  '1: each host''s record counts its valid result');

-- ---------------------------------------------------------------------------
-- 2. Disagreement.  Job 2: owners a and b disagree; a third replica goes to
--    c, not to a or b, and agrees with a.
INSERT INTO allot.job (workload_id, min_quorum, target_nresults) VALUES (1, 2, 2) RETURNING id AS j2 \gset
SELECT pg_temp.ask(:a1, 1, 60) AS j2a, pg_temp.ask(:b, 1, 61) AS j2b \gset
SELECT is(pg_temp.done(:a1, (:'j2a'::bigint[])[1], 70) || pg_temp.done(:b, (:'j2b'::bigint[])[1], 71), 'donedone',
          '2: fixture: both report');
SELECT ok(allot.validate_job((:'j2a'::bigint[])[1], true, digest => 'x', now => '2026-03-01 01:20')
          AND allot.validate_job((:'j2b'::bigint[])[1], true, digest => 'y', now => '2026-03-01 01:21'),
          '2: the validator reads two different outputs');
SELECT results_eq(format($$SELECT count(*)::int, count(*) FILTER (WHERE state = 'unsent')::int,
                           count(*) FILTER (WHERE validated IS NOT NULL)::int
                      FROM allot.job WHERE id = %s OR replica_of = %s$$, :j2, :j2),
                  $$VALUES (3, 1, 0)$$, '2: nothing decided: a third replica is made');
SELECT is(pg_temp.ask(:a2, 1, 80) || pg_temp.ask(:b, 1, 81), '{}'::bigint[],
          '2: neither owner a nor owner b gets it');
SELECT pg_temp.ask(:c, 1, 82) AS j2c \gset
SELECT is(cardinality(:'j2c'::bigint[]), 1, '2: owner c gets it');
SELECT is(pg_temp.done(:c, (:'j2c'::bigint[])[1], 90), 'done', '2: fixture: c reports');
SELECT ok(allot.validate_job((:'j2c'::bigint[])[1], true, digest => 'x', now => '2026-03-01 01:35'),
          '2: its output agrees with a''s');
SELECT results_eq(format($$SELECT h.name, j.validated FROM allot.job j JOIN allot.host h ON h.id = j.host_id
                     WHERE j.id = %s OR j.replica_of = %s ORDER BY h.name$$, :j2, :j2),
                  $$VALUES ('a1'::text, true), ('b', false), ('c', true)$$,
                  '2: a and c are valid, b invalid');
SELECT ok(allot.run_transitioner('2026-03-01 01:36') IS NOT NULL, '2: fixture: the transitioner credits');
SELECT results_eq(format($$SELECT h.name, j.credit > 0 FROM allot.job j JOIN allot.host h ON h.id = j.host_id
                     WHERE j.id = %s OR j.replica_of = %s ORDER BY h.name$$, :j2, :j2),
                  $$VALUES ('a1'::text, true), ('b', NULL), ('c', true)$$,
                  '2: the invalid result gets no credit');
SELECT results_eq(format($$SELECT invalid_results::int, consecutive_valid, reliable_at
                             FROM allot.host_reliability WHERE host_id = %s$$, :b),
                  $$VALUES (1, 0, NULL::timestamptz)$$,
                  '2: b''s host loses its consecutive valid results');

-- ---------------------------------------------------------------------------
-- 3. Found invalid while undecided: that replica is sent again, elsewhere.
INSERT INTO allot.job (workload_id, min_quorum, target_nresults) VALUES (1, 2, 2);
SELECT pg_temp.ask(:a1, 1, 120) AS j3 \gset
SELECT is(pg_temp.done(:a1, (:'j3'::bigint[])[1], 121), 'done', '3: fixture: a reports');
SELECT ok(allot.validate_job((:'j3'::bigint[])[1], false, now => '2026-03-01 02:02'), '3: its output is invalid');
SELECT results_eq(format($$SELECT state, failures, validated FROM allot.job WHERE id = %s$$, (:'j3'::bigint[])[1]),
                  $$VALUES ('unsent'::text, 1, NULL::boolean)$$,
                  '3: the replica is unsent again, its failure counted');
SELECT is(pg_temp.ask(:a2, 1, 123), '{}'::bigint[], '3: not for owner a again');

-- ---------------------------------------------------------------------------
-- 4. Adaptive replication.  Reliable after 2 consecutive valid results;
--    a reliable host runs alone every time (probability 1).  Host d, new,
--    asks: its job is replicated (quorum 2), and e takes the replica.
SET allot.reliable_after = 2;
SET allot.reliable_alone_probability = 1;
INSERT INTO allot.job (workload_id) SELECT 2 FROM generate_series(1, 10);
CREATE FUNCTION pg_temp.adaptive_round(m int) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    dj bigint := (pg_temp.ask((SELECT id FROM allot.host WHERE name = 'd'), 2, m))[1];
    q int := (SELECT min_quorum FROM allot.job WHERE id = dj);
    ej bigint;
BEGIN
    PERFORM pg_temp.done((SELECT id FROM allot.host WHERE name = 'd'), dj, m + 5);
    PERFORM allot.validate_job(dj, true, digest => 'ok', now => '2026-03-01'::timestamptz + make_interval(mins => m + 6));
    IF q > 1 THEN
        ej := (SELECT id FROM allot.job WHERE replica_of = dj);
        ej := (pg_temp.ask((SELECT id FROM allot.host WHERE name = 'e'), 2, m + 1))[1];
        PERFORM pg_temp.done((SELECT id FROM allot.host WHERE name = 'e'), ej, m + 7);
        PERFORM allot.validate_job(ej, true, digest => 'ok', now => '2026-03-01'::timestamptz + make_interval(mins => m + 8));
    END IF;
    RETURN format('quorum %s, d: %s consecutive valid', q,
                  (SELECT consecutive_valid FROM allot.host_reliability
                    WHERE host_id = (SELECT id FROM allot.host WHERE name = 'd')));
END
$f$;
SELECT is(pg_temp.adaptive_round(200), 'quorum 2, d: 1 consecutive valid', '4: a new host''s job is replicated');
SELECT is(pg_temp.adaptive_round(220), 'quorum 2, d: 2 consecutive valid', '4: and its next, until it is reliable');
SELECT isnt((SELECT reliable_at FROM allot.host_reliability WHERE host_id = :d), NULL,
            '4: its record says when it became reliable');
SELECT is(pg_temp.adaptive_round(240), 'quorum 1, d: 3 consecutive valid', '4: a reliable host runs a job alone');
-- Its next result is found invalid: trust is lost, the job after is replicated.
SELECT pg_temp.ask(:d, 2, 260) AS dj \gset
SELECT is(pg_temp.done(:d, (:'dj'::bigint[])[1], 261), 'done', '4: fixture: d reports');
SELECT ok(allot.validate_job((:'dj'::bigint[])[1], false, now => '2026-03-01 04:22'), '4: its result is invalid');
SELECT is(pg_temp.adaptive_round(280), 'quorum 2, d: 1 consecutive valid',
          '4: the host is not reliable any more: its next job is replicated');

-- ---------------------------------------------------------------------------
-- 5. Smaller holes.  A job in progress keeps its id (refused like its
--    DELETE); an engine's name is checked like the others'.
SELECT pg_temp.ask(:e, 2, 300) AS ej \gset
SELECT throws_ok(format('UPDATE allot.job SET id = 999999 WHERE id = %s', (:'ej'::bigint[])[1]), '55000',
                 format('job %s is in progress on host %s: its id cannot change', (:'ej'::bigint[])[1], :e),
                 '5: renumbering a job in progress is refused (55000)');
SELECT throws_ok($$INSERT INTO allot.engine (name) VALUES (E'Stock\u200Bfish')$$, '22023',
                 'engine name contains a zero-width space (U+200B) at character 6',
                 '5: an engine name with a hidden character is refused (22023)');
-- An operator moves the job back to unsent by hand: its host's report is
-- told it was taken back, and the host is not sent it again.
UPDATE allot.job SET state = 'unsent', host_id = NULL, app_version_id = NULL, sent_at = NULL, deadline = NULL,
       peak_flops_per_sec = NULL
 WHERE id = (:'ej'::bigint[])[1];
SELECT throws_ok(format($$SELECT pg_temp.done(%s, %s, 301)$$, :e, (:'ej'::bigint[])[1]), '55000',
                 format('job %s was taken back from host %s: its report is not wanted', (:'ej'::bigint[])[1], :e),
                 '5: a sending ended by hand: its host''s report is told it was taken back');

-- ---------------------------------------------------------------------------
-- 6. Retention (0.7.0) and replicas: a replica's row names its job
--    (ON DELETE CASCADE), so the job stays while a replica runs, and they
--    leave together.  Workload 3 has the job alone.
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES (3, 'retained', 'q', 1, '1 day');
CREATE FUNCTION pg_temp.ask3(h bigint, m int) RETURNS bigint LANGUAGE sql AS $$
    SELECT (allot.request_work(h, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [1, 2]}',
                               '2026-03-01'::timestamptz + make_interval(mins => m), m) #>> '{jobs,0,job_id}')::bigint
$$;
INSERT INTO allot.job (workload_id, min_quorum, target_nresults) VALUES (3, 2, 2) RETURNING id AS j6 \gset
SELECT pg_temp.ask3(:a1, 400) AS j6a \gset
SELECT id AS j6r FROM allot.job WHERE replica_of = :j6 \gset
SELECT is(pg_temp.done(:a1, :j6a, 401) || ' ' || (pg_temp.ask3(:c, 402) = :j6r), 'done true',
          '6: fixture: the job is done, its replica in progress with another owner');
SET LOCAL allot.retention_period = '1h';
SELECT is((allot.purge_finished('2026-03-01 09:00') ->> 'busy'), 'false', '6: a purge five hours later');
SELECT results_eq(format($$SELECT id, state FROM allot.job WHERE id IN (%s, %s) ORDER BY id$$, :j6, :j6r),
                  format($$VALUES (%s::bigint, 'done'::text), (%s, 'in_progress')$$, :j6, :j6r),
                  '6: the finished job stays while its replica runs, and the replica with it');
SELECT is(pg_temp.done(:c, :j6r, 541), 'done', '6: the replica is reported');
SELECT ok(allot.validate_job(:j6, true, 1, 'same', '2026-03-01 09:02')
          AND allot.validate_job(:j6r, true, 1, 'same', '2026-03-01 09:03'), '6: fixture: both valid');
SELECT allot.run_transitioner('2026-03-01 09:04') IS NOT NULL AS learnt \gset
SELECT is((allot.purge_finished('2026-03-01 11:00') ->> 'busy'), 'false', '6: a purge two hours after that');
SELECT results_eq(format($$SELECT (SELECT count(*)::int FROM allot.job WHERE id IN (%1$s, %2$s)),
                                  (SELECT count(*)::int FROM allot.job_archive a, json_array_elements(a.jobs) x
                                    WHERE (x -> 'job' ->> 'id')::bigint IN (%1$s, %2$s))$$, :j6, :j6r),
                  $$VALUES (0, 2)$$, '6: once both are finished and old, both leave, into the archive');

SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');
SELECT * FROM finish();
ROLLBACK;
