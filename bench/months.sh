#!/usr/bin/env bash
# Benchmark of a farm's months: table sizes, request cost and the purge's
# cost over DAYS simulated days, with and without retention (issue 33).
#
# Nothing left allot.job before 0.7.0: at JOBS_PER_DAY finished jobs a day
# the hot tables grow for ever.  With allot.retention_period (30 days by
# default) the transitioner moves finished jobs older than that out; this
# shows the tables stay bounded, requests cost the same on day DAYS as on
# day 1, and what the purge costs per day.
#
# On one throwaway server, for each of MODES, a database of its own
# (bench/months_data.sql: 4 apps, 20 job workloads, NHOSTS hosts, NQUEUE
# unsent jobs):
#   keep     allot.retention_period = 0: nothing leaves
#   archive  allot.retention_period = RETENTION, allot.retention_archive on:
#            purged jobs go to allot.job_archive (compressed by TOAST)
#   delete   the same with allot.retention_archive off
# and for each simulated day 1 .. DAYS:
#   1. the day's JOBS_PER_DAY finished jobs and their reports, written
#      directly as allot leaves them (bench/months_day.sql);
#   2. the purge at the day's last minute, each call a transaction, until a
#      call purges less than allot.retention_batch (bench/months_purge.sql:
#      allot.purge_finished, the step run_transitioner ends with): its wall
#      time and the cluster's CPU meanwhile;
#   3. VACUUM of allot.job, allot.job_report and allot.job_archive, timed:
#      the cluster runs with autovacuum off, and this stands for the
#      autovacuum a real day would see (deleted rows leave free space that
#      later inserts reuse only once a vacuum has been through);
#   4. the size of each table with its indexes and TOAST;
#   5. on day 1 and every CHECK_EVERY days: REQ_SECS of a one-row UPDATE (the
#      baseline) and REQ_SECS of request_work (8 CPU + 1 GPU instances,
#      CLIENTS clients, at the day's noon), each after a CHECKPOINT and a
#      wait for a quiet machine (bench/cluster.sh); then, untimed, the jobs
#      the requests sent are reported at that noon and as many unsent jobs
#      added back.  After day 1 the database is copied (CREATE DATABASE
#      ... TEMPLATE), and after day DAYS, ROUNDS rounds compare the two: the
#      UPDATE, request_work on the day-1 copy and request_work on day DAYS,
#      in turn (the order of the two alternating), so that both days meet the
#      same neighbours on a shared machine; the medians of the rounds' ratios
#      (day DAYS over day 1: tps, server CPU and shared buffers a request)
#      are the figures.
# The report: a table per mode (days sampled), the bounds, the purge's cost
# per day, the request runs, and bench/out/months-<date>.svg: the hot
# tables' size (allot.job and allot.job_report, with indexes) against the
# day, per mode, and the archive's.
#
# Usage: bench/months.sh            (~25 min on a 2-CPU machine)
#        QUICK=1 bench/months.sh    (~4 min: 40 days of 5,000 jobs, 3 s runs)
#   Needs PostgreSQL 14+ (initdb, pg_ctl, psql, pgbench, pg_stat_statements)
#   with allot 0.7.0 or later installed into it; builds and installs
#   nothing.  Starts a throwaway cluster in a temp dir (unix socket in that
#   dir only), as user postgres when run as root, and removes it on exit,
#   pass or fail.
#
# Environment:
#   DAYS=90 JOBS_PER_DAY=20000 NHOSTS=5000 NQUEUE=200000   sizes (NQUEUE: unsent jobs; a request
#                          run that sends over half of them is flagged)
#   MODES="keep archive"   any of keep, archive, delete
#   RETENTION=30d          allot.retention_period of archive and delete
#   BATCH=10000            allot.retention_batch
#   CHECK_EVERY=30 REQ_SECS=10 CLIENTS=4 ROUNDS=3           the request runs
#   PG_CONFIG=pg_config    the PostgreSQL installation, and the allot in it
#
# The report is also written to bench/out/months-<date>.txt (git-ignored).
set -euo pipefail

