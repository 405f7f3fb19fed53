-- allot's two SQL functions without a SET search_path clause, left so that
-- they can be inlined (job_mflops, decay), run with their caller's
-- search_path when called directly: by an operator's monitoring query or a
-- superuser's script.  Their bodies must therefore name every operator by
-- schema, or an operator (allot_admin) who can write a schema on that path
-- plants an operator with the exact argument types, which PostgreSQL then
-- prefers to pg_catalog's (that needs a cast), and runs code as the caller.
-- allot.job_mflops(double precision) divides by the numeric 1e6 with an
-- unqualified "/": a planted /(double precision, numeric) runs.
--
-- Runs as a superuser in a fresh database with pgtap and allot created.
BEGIN;
SELECT plan(4);

CREATE ROLE allot_att_op LOGIN IN ROLE allot_admin;
CREATE SCHEMA allot_att_opsch AUTHORIZATION allot_att_op;
GRANT USAGE ON SCHEMA allot_att_opsch TO PUBLIC;
\ir lib/plant.sql

SET SESSION AUTHORIZATION allot_att_op;
SELECT pg_temp.plant_recorder('allot_att_opsch');
-- Operators by the argument types the bodies combine, pg_catalog having
-- none of exactly these types.
SELECT pg_temp.plant_operator('allot_att_opsch', op, l, r, ret) FROM (VALUES
    ('/', 'double precision', 'numeric', 'double precision'),
    ('*', 'integer', 'double precision', 'double precision'),
    ('<=', 'double precision', 'integer', 'boolean'),
    ('>=', 'double precision', 'integer', 'boolean'),
    ('<', 'double precision', 'numeric', 'boolean')) AS t(op, l, r, ret);
RESET SESSION AUTHORIZATION;

-- A superuser's usual path, with the operator's schema on it (after
-- pg_catalog, which is searched first).
SET search_path = "$user", public, allot_att_opsch;
SELECT allot.job_mflops(1e9) AS mflops, allot.decay(100, 0, 864000) AS fresh,
       allot.decay(100, 3600, 864000) AS decayed \gset
RESET search_path;
SELECT is(:'mflops'::bigint, 1000::bigint, 'job_mflops(1e9) is 1000');
SELECT is_empty($$SELECT what, caller FROM allot_att_opsch.calls$$,
                'called directly, job_mflops and decay reach no planted operator');
-- Control: the planted operators are live.
SET search_path = "$user", public, allot_att_opsch;
SELECT 1e9::float8 / 1e6 AS q, 1e9::float8 <= 0 AS le \gset
RESET search_path;
SELECT set_eq($$SELECT what FROM allot_att_opsch.calls$$,
              ARRAY['/(double precision, numeric)', '<=(double precision, integer)'],
              'control: the planted / and <= run when an expression of those types meets them');
SELECT is((SELECT rolsuper FROM pg_roles WHERE rolname = 'allot_att_op'), true,
          'control: ... as the caller, a superuser, which makes the operator one');

SELECT * FROM finish();
ROLLBACK;
