#!/usr/bin/env bash
# Benchmark of allot.assign_workload against a one-row UPDATE baseline.
#
# Claim under test: the cost of one assign_workload does not grow with the
# number of hosts.  For a farm of 100,000 hosts and one of 1,000 (same 200
# active workloads, every host pre-assigned once), at 8 and 32 clients, it
# runs with pgbench, back to back on the same server:
#   baseline  UPDATE allot.host SET last_seen = now() WHERE id = :id
#   assign    SELECT * FROM allot.assign_workload(:id)
# and prints transactions/s and p99 latency of each, and assign/baseline.
# Targets: at 8 clients, assign >= 0.5 x baseline tps, and the 1,000-host
# figure within 20% of the 100,000-host one.
#
# Usage: bench/assign.sh
#   Needs PostgreSQL 15 (initdb, pg_ctl, psql, pgbench) and allot installed
#   into it (README install step: make && make install).  Builds nothing.
#   Starts a throwaway cluster in a temp dir (unix socket in that dir only),
#   as user postgres when run as root, and removes it on exit, pass or fail.
#
# Environment:
#   DURATION=30          seconds per pgbench run (8 runs in all)
#   SCALE_HOSTS="100000 1000"   fleet sizes, one database each; the first
#                        and last are compared at 8 clients
#   CLIENTS="8 32"       client counts
#   THREADS=2            pgbench worker threads (-j)
#   WARMUP=5             untimed seconds of each script per database first
#   TTL=1d               allot.assignment_ttl of the benchmark databases: by
#                        default every pre-assigned host stays counted, as in a
#                        farm whose hosts heartbeat; with the 2 min default and
#                        no expire_assignments() sweep, requests also subtract
#                        the expired, unswept assignments of quiet hosts
#   PG_CONFIG=pg_config  which PostgreSQL installation to use
#
# The table is also written to bench/out/assign-<date>.txt (git-ignored).
set -euo pipefail

DURATION=${DURATION:-30}
SCALE_HOSTS=${SCALE_HOSTS:-"100000 1000"}
CLIENTS=${CLIENTS:-"8 32"}
THREADS=${THREADS:-2}
TTL=${TTL:-1d}
WARMUP=${WARMUP:-5}
PG_CONFIG=${PG_CONFIG:-pg_config}

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"

# ---------------------------------------------------------------------------
# One database per fleet size.

# Progress NOTICEs (and any error) come on stderr.
load_data() {
    psql_q -d "$1" -v nhosts="$2" -f "$BENCH_DIR/assign_data.sql" 2>&1 >/dev/null |
        sed -u 's/^.*NOTICE:  /    /'
}

setup_db() {
    local db=$1 nhosts=$2 t0=$SECONDS
    say "database $db: $nhosts hosts, 8 engines, 200 active workloads"
    psql_q -c "CREATE DATABASE $db"
    if ! psql_q -d "$db" -c 'CREATE EXTENSION allot' 2>"$WORK/create_extension.err"; then
        cat "$WORK/create_extension.err" >&2
        die "CREATE EXTENSION allot failed: is allot installed into $("$PG_CONFIG" --sharedir)/extension?
       Install it first (README: make && make install), then rerun."
    fi
    # TTL=1d: every host stays counted for the whole run, as in a farm whose
    # hosts heartbeat, so timed requests meet no expired, unswept assignment.
    psql_q -c "ALTER DATABASE $db SET allot.assignment_ttl = '$TTL'"
    bg_run load_data "$db" "$nhosts" || die "data setup of $db failed"
    psql_q -d "$db" -At -c "SELECT format('    %s hosts, %s assignments, %s workloads in use; invariants: %s',
            (SELECT count(*) FROM allot.host), (SELECT count(*) FROM allot.assignment),
            (SELECT count(*) FROM allot.workload_usage),
            coalesce((SELECT string_agg(c, '; ') FROM allot.check_invariants() c), 'ok'))"
    EXT_VERSION=$(psql_q -d "$db" -At -c "SELECT extversion FROM pg_extension WHERE extname = 'allot'")
    say "database $db ready in $((SECONDS - t0)) s"
}

# run NAME DB NHOSTS CLIENTS SCRIPT: one timed pgbench run; sets RUN_TPS and
# RUN_P99 (ms, from the per-transaction log).
run() {
    local name=$1 db=$2 nhosts=$3 clients=$4 script=$5
    local prefix="$WORK/log/$name" tps p99 jobs=$THREADS
    [ "$jobs" -le "$clients" ] || jobs=$clients
    mkdir -p "$WORK/log"
    rm -f "$prefix".*
    psql_q -d "$db" -c CHECKPOINT
    # Its summary goes beside, not into, the per-transaction logs $prefix.*
    bg_run pgbench -n -M prepared -T "$DURATION" -c "$clients" -j "$jobs" \
        -D nhosts="$nhosts" -f "$script" -l --log-prefix="$prefix" "$db" >"$prefix-summary.txt" 2>&1 ||
        { cat "$prefix-summary.txt" >&2; die "pgbench $name failed"; }
    tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$prefix-summary.txt" | tail -n 1)
    [ -n "$tps" ] || { cat "$prefix-summary.txt" >&2; die "no tps in the output of pgbench $name"; }
    # Log column 3 is the transaction's latency in microseconds.
    p99=$(cat "$prefix".* | awk '{ print $3 }' | sort -n |
          awk '{ v[NR] = $1 } END { i = int(NR * 0.99 + 0.999999); if (i < 1) i = 1;
                                     printf "%.2f", v[i] / 1000 }')
    RUN_TPS=$tps RUN_P99=$p99
}

