-- A voice is earned (issue 30), part 1: owners and proven work.  Every
-- finding of the issue that this file covers failed against 0.6.0:
--
--   1  register_host takes an owner; one owner holds at most
--      allot.owner_max_hosts hosts and registers at most
--      allot.owner_max_new_hosts_per_day a day (0.6.0: one account made
--      300 hosts in 3.3 s); a host's owner does not change through it
--   2  an owner is one voice in an app's statistics, however many hosts
--      report for it
--   3  thirty fresh registrations claiming 1e18 FLOPS do not move the
--      farm's median (0.6.0: median 1e18, and 40 of 40 honest requests
--      went to the other workload); one claim before the transitioner's
--      first run counts for allot.unproven_cpu_flops (0.6.0: no bound at
--      all, and a 100 s request got 100 jobs)
--   4  a registration that proves its work counts its claim within ten
--      times the median
--
-- Virtual time from 2026-02-01 00:00 UTC.  Runs as a superuser in a fresh
-- database with pgtap and allot created.
BEGIN;
SELECT plan(30);
SET LOCAL timezone = 'UTC';

-- ---------------------------------------------------------------------------
-- 1. Owners through register_host.
SELECT allot.register_host(NULL, 'alice-1', 'Linux', '{}', 2, 1e9, '{}', 'boinc:1') AS a1 \gset
SELECT is((SELECT o.key FROM allot.host h JOIN allot.owner o ON o.id = h.owner_id WHERE h.id = :a1),
          'boinc:1', '1: register_host makes the owner and gives the host to it');
SELECT is(allot.register_host(:a1, 'alice-1', 'Linux', '{}', 4, 1e9), :a1::bigint,
          '1: an update without an owner keeps it');
SELECT is((SELECT owner_id FROM allot.host WHERE id = :a1), (SELECT id FROM allot.owner WHERE key = 'boinc:1'),
          '1: ... the host is still the owner''s');
SELECT throws_ok(format($$SELECT allot.register_host(%s, 'alice-1', 'Linux', '{}', 4, 1e9, '{}', 'boinc:2')$$, :a1),
                 '42501', format('host %s belongs to another owner', :a1),
                 '1: another owner cannot take a registered host (42501)');
SELECT throws_ok($$SELECT allot.register_host(NULL, 'x', 'Linux', '{}', 1, 1e9, '{}', '')$$, '22023',
                 'owner must be 1 to 200 characters, not ""', '1: an empty owner key is refused (22023)');
SELECT throws_ok($$SELECT allot.register_host(NULL, 'x', 'Linux', '{}', 1, 1e9, '{}', E'boinc\u202E1')$$, '22023',
                 'owner contains a right-to-left override (U+202E) at character 6',
                 '1: an owner key with a hidden character is refused (22023)');
SELECT throws_ok($$SELECT allot.register_host(NULL, 'x', 'Linux', '{}', 1, 1e9, '{}', repeat('k', 201))$$, '22023',
                 NULL, '1: an owner key of 201 characters is refused (22023)');

-- The limits.  Three hosts at most; two new a day.
SET allot.owner_max_hosts = 3;
SET allot.owner_max_new_hosts_per_day = 100;
SELECT lives_ok($$SELECT allot.register_host(NULL, 'alice-' || g, 'Linux', '{}', 1, 1e9, '{}', 'boinc:1')
                    FROM generate_series(2, 3) g$$, '1: the owner''s second and third hosts');
SELECT throws_ok($$SELECT allot.register_host(NULL, 'alice-4', 'Linux', '{}', 1, 1e9, '{}', 'boinc:1')$$,
                 '53400', 'owner "boinc:1" has 3 hosts, the most allowed',
                 '1: a fourth is refused (53400), naming the owner and the count');
SELECT is((SELECT count(*)::int FROM allot.host WHERE owner_id = (SELECT id FROM allot.owner WHERE key = 'boinc:1')),
          3, '1: ... and nothing was made');
SET allot.owner_max_hosts = 100;
SET allot.owner_max_new_hosts_per_day = 2;
SELECT lives_ok($$SELECT allot.register_host(NULL, 'bob-' || g, 'Linux', '{}', 1, 1e9, '{}', 'boinc:2')
                    FROM generate_series(1, 2) g$$, '1: another owner registers two hosts today');
