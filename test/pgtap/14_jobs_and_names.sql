-- Jobs only where they can be sent, and names that are names (issue 23,
-- item 1 and 9): 0.5.2 accepted jobs for an assignment workload (no app),
-- which no request ever serves, and check_invariants() said nothing; names
-- the README looks rows up by could be given twice.  The update from 0.5.2
-- stops on duplicates it would make unique, and names them.
--
-- Runs as a superuser in a fresh database with pgtap and allot created.
BEGIN;
SELECT plan(17);

INSERT INTO allot.app (id, name) VALUES (1, 'folding');
INSERT INTO allot.app_version (id, app_id, resource) VALUES (1, 1, 'cpu');
INSERT INTO allot.workload (id, name, engine, app_id) VALUES
    (1, 'SF: new eval', 'Stockfish', NULL),      -- an assignment workload
    (2, 'folding batch 7', 'folding', 1);        -- a job workload
INSERT INTO allot.host (id, name, threads) VALUES (1, 'box-1', 4);

-- Jobs.
SELECT throws_ok($$INSERT INTO allot.job (workload_id) SELECT 1 FROM generate_series(1, 10)$$, '23514',
                 'workload 1 has no app: only a job workload (one with an app) has jobs',
                 'jobs for an assignment workload are refused (23514)');
SELECT throws_ok($$INSERT INTO allot.job (workload_id) VALUES (2), (1), (2)$$, '23514', NULL,
                 'a statement inserting some into a job workload and one into an assignment workload is refused');
SELECT is((SELECT count(*)::int FROM allot.job), 0, 'and nothing was inserted');
SELECT lives_ok($$INSERT INTO allot.job (workload_id) SELECT 2 FROM generate_series(1, 3)$$,
                'jobs for a job workload are inserted');
SELECT throws_ok($$UPDATE allot.job SET workload_id = 1 WHERE id = (SELECT min(id) FROM allot.job)$$, '23514',
                 'workload 1 has no app: only a job workload (one with an app) has jobs',
                 'a job cannot be moved to an assignment workload');
SELECT throws_ok($$UPDATE allot.workload SET app_id = NULL WHERE id = 2$$, '23514',
                 'workload 2 has jobs: its app cannot be taken away',
                 'a workload with jobs keeps an app');
SELECT lives_ok($$UPDATE allot.workload SET app_id = 1 WHERE id = 1; UPDATE allot.workload SET app_id = NULL WHERE id = 1$$,
                'a workload without jobs may gain and lose an app');
SELECT is(jsonb_array_length(allot.request_work(1, '{"resources": {"cpu": {"req_instances": 1}}}') -> 'jobs'), 1,
          'the job workload''s jobs are sent');
-- A job from before 0.6.0 in an assignment workload: check_invariants() says so.
ALTER TABLE allot.job DISABLE TRIGGER job_workload_check;
UPDATE allot.job SET workload_id = 1 WHERE id = (SELECT max(id) FROM allot.job WHERE state = 'unsent');
ALTER TABLE allot.job ENABLE TRIGGER job_workload_check;
SELECT is((SELECT count(*)::int FROM allot.check_invariants() l
            WHERE l = 'workload 1 has 1 jobs but no app: they can never be sent'), 1,
          'check_invariants() reports jobs of a workload without an app');

-- Names.
SELECT throws_ok($$INSERT INTO allot.workload (name, engine) VALUES ('SF: new eval', 'Stockfish')$$, '23505', NULL,
                 'a second workload named like one not finished is refused (23505)');
SELECT lives_ok($$UPDATE allot.workload SET state = 'finished' WHERE id = 1;
                  INSERT INTO allot.workload (id, name, engine) VALUES (3, 'SF: new eval', 'Stockfish')$$,
                'a finished workload''s name may be used again');
SELECT throws_ok($$INSERT INTO allot.host (name, threads) VALUES ('box-1', 8)$$, '23505', NULL,
                 'a second host the operator names box-1 is refused (23505)');
SELECT lives_ok($$SELECT allot.register_host(NULL, 'desktop', 'Linux', '{}', 2, 1e9),
                         allot.register_host(NULL, 'desktop', 'Linux', '{}', 4, 1e9)$$,
                'two hosts that register themselves may both be called desktop');
SELECT throws_ok($$INSERT INTO allot.app (name) VALUES ('folding')$$, '23505', NULL,
                 'app names were unique already');

-- The update from 0.5.2 stops on duplicates and names them.
DROP EXTENSION allot CASCADE;
CREATE EXTENSION allot VERSION '0.5.2';
INSERT INTO allot.workload (id, name, engine) VALUES (1, 'dup', 'E'), (2, 'dup', 'E'), (3, 'dup', 'E');
UPDATE allot.workload SET state = 'finished' WHERE id = 3;
SELECT throws_ok($$ALTER EXTENSION allot UPDATE TO '0.6.0'$$, '23505',
                 'allot 0.6.0 makes names unique, and some are not: workload name "dup" (workloads 1, 2)',
                 'ALTER EXTENSION UPDATE from 0.5.2 stops on duplicate names, and names them');
UPDATE allot.workload SET name = 'dup 2' WHERE id = 2;
SELECT lives_ok($$ALTER EXTENSION allot UPDATE TO '0.6.0'$$, 'once renamed, the update goes through');
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'allot'), '0.6.0', 'allot is at 0.6.0');

SELECT * FROM finish();
ROLLBACK;
