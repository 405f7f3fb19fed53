-- Data for bench/assign.sh: an OpenBench-like farm.  psql variables nhosts
-- (e.g. 100000), nvisitors (about nhosts / churn), nworkloads (200 or 2000)
-- and ntop (0: the mix below)
-- set its size; everything else is fixed, and the random draws are seeded,
-- so a rerun builds the same farm.
--
--   8 engines: public ones with OS / CPU flag / compiler requirements, two
--     private ones that need a host token.
--   nworkloads active assignment workloads (app_id NULL), in the mix below
--     for 200 and scaled for other counts; with ntop > 0, ntop of them at
--     the top priority (the top groups scaled to it, the others to the
--     rest), as on a farm where most tests run at one priority.  Only the highest runnable
--     priority matters to a host (seed 000 step 1), so the top priority holds
--     a realistic working set: for 200, 40 workloads over 6 engines at
--     priority 2; 30 at priority 1 and 130 at priority 0 are what hosts that
--     cannot run the top set fall back to.  Some need 8 threads (SMP), two
--     threads per game (SPSA) or different thread counts (core odds), syzygy
--     tables, or are not time based.
--   nhosts + nvisitors hosts (the visitors, ids above nhosts, take turns
--     with some of the others in bench/assign_request.sql): 1..64 threads,
--     half hyperthreaded, 1 or 2 sockets, mostly Linux, varied CPU flags and
--     compilers, ~15% holding a private token, ~3% noisy, ~5% with a focus
--     list.  One host in ten (id % 10 = 5) reports no compiler and holds no
--     token: it can build no engine, so that every request of it finds that
--     nothing fits (and so do most of the ~3% Darwin hosts).
--   public.bench_clock: the virtual clock of bench/assign_request.sql, one
--     tick per request; public.bench_clock_base the baseline's own, so that
--     the baseline does not age allot's assignments.
--   public.bench_sweep: one row per expire_assignments() call of
--     bench/assign_sweep.sql.
-- No host holds an assignment yet: bench/assign.sh's first lap of requests
-- assigns them, in the order in which they will keep asking.
\set ON_ERROR_STOP on

SELECT setseed(0.20240601);

INSERT INTO allot.engine (name, systems, cpu_flags, compiler, compiler_min, private) VALUES
    ('Stockfish', NULL,              '{}',           'g++',   '10',   false),
    ('Ethereal',  NULL,              '{popcnt}',     'gcc',   '9.2',  false),
    ('Berserk',   '{Linux,Windows}', '{avx2}',       'clang', '14',   false),
    ('Koivisto',  '{Linux,Windows}', '{avx2,bmi2}',  'g++',   '11.2', false),
    ('Weiss',     '{Linux}',         '{popcnt}',     'gcc',   '9.2',  false),
    ('Torch',     '{Linux,Windows}', '{avx2}',       NULL,    NULL,   true),
    ('Halogen',   NULL,              '{avx512f}',    'clang', '12',   false),
    ('Altair',    '{Linux}',         '{}',           NULL,    NULL,   true);

-- Workloads: (engine, how many) per priority; the n-th workload of the whole
-- set gets its shape from n, so the mix is the same in every run.
INSERT INTO allot.workload
       (name, engine, base_engine, priority, throughput, dev_threads, base_threads,
        syzygy, time_based, mode, workload_size)
