-- Attacks on allot from the two logins a farm exposes (docs/threat-model.md, "Threat
-- model"): the web layer's login (a member of allot_web) and an operator's
-- login (a member of allot_admin).  Each section tries what an attacker
-- would, and checks that it is refused or reaches nothing:
--
--   A  the catalog: every allot.* setting is operator-only; allot_admin
--      owns nothing; the triggers run as their caller, owned by the
--      extension's owner
--   B  the web login sets farm policy (allot.* settings, in every way a
--      session can: SET, SET LOCAL, set_config, ALTER ROLE, a function's SET
--      clause, SET ROLE), then asks for 100,000 instances and takes an
--      assignment under fairness = recent                        (issue 10.1)
--   C  the web login moves the clock: `now` far from the server's (10.8)
--   D  the web login sends JSON with unknown keys and huge amounts, and
--      half an instance                                           (10.9)
--   E  a host takes jobs of a workload without a delay bound and vanishes
--                                                                 (10.7)
--   F  the web login puts temporary tables named like allot's before a
--      request
--   G  the operator login alters, replaces and adds to allot's objects,
--      grants itself roles and rights, and plants operators and functions in
--      a schema it owns                                           (10.3)
--   H  a superuser, with that schema first in its search_path, writes
--      allot's tables and runs every allot function: nothing planted runs;
--      then, as a control, the planted objects do run when called
--
-- Settings made before allot's library is loaded in a session (placeholders,
-- connection options, ALTER DATABASE, postgresql.conf) need fresh sessions:
-- test/t/007_policy.pl.  The estimates' robustness (10.4) is
-- sql/robust_estimates.sql.
--
-- Runs as a superuser in a fresh database with pgtap and allot created; the
-- login roles and the operator's schema are dropped by the rollback.  The
-- web login always uses the server's clock (its `now` must be near it).
BEGIN;
SELECT plan(79);

-- ---------------------------------------------------------------------------
-- Fixture.  The operator's policy is written down explicitly (the defaults),
-- so that every expectation below follows from it and not from whatever a
-- login managed to set.
SET allot.daily_quota = 100;
SET allot.max_jobs_per_request = 1000;
SET allot.assignment_ttl = '2min';
SET allot.rec_half_life = '10d';
SET allot.default_seconds_per_app_unit = 3600;

CREATE ROLE allot_att_web LOGIN IN ROLE allot_web;
CREATE ROLE allot_att_op LOGIN IN ROLE allot_admin;
-- A schema the operator can write, readable by everyone like schema public.
CREATE SCHEMA allot_att_opsch AUTHORIZATION allot_att_op;
GRANT USAGE ON SCHEMA allot_att_opsch TO PUBLIC;

-- App 1 (one CPU version); job workload 1 with 300 jobs and a 30-day delay
-- bound; assignment workload 2; job workload 3 without a delay bound (5
-- jobs); an empty job workload 6, for the operator to delete.  Hosts: 1 the
-- attacker's (8 threads), 2 the one that vanishes, 3 for assignments, 4 for
-- odd requests, 5 to 7 for the superuser's calls in H.
INSERT INTO allot.app (id, name) VALUES (1, 'crunch');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, engine, app_id, delay_bound) VALUES (1, 'crunch', 1, '30 days');
INSERT INTO allot.workload (id, engine, throughput) VALUES (2, 'SF', 1000);
INSERT INTO allot.workload (id, engine, app_id) VALUES (3, 'crunch', 1), (6, 'crunch', 1);
INSERT INTO allot.job (workload_id) SELECT 1 FROM generate_series(1, 300);
INSERT INTO allot.job (workload_id) SELECT 3 FROM generate_series(1, 5);
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES
    (1, 'Linux', 8, 1e9), (2, 'Linux', 8, 1e9), (3, 'Linux', 4, 1e9),
    (4, 'Linux', 4, 1e9), (5, 'Linux', 4, 1e9), (6, 'Linux', 4, 1e9), (7, 'Linux', 1, 1e9);