if [ -n "${QUICK:-}" ]; then
    DAYS=${DAYS:-40} JOBS_PER_DAY=${JOBS_PER_DAY:-5000} CHECK_EVERY=${CHECK_EVERY:-20}
    REQ_SECS=${REQ_SECS:-3} NHOSTS=${NHOSTS:-2000} NQUEUE=${NQUEUE:-100000} ROUNDS=${ROUNDS:-2}
fi
DAYS=${DAYS:-90}
JOBS_PER_DAY=${JOBS_PER_DAY:-20000}
NHOSTS=${NHOSTS:-5000}
NQUEUE=${NQUEUE:-200000}
MODES=${MODES:-keep archive}
RETENTION=${RETENTION:-30d}
BATCH=${BATCH:-10000}
CHECK_EVERY=${CHECK_EVERY:-30}
REQ_SECS=${REQ_SECS:-10}
CLIENTS=${CLIENTS:-4}
ROUNDS=${ROUNDS:-3}
PG_CONFIG=${PG_CONFIG:-pg_config}

for m in $MODES; do
    case $m in keep|archive|delete) ;; *) echo "error: unknown mode $m (keep, archive, delete)" >&2; exit 1 ;; esac
done

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
mkdir -p "$BENCH_DIR/out"
STAMP=$(date +%Y%m%d-%H%M%S)
REPORT="$BENCH_DIR/out/months-$STAMP.txt"
SVG="$BENCH_DIR/out/months-$STAMP.svg"

# The retention period in days, for the report's steady state.
RET_DAYS=$(psql_q -At -c "SELECT ceil(extract(epoch FROM '$RETENTION'::interval) / 86400)::int")

# The months end today: request runs pass their day's noon as now, and the
# history's days lie before it.
DAY0=$(psql_q -At -c "SELECT (date_trunc('day', now()) - interval '$DAYS days')::timestamptz")

# Deleted rows are reclaimed by the VACUUM each simulated day ends with, as
# autovacuum would over a real day: with it on, its minute naps would span
# many simulated days.
psql_q -c 'ALTER SYSTEM SET autovacuum = off' -c 'SELECT pg_reload_conf()' >/dev/null

# One line per (mode, day) in $WORK/days.tsv: mode day jobs job_bytes
# report_bytes archive_bytes purged_totals_bytes purge_calls purge_ms
# purge_cpu_ms purged vacuum_ms vacuum_cpu_ms; per request run in
# $WORK/runs.tsv: mode day job_rows base_tps base_cpu req_tps req_cpu
# req_p99 req_buffers jobs_sent others_pct; per round of the last day's
# comparison in $WORK/rounds.tsv: mode round base_tps day1_tps day1_cpu
# day1_buffers last_tps last_cpu last_buffers others_pct.
: >"$WORK/days.tsv"
: >"$WORK/runs.tsv"
: >"$WORK/rounds.tsv"
: >"$WORK/low.txt"

ms_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }
cpu_ms() { awk -v t="$1" -v hz="$CLK_TCK" 'BEGIN { printf "%.0f", t * 1000 / hz }'; }

# request_db DB DAY: RUN_* of REQ_SECS of request_work on DB at DAY's noon
# (bench/cluster.sh's measure_pgbench), then, untimed, the jobs it sent are
# reported at that noon and as many unsent jobs added back; sets SENT.
request_db() {
    local db=$1 day=$2 now
    now=$(psql_q -d "$db" -At -c "SELECT '$DAY0'::timestamptz + ($day - 1) * interval '1 day' + interval '12 hours'")
    measure_pgbench "request-$db-$day" "$db" -c "$CLIENTS" -j "$CLIENTS" -T "$REQ_SECS" \
        -D nhosts="$NHOSTS" -D now="$now" -f "$BENCH_DIR/months_request.sql"
    SENT=$(psql_q -d "$db" -At -v now="$now" <<'EOF'
WITH r AS (SELECT j.workload_id, allot.report_job(j.host_id, j.id, 'success', 1, 3600, NULL, :'now') AS reply
             FROM allot.job j WHERE j.state = 'in_progress' ORDER BY j.host_id, j.id),
     more AS (INSERT INTO allot.job (workload_id, predicted_app_units)
              SELECT workload_id, 0.5 + random() FROM r)
SELECT count(*) FROM r;
EOF
)
    # A run that sent over half the queue measured requests that found
    # less and less work (the queue is whole again only after it).
    [ $((2 * SENT)) -le "$NQUEUE" ] || echo "$db day $day: $SENT of $NQUEUE queued jobs sent" >>"$WORK/low.txt"
    # What a real day's autovacuum would have cleaned by the next request.
    psql_q -d "$db" -c 'VACUUM' >/dev/null
}

