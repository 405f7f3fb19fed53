#!/usr/bin/env bash
# Soak benchmark: minutes of mixed traffic on one farm with both kinds of
# workloads, looking for errors (deadlocks, serialization failures, unique
# violations, a report losing a race, internal errors), drift in throughput,
# and broken counters.
#
# Issue 6, item 6.  One farm (bench/dispatch_data.sql, then
# bench/soak_data.sql): JOB_HOSTS job hosts, 50 job workloads with NJOBS
# unsent jobs, OB_HOSTS OpenBench hosts and 10 assignment workloads, with
# allot.fairness = debt for the database, so that requests write credit and
# the transitioner folds debts.  Then, for SOAK seconds at CLIENTS clients,
# pgbench runs four weighted scripts:
#   soak_job.sql        a job host reports the jobs it holds (1% errors, 2%
#                       aborted; in one statement, or one per transaction
#                       with REPORTS=single), asks for 8 CPUs + 1 GPU, and
#                       the pool is topped up with a new unsent job per job sent
#   soak_assign.sql     an OpenBench host asks for a workload
#   soak_heartbeat.sql  an OpenBench host heartbeats (the last 10% of them
#                       never do: their assignments expire)
#   soak_vanish.sql     one of the last 1% of job hosts takes 2 CPU jobs and
#                       is never heard of again: they time out
# while a loop of its own validates done jobs and calls
# allot.run_transitioner() every EVERY seconds (soak_transitioner.sql), as
# pg_cron would every minute.  One untimed lap of soak_job.sql over every
# job host comes first, so that each visit in the timed run finds the jobs
# the host took on its previous one; then every OpenBench host heartbeats
# once, so that the lap's length does not expire them all at the start.
#
# Any error is a failure: pgbench runs with --max-tries=1 (a deadlock or a
# serialization failure is counted, not retried; any other error aborts its
# client), and the server log is scanned for ERROR, FATAL and PANIC lines.
# Afterwards bench/soak_checks.sql checks check_invariants(), recounts the
# usage tables, accounts for every job's sends and reports (no job held
# twice, none lost), the unsent pool, and the debts.
#
# Beside tps and latency, it reports server CPU per transaction, buffers and
# WAL per transaction over the soak (bench/cluster.sh's measure_begin and
# measure_end: the transitioner's rounds are in the CPU and WAL, not in the
# transactions).
#
# Usage: bench/soak.sh            (~8 min on a 2-CPU machine)
#   Needs PostgreSQL 14+ (initdb, pg_ctl, psql, pgbench, pg_stat_statements)
#   with allot installed into it; builds and installs nothing.  Starts a
#   throwaway cluster in a temp dir (bench/cluster.sh: unix socket in that
#   dir only, as user postgres when run as root) and removes it on exit,
#   pass or fail.  Before the lap and the soak it waits for a quiet machine
#   (bench/cluster.sh: BUSY_MAX, WAIT_MAX; WAIT_MAX=0 does not wait).
#   Exit status: 0 when there was no error and every check passed, 1
#   otherwise.  Whether the rate was steady is reported, not enforced: on a
#   shared machine it says more about the machine.
#
# Environment:
#   SOAK=300             seconds of mixed traffic
#   CLIENTS=32           pgbench clients (each owns 1/CLIENTS of 99% of the job hosts)
#   THREADS=2            pgbench worker threads (-j)
#   JOB_HOSTS=20000 NJOBS=200000 OB_HOSTS=2000   farm sizes
#   WEIGHTS="6 1 3 1"    pgbench weights of soak_job, soak_assign, soak_heartbeat,
#                        soak_vanish (0 leaves a script out)
#   REPORTS=batch        how a job host reports what it holds: batch, all in one
#                        statement (a BOINC scheduler request), or single, one
#                        report per transaction (soak_job.sql)
#   EVERY=5              seconds between transitioner rounds
#   VALIDATE=2000        done jobs judged per round, at most
#   DAILY_QUOTA=1000     allot.daily_quota of the database: the soak packs
#                        many of a host's visits into minutes, which the
#                        default 100 jobs per (host, app version) per day
#                        would cut short, changing the rate mid-run
#   PG_CONFIG=pg_config  the PostgreSQL installation, and the allot in it
#
# The report is also written to bench/out/soak-<date>.txt (git-ignored),
# and when there were errors the server log of the lap and the soak to
# bench/out/soak-<date>-server.log.
set -euo pipefail