-- attempt(sql): run sql and undo it whatever happens; returns its SQLSTATE,
-- or 'ALLOK' when it succeeded (so that a loop of attacks that succeed on an
-- older allot does not wreck the rest of this file).
CREATE FUNCTION pg_temp.attempt(sql text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    BEGIN
        EXECUTE sql;
        RAISE SQLSTATE 'ALLOK';
    EXCEPTION WHEN OTHERS THEN
        RETURN SQLSTATE;
    END;
END
$f$;

-- A compact count of a reply's jobs.
CREATE FUNCTION pg_temp.njobs(reply jsonb) RETURNS int LANGUAGE sql AS $f$
    SELECT jsonb_array_length(reply -> 'jobs')
$f$;

\ir lib/state.sql
\ir lib/plant.sql
CREATE FUNCTION pg_temp.snap() RETURNS void LANGUAGE sql AS $f$
    UPDATE snapshot SET state = pg_temp.allot_state()
$f$;

-- ---------------------------------------------------------------------------
-- A.  The catalog.
SELECT isnt_empty($$SELECT name FROM pg_settings WHERE name LIKE 'allot.%'$$,
                  'allot''s library is loaded: its settings are defined');
SELECT is_empty($$SELECT name FROM pg_settings WHERE name LIKE 'allot.%' AND context <> 'superuser'$$,
                'every allot.* setting is operator-only (PGC_SUSET)');
SELECT is_empty($$SELECT name FROM pg_settings WHERE name LIKE 'allot.%'
                     AND NOT has_parameter_privilege('allot_admin', name, 'SET')$$,
                'allot_admin may SET every allot.* setting (GRANT SET ON PARAMETER)');
SELECT is_empty($$SELECT name FROM pg_settings WHERE name LIKE 'allot.%'
                     AND has_parameter_privilege('allot_web', name, 'SET')$$,
                'allot_web may SET no allot.* setting');
SELECT is_empty($$
    SELECT r.rolname, d.classid::regclass, d.objid FROM pg_shdepend d JOIN pg_roles r ON r.oid = d.refobjid
     WHERE r.rolname IN ('allot_web', 'allot_admin', 'allot_monitor') AND d.deptype = 'o'
       AND d.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())$$,
    'allot_web, allot_admin and allot_monitor own no object in this database');
SELECT is_empty($$
    SELECT t.tgname FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
      JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.relnamespace = 'allot'::regnamespace AND NOT t.tgisinternal
       AND (p.prosecdef OR p.proowner <> (SELECT extowner FROM pg_extension WHERE extname = 'allot'))$$,
    'every trigger on allot''s tables runs as its caller, with a function of the extension''s owner');
SELECT is_empty($$
    SELECT p.oid::regprocedure FROM pg_proc p
     WHERE p.pronamespace = 'allot'::regnamespace AND p.prosecdef
       AND p.proowner IS DISTINCT FROM (SELECT oid FROM pg_roles WHERE rolname = 'allot_owner')$$,
    'every SECURITY DEFINER function belongs to allot_owner');
SELECT is((SELECT count(*)::int FROM pg_roles r
             JOIN pg_auth_members m ON m.roleid = r.oid WHERE r.rolname = 'allot_owner'),
          0, 'allot_owner has no members');

-- ---------------------------------------------------------------------------
-- B.  The web login sets farm policy (issue 10, item 1).
SET SESSION AUTHORIZATION allot_att_web;
-- Every allot.* setting, to the value it has, in each way a session can.
SELECT set_eq(format($$SELECT name FROM pg_settings WHERE name LIKE 'allot.%%'
                         AND pg_temp.attempt(format(%L, name, setting)) = '42501'$$, statement),
              $$SELECT name FROM pg_settings WHERE name LIKE 'allot.%'$$,
              format('web: %s of every allot.* setting is refused (42501)', how))
  FROM (VALUES ('SET %s = %L', 'SET'), ('SET LOCAL %s = %L', 'SET LOCAL'),
               ('SELECT set_config(%L, %L, false)', 'set_config()'),
               ('ALTER ROLE CURRENT_USER SET %s = %L', 'ALTER ROLE CURRENT_USER SET')) AS t(statement, how);
-- The issue's own attack, statement by statement.
SELECT throws_ok($$SET allot.daily_quota = 1000000$$, '42501',
                 'permission denied to set parameter "allot.daily_quota"',
                 'web: SET allot.daily_quota = 1000000 is refused');
SELECT throws_ok($$SET allot.max_jobs_per_request = 100000$$, '42501',
                 'permission denied to set parameter "allot.max_jobs_per_request"',
                 'web: SET allot.max_jobs_per_request = 100000 is refused');
-- A function's SET clause is applied with the caller's rights.
SELECT throws_ok($$CREATE FUNCTION pg_temp.sneaky() RETURNS int LANGUAGE sql
                       SET allot.daily_quota = 1000000 AS 'SELECT 1'$$, '42501', NULL,
                 'web: a function with SET allot.daily_quota in its definition is refused');
