-- Shared by the pgTAP files in which an operator plants traps (\ir
-- lib/plant.sql, then call these as the operator, under SET SESSION
-- AUTHORIZATION, with a schema it owns):
--   pg_temp.plant_recorder(s)  creates s.calls (what, caller), which everyone
--       may insert into, and s.record(what): it adds a row and, when its
--       caller is a superuser, makes the planting role a superuser (the
--       attack of issue 10, item 3);
--   pg_temp.plant_operator(s, op, l, r, ret)  creates the operator s.op on
--       (l, r) returning ret: it records 'op(l, r)', then answers what
--       pg_catalog's op answers.
-- Each planted function pins its own search_path: it must not meet the
-- traps it sits among.
CREATE FUNCTION pg_temp.plant_recorder(s name) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE format('CREATE TABLE %I.calls (what text, caller name)', s);
    EXECUTE format('GRANT INSERT ON %I.calls TO PUBLIC', s);
    EXECUTE format($sql$CREATE FUNCTION %1$I.record(what text) RETURNS void
                          LANGUAGE plpgsql SET search_path = pg_catalog AS $b$
                          BEGIN
                              INSERT INTO %1$I.calls VALUES (what, current_user);
                              IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
                                  ALTER ROLE %2$I SUPERUSER;
                              END IF;
                          END $b$
                       $sql$, s, current_user);
END
$f$;

CREATE FUNCTION pg_temp.plant_operator(s name, op text, l text, r text, ret text)
    RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
    fn text := format('op_%s', md5(op || l || r));
BEGIN
    EXECUTE format($sql$CREATE FUNCTION %I.%I(a %s, b %s) RETURNS %s
                          LANGUAGE plpgsql SET search_path = pg_catalog AS $b$
                          BEGIN
                              PERFORM %I.record(%L);
                              RETURN a OPERATOR(pg_catalog.%s) b;
                          END $b$
                       $sql$, s, fn, l, r, ret, s, format('%s(%s, %s)', op, l, r), op);
    EXECUTE format('CREATE OPERATOR %I.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %I.%I)',
                   s, op, l, r, s, fn);
END
$f$;
