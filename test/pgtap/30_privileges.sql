-- The privilege model (docs/privileges.md): a web role that can only call
-- the five request functions, an admin role that manages the farm, and
-- nothing for PUBLIC.  Run as a superuser in a fresh database with allot
-- installed; the login roles are created here and dropped by the rollback
-- (roles are cluster-wide, so they get names no other test uses).
BEGIN;
SELECT plan(50);

CREATE ROLE allot_test_web LOGIN IN ROLE allot_web;
CREATE ROLE allot_test_admin LOGIN IN ROLE allot_admin;
CREATE ROLE allot_test_nobody LOGIN;

-- The group roles exist and cannot log in.
SELECT is((SELECT rolcanlogin FROM pg_roles WHERE rolname = 'allot_web'), false,
          'allot_web is a NOLOGIN group role');
SELECT is((SELECT rolcanlogin FROM pg_roles WHERE rolname = 'allot_admin'), false,
          'allot_admin is a NOLOGIN group role');

-- Every SECURITY DEFINER function pins search_path and is owned by
-- allot_owner: a NOLOGIN role with no members, so no operator can alter
-- what runs with its rights (and it is not a superuser).
-- (assign_workload pins it in C before its first statement, from 0.7.0:
-- the hostile operators below do not reach it.)
SELECT set_eq(
    $$SELECT proname::text FROM pg_proc
       WHERE pronamespace = 'allot'::regnamespace AND prosecdef
         AND NOT coalesce(proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false)$$,
    ARRAY['assign_workload'],
    'every SECURITY DEFINER function pins search_path = pg_catalog, pg_temp, assign_workload in C');
SELECT is((SELECT count(*)::int FROM pg_proc
            WHERE pronamespace = 'allot'::regnamespace AND prosecdef
              AND proowner <> 'allot_owner'::regrole),
          0, 'every SECURITY DEFINER function runs as allot_owner');
SELECT set_eq(
    $$SELECT proname::text FROM pg_proc WHERE pronamespace = 'allot'::regnamespace AND prosecdef$$,
    ARRAY['assign_workload', 'heartbeat', 'release_assignment', 'request_work', 'report_job',
          'register_host', 'host_credit', 'host_jobs'],
    'the SECURITY DEFINER functions are the request functions, and no trigger');
SELECT is((SELECT rolcanlogin OR rolsuper OR rolcreaterole OR rolbypassrls
             FROM pg_roles WHERE rolname = 'allot_owner'), false,
          'allot_owner cannot log in and has no special attribute');
SELECT is((SELECT count(*)::int FROM pg_auth_members WHERE roleid = 'allot_owner'::regrole),
          0, 'no role is a member of allot_owner');
-- Functions that run queries pin it too (SQL functions left inlinable are
-- only called from pinned ones).
-- Three C functions pin it themselves (0.7.0): assign_workload and the
-- assignment usage trigger before their first statement, the usage signal
-- runs none.
SELECT set_eq(
    $$SELECT proname::text FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
       WHERE pronamespace = 'allot'::regnamespace AND l.lanname IN ('c', 'plpgsql')
         AND proconfig IS NULL$$,
    ARRAY['assign_workload', 'assignment_usage_trigger', 'usage_signal_trigger'],
    'every C and PL/pgSQL function pins search_path, three of them in C');

-- PUBLIC has nothing.
SELECT is((SELECT count(*)::int FROM pg_proc
            WHERE pronamespace = 'allot'::regnamespace
              AND has_function_privilege('allot_test_nobody', oid, 'EXECUTE')),
          0, 'a role without allot''s roles can execute no allot function');
SELECT is((SELECT count(*)::int FROM pg_class
            WHERE relnamespace = 'allot'::regnamespace AND relkind = 'r'
              AND has_table_privilege('allot_test_nobody', oid, 'SELECT')),
          0, 'a role without allot''s roles can read no allot table');

