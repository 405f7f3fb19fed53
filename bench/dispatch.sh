#!/usr/bin/env bash
# Benchmark of allot.request_work: jobs dispatched per second, against a
# plain job queue and a one-row UPDATE measured in the same run on the same
# server, then a soak.
#
# Issue 12: 100,000 hosts, 1,000,000 unsent jobs over 50 job workloads; each
# request asks for 8 CPU instances and 1 GPU instance.  Targets at 8
# clients: at least twice the jobs/s of a one-job FOR UPDATE SKIP LOCKED
# dequeue, p99 <= 10 ms, no decay over a 5-minute soak, and fairness: each
# workload's share of what is in progress within 1% of its throughput share.
#
# On one throwaway server, back to back, CLIENTS clients, random hosts:
#   update    UPDATE public.bench_host SET last_seen = now() WHERE id = :id
#             (a copy of allot.host, so that allot's hosts are left alone)
#   dequeue   UPDATE bench_queue ... WHERE id = (SELECT id ... WHERE state = 'unsent'
#             ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)   (its own table)
#   dispatch  SELECT jsonb_array_length(allot.request_work(:id, <8 CPU + 1 GPU>) -> 'jobs')
# each for DURATION s (bench/dispatch_*.sql).  Jobs per transaction are
# counted, not assumed: jobs in progress (allot.job_usage) and queue rows
# taken, before and after.  Each run reports tps, jobs/s, p50/p99, server CPU
# per transaction and per job, buffers and WAL per transaction, and the
# machine's other load (bench/cluster.sh).  Then the fairness of what is in
# progress (bench/dispatch_fairness.sql); with PROFILE=1 one more dispatch
# run with pg_stat_statements.track = all, listing allot's inner statements;
# and a SOAK-second steady run (bench/dispatch_soak.sql: a host reports the
# jobs it holds, asks again, and every job sent is replaced by a new unsent
# one), with jobs/s and server CPU per job in each WINDOW of it, the first
# and last compared, the size of allot.job before and after, and
# check_invariants().
#
# Usage: bench/dispatch.sh            (full: ~12 min on a 2-CPU machine)
#        QUICK=1 bench/dispatch.sh    (smaller farm, 5 s runs, 60 s soak: ~3 min)
#   Needs PostgreSQL 14+ (initdb, pg_ctl, psql, pgbench, pg_stat_statements)
#   with allot installed into it; builds and installs nothing.  Starts a
#   throwaway cluster in a temp dir (unix socket in that dir only), as user
#   postgres when run as root, and removes it on exit, pass or fail.
#
# Environment:
#   PG_CONFIG=pg_config  the PostgreSQL installation, and the allot in it
#   DURATION=30          seconds per comparison run
#   WARMUP=5             untimed seconds of each comparison script first
#   SOAK=300 WINDOW=60   seconds of the steady run (0: none), and of the windows
#                        compared in it
#   CLIENTS=8            client count of every run
#   THREADS=2            pgbench worker threads (-j)
#   NHOSTS=100000 NJOBS=1000000 NQUEUE=1000000   farm and queue sizes
#   SOAK_HOSTS=20000     hosts the soak cycles through (each client owns
#                        SOAK_HOSTS/CLIENTS of them); one untimed lap first
#   PROFILE=1            0: no profile run
#   BUSY_MAX=25 WAIT_MAX=60    quiet machine: see bench/cluster.sh
#   QUICK=1 sets NHOSTS=20000 NJOBS=200000 NQUEUE=200000 SOAK_HOSTS=4000
#   DURATION=5 WARMUP=2 SOAK=60 WINDOW=20 WAIT_MAX=10 (each still overridable).
#
# The report is also written to bench/out/dispatch-<date>.txt (git-ignored).
set -euo pipefail

if [ "${QUICK:-0}" = 1 ]; then
    NHOSTS=${NHOSTS:-20000} NJOBS=${NJOBS:-200000} NQUEUE=${NQUEUE:-200000}
    SOAK_HOSTS=${SOAK_HOSTS:-4000} DURATION=${DURATION:-5} WARMUP=${WARMUP:-2}
    SOAK=${SOAK:-60} WINDOW=${WINDOW:-20} WAIT_MAX=${WAIT_MAX:-10}
