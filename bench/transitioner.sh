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
# Usage: bench/transitioner.sh
#   Needs PostgreSQL 15 (initdb, pg_ctl, psql) and allot installed into it
#   (README install step: make && make install).  Builds nothing.  Starts a
#   throwaway cluster in a temp dir (unix socket in that dir only), as user
#   postgres when run as root, and removes it on exit, pass or fail.  Before
#   each timed step it waits until no pgbench runs on the machine (other
#   benchmarks) and the 1-minute load average is below LOAD_MAX.
#
# Environment:
#   NAPPS=1000 NJOBS=1000000 NHOSTS=20   data sizes
#   MAX_CALLS=10000      stop (with an error) after this many calls
#   LOAD_MAX=2.5         wait for a 1-minute load average below this
#   PG_CONFIG=pg_config  which PostgreSQL installation to use
#   The allot settings are the defaults (allot.transitioner_batch 10000,
#   allot.flops_sample_size 100, allot.flops_percentile 0.05).
#
# The report is also written to bench/out/transitioner-<date>.txt (git-ignored).
set -euo pipefail

NAPPS=${NAPPS:-1000}
NJOBS=${NJOBS:-1000000}
NHOSTS=${NHOSTS:-20}
MAX_CALLS=${MAX_CALLS:-10000}
LOAD_MAX=${LOAD_MAX:-2.5}
PG_CONFIG=${PG_CONFIG:-pg_config}

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
DB=bench_transitioner
sql() { psql_q -d "$DB" -At -c "$1"; }


# Progress NOTICEs (and any error) come on stderr.
notices() { sed -u 's/^.*NOTICE:  /    /'; }

ALLOT_SO="$("$PG_CONFIG" --pkglibdir)/allot.so"
SO_MTIME=$(date -u -r "$ALLOT_SO" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || echo unknown)
SO_MD5=$(md5sum <"$ALLOT_SO" 2>/dev/null | cut -c1-12 || echo unknown)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
mkdir -p "$BENCH_DIR/out"
REPORT="$BENCH_DIR/out/transitioner-$(date +%Y%m%d-%H%M%S).txt"

# ---------------------------------------------------------------------------
# Data.

t0=$SECONDS
say "database $DB: $NAPPS apps, $NHOSTS hosts, $NJOBS done jobs (inserted directly, not through report_job)"
psql_q -c "CREATE DATABASE $DB"
if ! psql_q -d "$DB" -c 'CREATE EXTENSION allot' 2>"$WORK/create_extension.err"; then
    cat "$WORK/create_extension.err" >&2
    die "CREATE EXTENSION allot failed: is allot installed into $("$PG_CONFIG" --sharedir)/extension?
       Install it first (README: make && make install), then rerun."
fi
bg_run psql_q -d "$DB" -v napps="$NAPPS" -v njobs="$NJOBS" -v nhosts="$NHOSTS" \
    -f "$BENCH_DIR/transitioner_data.sql" >/dev/null || die "data setup failed"
EXT_VERSION=$(sql "SELECT extversion FROM pg_extension WHERE extname = 'allot'")
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
psql_q -d "$DB" -c CHECKPOINT
wait_quiet transitioner
T_LOAD=$QUIET_LOAD
say "run_transitioner() until no report is left"
t0=$SECONDS
bg_run psql_q -d "$DB" -v max_calls="$MAX_CALLS" -f "$BENCH_DIR/transitioner_run.sql" 2> >(notices >&2) >/dev/null ||
    die "the transitioner loop failed"
say "    done in $((SECONDS - t0)) s"

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
P_LOAD=$QUIET_LOAD
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
    echo "allot transitioner benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n)"
    echo "PostgreSQL $(psql -X -At -c 'SHOW server_version'), $(nproc) CPUs;" \
         "shared_buffers=1GB, max_connections=100, fsync=on, synchronous_commit=on (defaults), autovacuum on (defaults)"
    echo "allot $EXT_VERSION ($ALLOT_SO, md5 $SO_MD5..., modified $SO_MTIME); $SETTINGS"
    echo "data: $DATA"
    echo "  (the reports are inserted directly as done rows, as report_job leaves them: generating 1M real reports through report_job would take too long)"
    echo "load average when the script started: $LOAD_BEFORE; each step waited for no pgbench and a 1-min load < $LOAD_MAX"
    echo
    echo "1. SELECT allot.run_transitioner() until reports_read = 0, one call per transaction, timed with its COMMIT" \
         "(load average at start: $T_LOAD)"
    echo "$T_SUMMARY"
    echo "$T_DRIFT"
    echo "$T_CHECK"
    echo "check_invariants(): $([ -z "$INVARIANTS" ] && echo 'empty (ok)' || echo "$INVARIANTS")"
    echo
    echo "2. sum(allot.percentile_disc(a, 0.05)) vs sum((SELECT percentile_disc(0.05) WITHIN GROUP (ORDER BY x) FROM unnest(a) x))," \
         "5 runs each, alternating, after one untimed pass; medians (load average at start: $P_LOAD)"
    echo "$P_TABLE"
    echo "each run, ms:"
    echo "$P_RUNS" | sed 's/^perc_arrays_100/  1,000 x 100   /; s/^perc_arrays_10k/  100 x 10,000  /'
}
if [ "$(date -u -r "$ALLOT_SO" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || echo unknown)" != "$SO_MTIME" ]; then
    SO_MTIME="$SO_MTIME, REPLACED DURING THE RUN: rerun"
fi
report | tee "$REPORT"
echo "(written to bench/out/${REPORT##*/})"
