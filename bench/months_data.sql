-- Data for bench/months.sh: the farm whose months are simulated.  psql
-- variables nhosts (5000) and nqueue (100000); random draws are seeded, so a
-- rerun builds the same farm.
--
--   4 apps, each with a CPU version (ncpus 1); apps 1 and 3 also with an
--     NVIDIA version (ncoprocs 1, fed by 0.2 CPU).
--   20 job workloads, 5 per app (workload k belongs to app 1 + (k - 1) / 5),
--     throughputs 500..4000, delay_bound 3 days, all at one priority.
--   nhosts hosts, Linux, 8..32 threads, cpu_flops 1e9..5e9; 80% with one
--     NVIDIA GPU of 1e12..1e13 peak FLOPS.
--   nqueue unsent jobs over the 20 workloads, for the request runs
--     (bench/months_request.sql); the script adds back what each run took.
--   bench_host: the one-row UPDATE's own table, a copy of allot.host.
-- The months' history is written day by day by bench/months_day.sql.
\set ON_ERROR_STOP on

SELECT setseed(0.20261128);

INSERT INTO allot.app (id, name) SELECT a, format('app-%s', a) FROM generate_series(1, 4) AS a;

INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs)
SELECT a, a, 'cpu', 1, 0 FROM generate_series(1, 4) AS a
UNION ALL
SELECT 10 + a, a, 'nvidia', 0.2, 1 FROM generate_series(1, 4) AS a WHERE a % 2 = 1
ORDER BY 1;

INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound)
SELECT k, format('wl-%s', k), format('app-%s', 1 + (k - 1) / 5), 1 + (k - 1) / 5,
       (ARRAY[500, 1000, 1000, 2000, 4000])[1 + k % 5], interval '3 days'
  FROM generate_series(1, 20) AS k;

INSERT INTO allot.host (id, name, os, threads, physical_cores, cpu_flops)
SELECT i, format('host-%s', i), 'Linux', t, t / 2, 1e9 + 4e9 * random()
  FROM generate_series(1, :nhosts) AS i,
       LATERAL (SELECT (ARRAY[8, 12, 16, 16, 24, 32])[1 + floor(random() * 6)::int + 0 * i] AS t) AS x;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT id, 'nvidia', 1, 1e12 + 9e12 * random() FROM allot.host WHERE random() < 0.8 ORDER BY id;

-- Credit per validated job of each app, as the transitioner would grant it
-- once the app has an estimate (the history's jobs carry it).
UPDATE allot.app SET est_flops_per_au = 1e13 * id, actual_au_mean = 1;

INSERT INTO allot.job (workload_id, predicted_app_units)
SELECT 1 + (n - 1) % 20, 0.5 + random() FROM generate_series(1, :nqueue) AS n ORDER BY 1;

CREATE TABLE public.bench_host (LIKE allot.host INCLUDING ALL);
INSERT INTO public.bench_host SELECT * FROM allot.host ORDER BY id;

VACUUM ANALYZE;
