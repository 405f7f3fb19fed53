#!/usr/bin/env bash
# What the share history costs (allot.share_history, written by
# run_transitioner once a minute; docs/status-page.md): its size per
# workload and day of retention, and the transitioner's server CPU per run
# with the history against without it, in the same run on the same server.
#
# On one throwaway server, a farm of NWORKLOADS assignment workloads, two
# hosts on each (their assignments count for 30 days):
#   1. size: DAYS days of runs, one a virtual minute, each in its own
#      transaction, with the default retention (1 day).  autovacuum is off
#      for the table and modelled instead: a VACUUM after every 288 runs,
#      when a fifth of a day's rows are dead, which is when autovacuum's
#      default threshold (50 + 0.2 x the live rows) would run it.  Reported:
#      live rows, heap, primary key and total bytes, per workload and per
#      row.
#   2. cost: RUNS runs more on that farm (each adds NWORKLOADS rows and
#      deletes as many), and RUNS runs on a copy of the farm with
#      allot.share_history_retention = 0 (no history: the step deletes
#      nothing and records nothing); server CPU per run of each, and their
#      ratio (bench/cluster.sh's measure_begin and measure_end).
#
# Usage: bench/share_history.sh            (~2 min on a 2-CPU machine)
#   Needs PostgreSQL 14+ with allot installed into it; builds and installs
#   nothing; starts and removes its own cluster (bench/cluster.sh).
#
# Environment:
#   NWORKLOADS=20 DAYS=3 RUNS=1440   farm and run sizes
#   PG_CONFIG=pg_config              the PostgreSQL installation, and its allot
#
# The report is also written to bench/out/share_history-<date>.txt (git-ignored).
set -euo pipefail

NWORKLOADS=${NWORKLOADS:-20}
DAYS=${DAYS:-3}
RUNS=${RUNS:-1440}
PG_CONFIG=${PG_CONFIG:-pg_config}

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
mkdir -p "$BENCH_DIR/out"
REPORT="$BENCH_DIR/out/share_history-$(date +%Y%m%d-%H%M%S).txt"

# farm DB RETENTION: the farm, and public.minutes(start, n): n runs a
# minute apart from start, each committed.
farm() {
    create_bench_db "$1"
    psql_q -d "$1" -c "ALTER DATABASE $1 SET allot.assignment_ttl = '30d'" \
        -c "ALTER DATABASE $1 SET allot.share_history_retention = '$2'" >/dev/null
    psql_q -d "$1" -v n="$NWORKLOADS" >/dev/null <<'EOF'
ALTER TABLE allot.share_history SET (autovacuum_enabled = off);
INSERT INTO allot.workload (id, name, engine, throughput)
SELECT g, 'w' || g, 'E' || g, 1000 * g FROM generate_series(1, :n) g;
INSERT INTO allot.host (id, name, threads) SELECT g, 'h' || g, 8 FROM generate_series(1, 2 * :n) g;
INSERT INTO allot.assignment (host_id, workload_id, threads, focus, assigned_at, seen_at, counted)
SELECT g, 1 + g % :n, 8, false, '2026-01-01', '2026-01-01', true FROM generate_series(1, 2 * :n) g;
CREATE PROCEDURE public.minutes(start timestamptz, n int) LANGUAGE plpgsql AS $$
BEGIN
    FOR m IN 0 .. n - 1 LOOP
        PERFORM allot.run_transitioner(start + make_interval(mins => m));
        COMMIT;
    END LOOP;
END
$$;
EOF
}
minutes() { psql_q -d "$1" -c "CALL public.minutes('2026-01-01'::timestamptz + make_interval(mins => $2), $3)"; }

# ---------------------------------------------------------------------------
# 1. Size.
say "farm: $NWORKLOADS workloads; $DAYS days of runs a minute apart, a VACUUM every 288 runs"
farm bench_history 1d
for ((chunk = 0; chunk < DAYS * 5; chunk++)); do
    bg_run minutes bench_history $((chunk * 288)) 288
    psql_q -d bench_history -c 'VACUUM allot.share_history'
done
SIZE=$(psql_q -d bench_history -c "\\pset footer off" -c "
    SELECT count(*) AS \"live rows\",
           count(*) / count(DISTINCT workload_id) AS \"rows a workload\",
           pg_relation_size('allot.share_history') AS \"heap B\",
           pg_relation_size('allot.share_history_pkey') AS \"primary key B\",
           pg_total_relation_size('allot.share_history') AS \"total B\",
           pg_total_relation_size('allot.share_history') / count(DISTINCT workload_id) AS \"B a workload\",
           round(pg_total_relation_size('allot.share_history')::numeric / count(*), 1) AS \"B a row\"
      FROM allot.share_history")

# ---------------------------------------------------------------------------
# 2. Server CPU per run, with the history and without.
farm bench_nohistory 0
bg_run minutes bench_nohistory 0 60      # warm: plans and caches
# run_cost DB START: RUNS runs from minute START, timed; sets RUN_CPU_US.
run_cost() {
    measure_begin "$1"
    bg_run minutes "$1" "$2" "$RUNS"
    measure_end "$1" "$RUNS"
}
say "server CPU of $RUNS runs with the history (a day kept), then $RUNS without"
run_cost bench_history $((DAYS * 1440))
WITH_US=$RUN_CPU_US WITH_QUIET=$RUN_QUIET
run_cost bench_nohistory 60
WITHOUT_US=$RUN_CPU_US WITHOUT_QUIET=$RUN_QUIET

{
    report_header "bench/share_history.sh"
    echo "farm: $NWORKLOADS assignment workloads, 2 hosts each; $DAYS days of runs a minute apart, retention 1 day"
    echo
    echo "1. the table at steady state (a VACUUM every 288 runs, as autovacuum's default threshold)"
    echo "$SIZE"
    echo
    echo "2. server CPU per run_transitioner() call, $RUNS calls each, each in its own transaction"
    awk -v w="$WITH_US" -v o="$WITHOUT_US" 'BEGIN {
        printf "   with the history:      %.0f us\n   without (retention 0): %.0f us\n   ratio: %.2f\n", w, o, w / o }'
    echo "   machine before each: $WITH_QUIET; $WITHOUT_QUIET"
} | tee "$REPORT"
say "report: $REPORT"
