-- Rows an operator writes with plain SQL (docs/functions.md "Tables"): impossible values are
-- rejected by a CHECK constraint (SQLSTATE 23514) whose name says which
-- value is wrong, on INSERT and on UPDATE, and the table is left as it was.
--
-- The harness runs this file in a fresh database with pgtap and allot
-- created.  "Unchanged" compares every row of every allot table, as text,
-- with a snapshot taken after the fixture.
BEGIN;
SELECT plan(126);

-- ---------------------------------------------------------------------------
-- Fixture: one engine, two workloads, two hosts, one assignment.
INSERT INTO allot.engine (name, compiler, compiler_min) VALUES ('Stockfish', 'gcc', '10.2');
INSERT INTO allot.workload (id, name, engine, throughput) VALUES
    (11, 'sf-dev', 'Stockfish', 1000),
    (12, 'eth-dev', 'Ethereal', 2000);
INSERT INTO allot.host (id, name, os, compilers, threads, physical_cores, sockets, cpu_flags, focus) VALUES
    (101, 'h1', 'Linux', '{"gcc": "12.2.0"}', 8, 4, 1, '{avx2}', '{}'),
    (102, 'h2', 'Linux', '{"gcc": "12.2.0"}', 16, NULL, 2, '{}', '{Ethereal}');
CREATE TEMP TABLE fixture_assigned ON COMMIT DROP AS
SELECT * FROM allot.assign_workload(101, '2026-01-01 00:00:00+00', seed => 1);

SELECT is((SELECT count(*) FROM allot.assignment), 1::bigint, 'fixture: host 101 holds an assignment');

-- Every row of every allot table, and unchanged(description).
\ir lib/state.sql

-- The message PostgreSQL gives for a CHECK violation.
CREATE FUNCTION pg_temp.violates(tab text, con text) RETURNS text LANGUAGE sql AS $f$
    SELECT format('new row for relation "%s" violates check constraint "%s"', tab, con)
$f$;

-- ---------------------------------------------------------------------------
-- allot.host, INSERT.
SELECT throws_ok($$INSERT INTO allot.host (name, threads) VALUES ('bad', 0)$$,
                 '23514', pg_temp.violates('host', 'host_threads_positive'), 'host: threads 0');
SELECT pg_temp.unchanged('host: threads 0 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, threads) VALUES ('bad', -4)$$,
                 '23514', pg_temp.violates('host', 'host_threads_positive'), 'host: threads -4');
SELECT pg_temp.unchanged('host: threads -4 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, threads, sockets) VALUES ('bad', 8, 0)$$,
                 '23514', pg_temp.violates('host', 'host_sockets_range'), 'host: sockets 0');
SELECT pg_temp.unchanged('host: sockets 0 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, threads, sockets) VALUES ('bad', 2, 4)$$,
                 '23514', pg_temp.violates('host', 'host_sockets_range'), 'host: more sockets than threads');
SELECT pg_temp.unchanged('host: more sockets than threads inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, threads, physical_cores) VALUES ('bad', 8, 16)$$,
                 '23514', pg_temp.violates('host', 'host_physical_cores_range'), 'host: physical_cores > threads');
SELECT pg_temp.unchanged('host: physical_cores > threads inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, threads, physical_cores) VALUES ('bad', 8, 0)$$,
                 '23514', pg_temp.violates('host', 'host_physical_cores_range'), 'host: physical_cores 0');
SELECT pg_temp.unchanged('host: physical_cores 0 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, syzygy_max) VALUES ('bad', -1)$$,
                 '23514', pg_temp.violates('host', 'host_syzygy_max_nonnegative'), 'host: syzygy_max -1');
SELECT pg_temp.unchanged('host: syzygy_max -1 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, compilers) VALUES ('bad', '[1]')$$,
                 '23514', pg_temp.violates('host', 'host_compilers_object'), 'host: compilers an array');
