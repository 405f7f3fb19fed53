-- Data for bench/dispatch.sh: a BOINC-like job farm.  psql variables nhosts
-- (100000), njobs (1000000) and nqueue (1000000) set the sizes; everything
-- else is fixed, and the random draws are seeded, so a rerun builds the same
-- farm.
--
--   20 apps, each with a CPU version (ncpus 1); the odd ones also with an
--     NVIDIA version (ncoprocs 1, fed by 0.2 CPU).  No platform, no CPU flags:
--     every host can run every version its devices allow.
--   50 job workloads over them (2 or 3 per app), throughputs 500..4000,
--     delay_bound 3 days; 43 at the top priority 2 (the choice the selection
--     really makes), 5 at priority 1, 2 at priority 0.  Workload ids follow
--     app ids (the soak script's lock order relies on it, see
--     dispatch_soak.sql).
--   njobs unsent jobs over the 50 workloads, in proportion to how fast
--     dispatch drains each (see below), predicted app units 0.5..1.5; the
--     statement trigger on allot.job fills job_usage.
--   nhosts hosts, Linux, 8..32 threads, cpu_flops 1e9..5e9; 80% with one
--     NVIDIA GPU of 1e12..1e13 peak FLOPS.
--   bench_queue: the plain FOR UPDATE SKIP LOCKED dequeue's own table, nqueue
--     unsent rows with a partial index over the unsent ones.
--   bench_host: the one-row UPDATE's own table, a copy of allot.host (same
--     rows, columns, CHECKs and indexes), so that the baseline leaves the
--     hosts' last_seen alone (request_work writes it when a minute old).
\set ON_ERROR_STOP on

SELECT setseed(0.20261121);

INSERT INTO allot.app (id, name)
SELECT a, format('app-%s', a) FROM generate_series(1, 20) AS a;

INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs)
SELECT a, 'cpu', 1, 0 FROM generate_series(1, 20) AS a
UNION ALL
SELECT a, 'nvidia', 0.2, 1 FROM generate_series(1, 20) AS a WHERE a % 2 = 1
ORDER BY 1, 2;

-- Workload k belongs to app 1 + (k - 1) * 20 / 50: ids and app ids rise
-- together.
INSERT INTO allot.workload (id, name, engine, app_id, priority, throughput, delay_bound)
SELECT k, format('wl-%s', k), format('app-%s', app), app,
       CASE WHEN k % 10 = 0 THEN 1 WHEN k % 25 = 7 THEN 0 ELSE 2 END,
       (ARRAY[500, 1000, 1000, 2000, 4000])[1 + k % 5],
       interval '3 days'
  FROM generate_series(1, 50) AS k, LATERAL (SELECT 1 + (k - 1) * 20 / 50 AS app) AS a;

ANALYZE allot.app, allot.app_version, allot.workload;

-- Hosts and their GPUs.
INSERT INTO allot.host (id, name, os, threads, physical_cores, cpu_flops)
SELECT i, format('host-%s', i), 'Linux', t, t / 2, 1e9 + 4e9 * random()
  FROM generate_series(1, :nhosts) AS i,
       LATERAL (SELECT (ARRAY[8, 12, 16, 16, 24, 32])[1 + floor(random() * 6)::int + 0 * i] AS t) AS x;

INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT id, 'nvidia', 1, 1e12 + 9e12 * random()
  FROM allot.host WHERE random() < 0.8 ORDER BY id;

-- Unsent jobs: one statement, so the statement trigger aggregates once.
-- Workload k gets a share of njobs in proportion to its weight, its
-- throughput times 8 when its app has no GPU version: every request takes 8
-- CPU jobs and at most 1 GPU job, and the CPU jobs go to the CPU-only
-- workloads (a GPU job's peak FLOPS dwarf a CPU job's, so the GPU-capable
-- workloads' usage stays far higher), so this is roughly how fast each
-- workload is drained; none runs dry during the comparison runs, which would
-- bias the fairness check.  Cumulative rounding makes the counts add up to
-- exactly njobs.
INSERT INTO allot.job (workload_id, predicted_app_units)
SELECT w.id, 0.5 + random()
  FROM (SELECT id, round(:njobs * cum / total) - round(:njobs * (cum - weight) / total) AS n
          FROM (SELECT w.id, weight, sum(weight) OVER (ORDER BY w.id) AS cum,
                       sum(weight) OVER () AS total
                  FROM allot.workload w,
                       LATERAL (SELECT w.throughput
                                       * CASE WHEN EXISTS (SELECT FROM allot.app_version v
                                                            WHERE v.app_id = w.app_id AND v.resource <> 'cpu')
                                              THEN 1 ELSE 8 END AS weight) AS x) AS c) AS w,
       generate_series(1, w.n::int) AS i
 ORDER BY w.id, i;

-- The plain dequeue's queue.
CREATE TABLE public.bench_queue (
    id      bigint PRIMARY KEY,
    state   text NOT NULL,
    host_id bigint
);
INSERT INTO public.bench_queue (id, state)
SELECT n, 'unsent' FROM generate_series(1, :nqueue) AS n;
CREATE INDEX bench_queue_unsent_idx ON public.bench_queue (id) WHERE state = 'unsent';

CREATE TABLE public.bench_host (LIKE allot.host INCLUDING ALL);
INSERT INTO public.bench_host SELECT * FROM allot.host ORDER BY id;

VACUUM ANALYZE;
