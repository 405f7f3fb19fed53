-- Shared by the pgTAP files that check "nothing changed" (\ir lib/state.sql
-- right after their fixture): every row of every table in schema allot, as
-- text, found through the catalog so that a table added later is covered
-- too; a snapshot of it now; and unchanged(description), a test that the
-- state still equals the snapshot.
CREATE FUNCTION pg_temp.allot_state() RETURNS text LANGUAGE plpgsql STABLE AS $f$
DECLARE
    t regclass;
    rows_ text;
    acc text := '';
BEGIN
    FOR t IN SELECT c.oid FROM pg_class c
              WHERE c.relnamespace = 'allot'::regnamespace AND c.relkind IN ('r', 'p')
              ORDER BY c.relname LOOP
        EXECUTE format('SELECT coalesce(string_agg(x::text, '' '' ORDER BY x::text), '''') FROM %s x', t)
           INTO rows_;
        acc := acc || t::text || ': ' || rows_ || E'\n';
    END LOOP;
    RETURN acc;
END
$f$;
CREATE TEMP TABLE snapshot ON COMMIT DROP AS SELECT pg_temp.allot_state() AS state;
CREATE FUNCTION pg_temp.unchanged(description text) RETURNS text LANGUAGE sql AS $f$
    SELECT is(pg_temp.allot_state(), (SELECT state FROM snapshot), description)
$f$;