SELECT pg_temp.unchanged('host: compilers an array inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, compilers) VALUES ('bad', '"gcc"')$$,
                 '23514', pg_temp.violates('host', 'host_compilers_object'), 'host: compilers a string');
SELECT pg_temp.unchanged('host: compilers a string inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, cpu_flops) VALUES ('bad', 'NaN')$$,
                 '23514', pg_temp.violates('host', 'host_cpu_flops_positive_finite'), 'host: cpu_flops NaN');
SELECT pg_temp.unchanged('host: cpu_flops NaN inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, cpu_flops) VALUES ('bad', -1e9)$$,
                 '23514', pg_temp.violates('host', 'host_cpu_flops_positive_finite'), 'host: cpu_flops negative');
SELECT pg_temp.unchanged('host: cpu_flops negative inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, cpu_flops) VALUES ('bad', 0)$$,
                 '23514', pg_temp.violates('host', 'host_cpu_flops_positive_finite'), 'host: cpu_flops 0');
SELECT pg_temp.unchanged('host: cpu_flops 0 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, cpu_flops) VALUES ('bad', 'Infinity')$$,
                 '23514', pg_temp.violates('host', 'host_cpu_flops_positive_finite'), 'host: cpu_flops Infinity');
SELECT pg_temp.unchanged('host: cpu_flops Infinity inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, cpu_flags) VALUES ('bad', '{avx2,NULL}')$$,
                 '23514', pg_temp.violates('host', 'host_cpu_flags_no_nulls'), 'host: NULL in cpu_flags');
SELECT pg_temp.unchanged('host: NULL in cpu_flags inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, tokens) VALUES ('bad', '{NULL}')$$,
                 '23514', pg_temp.violates('host', 'host_tokens_no_nulls'), 'host: NULL in tokens');
SELECT pg_temp.unchanged('host: NULL in tokens inserts nothing');
SELECT throws_ok($$INSERT INTO allot.host (name, focus) VALUES ('bad', '{Stockfish,NULL}')$$,
                 '23514', pg_temp.violates('host', 'host_focus_no_nulls'), 'host: NULL in focus');
SELECT pg_temp.unchanged('host: NULL in focus inserts nothing');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'after bad host inserts: invariants hold');

-- allot.host, UPDATE of a host that holds an assignment: the row stays.
SELECT throws_ok($$UPDATE allot.host SET threads = 0 WHERE id = 101$$,
                 '23514', pg_temp.violates('host', 'host_threads_positive'), 'host update: threads 0');
SELECT pg_temp.unchanged('host update: threads 0 leaves the row');
SELECT throws_ok($$UPDATE allot.host SET sockets = 0 WHERE id = 101$$,
                 '23514', pg_temp.violates('host', 'host_sockets_range'), 'host update: sockets 0');
SELECT pg_temp.unchanged('host update: sockets 0 leaves the row');
SELECT throws_ok($$UPDATE allot.host SET threads = 2 WHERE id = 101$$,
                 '23514', pg_temp.violates('host', 'host_physical_cores_range'),
                 'host update: threads below physical_cores');
SELECT pg_temp.unchanged('host update: threads below physical_cores leaves the row');
SELECT throws_ok($$UPDATE allot.host SET compilers = '[1]' WHERE id = 101$$,
                 '23514', pg_temp.violates('host', 'host_compilers_object'), 'host update: compilers an array');
SELECT pg_temp.unchanged('host update: compilers an array leaves the row');
SELECT throws_ok($$UPDATE allot.host SET cpu_flops = 'NaN' WHERE id = 101$$,
                 '23514', pg_temp.violates('host', 'host_cpu_flops_positive_finite'), 'host update: cpu_flops NaN');
SELECT pg_temp.unchanged('host update: cpu_flops NaN leaves the row');
SELECT throws_ok($$UPDATE allot.host SET cpu_flags = cpu_flags || NULL::text WHERE id = 101$$,
                 '23514', pg_temp.violates('host', 'host_cpu_flags_no_nulls'), 'host update: NULL appended to cpu_flags');
