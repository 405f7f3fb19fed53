-- bench/soak.sh: one round of the project's daemons, as pg_cron would run
-- them once a minute but here every few seconds: the validator's verdicts on
-- the oldest unvalidated done jobs (one in 20 found invalid, which withdraws
-- its credit), then allot.run_transitioner().  Each statement is its own
-- transaction, as in a pg_cron run, and the round's figures go to
-- public.soak_transitioner.  psql variables: call (the round's number),
-- validate (the most jobs judged per round).  Any error stops the round
-- (ON_ERROR_STOP): the caller counts it, and the next round still runs.
\set ON_ERROR_STOP on
SELECT count(*) FILTER (WHERE valid) AS validated, count(*) FILTER (WHERE NOT valid) AS invalidated
  FROM (SELECT id % 20 <> 0 AS valid, allot.validate_job(id, id % 20 <> 0) AS ok
          FROM (SELECT id FROM allot.job WHERE state = 'done' AND validated IS NULL
                 ORDER BY id LIMIT :validate) AS j) AS v
 WHERE ok \gset
SELECT clock_timestamp() AS t0 \gset
SELECT allot.run_transitioner() AS result \gset
-- clock_timestamp() here is after run_transitioner's COMMIT.
INSERT INTO public.soak_transitioner (call, at, ms, validated, invalidated, result)
VALUES (:call, :'t0', 1000 * extract(epoch FROM clock_timestamp() - :'t0'::timestamptz),
        :validated, :invalidated, :'result');
