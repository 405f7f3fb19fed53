-- Smoke test: proves the pgTAP harness (scripts/test.sh) works.
-- scripts/test.sh runs each file in a fresh database that already has
-- CREATE EXTENSION pgtap; CREATE EXTENSION allot;
BEGIN;
SELECT plan(2);

SELECT has_schema('allot', 'schema allot exists');
SELECT has_function('allot', 'check_invariants', 'allot.check_invariants() exists');

SELECT * FROM finish();
ROLLBACK;