SELECT pg_temp.unchanged('host update: NULL in cpu_flags leaves the row');
SELECT throws_ok($$UPDATE allot.host SET focus = '{NULL}' WHERE id = 102$$,
                 '23514', pg_temp.violates('host', 'host_focus_no_nulls'), 'host update: NULL in focus');
SELECT pg_temp.unchanged('host update: NULL in focus leaves the row');
SELECT throws_ok($$UPDATE allot.host SET cpu_flops = CASE id WHEN 102 THEN 'NaN' ELSE 1e9 END$$,
                 '23514', pg_temp.violates('host', 'host_cpu_flops_positive_finite'),
                 'host update of every row, one of them bad (cpu_flops NaN)');
SELECT pg_temp.unchanged('host update of every row: no row changes');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'after bad host updates: invariants hold');

-- ---------------------------------------------------------------------------
-- allot.workload, INSERT.
SELECT throws_ok($$INSERT INTO allot.workload (engine, throughput) VALUES ('E', 0)$$,
                 '23514', pg_temp.violates('workload', 'workload_throughput_positive_finite'), 'workload: throughput 0');
SELECT pg_temp.unchanged('workload: throughput 0 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, throughput) VALUES ('E', -1)$$,
                 '23514', pg_temp.violates('workload', 'workload_throughput_positive_finite'), 'workload: throughput -1');
SELECT pg_temp.unchanged('workload: throughput -1 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, throughput) VALUES ('E', 'NaN')$$,
                 '23514', pg_temp.violates('workload', 'workload_throughput_positive_finite'), 'workload: throughput NaN');
SELECT pg_temp.unchanged('workload: throughput NaN inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, throughput) VALUES ('E', 'Infinity')$$,
                 '23514', pg_temp.violates('workload', 'workload_throughput_positive_finite'), 'workload: throughput Infinity');
SELECT pg_temp.unchanged('workload: throughput Infinity inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, throughput) VALUES ('E', '-Infinity')$$,
                 '23514', pg_temp.violates('workload', 'workload_throughput_positive_finite'), 'workload: throughput -Infinity');
SELECT pg_temp.unchanged('workload: throughput -Infinity inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, state) VALUES ('E', 'running')$$,
                 '23514', pg_temp.violates('workload', 'workload_state_known'), 'workload: state running');
SELECT pg_temp.unchanged('workload: state running inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, state) VALUES ('E', 'Active')$$,
                 '23514', pg_temp.violates('workload', 'workload_state_known'), 'workload: state Active (case matters)');
SELECT pg_temp.unchanged('workload: state Active inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, mode) VALUES ('E', 'tournament')$$,
                 '23514', pg_temp.violates('workload', 'workload_mode_known'), 'workload: mode tournament');
SELECT pg_temp.unchanged('workload: unknown mode inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, dev_threads) VALUES ('E', 0)$$,
                 '23514', pg_temp.violates('workload', 'workload_dev_threads_positive'), 'workload: dev_threads 0');
SELECT pg_temp.unchanged('workload: dev_threads 0 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, base_threads) VALUES ('E', -1)$$,
                 '23514', pg_temp.violates('workload', 'workload_base_threads_positive'), 'workload: base_threads -1');
SELECT pg_temp.unchanged('workload: base_threads -1 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, workload_size) VALUES ('E', 0)$$,
                 '23514', pg_temp.violates('workload', 'workload_size_positive'), 'workload: workload_size 0');
SELECT pg_temp.unchanged('workload: workload_size 0 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, syzygy) VALUES ('E', -1)$$,
                 '23514', pg_temp.violates('workload', 'workload_syzygy_nonnegative'), 'workload: syzygy -1');
