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

-- Virtual time ends at the minute the demo runs, so that the farm it leaves
-- behind is the farm of now: scripts/demo.sh --keep serves a status page of
-- it (docs/status-page.md), and pg_cron's transitioner works on it.
SELECT date_trunc('minute', now()) AS demo_end,
       date_trunc('minute', now()) - interval '240 minutes' AS demo_start,
       date_trunc('minute', now()) - interval '1 day' AS jobs_start \gset

-- Batches last up to 15 minutes, so every host asks again well within an
-- hour, which is how long a host counts after it was last seen.  Set for
-- the database too, so that the transitioner and the status page agree
-- after the demo's hosts stop: they count for an hour after the demo.
ALTER DATABASE :"DBNAME" SET allot.assignment_ttl = '1h';
SET allot.assignment_ttl = '1h';

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
-- new workload; then the threads on each workload are sampled, and the
-- transitioner runs, as pg_cron runs it each minute: it keeps each
-- workload's share against its fair share, minute by minute, which the
-- status page draws (allot.status_share_history).
CREATE TEMP TABLE demo_busy (host_id bigint PRIMARY KEY, until timestamptz);
CREATE TEMP TABLE demo_sample (minute int, workload_id bigint, threads bigint);

CREATE PROCEDURE pg_temp.simulate(t0 timestamptz, minutes int)
LANGUAGE plpgsql AS $$
DECLARE
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
        -- At minute 60 one test ends (at that virtual minute) and another
        -- begins.
        IF m = 60 THEN
            UPDATE allot.workload SET state = 'finished', finished_at = now_
             WHERE name = 'Berserk: regression';
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
        PERFORM allot.run_transitioner(now_);
        IF m % 20 = 19 OR m = minutes - 1 THEN
            RAISE NOTICE 'minute %/%: % requests so far, % switched workload',
                m + 1, minutes, requests, switches;
        END IF;
        COMMIT;
    END LOOP;
END $$;

\echo '== Simulating 240 virtual minutes'
CALL pg_temp.simulate(:'demo_start', 240);

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
  FROM allot.explain_assignment(1, :'demo_end')
 ORDER BY workload_id;

\echo '== Consistency: check_invariants() (no rows is good)'
SELECT * FROM allot.check_invariants();

-- ===========================================================================
-- Part 2: a BOINC-style job farm (request_work, report_job, the transitioner).
--
-- 100 hosts, each with 2 CPUs of 1 GFLOPS and a GPU of 4 GFLOPS peak.  Three
-- workloads of equal throughput: A has only a GPU version, B a CPU and a GPU
-- version, C only a CPU version.  A job is 3.6e12 FLOPs: 3600 s on a CPU,
-- and 1800 s on the GPU, which runs it at half its peak.  Every virtual 10
-- minutes hosts report what finished, ask for work for their idle CPUs and
-- GPU, and the transitioner runs (as pg_cron would, every minute, in real
-- time).  Fair is equal FLOPS for the three: 2 GFLOPS per host each.
-- ===========================================================================
\echo '== Part 2: a job farm of 100 CPU+GPU hosts, three workloads of equal throughput'
SET allot.flops_sample_size = 50;
INSERT INTO allot.app (id, name) VALUES (101, 'A'), (102, 'B'), (103, 'C');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (1011, 101, 'nvidia', 0, 1),
    (1021, 102, 'cpu', 1, 0), (1022, 102, 'nvidia', 0, 1),
    (1031, 103, 'cpu', 1, 0);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (101, 'A: GPU only', 'A', 101, 1000, '2 days'),
    (102, 'B: CPU and GPU', 'B', 102, 1000, '2 days'),
    (103, 'C: CPU only', 'C', 103, 1000, '2 days');
INSERT INTO allot.job (workload_id) SELECT w FROM generate_series(1, 6000), (VALUES (101), (102), (103)) v(w);
INSERT INTO allot.host (name, os, threads, cpu_flops)
SELECT 'volunteer-' || g, 'Linux', 2, 1e9 FROM generate_series(1, 100) g;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT id, 'nvidia', 1, 4e9 FROM allot.host WHERE name LIKE 'volunteer-%';

CREATE TEMP TABLE demo_jobs_sample (step int, workload_id bigint, resource text, gflops float8);
CREATE PROCEDURE pg_temp.simulate_jobs(t0 timestamptz, steps int)
LANGUAGE plpgsql AS $$
DECLARE
    now_ timestamptz;
    j record;
    h record;
    sent bigint := 0;
    reported bigint := 0;
