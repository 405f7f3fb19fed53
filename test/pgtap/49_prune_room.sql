-- When a request's read of its assignment prunes the page (0.7.0).
-- PostgreSQL's index fetch prunes a page (dead row versions removed, the
-- page compacted, a WAL record) whenever its free space is below the
-- table's fillfactor reserve.  allot.assignment's rows are inserted once and
-- then updated at every request, so its pages sit at that reserve, and
-- every request pruned its page again.  allot's read prunes a page only
-- once it could not take a few more versions of a row: each pruning then
-- makes room for many updates, and every update stays on its page (HOT).
--
-- Each request below is its own transaction (psql's \gexec), as on a farm:
-- a version left by a committed request is one a pruning would remove.
-- Page 0 of allot.assignment is looked at with pageinspect.
CREATE EXTENSION IF NOT EXISTS pageinspect;
SELECT plan(6);

-- Nothing else looks at these tables meanwhile (autovacuum's ANALYZE holds
-- a snapshot, which would keep the dead versions from being pruned).
ALTER TABLE allot.assignment SET (autovacuum_enabled = false);
ALTER TABLE allot.host SET (autovacuum_enabled = false);

CREATE FUNCTION pg_temp.page0(OUT normal int, OUT redirected int, OUT free int, OUT row_len int)
    LANGUAGE sql AS $$
    SELECT (SELECT count(*)::int FROM heap_page_items(get_raw_page('allot.assignment', 0))
             WHERE lp_flags = 1),
           (SELECT count(*)::int FROM heap_page_items(get_raw_page('allot.assignment', 0))
             WHERE lp_flags = 2),
           (SELECT (upper - lower)::int FROM page_header(get_raw_page('allot.assignment', 0))),
           (SELECT max(lp_len)::int FROM heap_page_items(get_raw_page('allot.assignment', 0)))
$$;
-- The hosts whose assignments are on page 0.
CREATE FUNCTION pg_temp.hosts_on_page0() RETURNS SETOF bigint LANGUAGE sql AS $$
    SELECT host_id FROM allot.assignment WHERE (ctid::text::point)[0] = 0 ORDER BY host_id
$$;

-- 150 hosts on one workload: their assignments fill page 0 up to the
-- fillfactor and go on to page 1.
INSERT INTO allot.workload (id, engine) VALUES (1, 'E');
INSERT INTO allot.host (id, threads) SELECT g, 4 FROM generate_series(1, 150) g;
SELECT count(*) FROM generate_series(1, 150) h,
       LATERAL allot.assign_workload(h, '2026-01-01 00:00:00+00') a \gset
CREATE TABLE page0_hosts AS SELECT h FROM pg_temp.hosts_on_page0() h;
CREATE TABLE before AS SELECT * FROM pg_temp.page0();

SELECT cmp_ok((SELECT free - ((row_len + 7) / 8 * 8 + 4) - 4 FROM before), '<',
              (SELECT 8192 * (100 - 80) / 100),
              'page 0 is filled up to allot.assignment''s fillfactor (80): one new version takes it below');

-- Two hosts of page 0 ask again, one after the other.
SELECT format('SELECT allot.assign_workload(%s, %L)', h, '2026-01-01 00:01:00+00')
  FROM (SELECT h FROM page0_hosts ORDER BY h LIMIT 2) s \gexec

SELECT is((SELECT normal FROM pg_temp.page0()), (SELECT normal + 2 FROM before),
          'the second request''s read left the first one''s old version on the page: not pruned');
SELECT is((SELECT redirected FROM pg_temp.page0()), 0,
          'no row of page 0 was pruned');

-- Every host of page 0 asks again, each in its own transaction: far more new
-- versions than the page has room for without pruning.
SELECT format('SELECT allot.assign_workload(%s, %L)', h, '2026-01-01 00:01:30+00')
  FROM page0_hosts ORDER BY h \gexec

SELECT cmp_ok((SELECT redirected FROM pg_temp.page0()), '>', 0,
              'once the page ran short of room, a read pruned it');
SELECT set_eq('SELECT * FROM pg_temp.hosts_on_page0()', 'SELECT h FROM page0_hosts',
              'every assignment of page 0 is still on page 0: every update was HOT');
SELECT is((SELECT count(*)::int FROM allot.assignment
            WHERE seen_at = '2026-01-01 00:01:30+00' AND host_id IN (SELECT h FROM page0_hosts)),
          (SELECT count(*)::int FROM page0_hosts),
          'and every request was recorded');

SELECT * FROM finish();
