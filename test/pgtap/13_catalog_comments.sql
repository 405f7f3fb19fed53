-- Every table, view and column of schema allot has a comment, so that
-- psql's \d+ explains the schema.  The check reads the catalog, so a table
-- or column added by any later release is held to it too.
--
-- The harness runs this file in a fresh database with pgtap and allot
-- created (installed through every update script).
BEGIN;
SELECT plan(4);

-- Relations and columns of schema allot without a comment, as
-- 'table' or 'table.column', sorted.
CREATE FUNCTION pg_temp.uncommented() RETURNS text[] LANGUAGE sql STABLE AS $f$
    SELECT coalesce(array_agg(what ORDER BY what), '{}')
      FROM (SELECT c.relname::text AS what
              FROM pg_class c
             WHERE c.relnamespace = 'allot'::regnamespace
               AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
               AND coalesce(obj_description(c.oid, 'pg_class'), '') = ''
            UNION ALL
            SELECT c.relname || '.' || a.attname
              FROM pg_class c
              JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
             WHERE c.relnamespace = 'allot'::regnamespace
               AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
               AND coalesce(col_description(c.oid, a.attnum), '') = '') missing
$f$;

SELECT cmp_ok((SELECT count(*) FROM pg_class
                WHERE relnamespace = 'allot'::regnamespace AND relkind IN ('r', 'p')),
              '>=', 15::bigint, 'the tables of every release are there to check');
SELECT is(pg_temp.uncommented(), '{}'::text[],
          'every table, view and column of schema allot has a comment');

-- The check sees what a later release might forget.
CREATE TABLE allot.forgotten (id int);
ALTER TABLE allot.job ADD COLUMN forgotten int;
SELECT is(pg_temp.uncommented(), '{forgotten,forgotten.id,job.forgotten}'::text[],
          'an uncommented table, its column and a new column of an old table are found');
COMMENT ON TABLE allot.forgotten IS 'probe';
COMMENT ON COLUMN allot.forgotten.id IS 'probe';
COMMENT ON COLUMN allot.job.forgotten IS 'probe';
SELECT is(pg_temp.uncommented(), '{}'::text[], 'and commenting them satisfies it');

SELECT * FROM finish();
ROLLBACK;