SELECT throws_ok($$SELECT allot.register_host(NULL, 'bob-3', 'Linux', '{}', 1, 1e9, '{}', 'boinc:2')$$,
                 '53400', 'owner "boinc:2" registered 2 hosts in the last 24 hours, the most allowed',
                 '1: a third the same day is refused (53400)');
-- A host registered without an owner may be given one, within the limits.
SELECT allot.register_host(NULL, 'carol', 'Linux', '{}', 1, 1e9) AS c1 \gset
SELECT throws_ok(format($$SELECT allot.register_host(%s, 'carol', 'Linux', '{}', 1, 1e9, '{}', 'boinc:2')$$, :c1),
                 '53400', NULL, '1: giving an owner a host counts against its limits too');
SELECT lives_ok(format($$SELECT allot.register_host(%s, 'carol', 'Linux', '{}', 1, 1e9, '{}', 'boinc:3')$$, :c1),
                '1: ... an owner within them takes it');
RESET allot.owner_max_hosts;
RESET allot.owner_max_new_hosts_per_day;
-- The settings are the operator's: a web login cannot raise them.
CREATE ROLE allot_test43_web LOGIN IN ROLE allot_web;
SET LOCAL ROLE allot_test43_web;
SELECT throws_ok($$SET allot.owner_max_hosts = 1000000$$, '42501', NULL,
                 '1: allot_web cannot set allot.owner_max_hosts (42501)');
RESET ROLE;

-- ---------------------------------------------------------------------------
-- 2. One voice per owner.  App 1: five hosts without an owner report one
--    app unit a job; owner boinc:9 has ten hosts, each reporting two.
--    Each report is validated.  Per host (0.6.0) the mean would be
--    (5 + 20) / 15 = 1.6667; per owner it is (5 x 1 + 1 x 2) / 6 = 1.1667.
INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'units', 1e11);
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES (1, 'units', 'units', 1, '1 day');
INSERT INTO allot.job (workload_id) SELECT 1 FROM generate_series(1, 40);
INSERT INTO allot.owner (key) VALUES ('boinc:9') RETURNING id AS o9 \gset
INSERT INTO allot.host (id, name, os, threads, cpu_flops, owner_id)
SELECT 100 + g, 'voice ' || g, 'Linux', 1, 1e9, CASE WHEN g > 10 THEN :o9 END FROM generate_series(6, 20) g;
DO $$
DECLARE
    j bigint;
BEGIN
    FOR h IN 106..120 LOOP
        j := (allot.request_work(h, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [2]}',
                                 '2026-02-01 00:00', h) -> 'jobs' -> 0 ->> 'job_id')::bigint;
        PERFORM allot.report_job(h, j, 'success', CASE WHEN h > 110 THEN 2 ELSE 1 END, 100, NULL,
                                 '2026-02-01 00:10');
        PERFORM allot.validate_job(j, true);
    END LOOP;
END $$;
SELECT is((allot.run_transitioner('2026-02-01 00:20') ->> 'reports_read')::int, 15,
          '2: fixture: the transitioner learns from the 15 reports');
SELECT results_eq($$SELECT voices::int, round(actual_au_mean::numeric, 4) FROM allot.status_app WHERE app_id = 1$$,
                  $$VALUES (6, 1.1667)$$,
                  '2: 15 reports of 6 voices: the owner''s ten hosts are one, mean 7/6');
SELECT is((SELECT count(*)::int FROM allot.app, unnest(au_hosts) v WHERE id = 1 AND v = -:o9), 10,
          '2: the owner''s reports carry its voice, minus its id');

