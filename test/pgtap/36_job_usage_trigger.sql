-- The statement trigger that keeps allot.job_usage and allot.host_credit,
-- in C from 0.5.1 on: the update from 0.5.0's PL/pgSQL on a farm with jobs,
-- then statements of every kind compared with a recount of allot.job, the
-- statements that must not touch a usage row, hostile peaks, and the
-- trigger used where it does not belong.  The harness installs the current
-- version; this file goes back to 0.5.0 inside its transaction.
BEGIN;
SELECT plan(24);

DROP EXTENSION allot;
CREATE EXTENSION allot VERSION '0.5.0';

INSERT INTO allot.app (id, name) VALUES (1, 'folding');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound)
SELECT w, 'w' || w, 'folding', 1, '2 days' FROM generate_series(1, 30) w;
INSERT INTO allot.host (id, name, threads, cpu_flops)
SELECT h, 'h' || h, 4, 1e9 FROM generate_series(1, 5) h;
INSERT INTO allot.job (workload_id, state, host_id, app_version_id, sent_at, peak_flops_per_sec, credit)
VALUES (1, 'unsent', NULL, NULL, NULL, NULL, NULL),
       (1, 'in_progress', 1, 1, now(), 1.5e9, NULL),
       (2, 'done', 2, 1, now(), 1e9, 2),
       (2, 'timed_out', NULL, NULL, NULL, NULL, NULL);

SELECT is((SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
            WHERE p.oid = 'allot.job_usage_trigger()'::regprocedure),
          'plpgsql', '0.5.0 keeps job_usage in PL/pgSQL');

ALTER EXTENSION allot UPDATE TO '0.5.1';

SELECT is((SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
            WHERE p.oid = 'allot.job_usage_trigger()'::regprocedure),
          'c', '0.5.1 keeps it in C');
SELECT is((SELECT proconfig FROM pg_proc WHERE oid = 'allot.job_usage_trigger()'::regprocedure),
          '{"search_path=pg_catalog, pg_temp"}'::text[], 'with its search_path pinned');
SELECT is((SELECT prosecdef FROM pg_proc WHERE oid = 'allot.job_usage_trigger()'::regprocedure),
          false, 'and SECURITY INVOKER');

-- What allot.job holds, counted, against what the triggers kept.
CREATE TEMP VIEW recount AS
SELECT workload_id, count(*) FILTER (WHERE state = 'unsent')::numeric AS unsent,
       count(*) FILTER (WHERE state = 'in_progress')::numeric AS in_progress,
       coalesce(sum(allot.job_mflops(peak_flops_per_sec)) FILTER (WHERE state = 'in_progress'), 0) AS mflops,
       count(*) FILTER (WHERE state = 'done')::numeric AS done,
       count(*) FILTER (WHERE state IN ('error', 'timed_out'))::numeric AS error
  FROM allot.job GROUP BY workload_id;
CREATE TEMP VIEW kept AS
SELECT workload_id, sum(unsent) AS unsent, sum(in_progress) AS in_progress, sum(mflops) AS mflops,
       sum(done) AS done, sum(error) AS error
  FROM allot.job_usage GROUP BY workload_id
HAVING sum(unsent) <> 0 OR sum(in_progress) <> 0 OR sum(mflops) <> 0 OR sum(done) <> 0 OR sum(error) <> 0;
CREATE TEMP VIEW credit_recount AS
SELECT host_id, sum(credit::numeric) AS credit, count(*) AS jobs
  FROM allot.job WHERE credit IS NOT NULL AND host_id IS NOT NULL GROUP BY host_id;
CREATE TEMP VIEW credit_kept AS
SELECT host_id, credit, jobs FROM allot.host_credit WHERE credit <> 0 OR jobs <> 0;

SELECT results_eq('SELECT * FROM kept ORDER BY 1', 'SELECT * FROM recount ORDER BY 1',
                  'after the update, job_usage still equals a recount');

