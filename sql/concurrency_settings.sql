-- Concurrency settings returned with an assignment (seed 000, end).
-- T = threads (halved on a hyperthreaded host for core odds), S = sockets
-- (1 when an engine uses several threads), M = max(dev, base threads).
SELECT reset_farm();
INSERT INTO allot.workload (id, engine, dev_threads, base_threads, mode, workload_size) VALUES
    (1, 'E', 1, 1, 'games', 32),
    (2, 'E', 4, 4, 'games', 16),         -- M = 4 forces S = 1
    (3, 'E', 2, 1, 'games', 32),         -- core odds
    (4, 'E', 1, 1, 'spsa_single', 8),
    (5, 'E', 2, 2, 'spsa_multiple', 8);
INSERT INTO allot.host (id, threads, physical_cores, sockets) VALUES
    (1, 16, 16, 2),   -- 16 real cores on 2 sockets
    (2, 16, 8, 2),    -- hyperthreaded: 8 cores, 16 threads
    (3, 6, NULL, 4);  -- 6 threads, 4 sockets
-- Expected, by hand:
--  host 1: W1 S=2, (16/2)/1 = 8, 2*32*8 = 512 | W2 S=1, 16/4 = 4, 2*16*4 = 128
--          W3 S=1, 16/2 = 8, 512 | W4 S=2, 8, 2*8*8 = 128 | W5 (16/2)/2 = 4, 2, 16
--  host 2: W3 core odds T=8: S=1, 8/2 = 4, 2*32*4 = 256; the rest as host 1
--  host 3: W1 S=4, (6/4)/1 = 1, 64 | W2 unrunnable (needs 4 <= 6: runnable) S=1, 6/4 = 1, 32
--          W3 S=1, 6/2 = 3, 192 | W4 S=4, 1, 16 | W5 (6/2)/2 = 1, 2, 16
SELECT h, w.id AS w, a.cutechess_count, a.concurrency_per, a.games_per_cutechess
  FROM generate_series(1, 3) h
 CROSS JOIN allot.workload w
 CROSS JOIN LATERAL allot.assign_workload(h, '2026-01-01 00:00:00+00',
        (SELECT array_agg(id) FROM allot.workload WHERE id <> w.id)) a
 ORDER BY h, w.id;