fi
DURATION=${DURATION:-30}
WARMUP=${WARMUP:-5}
SOAK=${SOAK:-300}
WINDOW=${WINDOW:-60}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
NHOSTS=${NHOSTS:-100000}
NJOBS=${NJOBS:-1000000}
NQUEUE=${NQUEUE:-1000000}
SOAK_HOSTS=${SOAK_HOSTS:-20000}
PROFILE=${PROFILE:-1}
PG_CONFIG=${PG_CONFIG:-pg_config}
[ "$SOAK" -eq 0 ] || [ "$SOAK" -ge $((2 * WINDOW)) ] || { echo "error: SOAK must be 0 or at least 2 x WINDOW" >&2; exit 1; }

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
DB=bench_dispatch
sql() { psql_q -d "$DB" -At -c "$1"; }
JOBS=$((THREADS < CLIENTS ? THREADS : CLIENTS))
TABLES="'host', 'job', 'job_usage', 'host_app_version', 'host_resource'"

# ---------------------------------------------------------------------------
# The farm.

t0=$SECONDS
say "database $DB: $NHOSTS hosts, 20 apps, 50 job workloads, $NJOBS unsent jobs; bench_queue of $NQUEUE rows"
create_bench_db "$DB"
bg_run psql_q -d "$DB" -v nhosts="$NHOSTS" -v njobs="$NJOBS" -v nqueue="$NQUEUE" \
    -f "$BENCH_DIR/dispatch_data.sql" >/dev/null || die "data setup failed"
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

# compare NAME SCRIPT COUNTER: one measured run of SCRIPT; COUNTER (a
# function, or - for none) counts its jobs.  Appends a row to ROWS.
compare() {
    local name=$1 script=$2 counter=$3 before=0 jobs=0
    [ "$counter" = - ] || before=$($counter)
    table_writes "$DB" "$TABLES" >"$WORK/writes-before"
    measure_pgbench "$name" "$DB" -c "$CLIENTS" -j "$JOBS" -T "$DURATION" -D nhosts="$NHOSTS" \
        -f "$BENCH_DIR/$script"
    [ "$counter" = - ] || jobs=$(( $($counter) - before ))
    ROWS+=("$name $RUN_TPS $RUN_N $jobs $RUN_P50 $RUN_P99 $RUN_CPU_US $RUN_STMT $RUN_WAL_B $RUN_WAL_FPI $RUN_OTHERS_PCT")
    say "    $name: $RUN_TPS tps, $jobs jobs in $RUN_N transactions, p50 $RUN_P50 ms, p99 $RUN_P99 ms," \
        "$RUN_CPU_US us server CPU/tx; before: $RUN_QUIET; others during: $RUN_OTHERS_PCT% of a CPU"
}

REPORT="$BENCH_DIR/out/dispatch-$(date +%Y%m%d-%H%M%S).txt"
mkdir -p "$BENCH_DIR/out"
START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------------------
# Comparison runs.

if [ "$WARMUP" -gt 0 ]; then
    # A fresh cluster and freshly loaded tables run slower for a while (new
    # WAL segments, first writes to vacuumed pages): warm up untimed.
    say "warm-up, ${WARMUP}s of each script (untimed)"
    for script in dispatch_baseline dispatch_dequeue dispatch_request; do
        bg_run pgbench -n -M prepared -T "$WARMUP" -c "$CLIENTS" -j "$JOBS" -D nhosts="$NHOSTS" \
            -f "$BENCH_DIR/$script.sql" "$DB" >"$WORK/warmup.out" 2>&1 ||
            { cat "$WORK/warmup.out" >&2; die "warm-up with $script failed"; }
    done
fi

