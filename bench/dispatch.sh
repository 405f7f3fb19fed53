#!/usr/bin/env bash
# Benchmark of allot.request_work: jobs dispatched per second.
#
# Issue: 100,000 hosts, 1,000,000 unsent jobs over 50 job workloads; each
# request asks for 8 CPU instances and 1 GPU instance.  Report jobs
# dispatched per second and p99 latency at 8 clients next to (a) a one-row
# UPDATE baseline and (b) a plain FOR UPDATE SKIP LOCKED dequeue of one job
# per transaction.  Target: at least as many jobs/s as the plain dequeue,
# with fairness.  Run it for 5 minutes and show that the rate in the last
# minute is within 10% of the first (no bloat collapse).
#
# On one throwaway server, back to back (bench/dispatch_*.sql):
#   baseline  UPDATE allot.host SET last_seen = now() WHERE id = :id
#   dequeue   UPDATE bench_queue ... WHERE id = (SELECT id ... WHERE state = 'unsent'
#             ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)   (its own 1M-row table)
#   dispatch  SELECT jsonb_array_length(allot.request_work(:id, <8 CPU + 1 GPU>) -> 'jobs')
# each for DURATION s at CLIENTS clients, on random hosts.  Jobs per
# transaction are counted, not assumed: in_progress jobs (allot.job_usage)
# and taken queue rows before and after each run.  Then the fairness of
# what is in progress, and a SOAK-second steady run (dispatch_soak.sql:
# report the host's jobs, ask again, and replace every job sent by a new
# unsent one) with jobs dispatched per minute from allot.job.sent_at, the
# size of allot.job before and after, and check_invariants().
#
# Usage: bench/dispatch.sh
#   Needs PostgreSQL 15 (initdb, pg_ctl, psql, pgbench) and allot installed
#   into it (README install step: make && make install).  Builds nothing.
#   Starts a throwaway cluster in a temp dir (unix socket in that dir only),
#   as user postgres when run as root, and removes it on exit, pass or fail.
#   Before each timed run it waits until no pgbench runs on the machine (other
#   benchmarks) and the 1-minute load average is below LOAD_MAX.
#
# Environment:
#   DURATION=30          seconds per comparison run (3 runs)
#   SOAK=300             seconds of the steady run (0: skip it)
#   CLIENTS=8            client count of every run
#   THREADS=2            pgbench worker threads (-j)
#   WARMUP=5             untimed seconds of each comparison script first
#   NHOSTS=100000 NJOBS=1000000 NQUEUE=1000000   farm and queue sizes
#   SOAK_HOSTS=20000     hosts the soak cycles through (each client owns
#                        SOAK_HOSTS/CLIENTS of them); one untimed lap first
#   LOAD_MAX=2.5         wait for a 1-minute load average below this
#   PROFILE=0            1: load pg_stat_statements (track = all) and print
#                        the statements of the dispatch run by time
#   PG_CONFIG=pg_config  which PostgreSQL installation to use
#
# The report is also written to bench/out/dispatch-<date>.txt (git-ignored).
set -euo pipefail

DURATION=${DURATION:-30}
SOAK=${SOAK:-300}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
WARMUP=${WARMUP:-5}
NHOSTS=${NHOSTS:-100000}
NJOBS=${NJOBS:-1000000}
NQUEUE=${NQUEUE:-1000000}
SOAK_HOSTS=${SOAK_HOSTS:-20000}
LOAD_MAX=${LOAD_MAX:-2.5}
PROFILE=${PROFILE:-0}
PG_CONFIG=${PG_CONFIG:-pg_config}

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
DB=bench_dispatch
sql() { psql_q -d "$DB" -At -c "$1"; }


# ---------------------------------------------------------------------------
# The farm.

