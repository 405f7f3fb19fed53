-- Each sending of a job is a sending of its own (issue 21): 0.5.2 named a
-- report by (host, job) only, sent an aborted job straight back to the host
-- that aborted it, re-sent a timed-out job to the host still running it and
-- took the stale copy's late report for the new one's, never retried a
-- failed job, and gave the operator no way to requeue a job, time out one
-- host's jobs, or merge a host that came back under a new id.
--
-- Runs as a superuser in a fresh database with pgtap and allot created.
BEGIN;
SELECT plan(66);

SET LOCAL timezone = 'UTC';
INSERT INTO allot.app (id, name) VALUES (1, 'crunch');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES (1, 'batch', 'crunch', 1, '1 hour');
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES
    (1, 'Linux', 1, 1e9), (2, 'Linux', 1, 1e9), (3, 'Linux', 1, 1e9), (4, 'Linux', 1, 1e9);
INSERT INTO allot.job (id, workload_id) SELECT g, 1 FROM generate_series(1, 6) g;

-- One job for host h at time t: its reply's first job, or NULL.
CREATE FUNCTION pg_temp.ask(h bigint, t timestamptz) RETURNS jsonb LANGUAGE sql AS $$
    SELECT allot.request_work(h, '{"resources": {"cpu": {"req_instances": 1}}}', t) -> 'jobs' -> 0
$$;
-- Job 1 alone is unsent: the others are parked as done for now.
UPDATE allot.job SET state = 'done', outcome = 'success' WHERE id > 1;

-- ---------------------------------------------------------------------------
-- Sendings are numbered; the reply gives the number.
SELECT pg_temp.ask(1, '2026-01-01 00:00') AS s \gset
SELECT is((:'s'::jsonb ->> 'job_id')::int, 1, 'host 1 is sent job 1');
SELECT is((:'s'::jsonb ->> 'sending')::int, 1, 'the reply names its sending: 1');
SELECT results_eq($$SELECT sending, tries, failures FROM allot.job WHERE id = 1$$,
                  $$VALUES (1, 1, 0)$$, 'the job counts the sending and the try');
SELECT results_eq($$SELECT job_id, sending FROM allot.host_jobs(1)$$, $$VALUES (1::bigint, 1)$$,
                  'host_jobs lists what host 1 has, with its sending');

-- Finding 1: an aborted job does not go back to the host that aborted it.
SELECT is(allot.report_job(1, 1, 'aborted', now => '2026-01-01 00:10', sending => 1) ->> 'state', 'unsent',
          'host 1 aborts sending 1: the job is unsent again');
SELECT is(pg_temp.ask(1, '2026-01-01 00:11'), NULL, 'host 1 asks again: it is not sent the job it aborted');
SELECT pg_temp.ask(2, '2026-01-01 00:12') AS s \gset
SELECT is(ARRAY[(:'s'::jsonb ->> 'job_id')::int, (:'s'::jsonb ->> 'sending')::int], ARRAY[1, 2], 'host 2 is sent it, as sending 2');
SELECT is(allot.report_job(1, 1, 'aborted', now => '2026-01-01 00:10', sending => 1) ->> 'state', 'unsent',
          'host 1''s abort, repeated, gets its first reply');

-- A report naming the wrong sending is refused, and changes nothing.
SELECT throws_ok($$SELECT allot.report_job(2, 1, 'success', 1, 60, NULL, '2026-01-01 00:20', 5)$$, '55000',
                 'sending 5 of job 1 is not the one in progress on host 2',
                 'a report of another sending than the host''s is refused (55000)');
SELECT throws_ok($$SELECT allot.report_job(1, 1, 'success', 1, 60, NULL, '2026-01-01 00:20', 1)$$, '55000', NULL,
                 'host 1 cannot report, as a success, the sending it aborted');
SELECT throws_ok($$SELECT allot.report_job(2, 1, 'success', 1, 60, NULL, '2026-01-01 00:20', 0)$$, '22023',
                 'sending must be a sending''s number, 1 or more, not 0', 'sending 0 is not a sending (22023)');
SELECT results_eq($$SELECT state, host_id, sending FROM allot.job WHERE id = 1$$,
                  $$VALUES ('in_progress'::text, 2::bigint, 2)$$, 'job 1 is still sending 2 on host 2');

-- Finding 2: a timed-out job goes to another host, and the stale copy's
-- late report is refused.  Sending 2 was sent at 00:12 with a one-hour bound.
SELECT is((allot.run_transitioner('2026-01-01 01:13') ->> 'timed_out')::int, 1,
          'at 01:13 sending 2 times out');
SELECT is(pg_temp.ask(2, '2026-01-01 01:14'), NULL, 'host 2, still running it, is not sent it again');
SELECT pg_temp.ask(3, '2026-01-01 01:15') AS s \gset
SELECT is(ARRAY[(:'s'::jsonb ->> 'job_id')::int, (:'s'::jsonb ->> 'sending')::int], ARRAY[1, 3], 'host 3 is sent it, as sending 3');
SELECT throws_ok($$SELECT allot.report_job(2, 1, 'success', 1, 60, NULL, '2026-01-01 01:20', 2)$$, '55000',
                 'job 1 timed out on host 2: its report comes too late',
                 'the timed-out sending''s late report is refused (55000)');
