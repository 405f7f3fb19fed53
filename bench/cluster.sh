# bench/cluster.sh: the throwaway cluster every benchmark runs on, and how a
# run is measured.  Sourced by bench/*.sh after they set PG_CONFIG and
# BENCH_DIR.
#
# It checks the PostgreSQL tools, makes a cluster in a mktemp dir (as user
# postgres when run as root: initdb refuses root), listening on a unix
# socket in that dir only, with durable commits (fsync and synchronous_commit
# on) and pg_stat_statements preloaded, starts it, exports
# PGHOST/PGPORT/PGUSER/PGDATABASE, and stops and removes it on exit, pass or
# fail.  Nothing is built or installed: the benchmarks measure the allot
# installed in PG_CONFIG's PostgreSQL, and say which one (allot_identity).
#
# A timed run (measure_pgbench) reports, beside pgbench's tps:
#   - p50 and p99 latency, from pgbench's per-transaction log;
#   - server CPU per transaction: utime + stime of every process of the
#     cluster, read from /proc before and after (the postmaster's cutime and
#     cstime hold its children that exited), over the transactions.  tps on
#     a shared machine says as much about the neighbours as about allot; CPU
#     per transaction much less;
#   - the machine's other load during the run: CPU busy in /proc/stat (steal
#     included) that was neither the cluster nor this script's clients;
#   - WAL (bytes, records, full-page images) per transaction from pg_stat_wal,
#     and buffers (shared hit, read, dirtied) and WAL per transaction of the
#     run's own statements from pg_stat_statements, both reset before the run.
# shellcheck shell=bash
# shellcheck disable=SC2034  # RUN_* and the like are read by the scripts that source this file
say() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

command -v "$PG_CONFIG" >/dev/null || die "$PG_CONFIG not found (set PG_CONFIG)"
PG_CONFIG=$(command -v "$PG_CONFIG")
PG_BIN=$("$PG_CONFIG" --bindir)
for tool in initdb pg_ctl psql pgbench; do
    [ -x "$PG_BIN/$tool" ] || die "$PG_BIN/$tool not found"
done
export PATH="$PG_BIN:$PATH"
[ -f "$("$PG_CONFIG" --pkglibdir)/pg_stat_statements.so" ] ||
    die "pg_stat_statements is not installed in $("$PG_CONFIG" --pkglibdir) (it comes with PostgreSQL's contrib)"

# initdb and postgres refuse to run as root: the cluster belongs to postgres.
if [ "$(id -u)" -eq 0 ]; then
    CLUSTER_USER=postgres
    as_cluster_user() { runuser -u "$CLUSTER_USER" -- "$@"; }
else
    CLUSTER_USER=$(id -un)
    as_cluster_user() { "$@"; }
fi

# ---------------------------------------------------------------------------
# Which allot is measured: the library and scripts installed in PG_CONFIG's
# PostgreSQL.  ALLOT_SHA256 is the library's checksum; allot_replaced tells
# whether the file changed since.

ALLOT_SO="$("$PG_CONFIG" --pkglibdir)/allot.so"
ALLOT_CONTROL="$("$PG_CONFIG" --sharedir)/extension/allot.control"
[ -f "$ALLOT_SO" ] && [ -f "$ALLOT_CONTROL" ] ||
    die "allot is not installed in $("$PG_CONFIG" --pkglibdir) and $("$PG_CONFIG" --sharedir)/extension
       Install it first (README: make PG_CONFIG=$PG_CONFIG && make PG_CONFIG=$PG_CONFIG install), then rerun."
ALLOT_SHA256=$(sha256sum "$ALLOT_SO" | cut -c1-16)
ALLOT_MTIME=$(date -u -r "$ALLOT_SO" '+%Y-%m-%d %H:%M:%S UTC')
allot_replaced() { [ "$(sha256sum "$ALLOT_SO" | cut -c1-16)" != "$ALLOT_SHA256" ]; }

