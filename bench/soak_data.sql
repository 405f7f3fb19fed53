-- Data for bench/soak.sh, run after bench/dispatch_data.sql has built the job
-- farm (job hosts 1..N, job workloads 1..50, their unsent jobs) in the same
-- database: this adds the OpenBench side and the soak's own bookkeeping.
-- psql variables: first_host (the first OpenBench host id, N + 1) and
-- nhosts (how many OpenBench hosts).  Random draws are seeded, so a rerun
-- builds the same farm.
--
--   4 engines with OS, CPU flag, compiler and token requirements.
--   10 assignment workloads (app_id NULL), ids after the job workloads':
--     8 at priority 1 over the 4 engines (one SMP, one core odds, one SPSA,
--     one needing syzygy tables, one not time based), 2 at priority 0 for
--     hosts that can run none of those.
--   nhosts OpenBench hosts with ids first_host.., 1..64 threads and varied
--     flags, compilers and tokens; some can run nothing (an empty answer is
--     part of the traffic too).  Each is assigned once, in batches of 100
--     per transaction, so the soak starts from a farm in service.
--   public.soak_sent: every job a soak request hands out (job, host, when),
--     written by bench/soak_job.sql in the request's own statement; with
--     allot.job_report it accounts for every job (bench/soak_checks.sql).
--   public.soak_report_each(host): a job host's reports, one per
--     transaction (bench/soak_job.sql with REPORTS=single).
--   public.soak_transitioner: one row per transitioner round of the soak.
\set ON_ERROR_STOP on

SELECT setseed(0.6);

-- dispatch.sh's plain dequeue queue (empty here) and baseline table: not
-- part of this farm.
DROP TABLE public.bench_queue, public.bench_host;

INSERT INTO allot.engine (name, systems, cpu_flags, compiler, compiler_min, private) VALUES
    ('Stockfish', NULL,              '{}',       'g++',   '10',  false),
    ('Ethereal',  NULL,              '{popcnt}', 'gcc',   '9.2', false),
    ('Berserk',   '{Linux,Windows}', '{avx2}',   'clang', '14',  false),
    ('Torch',     NULL,              '{avx2}',   NULL,    NULL,  true);

-- Workload n of 10; its id follows the job workloads' ids, so that the
-- (workload_id, resource) order in which requests and the debt fold lock
-- allot.workload_credit rows stays one global order.
INSERT INTO allot.workload (id, name, engine, priority, throughput, dev_threads, base_threads,
                            syzygy, time_based, mode, workload_size)
SELECT w0 + n, format('ob-%s', n),
       (ARRAY['Stockfish', 'Stockfish', 'Stockfish', 'Ethereal', 'Ethereal',
              'Berserk', 'Berserk', 'Torch', 'Stockfish', 'Ethereal'])[n],
       CASE WHEN n <= 8 THEN 1 ELSE 0 END,
       (ARRAY[1000, 2000, 500, 1000, 4000, 1000, 2000, 1000, 1000, 500])[n],
       CASE WHEN n = 3 THEN 8 ELSE 1 END,                      -- SMP
       CASE WHEN n = 3 THEN 8 WHEN n = 6 THEN 2 ELSE 1 END,    -- core odds
       CASE WHEN n = 2 THEN 6 ELSE 0 END,                      -- syzygy
       n <> 7,                                                 -- fixed nodes
       CASE WHEN n = 5 THEN 'spsa_single' ELSE 'games' END,
       (ARRAY[16, 32, 32, 64])[1 + n % 4]
  FROM generate_series(1, 10) AS n, (SELECT max(id) AS w0 FROM allot.workload) AS m;
SELECT setval(pg_get_serial_sequence('allot.workload', 'id'), (SELECT max(id) FROM allot.workload));

ANALYZE allot.engine, allot.workload;

-- OpenBench hosts; r[] holds independent uniform draws per host.
INSERT INTO allot.host (id, name, os, cpu_flags, compilers, tokens, threads, physical_cores,
                        sockets, syzygy_max, noisy, focus)
