-- bench/assign.sh: one request of a host that last asked INTERVAL seconds
-- ago (virtual time), or the baseline's one-row UPDATE of the same host.
--
-- The walk: hosts ask in a fixed order, as a farm's hosts do when each asks
-- every few minutes.  Position p of the order is host 1 + permute(p,
-- nhosts), a pseudo-random permutation, so that the request order is not the
-- tables' order; client c (0-based :client_id) of C (:clients) takes the
-- positions c + C*k, k = 0 .. lap-1, round-robin.  :k and :r (laps done)
-- are client variables that persist between transactions; -D k and -D r
-- say where the walk goes on from.  One position in :churn (k % churn =
-- churn - 1) alternates between two hosts, lap by lap: its host and a
-- visitor (ids above nhosts).  Each of the two asks every other lap, so its
-- assignment expires (2 x INTERVAL > allot.assignment_ttl), is swept, and
-- counts again when it asks: hosts come and go.
--
-- The clock: now = t0 + step * nextval(clock) seconds, one tick per request
-- of any client, and step = INTERVAL / (hosts in the walk), so that a lap
-- takes INTERVAL of virtual time whatever the tps: each host's last_seen is
-- INTERVAL old when it asks, as long as the clients keep pace with one
-- another (bench/assign.sh reports how far they did).  The baseline ticks
-- its own sequence, so that it does not age allot's assignments; both
-- statements compute now the same way.
\set k :k + 1
\if :k >= :lap
\set k 0
\set r :r + 1
\endif
\set id 1 + permute(:client_id + :clients * :k, :nhosts, :seed)
\if :k % :churn = :churn - 1 and :r % 2 = 1
\set id :nhosts + 1 + :client_id + :clients * (:k / :churn)
\endif
\if :assign
SELECT * FROM allot.assign_workload(:id, to_timestamp(:t0::float8 + :step::float8 * nextval('public.bench_clock')));
\else
UPDATE public.bench_host SET last_seen = to_timestamp(:t0::float8 + :step::float8 * nextval('public.bench_clock_base')) WHERE id = :id;
\endif
