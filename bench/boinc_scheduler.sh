#!/usr/bin/env bash
# Benchmark of the BOINC front end's scheduler path (examples/boinc), beside
# allot.request_work alone, on one throwaway server in one run.
#
# Issue 24: the front end at 8 clients should serve >= 600 jobs/s, with
# <= 3 ms of server CPU per job and p99 <= 30 ms.  BOINC's own scheduler is
# measured beside it, in the same session, by bench/boinc_peer.sh (which
# takes a running BOINC scheduler's URL); this script measures the front end
# alone, and allot.request_work alone as its baseline.
#
# The farm: one app (3.6e12 FLOPs a job, so 3600 s on the 1e9 FLOPS the
# client states), one CPU version for x86_64-pc-linux-gnu, one job workload
# of NJOBS unsent jobs, one volunteer account.  The front end runs as in
# production (node server.js, its packages installed with `npm ci` into a
# temp dir), logged in as a member of allot_web.  bench/boinc_load.js first
# registers NHOSTS hosts (a first request with <hostid>0</hostid> each), then
# for each client count of CLIENTS, N simulated 7.20.5 clients on kept-alive
# connections send the client's request for one CPU's worth of work (3600 s,
# one instance, no reports), each for its own hosts in turn: WARMUP seconds
# untimed, then DURATION seconds timed.  Reported per run: jobs/s (counted
# in the replies), p50/p99 latency, server CPU per job split by process
# (the Node front end; PostgreSQL: the postmaster and its backends, utime +
# stime from /proc), and the front end's statements per request from
# pg_stat_statements (calls and mean time).  Then, with the front end
# stopped, allot.request_work alone through pgbench for the same hosts, the
# same request, the same client counts and durations (bench/cluster.sh's
# measure_pgbench).
#
# Usage: bench/boinc_scheduler.sh            (~3 min on a 2-CPU machine)
#   Needs PostgreSQL 14+ with allot installed into it (README install step;
#   nothing is built or installed here), Node.js 18+ and npm (the npm
#   registry, for `npm ci`).  Starts a throwaway cluster in a temp dir, as
#   user postgres when run as root, and removes it and stops the front end
#   on exit, pass or fail.
#
# Environment:
#   PG_CONFIG=pg_config   the PostgreSQL installation, and the allot in it
#   CLIENTS="1 8"         client counts
#   DURATION=30 WARMUP=3  seconds timed, and untimed first, per run
#   NHOSTS=200            hosts, all of one account
#   NJOBS=150000          unsent jobs (one a request)
#   HELD=0                1: each host lists every result it holds in
#                         <other_results> (the list grows: hosts never report)
#   PROFILE=0             1: pg_stat_statements.track = all, so that the
#                         statements list the ones inside functions too
#                         (costs some CPU: not for the headline figures)
#   NODE_PROF=0           1: the front end runs with --cpu-prof; the profile
#                         is left in bench/out/ (open it in Chrome DevTools)
#   INTAKE_ROUNDS=7       rounds of the intake phase (a real request alone,
#                         beside a stranger's 8 MiB, beside a member's
#                         2.5 MB: median and worst ms each); 0: none
#   BUSY_MAX=25 WAIT_MAX=60   quiet machine: see bench/cluster.sh
#
# The report is also written to bench/out/boinc_scheduler-<date>.txt, and
# the front end's last 2,000 log lines beside it (git-ignored).
set -euo pipefail

CLIENTS=${CLIENTS:-"1 8"}
DURATION=${DURATION:-30}
WARMUP=${WARMUP:-3}
NHOSTS=${NHOSTS:-200}
NJOBS=${NJOBS:-150000}
INTAKE_ROUNDS=${INTAKE_ROUNDS:-7}
HELD=${HELD:-0}
NODE_PROF=${NODE_PROF:-0}
PROFILE=${PROFILE:-0}
PG_CONFIG=${PG_CONFIG:-pg_config}

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
# shellcheck source=bench/boinc_farm.sh
source "$BENCH_DIR/boinc_farm.sh"
DB=bench_boinc
mkdir -p "$BENCH_DIR/out"
STAMP=$(date +%Y%m%d-%H%M%S)
REPORT="$BENCH_DIR/out/boinc_scheduler-$STAMP.txt"
sql() { psql_q -d "$DB" -At -c "$1"; }