ROWS=()
compare update dispatch_baseline.sql -
compare dequeue dispatch_dequeue.sql taken
compare dispatch dispatch_request.sql in_progress
table_writes "$DB" "$TABLES" >"$WORK/writes-after"
WRITES=$(awk -v n="$RUN_N" '
    NR == FNR { ins[$1] = $2; upd[$1] = $3; hot[$1] = $4; next }
    { printf "%s%s %.2f ins %.2f upd (%.0f%% HOT)", sep, $1, ($2 - ins[$1]) / n, ($3 - upd[$1]) / n,
             ($3 > upd[$1]) ? 100 * ($4 - hot[$1]) / ($3 - upd[$1]) : 0; sep = "; " }' \
    "$WORK/writes-before" "$WORK/writes-after")

psql_q -d "$DB" -f "$BENCH_DIR/dispatch_fairness.sql" >"$WORK/fairness.txt"

if [ "$PROFILE" = 1 ]; then
    say "dispatch profile run, ${DURATION}s with pg_stat_statements.track = all"
    psql_q -c "ALTER DATABASE $DB SET pg_stat_statements.track = 'all'"
    measure_pgbench profile "$DB" -c "$CLIENTS" -j "$JOBS" -T "$DURATION" -D nhosts="$NHOSTS" \
        -f "$BENCH_DIR/dispatch_request.sql"
    psql_q -c "ALTER DATABASE $DB RESET pg_stat_statements.track"
    PROFILE_TABLE=$(echo "$RUN_N requests, $RUN_TPS tps, $RUN_CPU_US us server CPU/request under track = all"
                    profile_statements "$DB" "$RUN_N" '^$')
fi

# ---------------------------------------------------------------------------
# Soak.

SOAK_DONE=
if [ "$SOAK" -gt 0 ]; then
    lap=$((SOAK_HOSTS / CLIENTS))
    soak_args=(-c "$CLIENTS" -j "$JOBS" -D lap="$lap" -D k=0 -D clients="$CLIENTS")
    say "soak: one untimed lap over $((lap * CLIENTS)) hosts ($lap requests per client)"
    bg_run pgbench -n -M prepared -t "$lap" "${soak_args[@]}" \
        -f "$BENCH_DIR/dispatch_soak.sql" "$DB" >"$WORK/prime.out" 2>&1 ||
        { cat "$WORK/prime.out" >&2; die "soak priming lap failed"; }
    # The lap left jobs in progress where the data had none: statistics as
    # autovacuum's ANALYZE would soon make them, so that the soak's own
    # query of a host's jobs plans on job_host_in_progress_idx.
    sql "ANALYZE allot.job" >/dev/null

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
    # The statistics lag a little; give them a moment.
    sleep 1
    SIZE_BEFORE=$(sizes)
    TOTAL_BEFORE=$(sql "SELECT pg_total_relation_size('allot.job')")
    MAX_JOB_BEFORE=$(sql "SELECT max(id) FROM allot.job")
    say "soak ${SOAK}s at $CLIENTS clients"
    cpu_sampler_start "$WORK/cpu-samples.txt"
    measure_pgbench soak "$DB" -T "$SOAK" -P 10 -r "${soak_args[@]}" -f "$BENCH_DIR/dispatch_soak.sql"
    cpu_sampler_stop
    S_TPS=$RUN_TPS S_N=$RUN_N S_P50=$RUN_P50 S_P99=$RUN_P99 S_CPU=$RUN_CPU_US S_STMT=$RUN_STMT
    S_WAL=$RUN_WAL_B S_OTHERS=$RUN_OTHERS_PCT S_QUIET=$RUN_QUIET
    sleep 1
    SIZE_AFTER=$(sizes)
    TOTAL_AFTER=$(sql "SELECT pg_total_relation_size('allot.job')")
    grep '^progress:' "$RUN_SUMMARY" >"$WORK/progress.txt" || true
    # pgbench -r: mean latency of each statement of the script.
    sed -n '/^statement latencies/,$p' "$RUN_SUMMARY" | sed 1d |
        awk '$1 ~ /^[0-9.]+$/ { ms = $1; $1 = ""; if ($1 == "" && $2 ~ /^[0-9]+$/) $2 = "";
                                sub(/^ +/, ""); printf "  %9.3f ms  %s\n", ms, substr($0, 1, 100) }' >"$WORK/statements.txt"

    # Per window of the run: transactions (per-transaction logs, column 5:
    # the epoch second a transaction ended), jobs sent (allot.job.sent_at,
    # the start of the sending transaction: a job is sent once here, nothing
    # is aborted or timed out) and server CPU (the sampler, interpolated at
    # the window's edges).  What ends after the last full window counts in it.
    nwin=$((SOAK / WINDOW))
    cat "$RUN_LOG".* | awk -v s="$RUN_START" -v w="$WINDOW" -v n="$nwin" '
        { m = int(($5 + $6 / 1e6 - s) / w); if (m < 0) m = 0; if (m > n - 1) m = n - 1; c[m]++ }
        END { for (i = 0; i < n; i++) print i, c[i] + 0 }' >"$WORK/txn_per_window.txt"
    sql "SELECT g.m, count(s.m) FROM generate_series(0, $nwin - 1) AS g(m) LEFT JOIN (
             SELECT least(floor((extract(epoch FROM sent_at) - $RUN_START) / $WINDOW), $nwin - 1)::int AS m
               FROM allot.job WHERE sent_at >= to_timestamp($RUN_START)) s ON s.m = g.m
         GROUP BY g.m ORDER BY g.m" | tr '|' ' ' >"$WORK/jobs_per_window.txt"
    awk -v s="$RUN_START" -v w="$WINDOW" -v n="$nwin" -v soak="$SOAK" '
        { t[NR] = $1; c[NR] = $2 }
        function at(x,   i) { for (i = 2; i <= NR; i++) if (t[i] >= x) return c[i - 1] + (c[i] - c[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1]); return c[NR] }
        END { for (m = 0; m < n; m++) { e = (m == n - 1) ? s + soak : s + w * (m + 1); print m, at(e) - at(s + w * m) } }' \
        "$WORK/cpu-samples.txt" >"$WORK/cpu_per_window.txt"
    REPORTED=$(sql "SELECT format('%s jobs reported (%s successes), %s new unsent jobs inserted',
                          count(*), count(*) FILTER (WHERE outcome = 'success'),
                          (SELECT count(*) FROM allot.job j WHERE j.id > $MAX_JOB_BEFORE))
                      FROM allot.job_report WHERE reported_at >= to_timestamp($RUN_START)")
    INVARIANTS=$(sql "SELECT coalesce(string_agg(c, E'\n'), '') FROM allot.check_invariants() c")
    DISTINCT=$(sql "SELECT format('%s rows, %s distinct ids', count(*), count(DISTINCT id))
                      FROM allot.job WHERE state = 'in_progress'")
    SOAK_DONE=1
fi

# ---------------------------------------------------------------------------
# Report.

report() {
    local r name tps n jobs p50 p99 cpu hit rd dt wb wr wal fpi oth
    report_header "allot request_work (dispatch) benchmark"
    echo "farm: $FARM"
    echo "pgbench -n -M prepared -c $CLIENTS -j $JOBS -T $DURATION (after ${WARMUP}s untimed of each script); random host of $NHOSTS per transaction"
    echo "dispatch request: {\"resources\": {\"cpu\": {\"req_instances\": 8}, \"nvidia\": {\"req_instances\": 1}}}"
    echo "load average when the script started: $START_LOAD"
    echo
    echo "Per transaction: server CPU (all the cluster's processes; and per job), buffers and WAL of the statement"
    echo "(pg_stat_statements), WAL in all (pg_stat_wal) and full-page images; others: the rest of the machine's busy CPU"
    echo "during the run, in % of one CPU (what skews tps)."
    printf '%-9s %7s %8s %8s %6s %6s %8s %7s %7s %6s %6s %7s %6s %6s %6s %6s\n' run tps jobs/tx jobs/s p50ms p99ms \
        "CPU us" "us/job" hit read dirty stmtWAL walrec "WAL B" fpi others%
    for r in "${ROWS[@]}"; do
        read -r name tps n jobs p50 p99 cpu hit rd dt wb wr wal fpi oth <<<"$r"
        if [ "$jobs" = 0 ]; then
            printf '%-9s %7.0f %8s %8s %6s %6s %8s %7s %7s %6s %6s %7s %6s %6s %6s %6s\n' "$name" "$tps" - - \
                "$p50" "$p99" "$cpu" - "$hit" "$rd" "$dt" "$wb" "$wr" "$wal" "$fpi" "$oth"
        else
            printf '%-9s %7.0f %8.2f %8.0f %6s %6s %8s %8.1f %7s %6s %6s %7s %6s %6s %6s %6s\n' "$name" "$tps" \
                "$(awk -v j="$jobs" -v n="$n" 'BEGIN { print j / n }')" \
                "$(awk -v t="$tps" -v j="$jobs" -v n="$n" 'BEGIN { print t * j / n }')" "$p50" "$p99" "$cpu" \
                "$(awk -v c="$cpu" -v j="$jobs" -v n="$n" 'BEGIN { print c * n / j }')" \
                "$hit" "$rd" "$dt" "$wb" "$wr" "$wal" "$fpi" "$oth"
        fi
    done
    echo "dispatch wrote, per request: $WRITES"
    echo
    printf '%s\n' "${ROWS[@]}" | awk '
        { tps[$1] = $2; n[$1] = $3; jobs[$1] = $4; p99[$1] = $6; cpu[$1] = $7 }
        END {
            if (jobs["dequeue"] < 0.99 * n["dequeue"])
                printf("WARNING: the plain queue ran dry (%d rows taken in %d transactions): rerun with a larger NQUEUE\n",
                       jobs["dequeue"], n["dequeue"])
            d = tps["dispatch"] * jobs["dispatch"] / n["dispatch"]; q = tps["dequeue"] * jobs["dequeue"] / n["dequeue"]
            dc = cpu["dispatch"] * n["dispatch"] / jobs["dispatch"]; qc = cpu["dequeue"] * n["dequeue"] / jobs["dequeue"]
            printf("Issue 12 targets:\n")
            printf("  dispatch jobs/s / dequeue jobs/s = %.0f / %.0f = %.2f; in server CPU per job, dequeue / dispatch = %.1f / %.1f = %.2f (target >= 2): %s\n",
                   d, q, d / q, qc, dc, qc / dc,
                   (d / q >= 2 && qc / dc >= 2) ? "PASS" : (d / q >= 2 || qc / dc >= 2) ? "PASS in " ((d / q >= 2) ? "jobs/s" : "CPU") " only" : "FAIL")
            printf("  dispatch p99 = %s ms (target <= 10 ms): %s\n", p99["dispatch"], (p99["dispatch"] <= 10) ? "PASS" : "FAIL")
            printf("  dispatch tps / update tps = %.2f, CPU/tx x %.1f; dequeue tps / update tps = %.2f, CPU/tx x %.1f\n",
                   tps["dispatch"] / tps["update"], cpu["dispatch"] / cpu["update"],
                   tps["dequeue"] / tps["update"], cpu["dequeue"] / cpu["update"]) }'
    echo
    echo "Fairness after the comparison runs (jobs in progress, top priority):"
    cat "$WORK/fairness.txt"
    if [ "$PROFILE" = 1 ]; then
        echo
        echo "Profile: pg_stat_statements.track = all over one more dispatch run; per request (tx): how often each"
        echo "statement ran, its mean time, rows, and per call its buffers and WAL.  Inner statements are allot's SPI"
        echo "statements (and its triggers'), and their time is inside the top-level one's."
        echo "$PROFILE_TABLE"
    fi
    [ -n "$SOAK_DONE" ] || return 0
    echo
    echo "Soak: ${SOAK}s at $CLIENTS clients (bench/dispatch_soak.sql: report the host's jobs, request 8 CPU + 1 GPU," \
         "one new unsent job per job sent), $SOAK_HOSTS hosts round-robin after one untimed lap; before: $S_QUIET"
    echo "$(printf '%.0f' "$S_TPS") tps (2 statements per transaction), $S_N transactions, p50 $S_P50 ms, p99 $S_P99 ms;" \
         "$S_CPU us server CPU/tx; per tx: buffers hit/read/dirtied, statement WAL B, WAL records: $S_STMT;" \
         "WAL in all $S_WAL B; others during: $S_OTHERS% of a CPU"
    echo "during the soak: $REPORTED"
    echo "allot.job before: $SIZE_BEFORE"
    echo "allot.job after:  $SIZE_AFTER"
    awk -v b="$TOTAL_BEFORE" -v a="$TOTAL_AFTER" 'BEGIN {
        printf("pg_total_relation_size(allot.job): %.1f MB -> %.1f MB (%+.1f%%)\n", b / 1048576, a / 1048576, 100 * (a - b) / b) }'
    echo
    printf '%8s %12s %12s %10s %10s %12s\n' "window" transactions "jobs sent" jobs/txn jobs/s "CPU us/job"
    # One line per window, then the last against the first.
    awk -v soak="$SOAK" -v w="$WINDOW" -v hz="$CLK_TCK" '
        FNR == 1 { file++ }
        file == 1 { jobs[$1] = $2; next }
        file == 2 { cpu[$1] = $2; next }
        { secs = (soak - w * $1 < 2 * w) ? soak - w * $1 : w; j = jobs[$1] + 0
          us = j ? cpu[$1] / hz * 1e6 / j : 0
          printf "%7ds %12d %12d %10.2f %10.0f %12.1f\n", w * $1, $2, j, ($2 ? j / $2 : 0), j / secs, us
          r[++n] = j / secs; c[n] = us }
        END { if (n < 2) exit; d = (r[n] - r[1]) / r[1]; e = (c[n] - c[1]) / c[1]
              printf("last window vs first: %.0f vs %.0f jobs/s (%+.1f%%), %.1f vs %.1f us server CPU per job (%+.1f%%); target within 10%%: %s\n",
                     r[n], r[1], 100 * d, c[n], c[1], 100 * e,
                     (d >= -0.1 && e <= 0.1) ? "PASS" : (d >= -0.1 || e <= 0.1) ? "PASS in " ((d >= -0.1) ? "jobs/s" : "CPU") " only" : "FAIL") }' \
        "$WORK/jobs_per_window.txt" "$WORK/cpu_per_window.txt" "$WORK/txn_per_window.txt"
    echo "mean latency per statement (pgbench -r):"
    cat "$WORK/statements.txt"
    echo "pgbench progress (-P 10):"
    sed 's/^/  /' "$WORK/progress.txt"
    echo "check_invariants(): $([ -z "$INVARIANTS" ] && echo 'empty (ok)' || echo "$INVARIANTS")"
    echo "jobs in progress: $DISTINCT"
}
report | tee "$REPORT"
echo "(written to bench/out/${REPORT##*/})"