# baseline_db DB: RUN_* of REQ_SECS of the one-row UPDATE on DB.
baseline_db() {
    measure_pgbench "base-$1" "$1" -c "$CLIENTS" -j "$CLIENTS" -T "$REQ_SECS" \
        -D nhosts="$NHOSTS" -f "$BENCH_DIR/months_baseline.sql"
}

# A request run of the months: one line of $WORK/runs.tsv.
request_run() {
    local mode=$1 db=$2 day=$3 jobs base_tps base_cpu
    jobs=$(psql_q -d "$db" -At -c "SELECT count(*) FROM allot.job")
    baseline_db "$db"
    base_tps=$RUN_TPS base_cpu=$RUN_CPU_US
    request_db "$db" "$day"
    echo "$mode $day $jobs $base_tps $base_cpu $RUN_TPS $RUN_CPU_US $RUN_P99 ${RUN_STMT%% *} $SENT $RUN_OTHERS_PCT" >>"$WORK/runs.tsv"
    say "    day $day: UPDATE $base_tps tps, request_work $RUN_TPS tps ($(awk -v a="$RUN_TPS" -v b="$base_tps" 'BEGIN { printf "%.3f", a / b }') of the UPDATE), $RUN_CPU_US us CPU each, $SENT jobs sent"
}

# The last day against the copy of day 1, ROUNDS times: one line of
# $WORK/rounds.tsv per round.
compare_rounds() {
    local mode=$1 db=$2 r t1 c1 h1 tn cn hn base
    for r in $(seq 1 "$ROUNDS"); do
        baseline_db "$db"
        base=$RUN_TPS
        if [ $((r % 2)) -eq 1 ]; then
            request_db "${db}_day1" 1; t1=$RUN_TPS c1=$RUN_CPU_US h1=${RUN_STMT%% *}
            request_db "$db" "$DAYS"; tn=$RUN_TPS cn=$RUN_CPU_US hn=${RUN_STMT%% *}
        else
            request_db "$db" "$DAYS"; tn=$RUN_TPS cn=$RUN_CPU_US hn=${RUN_STMT%% *}
            request_db "${db}_day1" 1; t1=$RUN_TPS c1=$RUN_CPU_US h1=${RUN_STMT%% *}
        fi
        echo "$mode $r $base $t1 $c1 $h1 $tn $cn $hn $RUN_OTHERS_PCT" >>"$WORK/rounds.tsv"
        say "    round $r: UPDATE $base tps; request_work day 1 $t1 tps, $c1 us CPU, $h1 buffers; day $DAYS $tn tps, $cn us CPU, $hn buffers"
    done
}

relation_bytes() {
    psql_q -d "$1" -At -F ' ' -c "
        SELECT pg_total_relation_size('allot.job'), pg_total_relation_size('allot.job_report'),
               pg_total_relation_size('allot.job_archive'),
               pg_total_relation_size('allot.purged_jobs') + pg_total_relation_size('allot.purged_credit')"
}

