-- Seed 003, example 1: A has only GPU jobs, B has GPU and CPU jobs, equal
-- throughput; every host has one CPU and one GPU twice as fast.  The goal:
-- the CPU is used 100% by B, the GPU 75% by A and 25% by B, which gives A
-- and B equal processing.
--
-- Why 75/25: usage is peak FLOPS of jobs in progress, summed over
-- resources (docs/concepts.md "Job workloads").  With H hosts, B holds all H CPUs (H x 1 GFLOPS), and
-- the GPUs split a : H - a.  Equal usage means 2a = H + 2(H - a), so
-- a = 3H/4.
--
-- Tolerance: with 20 hosts one GPU is 5% of the GPUs.  Each free GPU goes
-- to the workload with the lower usage, so the split stays within one GPU
-- of 15 : 5, i.e. within 5 points of 75%.  The CPU is exact: nothing but B
-- can run there.
SELECT reset_farm();

INSERT INTO allot.app (id, name) VALUES (101, 'A'), (102, 'B');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (1011, 101, 'nvidia', 0, 1),
    (1021, 102, 'cpu', 1, 0),
    (1022, 102, 'nvidia', 0, 1);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (101, 'A', 'A', 101, 1000, '2 days'),
    (102, 'B', 'B', 102, 1000, '2 days');
INSERT INTO allot.job (workload_id) SELECT w FROM generate_series(1, 2000), (VALUES (101), (102)) v(w);
INSERT INTO allot.host (id, os, threads, cpu_flops)
SELECT g, 'Linux', 1, 1e9 FROM generate_series(1, 20) g;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT g, 'nvidia', 1, 2e9 FROM generate_series(1, 20) g;

-- Virtual time in steps of 10 minutes for 24 hours.  A job takes 2 hours on
-- a CPU and 1 hour on the GPU.  Each step: hosts report the jobs that are
-- done, then ask for enough jobs to fill their idle CPU and GPU.  From hour
-- 6 on, the jobs in progress are sampled per workload and resource.
CREATE TEMP TABLE sample (step int, workload_id bigint, resource text, jobs int);
CREATE FUNCTION simulate_example1() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    t0 constant timestamptz := '2026-01-01 00:00+00';
    now_ timestamptz;
    j record;
    h record;
BEGIN
    FOR step IN 0 .. 143 LOOP
        now_ := t0 + make_interval(mins => 10 * step);
        FOR j IN SELECT id, host_id FROM allot.job
                  WHERE state = 'in_progress'
                    AND sent_at + CASE WHEN app_version_id = 1021 THEN interval '2 hours'
                                       ELSE interval '1 hour' END <= now_
                  ORDER BY id LOOP
            PERFORM allot.report_job(j.host_id, j.id, 'success', 1, NULL, NULL, now_);
        END LOOP;
        FOR h IN SELECT ho.id,
                        1 - count(*) FILTER (WHERE v.resource = 'cpu') AS idle_cpu,
                        1 - count(*) FILTER (WHERE v.resource = 'nvidia') AS idle_gpu
                   FROM allot.host ho
                   LEFT JOIN allot.job jb ON jb.host_id = ho.id AND jb.state = 'in_progress'
                   LEFT JOIN allot.app_version v ON v.id = jb.app_version_id
                  GROUP BY ho.id ORDER BY ho.id LOOP
            IF h.idle_cpu > 0 OR h.idle_gpu > 0 THEN
                PERFORM allot.request_work(h.id,
                    jsonb_build_object('resources', jsonb_build_object(
                        'cpu', jsonb_build_object('req_instances', h.idle_cpu),
                        'nvidia', jsonb_build_object('req_instances', h.idle_gpu))),
                    now_, step * 100 + h.id);
            END IF;
        END LOOP;
        IF step >= 36 THEN
            INSERT INTO sample
            SELECT step, jb.workload_id, v.resource, count(*)
              FROM allot.job jb JOIN allot.app_version v ON v.id = jb.app_version_id
             WHERE jb.state = 'in_progress'
             GROUP BY jb.workload_id, v.resource;
        END IF;
    END LOOP;
END $$;
SELECT simulate_example1();

-- The shares over hours 6 to 24.
SELECT resource,
       sum(jobs) FILTER (WHERE workload_id = 101)::float8 / sum(jobs) AS a_share,
       sum(jobs) FILTER (WHERE workload_id = 102)::float8 / sum(jobs) AS b_share
  INTO TEMP shares
  FROM sample GROUP BY resource;
SELECT resource,
       CASE resource WHEN 'nvidia' THEN a_share BETWEEN 0.70 AND 0.80
                     WHEN 'cpu' THEN coalesce(a_share, 0) = 0 AND b_share = 1 END AS as_the_seed_asks
  FROM shares ORDER BY resource;
-- Every CPU and GPU was busy the whole time (nothing idle, nothing double-booked).
SELECT count(DISTINCT step) AS steps, min(n) AS fewest_jobs_in_progress, max(n) AS most
  FROM (SELECT step, sum(jobs) AS n FROM sample GROUP BY step) s;
SELECT * FROM allot.check_invariants();
