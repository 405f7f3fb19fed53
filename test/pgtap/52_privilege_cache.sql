-- assign_workload reads and writes its rows without the executor, making the
-- executor's privilege checks itself (as allot_owner, the function's owner),
-- and remembers what they found (src/table_read.c, allot_table_privilege)
-- until a table's or a role's privileges change.  Each change below is
-- heard of by the very next request of the same session: a remembered
-- answer that outlived it would let that request through.
BEGIN;
SELECT plan(9);
SET LOCAL allot.assignment_ttl = '1d';

INSERT INTO allot.workload (id, engine) VALUES (1, 'E');
INSERT INTO allot.host (id, threads) VALUES (1, 4);
SELECT is((SELECT count(*) FROM allot.assign_workload(1, '2026-01-01 00:00:00+00')), 1::bigint,
          'a first request');
SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:10+00')), 1::bigint,
          'a second request, its checks now remembered');

-- A REVOKE on a table the request reads.  (allot.host: one on
-- allot.assignment also makes the request read the watch list again
-- through SQL, which would refuse it whatever the direct read remembered.)
REVOKE SELECT ON allot.host FROM allot_owner;
SELECT throws_ok($$SELECT * FROM allot.assign_workload(1, '2026-01-01 00:00:20+00')$$, '42501', NULL,
                 'SELECT on allot.host revoked: the next request is refused');
GRANT SELECT ON allot.host TO allot_owner;
SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:30+00')), 1::bigint,
          'granted again: served');

-- A privilege held through a role, and the membership revoked.
CREATE ROLE allot_test_host_readers NOLOGIN;
GRANT SELECT ON allot.host TO allot_test_host_readers;
REVOKE SELECT ON allot.host FROM allot_owner;
GRANT allot_test_host_readers TO allot_owner;
SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:00:40+00')), 1::bigint,
          'SELECT on allot.host through a role allot_owner is a member of');
REVOKE allot_test_host_readers FROM allot_owner;
SELECT throws_ok($$SELECT * FROM allot.assign_workload(1, '2026-01-01 00:00:50+00')$$, '42501', NULL,
                 'the membership revoked: the next request is refused');
GRANT SELECT ON allot.host TO allot_owner;

-- The write's check: UPDATE on allot.assignment revoked.  The direct write
-- declines, and the UPDATE it leaves the work to refuses.
SELECT is((SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:01:00+00')), 1::bigint,
          'a request that writes seen_at alone, its write''s check remembered');
REVOKE UPDATE ON allot.assignment FROM allot_owner;
SELECT throws_ok($$SELECT * FROM allot.assign_workload(1, '2026-01-01 00:01:10+00')$$, '42501', NULL,
                 'UPDATE on allot.assignment revoked: the next request is refused');
GRANT UPDATE ON allot.assignment TO allot_owner;
SELECT results_eq($$SELECT seen_at FROM allot.assignment WHERE host_id = 1$$,
                  $$VALUES ('2026-01-01 00:01:00+00'::timestamptz)$$,
                  'the refused requests wrote nothing');

SELECT * FROM finish();
ROLLBACK;
