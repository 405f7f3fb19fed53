-- Fairness over time: seed 003's three examples under each allot.fairness
-- mode (current, recent, debt), on small farms driven through the public
-- functions in virtual time.
--
-- Every job's true run time is its app units x the app's FLOPS per app unit
-- / the device's peak FLOPS, and the app's est_flops_per_au is set to the
-- truth, so estimates (and with them credit = est_secs x peak FLOPS) are
-- exact: the modes are compared, not the estimator.  Each step: hosts
-- report what is done, the transitioner runs (under debt it folds the
-- debts), and every host asks for enough jobs to fill its idle CPU and GPU.
-- Shares are device-time: jobs in progress, sampled at every step.
--
-- Tolerances: shares are counted in whole devices, so with H hosts one
-- device is 1/H of a resource; every band below is the expected share plus
-- or minus one device (or, where the measured value sits at a bound, what
-- the mode's arithmetic allows, worked in the comment).

SET allot.rec_half_life = '10d';

CREATE TEMP TABLE true_secs (version_id bigint PRIMARY KEY, secs double precision);
CREATE TEMP TABLE sample (run text, step int, workload_id bigint, resource text, jobs int);

CREATE FUNCTION fair_steps(run text, t0 timestamptz, first_step int, last_step int,
                           step_mins int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    now_ timestamptz;
    j record;
    h record;
BEGIN
    FOR step IN first_step .. last_step LOOP
        now_ := t0 + make_interval(mins => step_mins * step);
        FOR j IN SELECT jb.id, jb.host_id, t.secs
                   FROM allot.job jb JOIN true_secs t ON t.version_id = jb.app_version_id
                  WHERE jb.state = 'in_progress'
                    AND jb.sent_at + make_interval(secs => t.secs) <= now_
                  ORDER BY jb.id LOOP
            PERFORM allot.report_job(j.host_id, j.id, 'success', 1, j.secs, NULL, now_);
        END LOOP;
        PERFORM allot.run_transitioner(now_);
        FOR h IN SELECT ho.id,
                        1 - (SELECT count(*) FROM allot.job jb
                               JOIN allot.app_version v ON v.id = jb.app_version_id
                              WHERE jb.host_id = ho.id AND jb.state = 'in_progress'
                                AND v.resource = 'cpu') AS idle_cpu,
                        coalesce((SELECT c.count FROM allot.host_coproc c
                                   WHERE c.host_id = ho.id AND c.resource = 'nvidia'), 0)
                        - (SELECT count(*) FROM allot.job jb
                             JOIN allot.app_version v ON v.id = jb.app_version_id
                            WHERE jb.host_id = ho.id AND jb.state = 'in_progress'
                              AND v.resource = 'nvidia') AS idle_gpu
                   FROM allot.host ho ORDER BY ho.id LOOP
            IF h.idle_cpu > 0 OR h.idle_gpu > 0 THEN
                PERFORM allot.request_work(h.id,
                    jsonb_build_object('resources', jsonb_build_object(
                        'cpu', jsonb_build_object('req_instances', h.idle_cpu),
                        'nvidia', jsonb_build_object('req_instances', h.idle_gpu))),
                    now_, step * 1000 + h.id);
            END IF;
        END LOOP;
        INSERT INTO sample
        SELECT run, step, jb.workload_id, v.resource, count(*)
          FROM allot.job jb JOIN allot.app_version v ON v.id = jb.app_version_id
         WHERE jb.state = 'in_progress'
         GROUP BY jb.workload_id, v.resource;
    END LOOP;
END $$;

-- A workload's share of a resource's device-time over steps [a, b] of a run.
CREATE FUNCTION share(run_ text, workload bigint, rsc text, a int, b int)
    RETURNS numeric LANGUAGE sql AS $$
    SELECT round(coalesce(sum(jobs) FILTER (WHERE workload_id = workload), 0)::numeric
                 / nullif(sum(jobs), 0), 3)
      FROM sample WHERE run = run_ AND resource = rsc AND step BETWEEN a AND b
$$;

-- An app with a CPU and/or a GPU version; jobs of one app unit.
CREATE FUNCTION add_app(id_ bigint, cpu boolean, gpu boolean, flops_per_au double precision,
                        jobs int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (id_, 'app' || id_, flops_per_au);
    INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs)
    SELECT id_ * 10 + 1, id_, 'cpu', 1, 0 WHERE cpu;
    INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs)
    SELECT id_ * 10 + 2, id_, 'nvidia', 0, 1 WHERE gpu;
    INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound)
    VALUES (id_, 'w' || id_, 'e' || id_, id_, 1000, '30 days');
    INSERT INTO allot.job (workload_id) SELECT id_ FROM generate_series(1, jobs);