t0=$SECONDS
say "database $DB: $NHOSTS hosts, 20 apps, 50 job workloads, $NJOBS unsent jobs; bench_queue of $NQUEUE rows"
psql_q -c "CREATE DATABASE $DB"
if ! psql_q -d "$DB" -c 'CREATE EXTENSION allot' 2>"$WORK/create_extension.err"; then
    cat "$WORK/create_extension.err" >&2
    die "CREATE EXTENSION allot failed: is allot installed into $("$PG_CONFIG" --sharedir)/extension?
       Install it first (README: make && make install), then rerun."
fi
[ "$PROFILE" != 1 ] || psql_q -d "$DB" -c 'CREATE EXTENSION pg_stat_statements'
bg_run psql_q -d "$DB" -v nhosts="$NHOSTS" -v njobs="$NJOBS" -v nqueue="$NQUEUE" \
    -f "$BENCH_DIR/dispatch_data.sql" >/dev/null || die "data setup failed"
EXT_VERSION=$(sql "SELECT extversion FROM pg_extension WHERE extname = 'allot'")
FARM=$(sql "SELECT format('%s hosts (%s with a GPU), %s apps (%s with a GPU version), %s job workloads (%s at the top priority), %s unsent jobs',
        (SELECT count(*) FROM allot.host), (SELECT count(DISTINCT host_id) FROM allot.host_coproc),
        (SELECT count(*) FROM allot.app),
        (SELECT count(DISTINCT app_id) FROM allot.app_version WHERE resource <> 'cpu'),
        (SELECT count(*) FROM allot.workload),
        (SELECT count(*) FROM allot.workload WHERE priority = (SELECT max(priority) FROM allot.workload)),
        (SELECT sum(unsent) FROM allot.job_usage))")
say "    $FARM"
say "database $DB ready in $((SECONDS - t0)) s"

# How many jobs the farm has sent, and how many queue rows are taken.
in_progress() { sql "SELECT coalesce(sum(in_progress), 0) FROM allot.job_usage"; }
taken() { sql "SELECT count(*) FROM public.bench_queue WHERE state = 'taken'"; }

# run NAME SCRIPT [pgbench args...]: one timed pgbench run after the machine
# is quiet; sets RUN_TPS, RUN_N (transactions), RUN_P99 (ms, from the
# per-transaction logs), RUN_LOAD, RUN_START (server time just before) and
# RUN_MD5 (of the allot.so the run's clients load).
run() {
    local name=$1 script=$2 prefix="$WORK/log/$1" jobs=$THREADS
    shift 2
    [ "$jobs" -le "$CLIENTS" ] || jobs=$CLIENTS
    mkdir -p "$WORK/log"
    rm -f "$prefix".*
    psql_q -d "$DB" -c CHECKPOINT
    wait_quiet "$name"
    RUN_LOAD=$QUIET_LOAD
    local so_before
    so_before=$(date -u -r "$ALLOT_SO" '+%s.%N' 2>/dev/null || echo unknown)
    RUN_MD5=$(md5sum <"$ALLOT_SO" 2>/dev/null | cut -c1-8 || echo unknown)
    RUN_START=$(sql "SELECT now()")
    bg_run pgbench -n -M prepared -c "$CLIENTS" -j "$jobs" -D nhosts="$NHOSTS" \
        -f "$script" -l --log-prefix="$prefix" "$@" "$DB" >"$prefix-summary.txt" 2>&1 ||
        { cat "$prefix-summary.txt" >&2; die "pgbench $name failed"; }
    RUN_TPS=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$prefix-summary.txt" | tail -n 1)
    RUN_N=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$prefix-summary.txt")
    [ -n "$RUN_TPS" ] && [ -n "$RUN_N" ] ||
        { cat "$prefix-summary.txt" >&2; die "no tps in the output of pgbench $name"; }
    grep -q '^number of failed transactions: 0 ' "$prefix-summary.txt" ||
        ! grep -q '^number of failed transactions' "$prefix-summary.txt" ||
        { cat "$prefix-summary.txt" >&2; die "pgbench $name had failed transactions"; }
    # A new allot.so installed during the run: its clients ran the old one,
    # and the other runs may have run another.
    if [ "$(date -u -r "$ALLOT_SO" '+%s.%N' 2>/dev/null || echo unknown)" != "$so_before" ]; then
        SO_REPLACED="$SO_REPLACED $name"
        say "    WARNING: $ALLOT_SO was replaced during the $name run"
    fi
    # Log column 3 is the transaction's latency in microseconds.
    RUN_P99=$(cat "$prefix".* | awk '{ print $3 }' | sort -n |
              awk '{ v[NR] = $1 } END { i = int(NR * 0.99 + 0.999999); if (i < 1) i = 1;
                                         printf "%.2f", v[i] / 1000 }')
}

