-- allot's settings in a parallel worker.  A worker that loads allot finds
-- the allot.* settings (here the database's) as placeholders, and
-- PostgreSQL refuses to apply a placeholder in parallel mode: before 0.7.0
-- every worker of every parallel query that called one of allot's C
-- functions sent the client a WARNING per setting ("cannot be set during a
-- parallel operation").  The worker now applies them quietly, and computes
-- with the values its leader has; so does a leader (0.7.0, below).
CREATE TABLE public.names AS SELECT 'host-' || g AS name FROM generate_series(1, 100) g;
ANALYZE public.names;
SELECT format('ALTER DATABASE %I SET allot.assignment_ttl = %L', current_database(), '5min') \gexec
\c
-- Every query now runs in one worker (force_parallel_mode, renamed
-- debug_parallel_query in PostgreSQL 16), which calls allot.name_problem
-- and reports the assignment_ttl it holds.
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END,
                  'on', false) AS parallel;
SELECT current_setting('allot.assignment_ttl') AS worker_ttl, count(*)
  FROM public.names WHERE allot.name_problem(name) IS NULL
 GROUP BY 1;
-- Again: each query's worker is a new process, loading allot anew.
SELECT current_setting('allot.assignment_ttl') AS worker_ttl, count(*)
  FROM public.names WHERE allot.name_problem(name) IS NULL
 GROUP BY 1;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END,
                  'off', false) AS parallel;
-- A leader whose first call of allot is in a parallel query loads allot in
-- parallel mode too: here in the projection above the Gather, which the
-- leader computes (before the November 2024 minor releases, a WARNING per
-- setting here: see src/settings.c).
\c
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT allot.name_problem(max(name)) FROM public.names;
SELECT allot.name_problem(max(name)) IS NULL AS fine,
       current_setting('allot.assignment_ttl') AS leader_ttl
  FROM public.names;
SHOW allot.assignment_ttl;
SELECT format('ALTER DATABASE %I RESET allot.assignment_ttl', current_database()) \gexec
DROP TABLE public.names;
