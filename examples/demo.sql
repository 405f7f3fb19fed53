-- allot demo: an OpenBench-style farm in virtual time.
--
-- 1,000 hosts of 4 to 64 threads work on six tests of different throughputs.
-- Every host asks allot.assign_workload for work, plays a batch of 5 to 15
-- virtual minutes, and asks again.  At minute 60 one test finishes and a new
-- one arrives: the hosts of the finished test move, and the repeat rule sends
-- hosts to the newcomer while it gets less than 75% of its fair share.  The
-- script then shows what share of the farm's threads each test received over
-- the last two hours, against its fair share (its throughput over the sum of
-- throughputs), as numbers and as bars.
--
-- Run by scripts/demo.sh in a database with `CREATE EXTENSION allot` done.

\set ON_ERROR_STOP 1
\pset footer off
SET client_min_messages = notice;

-- Batches last up to 15 minutes; a host counts for 20 after it was last seen.
SET allot.assignment_ttl = '20min';

\echo '== The farm: six tests at priority 0, one at priority -1 waiting its turn'
INSERT INTO allot.engine (name, systems, cpu_flags) VALUES
    ('Stockfish', NULL, '{avx2}'),
    ('Ethereal',  NULL, '{}'),
    ('Berserk',   '{Linux}', '{}');

INSERT INTO allot.workload (name, engine, priority, throughput) VALUES
    ('Stockfish: new eval',   'Stockfish', 0, 2000),
    ('Stockfish: LMR tweak',  'Stockfish', 0, 1000),
    ('Ethereal: tune SPSA',   'Ethereal',  0, 3000),
    ('Ethereal: time mgmt',   'Ethereal',  0, 1000),
    ('Berserk: NNUE v9',      'Berserk',   0, 1500),
    ('Berserk: regression',   'Berserk',   0,  500),
    ('Ethereal: long shot',   'Ethereal', -1, 1000);

-- Hosts: all Linux with avx2, so every host can run every test and the fair
-- share is simply throughput over the sum of throughputs.
INSERT INTO allot.host (name, os, cpu_flags, threads, sockets)
SELECT 'worker-' || g, 'Linux', '{avx2,bmi2}',
       (ARRAY[4, 8, 8, 16, 16, 32, 64])[1 + g % 7],
       CASE WHEN g % 5 = 0 THEN 2 ELSE 1 END
  FROM generate_series(1, 1000) g;

SELECT count(*) AS hosts, sum(threads) AS threads FROM allot.host;

-- The simulation.  Each virtual minute: hosts whose batch is over ask for a
-- new workload; then the threads on each workload are sampled.
CREATE TEMP TABLE demo_busy (host_id bigint PRIMARY KEY, until timestamptz);
CREATE TEMP TABLE demo_sample (minute int, workload_id bigint, threads bigint);

CREATE PROCEDURE pg_temp.simulate(minutes int)
LANGUAGE plpgsql AS $$
DECLARE
    t0 constant timestamptz := '2026-01-01 00:00:00+00';
    now_ timestamptz;
    h record;
    requests bigint := 0;
    switches bigint := 0;
    got record;
BEGIN
    PERFORM setseed(0.42);
    INSERT INTO demo_busy SELECT id, t0 FROM allot.host;
    FOR m IN 0 .. minutes - 1 LOOP
        now_ := t0 + make_interval(mins => m);
        FOR h IN SELECT b.host_id FROM demo_busy b WHERE b.until <= now_ ORDER BY b.host_id LOOP
            SELECT * INTO got FROM allot.assign_workload(h.host_id, now_, seed => h.host_id * 100000 + m);
            requests := requests + 1;
            IF NOT got.repeated THEN
                switches := switches + 1;
            END IF;
            UPDATE demo_busy SET until = now_ + make_interval(mins => 5 + floor(random() * 11)::int)
             WHERE host_id = h.host_id;
        END LOOP;
        -- At minute 60 one test ends and another begins.
        IF m = 60 THEN
            UPDATE allot.workload SET state = 'finished' WHERE name = 'Berserk: regression';
            INSERT INTO allot.workload (name, engine, priority, throughput)
            VALUES ('Stockfish: search', 'Stockfish', 0, 1500);
            RAISE NOTICE 'minute 60: "Berserk: regression" finished, "Stockfish: search" arrived';
        END IF;
        -- Sample the last two hours.
        IF m >= minutes - 120 THEN
            INSERT INTO demo_sample
            SELECT m, a.workload_id, sum(a.threads)
              FROM allot.assignment a WHERE a.counted GROUP BY a.workload_id;
        END IF;
        IF m % 20 = 19 OR m = minutes - 1 THEN
            RAISE NOTICE 'minute %/%: % requests so far, % switched workload',
                m + 1, minutes, requests, switches;
        END IF;
        COMMIT;
    END LOOP;
END $$;

\echo '== Simulating 240 virtual minutes'
CALL pg_temp.simulate(240);

\echo '== Shares of the farm''s threads, minutes 120 to 240, against fair shares'
WITH got AS (
    SELECT workload_id, avg(threads) AS threads
      FROM (SELECT w.id AS workload_id, m.minute, coalesce(s.threads, 0) AS threads
              FROM allot.workload w
             CROSS JOIN (SELECT DISTINCT minute FROM demo_sample) m
              LEFT JOIN demo_sample s ON s.workload_id = w.id AND s.minute = m.minute) x
     GROUP BY workload_id),
shares AS (
    SELECT w.id, w.name, w.priority, w.throughput,
           g.threads / sum(g.threads) OVER () AS share,
           CASE WHEN w.priority = 0 AND w.state = 'active'
                THEN w.throughput / sum(w.throughput)
                         FILTER (WHERE w.priority = 0 AND w.state = 'active') OVER ()
                ELSE 0 END AS fair
      FROM allot.workload w JOIN got g ON g.workload_id = w.id)
SELECT id, name, throughput,
       round((100 * share)::numeric, 1) AS "share %",
       round((100 * fair)::numeric, 1) AS "fair %",
       rpad(repeat('#', round(100 * share)::int), 32) || '|' AS "share, 1 # per %",
       rpad(repeat('-', round(100 * fair)::int), 32) || '|' AS "fair, 1 - per %"
  FROM shares ORDER BY id;

\echo '== Why a host gets what it gets: explain_assignment for worker-1 right now'
SELECT workload_id, candidate, reason, threads, effective_throughput,
       round(ratio::numeric, 5) AS ratio, round(fair_ratio::numeric, 5) AS fair,
       round(probability::numeric, 3) AS p
  FROM allot.explain_assignment(1, '2026-01-01 04:00:00+00')
 ORDER BY workload_id;

\echo '== Consistency: check_invariants() (no rows is good)'
SELECT * FROM allot.check_invariants();
