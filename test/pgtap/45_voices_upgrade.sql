-- Owners, quorums and screening across the update from 0.6.0 (issue 30).
-- The library serves 0.6.0's tables until the update with 0.6.0's rules (a
-- host's voice its own, claims bounded by ten times any median, the
-- validator's verdict final, no screening); the update keeps every job's
-- quorum at 1, every host without an owner, each app's window with its
-- statistics, and moves the sample voices 0.6.0 kept from before it out of
-- the owners' way.
--
-- Runs as a superuser in a fresh database with pgtap and allot created; it
-- reinstalls allot at 0.6.0 and updates it.
BEGIN;
SELECT plan(14);
SET LOCAL timezone = 'UTC';

DROP EXTENSION allot CASCADE;
CREATE EXTENSION allot VERSION '0.6.0';
INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'crunch', 1e11);
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES (1, 'batch', 'crunch', 1, '1 day');
INSERT INTO allot.host (id, name, os, threads, cpu_flops)
SELECT g, 'h' || g, 'Linux', 1, 1e9 FROM generate_series(1, 12) g;
INSERT INTO allot.job (workload_id) SELECT 1 FROM generate_series(1, 40);
-- A registered host claiming 1e18: under 0.6.0, with no median, no bound.
SELECT allot.register_host(NULL, 'claims', 'Linux', '{}', 1, 1e18) AS liar \gset
SELECT is((allot.request_work(:liar, '{"resources": {"cpu": {"req_instances": 1}}}', '2026-01-01 00:00')
               -> 'jobs' -> 0 ->> 'peak_flops_per_sec')::float8, 1e18::float8,
          'under 0.6.0 an unproven claim before any median counts in full (0.6.0''s rule)');
-- Twelve hosts report a job each, validated; the transitioner learns.
DO $$
DECLARE
    j bigint;
BEGIN
    FOR h IN 1..12 LOOP
        j := (allot.request_work(h, '{"resources": {"cpu": {"req_instances": 1}}}', '2026-01-01 00:01')
                  -> 'jobs' -> 0 ->> 'job_id')::bigint;
        PERFORM allot.report_job(h, j, 'success', 1, 100, NULL, '2026-01-01 00:10');
        PERFORM allot.validate_job(j, true);
    END LOOP;
END $$;
SELECT is((allot.run_transitioner('2026-01-01 00:11') ->> 'reports_read')::int, 12,
          'under 0.6.0 the transitioner learns from the 12 validated reports');
-- Two sample values kept from before 0.6.0, as 0.6.0's update left them.
UPDATE allot.app SET cpu_samples = cpu_samples || ARRAY[2e11, 3e11]::float8[],
                     cpu_sample_hosts = cpu_sample_hosts || ARRAY[-1, -2]::bigint[]
 WHERE id = 1;
SELECT n_reports AS before_n, actual_au_mean AS before_mean FROM allot.app WHERE id = 1 \gset

ALTER EXTENSION allot UPDATE TO '0.7.0';
SELECT results_eq($$SELECT count(*)::int, count(*) FILTER (WHERE min_quorum = 1 AND target_nresults = 1
                                                              AND replica_of IS NULL)::int FROM allot.job$$,
                  $$VALUES (40, 40)$$, 'every job keeps a quorum of 1, no replica');
SELECT is((SELECT count(*)::int FROM allot.host WHERE owner_id IS NOT NULL), 0, 'no host has an owner');
SELECT results_eq($$SELECT n_reports, actual_au_mean, cardinality(au_flops) = cardinality(au_hosts),
                           (SELECT bool_and(f = 0) FROM unnest(au_flops) f)
                      FROM allot.app WHERE id = 1$$,
                  format($$VALUES (%s::bigint, %s::float8, true, true)$$, :before_n, :before_mean),
                  'the window keeps its statistics; its FLOPS claims are unknown (0)');
SELECT is((SELECT cpu_sample_hosts[cardinality(cpu_sample_hosts) - 1 :] FROM allot.app WHERE id = 1),
          ARRAY[-1 - 4611686018427387904, -2 - 4611686018427387904]::bigint[],
          'values kept from before 0.6.0 move below -2^62, a voice each still');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty after the update');

-- 0.7.0's rules now.  The claim has proven nothing: the proven median
-- (the operator's hosts, 1e9) bounds it once the transitioner has run.
SELECT ok(allot.run_transitioner('2026-01-01 00:12') IS NOT NULL, 'the transitioner runs');
SELECT is((SELECT median_flops FROM allot.resource WHERE name = 'cpu'), 1e9::float8,
          'the median is the proven hosts''');
SELECT is((allot.request_work(:liar, '{"resources": {"cpu": {"req_instances": 1}}}', '2026-01-01 00:13')
               -> 'jobs' -> 0 ->> 'peak_flops_per_sec')::float8, 1e9::float8,
          'the unproven claim now counts for the median');
SELECT lives_ok(format($$SELECT allot.register_host(%s, 'claims', 'Linux', '{}', 1, 1e18, '{}', 'boinc:7')$$, :liar),
                'a host registered under 0.6.0 is given an owner');
SELECT is((SELECT o.key FROM allot.host h JOIN allot.owner o ON o.id = h.owner_id WHERE h.id = :liar), 'boinc:7',
          'it is the owner''s');
-- A job of the 0.6.0 era reported after the update, validated the old way.
SELECT is(allot.report_job(:liar, (SELECT id FROM allot.job WHERE host_id = :liar ORDER BY id LIMIT 1), 'success',
                           1, 100, NULL, '2026-01-01 00:20') ->> 'state', 'done',
          'a job sent under 0.6.0 is reported after the update');
SELECT ok(allot.validate_job((SELECT id FROM allot.job WHERE host_id = :liar AND state = 'done' ORDER BY id LIMIT 1),
                             true),
          'and validated with validate_job(job, valid), as before');

SELECT * FROM finish();
ROLLBACK;
