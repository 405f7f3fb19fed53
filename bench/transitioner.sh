#!/usr/bin/env bash
# Benchmark of allot.run_transitioner and allot.percentile_disc.
#
# Issue: 1,000,000 reports over 1,000 apps processed by the transitioner;
# report the time per call and reports per second, and the percentile step
# against percentile_disc over the same arrays in the same run (target: at
# least 10x faster).
#
# On one throwaway server (bench/transitioner_*.sql):
#   1. 1,000 apps (a CPU version each, a GPU version for every third), a job
#      workload per app, 20 hosts, and NJOBS jobs already reported as
#      successes (inserted directly as done rows: generating them through
#      report_job would take far longer than what is measured).  Then
#      SELECT allot.run_transitioner(), each call in its own transaction, until
#      it reads no report; per call its time (with its COMMIT) and what it did.
#   2. allot.percentile_disc(a, 0.05) against
#      (SELECT percentile_disc(0.05) WITHIN GROUP (ORDER BY x) FROM unnest(a) x)
#      summed over 1,000 arrays of 100 values and over 100 arrays of 10,000,
#      5 times each (median), with both sums checked equal.
#
# Step 1 also reports server CPU, buffers and WAL per call and per report
# (bench/cluster.sh's measure_begin and measure_end).
#
# Usage: bench/transitioner.sh            (~3 min on a 2-CPU machine)
#   Needs PostgreSQL 14+ (initdb, pg_ctl, psql, pg_stat_statements) with
#   allot installed into it; builds and installs nothing.  Starts a
#   throwaway cluster in a temp dir (unix socket in that dir only), as user
#   postgres when run as root, and removes it on exit, pass or fail.  Before
#   each timed step it waits for a quiet machine (bench/cluster.sh:
#   BUSY_MAX, WAIT_MAX).
#
# Environment:
#   NAPPS=1000 NJOBS=1000000 NHOSTS=20   data sizes
#   MAX_CALLS=10000      stop (with an error) after this many calls
#   PG_CONFIG=pg_config  the PostgreSQL installation, and the allot in it
#   The allot settings are the defaults (allot.transitioner_batch 10000,
#   allot.flops_sample_size 100, allot.flops_percentile 0.05).
#
# The report is also written to bench/out/transitioner-<date>.txt (git-ignored).
set -euo pipefail

NAPPS=${NAPPS:-1000}
NJOBS=${NJOBS:-1000000}
NHOSTS=${NHOSTS:-20}
MAX_CALLS=${MAX_CALLS:-10000}
PG_CONFIG=${PG_CONFIG:-pg_config}

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
DB=bench_transitioner
sql() { psql_q -d "$DB" -At -c "$1"; }