SOAK=${SOAK:-300}
CLIENTS=${CLIENTS:-32}
THREADS=${THREADS:-2}
JOB_HOSTS=${JOB_HOSTS:-20000}
NJOBS=${NJOBS:-200000}
OB_HOSTS=${OB_HOSTS:-2000}
WEIGHTS=${WEIGHTS:-"6 1 3 1"}
REPORTS=${REPORTS:-batch}
EVERY=${EVERY:-5}
VALIDATE=${VALIDATE:-2000}
DAILY_QUOTA=${DAILY_QUOTA:-1000}
PG_CONFIG=${PG_CONFIG:-pg_config}

read -r W_JOB W_ASSIGN W_HEARTBEAT W_VANISH <<<"$WEIGHTS"
[ -n "$W_VANISH" ] || { echo "error: WEIGHTS needs four numbers" >&2; exit 1; }
[ "$W_JOB" -gt 0 ] || { echo "error: the weight of soak_job.sql must be positive" >&2; exit 1; }
# The last 1% of the job hosts vanish (soak_vanish.sql); the rest are
# shared out among the clients (soak_job.sql).
VANISH_HOSTS=$(( JOB_HOSTS / 100 > 0 ? JOB_HOSTS / 100 : 1 ))
[ "$((JOB_HOSTS - VANISH_HOSTS))" -ge "$CLIENTS" ] ||
    { echo "error: JOB_HOSTS must be at least CLIENTS plus 1%" >&2; exit 1; }
case $REPORTS in
    batch) SINGLE=0 ;;
    single) SINGLE=1 ;;
    *) echo "error: REPORTS must be batch or single" >&2; exit 1 ;;
esac
[ "$SOAK" -ge 20 ] || { echo "error: SOAK must be at least 20 s (two progress intervals)" >&2; exit 1; }

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
DB=bench_soak
sql() { psql_q -d "$DB" -At -c "$1"; }

# The transitioner loop runs in the background: stop it before cluster.sh
# stops the server (a non-interactive shell's background jobs ignore INT).
LOOP_PID=
stop_loop() { [ -z "$LOOP_PID" ] || kill "$LOOP_PID" 2>/dev/null || true; }
trap 'stop_loop; cleanup' EXIT

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
mkdir -p "$BENCH_DIR/out" "$WORK/log"
REPORT="$BENCH_DIR/out/soak-$(date +%Y%m%d-%H%M%S).txt"
SERVER_LOG="${REPORT%.txt}-server.log"

# Lock waits longer than deadlock_timeout (1 s) go to the server log too.
psql_q -c "ALTER SYSTEM SET log_lock_waits = on" -c "SELECT pg_reload_conf()" >/dev/null

# ---------------------------------------------------------------------------
# The farm.

t0=$SECONDS
OB_FIRST=$((JOB_HOSTS + 1))
OB_LAST=$((JOB_HOSTS + OB_HOSTS))
OB_LIVE_LAST=$((JOB_HOSTS + OB_HOSTS - OB_HOSTS / 10))
VANISH_FIRST=$((JOB_HOSTS - VANISH_HOSTS + 1))
say "database $DB: $JOB_HOSTS job hosts, 50 job workloads, $NJOBS unsent jobs; $OB_HOSTS OpenBench hosts, 10 assignment workloads"
create_bench_db "$DB"
# Loaded first, so that the values are checked against allot's settings.
# Set for the database (README), so that every request and every
# transitioner round, each in its own session, sees debt mode.
psql_q -d "$DB" -c "LOAD 'allot'" -c "ALTER DATABASE $DB SET allot.fairness = debt" \
    -c "ALTER DATABASE $DB SET allot.daily_quota = $DAILY_QUOTA"
bg_run psql_q -d "$DB" -v nhosts="$JOB_HOSTS" -v njobs="$NJOBS" -v nqueue=0 \
    -f "$BENCH_DIR/dispatch_data.sql" >/dev/null || die "job farm setup failed"
bg_run psql_q -d "$DB" -v first_host="$OB_FIRST" -v nhosts="$OB_HOSTS" \
    -f "$BENCH_DIR/soak_data.sql" >/dev/null || die "OpenBench farm setup failed"
