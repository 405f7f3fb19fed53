-- Data for bench/assign.sh: an OpenBench-like farm.  psql variable nhosts
-- (e.g. psql -v nhosts=100000 -f bench/assign_data.sql) sets the fleet size;
-- everything else is fixed, and the random draws are seeded, so a rerun
-- builds the same farm.
--
--   8 engines: public ones with OS / CPU flag / compiler requirements, two
--     private ones that need a host token.
--   200 active assignment workloads (app_id NULL).  Only the highest runnable
--     priority matters to a host (seed 000 step 1), so the top priority holds
--     a realistic working set: 40 workloads over 6 engines at priority 2;
--     30 at priority 1 and 130 at priority 0 are what hosts that cannot run
--     the top set fall back to.  Some need 8 threads (SMP), two threads per
--     game (SPSA) or different thread counts (core odds), syzygy tables, or
--     are not time based.
--   nhosts hosts: 1..64 threads, half hyperthreaded, 1 or 2 sockets, mostly
--     Linux, varied CPU flags and compilers, ~15% holding a private token,
--     ~3% noisy, ~5% with a focus list.
-- Then every host is assigned once and heartbeats once (the benchmark
-- measures a farm in service, not a cold start or a bulk load), and the
-- database is vacuumed and analyzed.
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
               generate_series(1, how_many) AS k) AS e;

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
       CASE WHEN r[1] >= 0.97 THEN '{"clang": "15.0.0"}'
            WHEN r[3] < 0.60 THEN '{"gcc": "12.2.0", "g++": "12.2.0", "clang": "14.0.6"}'
            WHEN r[3] < 0.90 THEN '{"gcc": "11.4.0", "g++": "11.4.0"}'
            ELSE '{"gcc": "9.4.0", "g++": "9.4.0", "clang": "10.0.0"}' END::jsonb,
       CASE WHEN r[4] < 0.10 THEN '{Torch}'
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
          FROM generate_series(1, :nhosts) AS i) AS h,
       LATERAL (SELECT (ARRAY[1, 2, 4, 4, 8, 8, 8, 12, 16, 16, 24, 32, 48, 64])
                       [1 + floor(r[10] * 14)::int] AS threads) AS t;

ANALYZE allot.engine, allot.workload, allot.host;

-- Every host asks once, then heartbeats once, each time in a new random
-- order, as in service:
--   * workload_usage then holds a whole fleet's threads (not a cold start);
--   * allot.assignment's rows sit where a farm in service has them, with
--     seen_at and host_id uncorrelated with their physical order, so the
--     planner's statistics are a farm's, not a bulk load's (after the
--     in-order inserts alone, seen_at's correlation would be 1);
--   * small transactions: one transaction updating the same few usage rows
--     thousands of times would leave allot.workload_usage hundreds of pages
--     long (no pruning within a transaction), which no real farm sees.
CREATE TEMP TABLE visit_order (n bigint PRIMARY KEY, id bigint NOT NULL);

CREATE PROCEDURE pg_temp.visit_hosts(what text)
LANGUAGE plpgsql AS $$
DECLARE
    n      bigint := (SELECT count(*) FROM allot.host);
    batch  constant int := 50;
    report bigint := greatest(1000, n / 10);
    done   bigint := 0;
    t0     timestamptz := clock_timestamp();
BEGIN
    TRUNCATE visit_order;
    INSERT INTO visit_order
        SELECT row_number() OVER (), id
          FROM (SELECT id FROM allot.host ORDER BY random()) AS shuffled;
    COMMIT;
    WHILE done < n LOOP
        IF what = 'assign' THEN
            PERFORM count(*) FROM visit_order AS o, LATERAL allot.assign_workload(o.id)
             WHERE o.n > done AND o.n <= done + batch;
        ELSE
            PERFORM count(*) FROM visit_order AS o, LATERAL allot.heartbeat(o.id)
             WHERE o.n > done AND o.n <= done + batch;
        END IF;
        COMMIT;
        done := least(done + batch, n);
        IF done % report < batch OR done = n THEN
            RAISE NOTICE '% % of % hosts (% s)',
                CASE what WHEN 'assign' THEN 'pre-assigned' ELSE 'heartbeat' END, done, n,
                round(extract(epoch FROM clock_timestamp() - t0)::numeric, 1);
        END IF;
    END LOOP;
END
$$;

CALL pg_temp.visit_hosts('assign');
VACUUM allot.assignment;
CALL pg_temp.visit_hosts('heartbeat');
DROP TABLE visit_order;
VACUUM ANALYZE;