for mode in $MODES; do
    db=months_$mode
    t0=$SECONDS
    say "database $db: $NHOSTS hosts, $NQUEUE unsent jobs; then $DAYS days of $JOBS_PER_DAY finished jobs"
    create_bench_db "$db"
    bg_run psql_q -d "$db" -v nhosts="$NHOSTS" -v nqueue="$NQUEUE" -f "$BENCH_DIR/months_data.sql" >/dev/null ||
        die "data setup failed"
    case $mode in
        keep) period=0 archive=on ;;
        archive) period=$RETENTION archive=on ;;
        delete) period=$RETENTION archive=off ;;
    esac
    psql_q -d "$db" -c "ALTER DATABASE $db SET allot.retention_period = '$period'" \
        -c "ALTER DATABASE $db SET allot.retention_archive = $archive" \
        -c "ALTER DATABASE $db SET allot.retention_batch = $BATCH" \
        -c "CREATE TABLE public.months_calls (day int, call int, ms double precision, purged bigint)" >/dev/null
    for day in $(seq 1 "$DAYS"); do
        bg_run psql_q -d "$db" -v day="$day" -v per_day="$JOBS_PER_DAY" -v day0="$DAY0" \
            -v nhosts="$NHOSTS" -f "$BENCH_DIR/months_day.sql" >/dev/null || die "day $day: history failed"
        c0=$(cluster_ticks) w0=$(date +%s.%N)
        bg_run psql_q -d "$db" -v day="$day" -v day0="$DAY0" -c "LOAD 'allot'" \
            -f "$BENCH_DIR/months_purge.sql" >/dev/null || die "day $day: transitioner failed"
        purge_ms=$(ms_since "$w0") purge_cpu=$(cpu_ms $(($(cluster_ticks) - c0)))
        c0=$(cluster_ticks) w0=$(date +%s.%N)
        psql_q -d "$db" -c 'VACUUM allot.job, allot.job_report, allot.job_archive' >/dev/null
        vacuum_ms=$(ms_since "$w0") vacuum_cpu=$(cpu_ms $(($(cluster_ticks) - c0)))
        read -r calls purged < <(psql_q -d "$db" -At -F ' ' -c \
            "SELECT count(*), coalesce(sum(purged), 0) FROM public.months_calls WHERE day = $day")
        echo "$mode $day $(psql_q -d "$db" -At -c 'SELECT count(*) FROM allot.job') $(relation_bytes "$db")" \
             "$calls $purge_ms $purge_cpu $purged $vacuum_ms $vacuum_cpu" >>"$WORK/days.tsv"
        if [ "$day" -eq 1 ]; then
            psql_q -c "CREATE DATABASE ${db}_day1 TEMPLATE $db" >/dev/null
        fi
        if [ "$day" -eq 1 ] || [ $((day % CHECK_EVERY)) -eq 0 ]; then
            say "  $mode, day $day: request runs"
            request_run "$mode" "$db" "$day"
        fi
        if [ $((day % 10)) -eq 0 ]; then
            say "  $mode: day $day of $DAYS ($((SECONDS - t0)) s)"
        fi
    done
    say "  $mode: day $DAYS against the copy of day 1, $ROUNDS rounds"
    compare_rounds "$mode" "$db"
    INVARIANTS=$(psql_q -d "$db" -At -c "SELECT coalesce(string_agg(c, E'\n'), '') FROM allot.check_invariants() c")
    [ -z "$INVARIANTS" ] || die "$mode: check_invariants() is not empty: $INVARIANTS"
    psql_q -c "DROP DATABASE $db" -c "DROP DATABASE ${db}_day1" >/dev/null
    say "  $mode done in $((SECONDS - t0)) s; check_invariants() empty"
done

# ---------------------------------------------------------------------------
# The plot: the hot tables (job + job_report) per mode, and the archive, in
# MB against the day; an SVG written here, no plotting tool needed.