SELECT throws_ok($$SELECT allot.report_job(2, 1, 'success', 1, 60, NULL, '2026-01-01 01:20')$$, '55000',
                 'job 1 timed out on host 2: its report comes too late',
                 'so is one that does not name its sending');
SELECT is(allot.report_job(3, 1, 'success', 1, 60, NULL, '2026-01-01 01:30', 3) ->> 'state', 'done',
          'host 3''s report of sending 3 is accepted');
SELECT results_eq($$SELECT tries, failures FROM allot.job WHERE id = 1$$, $$VALUES (3, 2)$$,
                  'three tries, two failed (the abort and the timeout)');

-- Finding 3 (in allot): a sending the host lost comes back at once.
UPDATE allot.job SET state = 'unsent', outcome = NULL WHERE id = 2;
SELECT is((pg_temp.ask(1, '2026-01-01 02:00') ->> 'job_id')::int, 2, 'host 1 is sent job 2');
SELECT is(allot.report_job(1, 2, 'lost', now => '2026-01-01 02:01', sending => 1) ->> 'state', 'unsent',
          'host 1 lost it: back to unsent at once, not at its deadline');
SELECT results_eq($$SELECT outcome, failures FROM allot.job WHERE id = 2$$, $$VALUES ('lost'::text, 1)$$,
                  'a loss is a failed sending');

-- Finding 6: failed work is retried up to the job's limits, then gives up.
-- Job 2 allows one failure: its second error is final.
UPDATE allot.job SET max_error_results = 1 WHERE id = 2;
SELECT is((pg_temp.ask(2, '2026-01-01 02:10') ->> 'job_id')::int, 2, 'host 2 is sent job 2');
SELECT is(allot.report_job(2, 2, 'error', now => '2026-01-01 02:11', sending => 2) ->> 'state', 'error',
          'its second failure passes max_error_results = 1: the job gives up (error)');
SELECT is(pg_temp.ask(3, '2026-01-01 02:12'), NULL, 'a job that gave up is sent to no one');
-- Job 3 allows two sendings in all.
UPDATE allot.job SET state = 'unsent', outcome = NULL, max_total_results = 2 WHERE id = 3;
SELECT is((pg_temp.ask(1, '2026-01-01 03:00') ->> 'job_id')::int, 3, 'host 1 is sent job 3');
SELECT is(allot.report_job(1, 3, 'error', now => '2026-01-01 03:01') ->> 'state', 'unsent',
          'its first error: unsent for another host');
SELECT is((pg_temp.ask(2, '2026-01-01 03:02') ->> 'job_id')::int, 3, 'host 2 is sent job 3');
SELECT is((allot.time_out_host(2, '2026-01-01 03:03')), 1::bigint,
          'time_out_host times out host 2''s one job without moving the farm''s clock');
SELECT results_eq($$SELECT state, tries, failures FROM allot.job WHERE id = 3$$,
                  $$VALUES ('error'::text, 2, 2)$$, 'after max_total_results = 2 sendings it gives up');
SELECT throws_ok($$SELECT allot.report_job(2, 3, 'success', 1, 60, NULL, '2026-01-01 03:04')$$, '55000',
                 'job 3 timed out on host 2: its report comes too late',
                 'the host''s report after time_out_host is refused');
SELECT throws_ok($$SELECT allot.time_out_host(99)$$, 'P0002', 'host 99 does not exist',
                 'time_out_host of an unknown host (P0002)');

-- The validator's verdict: an invalid result is a failed sending too.
UPDATE allot.job SET state = 'unsent', outcome = NULL WHERE id = 4;
SELECT is((pg_temp.ask(4, '2026-01-01 04:00') ->> 'job_id')::int, 4, 'host 4 is sent job 4');
SELECT is(allot.report_job(4, 4, 'success', 1, 60, NULL, '2026-01-01 04:01') ->> 'state', 'done',
          'host 4 reports a success');
SELECT ok(allot.validate_job(4, false), 'the validator finds it invalid');
SELECT results_eq($$SELECT state, host_id, validated, credit, failures FROM allot.job WHERE id = 4$$,
                  $$VALUES ('unsent'::text, NULL::bigint, NULL::boolean, NULL::float8, 1)$$,
                  'job 4 goes back to unsent, its host and verdict forgotten, one failure counted');
SELECT is(pg_temp.ask(4, '2026-01-01 04:02'), NULL, 'host 4 is not sent it again');
SELECT is((pg_temp.ask(1, '2026-01-01 04:03') ->> 'job_id')::int, 4, 'host 1 is');

-- ---------------------------------------------------------------------------
-- requeue_job: the operator starts a job over.
SELECT is(allot.requeue_job(4, '2026-01-01 04:04'),
          '{"job_id": 4, "state": "unsent", "was": "in_progress", "host_id": 1}'::jsonb,
          'requeue_job takes job 4 back from host 1');
