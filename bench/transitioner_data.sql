-- Data for bench/transitioner.sh.  psql variables napps (1000), njobs
-- (1000000) and nhosts (20); random draws are seeded, so a rerun builds the
-- same data.
--
--   napps apps, each with a CPU version (ncpus 1); every third also with an
--     NVIDIA version (ncoprocs 1, fed by 0.2 CPU).  One job workload per app.
--   nhosts hosts, half of them with a GPU.
--   njobs jobs already reported: state 'done', outcome 'success', with
--     host, app version, app units, elapsed time and raw FLOPS set, as
--     report_job leaves them (not sampled yet).  They are inserted directly:
--     a million real reports through report_job would take far longer than
--     the transitioner they are here to feed.  Job n belongs to app
--     1 + (n - 1) % napps, so every transitioner batch spans all apps, as
--     reports arriving from a farm would; on apps with a GPU version one job
--     in four ran on the GPU.
\set ON_ERROR_STOP on

SELECT setseed(0.20261121);

INSERT INTO allot.app (id, name)
SELECT a, format('app-%s', a) FROM generate_series(1, :napps) AS a;

INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs)
SELECT a, 'cpu', 1, 0 FROM generate_series(1, :napps) AS a
UNION ALL
SELECT a, 'nvidia', 0.2, 1 FROM generate_series(1, :napps) AS a WHERE a % 3 = 0
ORDER BY 2, 1;

INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound)
SELECT a, format('wl-%s', a), format('app-%s', a), a, 1000, interval '3 days'
  FROM generate_series(1, :napps) AS a;

INSERT INTO allot.host (id, name, os, threads, cpu_flops)
SELECT i, format('host-%s', i), 'Linux', 16, 1e9 + 4e9 * random()
  FROM generate_series(1, :nhosts) AS i;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT i, 'nvidia', 1, 1e12 + 9e12 * random() FROM generate_series(1, :nhosts) AS i WHERE i % 2 = 0;

ANALYZE allot.app, allot.app_version, allot.workload, allot.host, allot.host_coproc;

-- One statement: the statement trigger on allot.job runs once.  GPU jobs ran
-- on the even hosts (the ones with a GPU), CPU jobs anywhere; a job's peak
-- FLOPS are its version's devices on that host, and its raw FLOPS 30%..90%
-- of that.
INSERT INTO allot.job (id, workload_id, state, host_id, app_version_id, predicted_app_units,
                       sent_at, deadline, est_secs, returned_at, outcome, app_units,
                       elapsed_secs, raw_flops_per_sec, peak_flops_per_sec)
SELECT j.n, j.app, 'done', j.host, v.id, 1,
       j.sent, j.sent + interval '3 days', 3600, j.sent + make_interval(secs => j.elapsed), 'success',
       j.units, j.elapsed, (0.3 + 0.6 * random()) * p.peak, p.peak
  FROM (SELECT n, app, gpu,
               CASE WHEN gpu THEN 2 * (1 + n % (:nhosts / 2)) ELSE 1 + n % :nhosts END AS host,
               0.5 + random() AS units, 600 + 6600 * random() AS elapsed,
               timestamptz '2026-11-01 00:00+00' + n * interval '0.5 s' AS sent
          FROM (SELECT n, 1 + (n - 1) % :napps AS app,
                       -- every fourth round over the apps ran on the GPU
                       (1 + (n - 1) % :napps) % 3 = 0 AND ((n - 1) / :napps) % 4 = 3 AS gpu
                  FROM generate_series(1, :njobs) AS n) AS g) AS j
  JOIN allot.app_version v
    ON v.app_id = j.app AND v.resource = CASE WHEN j.gpu THEN 'nvidia' ELSE 'cpu' END
  JOIN allot.host h ON h.id = j.host
  LEFT JOIN allot.host_coproc c ON c.host_id = j.host
  CROSS JOIN LATERAL (SELECT CASE WHEN j.gpu THEN c.peak_flops + 0.2 * h.cpu_flops
                                  ELSE h.cpu_flops END AS peak) AS p
 ORDER BY j.n;

VACUUM ANALYZE;
