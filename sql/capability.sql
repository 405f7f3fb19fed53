-- Seed 000 step 1, capability: each check alone, through explain_assignment's
-- reason, then through assign_workload.
SELECT reset_farm();
INSERT INTO allot.engine (name, systems, cpu_flags, compiler, compiler_min, private) VALUES
    ('Linuxonly', '{Linux}',        '{}',            NULL,    NULL,   false),
    ('Avx',       NULL,             '{avx2,bmi2}',   NULL,    NULL,   false),
    ('Secret',    NULL,             '{}',            'gcc',   '99',   true),
    ('Gcc10',     NULL,             '{}',            'gcc',   '10',   false),
    ('Clang',     NULL,             '{}',            'clang', NULL,   false),
    ('Gcc10_2',   '{Linux,Darwin}', '{}',            'gcc',   '10.2', false);
INSERT INTO allot.workload (id, engine, base_engine) VALUES
    (1, 'Linuxonly', NULL),
    (2, 'Avx', NULL),
    (3, 'Secret', NULL),
    (4, 'Gcc10', NULL),
    (5, 'Clang', NULL),
    (6, 'Gcc10_2', NULL),
    (7, 'Norow', 'Avx'),        -- an engine with no row needs nothing; the base still counts
    (8, 'Norow', NULL);

-- A Windows host with avx2 only and gcc 9.4: only the engines without needs.
INSERT INTO allot.host (id, os, cpu_flags, compilers, threads)
VALUES (1, 'Windows', '{avx2}', '{"gcc": "9.4.0"}', 4);
SELECT w, cand, reason FROM odds(1);

-- Linux, both flags, gcc 12.2.0 and clang, a token for Secret: everything.
INSERT INTO allot.host (id, os, cpu_flags, compilers, tokens, threads)
VALUES (2, 'Linux', '{sse4,avx2,bmi2}', '{"gcc": "12.2.0", "clang": "15"}', '{Secret}', 4);
SELECT w, cand, reason FROM odds(2);

-- Compiler versions compare as dotted numbers, not as text.
INSERT INTO allot.host (id, os, compilers, threads) VALUES
    (3, 'Linux', '{"gcc": "10"}', 4),        -- 10 >= 10, 10 < 10.2
    (4, 'Linux', '{"gcc": "10.10"}', 4),     -- 10.10 >= 10.2 (as text it is not)
    (5, 'Darwin', '{"gcc": "10.2.0-14"}', 4);-- trailing junk in a component is ignored
SELECT h, w, cand, reason FROM generate_series(3, 5) h, LATERAL odds(h) WHERE w IN (4, 6) ORDER BY h, w;

-- The exclude list (a client's blacklist) removes workloads.
SELECT w, cand, reason FROM odds(2, '{1,2,3,4,5,6}');

-- Syzygy, threads, SPSA, hyperthreading with core odds, noisy hosts.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, syzygy, dev_threads, base_threads, mode, time_based) VALUES
    (1, 'E', 6, 1, 1, 'games', false),          -- needs 6-man tables
    (2, 'E', 0, 8, 8, 'games', false),          -- 8 threads
    (3, 'E', 0, 4, 4, 'spsa_single', false),    -- SPSA: 2 * 4 = 8 threads
    (4, 'E', 0, 8, 4, 'games', false),          -- core odds: hyperthreads halve T
    (5, 'E', 0, 1, 1, 'games', true);           -- time-based
INSERT INTO allot.host (id, threads, physical_cores, syzygy_max, noisy) VALUES
    (1, 8, 4, 5, true),     -- hyperthreaded 8/4, 5-man tables, noisy
    (2, 8, 8, 6, false),    -- 8 real cores, 6-man tables, quiet
    (3, 7, NULL, 6, false); -- 7 threads
SELECT h, w, cand, reason FROM generate_series(1, 3) h, LATERAL odds(h) ORDER BY h, w;

-- Expected: host 1 (8 threads on 4 cores, 5-man, noisy) runs only W2 and
-- W3: W4 is core odds, so T = 8 / 2 = 4 < 8.  Host 2 (8 cores) runs all.
-- Host 3 (7 threads) runs neither 8-thread workload nor SPSA 2 * 4.
-- assign_workload honours the same filter: host 1 can only run workloads 2 and 3.
SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:00+00', seed => 3);
SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:00+00', exclude => '{2,3}');
-- Nothing fits: zero rows, and the host's assignment is released.
SELECT count(*) FROM allot.assignment WHERE host_id = 1;

-- The cache follows changes to workloads and engines at once.
UPDATE allot.workload SET state = 'paused' WHERE id IN (2, 3);
SELECT w, cand, reason FROM odds(2);
INSERT INTO allot.engine (name, systems) VALUES ('E', '{Plan9}');
SELECT w, cand, reason FROM odds(2);

-- Several compilers per engine, as OpenBench's engine configurations list
-- them: any one, at its minimum version, will do.  The single
-- compiler/compiler_min pair is one more alternative.
SELECT reset_farm();
INSERT INTO allot.engine (name, compilers, compiler, compiler_min) VALUES
    ('Either',  '{g++>=11.0.0,clang++>=16.0.0}', NULL,  NULL),
    ('AnyGcc',  '{gcc}',                         NULL,  NULL),
    ('Both',    '{clang}',                       'gcc', '12'),
    ('Tuple',   '{gcc>=10.2.0}',                 NULL,  NULL);
INSERT INTO allot.workload (id, engine) VALUES (1, 'Either'), (2, 'AnyGcc'), (3, 'Both'), (4, 'Tuple');
INSERT INTO allot.host (id, compilers, threads) VALUES
    (1, '{"g++": "10.3.0", "clang++": "16.0.0"}', 4),  -- clang++ is new enough
    (2, '{"g++": "12.1"}', 4),                         -- g++ is
    (3, '{"g++": "10.3.0", "clang++": "15.0.7", "gcc": "11"}', 4),  -- neither; gcc, but 11 < 12
    (4, '{"clang": "3"}', 4),                          -- clang, any version
    (5, '{"gcc": "10.2"}', 4);                         -- 10.2 is 10.2.0: missing parts are 0
SELECT h, w, cand, reason FROM generate_series(1, 5) h, LATERAL odds(h) ORDER BY h, w;
-- assign_workload honours it: host 4 can only run Both, through its list.
SELECT workload_id FROM allot.assign_workload(4, '2026-01-01 00:00:00+00', seed => 1);
-- Lists follow engine changes at once, like everything else.
UPDATE allot.engine SET compilers = '{g++>=10}' WHERE name = 'Either';
SELECT w, cand, reason FROM odds(3) WHERE w = 1;