BEGIN
    PERFORM setseed(0.7);
    FOR step IN 0 .. steps - 1 LOOP
        now_ := t0 + make_interval(mins => 10 * step);
        -- Hosts report what finished; some hosts are up to 50% slower.
        FOR j IN SELECT jb.id, jb.host_id, v.resource, jb.sent_at
                   FROM allot.job jb JOIN allot.app_version v ON v.id = jb.app_version_id
                  WHERE jb.state = 'in_progress'
                    AND jb.sent_at + CASE v.resource WHEN 'cpu' THEN interval '1 hour'
                                                     ELSE interval '30 minutes' END
                        * (1 + (jb.host_id % 5) / 10.0) <= now_
                  ORDER BY jb.id LOOP
            PERFORM allot.report_job(j.host_id, j.id, 'success', 1,
                                     extract(epoch FROM now_ - j.sent_at)::float8, NULL, now_);
            -- The project's validator accepts it (allot learns from
            -- validated results only).
            PERFORM allot.validate_job(j.id, true);
            reported := reported + 1;
        END LOOP;
        FOR h IN SELECT ho.id,
                        2 - count(*) FILTER (WHERE v.resource = 'cpu') AS idle_cpu,
                        1 - count(*) FILTER (WHERE v.resource = 'nvidia') AS idle_gpu
                   FROM allot.host ho
                   LEFT JOIN allot.job jb ON jb.host_id = ho.id AND jb.state = 'in_progress'
                   LEFT JOIN allot.app_version v ON v.id = jb.app_version_id
                  WHERE ho.name LIKE 'volunteer-%'
                  GROUP BY ho.id ORDER BY ho.id LOOP
            IF h.idle_cpu > 0 OR h.idle_gpu > 0 THEN
                sent := sent + jsonb_array_length(allot.request_work(h.id,
                    jsonb_build_object('resources', jsonb_build_object(
                        'cpu', jsonb_build_object('req_instances', h.idle_cpu),
                        'nvidia', jsonb_build_object('req_instances', h.idle_gpu))),
                    now_, step * 1000 + h.id) -> 'jobs');
            END IF;
        END LOOP;
        PERFORM allot.run_transitioner(now_);
        IF step >= 36 THEN
            INSERT INTO demo_jobs_sample
            SELECT step, jb.workload_id, v.resource, sum(jb.peak_flops_per_sec) / 1e9
              FROM allot.job jb JOIN allot.app_version v ON v.id = jb.app_version_id
             WHERE jb.state = 'in_progress' GROUP BY 1, 2, 3;
        END IF;
        IF step % 24 = 23 THEN
            RAISE NOTICE 'hour %/%: % jobs sent, % reported', (step + 1) / 6, steps / 6, sent, reported;
        END IF;
        COMMIT;
    END LOOP;
END $$;

\echo '== Simulating a virtual day in 10-minute steps'
-- The two simulations run one after the other over the same virtual
-- hours, and a minute's shares are written by its first transitioner run:
-- each simulation keeps its own farm's history, what the job farm's runs
-- would write of the engine-testing farm (as it ended) is not its past.
CREATE TEMP TABLE demo_history AS SELECT * FROM allot.share_history;
DELETE FROM allot.share_history;
CALL pg_temp.simulate_jobs(:'jobs_start', 144);
DELETE FROM allot.share_history WHERE NOT jobs;
INSERT INTO allot.share_history SELECT * FROM demo_history;

\echo '== Share of the farm''s FLOPS in use, hours 6 to 24 (fair: a third each)'
WITH per AS (
    SELECT workload_id, resource, avg(gflops) AS gflops
      FROM (SELECT s.step, w.id AS workload_id, r.resource, coalesce(x.gflops, 0) AS gflops
              FROM (SELECT DISTINCT step FROM demo_jobs_sample) s
             CROSS JOIN (SELECT id FROM allot.workload WHERE app_id IS NOT NULL) w
             CROSS JOIN (VALUES ('cpu'), ('nvidia')) r(resource)
              LEFT JOIN demo_jobs_sample x
                ON x.step = s.step AND x.workload_id = w.id AND x.resource = r.resource) y
     GROUP BY workload_id, resource),
tot AS (
    SELECT workload_id, sum(gflops) AS gflops,
           sum(gflops) FILTER (WHERE resource = 'cpu') AS cpu,
           sum(gflops) FILTER (WHERE resource = 'nvidia') AS gpu
      FROM per GROUP BY workload_id)
SELECT w.name,
       round((100 * t.gflops / sum(t.gflops) OVER ())::numeric, 1) AS "FLOPS share %",
       33.3 AS "fair %",
       round((100 * t.cpu / nullif(sum(t.cpu) OVER (), 0))::numeric, 1) AS "CPU share %",
       round((100 * t.gpu / nullif(sum(t.gpu) OVER (), 0))::numeric, 1) AS "GPU share %",
       rpad(repeat('#', round(60 * t.gflops / sum(t.gflops) OVER ())::int), 21) || '|'
           AS "share, 1 # per 1/60"
  FROM tot t JOIN allot.workload w ON w.id = t.workload_id ORDER BY w.id;

\echo '== What the transitioner learned: FLOPs per app unit (a job is 3.6e12 FLOPs)'
SELECT a.name, a.n_reports AS reports, a.cpu_flops_per_au, a.gpu_flops_per_au,
       round(a.est_flops_per_au::numeric / 1e12, 2) AS "est TFLOPs per unit"
  FROM allot.app a WHERE a.id IN (101, 102, 103) ORDER BY a.id;

\echo '== Credit: every validated job of an app earns the same'
SELECT allot.run_transitioner(:'demo_end') ->> 'credited' AS credited;
SELECT a.name, count(*) AS jobs, round(min(j.credit)::numeric, 3) AS min_credit,
       round(max(j.credit)::numeric, 3) AS max_credit
  FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id JOIN allot.app a ON a.id = w.app_id
 WHERE j.credit IS NOT NULL GROUP BY a.id, a.name ORDER BY a.id;

\echo '== The transitioner, scheduled with pg_cron as an operator would (once a minute)'
SELECT cron.schedule('allot', '* * * * *', 'SELECT allot.run_transitioner()') > 0 AS scheduled;
SELECT jobname, schedule, command FROM cron.job;

\echo '== Consistency: check_invariants() (no rows is good)'
SELECT * FROM allot.check_invariants();
