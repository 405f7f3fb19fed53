-- Lying hosts against honest variance (issue 20), as a property: a farm of
-- 100 honest hosts runs an app with a heavy tail twice, once alone (app H)
-- and once beside 5 colluding hosts (app L), and the liars' farm must keep
-- what the honest one learns.
--
-- The app: a job predicted at 1 app unit takes 1 unit (100 s at 1 GFLOPS)
-- nine times in ten and 10 units (1,000 s) once in ten; which jobs are long
-- is the same in both runs (a hash of host and round).  Every result is
-- validated.  The liars (5% of the hosts) report every job they get as
-- 1e6 app units in 1,000 s, and are validated too: the worst a validated
-- liar can claim.
--
-- Required, after 15 rounds of one job per host, the transitioner after
-- each:
--   - the estimate and bound a new host gets, the app's FLOPS per app unit
--     and the credit a job earns are within 20% of the honest run's;
--   - at least 99.9% of the honest jobs sent after the first two rounds
--     finish inside the bound they were sent with, in both runs.  Before,
--     there is too little to learn from: the first round's hundred jobs
--     hold five long ones (5%), on which the seed's own formula gives a
--     bound of 1.45 + 4 x 1.97 = 9.3 units, 930 s, and would abort the long
--     jobs too.
--
-- Runs as a superuser in a fresh database with pgtap and allot created.
BEGIN;
SELECT plan(7);

INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'honest run', 1e11), (2, 'lied-to run', 1e11);
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1), (2, 2, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES
    (1, 'honest run', 'tail', 1, '3 days'), (2, 'lied-to run', 'tail', 2, '3 days');
INSERT INTO allot.job (workload_id) SELECT w FROM generate_series(1, 2) w, generate_series(1, 1700);
INSERT INTO allot.host (id, name, os, threads, cpu_flops)
SELECT g, CASE WHEN g <= 100 THEN 'honest ' ELSE 'liar ' END || g, 'Linux', 1, 1e9
  FROM generate_series(1, 106) g;   -- 1-100 honest, 101-105 liars, 106 asks for estimates

CREATE TEMP TABLE sent (workload_id bigint, host_id bigint, round int, job_id bigint,
                        bound_secs float8, secs float8) ON COMMIT DROP;

CREATE FUNCTION pg_temp.long_job(h bigint, round int) RETURNS boolean LANGUAGE sql IMMUTABLE AS $f$
    SELECT abs(hashtext(h || '/' || round)) % 10 = 0
$f$;

CREATE FUNCTION pg_temp.farm() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
    r jsonb;
    at timestamptz;
    long_ boolean;
BEGIN
    FOR round IN 0..14 LOOP
        at := '2026-01-01'::timestamptz + make_interval(hours => round);
        FOR w IN 1..2 LOOP
            FOR h IN 1..(CASE WHEN w = 1 THEN 100 ELSE 105 END) LOOP
                r := allot.request_work(h, jsonb_build_object(
                         'resources', jsonb_build_object('cpu', jsonb_build_object('req_instances', 1)),
                         'exclude', jsonb_build_array(3 - w)), at, round * 1000 + h) -> 'jobs' -> 0;
                long_ := pg_temp.long_job(h, round);
                INSERT INTO sent VALUES (w, h, round, (r ->> 'job_id')::bigint, (r ->> 'bound_secs')::float8,
                                         CASE WHEN long_ THEN 1000 ELSE 100 END);
                IF h > 100 THEN
                    PERFORM allot.report_job(h, (r ->> 'job_id')::bigint, 'success', 1e6, 1000, NULL,
                                             at + interval '30 minutes');
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
SELECT lives_ok('SELECT pg_temp.farm()', 'fixture: 15 rounds of both runs');

-- What a new host (106) is told, and what a job earns, in each run.
CREATE TEMP VIEW outcome AS
SELECT w.id AS workload_id, e.est_secs, e.bound_secs, a.est_flops_per_au,
       a.actual_au_mean * a.est_flops_per_au / 4.32e11 AS credit
  FROM allot.workload w JOIN allot.app a ON a.id = w.app_id,
       LATERAL allot.estimate_job(106, (SELECT min(id) FROM allot.job j
                                         WHERE j.workload_id = w.id AND j.state = 'unsent')) e;
CREATE FUNCTION pg_temp.within(what text, pct float8) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    honest float8;
    lied float8;
BEGIN
    EXECUTE format('SELECT %I FROM outcome WHERE workload_id = 1', what) INTO honest;
    EXECUTE format('SELECT %I FROM outcome WHERE workload_id = 2', what) INTO lied;
    RETURN ok(abs(lied / honest - 1) <= pct / 100,
              format('%s with 5 lying hosts of 105: %s against %s honest, %s%% apart (at most %s%%)',
                     what, round(lied::numeric, 3), round(honest::numeric, 3),
                     round((100 * (lied / honest - 1))::numeric, 1), pct));
END
$f$;
SELECT pg_temp.within('est_secs', 20);
SELECT pg_temp.within('bound_secs', 20);
SELECT pg_temp.within('est_flops_per_au', 20);
SELECT pg_temp.within('credit', 20);
SELECT results_eq(
    $$SELECT workload_id, count(*) FILTER (WHERE secs <= bound_secs)::float8 / count(*) >= 0.999
        FROM sent WHERE host_id <= 100 AND round >= 2 GROUP BY workload_id ORDER BY 1$$,
    $$VALUES (1::bigint, true), (2, true)$$,
    'at least 99.9% of the honest jobs sent after two rounds finish inside their bound, in both runs');
SELECT is_empty($$SELECT * FROM allot.check_invariants()$$, 'check_invariants() is empty');
SELECT * FROM finish();
ROLLBACK;