-- A bulk insert with the workloads interleaved (each workload's rows come
-- in many runs), jobs in every state, and peaks that round both ways.
INSERT INTO allot.job (workload_id, state, host_id, app_version_id, sent_at, peak_flops_per_sec)
SELECT 1 + (i * 7) % 30, s.state,
       CASE WHEN s.state = 'in_progress' THEN 1 + i % 5 END,
       CASE WHEN s.state = 'in_progress' THEN 1 END,
       CASE WHEN s.state = 'in_progress' THEN now() END,
       CASE WHEN i % 4 = 0 THEN NULL ELSE 2.5e6 * (i % 9) END
  FROM generate_series(1, 3000) i
  CROSS JOIN LATERAL (SELECT (ARRAY['unsent', 'in_progress', 'done', 'error', 'timed_out'])[1 + i % 5] AS state) s;
SELECT results_eq('SELECT * FROM kept ORDER BY 1', 'SELECT * FROM recount ORDER BY 1',
                  'an interleaved bulk insert of 3,000 jobs is counted');

-- Jobs move between states and workloads, and their peaks change.
UPDATE allot.job SET state = 'in_progress', host_id = 1 + id % 5, app_version_id = 1, sent_at = now(),
                     peak_flops_per_sec = 3.5e6 * (id % 3)
 WHERE state = 'unsent' AND id % 3 = 0;
UPDATE allot.job SET workload_id = 1 + (workload_id + 11) % 30 WHERE id % 4 = 1;
UPDATE allot.job SET state = 'done', credit = 0.5 * (id % 7) WHERE state = 'in_progress' AND id % 2 = 0;
SELECT results_eq('SELECT * FROM kept ORDER BY 1', 'SELECT * FROM recount ORDER BY 1',
                  'updates of state, workload and peak are counted');
SELECT results_eq('SELECT * FROM credit_kept ORDER BY 1', 'SELECT * FROM credit_recount ORDER BY 1',
                  'credit granted by an update is kept per host');

UPDATE allot.job SET credit = credit + 1, host_id = 1 + (host_id + 1) % 5 WHERE credit IS NOT NULL AND id % 3 = 0;
SELECT results_eq('SELECT * FROM credit_kept ORDER BY 1', 'SELECT * FROM credit_recount ORDER BY 1',
                  'credit that changes, or moves to another host, is kept per host');

DELETE FROM allot.job WHERE id % 5 = 2;
SELECT results_eq('SELECT * FROM kept ORDER BY 1', 'SELECT * FROM recount ORDER BY 1',
                  'deleted jobs are taken off');
SELECT results_eq('SELECT * FROM credit_kept ORDER BY 1', 'SELECT * FROM credit_recount ORDER BY 1',
                  'and so is their credit');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'check_invariants() is empty');