$$;

-- H hosts with one 1 GFLOPS CPU and, if gpu_flops > 0, one GPU.
CREATE FUNCTION add_hosts(h int, gpu_flops double precision) RETURNS void LANGUAGE sql AS $$
    INSERT INTO allot.host (id, os, threads, cpu_flops)
    SELECT g, 'Linux', 1, 1e9 FROM generate_series(1, h) g;
    INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
    SELECT g, 'nvidia', 1, gpu_flops FROM generate_series(1, h) g WHERE gpu_flops > 0;
$$;

CREATE FUNCTION set_true_secs(gpu_flops double precision) RETURNS void LANGUAGE sql AS $$
    DELETE FROM true_secs;
    INSERT INTO true_secs
    SELECT v.id, a.est_flops_per_au / CASE v.resource WHEN 'cpu' THEN 1e9 ELSE gpu_flops END
      FROM allot.app_version v JOIN allot.app a ON a.id = v.app_id;
$$;

-- ---------------------------------------------------------------------------
-- Example 1: A has only GPU jobs, B has GPU and CPU jobs, equal shares, the
-- GPU twice as fast as the CPU.  Seed: CPU 100% B, GPU 75% A / 25% B (equal
-- total processing: A gets 2 x 0.75 = 1.5, B 1 + 2 x 0.25 = 1.5).
-- 20 hosts, steps of 10 minutes for a day, shares over hours 6 to 24.
--   current, recent: FLOPS now, or credit recently handed out, summed over
--     resources: 75/25 (recent needs a few job lengths to settle; the
--     half-life is 10 days, so nothing is forgotten in a day).
--   debt: the seed's own accounting gives 50/50 on the GPU: B alone is
--     eligible on the CPU, so its CPU work is owed to B alone and never
--     enters a debt; on the GPU, A and B are owed half each.  (This is why
--     BOINC later replaced long-term debt with REC.)
-- ---------------------------------------------------------------------------
CREATE FUNCTION example1(mode text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM reset_farm();
    PERFORM set_config('allot.fairness', mode, true);
    PERFORM add_app(1, false, true, 7.2e12, 3000);     -- A: GPU only
    PERFORM add_app(2, true, true, 7.2e12, 3000);      -- B: CPU and GPU
    PERFORM add_hosts(20, 2e9);
    PERFORM set_true_secs(2e9);                        -- 2 h on a CPU, 1 h on a GPU
    PERFORM fair_steps('ex1 ' || mode, '2026-01-01', 0, 143, 10);
END $$;

SELECT example1('current');
SELECT example1('recent');
SELECT example1('debt');
SELECT run, share(run, 1, 'nvidia', 36, 143) AS gpu_a, share(run, 2, 'nvidia', 36, 143) AS gpu_b,
       share(run, 2, 'cpu', 36, 143) AS cpu_b,
       CASE WHEN run LIKE '%debt' THEN share(run, 1, 'nvidia', 36, 143) BETWEEN 0.45 AND 0.55
            ELSE share(run, 1, 'nvidia', 36, 143) BETWEEN 0.70 AND 0.80 END
       AND share(run, 2, 'cpu', 36, 143) = 1 AS as_documented
  FROM (SELECT DISTINCT run FROM sample WHERE run LIKE 'ex1%') r ORDER BY run;

-- ---------------------------------------------------------------------------
-- Example 2: A runs at a higher priority for 2 days on every CPU while B
-- has work; then A's priority drops to B's (A still has work).  Seed: B is
-- repaid, it gets the CPU for as long as A had it.  Variation: a new C is
-- added when A's run ends; C should share 50/50 with B at once.
-- 10 CPU-only hosts, 1-hour jobs, steps of an hour; shares over the next day.
--   current: no memory, A and B share 50/50 at once (B is not repaid).
--   recent, half-life 10 days: A's 2 days barely decay, B gets the CPU.
--   recent, half-life 12 hours: 2 days is 4 half-lives; A's credit is
--     mostly forgotten and B is repaid for only part of the day.
--   debt: A owes B half of its 2 days; B gets the CPU for the whole next
--     day (and would for 2 days); with C, B and C both start at the largest
--     debt (0) and share 50/50 while A waits.
-- ---------------------------------------------------------------------------
CREATE FUNCTION example2(mode text, half_life text, with_c boolean) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    run text := format('ex2%s %s %s', CASE WHEN with_c THEN 'c' ELSE '' END, mode, half_life);
BEGIN
    PERFORM reset_farm();
    PERFORM set_config('allot.fairness', mode, true);
    PERFORM set_config('allot.rec_half_life', half_life, true);
    PERFORM add_app(1, true, false, 3.6e12, 1000);     -- A
    PERFORM add_app(2, true, false, 3.6e12, 1000);     -- B
    UPDATE allot.workload SET priority = 1 WHERE id = 1;
    PERFORM add_hosts(10, 0);
    PERFORM set_true_secs(0);                          -- 1 h on a CPU
    PERFORM fair_steps(run, '2026-01-01', 0, 47, 60);
    UPDATE allot.workload SET priority = 0 WHERE id = 1;
    IF with_c THEN
        PERFORM add_app(3, true, false, 3.6e12, 1000);
        PERFORM set_true_secs(0);
    END IF;
    PERFORM fair_steps(run, '2026-01-01', 48, 72, 60);
    RETURN run;
END $$;

CREATE TEMP TABLE ex2 (run text, mode text);
INSERT INTO ex2 VALUES (example2('current', '10d', false), 'current'),
                       (example2('recent', '10d', false), 'recent 10d'),
                       (example2('recent', '12h', false), 'recent 12h'),
                       (example2('debt', '10d', false), 'debt');
-- During A's run A has every CPU; afterwards (steps 49-72, the jobs sent
-- at step 48 onwards), B's share:
SELECT mode, share(run, 1, 'cpu', 1, 47) AS a_during_run, share(run, 2, 'cpu', 49, 72) AS b_after,
       CASE mode WHEN 'current' THEN share(run, 2, 'cpu', 49, 72) BETWEEN 0.4 AND 0.6
                 WHEN 'recent 10d' THEN share(run, 2, 'cpu', 49, 72) >= 0.9
                 WHEN 'recent 12h' THEN share(run, 2, 'cpu', 49, 72) BETWEEN 0.6 AND 0.9
                 WHEN 'debt' THEN share(run, 2, 'cpu', 49, 72) >= 0.9 END AS as_documented
  FROM ex2 ORDER BY mode;