ALLOT_SO="$("$PG_CONFIG" --pkglibdir)/allot.so"
SO_MTIME=$(date -u -r "$ALLOT_SO" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || echo unknown)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
mkdir -p "$BENCH_DIR/out"
REPORT="$BENCH_DIR/out/assign-$(date +%Y%m%d-%H%M%S).txt"
ROWS=()
for nhosts in $SCALE_HOSTS; do
    db="bench_$nhosts"
    setup_db "$db" "$nhosts"
    # A fresh cluster and freshly loaded tables run slower for a while
    # (new WAL segments, first writes to vacuumed pages): warm up untimed.
    if [ "$WARMUP" -gt 0 ]; then
        say "$nhosts hosts: warm-up, ${WARMUP}s of each script (untimed)"
        for script in assign_baseline assign_workload; do
            bg_run pgbench -n -M prepared -T "$WARMUP" -c 8 -j "$THREADS" -D nhosts="$nhosts" \
                -f "$BENCH_DIR/$script.sql" "$db" >"$WORK/warmup.out" 2>&1 ||
                { cat "$WORK/warmup.out" >&2; die "warm-up with $script failed"; }
        done
    fi
    for clients in $CLIENTS; do
        say "$nhosts hosts, $clients clients: baseline ${DURATION}s"
        run "base_${nhosts}_$clients" "$db" "$nhosts" "$clients" "$BENCH_DIR/assign_baseline.sql"
        btps=$RUN_TPS bp99=$RUN_P99
        say "$nhosts hosts, $clients clients: assign_workload ${DURATION}s"
        run "assign_${nhosts}_$clients" "$db" "$nhosts" "$clients" "$BENCH_DIR/assign_workload.sql"
        atps=$RUN_TPS ap99=$RUN_P99
        printf '    baseline %s tps p99 %s ms; assign %s tps p99 %s ms\n' \
            "$btps" "$bp99" "$atps" "$ap99"
        ROWS+=("$nhosts $clients $btps $bp99 $atps $ap99")
    done
    psql_q -d "$db" -At -c "SELECT coalesce(string_agg(c, E'\n'), '') FROM allot.check_invariants() c" |
        grep . | sed 's/^/    invariant broken: /' || true
    psql_q -c "DROP DATABASE $db"   # its buffers go too: the next fleet starts alike
done

# ---------------------------------------------------------------------------
# Report.

report() {
    local first last r h c bt bp at ap ratio_first ratio_last tps_first tps_last
    first=$(echo "$SCALE_HOSTS" | awk '{ print $1 }')
    last=$(echo "$SCALE_HOSTS" | awk '{ print $NF }')
    echo "allot assign_workload benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n)"
    echo "PostgreSQL $(psql -X -At -c 'SHOW server_version'), $(nproc) CPUs;" \
         "shared_buffers=1GB, max_connections=100, fsync=on, synchronous_commit=on (defaults)"
    echo "allot $EXT_VERSION ($ALLOT_SO, modified $SO_MTIME)"
    echo "pgbench -n -M prepared -T $DURATION -j $THREADS (after ${WARMUP}s untimed warm-up per script); every host pre-assigned once;" \
         "200 active workloads (40 at the top priority); allot.assignment_ttl=$TTL"
    echo "load average before the runs: $LOAD_BEFORE (other work on this machine skews the figures)"
    echo
    printf '%8s %8s %14s %14s %12s %12s %8s\n' hosts clients "baseline tps" "baseline p99" \
        "assign tps" "assign p99" ratio
    for r in "${ROWS[@]}"; do
        read -r h c bt bp at ap <<<"$r"
        printf '%8s %8s %14.0f %11s ms %12.0f %9s ms %8.2f\n' "$h" "$c" "$bt" "$bp" "$at" "$ap" \
            "$(awk -v a="$at" -v b="$bt" 'BEGIN { print a / b }')"
    done
    echo
    for r in "${ROWS[@]}"; do
        read -r h c bt bp at ap <<<"$r"
        [ "$c" = 8 ] || continue
        [ "$h" = "$first" ] && { ratio_first=$(awk -v a="$at" -v b="$bt" 'BEGIN { print a / b }'); tps_first=$at; }
        [ "$h" = "$last" ] && { ratio_last=$(awk -v a="$at" -v b="$bt" 'BEGIN { print a / b }'); tps_last=$at; }
    done
    if [ -n "${ratio_first:-}" ]; then
        awk -v r="$ratio_first" -v h="$first" 'BEGIN {
            printf("8 clients, %s hosts: assign/baseline = %.3f (target >= 0.5): %s\n",
                   h, r, (r >= 0.5) ? "PASS" : "FAIL") }'
    fi
    if [ -n "${ratio_first:-}" ] && [ -n "${ratio_last:-}" ] && [ "$first" != "$last" ]; then
        awk -v rf="$ratio_first" -v rl="$ratio_last" -v tf="$tps_first" -v tl="$tps_last" \
            -v f="$first" -v l="$last" 'BEGIN {
            d = (rf - rl) / rl; if (d < 0) d = -d
            printf("8 clients, %s vs %s hosts: assign/baseline %.3f vs %.3f (%+.1f%%), assign tps %.0f vs %.0f (%+.1f%%); target within 20%%: %s\n",
                   l, f, rl, rf, 100 * (rf - rl) / rl, tl, tf, 100 * (tf - tl) / tl,
                   (d <= 0.2) ? "PASS" : "FAIL") }'
    fi
}
if [ "$(date -u -r "$ALLOT_SO" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || echo unknown)" != "$SO_MTIME" ]; then
    SO_MTIME="$SO_MTIME, REPLACED DURING THE RUN: rerun"
fi
report | tee "$REPORT"
echo "(written to bench/out/${REPORT##*/})"
