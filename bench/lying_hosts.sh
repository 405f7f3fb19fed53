#!/usr/bin/env bash
# How many colluding hosts allot's statistics withstand (docs/threat-model.md, "Threat
# model").  Not a speed benchmark: it plays the farm of
# test/pgtap/lib/lying_farm.sql, 100 honest hosts running an app with a
# heavy tail (one job in ten takes ten times its prediction), once alone and
# once beside K colluding hosts whose results are all validated, and prints
# how far the liars move what a new host is told and what a job earns:
#
#   claim 'units'    each liar reports 1e6 app units a job (in 1,000 s)
#   claim 'elapsed'  each liar reports 1 app unit done in 1e-6 s
#
# For each claim and each K: the estimate, bound, FLOPS per app unit and
# credit a job earns, as a change from the honest run, and the share of
# honest jobs (sent after the first two rounds) that finish inside their
# bound.  Each run is ROUNDS rounds of one job per host, the transitioner
# after each (so each host has ROUNDS reports in the apps' windows).
#
# Usage: bench/lying_hosts.sh        (about 2 minutes on a 2-CPU machine)
#   LIARS="0 1 2 3 4 5 6 7 8 10 15" ROUNDS=15 CLAIMS="units elapsed"
#   PG_CONFIG=pg_config: the PostgreSQL installation, and the allot in it.
#   Builds and installs nothing; starts a throwaway cluster (bench/cluster.sh)
#   and removes it on exit.  The report is also written to
#   bench/out/lying_hosts-<date>.txt (git-ignored).
set -euo pipefail

LIARS=${LIARS:-0 1 2 3 4 5 6 7 8 10 15}
ROUNDS=${ROUNDS:-15}
CLAIMS=${CLAIMS:-units elapsed}
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
    printf '%-8s %5s %10s %10s %10s %10s %14s\n' claim liars 'est %' 'bound %' 'flops/au %' 'credit %' 'honest inside'
    for claim in $CLAIMS; do
        for k in $LIARS; do
            db="lying_${claim}_$k"
            psql_q -c "CREATE DATABASE $db" >/dev/null
            psql_q -d "$db" -c 'CREATE EXTENSION allot' >/dev/null
            psql_q -d "$db" -At -F ' ' <<SQL
\\i $FARM
SELECT pg_temp.lying_farm($k, $ROUNDS, '$claim');
\\pset format unaligned
\\pset tuples_only on
SELECT format('%-8s %5s %10s %10s %10s %10s %14s', '$claim', $k,
              round((100 * (l.est_secs / h.est_secs - 1))::numeric, 1),
              round((100 * (l.bound_secs / h.bound_secs - 1))::numeric, 1),
              round((100 * (l.est_flops_per_au / h.est_flops_per_au - 1))::numeric, 1),
              round((100 * (l.credit / h.credit - 1))::numeric, 1),
              (SELECT round((100.0 * count(*) FILTER (WHERE secs <= bound_secs) / count(*))::numeric, 2) || '%'
                 FROM sent WHERE workload_id = 2 AND host_id <= 100 AND round >= 2))
  FROM outcome h, outcome l WHERE h.workload_id = 1 AND l.workload_id = 2;
SQL
            psql_q -c "DROP DATABASE $db" >/dev/null
        done
    done
} | grep --line-buffered -v -e '^$' -e '^lying_farm' | tee "$REPORT"
say "report: $REPORT"
