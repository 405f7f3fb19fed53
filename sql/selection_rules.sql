-- Seed 000 steps 1 (priority, focus) to 7, rule by rule, with edges.
-- Throughputs of 1024 keep every ratio exact in binary floating point, so
-- "at the threshold" really is equality.

-- No workload at all, and no workload this host can run: zero rows.
SELECT reset_farm();
INSERT INTO allot.host (id, threads) VALUES (1, 4);
SELECT * FROM allot.assign_workload(1, '2026-01-01 00:00:00+00');
SELECT * FROM odds(1);
INSERT INTO allot.workload (id, engine, dev_threads, base_threads) VALUES (1, 'E', 8, 8);
SELECT * FROM allot.assign_workload(1, '2026-01-01 00:00:00+00');

-- A single candidate is returned whatever its load.
INSERT INTO allot.workload (id, engine, throughput) VALUES (2, 'E', 1);
INSERT INTO allot.host (id, threads) VALUES (2, 64);
SELECT put(2, 2);
SELECT w, cand, threads, ratio, fair, p FROM odds(1);
SELECT workload_id, repeated FROM allot.assign_workload(1, '2026-01-01 00:00:00+00');

-- Negative priorities: the highest runnable one wins, even below zero.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, priority) VALUES (1, 'E', -5), (2, 'E', -2), (3, 'E', -2),
                                                        (4, 'E', 7);
UPDATE allot.workload SET dev_threads = 64, base_threads = 64 WHERE id = 4;  -- unrunnable
INSERT INTO allot.host (id, threads) VALUES (1, 4);
SELECT w, cand, reason, p FROM odds(1);

-- Ties among three at the same lowest ratio, weighted by effective
-- throughput 1024 : 2048 : 1024 -> 1/4, 1/2, 1/4; the fourth is busier.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES
    (1, 'A', 1024), (2, 'B', 2048), (3, 'C', 1024), (4, 'D', 1024);
INSERT INTO allot.host (id, threads) VALUES (1, 2), (2, 4), (3, 2), (4, 4), (9, 1);
SELECT put(1, 1), put(2, 2), put(3, 3), put(4, 4);
SELECT w, threads, ratio, fair, p FROM odds(9);
-- 2000 seeded draws: workload 2 is Binomial(2000, 1/2), mean 1000, sd 22.4;
-- workloads 1 and 3 are Binomial(2000, 1/4), mean 500, sd 19.4.  Bands of
-- 4.5 sd (+-100 and +-87) hold with probability above 1 - 1e-5 each; a draw
-- that ignored weights (667 each) leaves them.
CREATE TEMP TABLE draws (w bigint);
DO $$
BEGIN
    FOR s IN 1..2000 LOOP
        INSERT INTO draws
            SELECT workload_id FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => s);
        PERFORM allot.release_assignment(9);
        UPDATE allot.host SET last_workload_id = NULL WHERE id = 9;
        COMMIT;     -- one transaction per draw, as a web layer would do it
    END LOOP;
END $$;
SELECT count(*) FILTER (WHERE w = 1) BETWEEN 413 AND 587 AS w1_ok,
       count(*) FILTER (WHERE w = 2) BETWEEN 900 AND 1100 AS w2_ok,
       count(*) FILTER (WHERE w = 3) BETWEEN 413 AND 587 AS w3_ok,
       count(*) FILTER (WHERE w = 4) = 0 AS w4_never
  FROM draws;

-- Balancing with focus: focus first narrows the candidates (step 1), and
-- balancing then divides by the engine's candidates among those only.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES
    (1, 'E', 1000), (2, 'E', 1000), (3, 'F', 1000), (4, 'F', 1000), (5, 'G', 1000);
INSERT INTO allot.host (id, threads, focus) VALUES (1, 4, '{F}'), (2, 4, '{}');
SET allot.balance_engine_throughputs = on;
SELECT w, cand, reason, eff_tp, p FROM odds(1);
SELECT w, cand, eff_tp, p FROM odds(2);
RESET allot.balance_engine_throughputs;

