-- A host's stated figures cannot make one job worth more than its deadline
-- allows.  Under fairness = recent or debt a job sent counts at once as
-- est_secs x peak FLOPS of credit (docs/concepts.md "Fairness over time"), and
-- est_secs follows the seconds per app unit the client states in
-- request.app_versions (up to 1e10).  The deadline check used to bound it:
-- a job whose estimate exceeds its delay bound is not sent, so one job was
-- worth at most delay_bound x peak.  The probe (a job sent to an idle
-- resource whatever its estimate, while its workload has none in progress)
-- lifted that bound: one request stating 1e10 s per app unit wrote 1e19 of
-- credit, 2.8 million times an honest job's 3.6e12, and starved the
-- workload for some 21 half-lives of REC (7 months at 10 days), or for good
-- under debt.  Now a sent job counts its estimate capped at the delay bound.
--
-- Runs as a superuser in a fresh database with pgtap and allot created.
BEGIN;
SELECT plan(5);

CREATE ROLE allot_att_web LOGIN IN ROLE allot_web;
INSERT INTO allot.app (id, name) VALUES (1, 'crunch');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, engine, app_id, delay_bound) VALUES
    (1, 'a', 1, '3 days'), (2, 'b', 1, '3 days'), (3, 'c', 1, '3 days');
INSERT INTO allot.job (workload_id) SELECT w FROM generate_series(1, 3) w, generate_series(1, 10);
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (1, 'Linux', 4, 1e9), (2, 'Linux', 4, 1e9);
SET allot.default_seconds_per_app_unit = 3600;

-- What one job of the farm's may be worth: its delay bound x its peak.
CREATE FUNCTION pg_temp.worth_at_most(w bigint) RETURNS float8 LANGUAGE sql AS $f$
    SELECT extract(epoch FROM wl.delay_bound)::float8 * 1e9 FROM allot.workload wl WHERE wl.id = w
$f$;

-- Control: an honest request of host 2 for workload 3 under recent writes
-- an honest job's worth, 3600 s x 1e9 FLOPS.
SET allot.fairness = recent;
SET SESSION AUTHORIZATION allot_att_web;
SELECT is(jsonb_array_length(allot.request_work(2,
              '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [1, 2]}') -> 'jobs'),
          1, 'control: host 2 takes one job of workload 3');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT rec FROM allot.workload_credit WHERE workload_id = 3), 3.6e12::float8,
          'control: an honest job is worth 3600 s x 1e9 FLOPS of REC');

-- The attack, under recent: host 1 states 1e10 s per app unit.
SET SESSION AUTHORIZATION allot_att_web;
SELECT is(jsonb_array_length(allot.request_work(1,
              '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [2, 3],
                "app_versions": {"1": {"seconds_per_app_unit": 1e10}}}') -> 'jobs') <= 1,
          true, 'web: host 1 asks for a job of workload 1, stating 1e10 s per app unit');
RESET SESSION AUTHORIZATION;
SELECT cmp_ok(coalesce((SELECT rec FROM allot.workload_credit WHERE workload_id = 1), 0),
              '<=', pg_temp.worth_at_most(1),
              'recent: the REC written for one job is at most its delay bound x peak');

-- Under debt: the credit sent since the last fold.
SET allot.fairness = debt;
SET SESSION AUTHORIZATION allot_att_web;
SELECT allot.request_work(1, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [1, 3],
                               "app_versions": {"1": {"seconds_per_app_unit": 1e10}}}') IS NOT NULL AS asked \gset
RESET SESSION AUTHORIZATION;
SELECT cmp_ok(coalesce((SELECT sent FROM allot.workload_credit WHERE workload_id = 2), 0),
              '<=', pg_temp.worth_at_most(2),
              'debt: the credit sent for one job is at most its delay bound x peak');

SELECT * FROM finish();
ROLLBACK;