ALLOT_SO="$("$PG_CONFIG" --pkglibdir)/allot.so"
SO_MTIME=$(date -u -r "$ALLOT_SO" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || echo unknown)
SO_MD5=$(md5sum <"$ALLOT_SO" 2>/dev/null | cut -c1-12 || echo unknown)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
SO_REPLACED=
mkdir -p "$BENCH_DIR/out"
REPORT="$BENCH_DIR/out/dispatch-$(date +%Y%m%d-%H%M%S).txt"

# ---------------------------------------------------------------------------
# Comparison runs.

if [ "$WARMUP" -gt 0 ]; then
    # A fresh cluster and freshly loaded tables run slower for a while (new
    # WAL segments, first writes to vacuumed pages): warm up untimed.
    wait_quiet warm-up
    say "warm-up, ${WARMUP}s of each script (untimed)"
    for script in dispatch_baseline dispatch_dequeue dispatch_request; do
        bg_run pgbench -n -M prepared -T "$WARMUP" -c "$CLIENTS" -j "$THREADS" -D nhosts="$NHOSTS" \
            -f "$BENCH_DIR/$script.sql" "$DB" >"$WORK/warmup.out" 2>&1 ||
            { cat "$WORK/warmup.out" >&2; die "warm-up with $script failed"; }
    done
fi

ROWS=()
say "baseline ${DURATION}s"
run baseline "$BENCH_DIR/dispatch_baseline.sql" -T "$DURATION"
ROWS+=("baseline $RUN_TPS $RUN_N 0 $RUN_P99 $RUN_MD5 $RUN_LOAD")
B_TPS=$RUN_TPS
say "    $RUN_TPS tps, p99 $RUN_P99 ms"

say "plain dequeue ${DURATION}s"
before=$(taken)
run dequeue "$BENCH_DIR/dispatch_dequeue.sql" -T "$DURATION"
Q_JOBS=$(( $(taken) - before ))
ROWS+=("dequeue $RUN_TPS $RUN_N $Q_JOBS $RUN_P99 $RUN_MD5 $RUN_LOAD")
Q_JPS=$(awk -v t="$RUN_TPS" -v j="$Q_JOBS" -v n="$RUN_N" 'BEGIN { printf "%.1f", t * j / n }')
say "    $RUN_TPS tps, $Q_JOBS rows taken in $RUN_N transactions, p99 $RUN_P99 ms"

[ "$PROFILE" != 1 ] || sql "SELECT pg_stat_statements_reset()" >/dev/null
say "dispatch ${DURATION}s"
before=$(in_progress)
run dispatch "$BENCH_DIR/dispatch_request.sql" -T "$DURATION"
D_JOBS=$(( $(in_progress) - before ))
ROWS+=("dispatch $RUN_TPS $RUN_N $D_JOBS $RUN_P99 $RUN_MD5 $RUN_LOAD")
D_JPS=$(awk -v t="$RUN_TPS" -v j="$D_JOBS" -v n="$RUN_N" 'BEGIN { printf "%.1f", t * j / n }')
say "    $RUN_TPS tps, $D_JOBS jobs sent in $RUN_N requests, p99 $RUN_P99 ms"

