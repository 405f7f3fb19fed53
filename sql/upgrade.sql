-- The upgrade path: install the first release, use it, update to the
-- current one, and use both sides.  One C library serves every SQL version.
CREATE EXTENSION allot VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'allot';
-- 0.1.0 has no job side.
SELECT to_regclass('allot.job') IS NULL AS no_job_table,
       to_regprocedure('allot.request_work(bigint,jsonb,timestamptz,bigint)') IS NULL AS no_request_work;
INSERT INTO allot.workload (id, engine) VALUES (1, 'E');
INSERT INTO allot.host (id, threads) VALUES (1, 8);
SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:00+00');
-- Engines in the single compiler form; 0.5.0 moves them into compilers.
INSERT INTO allot.engine (name, compiler, compiler_min) VALUES
    ('Gcc', 'gcc', '10.2'),
    ('Blank', 'my cc', NULL),  -- not a list element: stays a pair
    ('Orphan', NULL, '9');     -- a minimum without a compiler was ignored
INSERT INTO allot.workload (id, engine) VALUES (3, 'Gcc');
INSERT INTO allot.host (id, compilers, threads) VALUES
    (2, '{"gcc": "10.2"}', 8), (3, '{"gcc": "10.1.9"}', 8);
SELECT h, workload_id, candidate, reason
  FROM generate_series(2, 3) h, allot.explain_assignment(h, '2026-01-01 00:00:00+00')
 WHERE workload_id = 3;
-- Fairness over time needs 0.4.0's tables: a clean error before the update.
SET allot.fairness = recent;
SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:30+00');
RESET allot.fairness;

ALTER EXTENSION allot UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'allot';
-- The assignment made under 0.1.0 is still counted, and the job side works.
SELECT workload_id, threads, hosts FROM allot.workload_usage;
-- Host 1 is the only one counted, so it sees a cold farm: a draw, not a repeat.
SELECT workload_id, repeated FROM allot.assign_workload(1, '2026-01-01 00:01:00+00');
INSERT INTO allot.app (id, name) VALUES (1, 'app');
INSERT INTO allot.app_version (id, app_id, resource) VALUES (1, 1, 'cpu');
INSERT INTO allot.workload (id, engine, app_id) VALUES (2, 'E', 1);
INSERT INTO allot.job (workload_id) VALUES (2);
SELECT jsonb_array_length(allot.request_work(1, '{"resources": {"cpu": {"req_instances": 1}}}',
                                             '2026-01-01 00:02:00+00') -> 'jobs') AS jobs_sent;
SELECT * FROM allot.check_invariants();
-- The engines' pairs moved into their lists, and the same hosts fit.
SELECT name, compiler, compiler_min, compilers FROM allot.engine ORDER BY name;
SELECT h, workload_id, candidate, reason
  FROM generate_series(2, 3) h, allot.explain_assignment(h, '2026-01-01 00:00:00+00')
 WHERE workload_id = 3;
-- ... and, in the same session, fairness over time.
SET allot.fairness = recent;
SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:03:00+00');
SELECT workload_id, resource, rec FROM allot.workload_credit;
RESET allot.fairness;

-- Every object of the extension is in schema allot.
SELECT count(*) AS objects_outside_allot
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'allot'
  JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
 WHERE c.relnamespace <> 'allot'::regnamespace;
-- Dropping the extension leaves nothing behind: the schema drops without CASCADE.
DROP EXTENSION allot;
DROP SCHEMA allot;
