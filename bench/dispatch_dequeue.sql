-- bench/dispatch.sh: the plain queue.  One job per transaction from
-- public.bench_queue (a separate table, so it does not touch allot's jobs),
-- the oldest unsent one that no other transaction holds.
\set id random(1, :nhosts)
UPDATE public.bench_queue SET state = 'taken', host_id = :id
 WHERE id = (SELECT id FROM public.bench_queue WHERE state = 'unsent'
              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED);