if [ "$PROFILE" = 1 ]; then
    psql_q -d "$DB" -c "\\pset footer off" -c "
        SELECT calls, round(total_exec_time::numeric, 0) AS total_ms,
               round(mean_exec_time::numeric, 3) AS mean_ms,
               round((100 * total_exec_time / sum(total_exec_time) FILTER (WHERE toplevel) OVER ())::numeric, 1)
                   AS \"% of top-level\",
               rows, toplevel AS top, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query
          FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         ORDER BY total_exec_time DESC LIMIT 20" >"$WORK/profile.txt"
fi

psql_q -d "$DB" -f "$BENCH_DIR/dispatch_fairness.sql" >"$WORK/fairness.txt"

# ---------------------------------------------------------------------------
# Soak.

SOAK_DONE=
if [ "$SOAK" -gt 0 ]; then
    lap=$((SOAK_HOSTS / CLIENTS))
    soak_args=(-D lap="$lap" -D k=0 -D clients="$CLIENTS")
    wait_quiet soak-prime
    say "soak: one untimed lap over $((lap * CLIENTS)) hosts ($lap requests per client)"
    bg_run pgbench -n -M prepared -t "$lap" -c "$CLIENTS" -j "$THREADS" "${soak_args[@]}" \
        -f "$BENCH_DIR/dispatch_soak.sql" "$DB" >"$WORK/prime.out" 2>&1 ||
        { cat "$WORK/prime.out" >&2; die "soak priming lap failed"; }

    sizes() {
        sql "SELECT format('heap %s, indexes %s (%s), total %s; %s live / %s dead tuples, autovacuumed %s times; %s unsent, %s in progress',
                pg_size_pretty(pg_relation_size('allot.job')),
                pg_size_pretty(pg_indexes_size('allot.job')),
                (SELECT string_agg(format('%s %s', c.relname, pg_size_pretty(pg_relation_size(c.oid))), ', ' ORDER BY c.relname)
                   FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                  WHERE i.indrelid = 'allot.job'::regclass),
                pg_size_pretty(pg_total_relation_size('allot.job')),
                n_live_tup, n_dead_tup, autovacuum_count,
                (SELECT sum(unsent) FROM allot.job_usage), (SELECT sum(in_progress) FROM allot.job_usage))
              FROM pg_stat_user_tables WHERE relid = 'allot.job'::regclass"
    }
    # The statistics collector lags a little; give it a moment.
    sleep 1
    SIZE_BEFORE=$(sizes)
    TOTAL_BEFORE=$(sql "SELECT pg_total_relation_size('allot.job')")
    MAX_JOB_BEFORE=$(sql "SELECT max(id) FROM allot.job")
    say "soak ${SOAK}s at $CLIENTS clients"
    run soak "$BENCH_DIR/dispatch_soak.sql" -T "$SOAK" -P 10 -r "${soak_args[@]}"
    S_START=$RUN_START S_TPS=$RUN_TPS S_N=$RUN_N S_P99=$RUN_P99 S_LOAD=$RUN_LOAD S_MD5=$RUN_MD5
    sleep 1
    SIZE_AFTER=$(sizes)
    TOTAL_AFTER=$(sql "SELECT pg_total_relation_size('allot.job')")
    grep '^progress:' "$WORK/log/soak-summary.txt" >"$WORK/progress.txt" || true
    # pgbench -r: mean latency of each statement of the script.
    sed -n '/^statement latencies/,$p' "$WORK/log/soak-summary.txt" | sed 1d |
        awk '$1 ~ /^[0-9.]+$/ { ms = $1; $1 = ""; if ($1 == "" && $2 ~ /^[0-9]+$/) $2 = "";
                                sub(/^ +/, ""); printf "  %9.3f ms  %s\n", ms, substr($0, 1, 100) }' >"$WORK/statements.txt"

    # Jobs sent per minute of the run, from allot.job.sent_at (the start of
    # the sending transaction; a job is sent once here: nothing is aborted or
    # timed out).  What starts after the last full minute counts in it.
    nmin=$(( (SOAK + 59) / 60 ))
    sql "SELECT g.m, count(s.m) FROM generate_series(0, $nmin - 1) AS g(m) LEFT JOIN (
             SELECT least(floor(extract(epoch FROM sent_at - '$S_START'::timestamptz) / 60), $nmin - 1)::int AS m
               FROM allot.job WHERE sent_at >= '$S_START'::timestamptz) s ON s.m = g.m
         GROUP BY g.m ORDER BY g.m" | tr '|' ' ' >"$WORK/jobs_per_min.txt"
    # Transactions per minute, from the per-transaction logs (column 5: the
    # epoch second the transaction ended).
    start_epoch=$(sql "SELECT extract(epoch FROM '$S_START'::timestamptz)")
    cat "$WORK/log/soak".* | awk -v s="$start_epoch" -v n="$nmin" '
        { m = int(($5 + $6 / 1e6 - s) / 60); if (m < 0) m = 0; if (m > n - 1) m = n - 1; c[m]++ }
        END { for (i = 0; i < n; i++) print i, c[i] + 0 }' >"$WORK/txn_per_min.txt"
    REPORTED=$(sql "SELECT format('%s jobs reported (%s successes), %s new unsent jobs inserted',
                          count(*), count(*) FILTER (WHERE outcome = 'success'),
                          (SELECT count(*) FROM allot.job j WHERE j.id > $MAX_JOB_BEFORE))
                      FROM allot.job_report WHERE reported_at >= '$S_START'::timestamptz")
    INVARIANTS=$(sql "SELECT coalesce(string_agg(c, E'\n'), '') FROM allot.check_invariants() c")
    DISTINCT=$(sql "SELECT format('%s rows, %s distinct ids', count(*), count(DISTINCT id))
                      FROM allot.job WHERE state = 'in_progress'")
    SOAK_DONE=1
fi

# ---------------------------------------------------------------------------
# Report.

report() {
    local r name tps n jobs p99 md5 l1 l2 l3
    echo "allot request_work (dispatch) benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n)"
    echo "PostgreSQL $(psql -X -At -c 'SHOW server_version'), $(nproc) CPUs;" \
         "shared_buffers=1GB, max_connections=100, fsync=on, synchronous_commit=on (defaults), autovacuum on (defaults)"
    echo "allot $EXT_VERSION ($ALLOT_SO, md5 $SO_MD5..., modified $SO_MTIME)$([ "$PROFILE" = 1 ] && echo '; pg_stat_statements loaded (PROFILE=1)')"
    echo "farm: $FARM"
    echo "pgbench -n -M prepared -c $CLIENTS -j $THREADS -T $DURATION (after ${WARMUP}s untimed warm-up per script); random host of $NHOSTS per transaction"
    echo "dispatch request: {\"resources\": {\"cpu\": {\"req_instances\": 8}, \"nvidia\": {\"req_instances\": 1}}}"
    echo "load average when the script started: $LOAD_BEFORE; each run waited for no other pgbench and a 1-min load < $LOAD_MAX"
    echo
    printf '%-10s %10s %10s %9s %10s %10s  %-9s %s\n' run tps "txns" "jobs/txn" "jobs/s" "p99" "allot.so" "load average at start"
    for r in "${ROWS[@]}"; do
        read -r name tps n jobs p99 md5 l1 l2 l3 <<<"$r"
        if [ "$name" = baseline ]; then
            printf '%-10s %10.0f %10s %9s %10s %7s ms  %-9s %s %s %s\n' "$name" "$tps" "$n" - - "$p99" "$md5" "$l1" "$l2" "$l3"
        else
            printf '%-10s %10.0f %10s %9.2f %10.0f %7s ms  %-9s %s %s %s\n' "$name" "$tps" "$n" \
                "$(awk -v j="$jobs" -v n="$n" 'BEGIN { print j / n }')" \
                "$(awk -v t="$tps" -v j="$jobs" -v n="$n" 'BEGIN { print t * j / n }')" "$p99" "$md5" "$l1" "$l2" "$l3"
        fi
    done
    echo
    awk -v j="$Q_JOBS" -v n="$(echo "${ROWS[1]}" | awk '{ print $3 }')" 'BEGIN {
        if (j < 0.99 * n) printf("WARNING: the plain queue ran dry (%d rows taken in %d transactions): rerun with a larger NQUEUE\n", j, n) }'
    awk -v d="$D_JPS" -v q="$Q_JPS" -v dt="$(echo "${ROWS[2]}" | awk '{ print $2 }')" -v b="$B_TPS" 'BEGIN {
        printf("dispatch jobs/s / dequeue jobs/s = %.0f / %.0f = %.2f (target >= 1): %s\n",
               d, q, d / q, (d >= q) ? "PASS" : "FAIL")
        printf("dispatch tps / baseline tps = %.2f; dequeue tps / baseline tps = %.2f\n", dt / b, q / b) }'
    echo
    echo "Fairness after the comparison runs (jobs in progress, top priority):"
    cat "$WORK/fairness.txt"
    if [ "$PROFILE" = 1 ]; then
        echo
        echo "pg_stat_statements over the dispatch run (track = all; nested statements overlap their callers):"
        cat "$WORK/profile.txt"
    fi
    [ -n "$SOAK_DONE" ] || return 0
    echo
    echo "Soak: ${SOAK}s at $CLIENTS clients (bench/dispatch_soak.sql: report the host's jobs, request 8 CPU + 1 GPU," \
         "one new unsent job per job sent), $SOAK_HOSTS hosts round-robin after one untimed lap; allot.so $S_MD5; load average at start: $S_LOAD"
    printf '%.0f tps (2 statements per transaction), %s transactions, p99 %s ms\n' "$S_TPS" "$S_N" "$S_P99"
    echo "during the soak: $REPORTED"
    echo "allot.job before: $SIZE_BEFORE"
    echo "allot.job after:  $SIZE_AFTER"
    awk -v b="$TOTAL_BEFORE" -v a="$TOTAL_AFTER" 'BEGIN {
        printf("pg_total_relation_size(allot.job): %.1f MB -> %.1f MB (%+.1f%%)\n", b / 1048576, a / 1048576, 100 * (a - b) / b) }'
    echo
    printf '%8s %12s %12s %10s %10s\n' minute transactions "jobs sent" jobs/txn jobs/s
    # One line per minute: minute, transactions, jobs sent, jobs/txn, jobs/s.
    awk -v soak="$SOAK" 'NR == FNR { jobs[$1] = $2; next }
        { secs = (soak - 60 * $1 < 60) ? soak - 60 * $1 : 60; j = jobs[$1] + 0
          printf "%8d %12d %12d %10.2f %10.0f\n", $1 + 1, $2, j, ($2 ? j / $2 : 0), j / secs
          r[++n] = j / secs }
        END { if (n < 2) exit; d = (r[n] - r[1]) / r[1]
              printf("last minute vs first: %.0f vs %.0f jobs/s (%+.1f%%); target within 10%%: %s\n",
                     r[n], r[1], 100 * d, (d <= 0.1 && d >= -0.1) ? "PASS" : "FAIL") }' \
        "$WORK/jobs_per_min.txt" "$WORK/txn_per_min.txt"
    echo "mean latency per statement (pgbench -r):"
    cat "$WORK/statements.txt"
    echo "pgbench progress (-P 10):"
    sed 's/^/  /' "$WORK/progress.txt"
    echo "check_invariants(): $([ -z "$INVARIANTS" ] && echo 'empty (ok)' || echo "$INVARIANTS")"
    echo "jobs in progress: $DISTINCT"
}
if [ -n "$SO_REPLACED" ]; then
    SO_MTIME="$SO_MTIME, REPLACED DURING THE TIMED RUNS ($SO_REPLACED ): rerun"
elif [ "$(date -u -r "$ALLOT_SO" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || echo unknown)" != "$SO_MTIME" ]; then
    SO_MTIME="$SO_MTIME, replaced during the script but not during a timed run: the runs may have used different builds, rerun"
fi
report | tee "$REPORT"
echo "(written to bench/out/${REPORT##*/})"