# ---------------------------------------------------------------------------
# Throwaway cluster, stopped and removed by the EXIT trap.

WORK=$(mktemp -d "${TMPDIR:-/tmp}/allot-bench.XXXXXX")
CHILD=
cleanup() {
    local rc=$?
    [ -z "$CHILD" ] || kill "$CHILD" 2>/dev/null || true
    if [ -f "$WORK/data/postmaster.pid" ]; then
        as_cluster_user pg_ctl -D "$WORK/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    # A failed run says what the server said (a crash leaves its trace there
    # only); KEEP_CLUSTER=1 keeps the whole cluster for a closer look.
    if [ "$rc" -ne 0 ] && [ -f "$WORK/server.log" ]; then
        echo "----- the server's log, its last 60 lines -----" >&2
        tail -n 60 "$WORK/server.log" >&2
    fi
    if [ "${KEEP_CLUSTER:-0}" = 1 ]; then
        echo "the cluster is kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# Long steps run in the background and are waited for: bash runs a trap
# only between foreground commands, so INT/TERM now stop the run at once.
bg_run() {
    local rc=0
    "$@" &
    CHILD=$!
    wait "$CHILD" || rc=$?
    CHILD=
    return "$rc"
}
[ "$(id -u)" -ne 0 ] || chown "$CLUSTER_USER:" "$WORK"

# The server listens on a socket in $WORK only; still pick a port no local
# server uses, so nothing that looks at ports can mix them up.
free_port() {
    local p
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % 40000))
        if ! ss -Hltn "sport = :$p" 2>/dev/null | grep -q . &&
           [ ! -e "/tmp/.s.PGSQL.$p" ] && [ ! -e "/var/run/postgresql/.s.PGSQL.$p" ]; then
            echo "$p"; return
        fi
    done
    echo 54329
}
PORT=$(free_port)
# huge_pages of the cluster: try (PostgreSQL's default), on or off.
HUGE_PAGES=${HUGE_PAGES:-try}
case $HUGE_PAGES in try|on|off) ;; *) die "HUGE_PAGES=$HUGE_PAGES: try, on or off" ;; esac

say "initdb in $WORK (user $CLUSTER_USER, port $PORT, unix socket only)"
as_cluster_user initdb -D "$WORK/data" --auth=trust -U postgres --encoding=UTF8 \
    --locale=C --no-instructions >"$WORK/initdb.log" 2>&1 ||
    { cat "$WORK/initdb.log" >&2; die "initdb failed"; }
cat >>"$WORK/data/postgresql.conf" <<EOF

# --- allot benchmark (bench/cluster.sh) ---
listen_addresses = ''
unix_socket_directories = '$WORK'
port = $PORT
max_connections = 100
shared_buffers = 1GB
# Durable commits, as in production: fsync and synchronous_commit stay on.
fsync = on
synchronous_commit = on
# Keep checkpoints out of the timed runs (one is forced before each run).
checkpoint_timeout = 30min
max_wal_size = 8GB
# A new backend maps shared buffers as it first touches them, a page fault
# per 4 kB page: with huge pages (2 MB) it is warm at once, as a production
# server's should be.  try: used when the kernel has them (vm.nr_hugepages).
huge_pages = $HUGE_PAGES
# Buffers and WAL per statement.  track = top: the runs' own statements; a
# profile sets track = all for its database to see allot's inner ones.
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = top
EOF
as_cluster_user pg_ctl -D "$WORK/data" -l "$WORK/server.log" -w -t 120 start >/dev/null ||
    { tail -n 30 "$WORK/server.log" >&2; die "server did not start"; }
export PGHOST=$WORK PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
POSTMASTER_PID=$(head -n 1 "$WORK/data/postmaster.pid")
# Whether the shared memory is in huge pages: a mapping of the postmaster
# with 2 MB (or larger) kernel pages.
HUGE_PAGES_USED=$(awk '/^KernelPageSize:/ && $2 >= 2048 { n++ } END { print n ? "on" : "off" }' \
                  "/proc/$POSTMASTER_PID/smaps" 2>/dev/null || echo unknown)