FARM=$(sql "SELECT format('%s job hosts (%s with a GPU), %s job workloads, %s unsent jobs; %s OpenBench hosts (%s assigned), %s assignment workloads',
        count(*) FILTER (WHERE id < $OB_FIRST),
        (SELECT count(*) FROM allot.host_coproc),
        (SELECT count(*) FROM allot.workload WHERE app_id IS NOT NULL),
        (SELECT count(*) FROM allot.job WHERE state = 'unsent'),
        count(*) FILTER (WHERE id >= $OB_FIRST),
        (SELECT count(*) FROM allot.assignment),
        (SELECT count(*) FROM allot.workload WHERE app_id IS NULL))
      FROM allot.host")
# allot's settings exist in a session once the library is loaded.
SETTINGS=$(psql_q -d "$DB" -At -c "LOAD 'allot'" -c "SELECT format('allot.fairness=%s, allot.assignment_ttl=%s, allot.daily_quota=%s, allot.transitioner_batch=%s',
        current_setting('allot.fairness'), current_setting('allot.assignment_ttl'),
        current_setting('allot.daily_quota'), current_setting('allot.transitioner_batch'))")
say "    $FARM"
say "    $SETTINGS"
say "database $DB ready in $((SECONDS - t0)) s"

# From here on, every ERROR in the server log counts.
LOG_FROM=$(stat -c %s "$WORK/server.log")

LAP=$(( (JOB_HOSTS - VANISH_HOSTS) / CLIENTS ))
JOBS=$THREADS
[ "$JOBS" -le "$CLIENTS" ] || JOBS=$CLIENTS
VARS=(-D lap="$LAP" -D k=0 -D clients="$CLIENTS" -D single="$SINGLE"
      -D ob_first="$OB_FIRST" -D ob_live_last="$OB_LIVE_LAST" -D ob_last="$OB_LAST"
      -D vanish_first="$VANISH_FIRST" -D vanish_last="$JOB_HOSTS")
# pgbench -f with a weight; a weight of 0 leaves the script out.
SCRIPTS=() NAMES=()
for sw in "soak_job $W_JOB" "soak_assign $W_ASSIGN" "soak_heartbeat $W_HEARTBEAT" "soak_vanish $W_VANISH"; do
    read -r name weight <<<"$sw"
    [ "$weight" -eq 0 ] || { SCRIPTS+=(-f "$BENCH_DIR/$name.sql@$weight"); NAMES+=("$name.sql"); }
done

wait_quiet lap
say "one untimed lap of soak_job.sql over $((LAP * CLIENTS)) job hosts ($LAP visits per client)"
t0=$SECONDS
bg_run pgbench -n -M prepared -t "$LAP" -c "$CLIENTS" -j "$JOBS" "${VARS[@]}" \
    -f "$BENCH_DIR/soak_job.sql" "$DB" >"$WORK/lap.out" 2>&1 ||
    { cat "$WORK/lap.out" >&2; die "the untimed lap failed"; }
say "    done in $((SECONDS - t0)) s"
# OpenBench hosts are seen again (in batches: small transactions), so that
# their assignments count from the start of the soak, as in a farm in
# service, however long the lap took.
psql_q -d "$DB" -c "DO \$\$
    BEGIN
        FOR b IN $OB_FIRST .. $OB_LAST BY 100 LOOP
            PERFORM count(allot.heartbeat(h)) FROM generate_series(b, least(b + 99, $OB_LAST)) AS h;
            COMMIT;
        END LOOP;
    END \$\$"

# ---------------------------------------------------------------------------
# The soak.