SELECT throws_ok($$SET ROLE allot_admin$$, '42501', NULL, 'web: SET ROLE allot_admin is refused');
SELECT throws_ok($$SET ROLE allot_owner$$, '42501', NULL, 'web: SET ROLE allot_owner is refused');
SELECT throws_ok($$SET session_replication_role = replica$$, '42501', NULL,
                 'web: turning allot''s triggers off (session_replication_role) is refused');
-- Whatever it tried, the policy is the operator's.
SELECT is(current_setting('allot.daily_quota') || ' ' || current_setting('allot.max_jobs_per_request'),
          '100 1000', 'web: daily_quota and max_jobs_per_request are still the operator''s');
SELECT is(pg_temp.njobs(allot.request_work(1, '{"resources": {"cpu": {"req_instances": 100000}}, "exclude": [3]}')),
          8, 'web: 100,000 instances asked for an 8-thread host count as its 8: 8 jobs');
SELECT is(pg_temp.njobs(allot.request_work(1, '{"resources": {"cpu": {"req_secs": 1e9}}, "exclude": [3]}')),
          92, 'web: 1e9 seconds asked for get the rest of the daily quota, 92 jobs');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT quota FROM allot.host_app_version WHERE host_id = 1 AND app_version_id = 1),
          100, 'the quota stored for the host is the operator''s');
SELECT is((SELECT count(*)::int FROM allot.job WHERE workload_id = 1 AND state = 'unsent'),
          200, 'the other 200 jobs are left for other hosts');

-- Under fairness = recent, an assignment is worth threads x assignment_ttl,
-- and REC decays with rec_half_life: a web login that could set them would
-- write months of credit, or erase the farm's history.  Workload 2 had a
-- REC of 1e6 an hour ago.
SET allot.fairness = recent;
INSERT INTO allot.workload_credit (workload_id, resource, rec, rec_at)
VALUES (2, 'cpu', 1e6, now() - interval '1 hour');
SET SESSION AUTHORIZATION allot_att_web;
SELECT throws_ok($$SET allot.assignment_ttl = '365d'$$, '42501', NULL,
                 'web: SET allot.assignment_ttl = ''365d'' is refused');
SELECT throws_ok($$SET allot.rec_half_life = '1s'$$, '42501', NULL,
                 'web: SET allot.rec_half_life = ''1s'' is refused');
SELECT is((SELECT workload_id FROM allot.assign_workload(3)), 2::bigint,
          'web: host 3 is assigned workload 2');
RESET SESSION AUTHORIZATION;
-- 1e6 decayed over one hour of a 10-day half-life, plus 4 threads x 120 s.
SELECT ok(abs(rec - (1e6 * power(2, -3600 / 864000.0) + 4 * 120)) < 0.01,
          format('workload 2''s REC is its history decayed by the operator''s half-life plus one '
                 'assignment''s worth at the operator''s ttl (%s)', rec))
  FROM allot.workload_credit WHERE workload_id = 2 AND resource = 'cpu';
SET SESSION AUTHORIZATION allot_att_web;
SELECT throws_ok($$SET allot.fairness = current$$, '42501', NULL,
                 'web: SET allot.fairness is refused');
RESET SESSION AUTHORIZATION;
RESET allot.fairness;

-- ---------------------------------------------------------------------------
-- C.  The web login moves the clock (issue 10, item 8).
SELECT pg_temp.snap();
SELECT min(id) AS held FROM allot.job WHERE host_id = 1 AND state = 'in_progress' \gset
SET SESSION AUTHORIZATION allot_att_web;
SELECT throws_matching($$SELECT * FROM allot.assign_workload(4, '9999-12-30')$$,
                       '^now must be within 60 seconds of the server''s clock, not 9999-12-30',
                       'web: assign_workload(h, ''9999-12-30'') is refused, naming now');
SELECT throws_ok($$SELECT * FROM allot.assign_workload(4, '9999-12-30')$$, '22023', NULL,
                 'web: assign_workload(h, ''9999-12-30''): 22023');
SELECT throws_ok($$SELECT * FROM allot.assign_workload(4, now() - interval '61 seconds')$$, '22023', NULL,
                 'web: assign_workload 61 s in the past is refused');
SELECT throws_ok($$SELECT allot.heartbeat(3, '9999-12-30')$$, '22023', NULL,
                 'web: heartbeat in year 9999 is refused');
SELECT throws_ok($$SELECT allot.request_work(4, '{"resources": {"cpu": {"req_instances": 1}}}', '9999-12-30')$$,
                 '22023', NULL, 'web: request_work in year 9999 is refused');