-- The variation: C arrives when A's run ends.  B's share of what B and C
-- get, and A's share of everything, over the next day.
CREATE TEMP TABLE ex2c (run text, mode text);
INSERT INTO ex2c VALUES (example2('current', '10d', true), 'current'),
                        (example2('recent', '10d', true), 'recent 10d'),
                        (example2('debt', '10d', true), 'debt');
SELECT mode, share(run, 1, 'cpu', 49, 72) AS a_after,
       round(share(run, 2, 'cpu', 49, 72) / nullif(share(run, 2, 'cpu', 49, 72)
                                                   + share(run, 3, 'cpu', 49, 72), 0), 3) AS b_of_b_and_c,
       CASE mode WHEN 'current' THEN share(run, 1, 'cpu', 49, 72) BETWEEN 0.23 AND 0.43
                 ELSE share(run, 1, 'cpu', 49, 72) <= 0.1 END
       AND share(run, 2, 'cpu', 49, 72) / nullif(share(run, 2, 'cpu', 49, 72)
                                                  + share(run, 3, 'cpu', 49, 72), 0)
           BETWEEN 0.4 AND 0.6 AS as_documented
  FROM ex2c ORDER BY mode;

-- ---------------------------------------------------------------------------
-- Example 3: A has GPU jobs, B only CPU jobs; after 2 days B gets its first
-- GPU version.  Seed: A and B share the GPU 50/50 at once.
-- 10 hosts with a CPU and a GPU twice as fast, 1-hour GPU jobs, 2-hour CPU
-- jobs, steps of an hour; GPU shares over the 12 hours after B's version.
--   current: B's CPU work counts as usage, so B gets about a quarter of the
--     GPU (example 1's 75/25), not half.
--   recent: B's credit is half of A's (its CPU is half as fast), so B takes
--     the GPU until the credits even out: well over half.
--   debt: neither A nor B had a GPU rival, so no GPU debt exists; both
--     start at 0 and share 50/50.
-- ---------------------------------------------------------------------------
CREATE FUNCTION example3(mode text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    run text := 'ex3 ' || mode;
BEGIN
    PERFORM reset_farm();
    PERFORM set_config('allot.fairness', mode, true);
    PERFORM add_app(1, false, true, 7.2e12, 1000);     -- A: GPU
    PERFORM add_app(2, true, false, 7.2e12, 1000);     -- B: CPU
    PERFORM add_hosts(10, 2e9);
    PERFORM set_true_secs(2e9);
    PERFORM fair_steps(run, '2026-01-01', 0, 47, 60);
    INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs)
    VALUES (22, 2, 'nvidia', 0, 1);
    PERFORM set_true_secs(2e9);
    PERFORM fair_steps(run, '2026-01-01', 48, 60, 60);
    RETURN run;
END $$;

CREATE TEMP TABLE ex3 (run text, mode text);
INSERT INTO ex3 VALUES (example3('current'), 'current'), (example3('recent'), 'recent'),
                       (example3('debt'), 'debt');
SELECT mode, share(run, 2, 'nvidia', 1, 47) AS b_gpu_before, share(run, 2, 'nvidia', 49, 60) AS b_gpu_after,
       CASE mode WHEN 'current' THEN share(run, 2, 'nvidia', 49, 60) BETWEEN 0.15 AND 0.35
                 WHEN 'recent' THEN share(run, 2, 'nvidia', 49, 60) >= 0.6
                 WHEN 'debt' THEN share(run, 2, 'nvidia', 49, 60) BETWEEN 0.4 AND 0.6 END AS as_documented
  FROM ex3 ORDER BY mode;

-- Debts after the last run: the largest is 0 per resource, as the seed
-- asks, and the counters agree with the jobs.
SELECT resource, max(debt) AS largest_debt FROM allot.workload_credit GROUP BY resource ORDER BY 1;
SELECT * FROM allot.check_invariants();
RESET allot.fairness;
RESET allot.rec_half_life;

-- ---------------------------------------------------------------------------
-- Within one request, each job counts at once for the next pick: a host
-- with 4 GPUs asking for 4 jobs from two equal workloads gets 2 of each in
-- every mode (without it, recent and debt would send all 4 from one).
-- ---------------------------------------------------------------------------
CREATE FUNCTION one_request(mode_ text) RETURNS TABLE (mode text, workload_id bigint, jobs bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM reset_farm();
    PERFORM set_config('allot.fairness', mode_, true);
    PERFORM add_app(1, false, true, 7.2e12, 10);
    PERFORM add_app(2, false, true, 7.2e12, 10);
    INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (1, 'Linux', 1, 1e9);
    INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (1, 'nvidia', 4, 2e9);
    RETURN QUERY
    SELECT mode_, (x ->> 'workload_id')::bigint, count(*)
      FROM jsonb_array_elements(allot.request_work(1,
               '{"resources": {"nvidia": {"req_instances": 4}}}', '2026-01-01', 7) -> 'jobs') x
     GROUP BY 2 ORDER BY 2;
END $$;
SELECT * FROM one_request('current');
SELECT * FROM one_request('recent');
SELECT * FROM one_request('debt');

-- ---------------------------------------------------------------------------
-- Assignment workloads.  An assignment is worth the host's threads for one
-- assignment_ttl (120 s): 8 threads -> 960 thread-seconds.
-- ---------------------------------------------------------------------------
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1000), (2, 'F', 1000);
INSERT INTO allot.host (id, threads) VALUES (1, 8), (2, 16), (3, 8);

-- recent, half-life 1 hour.  Host 1 takes a workload (a tie, drawn with
-- seed 1); host 2 then takes the other, whose REC (0) is lower.
SET allot.fairness = recent;
SET allot.rec_half_life = '1h';
SELECT workload_id AS host1 FROM allot.assign_workload(1, '2026-01-01 00:00', '{}', 1) \gset
SELECT workload_id AS host2 FROM allot.assign_workload(2, '2026-01-01 00:00', '{}', 1) \gset
SELECT :host1 <> :host2 AS host2_took_the_other;
-- One half-life later each REC is half: 480 and 960.  Host 1 asks again:
-- its workload's ratio 480/1000 is not below 0.75 x fair (1440/2000), so
-- it repeats and adds 960: 1440.
SELECT workload_id = :host1 AS host1_repeats FROM allot.assign_workload(1, '2026-01-01 01:00', '{}', 1);
SELECT workload_id = :host1 AS is_host1s, rec FROM allot.fairness_state('2026-01-01 01:00') ORDER BY 1;
-- And two hours after that: 1440/4 = 360 and 1920/8 = 240.
SELECT workload_id = :host1 AS is_host1s, rec FROM allot.fairness_state('2026-01-01 03:00') ORDER BY 1;

-- debt.  Credit now goes to `sent` until the transitioner folds it.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1000), (2, 'F', 1000);
INSERT INTO allot.host (id, threads) VALUES (1, 8), (2, 16), (3, 8);
SET allot.fairness = debt;
SELECT workload_id AS host1 FROM allot.assign_workload(1, '2026-01-01 00:00', '{}', 1) \gset
-- Before any fold, host 2 sees host 1's 960 as owed half to each: its
-- workload -480, the other +480, which host 2 takes.  Under debt the ratio
-- is how much less a workload is owed than the most-owed one.
SELECT workload_id = :host1 AS is_host1s, ratio
  FROM allot.explain_assignment(2, '2026-01-01 00:00') ORDER BY 1;
