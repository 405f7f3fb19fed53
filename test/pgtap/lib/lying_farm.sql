-- A farm of honest hosts and colluding liars, for test/pgtap/39_lying_hosts.sql
-- and bench/lying_hosts.sh (\ir or \i this file in a fresh database).
--
-- pg_temp.lying_farm(liars, rounds, claim) builds two runs of one app with a
-- heavy tail, side by side, and plays `rounds` rounds of one job per host:
--   app 1 / workload 1   100 honest hosts (ids 1-100) alone
--   app 2 / workload 2   the same hosts, with the same jobs, beside `liars`
--                        colluding hosts (ids 101 ...)
-- A job predicted at 1 app unit takes 1 unit (100 s at 1 GFLOPS) nine
-- times in ten and 10 units (1,000 s) once in ten; which jobs are long is
-- the same in both runs (a hash of host and round).  Every result is
-- validated, the liars' too.  `claim` is what a liar reports for each job:
--   'units'     1e6 app units in 1,000 s (inflates app units)
--   'elapsed'   1 app unit in 1e-6 s (deflates FLOPS per app unit)
-- The transitioner runs after each round.  Table `sent` keeps every job
-- sent (its bound, the time it really takes); view `outcome` what a new
-- host (id 1000) is told and what a job earns, in each run.
CREATE FUNCTION pg_temp.lying_farm(liars int, rounds int, claim text) RETURNS void
LANGUAGE plpgsql AS $f$
DECLARE
    r jsonb;
    at timestamptz;
    long_ boolean;
BEGIN
    INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'honest run', 1e11), (2, 'lied-to run', 1e11);
    INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1), (2, 2, 'cpu', 1);
    INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES
        (1, 'honest run', 'tail', 1, '3 days'), (2, 'lied-to run', 'tail', 2, '3 days');
    INSERT INTO allot.job (workload_id)
    SELECT w FROM generate_series(1, 2) w, generate_series(1, (rounds + 1) * (100 + liars));
    INSERT INTO allot.host (id, name, os, threads, cpu_flops)
    SELECT g, CASE WHEN g <= 100 THEN 'honest ' ELSE 'liar ' END || g, 'Linux', 1, 1e9
      FROM generate_series(1, 100 + liars) g
    UNION ALL SELECT 1000, 'newcomer', 'Linux', 1, 1e9;
    CREATE TEMP TABLE sent (workload_id bigint, host_id bigint, round int, job_id bigint,
                            bound_secs float8, secs float8);
    FOR round IN 0 .. rounds - 1 LOOP
        at := '2026-01-01'::timestamptz + make_interval(hours => round);
        FOR w IN 1..2 LOOP
            FOR h IN 1 .. CASE WHEN w = 1 THEN 100 ELSE 100 + liars END LOOP
                r := allot.request_work(h, jsonb_build_object(
                         'resources', jsonb_build_object('cpu', jsonb_build_object('req_instances', 1)),
                         'exclude', jsonb_build_array(3 - w)), at, round * 1000 + h) -> 'jobs' -> 0;
                long_ := abs(hashtext(h || '/' || round)) % 10 = 0;
                INSERT INTO sent VALUES (w, h, round, (r ->> 'job_id')::bigint, (r ->> 'bound_secs')::float8,
                                         CASE WHEN long_ THEN 1000 ELSE 100 END);
                IF h > 100 THEN
                    PERFORM allot.report_job(h, (r ->> 'job_id')::bigint, 'success',
                                             CASE claim WHEN 'units' THEN 1e6 ELSE 1 END,
                                             CASE claim WHEN 'units' THEN 1000 ELSE 1e-6 END,
                                             NULL, at + interval '30 minutes');
                ELSE
                    PERFORM allot.report_job(h, (r ->> 'job_id')::bigint, 'success',
                                             CASE WHEN long_ THEN 10 ELSE 1 END,
                                             CASE WHEN long_ THEN 1000 ELSE 100 END, NULL,
                                             at + interval '30 minutes');
                END IF;
                PERFORM allot.validate_job((r ->> 'job_id')::bigint, true);
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
