-- A farm of honest hosts and colluding liars, for test/pgtap/39_lying_hosts.sql
-- and bench/lying_hosts.sh (\ir or \i this file in a fresh database).
--
-- pg_temp.lying_farm(liars, rounds, claim [, quorum]) builds two runs of one
-- app with a heavy tail, side by side, and plays `rounds` rounds of one job
-- per host:
--   app 1 / workload 1   100 honest hosts (ids 1-100) alone
--   app 2 / workload 2   the same hosts, with the same jobs, beside `liars`
--                        colluding hosts (ids 101 ...), each its own owner
-- A job predicted at 1 app unit takes 1 unit (100 s at 1 GFLOPS) nine
-- times in ten and 10 units (1,000 s) once in ten; which jobs are long is
-- the same in both runs (a hash of host and round).  `claim` is what a liar
-- reports for each job:
--   'units'       1e6 app units in 1,000 s (inflates app units)
--   'elapsed'     1 app unit in 1e-6 s (deflates FLOPS per app unit)
--   'tiny_units'  1e-6 app units in 100 s (deflates app units)
--   'flops'       1 app unit in 100 s at 1 FLOPS (deflates FLOPS per app unit)
--   'tailfree'    always 1 app unit in 100 s: exactly the prediction, no
--                 tail (shrinks the variance, and so the bound)
--   'edge'        always 50 app units in 1,000 s: within the band screening
--                 keeps (voices.h), so only the seed's bound holds it
--   'sybil'       'units', but every liar a host of one owner
--   'fivefold'    always 5 app units in 500 s: far from the honest voices,
--                 but close enough that a quarter of the voices claiming it
--                 can vouch for one another (app_unit_stats.c)
--   'halflong'    10 app units in 1,000 s every other job, else the
--                 prediction: the honest tail, five times as often
-- With quorum 1 every result is validated, the liars' too.  With quorum 2
-- every job has a replica for another owner (min_quorum and
-- target_nresults 2), and the validator compares outputs: the honest
-- hosts' agree ('ok'); the liars forge one output together ('forged'), so
-- a liar's result is decided only when a liar holds the other replica.
-- Hosts ask in a shuffled order each round.  The transitioner runs after
-- each round.  Table `sent` keeps every job
-- sent (its bound, the time it really takes); view `outcome` what a new
-- host (id 1000) is told and what a job earns, in each run.
CREATE FUNCTION pg_temp.lying_farm(liars int, rounds int, claim text, quorum int DEFAULT 1)
RETURNS void
LANGUAGE plpgsql AS $f$
DECLARE
    r jsonb;
    at timestamptz;
    long_ boolean;
    units float8;
    secs float8;
    flops float8;
    sybil bigint;
    h int;
BEGIN
    INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'honest run', 1e11), (2, 'lied-to run', 1e11);
    INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1), (2, 2, 'cpu', 1);
    INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES
        (1, 'honest run', 'tail', 1, '3 days'), (2, 'lied-to run', 'tail', 2, '3 days');
    INSERT INTO allot.job (workload_id, min_quorum, target_nresults)
    SELECT w, quorum, quorum FROM generate_series(1, 2) w, generate_series(1, (rounds + 2) * (100 + liars));
    IF claim = 'sybil' THEN
        INSERT INTO allot.owner (key) VALUES ('sybil') RETURNING id INTO sybil;
    END IF;
    INSERT INTO allot.host (id, name, os, threads, cpu_flops, owner_id)
    SELECT g, CASE WHEN g <= 100 THEN 'honest ' ELSE 'liar ' END || g, 'Linux', 1, 1e9,
           CASE WHEN g > 100 THEN sybil END
      FROM generate_series(1, 100 + liars) g
    UNION ALL SELECT 1000, 'newcomer', 'Linux', 1, 1e9, NULL;
    CREATE TEMP TABLE sent (workload_id bigint, host_id bigint, round int, job_id bigint,
                            bound_secs float8, secs float8);
    FOR round IN 0 .. rounds - 1 LOOP
        at := '2026-01-01'::timestamptz + make_interval(hours => round);
        FOR w IN 1..2 LOOP
            -- Hosts ask in an order of their own each round (a hash), as
            -- volunteers do: which host holds a job's other replica is chance.
            FOR h IN SELECT g FROM generate_series(1, CASE WHEN w = 1 THEN 100 ELSE 100 + liars END) g
                      ORDER BY hashtext(g || ':' || round), g LOOP
                r := allot.request_work(h, jsonb_build_object(
                         'resources', jsonb_build_object('cpu', jsonb_build_object('req_instances', 1)),
                         'exclude', jsonb_build_array(3 - w)), at, round * 1000 + h) -> 'jobs' -> 0;
                CONTINUE WHEN r IS NULL;
                long_ := abs(hashtext(h || '/' || round)) % 10 = 0;
                INSERT INTO sent VALUES (w, h, round, (r ->> 'job_id')::bigint, (r ->> 'bound_secs')::float8,
                                         CASE WHEN long_ THEN 1000 ELSE 100 END);
                flops := NULL;
                IF h > 100 THEN
                    CASE claim
                        WHEN 'units', 'sybil' THEN units := 1e6; secs := 1000;
                        WHEN 'elapsed' THEN units := 1; secs := 1e-6;
                        WHEN 'tiny_units' THEN units := 1e-6; secs := 100;
                        WHEN 'flops' THEN units := 1; secs := 100; flops := 1;
                        WHEN 'tailfree' THEN units := 1; secs := 100;
                        WHEN 'edge' THEN units := 50; secs := 1000;
                        WHEN 'fivefold' THEN units := 5; secs := 500;
                        WHEN 'halflong' THEN
                            units := CASE WHEN (h + round) % 2 = 0 THEN 10 ELSE 1 END;
                            secs := 100 * units;
                    END CASE;
                ELSE
                    units := CASE WHEN long_ THEN 10 ELSE 1 END;
                    secs := CASE WHEN long_ THEN 1000 ELSE 100 END;
                END IF;
                PERFORM allot.report_job(h, (r ->> 'job_id')::bigint, 'success', units, secs, flops,
                                         at + interval '30 minutes');
                PERFORM allot.validate_job((r ->> 'job_id')::bigint, true,
                                           digest => CASE WHEN h > 100 AND quorum > 1 THEN 'forged' ELSE 'ok' END,
                                           now => at + interval '31 minutes');
            END LOOP;
        END LOOP;
        PERFORM allot.run_transitioner(at + interval '40 minutes');
    END LOOP;
END
$f$;

CREATE TEMP VIEW outcome AS
SELECT w.id AS workload_id, e.est_secs, e.bound_secs, a.est_flops_per_au,
       a.actual_au_mean * a.est_flops_per_au / 4.32e11 AS credit
  FROM allot.workload w JOIN allot.app a ON a.id = w.app_id,
       LATERAL allot.estimate_job(1000, (SELECT min(id) FROM allot.job j
                                          WHERE j.workload_id = w.id AND j.state = 'unsent')) e;
