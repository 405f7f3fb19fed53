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
-- The clock: now = t0 + step * p seconds, and step = INTERVAL / nhosts, so
-- that a lap takes INTERVAL of virtual time whatever the tps, and a host
-- asks exactly every INTERVAL virtual seconds however the clients share
-- the work (at most one position per client in flight out of order).
\if :assign
SELECT a.*
  FROM (SELECT p, p % :nhosts AS k, p / :nhosts AS r
          FROM (SELECT nextval('public.bench_clock') AS p OFFSET 0) s) w,
       LATERAL allot.assign_workload(
           CASE WHEN w.k % :churn = w.k / :churn % :churn AND w.r % 2 = 1 THEN :nhosts + 1 + w.k / :churn
                ELSE 1 + (w.k * :mult + :seed) % :nhosts END,
           to_timestamp(:t0::float8 + :step::float8 * w.p)) a;
\else
UPDATE public.bench_host h SET last_seen = to_timestamp(:t0::float8 + :step::float8 * w.p)
  FROM (SELECT p, p % :nhosts AS k, p / :nhosts AS r
          FROM (SELECT nextval('public.bench_clock_base') AS p OFFSET 0) s) w
 WHERE h.id = CASE WHEN w.k % :churn = w.k / :churn % :churn AND w.r % 2 = 1 THEN :nhosts + 1 + w.k / :churn
                   ELSE 1 + (w.k * :mult + :seed) % :nhosts END;
\endif