-- Repeat rule (step 6), as OpenBench's get_workload.py writes it:
-- min_ratio / fair > repeat_threshold, strictly.  Host 9 was last on W1.
-- W1 has 10 threads, W2 6: ratios 10/1024 and 6/1024, fair 16/2048 =
-- 8/1024, and min / fair = 0.75 exactly: not above the threshold, so no
-- repeat, and W2, the lowest ratio, wins.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1024), (2, 'F', 1024);
INSERT INTO allot.host (id, threads) VALUES (1, 10), (2, 6), (9, 2);
SELECT put(1, 1), put(2, 2);
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT w, threads, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
-- Just above: with 7 threads on W2, fair is 17/2048 and min / fair = 14/17
-- > 0.75: W1 is repeated although W2 has the lower ratio.
UPDATE allot.host SET threads = 7 WHERE id = 2;
SELECT allot.release_assignment(2), put(2, 2);
SELECT allot.release_assignment(9);
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT w, threads, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
-- Below: with 5 threads on W2, min / fair = 10/15 < 0.75: W2 is starved and wins.
UPDATE allot.host SET threads = 5 WHERE id = 2;
SELECT allot.release_assignment(2), put(2, 2);
SELECT allot.release_assignment(9);
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT w, threads, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
-- A last workload that is no longer a candidate cannot be repeated.
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', '{1}', seed => 1);

-- repeat_upper (OpenBench 2024+: this_ratio / fair < 1.25, strictly).  W1
-- 10 threads, W2 8 (tp 1024 each), W3 14 (tp 2048): ratios 10/1024,
-- 8/1024 and 7/1024, fair 32/4096 = 8/1024.  min / fair = 0.875 allows a
-- repeat; W1's ratio / fair = 1.25 exactly, so an upper bound of 1.25
-- refuses it (W3, the lowest ratio, wins) and 1.3 allows it.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES
    (1, 'E', 1024), (2, 'F', 1024), (3, 'G', 2048);
INSERT INTO allot.host (id, threads) VALUES (1, 10), (2, 8), (3, 14), (9, 2);
SELECT put(1, 1), put(2, 2), put(3, 3);
SET allot.repeat_upper = 1.25;
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT w, threads, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
SET allot.repeat_upper = 1.3;
SELECT allot.release_assignment(9);
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
RESET allot.repeat_upper;

-- count_requester (OpenBench 2024+): the requester's 2 threads are added to
-- every candidate and once to fair.  W1 5 threads, W2 1: ratios
-- (5+2)/1024 and (1+2)/1024, fair (6+2)/2048 = 4/1024, min / fair = 0.75
-- exactly: no repeat, W2.  The default profile on the same farm: ratios
-- 5/1024 and 1/1024, fair 3/1024, min / fair = 1/3: no repeat either.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1024), (2, 'F', 1024);
INSERT INTO allot.host (id, threads) VALUES (1, 5), (2, 1), (9, 2);
SELECT put(1, 1), put(2, 2);
SET allot.count_requester = on;
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT w, threads, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
-- One more thread on W2 makes the lowest ratio 4/1024 > 0.75 * 9/2048: repeat.
UPDATE allot.host SET threads = 2 WHERE id = 2;
SELECT allot.release_assignment(2), put(2, 2);
SELECT allot.release_assignment(9);
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT w, threads, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
RESET allot.count_requester;
SELECT * FROM allot.check_invariants();

-- The repeat rule at boundaries that binary floating point cannot hold
-- exactly.  In each case the quotient OpenBench computes is exactly 0.75 or
-- 1.25, so OpenBench does not repeat, while the product of the bound and
-- fair rounds to the other side (0.75 * 2.4 = 1.7999999999999998 < 1.8,
-- 1.25 * 3.12 = 3.9000000000000004 > 3.9): a rule written as a product
-- would repeat.  `rule` shows the quotients.
CREATE FUNCTION rule(p_host bigint) RETURNS TABLE (min_over_fair float8, last_over_fair float8)
LANGUAGE sql AS $$
    SELECT min(ratio / fair_ratio),
           max(ratio / fair_ratio) FILTER (WHERE workload_id =
               (SELECT last_workload_id FROM allot.host WHERE id = p_host))
      FROM allot.explain_assignment(p_host, '2026-01-01 00:00:00+00') WHERE candidate;