-- The web role: exactly the nine request functions (five that serve
-- hosts, three with which a scheduler registers hosts, reads their credit
-- and lists the jobs each has, one with which a front end checks the names
-- it shows), no table.
SELECT set_eq(
    $$SELECT p.proname::text FROM pg_proc p
       WHERE p.pronamespace = 'allot'::regnamespace
         AND has_function_privilege('allot_test_web', p.oid, 'EXECUTE')$$,
    ARRAY['assign_workload', 'heartbeat', 'release_assignment', 'request_work', 'report_job',
          'register_host', 'host_credit', 'host_jobs', 'check_name'],
    'allot_web can execute the nine request functions and no other');
SELECT is((SELECT count(*)::int FROM pg_class
            WHERE relnamespace = 'allot'::regnamespace AND relkind IN ('r', 'S', 'v')
              AND (has_table_privilege('allot_test_web', oid, 'SELECT')
                   OR has_table_privilege('allot_test_web', oid, 'INSERT')
                   OR has_table_privilege('allot_test_web', oid, 'UPDATE')
                   OR has_table_privilege('allot_test_web', oid, 'DELETE'))),
          0, 'allot_web has no privilege on any table or sequence');

-- The admin role: every table's rows, every function.
SELECT is((SELECT count(*)::int FROM pg_class
            WHERE relnamespace = 'allot'::regnamespace AND relkind = 'r'
              AND NOT (has_table_privilege('allot_test_admin', oid, 'SELECT')
                       AND has_table_privilege('allot_test_admin', oid, 'INSERT')
                       AND has_table_privilege('allot_test_admin', oid, 'UPDATE')
                       AND has_table_privilege('allot_test_admin', oid, 'DELETE'))),
          0, 'allot_admin can read and write every table');
SELECT is((SELECT count(*)::int FROM pg_proc
            WHERE pronamespace = 'allot'::regnamespace
              AND NOT has_function_privilege('allot_test_admin', oid, 'EXECUTE')),
          0, 'allot_admin can execute every function');

-- The admin builds a farm through its own rights.
SET ROLE allot_test_admin;
SELECT lives_ok($$
    INSERT INTO allot.workload (id, engine, throughput) VALUES (1, 'E', 1000);
    INSERT INTO allot.app (id, name) VALUES (1, 'a');
    INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
    INSERT INTO allot.workload (id, engine, app_id, delay_bound) VALUES (2, 'J', 1, '2 days');
    INSERT INTO allot.job (workload_id) SELECT 2 FROM generate_series(1, 5);
    INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (1, 'Linux', 4, 1e9), (2, 'Linux', 4, 1e9);
$$, 'allot_admin adds workloads, apps, jobs and hosts');
RESET ROLE;

