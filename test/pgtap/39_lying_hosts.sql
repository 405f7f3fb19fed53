-- Lying hosts against honest variance (issues 20 and 30), as a property: a
-- farm of 100 honest hosts runs an app with a heavy tail (one job in ten
-- takes ten times its prediction) twice, once alone and once beside 34
-- colluding owners (a quarter of the voices) that report every job as 1e6
-- app units and are validated too: the worst a validated liar can claim
-- (lib/lying_farm.sql builds the farm; bench/lying_hosts.sh plays it for
-- other numbers of liars and claims).  0.6.0 held 5 such liars of 105 and
-- broke beyond about one in 16 (34 of 134: the estimate 25,000 times the
-- honest one); 0.7.0 leaves their claims out (src/voices.h).
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
--
-- And, from 0.7.0's bounded influence over owners' voices
-- (src/app_unit_stats.c):
--   - 34 colluding owners of 134 claiming 50 app units a job, inside the
--     band screening keeps (the claim 0.7.0's screening let through: +108%
--     estimate, +102% credit), move estimate, bound and credit less than
--     20%, and 99.9% of the honest jobs still finish inside their bound;
--   - 34 colluding owners of 134 claiming, inside chance's reach one by
--     one, five times the prediction every job ('fivefold': +41% credit
--     before) or ten times it every other job ('halflong': +38% estimate,
--     +48% credit before) move estimate, bound and credit less than 20%:
--     together they are beyond chance (issue 30, in band), and 99.9% of
--     the honest jobs still finish inside their bound;
--   - 34 colluding owners of 134 reporting exactly the prediction every
--     job ('tailfree': what an honest host without a long job reports, so
--     never told apart) dilute the honest tail below one report in 17,
--     which the seed's mean + 4 sd never reaches: 1.6% of the honest jobs
--     of rounds 2 and 3 ran past their bound before (98.4% inside).  The
--     tail that one voice in 16 reaches now bounds the jobs: estimate,
--     bound and credit within 20%, and 99.9% of the honest jobs inside;
--   - on an honest heavy-tailed window every voice is kept, and the
--     statistics are the seed's formulas, mean and sample variance of actual
--     over predicted app units, to the last bit.
--
-- Runs as a superuser in a fresh database with pgtap and allot created.
BEGIN;
SELECT plan(26);
\ir lib/lying_farm.sql

-- The in-band case plays a farm of its own and rolls it back (an error
-- caught undoes its subtransaction), keeping only what it measured: the
-- honest and the lied-to run's outcome and the share of honest jobs
-- inside their bound.
CREATE FUNCTION pg_temp.play(liars int, rounds int, claim text) RETURNS jsonb
LANGUAGE plpgsql AS $f$
DECLARE
    measured jsonb;
BEGIN
    BEGIN
        PERFORM pg_temp.lying_farm(liars, rounds, claim);
        SELECT jsonb_build_object(
                   'outcome', (SELECT jsonb_object_agg(workload_id, to_jsonb(o)) FROM outcome o),
                   'inside', (SELECT jsonb_object_agg(workload_id, inside)
                                FROM (SELECT workload_id,
                                             count(*) FILTER (WHERE secs <= bound_secs)::float8 / count(*) AS inside
                                        FROM sent WHERE host_id <= 100 AND round >= 2
                                       GROUP BY workload_id) i))
          INTO measured;
        RAISE EXCEPTION 'played' USING ERRCODE = 'P0001', DETAIL = measured::text;
    EXCEPTION WHEN SQLSTATE 'P0001' THEN
        GET STACKED DIAGNOSTICS measured = PG_EXCEPTION_DETAIL;
    END;
    RETURN measured;
END
$f$;
CREATE TEMP TABLE in_band AS
SELECT claim, pg_temp.play(34, 15, claim) AS m FROM unnest(ARRAY['edge', 'fivefold', 'halflong', 'tailfree']) claim;
CREATE FUNCTION pg_temp.in_band_within(claim text, what text, pct float8) RETURNS text LANGUAGE sql AS $f$
    SELECT ok(abs(lied / honest - 1) <= pct / 100,
              format('%s with 34 owners of 134 claiming %s: '
                     '%s against %s honest, %s%% apart (at most %s%%)',
                     what, CASE claim WHEN 'edge' THEN '50 app units a job (inside the band)'
                                      WHEN 'fivefold' THEN '5 app units a job (inside chance, one by one)'
                                      WHEN 'halflong' THEN '10 app units every other job (inside chance, one by one)'
                                      ELSE 'exactly the prediction, every job (tail-free)' END,
                     round(lied::numeric, 3), round(honest::numeric, 3),
                     round((100 * (lied / honest - 1))::numeric, 1), pct))
      FROM (SELECT (m -> 'outcome' -> '1' ->> what)::float8 AS honest,
                   (m -> 'outcome' -> '2' ->> what)::float8 AS lied FROM in_band b WHERE b.claim = $1) x
