-- bench/assign.sh, the bare comparison: one request of a random host that
-- can run something (one host in ten, id % 10 = 5, can run nothing: its
-- neighbour asks instead), against a one-row UPDATE of a random row of a
-- two-column table.  Nothing else is in either transaction: no shared
-- sequence, no clock computed per call (now is a constant of the run, the
-- walk's clock when the run starts), so what the ratio shows is what allot
-- costs over the cheapest write a server makes.  The clock comes as epoch
-- seconds: a timestamp's text, parsed at every call, cost assign 1-2% of a
-- request, which a web layer calling assign_workload(host_id), now left to
-- its default, never pays.
\set h random(1, :nhosts)
\set h :h + CASE WHEN :h % 10 = 5 THEN 1 ELSE 0 END
\if :assign
SELECT * FROM allot.assign_workload(:h, to_timestamp(:vnow));
\else
UPDATE public.bench_row SET n = n + 1 WHERE id = :h;
\endif