SELECT throws_ok($$SELECT allot.request_work(4, '{"resources": {"cpu": {"req_instances": 1}}}', '2000-01-01')$$,
                 '22023', NULL, 'web: request_work in year 2000 is refused');
SELECT throws_ok(format($$SELECT allot.report_job(1, %s, 'success', now => '9999-12-30')$$, :held),
                 '22023', NULL, 'web: report_job in year 9999 is refused');
RESET SESSION AUTHORIZATION;
SELECT pg_temp.unchanged('web: the refused clocks changed nothing');
SET SESSION AUTHORIZATION allot_att_web;
SELECT is(pg_temp.njobs(allot.request_work(4, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [3]}',
                                           now() + interval '30 seconds')),
          1, 'web: a now 30 s ahead of the server''s is accepted');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION allot_att_op;
SELECT is((SELECT workload_id FROM allot.assign_workload(4, '2030-01-01 00:00+00')), 2::bigint,
          'operator: virtual time is allowed (assign_workload in 2030)');
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- D.  The web login sends odd JSON (issue 10, item 9).
SELECT pg_temp.snap();
SET SESSION AUTHORIZATION allot_att_web;
SELECT throws_ok(format('SELECT allot.request_work(4, %L)', request), '22023',
                 format('unknown key "%s" in %s', key, place),
                 format('web: an unknown key in %s is refused, named', place))
  FROM (VALUES ('{"resourcez": {"cpu": {"req_instances": 1}}}', 'resourcez', 'request'),
               ('{"resources": {"cpu": {"req_instance": 1}}}', 'req_instance', 'request.resources.cpu'),
               ('{"buffer": {"min_secs": 60, "max_sec": 600}}', 'max_sec', 'request.buffer'),
               ('{"resources": {"cpu": {"req_instances": 1}}, "app_versions": {"1": {"flops": 1e9}}}',
                'flops', 'request.app_versions.1')) AS t(request, key, place);
SELECT throws_ok(format('SELECT allot.request_work(4, %L)', request), '22023',
                 format('%s must be at most %s, not %s', path, bound, amount),
                 format('web: %s beyond %s is refused', path, bound))
  FROM (VALUES ('{"resources": {"cpu": {"req_secs": 1e11}}}', 'request.resources.cpu.req_secs', '1e+10', '100000000000'),
               ('{"resources": {"cpu": {"req_instances": 1e7}}}', 'request.resources.cpu.req_instances', '1e+06', '10000000'),
               ('{"resources": {"cpu": {"req_instances": 1, "estimated_delay": 1e11}}}',
                'request.resources.cpu.estimated_delay', '1e+10', '100000000000'),
               ('{"work_req_seconds": 1e11}', 'request.work_req_seconds', '1e+10', '100000000000'),
               ('{"buffer": {"min_secs": 1e11}}', 'request.buffer.min_secs', '1e+10', '100000000000'))
       AS t(request, path, bound, amount);
RESET SESSION AUTHORIZATION;
SELECT pg_temp.unchanged('web: the refused requests changed nothing');
SELECT throws_ok($$SELECT * FROM allot.host_queue(1, 1e308, 1e308)$$, '22023', NULL,
                 'host_queue(1, 1e308, 1e308) is refused rather than answering Infinity');
SET SESSION AUTHORIZATION allot_att_web;
SELECT is(pg_temp.njobs(allot.request_work(4, '{"resources": {"cpu": {"req_instances": 0.5}}, "exclude": [3]}')),
          1, 'web: half an instance gets a job');
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- E.  A host takes jobs of workload 3, which has no delay bound, and
-- vanishes (issue 10, item 7).  The operator sets the default bound for the
-- second job.
SET SESSION AUTHORIZATION allot_att_web;
SELECT is(pg_temp.njobs(allot.request_work(2, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [1]}')),
          1, 'web: host 2 takes a job of workload 3');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION allot_att_op;
SELECT lives_ok($$SET allot.default_delay_bound = '1h'$$, 'operator: SET allot.default_delay_bound');
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION allot_att_web;
SELECT is(pg_temp.njobs(allot.request_work(2, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [1]}')),
          1, 'web: host 2 takes another');
RESET SESSION AUTHORIZATION;
-- Back to the default (a setting an older allot does not have: no error).
SELECT set_config(name, reset_val, false) FROM pg_settings WHERE name = 'allot.default_delay_bound';
SELECT results_eq($$SELECT deadline - sent_at FROM allot.job WHERE workload_id = 3 AND host_id = 2 ORDER BY id$$,
                  ARRAY[interval '7 days', interval '1 hour'],
                  'the jobs'' deadlines: 7 days (allot.default_delay_bound''s default), then the operator''s 1 hour');
SET SESSION AUTHORIZATION allot_att_op;
SELECT is((allot.run_transitioner(now() + interval '1 hour 1 second') ->> 'timed_out')::int, 1,
          'operator: an hour later the transitioner times out the second job');
SELECT is((allot.run_transitioner(now() + interval '7 days 1 second') ->> 'timed_out')::int, 1,
          'operator: a week later, the first (workload 1''s jobs are due in 30 days)');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*)::int FROM allot.job WHERE workload_id = 3 AND state = 'unsent'), 5,
          'every job of workload 3 is unsent again');