# ---------------------------------------------------------------------------
t0=$SECONDS
boinc_farm_setup "$DB" "$NJOBS"
[ "$PROFILE" != 1 ] || psql_q -c "ALTER DATABASE $DB SET pg_stat_statements.track = 'all'"
PROF_DIR=$BENCH_DIR/out/boinc_scheduler-$STAMP-cpuprof
boinc_farm_start
boinc_farm_register "${URL}scheduler" "$NHOSTS" "$WORK/hosts"
HOSTS=$(wc -l <"$WORK/hosts")
say "database and $HOSTS hosts ready in $((SECONDS - t0)) s"

# ---------------------------------------------------------------------------
START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
PROFILES=()
for n in $CLIENTS; do
    psql_q -d "$DB" -c CHECKPOINT
    wait_quiet "front end, $n clients"
    psql_q -c 'SELECT pg_stat_statements_reset()' >/dev/null
    say "front end, $n client(s): ${WARMUP}s warm-up, ${DURATION}s timed"
    out=$(HELD=$HELD SERVER_PID=$SERVER_PID POSTMASTER_PID=$POSTMASTER_PID CLK_TCK=$CLK_TCK \
        bg_run node "$BENCH_DIR/boinc_load.js" run "${URL}scheduler" "$AUTH" "$WORK/hosts" "$DURATION" "$n" "$WARMUP") ||
        die "the load driver failed"
    # shellcheck disable=SC2016  # JavaScript, not shell
    read -r jps p50 p99 fails nms pms jobs all others < <(node -e '
        const r = JSON.parse(process.argv[1]); const hz = Number(process.argv[2]);
        const per = (t) => (r.jobs ? t / hz * 1000 / r.jobs : 0).toFixed(2);
        // The rest of the machine: busy, less the front end, the cluster and this driver (% of one CPU).
        const others = Math.max(0, (r.busy_ticks - r.node_ticks - r.pg_ticks) / hz - r.driver_us / 1e6) / r.secs * 100;
        console.log(r.jps, r.p50, r.p99, r.failures, per(r.node_ticks), per(r.pg_ticks), r.jobs, r.all_requests,
                    `driver ${(r.driver_us / 1e4 / r.secs).toFixed(0)}%, others ${others.toFixed(0)}% of a CPU`);
        if (r.failures) console.error("first failure: " + r.firstFailure);' "$out" "$CLK_TCK")
    [ "$jobs" -gt 0 ] || die "no jobs sent in the timed run: $out"
    tot=$(awk -v a="$nms" -v b="$pms" 'BEGIN { printf "%.2f", a + b }')
    ROWS+=("front end|$n|$jps|$tot|$nms|$pms|$p50|$p99|$fails|$QUIET; during: $others")
    say "    $jps jobs/s, server CPU $tot ms/job (Node $nms, PostgreSQL $pms), p50 $p50 ms, p99 $p99 ms, $fails failed; $others"
    PROFILES+=("--- front end, $n client(s): statements per scheduler request, warm-up included (pg_stat_statements;" \
               "mean us is wall time, waits for a CPU included)")
    PROFILES+=("$(psql_q -v db="$DB" -v n="$all" <<'EOF'
\pset footer off
SELECT round(calls::numeric / :n, 2) AS "calls/request", round(1000 * mean_exec_time::numeric, 1) AS "mean us",
       round((1000 * total_exec_time / :n)::numeric, 1) AS "us/request",
       CASE WHEN toplevel THEN 'top' ELSE 'inner' END AS level,
       left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS statement
  FROM pg_stat_statements
 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = :'db')
 ORDER BY toplevel DESC, total_exec_time DESC LIMIT 20;
EOF
)")
done

# The intake: a real request (asking for no work) alone, and beside a
# stranger's 8 MiB request and a member's 2.5 MB one (boinc_intake.js).
# test/t/020_boinc.pl checks how the front end treats each; what that costs
# the real client is measured here.
INTAKE=
if [ "$INTAKE_ROUNDS" -gt 0 ]; then
    wait_quiet "intake"
    say "intake: a real request alone and beside hostile ones, $INTAKE_ROUNDS rounds each"
    INTAKE=$(bg_run node "$BENCH_DIR/boinc_intake.js" "${URL}scheduler" "$AUTH" "$WORK/hosts" "$INTAKE_ROUNDS") ||
        die "the intake driver failed"
    INTAKE="$INTAKE ($QUIET)"
    say "    $INTAKE"