PG_VERSION=$(psql -X -At -c 'SHOW server_version')

psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

# An awk function for the scripts' reports: median(v, n) of v[1..n], which
# it sorts in place, leaving the range in lo and hi.  Use: awk "$AWK_MEDIAN"'...'
AWK_MEDIAN='
function median(v, n,   i, j, x) {
    for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
    lo = v[1]; hi = v[n]
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
'

# The statistics are read from database postgres, so that the benchmark
# databases' pg_stat_statements hold only what their runs did.
psql_q -c 'CREATE EXTENSION pg_stat_statements'

# create_bench_db DB: a database with allot and pg_stat_statements; sets
# EXT_VERSION.
create_bench_db() {
    psql_q -c "CREATE DATABASE $1"
    if ! psql_q -d "$1" -c 'CREATE EXTENSION allot' -c 'CREATE EXTENSION pg_stat_statements' \
            2>"$WORK/create_extension.err"; then
        cat "$WORK/create_extension.err" >&2
        die "CREATE EXTENSION failed in $1"
    fi
    EXT_VERSION=$(psql_q -d "$1" -At -c "SELECT extversion FROM pg_extension WHERE extname = 'allot'")
}

# The first lines of every report: where, what, and how the server is set.
report_header() {
    echo "$1, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) CPUs"
    echo "PostgreSQL $PG_VERSION ($PG_CONFIG); shared_buffers=1GB, huge pages $HUGE_PAGES_USED (huge_pages=$HUGE_PAGES)," \
         "fsync=on, synchronous_commit=on, autovacuum on, pg_stat_statements loaded (track = top)"
    echo "allot $EXT_VERSION: $ALLOT_SO, sha256 $ALLOT_SHA256..., modified $ALLOT_MTIME$(
        allot_replaced && echo ', REPLACED DURING THE RUN: the runs may have used different builds, rerun')"
}

# ---------------------------------------------------------------------------
# A quiet machine.  Other helpers' work shares these CPUs: before a timed
# run, wait (at most WAIT_MAX seconds) until no other pgbench runs and the
# machine's CPUs were less than BUSY_MAX % busy over a second (our cluster is
# idle then, so that is the others' load).  Sets QUIET to what was seen.

BUSY_MAX=${BUSY_MAX:-25}
WAIT_MAX=${WAIT_MAX:-60}

# busy and total jiffies of all CPUs so far.
machine_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

busy_percent() {
    local b0 t0 b1 t1
    read -r b0 t0 < <(machine_ticks)
    sleep 1
    read -r b1 t1 < <(machine_ticks)
    echo $(( (b1 - b0) * 100 / (t1 - t0 > 0 ? t1 - t0 : 1) ))
}

wait_quiet() {
    local what=$1 t0=$SECONDS busy said=
    while :; do
        busy=$(busy_percent)
        if pgrep -x pgbench >/dev/null; then
            [ -n "$said" ] || { say "$what: waiting for other pgbench runs to end"; said=1; }
        elif [ "$busy" -ge "$BUSY_MAX" ]; then
            [ -n "$said" ] || { say "$what: waiting for the machine to be less than $BUSY_MAX% busy (now $busy%)"; said=1; }
        else
            QUIET="quiet ($busy% busy)"
            break
        fi
        if [ $((SECONDS - t0)) -ge "$WAIT_MAX" ]; then
            QUIET="NOT QUIET after ${WAIT_MAX}s ($busy% busy)"
            say "$what: $QUIET; going on"
            return
        fi
    done
    [ -z "$said" ] || { QUIET="$QUIET after $((SECONDS - t0))s"; say "$what: waited $((SECONDS - t0)) s"; }
}

# ---------------------------------------------------------------------------
# CPU accounting (clock ticks).

CLK_TCK=$(getconf CLK_TCK)

