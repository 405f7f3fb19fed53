#!/usr/bin/env bash
# How many colluding owners allot's statistics withstand (docs/voices.md,
# "Threat model").  Not a speed benchmark: it plays the farm of
# test/pgtap/lib/lying_farm.sql, 100 honest hosts running an app with a
# heavy tail (one job in ten takes ten times its prediction), once alone and
# once beside K colluding hosts, each its own owner, and prints how far the
# liars move what a new host is told and what a job earns.  The claims
# (lying_farm.sql has them in full):
#
#   units       1e6 app units a job (in 1,000 s)
#   elapsed     1 app unit done in 1e-6 s
#   tiny_units  1e-6 app units a job
#   flops       a job run at 1 FLOPS
#   tailfree    exactly the prediction, every job: no tail
#   edge        50 app units a job: inside the band screening keeps
#   sybil       'units', from K hosts of one owner
#   fivefold    5 app units a job: inside chance's reach, liars vouching
#   halflong    10 app units every other job: the honest tail, too often
#
# With quorum 1 the liars' results are all validated; with quorum 2 every
# job has a replica for another owner, and the liars forge one output
# together, so that a liar's result counts only when another liar holds
# the other replica.  For each claim, quorum and K: the estimate, bound,
# FLOPS per app unit and credit a job earns, as a change from the honest
# run, and the share of honest jobs that finish inside their bound, sent
# after the first two rounds, and after the first five (a window young
# enough that a third of tail-free voices can still dilute its tail).  Each
# run is ROUNDS rounds of one job per host, the transitioner after each.
#
# Usage: bench/lying_hosts.sh     (about 35 minutes on a 2-CPU machine)
#   LIARS="0 34 51 100" ROUNDS=15 QUORUMS="1 2"
#   CLAIMS="units elapsed tiny_units flops tailfree edge sybil fivefold halflong"
#   PG_CONFIG=pg_config: the PostgreSQL installation, and the allot in it.
#   Builds and installs nothing; starts a throwaway cluster (bench/cluster.sh)
#   and removes it on exit.  The report is also written to
#   bench/out/lying_hosts-<date>.txt (git-ignored).
set -euo pipefail

LIARS=${LIARS:-0 34 51 100}
ROUNDS=${ROUNDS:-15}
QUORUMS=${QUORUMS:-1 2}
CLAIMS=${CLAIMS:-units elapsed tiny_units flops tailfree edge sybil fivefold halflong}
PG_CONFIG=${PG_CONFIG:-pg_config}

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
FARM="$BENCH_DIR/../test/pgtap/lib/lying_farm.sql"
mkdir -p "$BENCH_DIR/out"
REPORT="$BENCH_DIR/out/lying_hosts-$(date +%Y%m%d-%H%M%S).txt"

{
    echo "allot: library $ALLOT_SHA256 of $ALLOT_MTIME"
    echo "farm: 100 honest hosts, $ROUNDS rounds of one job each, one job in ten 10x its prediction"
    printf '%-10s %6s %5s %10s %10s %10s %10s %14s %12s\n' claim quorum liars 'est %' 'bound %' 'flops/au %' \
        'credit %' 'inside, r>=2' 'inside, r>=5'
    for claim in $CLAIMS; do
      for quorum in $QUORUMS; do
        for k in $LIARS; do
            db="lying_${claim}_${quorum}_$k"
            psql_q -c "CREATE DATABASE $db" >/dev/null
            psql_q -d "$db" -c 'CREATE EXTENSION allot' >/dev/null
            psql_q -d "$db" -At -F ' ' <<SQL
\\i $FARM
SELECT pg_temp.lying_farm($k, $ROUNDS, '$claim', $quorum);
\\pset format unaligned
\\pset tuples_only on
SELECT format('%-10s %6s %5s %10s %10s %10s %10s %14s %12s', '$claim', $quorum, $k,
              round((100 * (l.est_secs / nullif(h.est_secs, 0) - 1))::numeric, 1),
              round((100 * (l.bound_secs / nullif(h.bound_secs, 0) - 1))::numeric, 1),
              round((100 * (l.est_flops_per_au / nullif(h.est_flops_per_au, 0) - 1))::numeric, 1),
              round((100 * (l.credit / nullif(h.credit, 0) - 1))::numeric, 1),
              (SELECT round((100.0 * count(*) FILTER (WHERE secs <= bound_secs) / count(*))::numeric, 2) || '%'
                 FROM sent WHERE workload_id = 2 AND host_id <= 100 AND round >= 2),
              (SELECT round((100.0 * count(*) FILTER (WHERE secs <= bound_secs) / count(*))::numeric, 2) || '%'
                 FROM sent WHERE workload_id = 2 AND host_id <= 100 AND round >= 5))
  FROM outcome h, outcome l WHERE h.workload_id = 1 AND l.workload_id = 2;
SQL
            psql_q -c "DROP DATABASE $db" >/dev/null
        done
      done
    done
} | grep --line-buffered -v -e '^$' -e '^lying_farm' | tee "$REPORT"
say "report: $REPORT"