-- ---------------------------------------------------------------------------
-- F.  The web login's temporary tables named like allot's relations: pg_temp
-- is on allot's pinned search_path (last), so an unqualified name in any of
-- allot's queries would meet them (and fail: they have no such columns).
SET SESSION AUTHORIZATION allot_att_web;
DO $$
DECLARE
    r text;
BEGIN
    FOR r IN SELECT relname FROM pg_class WHERE relnamespace = 'allot'::regnamespace
                AND relkind IN ('r', 'v', 'S', 'p') LOOP
        EXECUTE format('CREATE TEMP TABLE %I (trap int)', r);
    END LOOP;
END
$$;
SELECT is(pg_temp.njobs(allot.request_work(4, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [3]}')),
          1, 'web: request_work reads no temporary table');
SELECT is((SELECT workload_id FROM allot.assign_workload(3)), 2::bigint,
          'web: assign_workload reads no temporary table');
SELECT ok(allot.heartbeat(3), 'web: heartbeat reads no temporary table');
SELECT ok(allot.release_assignment(3), 'web: release_assignment reads no temporary table');
RESET SESSION AUTHORIZATION;
SELECT max(id) AS held4 FROM allot.job WHERE host_id = 4 AND state = 'in_progress' \gset
SET SESSION AUTHORIZATION allot_att_web;
SELECT is(allot.report_job(4, :held4, 'success', 1, 3600) ->> 'state', 'done',
          'web: report_job reads no temporary table');
DO $$
DECLARE
    r text;
BEGIN
    FOR r IN SELECT c.relname FROM pg_class c
              WHERE c.relnamespace = pg_my_temp_schema() AND c.relkind = 'r'
                AND c.relname IN (SELECT relname FROM pg_class WHERE relnamespace = 'allot'::regnamespace) LOOP
        EXECUTE format('DROP TABLE pg_temp.%I', r);
    END LOOP;
END
$$;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- G.  The operator login (issue 10, item 3).  The issue's attack: make a
-- trigger function run as its caller with the operator's search_path.
SET SESSION AUTHORIZATION allot_att_op;
-- What it plants (lib/plant.sql): operators and functions by the names and
-- argument types allot's queries use, each of which records its call and,
-- when a superuser calls it, makes the operator a superuser.
SELECT pg_temp.plant_recorder('allot_att_opsch');
SELECT pg_temp.plant_operator('allot_att_opsch', op, l, r, ret) FROM (VALUES
    ('=', 'text', 'text', 'boolean'), ('=', 'bigint', 'bigint', 'boolean'),
    ('=', 'integer', 'integer', 'boolean'), ('=', 'bigint', 'integer', 'boolean'),
    ('<>', 'text', 'text', 'boolean'),
    ('<', 'timestamptz', 'timestamptz', 'boolean'), ('<=', 'timestamptz', 'timestamptz', 'boolean'),
    ('>', 'double precision', 'double precision', 'boolean'),
    ('<', 'double precision', 'double precision', 'boolean'),
    ('+', 'bigint', 'bigint', 'bigint'), ('+', 'numeric', 'numeric', 'numeric'),
    ('+', 'double precision', 'double precision', 'double precision'),
    ('+', 'timestamptz', 'interval', 'timestamptz'),
    ('-', 'timestamptz', 'timestamptz', 'interval'),
    ('-', 'double precision', 'double precision', 'double precision'),
    ('*', 'double precision', 'double precision', 'double precision'),
    ('/', 'double precision', 'double precision', 'double precision'),
    ('||', 'text', 'text', 'text')) AS t(op, l, r, ret);
CREATE FUNCTION allot_att_opsch.neg(a integer) RETURNS integer
    LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
BEGIN PERFORM allot_att_opsch.record('-(integer)'); RETURN OPERATOR(pg_catalog.-) a; END $f$;
CREATE OPERATOR allot_att_opsch.- (RIGHTARG = integer, FUNCTION = allot_att_opsch.neg);
CREATE FUNCTION allot_att_opsch.now() RETURNS timestamptz
    LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
BEGIN PERFORM allot_att_opsch.record('now()'); RETURN pg_catalog.now(); END $f$;
CREATE FUNCTION allot_att_opsch.unnest(a anyarray) RETURNS SETOF anyelement
    LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
BEGIN PERFORM allot_att_opsch.record('unnest(anyarray)'); RETURN QUERY SELECT pg_catalog.unnest(a); END $f$;
CREATE FUNCTION allot_att_opsch.power(a double precision, b double precision) RETURNS double precision
    LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
BEGIN PERFORM allot_att_opsch.record('power(double precision, double precision)'); RETURN pg_catalog.power(a, b); END $f$;
CREATE FUNCTION allot_att_opsch.round(a double precision) RETURNS double precision
    LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
BEGIN PERFORM allot_att_opsch.record('round(double precision)'); RETURN pg_catalog.round(a); END $f$;
CREATE FUNCTION allot_att_opsch.evil_trigger() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
BEGIN PERFORM allot_att_opsch.record('trigger'); RETURN NEW; END $f$;
CREATE FUNCTION allot_att_opsch.evil_text(j allot.job) RETURNS text
    LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
BEGIN PERFORM allot_att_opsch.record('cast'); RETURN 'x'; END $f$;

-- The issue's attack.
SELECT throws_ok($$ALTER FUNCTION allot.job_usage_trigger() SECURITY INVOKER$$, '42501',
                 'must be owner of function allot.job_usage_trigger',
                 'operator: ALTER FUNCTION allot.job_usage_trigger() SECURITY INVOKER is refused');
SELECT throws_ok($$ALTER FUNCTION allot.job_usage_trigger() SET search_path = allot_att_opsch, pg_catalog$$, '42501',
                 'must be owner of function allot.job_usage_trigger',
                 'operator: ALTER FUNCTION allot.job_usage_trigger() SET search_path is refused');
SELECT throws_ok($$CREATE OR REPLACE FUNCTION allot.job_usage_trigger() RETURNS trigger
                       LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END'$$, '42501', NULL,
                 'operator: CREATE OR REPLACE FUNCTION allot.job_usage_trigger() is refused');
-- Every function of allot, every kind of change.
SELECT is_empty($$
    SELECT format('%s: %s', p.oid::regprocedure, v) FROM pg_proc p,
           unnest(ARRAY['ALTER FUNCTION %s SECURITY INVOKER', 'ALTER FUNCTION %s SECURITY DEFINER',
                        'ALTER FUNCTION %s SET search_path = allot_att_opsch, pg_catalog',
                        'ALTER FUNCTION %s RESET ALL', 'ALTER FUNCTION %s OWNER TO allot_att_op',
                        'ALTER FUNCTION %s RENAME TO evil', 'ALTER FUNCTION %s SET SCHEMA allot_att_opsch',
                        'ALTER FUNCTION %s LEAKPROOF', 'COMMENT ON FUNCTION %s IS ''evil''',
                        'DROP FUNCTION %s CASCADE']) v
     WHERE p.pronamespace = 'allot'::regnamespace
       AND pg_temp.attempt(format(v, p.oid::regprocedure)) <> '42501'$$,
    'operator: no allot function can be altered, re-owned, renamed, moved or dropped');
-- Every table of allot.
SELECT is_empty($$
    SELECT format('%s: %s', c.oid::regclass, v) FROM pg_class c,
           unnest(ARRAY['CREATE TRIGGER evil BEFORE INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION allot_att_opsch.evil_trigger()',
                        'CREATE RULE evil AS ON INSERT TO %s DO ALSO SELECT allot_att_opsch.now()',
                        'CREATE POLICY evil ON %s USING (allot_att_opsch.now() IS NOT NULL)',
                        'ALTER TABLE %s ENABLE ROW LEVEL SECURITY', 'ALTER TABLE %s DISABLE TRIGGER ALL',
                        'ALTER TABLE %s ADD COLUMN evil text DEFAULT allot_att_opsch.now()',
                        'ALTER TABLE %s OWNER TO allot_att_op', 'ALTER TABLE %s SET SCHEMA allot_att_opsch',
                        'CREATE INDEX ON %s ((allot_att_opsch.now()))', 'TRUNCATE %s CASCADE',
                        'CREATE STATISTICS allot_att_opsch.evil ON (allot_att_opsch.now() IS NULL), (true) FROM %s',
                        'COMMENT ON TABLE %s IS ''evil''', 'DROP TABLE %s CASCADE']) v
     WHERE c.relnamespace = 'allot'::regnamespace AND c.relkind IN ('r', 'p')
       AND pg_temp.attempt(format(v, c.oid::regclass)) <> '42501'$$,
    'operator: no trigger, rule, policy, index, column or owner can be put on an allot table, none truncated or dropped');
-- Every view of allot (the status views).
SELECT is_empty($$
    SELECT format('%s: %s', c.oid::regclass, v) FROM pg_class c,
           unnest(ARRAY['CREATE OR REPLACE VIEW %s AS SELECT allot_att_opsch.now()',
                        'CREATE RULE evil AS ON INSERT TO %s DO INSTEAD SELECT allot_att_opsch.now()',
                        'CREATE TRIGGER evil INSTEAD OF INSERT ON %s FOR EACH ROW EXECUTE FUNCTION allot_att_opsch.evil_trigger()',
                        'ALTER VIEW %s OWNER TO allot_att_op', 'ALTER VIEW %s SET (security_invoker = true)',
                        'ALTER VIEW %s RENAME TO evil', 'DROP VIEW %s CASCADE']) v
     WHERE c.relnamespace = 'allot'::regnamespace AND c.relkind = 'v'
       AND pg_temp.attempt(format(v, c.oid::regclass)) <> '42501'$$,
    'operator: no allot view can be replaced, re-owned, renamed or dropped, nor given rules or triggers');
SELECT is_empty($$
    SELECT v FROM unnest(ARRAY[
        'CREATE TABLE allot.evil (x int)',
        'CREATE FUNCTION allot.evil() RETURNS int LANGUAGE sql AS ''SELECT 1''',
        'CREATE OPERATOR allot.= (LEFTARG = text, RIGHTARG = text, FUNCTION = pg_catalog.texteq)',
        'CREATE VIEW allot.evil AS SELECT 1',
        'ALTER SCHEMA allot RENAME TO evil', 'ALTER SCHEMA allot OWNER TO allot_att_op',
        'ALTER EXTENSION allot ADD FUNCTION allot_att_opsch.now()', 'ALTER EXTENSION allot UPDATE',
        'DROP EXTENSION allot CASCADE',
        'CREATE CAST (allot.job AS text) WITH FUNCTION allot_att_opsch.evil_text(allot.job) AS IMPLICIT',
        'CREATE CAST (bigint AS text) WITH INOUT AS IMPLICIT',
        'GRANT allot_owner TO allot_att_op', 'SET ROLE allot_owner',
        'GRANT allot_admin TO allot_att_web', 'ALTER ROLE allot_admin SUPERUSER',
        'ALTER ROLE allot_owner LOGIN', 'SET session_replication_role = replica']) v
     WHERE pg_temp.attempt(v) <> '42501'$$,
    'operator: nothing can be created in schema allot, no extension or cast changed, no role or superuser right taken');
-- Rights it has itself it cannot pass on: a WARNING, and nothing is granted
-- (an ERROR where it does not hold the right at all).
SET client_min_messages = error;
DO $$
BEGIN
    BEGIN
        GRANT SET ON PARAMETER allot.fairness TO allot_att_web;
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
    GRANT EXECUTE ON FUNCTION allot.run_transitioner(timestamptz) TO allot_att_web;
    GRANT SELECT ON allot.host TO allot_att_web;
END
$$;
RESET client_min_messages;
RESET SESSION AUTHORIZATION;
SELECT ok(NOT has_parameter_privilege('allot_att_web', 'allot.fairness', 'SET')
          AND NOT has_function_privilege('allot_att_web', 'allot.run_transitioner(timestamptz)', 'EXECUTE')
          AND NOT has_table_privilege('allot_att_web', 'allot.host', 'SELECT'),
          'operator: it cannot grant the web login its own rights');
SELECT is((SELECT rolsuper FROM pg_roles WHERE rolname = 'allot_att_op'), false,
          'the operator is not a superuser (yet)');

-- ---------------------------------------------------------------------------
-- H.  A superuser (a pg_cron job, an operator's script) works with the
-- operator's schema first in its search_path, before pg_catalog: a planted
-- operator then wins even over the built-in one of the same argument types.
-- Nothing here may use a planted operator itself: timestamps are computed
-- first, and conditions compare with OPERATOR(pg_catalog.=).
SELECT now() + interval '31 days' AS later, now() + interval '32 days' AS latest \gset
SET SESSION AUTHORIZATION allot_att_op;
SET allot.fairness = debt;    -- the operator's policy: folds run too
RESET SESSION AUTHORIZATION;
SET search_path = allot_att_opsch, pg_catalog, public;
INSERT INTO allot.job (workload_id) VALUES (1), (1), (1), (1);
SELECT allot.request_work(5, '{"resources": {"cpu": {"req_instances": 2}}, "exclude": [3]}'::jsonb) ->> 'jobs' AS h_reply \gset
SELECT (allot.request_work(6, '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [3]}'::jsonb) -> 'jobs' -> 0 ->> 'job_id') AS h_job \gset
SELECT allot.report_job(6, :h_job, 'success', 1, 3600) ->> 'state' AS h_report \gset
SELECT allot.validate_job(:h_job, true) AS h_valid \gset
UPDATE allot.job SET predicted_app_units = 2 WHERE id OPERATOR(pg_catalog.=) (SELECT max(id) FROM allot.job);
SELECT workload_id AS h_assigned FROM allot.assign_workload(5) \gset
SELECT allot.heartbeat(5) AS h_beat \gset
SELECT count(*) AS h_explained FROM allot.explain_assignment(5) \gset
SELECT count(*) AS h_estimates FROM allot.estimate_job(5, (SELECT max(id) FROM allot.job)) \gset
SELECT count(*) AS h_queue FROM allot.host_queue(5, 3600, 86400) \gset
SELECT allot.release_assignment(5) AS h_released \gset
SELECT count(*) AS h_due FROM allot.job
 WHERE state OPERATOR(pg_catalog.=) 'in_progress' AND deadline OPERATOR(pg_catalog.<) :'later'::timestamptz \gset
SELECT allot.run_transitioner(:'later'::timestamptz) ->> 'timed_out' AS h_timed_out \gset
SELECT allot.fold_debts(:'latest'::timestamptz) AS h_folded \gset
SELECT allot.expire_assignments(:'latest'::timestamptz) AS h_expired \gset
SELECT count(*) AS h_fairness FROM allot.fairness_state(:'latest'::timestamptz) \gset
SELECT allot.percentile_disc('{5,1,4,2,3}'::float8[], 0.05) AS h_percentile \gset
DELETE FROM allot.assignment WHERE host_id OPERATOR(pg_catalog.=) 4;
DELETE FROM allot.job WHERE id OPERATOR(pg_catalog.=) (SELECT max(id) FROM allot.job);
DELETE FROM allot.workload WHERE id OPERATOR(pg_catalog.=) 6;
DELETE FROM allot.host WHERE id OPERATOR(pg_catalog.=) 7;
SELECT count(*) AS h_invariants FROM allot.check_invariants() \gset
RESET search_path;
RESET allot.fairness;

SELECT is(:'h_report' || ' ' || :'h_valid' || ' ' || :'h_assigned' || ' ' || :'h_released',
          'done t 2 t', 'superuser: the calls worked (report, validation, assignment, release)');
SELECT is(:'h_timed_out'::int, :'h_due'::int, 'superuser: the transitioner timed out every job past its deadline');
SELECT cmp_ok(:'h_due'::int, '>', 0, 'superuser: ... of which there were some');
SELECT is(:'h_invariants'::int, 0, 'check_invariants is empty');
SELECT is_empty($$SELECT what, caller FROM allot_att_opsch.calls$$,
                'none of the operator''s planted operators and functions ran');
SELECT is((SELECT rolsuper FROM pg_roles WHERE rolname = 'allot_att_op'), false,
          'the operator did not become a superuser');

-- Control: the planted objects are live.  Called by the superuser with the
-- same search_path, they run, record and escalate.
SET search_path = allot_att_opsch, pg_catalog, public;
SELECT 'a'::text = 'a'::text AS eq, now() IS NULL AS nothing, (SELECT count(*) FROM unnest('{1,2}'::int[])) AS n \gset
RESET search_path;
SELECT set_eq($$SELECT what FROM allot_att_opsch.calls$$,
              ARRAY['=(text, text)', 'now()', 'unnest(anyarray)'],
              'control: called directly, the planted =, now() and unnest() run');
SELECT is((SELECT rolsuper FROM pg_roles WHERE rolname = 'allot_att_op'), true,
          'control: ... and make the operator a superuser');

SELECT * FROM finish();
ROLLBACK;