SELECT i, format('ob-host-%s', i),
       CASE WHEN r[1] < 0.9 THEN 'Linux' ELSE 'Windows' END,
       CASE WHEN r[2] < 0.1 THEN '{popcnt}' WHEN r[2] < 0.7 THEN '{popcnt,avx2}'
            ELSE '{popcnt,avx2,bmi2}' END::text[],
       CASE WHEN r[3] < 0.6 THEN '{"gcc": "12.2.0", "g++": "12.2.0", "clang": "14.0.6"}'
            WHEN r[3] < 0.9 THEN '{"gcc": "11.4.0", "g++": "11.4.0"}'
            ELSE '{"clang": "15.0.0"}' END::jsonb,
       CASE WHEN r[4] < 0.1 THEN '{Torch}' ELSE '{}' END::text[],
       t.threads,
       CASE WHEN r[5] < 0.5 AND t.threads >= 2 THEN t.threads / 2 ELSE t.threads END,
       CASE WHEN t.threads >= 16 AND r[6] < 0.3 THEN 2 ELSE 1 END,
       CASE WHEN r[7] < 0.5 THEN 6 ELSE 0 END,
       r[8] < 0.03,
       CASE WHEN r[9] < 0.05 THEN '{Stockfish}' ELSE '{}' END::text[]
  FROM (SELECT i, ARRAY(SELECT random() FROM generate_series(1, 10) WHERE i > 0) AS r
          FROM generate_series(:first_host, :first_host + :nhosts - 1) AS i) AS h,
       LATERAL (SELECT (ARRAY[1, 2, 4, 8, 8, 16, 16, 32, 64])[1 + floor(r[10] * 9)::int] AS threads) AS t;
SELECT setval(pg_get_serial_sequence('allot.host', 'id'), (SELECT max(id) FROM allot.host));

ANALYZE allot.host;

-- Every OpenBench host asks once.  Small transactions: one transaction
-- updating the same ten usage rows thousands of times would leave
-- allot.workload_usage long with dead versions no farm in service has.
CREATE PROCEDURE pg_temp.assign_all(first bigint, last bigint)
LANGUAGE plpgsql AS $$
DECLARE
    b bigint := first;
BEGIN
    WHILE b <= last LOOP
        PERFORM count(*) FROM generate_series(b, least(b + 99, last)) AS h,
                              LATERAL allot.assign_workload(h);
        COMMIT;
        b := b + 100;
    END LOOP;
END
$$;
CALL pg_temp.assign_all(:first_host, :first_host + :nhosts - 1);

CREATE TABLE public.soak_sent (
    job_id  bigint NOT NULL,
    host_id bigint NOT NULL,
    at      timestamptz NOT NULL    -- clock_timestamp() after request_work returned
);

-- bench/soak_job.sql with REPORTS=single: the host's reports, each in its
-- own transaction (as a web layer making one call per report would), in the
-- order and with the outcomes of the batched statement there.
CREATE PROCEDURE public.soak_report_each(host bigint)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT j.id, j.predicted_app_units, random() AS x
               FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id
              WHERE j.host_id = host AND j.state = 'in_progress'
              ORDER BY w.app_id, j.workload_id, j.id LOOP
        PERFORM allot.report_job(host, r.id,
                                 CASE WHEN r.x < 0.01 THEN 'error' WHEN r.x < 0.03 THEN 'aborted'
                                      ELSE 'success' END,
                                 r.predicted_app_units * (0.8 + 0.4 * random()),
                                 1800 + 3600 * random(), NULL);
        COMMIT;
    END LOOP;
END
$$;

CREATE TABLE public.soak_transitioner (
    call        int PRIMARY KEY,
    at          timestamptz NOT NULL,       -- when run_transitioner started
    ms          double precision NOT NULL,  -- its time, COMMIT included
    validated   bigint NOT NULL,            -- validate_job(id, true) calls just before it
    invalidated bigint NOT NULL,            -- validate_job(id, false) calls
    result      jsonb NOT NULL
);

VACUUM ANALYZE;
