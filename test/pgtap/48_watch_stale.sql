-- The watch list of lapsing assignments keeps each entry, at the seen_at it
-- was listed with, until the next rebuild or sweep, also after its host
-- asked again.  What a backend knows of the list (0.7.0) counts such an
-- entry at its assignment's seen_at: a request whose cutoff passed the
-- entry but not the host's last request reads the list once, and the
-- requests after it not at all, until something changes the list.  (Before,
-- every request read it again until the next sweep: on a farm of 100,000
-- hosts, a third of a repeat's CPU.)  Counted by this transaction's index
-- scans of the list (pg_stat_get_xact_numscans).
BEGIN;
SELECT plan(8);

CREATE FUNCTION pg_temp.list_scans() RETURNS bigint LANGUAGE sql
    AS $$ SELECT pg_stat_get_xact_numscans('allot.assignment_watch_seen_idx'::regclass) $$;

INSERT INTO allot.workload (id, engine) VALUES (1, 'E');
INSERT INTO allot.host (id, threads) VALUES (1, 4), (2, 4), (3, 4);

-- Hosts 1 and 2 on workload 1 at 00:00:00.  Host 3 asks at 00:01:50: its
-- cutoff (23:59:50) passes the list's horizon, so it rebuilds the list,
-- which then watches up to 00:00:20 and holds hosts 1 and 2.
SELECT is((SELECT count(*)::int FROM generate_series(1, 2) h,
             LATERAL allot.assign_workload(h, '2026-01-01 00:00:00+00') a WHERE a.workload_id = 1),
          2, 'hosts 1 and 2 take workload 1 at 00:00:00');
SELECT is((SELECT workload_id FROM allot.assign_workload(3, '2026-01-01 00:01:50+00')),
          1::bigint, 'host 3 takes it at 00:01:50');
SELECT results_eq($$SELECT w.host_id, w.seen_at FROM allot.assignment_watch w
                      JOIN allot.assignment_horizon h USING (generation)
                     WHERE h.watched_below = '2026-01-01 00:00:20+00' ORDER BY 1$$,
                  $$VALUES (1::bigint, '2026-01-01 00:00:00+00'::timestamptz),
                           (2, '2026-01-01 00:00:00+00')$$,
                  'the list watches up to 00:00:20 and holds hosts 1 and 2, seen at 00:00:00');

-- Hosts 1 and 2 ask again: their entries stay, listed at 00:00:00.
SELECT is((SELECT count(*)::int FROM (VALUES (1, '2026-01-01 00:01:55+00'::timestamptz),
                                             (2, '2026-01-01 00:01:56+00')) v(h, t),
             LATERAL allot.assign_workload(v.h, v.t) a WHERE a.repeated),
          2, 'hosts 1 and 2 repeat at 00:01:55 and 00:01:56');

-- At 00:02:04 (cutoff 00:00:04, 16 s before the horizon: the list is not
-- due for renewal) both entries are older than the cutoff, and neither
-- assignment lapsed.
CREATE TEMP TABLE scans AS SELECT pg_temp.list_scans() AS n;
SELECT is((SELECT workload_id FROM allot.assign_workload(3, '2026-01-01 00:02:04+00')),
          1::bigint, 'host 3 repeats at 00:02:04');
SELECT is(pg_temp.list_scans() - (SELECT n FROM scans), 1::bigint,
          'reading the list once, with nothing lapsed');
UPDATE scans SET n = pg_temp.list_scans();
SELECT is((SELECT count(*)::int FROM (VALUES (1, '2026-01-01 00:02:05+00'::timestamptz),
                                             (2, '2026-01-01 00:02:05+00')) v(h, t),
             LATERAL allot.assign_workload(v.h, v.t) a WHERE a.workload_id = 1),
          2, 'hosts 1 and 2 repeat at 00:02:05');
SELECT is(pg_temp.list_scans() - (SELECT n FROM scans), 0::bigint,
          'without reading the list: its entries older than the cutoff are of hosts that asked since');

SELECT * FROM finish();
ROLLBACK;
