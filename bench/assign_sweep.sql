-- bench/assign.sh: what pg_cron's run_transitioner() does once a minute for
-- assignments, in the virtual time of bench/assign_request.sql: at every
-- virtual minute (every :per_minute ticks of the clock), sweep the
-- assignments whose host was not seen within allot.assignment_ttl.  The
-- clock is polled every 20 ms; -D next is the first minute's tick.
\sleep 20 ms
SELECT last_value AS clock FROM public.bench_clock \gset
\if :clock >= :next
INSERT INTO public.bench_sweep (at, expired)
SELECT v, allot.expire_assignments(v) FROM (SELECT to_timestamp(:t0::float8 + :step::float8 * :clock) AS v) AS s;
\set next (:clock / :per_minute + 1) * :per_minute
\endif