-- The web role calls the request functions, which work on tables it
-- cannot touch itself (at the server's time: virtual time is the
-- operator's, 32_attacks.sql).
SET ROLE allot_test_web;
SELECT is((SELECT workload_id FROM allot.assign_workload(1)), 1::bigint,
          'allot_web: assign_workload assigns');
SELECT ok(allot.heartbeat(1), 'allot_web: heartbeat');
SELECT is(jsonb_array_length(allot.request_work(2, '{"resources": {"cpu": {"req_instances": 2}}}') -> 'jobs'),
          2, 'allot_web: request_work sends two jobs');
SELECT throws_ok($$SELECT * FROM allot.job$$, '42501', NULL,
                 'allot_web cannot read allot.job');
SELECT throws_ok($$SELECT * FROM allot.host$$, '42501', NULL,
                 'allot_web cannot read allot.host');
SELECT throws_ok($$SELECT * FROM allot.assignment$$, '42501', NULL,
                 'allot_web cannot read other hosts'' assignments');
SELECT throws_ok($$UPDATE allot.job SET state = 'unsent'$$, '42501', NULL,
                 'allot_web cannot write allot.job');
SELECT throws_ok($$INSERT INTO allot.workload (engine) VALUES ('X')$$, '42501', NULL,
                 'allot_web cannot add a workload');
SELECT throws_ok($$DELETE FROM allot.job_usage$$, '42501', NULL,
                 'allot_web cannot touch the counters');
SELECT throws_ok($$SELECT allot.run_transitioner()$$, '42501', NULL,
                 'allot_web cannot run the transitioner');
SELECT throws_ok($$SELECT * FROM allot.explain_assignment(1)$$, '42501', NULL,
                 'allot_web cannot see other workloads'' usage through explain_assignment');
SELECT throws_ok($$SELECT allot.validate_job(1, true)$$, '42501', NULL,
                 'allot_web cannot validate jobs');
SELECT throws_ok($$SELECT * FROM allot.check_invariants()$$, '42501', NULL,
                 'allot_web cannot run check_invariants');
SELECT throws_ok($$SELECT * FROM allot.fairness_state()$$, '42501', NULL,
                 'allot_web cannot read fairness state');
RESET ROLE;

-- A report goes through as the web role; its job is one host 2 holds.
SELECT min(id) AS held, max(id) AS other FROM allot.job
 WHERE host_id = 2 AND state = 'in_progress' \gset
SET ROLE allot_test_web;
SELECT is(allot.report_job(2, :held, 'success', 1, 3600) ->> 'state',
          'done', 'allot_web: report_job takes the host''s own job');
-- Another host's job is refused, and says nothing more about it.
SELECT throws_ok(format($$SELECT allot.report_job(1, %s, 'success')$$, :other), '42501',
                 format('job %s was not sent to host 1', :other),
                 'allot_web: a host cannot report a job another host holds');
RESET ROLE;

-- A pinned search_path: a caller that puts a hostile unnest() before
-- pg_catalog does not reach the queries request_work prepares (its commit
-- statement unnests its arrays).  Unpinned, the call would raise 'hijacked'
-- and abort this test's transaction.
CREATE SCHEMA allot_test_evil;
CREATE FUNCTION allot_test_evil.unnest(anyarray) RETURNS SETOF anyelement
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked'; END $$;
GRANT USAGE ON SCHEMA allot_test_evil TO PUBLIC;   -- like schema public
SET ROLE allot_test_web;
SET search_path = allot_test_evil, pg_catalog;
SELECT pg_catalog.jsonb_typeof(allot.request_work(1, '{"resources": {"cpu": {"req_instances": 1}}}')) AS reply_type \gset
RESET search_path;
RESET ROLE;
SELECT is(:'reply_type'::text, 'object'::text,
          'allot_web: request_work ignores functions the caller puts before pg_catalog');
SELECT throws_ok($$SELECT allot_test_evil.unnest(ARRAY[1])$$, 'P0001', 'hijacked',
                 'the hostile unnest() does raise when called');

-- search_path pinned in C (0.7.0): assign_workload and the assignment usage
-- trigger have no SET clause.  A caller that puts its own = and + on bigint
-- before pg_catalog reaches none of their statements: not a new host's
-- first assignment (its INSERT, the trigger's usage row), not its repeat
-- (no statement), not a DELETE that fires the trigger under the caller's
-- own path.  Unpinned, each would raise 'hijacked'.
CREATE FUNCTION allot_test_evil.hijack_sum(bigint, bigint) RETURNS bigint
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked'; END $$;
CREATE FUNCTION allot_test_evil.hijack_eq(bigint, bigint) RETURNS boolean
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked'; END $$;
CREATE OPERATOR allot_test_evil.+ (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = allot_test_evil.hijack_sum);
CREATE OPERATOR allot_test_evil.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = allot_test_evil.hijack_eq);
INSERT INTO allot.host (id, threads) VALUES (4, 2);
SET ROLE allot_test_web;
SET search_path = allot_test_evil, pg_catalog;
SELECT workload_id AS first_workload, repeated AS first_repeated FROM allot.assign_workload(4) \gset
SELECT repeated AS again_repeated FROM allot.assign_workload(4) \gset
RESET search_path;
RESET ROLE;
SELECT is(:'first_workload'::bigint, 1::bigint,
          'allot_web: assign_workload''s statements ignore operators the caller puts before pg_catalog');
SELECT is(:'again_repeated'::boolean, true,
          'allot_web: and its repeat, which runs none, repeats');
SELECT is((SELECT threads FROM allot.workload_usage WHERE workload_id = 1), 6::bigint,
          'the usage trigger counted the new host');
SET search_path = allot_test_evil, pg_catalog;
DELETE FROM allot.assignment WHERE host_id OPERATOR(pg_catalog.=) 4;
RESET search_path;
SELECT is((SELECT threads FROM allot.workload_usage WHERE workload_id = 1), 4::bigint,
          'the usage trigger, fired under a caller''s hostile path, uses pg_catalog''s operators');
SELECT throws_ok($$SELECT 1::bigint OPERATOR(allot_test_evil.+) 1::bigint$$, 'P0001', 'hijacked',
                 'the hostile + does raise when called');

-- The transitioner and the operator's views, as the admin.
SET ROLE allot_test_admin;
SELECT lives_ok($$SELECT allot.run_transitioner('2026-01-01 02:00')$$,
                'allot_admin runs the transitioner');
SELECT lives_ok($$SET allot.fairness = debt; SELECT allot.run_transitioner('2026-01-01 02:01'); RESET allot.fairness$$,
                'allot_admin folds debts');
SELECT is((SELECT count(*)::int FROM allot.check_invariants()), 0,
          'allot_admin: check_invariants is empty');
SELECT lives_ok($$UPDATE allot.workload SET priority = 2 WHERE id = 2$$,
                'allot_admin changes a workload');
SELECT lives_ok($$INSERT INTO allot.host (id, threads) VALUES (3, 2); DELETE FROM allot.host WHERE id = 3$$,
                'allot_admin adds and removes a host');
RESET ROLE;

-- A scheduler registers a host and reads credit as the web role; it cannot
-- take over a host the operator added.
SET ROLE allot_test_web;
SELECT allot.register_host(NULL, 'volunteer', 'Linux', '{sse2}', 2, 1e9) AS volunteer \gset
SELECT is(allot.register_host(:volunteer, 'volunteer', 'Linux', '{sse2}', 4, 1e9), :volunteer::bigint,
          'allot_web: register_host registers a host and updates it');
SELECT throws_ok($$SELECT allot.register_host(1, 'taken', 'Linux', '{}', 1, 1)$$, '42501',
                 'host 1 was added by the operator: register_host does not change it',
                 'allot_web: register_host cannot change a host the operator added');
SELECT is((SELECT count(*)::int FROM allot.host_credit(ARRAY[1, 2, :volunteer]::bigint[])), 3,
          'allot_web: host_credit reads hosts'' credit');
RESET ROLE;

-- No other role owns or may change allot's objects: tables, views,
-- sequences, types and functions belong to the extension's owner, and the
-- SECURITY DEFINER functions to allot_owner.
SELECT is((SELECT count(*)::int FROM pg_class
            WHERE relnamespace = 'allot'::regnamespace
              AND relowner IN ('allot_web'::regrole, 'allot_admin'::regrole, 'allot_owner'::regrole)),
          0, 'allot''s tables, views and sequences belong to the extension''s owner, not to its roles');
SELECT is((SELECT count(*)::int FROM pg_proc
            WHERE pronamespace = 'allot'::regnamespace
              AND proowner IN ('allot_web'::regrole, 'allot_admin'::regrole)),
          0, 'allot_web and allot_admin own no function');
SELECT is((SELECT count(*)::int FROM pg_type
            WHERE typnamespace = 'allot'::regnamespace
              AND typowner IN ('allot_web'::regrole, 'allot_admin'::regrole, 'allot_owner'::regrole)),
          0, 'allot''s types belong to the extension''s owner');
SELECT ok(NOT has_schema_privilege('allot_web', 'allot', 'CREATE')
          AND NOT has_schema_privilege('allot_admin', 'allot', 'CREATE'),
          'neither role can create objects in schema allot');

SELECT * FROM finish();
ROLLBACK;
