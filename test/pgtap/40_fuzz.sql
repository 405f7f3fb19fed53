-- Fuzz test (issue 6, item 3): thousands of generated malformed or hostile
-- calls to allot's public functions, plus a hand list of the nastiest ones.
--
-- Every call runs in its own subtransaction and must either return a valid
-- reply or raise an ERROR whose SQLSTATE docs/errors.md gives for that
-- function.  An oracle written from the README, independent of how the calls
-- are generated, predicts each outcome from the arguments and the state just
-- before the call: "ok", or the SQLSTATE of the first check that fails (NULLs,
-- then argument values, then lookups, then the job's state).  Another outcome
-- is a failure.  A reply is checked against the tables: the jobs sent were
-- unsent, are now in progress on the host with the version the reply names,
-- are not of excluded workloads; a report's reply matches its row; and so on.
--
-- Three batches:
--   must_fail  1,200 well-formed calls with a defect put in; afterwards every
--              allot table must be as before (md5 fingerprints)
--   hand       the nastiest cases, written out below; run, then undone, so
--              that the mixed batch depends on the seed alone
--   mixed      2,600 mostly well-formed calls with random defects and edge
--              values, on a virtual clock; successes change the state as they
--              should, and a failed call must change nothing (fingerprints
--              around every 7th call)
-- After each of the last two, check_invariants() is empty, every row of every
-- allot table reads back from its text form (as pg_dump needs), and every job
-- in progress has a finite estimate; at the end the server is the same one.
--
-- The machinery is in test/fuzz/: harness.sql (the cases, running and
-- judging a call), oracle.sql and generate.sql.  About 10 s.
--
-- Reproducing a failure: the calls come from setseed(), so a seed always
-- gives the same calls.  A failing test shows each offending call as SQL,
-- with its case number (literals over 160 characters shortened).
-- ALLOT_FUZZ_SEED=n runs another seed; ALLOT_FUZZ_TRACE=on prints every call
-- before it runs (to find the one that crashes a backend).
\getenv fuzz_seed ALLOT_FUZZ_SEED
\if :{?fuzz_seed}
\else
\set fuzz_seed 6
\endif
\getenv fuzz_trace ALLOT_FUZZ_TRACE
\if :{?fuzz_trace}
\else
\set fuzz_trace off
\endif

BEGIN;
SELECT plan(31);

SET LOCAL timezone = 'UTC';                   -- deadlines are compared as instants
SET LOCAL allot.max_jobs_per_request = 40;    -- a huge request must not drain the pool
SET LOCAL allot.flops_sample_size = 5;        -- the transitioner makes estimates early
SET LOCAL fuzz.trace = :'fuzz_trace';
CREATE TEMP TABLE fuzz_run ON COMMIT DROP AS
SELECT :'fuzz_seed'::bigint AS seed, pg_postmaster_start_time() AS postmaster_start;
SELECT diag('seed ' || seed || ' (ALLOT_FUZZ_SEED)') FROM fuzz_run;

-- ---------------------------------------------------------------------------
-- Fixture: both kinds of farm, with hosts from plain to hostile-but-legal
-- (every value passes the tables' CHECK constraints: the web layer writes
-- hosts from what clients claim).
INSERT INTO allot.engine (name, systems, cpu_flags, compiler, compiler_min, private) VALUES
    ('Stockfish', NULL, '{avx2}', 'gcc', '10', false),
    ('Ethereal', '{Linux}', '{}', NULL, NULL, false),
    ('Berserk', NULL, '{}', 'clang', '14.0.1', false),
    ('Secret', NULL, '{}', NULL, NULL, true);
INSERT INTO allot.workload (id, name, engine, throughput, priority, mode, dev_threads, base_threads,
                            state, workload_size) VALUES
    (11, 'sf-a', 'Stockfish', 1000, 0, 'games', 1, 1, 'active', 32),
    (12, 'eth-a', 'Ethereal', 2000, 0, 'games', 1, 1, 'active', 32),
    (13, 'bsk-spsa', 'Berserk', 1500, 0, 'spsa_multiple', 2, 2, 'active', 16),
    (14, 'sf-odds', 'Stockfish', 500, 0, 'games', 4, 1, 'active', 32),
    (15, 'sf-low', 'Stockfish', 800, -1, 'games', 1, 1, 'active', 32),
    (16, 'secret', 'Secret', 700, 0, 'games', 1, 1, 'active', 32),
    (17, 'eth-paused', 'Ethereal', 900, 0, 'games', 1, 1, 'paused', 32);

INSERT INTO allot.app (id, name, est_flops_per_au, reference_jobs) VALUES
    (1, 'crunch', 3.6e13, false),
    (2, 'fold', NULL, false),
    (3, 'render', 1e12, false),
    (4, 'ref', NULL, true);
INSERT INTO allot.app_version (id, app_id, platform, resource, ncpus, ncoprocs, cpu_flags) VALUES
    (11, 1, NULL, 'cpu', 1, 0, '{}'),
    (12, 1, NULL, 'nvidia', 0.1, 1, '{}'),
    (21, 2, NULL, 'cpu', 2, 0, '{}'),
    (22, 2, 'Linux', 'amd', 0.5, 0.5, '{avx2}'),
    (31, 3, NULL, 'nvidia', 0.2, 1, '{}'),
    (32, 3, 'Windows', 'intel', 0.2, 1, '{}'),
    (41, 4, NULL, 'cpu', 0.5, 0, '{}');
INSERT INTO allot.workload (id, name, engine, app_id, throughput, priority, delay_bound, state) VALUES
    (21, 'crunch-a', 'crunch', 1, 1000, 0, '3 days', 'active'),
    (22, 'fold-a', 'fold', 2, 2000, 0, NULL, 'active'),
    (23, 'render-a', 'render', 3, 500, 0, '1 hour', 'active'),
    (24, 'ref-a', 'ref', 4, 1000, -1, '1 day', 'active'),
    (25, 'crunch-paused', 'crunch', 1, 1000, 0, '3 days', 'paused');
INSERT INTO allot.job (workload_id, predicted_app_units, reference)
SELECT w, (ARRAY[1, 1, 1, 0.5, 2, 0.001, 1000])[1 + g % 7], w = 24 AND g % 3 = 0
  FROM unnest(ARRAY[21, 22, 23, 24]) w, generate_series(1, 400) g;
INSERT INTO allot.job (workload_id) SELECT 25 FROM generate_series(1, 20);

INSERT INTO allot.host (id, name, os, cpu_flags, compilers, tokens, threads, physical_cores, sockets,
                        syzygy_max, noisy, focus, cpu_flops) VALUES
    (101, 'linux-gpu', 'Linux', '{avx2}', '{"gcc": "12.2.0"}', '{}', 8, NULL, 1, 0, false, '{}', 1e10),
    (102, 'win-small', 'Windows', '{}', '{}', '{}', 2, NULL, 1, 0, false, '{}', NULL),
    (103, 'linux-big', 'Linux', '{avx2,bmi2}', '{"gcc": "9.4", "clang": "15.0.7"}', '{}', 64, 32, 2,
     7, false, '{Ethereal}', 4e10),
    (104, 'noisy-mac', 'Darwin', '{avx2}', '{"gcc": "10"}', '{Secret}', 4, NULL, 1, 0, true, '{}', 2e9),
    (105, 'hostile', $h$Linux'; DROP TABLE allot.host; --$h$, $h${avx2,"'","$$",""}$h$,
     '{"gcc": "99999999999999999999999.1", "clang": 14, "": null, "icc": [1]}', '{"$$"}', 16, 8, 2,
     0, false, $h${"'; --",Stockfish}$h$, 3e9),
    (106, 'bragger', 'Linux', '{avx2}', '{"gcc": "13"}', '{}', 8, NULL, 1, 0, false, '{}', 1e18),
    (107, 'one-thread', 'Windows', '{}', '{"gcc": "10.0"}', '{}', 1, NULL, 1, 0, false, '{}', NULL),
    (108, 'huge-threads', 'Linux', '{avx2}', '{"gcc": "12"}', '{}', 2147483647, NULL, 1, 0, false,
     '{}', 5e9);
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES
    (101, 'nvidia', 1, 5e12), (101, 'amd', 2, 3e12),
    (103, 'intel', 1, 1e12), (103, 'nvidia', 4, 2e13),
    (106, 'nvidia', 1024, 1e18),
    (107, 'intel', 1, 5e11);

-- Some work in progress and some assignments before the fuzz starts.
DO $fx$
DECLARE
    h bigint;
BEGIN
    FOREACH h IN ARRAY ARRAY[101, 102, 103, 104, 105, 107] LOOP
        PERFORM allot.request_work(h, '{"resources": {"cpu": {"req_instances": 4},
            "nvidia": {"req_instances": 1}, "amd": {"req_instances": 1},
            "intel": {"req_instances": 1}}}', '2026-01-01 00:00:00+00', h);
        PERFORM allot.assign_workload(h, '2026-01-01 00:00:00+00', '{}', h);
    END LOOP;