awk -v days="$DAYS" -v title="allot.job + allot.job_report with their indexes, MB" \
    -v subtitle="$DAYS simulated days of $JOBS_PER_DAY finished jobs; retention $RETENTION, batch $BATCH" '
    { mb = ($4 + $5) / 1048576; hot[$1, $2] = mb; arch[$1, $2] = $6 / 1048576
      if (mb > ymax) ymax = mb; if ($6 / 1048576 > ymax) ymax = $6 / 1048576
      if (!($1 in seen)) { seen[$1] = 1; modes[++nm] = $1 } }
    END {
        W = 760; H = 450; L = 70; R = 170; T = 50; B = 50; pw = W - L - R; ph = H - T - B
        # grid lines at 1, 2 or 5 times a power of ten, at most 8 of them
        for (p = 0.01; ; p *= 10) {
            if (ymax / p <= 8) { step = p; break }
            if (ymax / (2 * p) <= 8) { step = 2 * p; break }
            if (ymax / (5 * p) <= 8) { step = 5 * p; break }
        }
        ytop = step * int(ymax / step + 1)
        printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
        printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
        printf "<text x=\"%d\" y=\"18\" font-size=\"14\">%s</text>\n", L - 60, title
        printf "<text x=\"%d\" y=\"34\">%s</text>\n", L - 60, subtitle
        for (y = 0; y <= ytop + step / 2; y += step) {
            py = T + ph - ph * y / ytop
            printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, py, L + pw, py
            printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, py + 4, y
        }
        for (d = 0; d <= days; d += (days >= 60 ? 15 : 10)) {
            px = L + pw * d / days
            printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", px, T, px, T + ph
            printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", px, T + ph + 18, d
        }
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">simulated day</text>\n", L + pw / 2, H - 8
        printf "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">MB</text>\n", T + ph / 2, T + ph / 2
        split("#c0392b #2471a3 #1e8449", color, " ")
        ly = T + 10
        for (m = 1; m <= nm; m++) {
            mode = modes[m]
            for (pass = 1; pass <= 2; pass++) {
                if (pass == 2 && mode != "archive") continue
                pts = ""
                for (d = 1; d <= days; d++)
                    if ((mode, d) in hot)
                        pts = pts sprintf(" %.1f,%.1f", L + pw * d / days,
                                          T + ph - ph * (pass == 1 ? hot[mode, d] : arch[mode, d]) / ytop)
                printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>\n",
                       color[m], pass == 2 ? " stroke-dasharray=\"6 4\"" : "", pts
                printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                       L + pw + 10, ly, L + pw + 34, ly, color[m], pass == 2 ? " stroke-dasharray=\"6 4\"" : ""
                printf "<text x=\"%d\" y=\"%d\">%s</text>\n", L + pw + 40, ly + 4,
                       pass == 1 ? (mode == "keep" ? "no retention" : "retention, " mode) : "allot.job_archive"
                ly += 20
            }
        }
        printf "</svg>\n"
    }' "$WORK/days.tsv" >"$SVG"

# ---------------------------------------------------------------------------
# Report.

