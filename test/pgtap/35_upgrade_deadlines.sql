-- Every job in progress has a deadline, also after an upgrade (issue 10,
-- item 7).  allot 0.4.0 sent the jobs of a workload without delay_bound
-- with no deadline; 0.5.0 sends them with sent_at + allot.default_delay_bound.
-- Had the jobs 0.4.0 already sent kept none, run_transitioner, which times
-- out jobs whose deadline has passed, would never time them out: a host
-- that vanished before the upgrade would hold them for ever.  The update
-- script gives them the deadline 0.5.0 would have.
--
-- Runs as a superuser in a fresh database with pgtap and allot created; it
-- reinstalls allot at 0.4.0 (one C library serves every version) and
-- updates it.
BEGIN;
SELECT plan(4);

DROP EXTENSION allot CASCADE;
CREATE EXTENSION allot VERSION '0.4.0';
INSERT INTO allot.app (id, name) VALUES (1, 'crunch');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, engine, app_id) VALUES (1, 'crunch', 1);   -- no delay_bound
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (1, 'Linux', 4, 1e9);
-- Job 1 as 0.4.0's request_work left it: in progress on host 1 since
-- 2026-01-01, without a deadline.  Job 2 is unsent.
INSERT INTO allot.job (id, workload_id, state, host_id, app_version_id, sent_at, est_secs,
                       peak_flops_per_sec)
VALUES (1, 1, 'in_progress', 1, 1, '2026-01-01 00:00+00', 3600, 1e9);
INSERT INTO allot.job (id, workload_id) VALUES (2, 1);

ALTER EXTENSION allot UPDATE TO '0.5.0';
SELECT is(extversion, '0.5.0', 'allot is updated to 0.5.0') FROM pg_extension WHERE extname = 'allot';

-- Control: 0.5.0 sends job 2 with the default delay bound.
SELECT is(jsonb_array_length(allot.request_work(1, '{"resources": {"cpu": {"req_instances": 1}}}',
                                                '2026-01-01 00:00+00') -> 'jobs'),
          1, 'control: host 1 takes job 2 under 0.5.0');
-- A year later, the host never came back.
SELECT is((allot.run_transitioner('2027-01-01 00:00+00') ->> 'timed_out')::int, 2,
          'a year later the transitioner times out both jobs, the one 0.4.0 sent included');
SELECT is_empty($$SELECT id FROM allot.job WHERE state = 'in_progress'$$,
                'no job is left in progress');

SELECT * FROM finish();
ROLLBACK;
