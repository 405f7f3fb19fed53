-- bench/months.sh baseline: a one-row UPDATE transaction on a random host
-- of public.bench_host, a copy of allot.host.
\set id random(1, :nhosts)
UPDATE public.bench_host SET last_seen = now() WHERE id = :id;