SELECT workload_id <> :host1 AS host2_took_the_other
  FROM allot.assign_workload(2, '2026-01-01 00:00', '{}', 1);
-- The fold: 960 + 1920 handed out, 1440 owed to each; host 1's workload
-- +480, host 2's -480; shifted so that the largest is 0: 0 and -960.  What
-- a request projects before the fold (C, src/fairness.c) is what the fold
-- (SQL, allot.fold_debts) then stores: host 3 sees the same ratios.
CREATE TEMP TABLE projected AS
SELECT workload_id, ratio FROM allot.explain_assignment(3, '2026-01-01 00:01');
SELECT allot.run_transitioner('2026-01-01 00:01') ->> 'debts_folded' AS folded;
SELECT workload_id = :host1 AS is_host1s, debt, sent FROM allot.fairness_state() ORDER BY 1;
SELECT p.workload_id = :host1 AS is_host1s, p.ratio AS projected, e.ratio AS after_fold,
       p.ratio = e.ratio AS same
  FROM projected p JOIN allot.explain_assignment(3, '2026-01-01 00:01') e USING (workload_id)
 ORDER BY 1;
-- Host 3 takes the most-owed workload, host 1's.
SELECT workload_id = :host1 AS most_owed FROM allot.assign_workload(3, '2026-01-01 00:01', '{}', 1);
-- Host 2 asks again.  Host 3's 960, not folded yet, is owed half to each:
-- host 1's workload 0 + 480 - 960 = -480, host 2's -960 + 480 = -480.  Its
-- own is owed no less than the most-owed (within one assignment, 16 x 120
-- = 1920), so host 2 repeats.
SELECT workload_id <> :host1 AS host2_keeps, repeated
  FROM allot.assign_workload(2, '2026-01-01 00:02', '{}', 1);
SELECT * FROM allot.check_invariants();
RESET allot.fairness;
RESET allot.rec_half_life;