report() {
    report_header "allot months benchmark"
    echo "$DAYS simulated days of $JOBS_PER_DAY finished jobs each (97% done, 3% error; 1.2 reports a job)," \
         "$NHOSTS hosts, 20 job workloads; allot.retention_period $RETENTION in modes archive and delete," \
         "allot.retention_batch $BATCH; autovacuum off (not as above): a VACUUM of the three tables ends each day"
    echo "load average when the script started: $LOAD_BEFORE; at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo "Sizes (MB, tables with their indexes and TOAST) at the end of day 1 and every ${CHECK_EVERY}th day;" \
         "the purge (calls, wall ms, cluster CPU ms) and VACUUM of that day:"
    awk -v every="$CHECK_EVERY" -v days="$DAYS" '
        BEGIN { printf "%-8s %4s %10s %9s %9s %9s %8s %6s %9s %9s %9s %9s\n", "mode", "day", "jobs", "job MB",
                       "report MB", "archive", "purged", "calls", "purge ms", "CPU ms", "vacuum ms", "CPU ms" }
        $2 == 1 || $2 % every == 0 || $2 == days {
            printf "%-8s %4d %10d %9.1f %9.1f %9.1f %8d %6d %9d %9d %9d %9d\n", $1, $2, $3, $4 / 1048576,
                   $5 / 1048576, $6 / 1048576, $11, $8, $9, $10, $12, $13 }' "$WORK/days.tsv"
    echo
    echo "Bounds once retention has started (days $((RET_DAYS + 1))-$DAYS): the largest size, and the last day's:"
    awk -v from="$RET_DAYS" '
        $2 > from { if ($4 > j[$1]) j[$1] = $4; if ($5 > r[$1]) r[$1] = $5; if ($3 > n[$1]) n[$1] = $3
                    lj[$1] = $4; lr[$1] = $5; la[$1] = $6; ln[$1] = $3 }
        END { for (m in j) printf "  %-8s allot.job max %.1f MB (last %.1f, %d rows), allot.job_report max %.1f MB (last %.1f), allot.job_archive last %.1f MB\n",
                                  m, j[m] / 1048576, lj[m] / 1048576, ln[m], r[m] / 1048576, lr[m] / 1048576, la[m] / 1048576 }' \
        "$WORK/days.tsv" | sort
    echo
    echo "The purge's cost per day, days $((RET_DAYS + 1))-$DAYS (a day's jobs leave each day):"
    awk -v from="$RET_DAYS" '
        $2 > from && $11 > 0 { n[$1]++; p[$1] += $9; c[$1] += $10; v[$1] += $12; vc[$1] += $13; j[$1] += $11; calls[$1] += $8 }
        END { for (m in n) printf "  %-8s %d days, %.0f jobs and %.1f calls a day: purge %.0f ms wall, %.0f ms server CPU a day (%.1f us CPU a job); VACUUM %.0f ms wall, %.0f ms CPU a day\n",
                                  m, n[m], j[m] / n[m], calls[m] / n[m], p[m] / n[m], c[m] / n[m], c[m] * 1000 / j[m], v[m] / n[m], vc[m] / n[m] }' \
        "$WORK/days.tsv" | sort
    awk -v from="$RET_DAYS" '$1 == "keep" && $2 > from { n++; v += $12; vc += $13 }
        END { if (n) printf "  %-8s VACUUM %.0f ms wall, %.0f ms CPU a day (nothing to purge)\n", "keep", v / n, vc / n }' "$WORK/days.tsv"
    echo
    echo "Request runs along the months: $CLIENTS clients, $REQ_SECS s each, the UPDATE then request_work at the day's noon" \
         "(buffers: shared buffers hit per request):"
    awk 'BEGIN { printf "%-8s %4s %10s %10s %9s %10s %9s %7s %8s %8s %8s %8s\n", "mode", "day", "job rows",
                        "UPDATE tps", "CPU us", "req tps", "CPU us", "x tps", "p99 ms", "buffers", "sent", "others%" }
         { printf "%-8s %4d %10d %10.0f %9.1f %10.0f %9.1f %7.3f %8s %8s %8d %8s\n", $1, $2, $3, $4, $5, $6, $7,
                  $6 / $4, $8, $9, $10, $11 }' "$WORK/runs.tsv"
    echo
    echo "Day $DAYS against the copy of day 1: $ROUNDS rounds of the UPDATE, then request_work on each (order alternating)," \
         "$CLIENTS clients, $REQ_SECS s each:"
    awk 'BEGIN { printf "%-8s %5s %10s %10s %9s %8s %10s %9s %8s %8s\n", "mode", "round", "UPDATE tps",
                        "day-1 tps", "CPU us", "buffers", "last tps", "CPU us", "buffers", "others%" }
         { printf "%-8s %5d %10.0f %10.0f %9.1f %8s %10.0f %9.1f %8s %8s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }' \
        "$WORK/rounds.tsv"
    for mode in $MODES; do
        awk -v m="$mode" "$AWK_MEDIAN"'$1 == m { n++; t[n] = $7 / $4; c[n] = $8 / $5; b[n] = $9 / $6 }
            END { if (n) printf "  %-8s last day / day 1, median of %d rounds: tps %.3f, server CPU a request %.3f, shared buffers a request %.3f\n",
                                m, n, median(t, n), median(c, n), median(b, n) }' "$WORK/rounds.tsv"
    done
    if [ -s "$WORK/low.txt" ]; then
        echo
        echo "THE QUEUE RAN LOW in $(wc -l <"$WORK/low.txt") request run(s): each sent over half the queue, so its last requests"
        echo "found less work than a farm's would; rerun with a larger NQUEUE (or a shorter REQ_SECS) before quoting them:"
        sed 's/^/  /' "$WORK/low.txt"
    fi
    echo
    echo "Plot: bench/out/${SVG##*/}"
}
report | tee "$REPORT"
echo "(written to bench/out/${REPORT##*/})"