# CPU of every process of the cluster so far: the postmaster's own and its
# exited children's, and what each live child has used.  Fields after the
# ")" that ends the command name: 12 utime, 13 stime, 14 cutime, 15 cstime.
# A child that exits and is reaped between reading the children and reading
# the postmaster would count twice (live, and in the postmaster's cutime):
# the postmaster is read before and after the children, and the reading is
# taken again until nothing was reaped in between.
# (cluster_ticks user: the ticks in user mode only, where the server's own
# code runs; the rest is the kernel's: system calls, I/O, scheduling.)
postmaster_ticks() {
    sed 's/.*) //' "/proc/$POSTMASTER_PID/stat" |
        awk -v u="${1:-}" '{ print $12 + (u ? 0 : $13), $14 + (u ? 0 : $15) }'
}
cluster_ticks() {
    local pids own reaped own2 reaped2 kids user=
    [ "${1:-}" != user ] || user=1
    for _ in 1 2 3 4 5 6 7 8; do
        read -r own reaped < <(postmaster_ticks "$user")
        pids=$(pgrep -P "$POSTMASTER_PID" | sed 's|.*|/proc/&/stat|')
        # shellcheck disable=SC2086  # a list of paths
        kids=$(cat $pids 2>/dev/null | sed 's/.*) //' | awk -v u="$user" '{ s += $12 + (u ? 0 : $13) } END { print s + 0 }')
        read -r own2 reaped2 < <(postmaster_ticks "$user")
        [ "$reaped2" = "$reaped" ] && break
    done
    echo $((own2 + reaped2 + kids))
}

# CPU of this script's children that exited and were waited for (pgbench).
client_ticks() { sed 's/.*) //' "/proc/$$/stat" | awk '{ print $14 + $15 }'; }

# cpu_sampler_start FILE: "epoch-seconds cluster-ticks" into FILE every
# second, until cpu_sampler_stop; for figures per minute of a long run.
cpu_sampler_start() {
    while :; do
        echo "$(date +%s.%N) $(cluster_ticks)"
        sleep 1
    done >"$1" &
    SAMPLER=$!
}
cpu_sampler_stop() { kill "$SAMPLER"; wait "$SAMPLER" 2>/dev/null || true; }

# Wait until the backends of database DB (other than autovacuum) have gone,
# so that their CPU is in the postmaster's cutime and their statistics are
# flushed.
wait_backends_gone() {
    for _ in $(seq 100); do
        pgrep -P "$POSTMASTER_PID" -f "^postgres: [^ ]+ $1 " >/dev/null || break
        sleep 0.05
    done
    sleep 0.1
}

# ---------------------------------------------------------------------------
# measure_begin DB ... measure_end DB N: what the cluster and the machine did
# between the two, for N transactions (or calls) on database DB.
# measure_begin checkpoints, waits for a quiet machine and resets the
# statistics; measure_end waits for DB's backends to go.  Sets:
#   RUN_QUIET               what wait_quiet saw
#   RUN_START RUN_SECS      when it began (epoch seconds), how long it took
#   RUN_CPU_US              server CPU per transaction, microseconds
#   RUN_USER_US             the part of it in user mode (the server's code;
#                           the rest is system calls, I/O and scheduling)
#   RUN_SERVER_PCT          server CPU, % of one CPU
#   RUN_CLIENT_PCT          this script's children's CPU (pgbench), % of one CPU
#   RUN_OTHERS_PCT          the rest of the machine's busy CPU, % of one CPU
#   RUN_WAL_B RUN_WAL_REC RUN_WAL_FPI   pg_stat_wal per transaction
#   RUN_TX_SYNC             transactions per WAL fsync (pg_stat_wal's wal_sync):
#                           how many commits shared each flush; - if none
#   RUN_STMT                "hit read dirtied wal_bytes wal_records" per
#                           transaction, DB's top-level statements but those
#                           matching MEASURE_EXCLUDE (a regular expression)
measure_begin() {
    measure_ready "$1"
    reset_statistics
    measure_counters
}