-- ---------------------------------------------------------------------------
-- 3. Claims that have proven nothing.  App 2 has workloads A (2) and B (3)
--    of equal throughput.  Before any transitioner run of this farm, a
--    fresh registration claiming 1e18 FLOPS takes one job of B: it counts
--    1e9 (allot.unproven_cpu_flops).  Then thirty fresh registrations of
--    thirty owners claim 1e18 too, and the transitioner runs: the median
--    is taken over proven hosts only (the operator's, 1e9), so it stays
--    1e9; the liar's job still counts 1e9, one honest host's worth.
--    Forty honest requests then share A and B: at least ten go to B.
UPDATE allot.resource SET median_flops = NULL, median_hosts = NULL;
INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (2, 'pair', 2.5e11);
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (2, 2, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES
    (2, 'A', 'pair', 2, '3 days'), (3, 'B', 'pair', 2, '3 days');
INSERT INTO allot.job (workload_id) SELECT w FROM generate_series(2, 3) w, generate_series(1, 200);
INSERT INTO allot.host (id, name, os, threads, cpu_flops)
SELECT g, 'honest ' || g, 'Linux', 1, 1e9 FROM generate_series(200, 239) g;
SELECT allot.register_host(NULL, 'claims 1e18', 'Linux', '{}', 1, 1e18, '{}', 'sybil:0') AS liar \gset
SELECT results_eq(
    format($$SELECT (j ->> 'peak_flops_per_sec')::float8, round((j ->> 'est_secs')::numeric, 1)
               FROM allot.request_work(%s, '{"resources": {"cpu": {"req_secs": 100}}, "exclude": [1, 2]}',
                                       '2026-02-02 00:00', 1) r, jsonb_array_elements(r -> 'jobs') j$$, :liar),
    $$VALUES (1e9::float8, 250.0)$$,
    '3: before any median, the 1e18 claim counts 1e9: a 100 s request gets one job of 250 s, not 100');
SELECT lives_ok($$SELECT allot.register_host(NULL, 'sybil ' || g, 'Linux', '{}', 1, 1e18, '{}', 'sybil:' || g)
                    FROM generate_series(1, 30) g$$, '3: thirty fresh registrations of thirty owners claim 1e18');
SELECT ok(allot.run_transitioner('2026-02-02 00:01') IS NOT NULL, '3: fixture: the transitioner runs');
SELECT results_eq($$SELECT median_flops, median_hosts::int FROM allot.resource WHERE name = 'cpu'$$,
                  $$VALUES (1e9::float8, 46)$$,
                  '3: the median is the proven hosts'' (46 voices of the operator''s 55 hosts, 1e9), not the claims''');
SELECT cmp_ok((SELECT (count(*) FILTER (WHERE r -> 'jobs' -> 0 ->> 'workload_id' = '3'))::int
                 FROM generate_series(200, 239) h,
                      LATERAL allot.request_work(h, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [1]}',
                                                 '2026-02-02 00:02', h) r),
              '>=', 10, '3: of forty honest requests, at least ten go to the liar''s workload B');
SELECT is((SELECT peak_flops_per_sec FROM allot.job WHERE host_id = :liar), 1e9::float8,
          '3: the liar''s job counts 1e9 FLOPS');

-- ---------------------------------------------------------------------------
-- 4. Proven work.  The liar's job is reported and validated: its host has
--    proven work, and its claim counts within ten times the median, 1e10.
--    A trusted owner's host counts its claim the same way without work.
SELECT is(allot.report_job(:liar, (SELECT id FROM allot.job WHERE host_id = :liar), 'success', 1, 250, NULL,
                           '2026-02-02 00:10') ->> 'state', 'done', '4: fixture: the registered host reports');
SELECT ok(allot.validate_job((SELECT id FROM allot.job WHERE host_id = :liar), true, now => '2026-02-02 00:11'),
          '4: fixture: its result is valid');
SELECT results_eq(format($$SELECT valid_results::int, consecutive_valid, proven_at
                             FROM allot.host_reliability WHERE host_id = %s$$, :liar),
                  $$VALUES (1, 1, '2026-02-02 00:11'::timestamptz)$$,
                  '4: its record counts the valid result, and when it proved its work');
SELECT is((allot.request_work(:liar, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [1, 2]}',
                              '2026-02-02 00:12', 1) -> 'jobs' -> 0 ->> 'peak_flops_per_sec')::float8,
          1e10::float8, '4: a proven host''s claim counts within ten times the median');
SELECT allot.register_host(NULL, 'the operator''s own', 'Linux', '{}', 1, 5e9, '{}', 'operator') AS own \gset
UPDATE allot.owner SET trusted = true WHERE key = 'operator';
SELECT is((allot.request_work(:own, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [1, 2]}',
                              '2026-02-02 00:13', 1) -> 'jobs' -> 0 ->> 'peak_flops_per_sec')::float8,
          5e9::float8, '4: a host of an owner the operator trusts counts its claim without work');

SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');
SELECT * FROM finish();
ROLLBACK;