fi
boinc_farm_stop
tail -n 2000 "$WORK/fe.log" >"$BENCH_DIR/out/boinc_scheduler-$STAMP-frontend.log"
[ "$NODE_PROF" != 1 ] || say "Node CPU profile in $PROF_DIR"

# allot.request_work alone: the same hosts and request, no front end.
read -r LO HI < <(sql "SELECT min(host_id), max(host_id) FROM boinc.host" | tr '|' ' ')
cat >"$WORK/request_work.sql" <<'EOF'
\set h random(:lo, :hi)
SELECT jsonb_array_length(allot.request_work(:h, '{"resources": {"cpu": {"req_secs": 3600, "req_instances": 1, "estimated_delay": 0}}}') -> 'jobs');
EOF
in_progress() { sql "SELECT coalesce(sum(in_progress), 0) FROM allot.job_usage"; }
if [ "$WARMUP" -gt 0 ]; then
    bg_run pgbench -n -M prepared -T "$WARMUP" -c 8 -j 2 -D lo="$LO" -D hi="$HI" \
        -f "$WORK/request_work.sql" "$DB" >"$WORK/warmup.out" 2>&1 || { cat "$WORK/warmup.out" >&2; die "pgbench warm-up failed"; }
fi
for n in $CLIENTS; do
    say "allot.request_work alone (pgbench), $n client(s): ${DURATION}s"
    before=$(in_progress)
    measure_pgbench "request_work-$n" "$DB" -c "$n" -j "$((n < 2 ? n : 2))" -T "$DURATION" \
        -D lo="$LO" -D hi="$HI" -f "$WORK/request_work.sql"
    jobs=$(( $(in_progress) - before ))
    jps=$(awk -v j="$jobs" -v s="$DURATION" 'BEGIN { printf "%.1f", j / s }')
    cpu=$(awk -v us="$RUN_CPU_US" -v n="$RUN_N" -v j="$jobs" 'BEGIN { printf "%.2f", j ? us * n / j / 1000 : 0 }')
    ROWS+=("request_work alone|$n|$jps|$cpu|-|$cpu|$RUN_P50|$RUN_P99|0|$RUN_QUIET; during: pgbench $RUN_CLIENT_PCT%, others $RUN_OTHERS_PCT% of a CPU")
    say "    $jps jobs/s ($RUN_TPS tps), server CPU $cpu ms/job, p50 $RUN_P50 ms, p99 $RUN_P99 ms"
done

# ---------------------------------------------------------------------------
{
    report_header "BOINC scheduler path (bench/boinc_scheduler.sh)"
    echo "front end: examples/boinc, Node $(node --version), one process; $HOSTS hosts of one account, request of"
    echo "  Debian's 7.20.5 client for one CPU (cpu_req_secs 3600, cpu_req_instances 1, p_fpops 1e9), no reports,"
    echo "  <other_results> $([ "$HELD" = 1 ] && echo 'listing every result held' || echo 'left out');" \
         "warm-up ${WARMUP}s, timed ${DURATION}s; load average at start: $START_LOAD"
    echo
    printf '%-20s %3s %9s %10s %8s %8s %8s %8s %6s  %s\n' run N jobs/s "CPU ms/job" "Node" "PG" "p50 ms" "p99 ms" failed machine
    for row in "${ROWS[@]}"; do
        IFS='|' read -r name n jps tot nms pms p50 p99 fails quiet <<<"$row"
        printf '%-20s %3s %9s %10s %8s %8s %8s %8s %6s  %s\n' "$name" "$n" "$jps" "$tot" "$nms" "$pms" "$p50" "$p99" "$fails" "$quiet"
    done
    echo
    echo "BOINC's own scheduler, beside the front end in one session: bench/boinc_peer.sh"
    echo "Targets at 8 clients (issue 24): >= 600 jobs/s, <= 3 ms server CPU per job, p99 <= 30 ms"
    echo
    [ -z "$INTAKE" ] || { echo "intake (ms; a real request alone, beside a stranger's 8 MiB, beside a member's request): $INTAKE"; echo; }
    for p in "${PROFILES[@]}"; do echo "$p"; done
} | tee "$REPORT"
say "report: $REPORT"