# Progress NOTICEs (and any error) come on stderr.
notices() { sed -u 's/^.*NOTICE:  /    /'; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
mkdir -p "$BENCH_DIR/out"
REPORT="$BENCH_DIR/out/transitioner-$(date +%Y%m%d-%H%M%S).txt"

# ---------------------------------------------------------------------------
# Data.

t0=$SECONDS
say "database $DB: $NAPPS apps, $NHOSTS hosts, $NJOBS done jobs (inserted directly, not through report_job)"
create_bench_db "$DB"
bg_run psql_q -d "$DB" -v napps="$NAPPS" -v njobs="$NJOBS" -v nhosts="$NHOSTS" \
    -f "$BENCH_DIR/transitioner_data.sql" >/dev/null || die "data setup failed"
DATA=$(sql "SELECT format('%s apps (%s with a GPU version), %s hosts, %s done jobs not yet sampled (%s on a GPU version)',
        (SELECT count(*) FROM allot.app),
        (SELECT count(DISTINCT app_id) FROM allot.app_version WHERE resource <> 'cpu'),
        (SELECT count(*) FROM allot.host),
        count(*), count(*) FILTER (WHERE v.resource <> 'cpu'))
      FROM allot.job j JOIN allot.app_version v ON v.id = j.app_version_id
     WHERE j.state = 'done' AND NOT j.sampled")
# The allot settings exist once the library is loaded.
SETTINGS=$(psql_q -d "$DB" -At -c "LOAD 'allot'" -c "SELECT format('allot.transitioner_batch=%s, allot.flops_sample_size=%s, allot.flops_percentile=%s, allot.flops_avg_weight=%s; jit=%s',
        current_setting('allot.transitioner_batch'), current_setting('allot.flops_sample_size'),
        current_setting('allot.flops_percentile'), current_setting('allot.flops_avg_weight'),
        current_setting('jit'))")
say "    $DATA"
say "database $DB ready in $((SECONDS - t0)) s"

# ---------------------------------------------------------------------------
# 1. The transitioner.

sql "CREATE TABLE public.transitioner_calls (call int PRIMARY KEY, ms double precision, result jsonb)" >/dev/null
measure_begin "$DB"
T_LOAD="$(cut -d' ' -f1-3 /proc/loadavg), $RUN_QUIET"
say "run_transitioner() until no report is left"
t0=$SECONDS
bg_run psql_q -d "$DB" -v max_calls="$MAX_CALLS" -f "$BENCH_DIR/transitioner_run.sql" 2> >(notices >&2) >/dev/null ||
    die "the transitioner loop failed"
say "    done in $((SECONDS - t0)) s"
T_CALLS=$(sql "SELECT count(*) FROM public.transitioner_calls")
T_READ=$(sql "SELECT sum((result ->> 'reports_read')::bigint) FROM public.transitioner_calls")
measure_end "$DB" "$T_CALLS"
T_COST=$(awk -v c="$RUN_CPU_US" -v n="$T_CALLS" -v r="$T_READ" -v w="$RUN_WAL_B" -v s="$RUN_STMT" 'BEGIN {
    split(s, f, " ")
    printf "server CPU %.0f ms per call, %.1f us per report; per call: shared buffers %s hit, %s read, %s dirtied; WAL %.1f MB (%.0f B per report)",
           c / 1000, c * n / r, f[1], f[2], f[3], w / 1048576, w * n / r }')

T_SUMMARY=$(psql_q -d "$DB" -c "\\pset footer off" -c "
    SELECT count(*) AS calls,
           count(*) FILTER (WHERE (result ->> 'reports_read')::bigint > 0) AS \"with reports\",
           round(sum(ms)::numeric / 1000, 2) AS \"total s\",
           round(avg(ms)::numeric, 1) AS \"mean ms\",
           round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms))::numeric, 1) AS \"median ms\",
           round(max(ms)::numeric, 1) AS \"max ms\",
           sum((result ->> 'reports_read')::bigint) AS \"reports read\",
           round(sum((result ->> 'reports_read')::bigint) / (sum(ms) / 1000))::bigint AS \"reports/s\",
           sum((result ->> 'flops_samples')::bigint) AS \"flops samples\",
           sum((result ->> 'flops_estimates')::bigint) AS \"flops estimates\",
           sum((result ->> 'credited')::bigint) AS credited,
           sum((result ->> 'timed_out')::bigint) AS \"timed out\"
      FROM public.transitioner_calls")
T_DRIFT=$(sql "SELECT format('mean ms of calls 1-10: %s, of the last 10 calls with reports: %s',
        round(avg(ms) FILTER (WHERE call <= 10)::numeric, 1),
        round(avg(ms) FILTER (WHERE call > n - 11 AND call < n)::numeric, 1))
      FROM public.transitioner_calls, (SELECT max(call) AS n FROM public.transitioner_calls) m")
T_CHECK=$(sql "SELECT format('afterwards: %s done jobs not sampled; %s of %s apps have est_flops_per_au (%s with a CPU figure, %s with a GPU figure); %s CPU and %s GPU values waiting in the apps'' arrays',
        (SELECT count(*) FROM allot.job WHERE state = 'done' AND NOT sampled),
        count(*) FILTER (WHERE est_flops_per_au IS NOT NULL), count(*),
        count(*) FILTER (WHERE cpu_flops_per_au IS NOT NULL), count(*) FILTER (WHERE gpu_flops_per_au IS NOT NULL),
        sum(cardinality(cpu_samples)), sum(cardinality(gpu_samples)))
      FROM allot.app")
