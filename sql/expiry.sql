-- Assignments count while their host was seen within allot.assignment_ttl
-- (default 2 min), with nobody sweeping: requests subtract expired rows as
-- they read.  expire_assignments() sweeps them.
SELECT reset_farm();
SHOW allot.assignment_ttl;
INSERT INTO allot.workload (id, engine) VALUES (1, 'E'), (2, 'F');
INSERT INTO allot.host (id, threads) VALUES (1, 8), (2, 4), (9, 1);
-- Host 1 assigned at 00:00:00 on W1, host 2 at 00:01:00 on W2.
SELECT put(1, 1, '2026-01-01 00:00:00+00'), put(2, 2, '2026-01-01 00:01:00+00');

-- At 00:02:00 host 1 was seen exactly 120 s ago: it still counts (the
-- window is inclusive, as OpenBench's last_seen >= now - ttl).
SELECT workload_id, threads FROM allot.explain_assignment(9, '2026-01-01 00:02:00+00') ORDER BY 1;
-- A millisecond later it no longer does.
SELECT workload_id, threads FROM allot.explain_assignment(9, '2026-01-01 00:02:00.001+00') ORDER BY 1;
-- The counters still hold it until a sweep; the answer was exact anyway.
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;

-- A heartbeat makes it count again.
SELECT allot.heartbeat(1, '2026-01-01 00:02:30+00');
SELECT workload_id, threads FROM allot.explain_assignment(9, '2026-01-01 00:02:31+00') ORDER BY 1;

-- The TTL is a setting.
SET allot.assignment_ttl = '10s';
SELECT workload_id, threads FROM allot.explain_assignment(9, '2026-01-01 00:02:31+00') ORDER BY 1;
RESET allot.assignment_ttl;

-- Sweeping: at 00:04:00 host 1 (seen 00:02:30) counts, host 2 (00:01:00) does not.
SELECT allot.expire_assignments('2026-01-01 00:04:00+00') AS expired;
SELECT host_id, workload_id, counted FROM allot.assignment ORDER BY 1;
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;
SELECT allot.expire_assignments('2026-01-01 00:04:00+00') AS expired_again;
SELECT * FROM allot.check_invariants();
-- A heartbeat after the sweep counts the host again.
SELECT allot.heartbeat(2, '2026-01-01 00:04:10+00');
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;

-- A host whose own assignment expired is not subtracted twice: neither
-- before the sweep (the read subtracts it once, as expired) nor after.
SELECT workload_id, threads FROM allot.explain_assignment(1, '2026-01-01 00:10:00+00') ORDER BY 1;
SELECT allot.expire_assignments('2026-01-01 00:10:00+00') AS expired;
SELECT workload_id, threads FROM allot.explain_assignment(1, '2026-01-01 00:10:00+00') ORDER BY 1;
SELECT workload_id FROM allot.assign_workload(1, '2026-01-01 00:10:00+00', seed => 1);
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;

-- Deleting a host or a workload releases what it held.  A usage row whose
-- hosts fall to 0 stays (a host may take the workload again: an update, not
-- a new row); the transitioner drops those of workloads no longer active,
-- and keeps an active workload's.
DELETE FROM allot.host WHERE id = 1;
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;
SELECT allot.heartbeat(2, '2026-01-01 00:10:00+00');
DELETE FROM allot.workload WHERE id = 2;
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;
SELECT * FROM allot.check_invariants();
SELECT (allot.run_transitioner('2026-01-01 00:10:00+00'))->>'expired_assignments' AS expired;
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;
UPDATE allot.workload SET state = 'finished' WHERE id = 1;
SELECT (allot.run_transitioner('2026-01-01 00:10:00+00'))->>'expired_assignments' AS expired;
SELECT count(*) AS usage_rows FROM allot.workload_usage;

-- An operator who edits usage by hand is caught by check_invariants.
INSERT INTO allot.workload (id, engine) VALUES (3, 'E');
INSERT INTO allot.host (id, threads) VALUES (3, 4);
SELECT put(3, 3);
UPDATE allot.workload_usage SET threads = threads + 1;
SELECT * FROM allot.check_invariants();
UPDATE allot.workload_usage SET threads = threads - 1;
SELECT * FROM allot.check_invariants();

-- A request that meets lapsed assignments of its candidates stops counting
-- them after its own write (the transitioner would, within a minute), so
-- that later requests need not subtract them again; its answer is exact
-- either way.  Hosts 10 and 11 were seen at 00:20, host 12 at 00:21:30; at
-- 00:22:10 hosts 10 and 11 have lapsed, host 12 has not.
SELECT reset_farm();
INSERT INTO allot.workload (id, engine) VALUES (1, 'E');
INSERT INTO allot.host (id, threads) VALUES (10, 8), (11, 4), (12, 2), (13, 1);
SELECT put(10, 1, '2026-01-01 00:20:00+00'), put(11, 1, '2026-01-01 00:20:00+00'),
       put(12, 1, '2026-01-01 00:21:30+00');
SELECT workload_id, threads FROM allot.explain_assignment(13, '2026-01-01 00:22:10+00');
SELECT workload_id FROM allot.assign_workload(13, '2026-01-01 00:22:10+00', seed => 1);
SELECT host_id, counted FROM allot.assignment ORDER BY 1;
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;
SELECT count(*) AS watched_lapsed FROM allot.assignment_watch w JOIN allot.assignment a USING (host_id)
 WHERE NOT a.counted;
SELECT * FROM allot.check_invariants();
-- A heartbeat counts host 10 again.
SELECT allot.heartbeat(10, '2026-01-01 00:22:20+00');
SELECT workload_id, threads, hosts FROM allot.workload_usage ORDER BY 1;
SELECT * FROM allot.check_invariants();