# Jobs by state; sizes, dead tuples and autovacuum runs of the busy tables.
states() { sql "SELECT string_agg(format('%s %s', state, n), ', ' ORDER BY state)
                  FROM (SELECT state, count(*) AS n FROM allot.job GROUP BY state) s"; }
TABLES="'job', 'job_report', 'job_usage', 'workload_credit', 'assignment', 'workload_usage', 'host', 'host_app_version'"
tables() { sql "SELECT relname, pg_total_relation_size(relid), n_dead_tup, autovacuum_count
                  FROM pg_stat_user_tables WHERE schemaname = 'allot' AND relname IN ($TABLES)
                 ORDER BY relname" | tr '|' ' '; }

transitioner_loop() {
    local call=0 end=$((SECONDS + SOAK)) started left
    while [ "$SECONDS" -lt "$end" ] && [ -d "$WORK" ]; do
        call=$((call + 1))
        started=$SECONDS
        psql_q -d "$DB" -At -v call="$call" -v validate="$VALIDATE" \
            -f "$BENCH_DIR/soak_transitioner.sql" >/dev/null 2>>"$WORK/transitioner.err" ||
            echo "$call" >>"$WORK/transitioner.failed"
        left=$((EVERY - (SECONDS - started)))
        [ "$left" -le 0 ] || sleep "$left"
    done
}

soak_pgbench() {
    # Progress lines are shown as they come; everything goes to the summary.
    pgbench -n -M prepared -T "$SOAK" -c "$CLIENTS" -j "$JOBS" -P 10 -r \
        --max-tries=1 --failures-detailed --verbose-errors \
        -l --log-prefix="$WORK/log/soak" "${VARS[@]}" "${SCRIPTS[@]}" "$DB" 2>&1 |
        tee "$WORK/soak-summary.txt" | sed -un 's/^progress: /    progress: /p'
}

UNSENT_BEFORE=$(sql "SELECT count(*) FROM allot.job WHERE state = 'unsent'")
MAX_JOB_BEFORE=$(sql "SELECT max(id) FROM allot.job")
STATES_BEFORE=$(states)
tables >"$WORK/tables-before.txt"
measure_begin "$DB"
S_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
S_START=$(sql "SELECT now()")
say "soak: ${SOAK}s at $CLIENTS clients, weights job/assign/heartbeat/vanish $W_JOB/$W_ASSIGN/$W_HEARTBEAT/$W_VANISH; transitioner every ${EVERY}s"
transitioner_loop &
LOOP_PID=$!
PGBENCH_RC=0
bg_run soak_pgbench || PGBENCH_RC=$?
wait "$LOOP_PID" || true
LOOP_PID=
# A backend that crashed restarts the server (crash recovery): wait for it.
for _ in $(seq 120); do psql -X -q -d "$DB" -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 1; done
S_END=$(sql "SELECT now()")
LOG_TO=$(stat -c %s "$WORK/server.log")
STATES_AFTER=$(states)
tables >"$WORK/tables-after.txt"

# ---------------------------------------------------------------------------
# What happened.

SUMMARY="$WORK/soak-summary.txt"
summary_value() { sed -n "s/^$1\([0-9.]*\).*/\1/p" "$SUMMARY" | head -n 1; }
TPS=$(summary_value 'tps = ')
TXNS=$(summary_value 'number of transactions actually processed: ')
FAILED=$(summary_value 'number of failed transactions: ')
SERIAL=$(summary_value 'number of serialization failures: ')
DEADLOCK=$(summary_value 'number of deadlock failures: ')
ABORTED=$(grep -c 'aborted in command' "$SUMMARY" || true)
# Server CPU, buffers and WAL per transaction (the transitioner's included).
measure_end "$DB" "${TXNS:-1}"

# tps per 10 s interval from -P 10; first and last windows of a minute (of
# half the run when it is shorter than two minutes, in whole intervals).
grep '^progress:' "$SUMMARY" | sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\1 \2/p' \
    >"$WORK/progress.txt" || true
WINDOW=60
[ "$SOAK" -ge 120 ] || WINDOW=$(( SOAK / 2 / 10 * 10 ))
STEADY=$(awk -v w="$WINDOW" '
    { tps[NR] = $2 }
    END { k = w / 10; if (NR < 2 * k) { print "too few progress lines to compare"; exit }
          for (i = 1; i <= k; i++) { f += tps[i]; l += tps[NR - k + i] }
          nf = nl = k; r = (l / nl) / (f / nf)
          printf "first %d s: %.0f tps (%d intervals); last %d s: %.0f tps (%d intervals); last/first = %.3f; steady (within 10%%): %s",
                 w, f / nf, nf, w, l / nl, nl, r, (r >= 0.9 && r <= 1.1) ? "yes" : "NO" }' "$WORK/progress.txt")

# Jobs sent per 10 s (public.soak_sent), beside the tps of the same interval.
sql "SELECT 1 + floor(extract(epoch FROM at - '$S_START'::timestamptz) / 10)::int, count(*)
       FROM public.soak_sent WHERE at >= '$S_START'::timestamptz GROUP BY 1 ORDER BY 1" |
    tr '|' ' ' >"$WORK/sent_per_10s.txt"

# Per-script latency from the per-transaction logs: column 3 is the latency
# in microseconds (or the kind of failure), column 4 the script (0-based).
cat "$WORK/log/soak".* 2>/dev/null | awk '$3 ~ /^[0-9]+$/ { print $4, $3 }' | sort -k1,1n -k2,2n |
    awk 'function flush() { if (n) { i = int(n * 0.99 + 0.999999); if (i < 1) i = 1
                                     printf "%s %d %.3f %.3f %.3f\n", s, n, sum / n / 1000, v[i] / 1000, v[n] / 1000 } }
         BEGIN { s = "none" }    # not "": awk would compare the script number 0 equal to it
         $1 != s { flush(); s = $1; n = 0; sum = 0 }
         { v[++n] = $2; sum += $2 }
         END { flush() }' >"$WORK/latency.txt"

TRAFFIC=$(sql "SELECT format('jobs sent: %s (to %s hosts); reports accepted: %s (%s success, %s error, %s aborted, %s timed out); new unsent jobs inserted: %s',
        (SELECT count(*) FROM public.soak_sent WHERE at >= '$S_START'),
        (SELECT count(DISTINCT host_id) FROM public.soak_sent WHERE at >= '$S_START'),
        count(*), count(*) FILTER (WHERE outcome = 'success'), count(*) FILTER (WHERE outcome = 'error'),
        count(*) FILTER (WHERE outcome = 'aborted'), count(*) FILTER (WHERE outcome = 'timed_out'),
        (SELECT count(*) FROM allot.job WHERE id > $MAX_JOB_BEFORE))
      FROM allot.job_report WHERE reported_at >= '$S_START'")
TRANSITIONER=$(psql_q -d "$DB" -c "\\pset footer off" -c "
    SELECT count(*) AS rounds, round(avg(ms)::numeric, 1) AS \"mean ms\", round(max(ms)::numeric, 1) AS \"max ms\",
           sum(validated) AS validated, sum(invalidated) AS invalidated,
           sum((result ->> 'timed_out')::bigint) AS timed_out,
           sum((result ->> 'expired_assignments')::bigint) AS expired,
           sum((result ->> 'reports_read')::bigint) AS reports_read,
           sum((result ->> 'flops_samples')::bigint) AS samples,
           sum((result ->> 'flops_estimates')::bigint) AS estimates,
           sum((result ->> 'credited')::bigint) AS credited,
           sum((result ->> 'debts_folded')::bigint) AS debts_folded,
           count(*) FILTER (WHERE (result ->> 'debts_folded')::bigint > 0) AS \"rounds folding\"
      FROM public.soak_transitioner")
ROUNDS_FAILED=0
[ ! -f "$WORK/transitioner.failed" ] || ROUNDS_FAILED=$(wc -l <"$WORK/transitioner.failed")
CREDIT=$(sql "SELECT format('%s jobs validated (%s valid), %s credited, %s credits in all; %s of %s apps have est_flops_per_au',
        count(*) FILTER (WHERE validated IS NOT NULL), count(*) FILTER (WHERE validated),
        count(*) FILTER (WHERE credit IS NOT NULL), round(coalesce(sum(credit), 0)::numeric, 1),
        (SELECT count(*) FROM allot.app WHERE est_flops_per_au IS NOT NULL), (SELECT count(*) FROM allot.app))
      FROM allot.job WHERE state = 'done'")
ASSIGNMENTS=$(psql_q -d "$DB" -c "\\pset footer off" -c "
    SELECT w.id AS workload, w.engine, w.priority, w.throughput, coalesce(u.hosts, 0) AS hosts,
           coalesce(u.threads + u.focus_threads, 0) AS threads,
           round(c.debt::numeric, 0) AS \"cpu debt\", round(c.sent::numeric, 0) AS \"sent since fold\"
      FROM allot.workload w
      LEFT JOIN allot.workload_usage u ON u.workload_id = w.id
      LEFT JOIN allot.workload_credit c ON c.workload_id = w.id AND c.resource = 'cpu'
     WHERE w.app_id IS NULL ORDER BY w.id")

# The server log since the lap: errors (a backend that died logs its end
# at level LOG), and lock waits over deadlock_timeout.
ERROR_LINES=' (ERROR|FATAL|PANIC): |terminated by signal|exited with exit code'
tail -c +"$((LOG_FROM + 1))" "$WORK/server.log" | head -c "$((LOG_TO - LOG_FROM))" >"$WORK/soak-server.log"
grep -E "$ERROR_LINES" "$WORK/soak-server.log" >"$WORK/errors.txt" || true
SERVER_ERRORS=$(wc -l <"$WORK/errors.txt")
DEADLOCKS=$(grep -c 'deadlock detected' "$WORK/errors.txt" || true)
LOCK_WAITS=$(grep -c 'still waiting for' "$WORK/soak-server.log" || true)

# The checks (bench/soak_checks.sql): name|t or f|detail.
psql_q -d "$DB" -At -v soak_start="$S_START" -v unsent_before="$UNSENT_BEFORE" \
    -f "$BENCH_DIR/soak_checks.sql" >"$WORK/checks.txt" 2>"$WORK/checks.err" ||
    echo "bench/soak_checks.sql runs to the end|f|$(tr '\n' ' ' <"$WORK/checks.err" | cut -c1-300)" >>"$WORK/checks.txt"
CHECKS_FAILED=$(awk -F'|' '$2 != "t"' "$WORK/checks.txt" | wc -l)

# Every error a client meets is in the server log; the clients' own counts
# are a second witness (and catch what never reached the server).
CLIENT_FAILURES=$(( ${FAILED:-0} + ABORTED + ROUNDS_FAILED ))
VERDICT=PASS
[ "$SERVER_ERRORS" -eq 0 ] && [ "$CLIENT_FAILURES" -eq 0 ] && [ "$CHECKS_FAILED" -eq 0 ] &&
    [ "$PGBENCH_RC" -eq 0 ] && [ -n "$TPS" ] && [ -n "$FAILED" ] || VERDICT=FAIL

# ---------------------------------------------------------------------------
# Report.

report() {
    local script n avg p99 max hit rd dt wb wr
    report_header "allot soak benchmark"
    echo "log_lock_waits=on"
    echo "farm: $FARM"
    echo "settings: $SETTINGS"
    echo "pgbench -n -M prepared -T $SOAK -c $CLIENTS -j $JOBS -P 10 -r --max-tries=1 --failures-detailed --verbose-errors" \
         "${SCRIPTS[*]//$BENCH_DIR\//}" \
         "(after one untimed lap of soak_job.sql over $((LAP * CLIENTS)) job hosts; $VANISH_HOSTS vanishing job hosts; REPORTS=$REPORTS)"
    echo "transitioner: validate up to $VALIDATE done jobs, then run_transitioner(), every ${EVERY}s from its own sessions"
    echo "load average when the script started: $LOAD_BEFORE; when the soak started: $S_LOAD ($RUN_QUIET)"
    echo "soak: $S_START .. $S_END"
    echo
    echo "RESULT: $VERDICT ($SERVER_ERRORS errors in the server log, $CLIENT_FAILURES failures seen by clients," \
         "$CHECKS_FAILED failed checks, pgbench exit status $PGBENCH_RC)"
    echo
    printf '%.0f tps over %s transactions\n' "${TPS:-0}" "${TXNS:-0}"
    read -r hit rd dt wb wr <<<"$RUN_STMT"
    echo "per transaction: $RUN_CPU_US us server CPU (the transitioner's rounds included); shared buffers $hit hit," \
         "$rd read, $dt dirtied; statement WAL $wb B in $wr records; WAL in all $RUN_WAL_B B, $RUN_WAL_FPI full-page images;" \
         "the rest of the machine's busy CPU during the soak: $RUN_OTHERS_PCT% of a CPU"
    echo "$STEADY"
    printf '%10s %10s %14s\n' interval tps "jobs sent/s"
    # One line per 10 s: the -P tps and the jobs sent in the same interval.
    awk 'NR == FNR { sent[$1] = $2; next }
         { i = int(($1 + 5) / 10); printf "%7d s %10.1f %14.1f\n", $1, $2, (sent[i] + 0) / 10 }' \
        "$WORK/sent_per_10s.txt" "$WORK/progress.txt"
    echo
    echo "per script (per-transaction logs; ms):"
    printf '  %-20s %10s %10s %10s %10s\n' script transactions mean p99 max
    while read -r script n avg p99 max; do
        printf '  %-20s %10s %10s %10s %10s\n' "${NAMES[$script]}" "$n" "$avg" "$p99" "$max"
    done <"$WORK/latency.txt"
    echo "pgbench per script and per statement (-r):"
    sed -n '/^SQL script 1:/,$p' "$SUMMARY" | grep -v '^progress:' | sed 's/^/  /'
    echo
    echo "job traffic during the soak: $TRAFFIC"
    echo "allot.job before: $STATES_BEFORE"
    echo "allot.job after:  $STATES_AFTER"
    echo "credit: $CREDIT"
    echo
    echo "transitioner rounds (soak_transitioner.sql), $ROUNDS_FAILED failed:"
    echo "$TRANSITIONER"
    echo
    echo "assignment workloads at the end:"
    echo "$ASSIGNMENTS"
    echo
    echo "tables (allot.*): total size before -> after, dead tuples after, autovacuums during the soak:"
    awk 'NR == FNR { size[$1] = $2; av[$1] = $4; next }
         { printf "  %-17s %9.1f MB -> %9.1f MB %10d dead %4d autovacuums\n", $1, size[$1] / 1048576, $2 / 1048576, $3, $4 - av[$1] }' \
        "$WORK/tables-before.txt" "$WORK/tables-after.txt"
    echo
    echo "errors (must be 0): $SERVER_ERRORS in the server log, from the lap to the end of the soak (ERROR/FATAL/PANIC lines, backends that died)," \
         "$DEADLOCKS of them deadlocks; $LOCK_WAITS lock waits over deadlock_timeout (1 s; not errors)"
    if [ "$SERVER_ERRORS" -gt 0 ]; then
        echo "  distinct messages (numbers as N):"
        sed -E 's/^[^[]*\[[0-9]+\] //; s/[0-9]+/N/g' "$WORK/errors.txt" | sort | uniq -c | sort -rn | sed 's/^/    /'
        echo "  the first entry of each (at most 3; 30 lines of 240 characters at most); the whole log: bench/out/${SERVER_LOG##*/}"
        # An entry is its ERROR line and the DETAIL, HINT, CONTEXT and
        # STATEMENT lines (and tab-indented continuations) that follow it.
        awk -v errors="$ERROR_LINES" '
             /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] / && !/ (DETAIL|HINT|CONTEXT|STATEMENT): / { on = 0 }
             $0 ~ errors { key = $0; sub(/^[^[]*\[[0-9]+\] /, "", key); gsub(/[0-9]+/, "N", key)
                                        if (!(key in seen) && shown < 3) { seen[key] = 1; shown++; on = 1; n = 0; print "    --" } }
             on && ++n <= 30 { print "    " substr($0, 1, 240) }' "$WORK/soak-server.log"
    fi
    echo "  pgbench: ${FAILED:-?} failed transactions (${SERIAL:-?} serialization, ${DEADLOCK:-?} deadlock), $ABORTED clients aborted, exit status $PGBENCH_RC"
    grep -E 'pgbench: error|client [0-9]+ (got an error|aborted|ends the failed)' "$SUMMARY" |
        sed -E 's/[0-9]+/N/g' | sort | uniq -c | sort -rn | head -n 10 | sed 's/^/    /' || true
    echo "  transitioner rounds failed: $ROUNDS_FAILED"
    grep -E '(ERROR|FATAL|PANIC): ' "$WORK/transitioner.err" 2>/dev/null | sed -E 's/^psql:[^ ]* //; s/[0-9]+/N/g' |
        sort | uniq -c | sort -rn | sed 's/^/    /' || true
    echo
    echo "checks:"
    awk -F'|' '{ printf "  %s  %s: %s\n", ($2 == "t") ? "PASS" : "FAIL", $1, $3 }' "$WORK/checks.txt"
}
report | tee "$REPORT"
echo "(written to bench/out/${REPORT##*/})"
if [ "$SERVER_ERRORS" -gt 0 ]; then
    cp "$WORK/soak-server.log" "$SERVER_LOG"
    echo "(the server log of the lap and the soak: bench/out/${SERVER_LOG##*/})"
fi
[ "$VERDICT" = PASS ]
