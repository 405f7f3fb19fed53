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

-- Repeat rule (step 6).  Host 9 was last on W1.  W1 has 10 threads, W2 6:
-- ratios 10/1024 and 6/1024, fair 16/2048 = 8/1024, and 0.75 * fair =
-- 6/1024 exactly: no candidate is below the threshold, so W1 is repeated
-- although W2 has the lower ratio.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1024), (2, 'F', 1024);
INSERT INTO allot.host (id, threads) VALUES (1, 10), (2, 6), (9, 2);
SELECT put(1, 1), put(2, 2);
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT w, threads, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
-- Just below: with 5 threads on W2, fair is 15/2048 and 0.75 * fair =
-- 5.625/1024 > 5/1024, so W2 is starved and wins.
UPDATE allot.host SET threads = 5 WHERE id = 2;
SELECT allot.release_assignment(2), put(2, 2);
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT w, threads, ratio, fair, reason, p FROM odds(9);
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
-- A last workload that is no longer a candidate cannot be repeated.
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', '{1}', seed => 1);

-- repeat_upper (OpenBench 2024+): back at 10 and 6 threads, W1's ratio is
-- 10/1024 = 1.25 * fair; an upper bound of 1.25 refuses the repeat, 1.3 allows it.
UPDATE allot.host SET threads = 6 WHERE id = 2;
SELECT allot.release_assignment(2), put(2, 2);
SELECT allot.release_assignment(9);
SET allot.repeat_upper = 1.25;
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
SET allot.repeat_upper = 1.3;
UPDATE allot.host SET last_workload_id = 1 WHERE id = 9;
SELECT workload_id, repeated FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
RESET allot.repeat_upper;

-- count_requester (OpenBench 2024+): the requester's 2 threads are added to
-- every candidate and once to fair, and the repeat test is strict.  W1 5
-- threads, W2 1: ratios (5+2)/1024 and (1+2)/1024, fair (6+2)/2048 =
-- 4/1024, 0.75 * fair = 3/1024 = the lowest ratio: not strictly above, so
-- no repeat, W2.  The default profile on the same farm: ratios 5/1024 and
-- 1/1024, fair 3/1024, 0.75 * fair = 2.25/1024 > 1/1024: no repeat either.
UPDATE allot.host SET threads = 5 WHERE id = 1;
UPDATE allot.host SET threads = 1 WHERE id = 2;
SELECT allot.release_assignment(1), allot.release_assignment(2), put(1, 1), put(2, 2);
SELECT allot.release_assignment(9);
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