INVARIANTS=$(sql "SELECT coalesce(string_agg(c, E'\n'), '') FROM allot.check_invariants() c")

# ---------------------------------------------------------------------------
# 2. The percentile step against percentile_disc.

psql_q -d "$DB" -c CHECKPOINT
wait_quiet percentile
P_LOAD="$(cut -d' ' -f1-3 /proc/loadavg), $QUIET"
say "allot.percentile_disc against percentile_disc WITHIN GROUP, 5 times each"
bg_run psql_q -d "$DB" -f "$BENCH_DIR/transitioner_percentile.sql" >/dev/null ||
    die "the percentile comparison failed"
P_TABLE=$(psql_q -d "$DB" -c "\\pset footer off" -c "
    WITH m AS (
        SELECT arrays, method, percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) AS median_ms,
               min(total) AS lo, max(total) AS hi
          FROM public.perc_times GROUP BY arrays, method)
    SELECT CASE a.arrays WHEN 'perc_arrays_100' THEN '1,000 x 100' ELSE '100 x 10,000' END AS arrays,
           round(a.median_ms::numeric, 2) AS \"allot ms\",
           round(s.median_ms::numeric, 2) AS \"percentile_disc ms\",
           round((s.median_ms / a.median_ms)::numeric, 1) AS speedup,
           CASE WHEN s.median_ms / a.median_ms >= 10 THEN 'PASS' ELSE 'FAIL' END AS \"target >= 10x\",
           CASE WHEN a.lo = a.hi AND s.lo = s.hi AND a.lo = s.lo THEN 'equal' ELSE 'DIFFERENT' END AS sums,
           a.lo AS sum,
           round(b.median_ms::numeric, 2) AS \"scan only ms\",
           round(((s.median_ms - b.median_ms) / nullif(a.median_ms - b.median_ms, 0))::numeric, 1)
               AS \"speedup net of scan\"
      FROM m a JOIN m s ON s.arrays = a.arrays AND s.method = 'percentile_disc WITHIN GROUP'
      JOIN m b ON b.arrays = a.arrays AND b.method = 'scan only'
     WHERE a.method = 'allot.percentile_disc'
     ORDER BY a.arrays")
P_RUNS=$(sql "SELECT string_agg(format('%s %s: %s', arrays, method, ms_list), E'\n' ORDER BY arrays, method)
      FROM (SELECT arrays, method, string_agg(round(ms::numeric, 2)::text, ' ' ORDER BY rep) AS ms_list
              FROM public.perc_times GROUP BY arrays, method) t")

# ---------------------------------------------------------------------------
# Report.

report() {
    report_header "allot transitioner benchmark"
    echo "$SETTINGS"
    echo "data: $DATA"
    echo "  (the reports are inserted directly as done rows, as report_job leaves them: generating 1M real reports through report_job would take too long)"
    echo "load average when the script started: $LOAD_BEFORE; each step waited for a quiet machine"
    echo
    echo "1. SELECT allot.run_transitioner() until reports_read = 0, one call per transaction, timed with its COMMIT" \
         "(load average at start: $T_LOAD)"
    echo "$T_SUMMARY"
    echo "$T_DRIFT"
    echo "$T_COST; the rest of the machine's busy CPU meanwhile: $RUN_OTHERS_PCT% of a CPU"
    echo "$T_CHECK"
    echo "check_invariants(): $([ -z "$INVARIANTS" ] && echo 'empty (ok)' || echo "$INVARIANTS")"
    echo
    echo "2. sum(allot.percentile_disc(a, 0.05)) vs sum((SELECT percentile_disc(0.05) WITHIN GROUP (ORDER BY x) FROM unnest(a) x))," \
         "5 runs each, alternating, after one untimed pass; medians (load average at start: $P_LOAD)"
    echo "$P_TABLE"
    echo "each run, ms:"
    echo "$P_RUNS" | sed 's/^perc_arrays_100/  1,000 x 100   /; s/^perc_arrays_10k/  100 x 10,000  /'
}
report | tee "$REPORT"
echo "(written to bench/out/${REPORT##*/})"