$$;
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 5), (2, 'F', 10);
INSERT INTO allot.host (id, threads) VALUES (1, 8), (2, 27), (9, 1);
SELECT put(1, 1), put(2, 2);
-- OpenBench 2024: W1 (8 + 1) / 5 = 1.8, W2 (27 + 1) / 10 = 2.8, fair
-- 36 / 15 = 2.4; 1.8 / 2.4 = 0.75.  A 1-thread requester last on W2 moves to W1.
SET allot.count_requester = on;
SET allot.repeat_upper = 1.25;
UPDATE allot.host SET last_workload_id = 2 WHERE id = 9;
SELECT * FROM rule(9);
SELECT w, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
-- OpenBench 2024, the upper bound: W1 tp 10 with 38 threads, W2 tp 15 with
-- 39: (38 + 1) / 10 = 3.9, fair 78 / 25 = 3.12, 3.9 / 3.12 = 1.25 (and min
-- / fair = 0.85).  A requester last on W1 moves to W2.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 10), (2, 'F', 15);
INSERT INTO allot.host (id, threads) VALUES (1, 38), (2, 39), (9, 1);
SELECT put(1, 1), put(2, 2);
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT * FROM rule(9);
SELECT w, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
RESET allot.count_requester;
-- The default profile with an upper bound: W1 and W2 both 39 threads,
-- 39 / 10 = 3.9, fair 78 / 25 = 3.12: 3.9 / 3.12 = 1.25 again.
UPDATE allot.host SET threads = 39 WHERE id = 1;
SELECT allot.release_assignment(1), put(1, 1);
SELECT allot.release_assignment(9);
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT * FROM rule(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
RESET allot.repeat_upper;
-- The default profile at the lower bound: W1 and W2 tp 5, 9 and 15
-- threads: 1.8 and 3.0, fair 24 / 10 = 2.4, 1.8 / 2.4 = 0.75.  A requester
-- last on W2 moves to W1.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 5), (2, 'F', 5);
INSERT INTO allot.host (id, threads) VALUES (1, 9), (2, 15), (9, 1);
SELECT put(1, 1), put(2, 2);
UPDATE allot.host SET last_workload_id = 2 WHERE id = 9;
SELECT * FROM rule(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);

-- Cold start: with nothing counted anywhere, fair is 0.  OpenBench's
-- default-profile code repeats only when `thread_sum > 0`, so a host with a
-- last workload draws like any other: W1 1/4, W2 3/4, and no repeat.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1000), (2, 'F', 3000);
INSERT INTO allot.host (id, threads, last_workload_id) VALUES (9, 4, 1);
SELECT w, ratio, fair, reason, p FROM odds(9);
-- 200 seeded requests, each from the same history: about 50 on W1 (sd
-- 6.1), never all on it as a repeat would give.
CREATE TEMP TABLE cold (w bigint, repeated boolean);
DO $$
BEGIN
    FOR s IN 1..200 LOOP
        INSERT INTO cold
            SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => s);
        PERFORM allot.release_assignment(9);
        UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
    END LOOP;
END $$;
SELECT count(*) FILTER (WHERE w = 1) BETWEEN 25 AND 75 AS w1_about_a_quarter,
       count(*) FILTER (WHERE repeated) AS repeats
  FROM cold;
-- OpenBench 2024 counts the requester, so fair is never 0 and the rule
-- applies as written: ratios 4/1000 and 4/3000, fair 4/4000.  Last on W1,
-- W1's ratio is 4 x fair (> 1.25): no repeat, W2 is the lowest.  Last on
-- W2, 4/3 x fair: no repeat either.
SET allot.count_requester = on;
SET allot.repeat_upper = 1.25;
SELECT w, ratio, fair, reason, p FROM odds(9);
UPDATE allot.host SET last_workload_id = 2 WHERE id = 9;
SELECT w, ratio, fair, reason, p FROM odds(9);
-- With W2 at 9000, last on W2: 10/9 x fair < 1.25, min / fair = 10/9 > 0.75: repeat.
UPDATE allot.workload SET throughput = 9000 WHERE id = 2;
SELECT w, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
RESET allot.count_requester;
RESET allot.repeat_upper;
SELECT * FROM allot.check_invariants();