END
$fx$;

SELECT cmp_ok((SELECT count(*) FROM allot.job WHERE state = 'in_progress'), '>=', 10::bigint,
              'fixture: jobs are in progress before the fuzz');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'fixture: invariants hold');

-- ---------------------------------------------------------------------------
-- The machinery, in test/fuzz/: the cases and how a call is run and judged,
-- the oracle, and the generators.
\ir ../fuzz/harness.sql
\ir ../fuzz/oracle.sql
\ir ../fuzz/generate.sql

-- Every random draw from here on follows the seed.
SELECT setseed(((seed % 1000003) / 1000003.0)::float8) FROM fuzz_run \g /dev/null
SELECT pg_temp.gen_must_fail(1200) \g /dev/null

-- The hand list: the nastiest cases, one by one.  What each should do comes
-- from the oracle, like every other call.
SELECT pg_temp.add('hand', 'request_work', note, host, js => js, ts => ts, seed => seed) FROM (VALUES
    ('100,000 excluded workload ids', 103::bigint, jsonb_build_object('resources', '{"cpu": {"req_instances": 2}}'::jsonb,
        'exclude', (SELECT jsonb_agg(g) FROM generate_series(1, 100000) g)), '2026-01-01 00:40:00+00'::timestamptz, 1::bigint),
    ('app_versions with 5,000 unknown keys', 101, jsonb_build_object('app_versions',
        (SELECT jsonb_object_agg(g::text, '{}'::jsonb) FROM generate_series(100, 5099) g)), '2026-01-01 00:40:00+00', 1),
    ('app_versions with the known ids and 3,000 spellings of them', 101, jsonb_build_object('app_versions',
        (SELECT jsonb_object_agg(repeat('0', g % 50) || (ARRAY[11, 12, 21])[1 + g % 3], '{}'::jsonb)
           FROM generate_series(1, 3000) g)), '2026-01-01 00:40:00+00', 1),
    ('2,000 levels of nesting under an unknown member', 101, jsonb_build_object('resources',
        '{"cpu": {"req_instances": 1}}'::jsonb, 'comment', pg_temp.deep_json(2000, '"x"')), '2026-01-01 00:40:00+00', 1),
    ('2,000 levels of nesting as a resource', 101, jsonb_build_object('resources',
        jsonb_build_object('cpu', pg_temp.deep_json(2000, '{}'))), '2026-01-01 00:40:00+00', 1),
    ('2,000 levels of nesting inside exclude', 101, jsonb_build_object('exclude',
        jsonb_build_array(21, pg_temp.deep_json(2000, '22'))), '2026-01-01 00:40:00+00', 1),
    ('SQL in a resource name', 101, $j${"resources": {"cpu'); DROP TABLE allot.job; --": {"req_secs": 1}}}$j$::jsonb,
        '2026-01-01 00:40:00+00', 1),
    ('printf directives in a resource name', 101, '{"resources": {"%s%s%s%n%n": {"req_secs": 1}}}', '2026-01-01 00:40:00+00', 1),
    ('a long multibyte string as no_gpus (the message shortens it)', 101,
        jsonb_build_object('no_gpus', 'a' || repeat('é', 40)), '2026-01-01 00:40:00+00', 1),
    ('a long multibyte string in exclude', 101, jsonb_build_object('exclude', jsonb_build_array('ab' || repeat('€', 40))),
        '2026-01-01 00:40:00+00', 1),
    ('a long multibyte string as req_secs', 101, jsonb_build_object('resources',
        jsonb_build_object('cpu', jsonb_build_object('req_secs', repeat('😀', 30)))), '2026-01-01 00:40:00+00', 1),
    ('a 100,000-character resource name', 101, jsonb_build_object('resources',
        jsonb_build_object(repeat('g', 100000), '{}'::jsonb)), '2026-01-01 00:40:00+00', 1),
    ('req_secs 1e309 (infinite as a double)', 101, '{"resources": {"cpu": {"req_secs": 1e309}}}', '2026-01-01 00:40:00+00', 1),
    ('req_secs of 401 digits', 101, ('{"resources": {"cpu": {"req_secs": 1' || repeat('0', 400) || '}}}')::jsonb,
        '2026-01-01 00:40:00+00', 1),
    ('req_secs 1e-400 (zero as a double)', 101, '{"resources": {"cpu": {"req_secs": 1e-400}}}', '2026-01-01 00:40:00+00', 1),
    ('req_instances -1e-400 (minus zero as a double)', 101, '{"resources": {"cpu": {"req_instances": -1e-400}}}',
        '2026-01-01 00:40:00+00', 1),
    ('req_instances 1e308 (beyond int)', 103, '{"resources": {"cpu": {"req_instances": 1e308}}}', '2026-01-01 00:40:00+00', 1),
    ('req_instances 2147483648, on a host of 2^31 - 1 threads', 108, '{"resources": {"cpu": {"req_instances": 2147483648}}}',
        '2026-01-01 00:40:00+00', 1),
    ('exclude the largest bigint', 101, '{"exclude": [9223372036854775807]}', '2026-01-01 00:40:00+00', 1),
    ('exclude -0 and 1e-400', 101, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [-0, 1e-400, -1e-400]}',
        '2026-01-01 00:40:00+00', 1),
    ('a buffer of 1e308 seconds', 103, '{"buffer": {"min_secs": 1e308, "max_secs": 1e308}}', '2026-01-01 00:40:00+00', 1),
    ('a buffer with min above max', 101, '{"buffer": {"min_secs": 86400, "max_secs": 1}}', '2026-01-01 00:40:00+00', 1),
    ('an old client asking for 1e308 seconds, no GPUs', 101, '{"work_req_seconds": 1e308, "no_gpus": true}',
        '2026-01-01 00:40:00+00', 1),
    ('a JSON string that looks like SQL', 101, to_jsonb($s$'; DROP TABLE allot.job; --$s$::text), '2026-01-01 00:40:00+00', 1),
    ('an empty array', 101, '[]', '2026-01-01 00:40:00+00', 1),
    ('JSON null', 101, 'null', '2026-01-01 00:40:00+00', 1),
    ('an empty request', 101, '{}', '2026-01-01 00:40:00+00', 1),
    ('now is the last finite instant', 101, '{"resources": {"cpu": {"req_instances": 1}}}',
        '294276-12-31 23:59:59.999999+00', 1),
    ('now is the first finite instant, host seen before', 101, '{"resources": {"cpu": {"req_instances": 1}}}',
        '4714-11-24 00:00:00+00 BC', 1),
    ('now is infinity', 101, '{"resources": {"cpu": {"req_instances": 1}}}', 'infinity', 1),
    ('now is -infinity', 101, '{"resources": {"cpu": {"req_instances": 1}}}', '-infinity', 1),
    ('the smallest bigint as host', -9223372036854775808, '{}', '2026-01-01 00:40:00+00', 1),
    ('the smallest bigint as seed', 101, '{"resources": {"cpu": {"req_instances": 1}}}', '2026-01-01 00:40:00+00',
        -9223372036854775808),
    ('a client stating 1e308 seconds per app unit (job workload without a deadline)', 103,
        '{"resources": {"cpu": {"req_instances": 8}}, "exclude": [21, 23, 24], "app_versions": {"21": {"seconds_per_app_unit": 1e308}}}',
        '2026-01-01 00:40:00+00', 1),
    ('a client stating 5e-324 FLOPS', 101,
        '{"resources": {"cpu": {"req_instances": 2}}, "exclude": [22, 23, 24], "app_versions": {"11": {"raw_flops_per_sec": 5e-324}}}',
        '2026-01-01 00:40:00+00', 1),
    ('a host claiming 1e18 FLOPS (the most allot.host accepts)', 106, '{"resources": {"cpu": {"req_instances": 1}}}',
        '2026-01-01 00:40:00+00', 1),
    ('a host claiming 1024 GPUs of 1e18 FLOPS (the most allot.host_coproc accepts)', 106, '{"resources": {"nvidia": {"req_instances": 1}}}',
        '2026-01-01 00:40:00+00', 1)
) AS h(note, host, js, ts, seed) \g /dev/null

-- Days ahead, the transitioner times jobs out; then their hosts report late.
SELECT pg_temp.add('hand', 'run_transitioner', 'a run 8 days ahead', ts => '2026-01-09 00:00:00+00') \g /dev/null
SELECT pg_temp.add('hand', 'report_job', note, 101, txt => txt, f1 => f1, f2 => f2, f3 => f3,
                   ts => '2026-01-01 00:45:00+00', pick => pick) FROM (VALUES
    ('a report after the job timed out', 'success', 1::float8, 10::float8, NULL::float8, 'late'),
    ('outcome in capitals', 'SUCCESS', 1, NULL, NULL, 'mine'),
    ('outcome with a trailing space', 'success ', 1, NULL, NULL, 'mine'),
    ('outcome with a newline', E'success\n', 1, NULL, NULL, 'mine'),
    ('outcome timed_out (not a client outcome)', 'timed_out', 1, NULL, NULL, 'mine'),
    ('outcome with SQL', $s$success'; DROP TABLE allot.job_report; --$s$, 1, NULL, NULL, 'mine'),
    ('outcome of 100,000 characters', repeat('x', 100000), 1, NULL, NULL, 'mine'),
    ('app_units NaN', 'success', 'NaN', NULL, NULL, 'mine'),
    ('app_units Infinity', 'success', 'Infinity', NULL, NULL, 'mine'),
    ('app_units -0', 'success', '-0', NULL, NULL, 'mine'),
    ('elapsed_secs -Infinity', 'success', 1, '-Infinity', NULL, 'mine'),
    ('raw_flops_per_sec 0', 'success', 1, 10, 0, 'mine'),
    ('app_units 5e-324 (positive)', 'success', 5e-324, 10, NULL, 'mine'),
    ('app_units 1e200', 'success', 1e200, 10, NULL, 'mine'),
    ('app_units 1e308, an error report', 'error', 1e308, 10, NULL, 'mine'),
    ('elapsed_secs and FLOPS of 1e200', 'success', 1, 1e200, 1e200, 'mine'),
    ('elapsed_secs and FLOPS of 1e-200', 'success', 1, 1e-200, 1e-200, 'mine'),
    ('the same report again', NULL, NULL, NULL, NULL, 'repeat'),
    ('the same report with other app units', NULL, NULL, NULL, NULL, 'repeat_changed'),
    ('another host''s job', 'success', 1, NULL, NULL, 'other'),
    ('a job that was never sent', 'aborted', 1, NULL, NULL, 'unsent')
) AS h(note, txt, f1, f2, f3, pick) \g /dev/null
SELECT pg_temp.add('hand', 'report_job', note, host, job, 'success', f1 => 1, ts => ts) FROM (VALUES
    ('unknown job -1', 101::bigint, -1::bigint, '2026-01-01 00:45:00+00'::timestamptz),
    ('unknown job, the largest bigint', 101, 9223372036854775807, '2026-01-01 00:45:00+00'),
    ('every argument NULL', NULL, NULL, NULL)
) AS h(note, host, job, ts) \g /dev/null

SELECT pg_temp.add('hand', fn, note, host, ts => ts, ids => ids, seed => 7) FROM (VALUES
    ('assign_workload', '100,000 excluded ids', 101::bigint, '2026-01-01 00:50:00+00'::timestamptz,
        (SELECT array_agg(g::bigint) FROM generate_series(-50000, 49999) g)),
    ('explain_assignment', '100,000 excluded ids', 101, '2026-01-01 00:50:00+00',
        (SELECT array_agg(g::bigint) FROM generate_series(-50000, 49999) g)),
    ('assign_workload', 'a 2-dimensional exclude', 101, '2026-01-01 00:50:00+00', '{{11,12},{13,14}}'::bigint[]),
    ('explain_assignment', 'a 3-dimensional exclude', 101, '2026-01-01 00:50:00+00', '{{{11}}}'),
    ('assign_workload', 'NULL inside exclude', 101, '2026-01-01 00:50:00+00', '{11,NULL}'),
    ('assign_workload', 'exclude with lower bound 0', 103, '2026-01-01 00:50:00+00', '[0:2]={11,12,13}'),
    ('assign_workload', 'every workload excluded', 103, '2026-01-01 00:50:00+00', '{11,12,13,14,15,16,17}'),
    ('assign_workload', 'a host of 2^31 - 1 threads', 108, '2026-01-01 00:50:00+00', '{}'),
    ('explain_assignment', 'a host of 2^31 - 1 threads', 108, '2026-01-01 00:50:00+00', '{}'),
    ('assign_workload', 'the hostile host', 105, '2026-01-01 00:50:00+00', '{}'),
    ('assign_workload', 'now is the last finite instant', 104, '294276-12-31 23:59:59.999999+00', '{}'),
    ('assign_workload', 'now is the first finite instant', 104, '4714-11-24 00:00:00+00 BC', '{}'),
    ('explain_assignment', 'now is the first finite instant', 104, '4714-11-24 00:00:00+00 BC', '{}'),
    ('assign_workload', 'now is -infinity', 101, '-infinity', '{}'),
    ('assign_workload', 'the largest bigint as host', 9223372036854775807, '2026-01-01 00:50:00+00', '{}')
) AS h(fn, note, host, ts, ids) \g /dev/null

SELECT pg_temp.add('hand', fn, note, host, ts => ts) FROM (VALUES
    ('heartbeat', 'now is the last finite instant', 103::bigint, '294276-12-31 23:59:59.999999+00'::timestamptz),
    ('heartbeat', 'now is the first finite instant', 103, '4714-11-24 00:00:00+00 BC'),
    ('heartbeat', 'now is infinity', 103, 'infinity'),
    ('heartbeat', 'host 0', 0, '2026-01-01 00:55:00+00'),
    ('release_assignment', 'host -1', -1, NULL),
    ('release_assignment', 'NULL host', NULL, NULL),
    ('release_assignment', 'the hostile host', 105, NULL),
    ('run_transitioner', 'now is the last finite instant', NULL, '294276-12-31 23:59:59.999999+00'),
    ('run_transitioner', 'now is the first finite instant', NULL, '4714-11-24 00:00:00+00 BC'),
    ('run_transitioner', 'now is -infinity', NULL, '-infinity'),
    ('run_transitioner', 'now is NULL', NULL, NULL),
    ('expire_assignments', 'now is the first finite instant', NULL, '4714-11-24 00:00:00+00 BC'),
    ('expire_assignments', 'now is the last finite instant', NULL, '294276-12-31 23:59:59.999999+00')
) AS h(fn, note, host, ts) \g /dev/null

SELECT pg_temp.add('hand', 'host_queue', note, host, f1 => f1, f2 => f2, ts => ts) FROM (VALUES
    ('max_buf_secs NaN', 101::bigint, 0::float8, 'NaN'::float8, '2026-01-01 00:55:00+00'::timestamptz),
    ('min_buf_secs -Infinity', 101, '-Infinity', 3600, '2026-01-01 00:55:00+00'),
    ('min_buf_secs -0', 101, '-0', 3600, '2026-01-01 00:55:00+00'),
    ('min_buf_secs 5e-324', 101, 5e-324, 3600, '2026-01-01 00:55:00+00'),
    ('a buffer of 1e308 seconds on 2^31 - 1 threads', 108, 1e308, 1.7976931348623157e308, '2026-01-01 00:55:00+00'),
    ('now is the first finite instant', 101, 0, 3600, '4714-11-24 00:00:00+00 BC'),
    ('now is the last finite instant', 101, 0, 3600, '294276-12-31 23:59:59.999999+00'),
    ('every argument NULL', NULL, NULL, NULL, NULL)
) AS h(note, host, f1, f2, ts) \g /dev/null

SELECT pg_temp.add('hand', fn, note, host, job, flag => flag, pick => pick) FROM (VALUES
    ('estimate_job', 'the job of a paused workload', 101::bigint, (SELECT max(id) FROM allot.job), NULL::boolean, NULL),
    ('estimate_job', 'a GPU-only app on a host without GPUs', 102, (SELECT min(id) FROM allot.job WHERE workload_id = 23), NULL, NULL),
    ('estimate_job', 'the host claiming 1e18 FLOPS', 106, (SELECT min(id) FROM allot.job WHERE workload_id = 21), NULL, NULL),
    ('estimate_job', 'unknown job', 101, -9223372036854775808, NULL, NULL),
    ('estimate_job', 'unknown host, known job', 424242, 1, NULL, NULL),
    ('validate_job', 'NULL verdict', NULL, 1, NULL, NULL),
    ('validate_job', 'a job never sent', NULL, NULL, true, 'unsent'),
    ('validate_job', 'a done job, valid', NULL, NULL, true, 'done'),
    ('validate_job', 'a done job, invalid', NULL, NULL, false, 'done'),
    ('validate_job', 'unknown job', NULL, 0, true, NULL)
) AS h(fn, note, host, job, flag, pick) \g /dev/null

SELECT pg_temp.add('hand', 'percentile_disc', note, vals => vals, f1 => f1) FROM (VALUES
    ('an empty array', '{}'::float8[], 0.05::float8),
    ('only NULL', '{NULL}', 0.05),
    ('NaN among values', '{1,NaN,3}', 0.05),
    ('a 2-dimensional array', '{{1,2},{3,4}}', 0.05),
    ('fraction NaN', '{1,2,3}', 'NaN'),
    ('fraction -0', '{3,1,2}', '-0'),
    ('fraction just above 1', '{3,1,2}', 1.0000000000000002),
    ('fraction 1', '{3,1,2}', 1),
    ('fraction NULL (STRICT)', '{3,1,2}', NULL),
    ('values NULL (STRICT)', NULL, 0.5),
    ('infinities and the extremes of float8', '{Infinity,-Infinity,1.7976931348623157e308,-1.7976931348623157e308,5e-324,-0,0}', 0.5),
    ('lower bound -3', '[-3:-1]={30,10,20}', 0.5),
    ('100,000 values in descending order', (SELECT array_agg(g::float8 ORDER BY g DESC) FROM generate_series(1, 100000) g), 0.05),
    ('100,000 equal values', array_fill(7::float8, ARRAY[100000]), 0.3)
) AS h(note, vals, f1) \g /dev/null

-- Last, as they may change what the hand cases after them would meet: a
-- NULL seed draws truly at random, and the reply must still be valid.
SELECT pg_temp.add('hand', 'request_work', 'NULL seed', 101, js => '{"resources": {"cpu": {"req_instances": 1}}}',
                   ts => '2026-01-01 00:41:00+00', seed => NULL) \g /dev/null
SELECT pg_temp.add('hand', 'assign_workload', 'NULL seed and NULL exclude', 103, ts => '2026-01-01 00:51:00+00',
                   ids => NULL, seed => NULL) \g /dev/null

SELECT pg_temp.gen_mixed(2600) \g /dev/null

SELECT is(ARRAY(SELECT batch || ' ' || count(*) FROM fuzz_case WHERE batch <> 'hand' GROUP BY batch ORDER BY batch),
          '{"mixed 2600","must_fail 1200"}', 'the generators made 1,200 must-fail and 2,600 mixed calls');
SELECT diag(count(*) || ' hand-written calls') FROM fuzz_case WHERE batch = 'hand';

-- ---------------------------------------------------------------------------
-- Batch 1: must fail.  Nothing in it may succeed, so the tables must end as
-- they began.
CREATE TEMP TABLE fuzz_fp ON COMMIT DROP AS SELECT pg_temp.fingerprint() AS before, NULL::text AS after;
SELECT pg_temp.run_batch('must_fail', 0) \g /dev/null
UPDATE fuzz_fp SET after = pg_temp.fingerprint();

SELECT is(ARRAY(SELECT pg_temp.show(fc) FROM fuzz_case fc WHERE batch = 'must_fail' AND expected = 'ok'
                 ORDER BY id LIMIT 5), '{}'::text[],
          'must-fail batch: the oracle finds a defect in every call (a check of the generator)');
SELECT pg_temp.verdict('must-fail batch: every error has a documented SQLSTATE (no XX000 or other)', 'must_fail',
                       ARRAY(SELECT DISTINCT fn FROM fuzz_case), '{undocumented}');
SELECT pg_temp.verdict('must-fail batch: every call fails with the SQLSTATE its defect calls for', 'must_fail',
                       ARRAY(SELECT DISTINCT fn FROM fuzz_case), '{unexpected,reply}');
SELECT pg_temp.verdict('must-fail batch: every error message is valid UTF-8', 'must_fail',
                       ARRAY(SELECT DISTINCT fn FROM fuzz_case), '{message}');
SELECT is(after, before, 'must-fail batch: every allot table is unchanged') FROM fuzz_fp;

-- ---------------------------------------------------------------------------
-- Batch 2: the hand list, each call judged like the mixed ones.  It runs in
-- a subtransaction that is rolled back once its results are saved, so that
-- its deliberately poisonous calls do not change what the mixed batch meets:
-- the mixed batch depends on the seed alone.
CREATE TEMP TABLE fuzz_hand ON COMMIT DROP AS SELECT pg_temp.fingerprint() AS before;
ALTER TABLE fuzz_hand ADD COLUMN state_problems text[];
UPDATE fuzz_hand SET state_problems = pg_temp.run_isolated('hand');
SELECT pg_temp.verdict('hand list: every error has a documented SQLSTATE', 'hand',
                       ARRAY(SELECT DISTINCT fn FROM fuzz_case), '{undocumented}');
SELECT pg_temp.verdict('hand list: every call succeeds or fails as the README says', 'hand',
                       ARRAY(SELECT DISTINCT fn FROM fuzz_case), '{unexpected}');
SELECT pg_temp.verdict('hand list: every reply is valid', 'hand',
                       ARRAY(SELECT DISTINCT fn FROM fuzz_case), '{reply}');
SELECT pg_temp.verdict('hand list: error messages are valid UTF-8, and failed calls change nothing', 'hand',
                       ARRAY(SELECT DISTINCT fn FROM fuzz_case), '{message,changed}');
SELECT is(state_problems, '{}'::text[],
          'hand list: afterwards the invariants hold, every row reads back, jobs in progress are sound')
  FROM fuzz_hand;
SELECT is(pg_temp.fingerprint(), before, 'hand list: undone before the mixed batch') FROM fuzz_hand;

-- ---------------------------------------------------------------------------
-- Batch 3: mixed, one test per function (fingerprints around every 7th call).
SELECT pg_temp.run_batch('mixed', 7) \g /dev/null
SELECT pg_temp.verdict(format('mixed batch: %s (%s calls): a valid reply or the documented error the README gives',
                              fn, count(*)),
                       'mixed', ARRAY[fn], '{undocumented,unexpected,reply}')
  FROM fuzz_case WHERE batch = 'mixed' GROUP BY fn ORDER BY fn;
SELECT pg_temp.verdict('mixed batch: error messages are valid UTF-8, and failed calls change nothing', 'mixed',
                       ARRAY(SELECT DISTINCT fn FROM fuzz_case), '{message,changed}');
-- The fuzz is worth something only if both paths ran for every function.
SELECT is(ARRAY(SELECT fn || ': ' || count(*) FILTER (WHERE got = 'ok') || ' ok, '
                       || count(*) FILTER (WHERE got <> 'ok') || ' failed'
                  FROM fuzz_case WHERE batch = 'mixed' GROUP BY fn
                HAVING count(*) FILTER (WHERE got = 'ok') = 0 OR count(*) FILTER (WHERE got <> 'ok') = 0
                 ORDER BY fn), '{}'::text[],
          'mixed batch: every function both succeeded and failed');

-- ---------------------------------------------------------------------------
-- Afterwards.
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'after the mixed batch: check_invariants() is empty');
SELECT is(ARRAY(SELECT pg_temp.state_problems()), '{}'::text[],
          'after the mixed batch: every row reads back from its text, jobs in progress are sound');
SELECT is(pg_postmaster_start_time(), postmaster_start,
          'after the fuzz: the server is alive and was never restarted (no backend crashed)') FROM fuzz_run;

SELECT * FROM finish();
ROLLBACK;