# measure_begin in parts: measure_ready DB checkpoints and waits for a quiet
# machine; reset_statistics; measure_counters [PID] takes the counters,
# PID's process tree (a client still running, as pgbench in a run with a
# warm-up) counted as client CPU already spent.
measure_ready() {
    psql_q -d "$1" -c CHECKPOINT
    wait_quiet "$1"
    RUN_QUIET=$QUIET
}

reset_statistics() {
    psql_q -c 'SELECT pg_stat_statements_reset()' -c "SELECT pg_stat_reset_shared('wal')" >/dev/null
}

measure_counters() {
    local live=0
    # the start first when clients run: the counters take many processes
    [ -z "${1:-}" ] || { RUN_START=$(date +%s.%N); live=$(tree_ticks "$1"); }
    M_C0=$(cluster_ticks) M_U0=$(cluster_ticks user) M_K0=$(($(client_ticks) + live))
    read -r M_B0 _ < <(machine_ticks)
    [ -n "${1:-}" ] || RUN_START=$(date +%s.%N)
}

# CPU ticks of process PID and its descendants, alive (their threads' too).
tree_ticks() {
    local pids=$1 next=$1 p
    while [ -n "$next" ]; do
        next=$(for p in $next; do pgrep -P "$p"; done | tr '\n' ' ')
        pids="$pids $next"
    done
    # shellcheck disable=SC2046  # a list of paths
    cat $(printf '/proc/%s/stat ' $pids) 2>/dev/null | sed 's/.*) //' | awk '{ s += $12 + $13 } END { print s + 0 }'
}

