-- Sendings across the update from 0.5.2 (issue 21).  The library serves
-- 0.5.2's tables until the update (no sendings, no retries: the old rules),
-- and the update makes each job in progress its job's first sending, so
-- that its host's report, which names no sending, is still accepted.
--
-- Runs as a superuser in a fresh database with pgtap and allot created; it
-- reinstalls allot at 0.5.2 and updates it.
BEGIN;
SELECT plan(9);
SET LOCAL timezone = 'UTC';

DROP EXTENSION allot CASCADE;
CREATE EXTENSION allot VERSION '0.5.2';
INSERT INTO allot.app (id, name) VALUES (1, 'crunch');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES (1, 'batch', 'crunch', 1, '1 day');
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (1, 'Linux', 2, 1e9), (2, 'Linux', 1, 1e9);
INSERT INTO allot.job (id, workload_id) SELECT g, 1 FROM generate_series(1, 3) g;

-- Under 0.5.2, 0.5.2's rules: no sending in the reply, an error is final.
SELECT ok(NOT (allot.request_work(1, '{"resources": {"cpu": {"req_instances": 2}}}', '2026-01-01 00:00')
               -> 'jobs' -> 0 ? 'sending'),
          'under 0.5.2 the reply names no sending');
SELECT is(allot.report_job(1, 1, 'error', now => '2026-01-01 00:01') ->> 'state', 'error',
          'under 0.5.2 an error is final');
SELECT throws_ok($$SELECT allot.validate_job(1, false)$$, '55000', NULL,
                 'under 0.5.2 only a done job is validated');

ALTER EXTENSION allot UPDATE TO '0.6.0';
SELECT results_eq($$SELECT id, sending, tries, failures FROM allot.job ORDER BY id$$,
                  $$VALUES (1::bigint, 0, 0, 0), (2, 1, 1, 0), (3, 0, 0, 0)$$,
                  'the update makes the job in progress its first sending');
SELECT is(allot.report_job(1, 2, 'aborted', now => '2026-01-01 00:02') ->> 'state', 'unsent',
          'host 1''s report, naming no sending, is accepted, and the job goes back');
SELECT is(allot.report_job(1, 2, 'aborted', now => '2026-01-01 00:02', sending => 1) ->> 'state', 'unsent',
          'the same report naming sending 1 is a repeat');
SELECT is(allot.request_work(1, '{"resources": {"cpu": {"req_instances": 2}}}', '2026-01-01 00:03')
              -> 'jobs' -> 0 ->> 'job_id', '3', 'host 1 is sent job 3, not job 2 it aborted');
SELECT results_eq($$SELECT (allot.request_work(2, '{"resources": {"cpu": {"req_instances": 1}}}',
                                                '2026-01-01 00:04') -> 'jobs' -> 0 ->> 'sending')::int$$,
                  $$VALUES (2)$$, 'host 2 is sent job 2 as its second sending');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');

SELECT * FROM finish();
ROLLBACK;