SELECT pg_temp.unchanged('workload: syzygy -1 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, delay_bound) VALUES ('E', '-1 hour')$$,
                 '23514', pg_temp.violates('workload', 'workload_delay_bound_positive'), 'workload: delay_bound negative');
SELECT pg_temp.unchanged('workload: delay_bound negative inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine, delay_bound) VALUES ('E', '0')$$,
                 '23514', pg_temp.violates('workload', 'workload_delay_bound_positive'), 'workload: delay_bound 0');
SELECT pg_temp.unchanged('workload: delay_bound 0 inserts nothing');
SELECT throws_ok($$INSERT INTO allot.workload (engine) VALUES (NULL)$$,
                 '23502', 'null value in column "engine" of relation "workload" violates not-null constraint',
                 'workload: engine NULL');
SELECT pg_temp.unchanged('workload: engine NULL inserts nothing');

-- allot.workload, UPDATE of a workload that is assigned.
SELECT throws_ok($$UPDATE allot.workload SET throughput = 'NaN'$$,
                 '23514', pg_temp.violates('workload', 'workload_throughput_positive_finite'),
                 'workload update: throughput NaN');
SELECT pg_temp.unchanged('workload update: throughput NaN leaves the rows');
SELECT throws_ok($$UPDATE allot.workload SET state = 'running' WHERE id = 11$$,
                 '23514', pg_temp.violates('workload', 'workload_state_known'), 'workload update: state running');
SELECT pg_temp.unchanged('workload update: state running leaves the row');
SELECT throws_ok($$UPDATE allot.workload SET mode = 'spsa' WHERE id = 11$$,
                 '23514', pg_temp.violates('workload', 'workload_mode_known'), 'workload update: mode spsa');
SELECT pg_temp.unchanged('workload update: unknown mode leaves the row');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'after bad workload rows: invariants hold');

-- ---------------------------------------------------------------------------
-- allot.engine.
SELECT throws_ok($$INSERT INTO allot.engine (name, compiler, compiler_min) VALUES ('Bad', 'gcc', 'abc')$$,
                 '23514', pg_temp.violates('engine', 'engine_compiler_min_dotted'), 'engine: compiler_min abc');
SELECT pg_temp.unchanged('engine: compiler_min abc inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compiler, compiler_min) VALUES ('Bad', 'gcc', '10.')$$,
                 '23514', pg_temp.violates('engine', 'engine_compiler_min_dotted'), 'engine: compiler_min 10.');
SELECT pg_temp.unchanged('engine: compiler_min 10. inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compiler, compiler_min) VALUES ('Bad', 'gcc', '')$$,
                 '23514', pg_temp.violates('engine', 'engine_compiler_min_dotted'), 'engine: compiler_min empty');
SELECT pg_temp.unchanged('engine: compiler_min empty inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, cpu_flags) VALUES ('Bad', '{avx2,NULL}')$$,
                 '23514', pg_temp.violates('engine', 'engine_cpu_flags_no_nulls'), 'engine: NULL in cpu_flags');
SELECT pg_temp.unchanged('engine: NULL in cpu_flags inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, systems) VALUES ('Bad', '{Linux,NULL}')$$,
                 '23514', pg_temp.violates('engine', 'engine_systems_no_nulls'), 'engine: NULL in systems');
SELECT pg_temp.unchanged('engine: NULL in systems inserts nothing');
SELECT throws_ok($$UPDATE allot.engine SET compiler_min = 'abc' WHERE name = 'Stockfish'$$,
                 '23514', pg_temp.violates('engine', 'engine_compiler_min_dotted'), 'engine update: compiler_min abc');
SELECT pg_temp.unchanged('engine update: compiler_min abc leaves the row');
SELECT throws_ok($$INSERT INTO allot.engine (name, compilers) VALUES ('Bad', '{}')$$,
                 '23514', pg_temp.violates('engine', 'engine_compilers_format'), 'engine: compilers empty (NULL means none needed)');