SELECT format('%s-p%s-%s', e.engine, e.priority, k),
       e.engine,
       CASE WHEN n % 9 = 4 THEN 'Stockfish' ELSE e.engine END,   -- some compare against another engine
       e.priority,
       (ARRAY[500, 1000, 1000, 1000, 2000, 2000, 4000])[1 + n % 7],
       CASE WHEN n % 10 = 3 THEN 8 ELSE 1 END,                    -- SMP tests
       CASE WHEN n % 10 = 3 THEN 8 WHEN n % 13 = 7 THEN 2 ELSE 1 END,  -- core odds
       CASE WHEN n % 6 = 5 THEN 6 ELSE 0 END,                     -- syzygy
       n % 11 <> 2,                                               -- a few fixed-nodes tests
       CASE WHEN n % 17 = 8 THEN 'spsa_single'
            WHEN n % 23 = 11 THEN 'spsa_multiple' ELSE 'games' END,
       (ARRAY[16, 32, 32, 64])[1 + n % 4]
  FROM (SELECT engine, priority, k,
               row_number() OVER (ORDER BY priority DESC, engine, k) AS n
          FROM (VALUES ('Stockfish', 2, 12), ('Ethereal', 2, 8), ('Berserk', 2, 6),
                       ('Koivisto', 2, 5), ('Weiss', 2, 5), ('Torch', 2, 4),
                       ('Stockfish', 1, 6), ('Ethereal', 1, 4), ('Berserk', 1, 4),
                       ('Koivisto', 1, 3), ('Weiss', 1, 3), ('Torch', 1, 3),
                       ('Halogen', 1, 4), ('Altair', 1, 3),
                       ('Stockfish', 0, 30), ('Ethereal', 0, 20), ('Berserk', 0, 15),
                       ('Koivisto', 0, 15), ('Weiss', 0, 15), ('Torch', 0, 10),
                       ('Halogen', 0, 15), ('Altair', 0, 10)) AS v(engine, priority, how_many),
               generate_series(1, round(CASE WHEN :ntop = 0 THEN how_many * :nworkloads / 200.0
                                             WHEN priority = 2 THEN how_many * :ntop / 40.0
                                             ELSE how_many * (:nworkloads - :ntop) / 160.0 END)::int) AS k) AS e;

-- Hosts.  r[] holds independent uniform draws per host.
INSERT INTO allot.host
       (name, os, cpu_flags, compilers, tokens, threads, physical_cores, sockets,
        syzygy_max, noisy, focus)
SELECT format('host-%s', i),
       CASE WHEN r[1] < 0.85 THEN 'Linux' WHEN r[1] < 0.97 THEN 'Windows' ELSE 'Darwin' END,
       CASE WHEN r[2] < 0.10 THEN '{popcnt,avx2,bmi2,avx512f}'
            WHEN r[2] < 0.80 THEN '{popcnt,avx2,bmi2}'
            WHEN r[2] < 0.95 THEN '{popcnt,avx2}'
            ELSE '{popcnt}' END::text[],
       CASE WHEN i % 10 = 5 THEN '{}'
            WHEN r[1] >= 0.97 THEN '{"clang": "15.0.0"}'
            WHEN r[3] < 0.60 THEN '{"gcc": "12.2.0", "g++": "12.2.0", "clang": "14.0.6"}'
            WHEN r[3] < 0.90 THEN '{"gcc": "11.4.0", "g++": "11.4.0"}'
            ELSE '{"gcc": "9.4.0", "g++": "9.4.0", "clang": "10.0.0"}' END::jsonb,
       CASE WHEN i % 10 = 5 THEN '{}'
            WHEN r[4] < 0.10 THEN '{Torch}'
            WHEN r[4] < 0.13 THEN '{Altair}'
            WHEN r[4] < 0.15 THEN '{Torch,Altair}'
            ELSE '{}' END::text[],
       t.threads,
       CASE WHEN r[5] < 0.5 AND t.threads >= 2 THEN t.threads / 2 ELSE t.threads END,
       CASE WHEN t.threads >= 16 AND r[6] < 0.3 THEN 2 ELSE 1 END,
       CASE WHEN r[7] < 0.4 THEN 6 WHEN r[7] < 0.6 THEN 5 ELSE 0 END,
       r[8] < 0.03,
       CASE WHEN r[9] < 0.03 THEN '{Stockfish}'
            WHEN r[9] < 0.04 THEN '{Torch}'
            WHEN r[9] < 0.05 THEN '{Berserk,Koivisto}'
            ELSE '{}' END::text[]
  FROM (SELECT i, ARRAY(SELECT random() FROM generate_series(1, 10) WHERE i > 0) AS r
          FROM generate_series(1, :nhosts + :nvisitors) AS i) AS h,
       LATERAL (SELECT (ARRAY[1, 2, 4, 4, 8, 8, 8, 12, 16, 16, 24, 32, 48, 64])
                       [1 + floor(r[10] * 14)::int] AS threads) AS t;

ANALYZE allot.engine, allot.workload, allot.host;

CREATE SEQUENCE public.bench_clock MINVALUE 0 START 0;
CREATE SEQUENCE public.bench_clock_base MINVALUE 0 START 0;
CREATE TABLE public.bench_sweep (
    at      timestamptz NOT NULL,   -- virtual time of the sweep
    expired bigint NOT NULL         -- what expire_assignments() returned
);
