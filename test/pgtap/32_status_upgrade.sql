-- ALTER EXTENSION allot UPDATE to 0.5.0 on a farm that already has jobs:
-- the new counters (job_usage.done and .error, allot.host_credit) start
-- from what the jobs hold, and run_transitioner, which records its runs
-- from 0.5.0 on, works on either side of the update.  The harness installs
-- the current version; this file goes back to 0.4.0 inside its transaction.
BEGIN;
SELECT plan(7);

DROP EXTENSION allot;
CREATE EXTENSION allot VERSION '0.4.0';

INSERT INTO allot.app (id, name) VALUES (1, 'folding');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES
    (1, 'a', 'folding', 1, '2 days'), (2, 'b', 'folding', 1, '2 days');
INSERT INTO allot.host (id, name, threads, cpu_flops) VALUES (1, 'h1', 4, 1e9), (2, 'h2', 4, 1e9);
INSERT INTO allot.job (workload_id, state, host_id, app_version_id, sent_at, peak_flops_per_sec, credit)
VALUES (1, 'unsent', NULL, NULL, NULL, NULL, NULL),
       (1, 'unsent', NULL, NULL, NULL, NULL, NULL),
       (1, 'in_progress', 1, 1, now(), 1e9, NULL),
       (1, 'done', 1, 1, now(), 1e9, 1.25),
       (1, 'done', 2, 1, now(), 1e9, 2),
       (2, 'done', 2, 1, now(), 1e9, NULL),
       (2, 'error', 1, 1, now(), 1e9, NULL),
       (2, 'timed_out', NULL, NULL, NULL, NULL, NULL);

SELECT lives_ok($$SELECT allot.run_transitioner()$$,
                'under 0.4.0 the transitioner runs, with nowhere to record it');
SELECT is(to_regclass('allot.transitioner_run'), NULL, 'and 0.4.0 has no allot.transitioner_run');

ALTER EXTENSION allot UPDATE TO '0.5.0';

SELECT results_eq(
    $$SELECT workload_id, unsent, in_progress, done, error FROM allot.job_usage ORDER BY 1$$,
    $$VALUES (1::bigint, 2::bigint, 1::bigint, 2::bigint, 0::bigint), (2, 0, 0, 1, 2)$$,
    'job_usage counts the done and errored jobs the farm had');
SELECT results_eq(
    $$SELECT host_id, credit, jobs FROM allot.host_credit ORDER BY 1$$,
    $$VALUES (1::bigint, 1.25::numeric, 1::bigint), (2, 2, 1)$$,
    'host_credit holds the credit the farm''s jobs had');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');
SELECT lives_ok($$SELECT allot.run_transitioner()$$, 'in the same session, after the update, it runs');
SELECT is((SELECT count(*) FROM allot.status_transitioner), 1::bigint, 'and records its run');

SELECT * FROM finish();
ROLLBACK;