measure_end() {
    local db=$1 n=$2 s1 c1 u1 k1 b1
    s1=$(date +%s.%N)
    wait_backends_gone "$db"
    c1=$(cluster_ticks) u1=$(cluster_ticks user) k1=$(client_ticks)
    read -r b1 _ < <(machine_ticks)
    read -r RUN_SECS RUN_CPU_US RUN_USER_US RUN_SERVER_PCT RUN_CLIENT_PCT RUN_OTHERS_PCT < <(
        awk -v secs="$(awk -v a="$RUN_START" -v b="$s1" 'BEGIN { print b - a }')" -v c="$((c1 - M_C0))" \
            -v u="$((u1 - M_U0))" -v k="$((k1 - M_K0))" -v b="$((b1 - M_B0))" -v n="$n" -v hz="$CLK_TCK" 'BEGIN {
            # /proc/stat counts the ticks of all CPUs, at hz per CPU.
            others = (b - c - k) / hz; if (others < 0) others = 0
            printf "%.1f %.1f %.1f %.0f %.0f %.0f\n", secs, c / hz * 1e6 / n, u / hz * 1e6 / n,
                   100 * c / hz / secs, 100 * k / hz / secs, 100 * others / secs }')
    read -r RUN_WAL_B RUN_WAL_REC RUN_WAL_FPI RUN_TX_SYNC < <(psql_q -At -F ' ' -c "
        SELECT round(wal_bytes / $n, 0), round(wal_records::numeric / $n, 2),
               round(wal_fpi::numeric / $n, 3),
               coalesce(round($n::numeric / nullif(wal_sync, 0), 1)::text, '-') FROM pg_stat_wal")
    RUN_STMT=$(statement_costs "$db" "$n" "${MEASURE_EXCLUDE:-^$}")
}

# measure_pgbench NAME DB [pgbench options and scripts...]: one timed pgbench
# run on database DB between measure_begin and measure_end.  MEASURE_SIDE (a
# command run in the background during the run and stopped when pgbench
# ends, e.g. a sweeper) and MEASURE_EXCLUDE may be set for the call.  Sets what
# measure_end sets, and:
#   RUN_TPS RUN_N           tps, transactions (after the warm-up)
#   RUN_N_ALL               transactions, the warm-up's too
#   RUN_WARMUP_TPS          tps during the warm-up (with MEASURE_WARMUP)
#   RUN_P50 RUN_P99         latency, ms (per-transaction log)
#   RUN_LOG RUN_SUMMARY     the per-transaction logs' prefix; pgbench's output
# pgbench's options: -n -M prepared -l always; the caller gives -c, -j, -T or
# -t, -D and -f.  A failed transaction is an error.
# MEASURE_WARMUP=S (with -T): the first S seconds of the run are not
# measured, and the rest is, in the same connections.  A backend maps the
# shared buffers into its memory page by page as it first touches them, so
# the first seconds of new connections cost more the more pages a request
# reads (over 2.5 times for assign_workload at 100,000 hosts and 32
# clients); a web layer's pooled connections pay it once.  The figures are
# then those of the transactions that ended after the warm-up (buffers and
# WAL from the statistics' reset just after it).
measure_pgbench() {
    local name=$1 db=$2 prefix="$WORK/log/$1" rc=0 side=
    shift 2
    mkdir -p "$WORK/log"
    rm -f "$prefix" "$prefix".*
    RUN_SUMMARY="$prefix-summary.txt" RUN_LOG=$prefix
    if [ "${MEASURE_WARMUP:-0}" -gt 0 ]; then
        [ -z "${MEASURE_SIDE:-}" ] || die "measure_pgbench: MEASURE_WARMUP with MEASURE_SIDE is not supported"
        measure_ready "$db"
        pgbench -n -M prepared -l --log-prefix="$prefix" "$@" "$db" >"$RUN_SUMMARY" 2>&1 &
        CHILD=$!
        sleep "$MEASURE_WARMUP"
        # the counters first: the reset takes a connection, and the clients
        # go on meanwhile (a loaded machine may take seconds over it)
        measure_counters "$CHILD"
        reset_statistics
        wait "$CHILD" || rc=$?
        CHILD=
    else
        measure_begin "$db"
        if [ -n "${MEASURE_SIDE:-}" ]; then
            $MEASURE_SIDE >"$prefix-side.txt" 2>&1 &
            side=$!
        fi
        bg_run pgbench -n -M prepared -l --log-prefix="$prefix" "$@" "$db" >"$RUN_SUMMARY" 2>&1 || rc=$?
    fi
    if [ -n "$side" ]; then
        # Still running means it did not fail; stopped now, it may say so.
        kill -0 "$side" 2>/dev/null || wait "$side" || { cat "$prefix-side.txt" >&2; die "$MEASURE_SIDE failed"; }
        kill "$side" 2>/dev/null || true
        wait "$side" 2>/dev/null || true
    fi
    [ "$rc" -eq 0 ] || { cat "$RUN_SUMMARY" >&2; die "pgbench $name failed"; }
    RUN_TPS=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$RUN_SUMMARY" | tail -n 1)
    RUN_N=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$RUN_SUMMARY")
    RUN_N_ALL=$RUN_N
    if [ "${MEASURE_WARMUP:-0}" -gt 0 ]; then
        # the transactions that ended after the warm-up (log: columns 5 and
        # 6 the end's epoch seconds and microseconds), over their span
        # and the warm-up's own tps (from the first transaction's start):
        # how much slower the connections were while new
        read -r RUN_N RUN_TPS RUN_WARMUP_TPS < <(cat "$prefix".* | awk -v t0="$RUN_START" '
            { t = $5 + $6 / 1e6; s = t - $3 / 1e6; if (first == "" || s < first) first = s
              if (t >= t0) { n++; if (t > last) last = t } else w++ }
            END { printf "%d %.6f %.1f\n", n, (last > t0 ? n / (last - t0) : 0), (t0 > first ? w / (t0 - first) : 0) }')
    fi
    [ -n "$RUN_TPS" ] && [ -n "$RUN_N" ] && [ "$RUN_N" -gt 0 ] ||
        { cat "$RUN_SUMMARY" >&2; die "no transactions in the output of pgbench $name"; }
    if grep -q '^number of failed transactions: [1-9]' "$RUN_SUMMARY"; then
        cat "$RUN_SUMMARY" >&2
        grep -A12 -E 'ERROR' "$WORK/server.log" | tail -n 60 >&2
        die "pgbench $name had failed transactions"
    fi
    measure_end "$db" "$RUN_N"
    if [ "${MEASURE_WARMUP:-0}" -gt 0 ]; then
        read -r RUN_P50 RUN_P99 < <(cat "$prefix".* | awk -v t0="$RUN_START" '$5 + $6 / 1e6 >= t0' |
                                    latency_percentiles)
    else
        read -r RUN_P50 RUN_P99 < <(latency_percentiles "$prefix".*)
    fi
}

# p50 and p99 latency in ms of pgbench per-transaction logs (column 3: the
# latency in microseconds; failed transactions are left out).
latency_percentiles() {
    cat "$@" | awk '$3 ~ /^[0-9]+$/ { print $3 }' | sort -n |
        awk '{ v[NR] = $1 }
             END { if (NR == 0) { print "- -"; exit }
                   i = int(NR * 0.5 + 0.999999); j = int(NR * 0.99 + 0.999999)
                   printf "%.2f %.2f\n", v[i] / 1000, v[j] / 1000 }'
}

# statement_costs DB N EXCLUDE: shared buffers hit, read, dirtied, WAL bytes
# and WAL records per transaction (N of them) of DB's top-level statements,
# those matching EXCLUDE left out.
statement_costs() {
    psql_q -At -F ' ' -v db="$1" -v n="$2" -v exclude="$3" <<'EOF'
SELECT round(sum(shared_blks_hit) / :n, 1), round(sum(shared_blks_read) / :n, 2),
       round(sum(shared_blks_dirtied) / :n, 2), round(sum(wal_bytes) / :n, 0),
       round(sum(wal_records) / :n, 2)
  FROM pg_stat_statements
 WHERE toplevel AND dbid = (SELECT oid FROM pg_database WHERE datname = :'db')
   AND query !~ :'exclude'
EOF
}

# profile_statements DB N EXCLUDE: every statement of DB's
# pg_stat_statements (track = all: allot's inner SPI statements too) but
# those matching EXCLUDE, per transaction (N of them): calls, mean time,
# buffers and WAL, by total time.
profile_statements() {
    psql_q -v db="$1" -v n="$2" -v exclude="$3" <<'EOF'
\pset footer off
SELECT round(calls::numeric / :n, 3) AS "calls/tx",
       round(1000 * mean_exec_time::numeric, 1) AS "mean us",
       round((1000 * total_exec_time / :n)::numeric, 1) AS "us/tx",
       round(rows::numeric / calls, 1) AS "rows/call",
       round(shared_blks_hit::numeric / calls, 1) AS "hit/call",
       round(shared_blks_read::numeric / calls, 2) AS "read/call",
       round(shared_blks_dirtied::numeric / calls, 2) AS "dirtied/call",
       round(wal_bytes / calls, 0) AS "WAL B/call",
       round(wal_records::numeric / calls, 2) AS "WAL rec/call",
       CASE WHEN toplevel THEN 'top' ELSE 'inner' END AS level,
       left(regexp_replace(query, '\s+', ' ', 'g'), 150) AS statement
  FROM pg_stat_statements
 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = :'db') AND query !~ :'exclude'
 ORDER BY toplevel DESC, total_exec_time DESC
 LIMIT 25;
EOF
}

# table_writes DB TABLES: per table of schema allot in the list, the tuples
# inserted, updated, HOT-updated and deleted so far (pg_stat_user_tables),
# one line "name ins upd hot del" each.
table_writes() {
    psql_q -d "$1" -At -F ' ' -c "
        SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables
         WHERE schemaname = 'allot' AND relname IN ($2) ORDER BY relname"
}
