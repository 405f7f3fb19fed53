-- The worked examples of OpenBench's selection (seed 000, docs/design.md), in virtual time.
SET allot.balance_engine_throughputs = off;

-- 1. W1 tp 1000 with 32 threads, W2 tp 2000 with 16 threads, requester on
--    nothing: ratios 32/1000 = 0.032 and 16/2000 = 0.008, fair 48/3000 =
--    0.016.  W2 is below 0.75 * fair, so no repeat question arises: W2.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1000), (2, 'E', 2000);
INSERT INTO allot.host (id, threads) VALUES (1, 16), (2, 16), (3, 16), (9, 8);
SELECT put(1, 1), put(2, 1), put(3, 2);
SELECT * FROM odds(9);
SELECT * FROM allot.assign_workload(9, '2026-01-01 00:00:00+00', seed => 1);
-- The requester now counts on W2 for everyone else, never for itself.
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;
SELECT * FROM odds(9);
SELECT * FROM allot.check_invariants();

-- 2. Balancing at priority 1: W1, W2 on engine E and W3 on engine F; three
--    more E workloads at priority 0 do not count.  Effective throughputs
--    1000/2 = 500, 500 and 1000/1 = 1000.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, priority, throughput) VALUES
    (1, 'E', 1, 1000), (2, 'E', 1, 1000), (3, 'F', 1, 1000),
    (4, 'E', 0, 1000), (5, 'E', 0, 1000), (6, 'E', 0, 1000);
INSERT INTO allot.host (id, threads) VALUES (9, 8);
SET allot.balance_engine_throughputs = on;
SELECT w, cand, reason, eff_tp, p FROM odds(9);
-- Cold start: ties at ratio 0, weighted 500 : 500 : 1000.
SET allot.balance_engine_throughputs = off;
SELECT w, cand, eff_tp, p FROM odds(9);

-- 3. Focus.  Host 1 runs with --focus F and is assigned the F workload: it
--    is focus-assigned.  A host without F in its focus does not see host 1's
--    threads on W2; a host with F in its focus does (and sees only W2).
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1000), (2, 'F', 1000);
INSERT INTO allot.host (id, threads, focus) VALUES (1, 32, '{F}'), (2, 4, '{}'), (3, 4, '{F,G}');
SELECT workload_id, focus_assigned FROM allot.assign_workload(1, '2026-01-01 00:00:00+00', seed => 1);
SELECT workload_id, threads, focus_threads FROM allot.workload_usage;
SELECT w, cand, reason, threads, ratio FROM odds(2);
SELECT w, cand, reason, threads, ratio FROM odds(3);
SELECT workload_id, focus_assigned FROM allot.assign_workload(3, '2026-01-01 00:00:00+00', seed => 1);

-- 4. Cold start, W1 tp 1000 and W2 tp 3000, no threads anywhere: W1 with
--    probability 1000/4000 = 1/4, W2 with 3/4.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1000), (2, 'F', 3000);
INSERT INTO allot.host (id, threads) VALUES (1, 8);
SELECT w, ratio, fair, p FROM odds(1);
-- The draw itself: 4000 seeded requests from a host with no history.  W1's
-- count is Binomial(4000, 1/4): mean 1000, standard deviation
-- sqrt(4000 * 1/4 * 3/4) = 27.4.  We accept 1000 +- 125 (4.5 sd): a correct
-- draw leaves that band with probability below 1e-5, while a draw that
-- ignored the weights (2000) or inverted them (3000) cannot enter it.  The
-- seeds are fixed, so the test is also repeatable.
CREATE TEMP TABLE draws (seed int, w bigint);
-- One transaction per draw, as a web layer would do it.
CREATE PROCEDURE draw_all(n int) LANGUAGE plpgsql AS $$
BEGIN
    FOR s IN 1..n LOOP
        INSERT INTO draws
            SELECT s, workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:00+00', seed => s);
        PERFORM allot.release_assignment(1);
        UPDATE allot.host SET last_workload_id = NULL WHERE id = 1;
        COMMIT;
    END LOOP;
END $$;
CALL draw_all(4000);
SELECT count(*) AS draws, count(*) FILTER (WHERE w = 1) BETWEEN 875 AND 1125 AS w1_within_band,
       count(*) FILTER (WHERE w = 2) BETWEEN 2875 AND 3125 AS w2_within_band
  FROM draws;
-- The same seeds give the same answers, and different seeds do differ.
CREATE TEMP TABLE first_draws AS SELECT * FROM draws WHERE seed <= 200;
TRUNCATE draws;
CALL draw_all(200);
SELECT count(*) AS same_answers FROM draws JOIN first_draws USING (seed, w);
SELECT count(DISTINCT w) AS distinct_answers FROM draws;
SELECT * FROM allot.check_invariants();

-- 5. Concurrency settings: 16 threads, 2 sockets, 1-thread engines,
--    workload_size 32: cutechess_count = S = 2, concurrency_per =
--    (16 / 2) / 1 = 8, games_per_cutechess = 2 * 32 * 8 = 512.  SPSA
--    multiple on the same host: (16 / 1) / 2 = 8, 2, 2 * 32 = 64.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, mode) VALUES (1, 'E', 'games'), (2, 'E', 'spsa_multiple');
INSERT INTO allot.host (id, threads, sockets) VALUES (1, 16, 2);
SELECT workload_id, cutechess_count, concurrency_per, games_per_cutechess
  FROM allot.assign_workload(1, '2026-01-01 00:00:00+00', exclude => '{2}');
SELECT workload_id, cutechess_count, concurrency_per, games_per_cutechess
  FROM allot.assign_workload(1, '2026-01-01 00:00:00+00', exclude => '{1}');
