-- bench/assign.sh: one request of a host that last asked INTERVAL seconds
-- ago (virtual time), or the baseline's one-row UPDATE of the same host.
--
-- The walk: hosts ask in a fixed order, as a farm's hosts do when each asks
-- every few minutes, and every request of any client takes the next
-- position of it.  Position p (a sequence: public.bench_clock for allot,
-- public.bench_clock_base for the baseline, so that the baseline does not
-- age allot's assignments) is slot k = p % nhosts of lap r = p / nhosts,
-- and slot k is host 1 + (k * mult + seed) % nhosts (mult is coprime with
-- nhosts: a permutation that is not the tables' order).  One slot in each
-- block of :churn, k % churn = (k / churn) % churn (a different place in
-- each block, so that the slot's host ids do not share a residue), alternates
-- between two hosts, lap by lap: its host and a visitor (id nhosts + 1 +
-- k / churn).  Each of the two asks every
-- other lap, so its assignment expires (2 x INTERVAL > assignment_ttl), is
-- swept, and counts again when it asks: hosts come and go.
--
-- The clock: now = t0us + stepus * p microseconds, and stepus = INTERVAL /
-- nhosts, so that a lap takes INTERVAL of virtual time whatever the tps,
-- and a host asks exactly every INTERVAL virtual seconds however the
-- clients share the work (at most one position per client in flight out of
-- order).
--
-- pgbench works out the host and now from p (0.7.0), so that the server's
-- side of the walk is one nextval a request: the statement takes the next
-- position in its own target list (or RETURNING), for this client's next
-- request.  Until 0.6.0 the server worked them out in a subquery joined to
-- the call, which cost more than a bare one-row UPDATE and, the targets
-- being judged against the bare UPDATE, would count against allot.  The
-- call is left-joined to one row, so that a request whose host can run
-- nothing (one in eight: no row from assign_workload) still takes the next
-- position: until the last runs of 0.8.0 (2026-11-29) it took none, and
-- the client's next request took its position with a statement of its
-- own, a second round trip and transaction charged to allot.  A client's first request takes its
-- position that way.  The last request of a run given a number of
-- transactions (:last, -t) takes none, so the walk leaves no position
-- unasked; a run given a time (-T: warm-ups, the baseline) leaves at most
-- one a client.
\set i :i + 1
\if :p < 0
\if :assign
SELECT nextval('public.bench_clock') AS p \gset
\else
SELECT nextval('public.bench_clock_base') AS p \gset
\endif
\endif
\set k :p % :nhosts
\set r :p / :nhosts
\set h 1 + (:k * :mult + :seed) % :nhosts
\if :k % :churn = :k / :churn % :churn
\if :r % 2 = 1
\set h :nhosts + 1 + :k / :churn
\endif
\endif
\set us :t0us + :p * :stepus
\set p -1
\if :i = :last
\if :assign
SELECT * FROM allot.assign_workload(:h, to_timestamp(:us::float8 / 1000000));
\else
UPDATE public.bench_host SET last_seen = to_timestamp(:us::float8 / 1000000) WHERE id = :h;
\endif
\elif :assign
SELECT nextval('public.bench_clock') AS p
  FROM (SELECT) one
  LEFT JOIN allot.assign_workload(:h, to_timestamp(:us::float8 / 1000000)) ON true \aset
\else
UPDATE public.bench_host SET last_seen = to_timestamp(:us::float8 / 1000000) WHERE id = :h
RETURNING nextval('public.bench_clock_base') AS p \aset
\endif