-- Jobs that come back to unsent are counted as reopened, per workload (what
-- request_work watches to look for a workload's oldest unsent job again);
-- jobs sent, or inserted, are not.  (The workload moves above count: unsent
-- jobs that arrive in a workload are new to it.)
CREATE TEMP VIEW reopened AS
SELECT w.id AS workload_id, coalesce((SELECT sum(reopened) FROM allot.job_usage u WHERE u.workload_id = w.id), 0) AS n
  FROM allot.workload w;
CREATE TEMP TABLE reopened_before AS SELECT * FROM reopened;
UPDATE allot.job SET state = 'in_progress', host_id = 1, app_version_id = 1, sent_at = now()
 WHERE state = 'unsent' AND id % 7 = 0;
INSERT INTO allot.job (workload_id) SELECT 1 + i % 30 FROM generate_series(1, 60) i;
SELECT results_eq('SELECT * FROM reopened ORDER BY 1', 'SELECT * FROM reopened_before ORDER BY 1',
                  'jobs sent or inserted are not counted as reopened');
CREATE TEMP TABLE back AS
SELECT workload_id, count(*) AS n FROM allot.job WHERE state IN ('in_progress', 'timed_out') AND id % 3 = 1
 GROUP BY workload_id;
UPDATE allot.job SET state = 'unsent', host_id = NULL, app_version_id = NULL, sent_at = NULL,
                     peak_flops_per_sec = NULL
 WHERE state IN ('in_progress', 'timed_out') AND id % 3 = 1;
SELECT results_eq('SELECT r.workload_id, r.n - b.n FROM reopened r JOIN reopened_before b USING (workload_id)
                    WHERE r.n <> b.n ORDER BY 1',
                  'SELECT workload_id, n::numeric FROM back ORDER BY 1',
                  'jobs given back to unsent are counted as reopened, per workload');

-- A statement that changes no count touches no usage row: same row versions.
CREATE TEMP TABLE before_ctids AS SELECT array_agg(ctid ORDER BY ctid) AS c FROM allot.job_usage;
CREATE TEMP TABLE before_credit AS SELECT array_agg(ctid ORDER BY ctid) AS c FROM allot.host_credit;
UPDATE allot.job SET predicted_app_units = 2 WHERE id % 2 = 0;
UPDATE allot.job SET workload_id = workload_id WHERE true;
SELECT is((SELECT array_agg(ctid ORDER BY ctid) FROM allot.job_usage), (SELECT c FROM before_ctids),
          'updates that change no count write no job_usage row');
SELECT is((SELECT array_agg(ctid ORDER BY ctid) FROM allot.host_credit), (SELECT c FROM before_credit),
          'nor any host_credit row');

-- Hostile peaks: a job in progress whose MFLOPS do not fit a bigint is
-- refused, whichever way it arrives, and nothing changes.
CREATE TEMP TABLE before_usage AS SELECT * FROM allot.job_usage;
SELECT throws_ok($$INSERT INTO allot.job (workload_id, state, host_id, app_version_id, sent_at, peak_flops_per_sec)
                   VALUES (3, 'in_progress', 1, 1, now(), 1e30)$$,
                 '22003', 'job peak_flops_per_sec 1e+30 is out of range',
                 'a job in progress with 1e30 FLOPS is refused');
SELECT throws_ok($$UPDATE allot.job SET peak_flops_per_sec = 'NaN' WHERE state = 'in_progress' AND id % 2 = 1$$,
                 '22003', NULL, 'a NaN peak is refused');
SELECT throws_ok($$UPDATE allot.job SET peak_flops_per_sec = '-Infinity' WHERE state = 'in_progress'$$,
                 '22003', NULL, 'and so is -Infinity');
-- Each fits, but not their sum: the statement is refused, naming the workload.
SELECT throws_ok($$INSERT INTO allot.job (workload_id, state, host_id, app_version_id, sent_at, peak_flops_per_sec)
                   VALUES (3, 'in_progress', 1, 1, now(), 9.2e24), (3, 'in_progress', 1, 1, now(), 9.2e24)$$,
                 '22003', 'the change in allot.job_usage of workload 3 is out of range',
                 'two jobs whose MFLOPS add up beyond a bigint are refused');
SELECT results_eq('SELECT * FROM allot.job_usage ORDER BY workload_id, shard',
                  'SELECT * FROM before_usage ORDER BY workload_id, shard',
                  'the refused statements changed no usage row');
-- The largest peak that fits, and its negative, are counted.
UPDATE allot.job SET peak_flops_per_sec = 9.2e24 WHERE id = (SELECT min(id) FROM allot.job WHERE state = 'in_progress');
UPDATE allot.job SET peak_flops_per_sec = -9.2e24 WHERE id = (SELECT max(id) FROM allot.job WHERE state = 'in_progress');
SELECT results_eq('SELECT * FROM kept ORDER BY 1', 'SELECT * FROM recount ORDER BY 1',
                  'peaks at the edge of the range are counted like allot.job_mflops counts them');

-- The trigger function where it does not belong.
CREATE TEMP TABLE scratch (x int);
CREATE TRIGGER scratch_row AFTER INSERT ON scratch FOR EACH ROW EXECUTE FUNCTION allot.job_usage_trigger();
SELECT throws_ok('INSERT INTO scratch VALUES (1)', '39P01', NULL, 'as a row trigger it refuses to run');
DROP TRIGGER scratch_row ON scratch;
CREATE TRIGGER scratch_stmt AFTER INSERT ON scratch FOR EACH STATEMENT EXECUTE FUNCTION allot.job_usage_trigger();
SELECT throws_ok('INSERT INTO scratch VALUES (1)', '39P01', NULL,
                 'as a statement trigger without transition tables too');

SELECT * FROM finish();
ROLLBACK;
