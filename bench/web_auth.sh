#!/usr/bin/env bash
# Benchmark of the example web layer's host keys (examples/web/auth.js).
#
# Question: what does checking a host key cost per request, with the cache
# of verified keys and without it (scrypt on every request)?
#
# On one throwaway server: allot, NHOSTS hosts with an assignment workload,
# the web layer's table (setup.sql) and a key per host (host-key.js).  The
# web layer (examples/web/server.js, its packages installed with `npm ci`
# into a temp dir) runs twice on a free local port, as a member of
# allot_web:
#   cached    AUTH_CACHE_SIZE=100000, the default: scrypt once per key
#             (a warm-up request per host first), then the cache
#   no cache  AUTH_CACHE_SIZE=0: scrypt on every request (the baseline)
# Each run: CLIENTS clients on kept-alive connections send
# POST /api/heartbeat for the hosts in turn, each with its key, for SECONDS
# seconds (bench/web_load.js).  Reported per run: requests/s, p50 and p99
# latency, the web server's CPU time per request (from /proc, user +
# system) and how busy the machine was before the run (cluster.sh's wait_quiet);
# then the ratio of the two.
# Every answer must be 200.
#
# Usage: bench/web_auth.sh
#   Needs PostgreSQL 15 with allot installed into it (README install step),
#   Node.js 18+ and npm (the npm registry, for `npm ci`).  Starts and removes
#   its own cluster (bench/cluster.sh).
#
# Environment:
#   NHOSTS=20 CLIENTS=8 SECONDS_PER_RUN=15   sizes
#   LOAD_MAX=2.5         wait for a 1-minute load average below this
#   PG_CONFIG=pg_config  which PostgreSQL installation to use
#
# The report is also written to bench/out/web_auth-<date>.txt (git-ignored).
set -euo pipefail

NHOSTS=${NHOSTS:-20}
CLIENTS=${CLIENTS:-8}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-15}
PG_CONFIG=${PG_CONFIG:-pg_config}

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
EXAMPLES=$BENCH_DIR/../examples
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
DB=bench_web
command -v node >/dev/null && command -v npm >/dev/null || die "node and npm are needed"
mkdir -p "$BENCH_DIR/out"
REPORT="$BENCH_DIR/out/web_auth-$(date +%Y%m%d-%H%M%S).txt"

# ---------------------------------------------------------------------------
say "database $DB: $NHOSTS hosts, one assignment workload, a key per host"
psql_q -c "CREATE DATABASE $DB"
export PGDATABASE=$DB
psql_q -c 'CREATE EXTENSION allot' || die "CREATE EXTENSION allot failed: is allot installed?"
psql_q -c "INSERT INTO allot.workload (name, engine) VALUES ('bench', 'E');
           INSERT INTO allot.host (name, threads) SELECT 'h' || g, 8 FROM generate_series(1, $NHOSTS) g;
           CREATE ROLE bench_web LOGIN IN ROLE allot_web;"

say "installing the web layer into $WORK/examples/web (npm ci)"
tar -C "$EXAMPLES/.." --exclude=node_modules --exclude='*.log' -cf - examples | tar -C "$WORK" -xf -
(cd "$WORK/examples" && npm ci --no-audit --no-fund --silent) || die "npm ci failed"
psql_q -f "$WORK/examples/web/setup.sql"
: >"$WORK/hosts"
for id in $(psql_q -At -c 'SELECT id FROM allot.host ORDER BY id'); do
    echo "$id $(node "$WORK/examples/web/host-key.js" issue "$id" 2>/dev/null)" >>"$WORK/hosts"
done
# Every host assigned once, so that a heartbeat finds an assignment.
psql_q -At -c 'SELECT count(*) FROM allot.host h, allot.assign_workload(h.id) a' >/dev/null

WEB_PORT=$(free_port)
SERVER_PID=
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
trap 'stop_server; cleanup' EXIT

# cpu_ticks PID: user + system time of a process, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
TICKS_PER_SEC=$(getconf CLK_TCK)

# run LABEL CACHE_SIZE: one timed run; appends a table row to $ROWS
ROWS=
run() {
    local label=$1 cache=$2 t0 t1 out
    PORT=$WEB_PORT HOST=127.0.0.1 AUTH_CACHE_SIZE=$cache PGUSER=bench_web PG_POOL_SIZE=$CLIENTS \
        node "$WORK/examples/web/server.js" >"$WORK/server-$cache.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        curl -s -o /dev/null "http://127.0.0.1:$WEB_PORT/" && break
        sleep 0.1
    done
    # warm-up: each key once (for the cached run, its one scrypt)
    node "$BENCH_DIR/web_load.js" "http://127.0.0.1:$WEB_PORT" 0 1 "$WORK/hosts" >/dev/null
    wait_quiet "$label"
    t0=$(cpu_ticks "$SERVER_PID")
    out=$(node "$BENCH_DIR/web_load.js" "http://127.0.0.1:$WEB_PORT" "$SECONDS_PER_RUN" "$CLIENTS" "$WORK/hosts")
    t1=$(cpu_ticks "$SERVER_PID")
    stop_server
    # shellcheck disable=SC2016
    ROWS+=$(node -e '
        const r = JSON.parse(process.argv[1]);
        const [label, ticks, hz, load] = process.argv.slice(2);
        if (r.not_200 > 0) { console.error(`${label}: ${r.not_200} answers were not 200`); process.exit(1); }
        const cpuMs = Number(ticks) / Number(hz) * 1000 / r.requests;
        console.log(`| ${label} | ${r.requests} | ${r.rps.toFixed(0)} | ${r.p50_ms.toFixed(2)} ms | ${r.p99_ms.toFixed(2)} ms | ${cpuMs.toFixed(3)} ms | ${load} |`);
    ' "$out" "$label" "$((t1 - t0))" "$TICKS_PER_SEC" "$QUIET")$'\n' || die "$label: a request failed"
    say "$label: $out"
}

run 'cached (AUTH_CACHE_SIZE=100000)' 100000
run 'no cache (AUTH_CACHE_SIZE=0): scrypt every request' 0

{
    echo "bench/web_auth.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, node $(node --version)"
    echo "$NHOSTS hosts, $CLIENTS clients, $SECONDS_PER_RUN s per run, POST /api/heartbeat with the host's key"
    echo
    echo "| run | requests | requests/s | p50 | p99 | web server CPU per request | machine before the run |"
    echo "|---|---:|---:|---:|---:|---:|---|"
    printf '%s' "$ROWS"
    echo
    echo "$ROWS" | awk -F'|' 'NF > 3 { rps[n++] = $4 } END { if (n == 2 && rps[1] > 0) printf "cached / no cache: %.1fx the requests per second\n", rps[0] / rps[1] }'
} | tee "$REPORT"
say "written to $REPORT"