$f$;
SELECT pg_temp.in_band_within(claim, what, 20)
  FROM unnest(ARRAY['edge', 'fivefold', 'halflong', 'tailfree']) claim, unnest(ARRAY['est_secs', 'bound_secs', 'credit']) what;
SELECT ok((m -> 'inside' ->> '1')::float8 >= 0.999 AND (m -> 'inside' ->> '2')::float8 >= 0.999,
          format('colluders (%s): at least 99.9%% of the honest jobs sent after two rounds finish inside their bound, in both runs (%s)',
                 claim, m -> 'inside'))
  FROM in_band ORDER BY claim;

-- An honest window with the seed's heavy tail: 100 owners' voices of ten
-- reports each, a job in ten (by a hash) ten times its prediction; some
-- voices drew three long jobs of ten, far from the median voice (two
-- standard errors) yet what chance allows.  Nothing is left out, and the
-- statistics are the seed's: mean and sample variance of the ratios (each
-- voice has as many reports, so its one weight is the plain mean's).
CREATE TEMP TABLE honest_window AS
SELECT g AS id, -(1 + g / 10)::bigint AS voice,
       CASE WHEN abs(hashtext('honest/' || g)) % 10 = 0 THEN 10.0 ELSE 1.0 END::float8 AS actual,
       1.0::float8 AS predicted, 1e11::float8 AS flops_per_au
  FROM generate_series(0, 999) g;
SELECT ok((SELECT count(*) FROM (SELECT voice FROM honest_window GROUP BY voice
                                   HAVING count(*) FILTER (WHERE actual = 10) >= 3) v) > 0,
          'fixture: some honest voices drew three long jobs of ten or more');
SELECT results_eq(
    $$SELECT s.n_reports, round(s.au_ratio_mean::numeric, 9), round(s.au_ratio_m2::numeric, 9)
        FROM allot.app_unit_statistics((SELECT array_agg(voice ORDER BY id) FROM honest_window),
                                       (SELECT array_agg(actual ORDER BY id) FROM honest_window),
                                       (SELECT array_agg(predicted ORDER BY id) FROM honest_window),
                                       (SELECT array_agg(flops_per_au ORDER BY id) FROM honest_window)) s$$,
    $$SELECT count(*), round(avg(actual / predicted)::numeric, 9),
             round((var_samp(actual / predicted) * (count(*) - 1))::numeric, 9)
        FROM honest_window$$,
    'an honest heavy-tailed window keeps every voice: the seed''s mean and variance of actual over predicted');
SELECT is((SELECT round((s.au_ratio_mean + 4 * sqrt(s.au_ratio_m2 / (s.n_reports - 1)))::numeric, 9)
             FROM allot.app_unit_statistics((SELECT array_agg(voice ORDER BY id) FROM honest_window),
                                            (SELECT array_agg(actual ORDER BY id) FROM honest_window),
                                            (SELECT array_agg(predicted ORDER BY id) FROM honest_window),
                                            (SELECT array_agg(flops_per_au ORDER BY id) FROM honest_window)) s),
          (SELECT round((avg(actual / predicted) + 4 * stddev_samp(actual / predicted))::numeric, 9)
             FROM honest_window),
          'the honest window''s bound factor is the seed''s mean + 4 sd');

SELECT lives_ok($$SELECT pg_temp.lying_farm(34, 15, 'units')$$, 'fixture: 15 rounds of both runs');

CREATE FUNCTION pg_temp.within(what text, pct float8) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    honest float8;
    lied float8;
BEGIN
    EXECUTE format('SELECT %I FROM outcome WHERE workload_id = 1', what) INTO honest;
    EXECUTE format('SELECT %I FROM outcome WHERE workload_id = 2', what) INTO lied;
    RETURN ok(abs(lied / honest - 1) <= pct / 100,
              format('%s with 34 lying owners of 134: %s against %s honest, %s%% apart (at most %s%%)',
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
