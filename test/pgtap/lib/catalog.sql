-- Shared by the pgTAP files that check an update (\ir lib/catalog.sql):
-- pg_temp.catalog(), what schema allot holds, as text: relations with
-- their columns, types, comments, grants and view definitions; triggers;
-- functions with their grants and settings; grants on allot's settings; the
-- tables pg_dump keeps.  An update whose schema equals CREATE EXTENSION's
-- gives the same rows.
CREATE FUNCTION pg_temp.catalog() RETURNS SETOF text LANGUAGE sql STABLE AS $f$
    SELECT format('%s %s %s %s %s', c.relname, c.relkind, c.relacl, obj_description(c.oid, 'pg_class'),
                  CASE WHEN c.relkind = 'v' THEN pg_get_viewdef(c.oid) END)
      FROM pg_class c WHERE c.relnamespace = 'allot'::regnamespace
    UNION ALL
    SELECT format('%s.%s %s %s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                  a.attnotnull, pg_get_expr(d.adbin, d.adrelid), col_description(c.oid, a.attnum))
      FROM pg_class c
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
     WHERE c.relnamespace = 'allot'::regnamespace
    UNION ALL
    SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.relnamespace = 'allot'::regnamespace AND NOT t.tgisinternal
    UNION ALL
    SELECT format('%s %s %s %s %s', p.oid::regprocedure, p.proacl, p.proconfig, p.prosecdef,
                  p.proowner::regrole)
      FROM pg_proc p WHERE p.pronamespace = 'allot'::regnamespace
    UNION ALL
    SELECT format('%s %s', a.parname, a.paracl) FROM pg_parameter_acl a WHERE a.parname LIKE 'allot.%'
    UNION ALL
    SELECT format('dumped: %s', e.extconfig::regclass[]) FROM pg_extension e WHERE e.extname = 'allot'
$f$;