SELECT pg_temp.unchanged('engine: compilers empty (NULL means none needed) inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compilers) VALUES ('Bad', '{"gcc >= 10"}')$$,
                 '23514', pg_temp.violates('engine', 'engine_compilers_format'), 'engine: compilers element with blanks');
SELECT pg_temp.unchanged('engine: compilers element with blanks inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compilers) VALUES ('Bad', '{gcc>=10.x}')$$,
                 '23514', pg_temp.violates('engine', 'engine_compilers_format'), 'engine: compilers version 10.x');
SELECT pg_temp.unchanged('engine: compilers version 10.x inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compilers) VALUES ('Bad', '{clang,gcc>=}')$$,
                 '23514', pg_temp.violates('engine', 'engine_compilers_format'), 'engine: compilers version missing after >=');
SELECT pg_temp.unchanged('engine: compilers version missing after >= inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compilers) VALUES ('Bad', '{>=10}')$$,
                 '23514', pg_temp.violates('engine', 'engine_compilers_format'), 'engine: compilers name missing');
SELECT pg_temp.unchanged('engine: compilers name missing inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compilers) VALUES ('Bad', '{gcc>10}')$$,
                 '23514', pg_temp.violates('engine', 'engine_compilers_format'), 'engine: compilers with > instead of >=');
SELECT pg_temp.unchanged('engine: compilers with > instead of >= inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compilers) VALUES ('Bad', '{gcc,NULL}')$$,
                 '23514', pg_temp.violates('engine', 'engine_compilers_format'), 'engine: NULL in compilers');
SELECT pg_temp.unchanged('engine: NULL in compilers inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compilers) VALUES ('Bad', '{{gcc},{clang}}')$$,
                 '23514', pg_temp.violates('engine', 'engine_compilers_format'), 'engine: compilers two-dimensional');
SELECT pg_temp.unchanged('engine: compilers two-dimensional inserts nothing');
SELECT throws_ok($$INSERT INTO allot.engine (name, compiler_min) VALUES ('Bad', '10')$$,
                 '23514', pg_temp.violates('engine', 'engine_compiler_min_needs_compiler'), 'engine: compiler_min without compiler');
SELECT pg_temp.unchanged('engine: compiler_min without compiler inserts nothing');
SELECT throws_ok($$UPDATE allot.engine SET compiler = NULL WHERE name = 'Stockfish'$$,
                 '23514', pg_temp.violates('engine', 'engine_compiler_min_needs_compiler'), 'engine update: compiler cleared, compiler_min kept');
SELECT pg_temp.unchanged('engine update: compiler cleared, compiler_min kept leaves the row');
SELECT throws_ok($$UPDATE allot.engine SET compilers = '{clang++>=16,g++>=11.0.0,cargo>=1.70.}' WHERE name = 'Stockfish'$$,
                 '23514', pg_temp.violates('engine', 'engine_compilers_format'), 'engine update: one bad element among good ones');
SELECT pg_temp.unchanged('engine update: one bad element among good ones leaves the row');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'after bad engine rows: invariants hold');

-- ---------------------------------------------------------------------------
-- The failed writes did not disturb dispatch: the per-backend workload cache
-- still sees the same workloads, and the host's assignment is intact.
SELECT results_eq(
    $$SELECT workload_id, candidate FROM allot.explain_assignment(102, '2026-01-01 00:01:00+00') ORDER BY 1$$,
    $$VALUES (11::bigint, false), (12::bigint, true)$$,
    'explain after the failed writes: host 102 (focus Ethereal) is focused on workload 12');
SELECT is((SELECT workload_id FROM allot.assign_workload(101, '2026-01-01 00:01:00+00', seed => 1)),
          (SELECT workload_id FROM fixture_assigned),
          'host 101 asks again and repeats its workload');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'at the end: invariants hold');

SELECT * FROM finish();
ROLLBACK;