SELECT results_eq($$SELECT state, host_id, tries, failures, sending FROM allot.job WHERE id = 4$$,
                  $$VALUES ('unsent'::text, NULL::bigint, 0, 0, 2)$$,
                  'unsent, tries and failures forgotten, the sending number kept');
SELECT throws_ok($$SELECT allot.report_job(1, 4, 'success', 1, 60, NULL, '2026-01-01 04:05', 2)$$, '55000',
                 'job 4 was taken back from host 1: its report is not wanted',
                 'host 1''s report of the requeued sending is refused (55000)');
SELECT is(pg_temp.ask(1, '2026-01-01 04:06'), NULL, 'host 1, which had it, is not sent it again');
SELECT is(allot.requeue_job(2, '2026-01-01 04:07') ->> 'was', 'error', 'a job that gave up is requeued');
SELECT is((pg_temp.ask(3, '2026-01-01 04:08') ->> 'job_id')::int, 2,
          'and sent to a host that never had it');
SELECT throws_ok($$SELECT allot.requeue_job(1)$$, '55000', 'job 1 is done: it is not requeued',
                 'a done job is not requeued (55000)');
SELECT throws_ok($$SELECT allot.requeue_job(999)$$, 'P0002', 'job 999 does not exist',
                 'requeue_job of an unknown job (P0002)');
SELECT throws_ok($$SELECT allot.requeue_job(NULL)$$, '22004', 'job_id must not be NULL',
                 'requeue_job(NULL) (22004)');

-- ---------------------------------------------------------------------------
-- merge_host: host 5 is host 3 come back under a new id.  Host 3 holds job
-- 2 and earned credit for job 1; host 5 is sent job 4 and earns credit.
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (5, 'Linux', 1, 1e9);
SELECT is((pg_temp.ask(5, '2026-01-01 05:00') ->> 'job_id')::int, 4, 'host 5 is sent job 4');
SELECT is(allot.report_job(5, 4, 'success', 1, 60, NULL, '2026-01-01 05:01') ->> 'state', 'done',
          'host 5 reports it');
SELECT ok(allot.validate_job(1, true) AND allot.validate_job(4, true), 'jobs 1 and 4 are valid');
UPDATE allot.app SET est_flops_per_au = 6e10, actual_au_mean = 1 WHERE id = 1;
SELECT is((allot.run_transitioner('2026-01-01 05:02') ->> 'credited')::int, 2, 'both are credited');
SELECT allot.merge_host(3, 5) AS merged \gset
SELECT is(:'merged'::jsonb, '{"host_id": 3, "merged": 5, "jobs": 1, "reports": 1}'::jsonb,
          'merge_host(3, 5) moves host 5''s job and report to host 3');
SELECT is((SELECT count(*)::int FROM allot.host WHERE id = 5), 0, 'host 5 is gone');
SELECT results_eq($$SELECT round(credit::numeric, 12), credited_jobs FROM allot.status_host WHERE host_id = 3$$,
                  $$VALUES (round(2 * 6e10 / (1e9 * 86400 / 200), 12), 2::bigint)$$,
                  'host 3 has the credit of both its jobs');
SELECT results_eq($$SELECT n_success FROM allot.host_app_version WHERE host_id = 3$$, $$VALUES (2::bigint)$$,
                  'and both hosts'' successes with the version');
SELECT results_eq($$SELECT job_id FROM allot.host_jobs(3)$$, $$VALUES (2::bigint)$$,
                  'host 3 still has job 2 in progress');
SELECT throws_ok($$SELECT allot.merge_host(3, 3)$$, '22023', 'host 3 cannot be merged into itself',
                 'a host is not merged into itself (22023)');
SELECT throws_ok($$SELECT allot.merge_host(3, 5)$$, 'P0002', 'host 5 does not exist',
                 'merging a host that does not exist (P0002)');
SELECT throws_ok($$SELECT allot.merge_host(NULL, 3)$$, '22004', NULL, 'merge_host with a NULL (22004)');

-- ---------------------------------------------------------------------------
-- The web role lists jobs, and cannot requeue, time out or merge.
CREATE ROLE allot_test_web15 IN ROLE allot_web;
SET LOCAL ROLE allot_test_web15;
SELECT results_eq($$SELECT job_id, sending FROM allot.host_jobs(3)$$, $$VALUES (2::bigint, 3)$$,
                  'allot_web reads a host''s jobs and their sendings');
SELECT throws_ok($$SELECT allot.requeue_job(2)$$, '42501', NULL, 'allot_web cannot requeue a job');
SELECT throws_ok($$SELECT allot.time_out_host(3)$$, '42501', NULL, 'nor time out a host''s jobs');
SELECT throws_ok($$SELECT allot.merge_host(1, 2)$$, '42501', NULL, 'nor merge hosts');
RESET ROLE;

-- Limits are checked.
SELECT throws_ok($$UPDATE allot.job SET max_total_results = 0 WHERE id = 6$$, '23514', NULL,
                 'max_total_results 0 is refused');
SELECT throws_ok($$UPDATE allot.job SET max_error_results = -1 WHERE id = 6$$, '23514', NULL,
                 'a negative max_error_results is refused');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');

SELECT * FROM finish();
ROLLBACK;
