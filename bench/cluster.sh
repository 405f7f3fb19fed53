# bench/cluster.sh: the throwaway cluster every benchmark runs on, sourced
# by bench/*.sh after they set PG_CONFIG and BENCH_DIR.
#
# It checks the PostgreSQL tools, makes a cluster in a mktemp dir (as user
# postgres when run as root: initdb refuses root), listening on a unix
# socket in that dir only, with durable commits (fsync and synchronous_commit
# on), starts it, exports PGHOST/PGPORT/PGUSER/PGDATABASE, and stops and
# removes it on exit, pass or fail.  It defines say, die, as_cluster_user,
# bg_run (long steps that INT/TERM can stop at once), psql_q and wait_quiet.
# shellcheck shell=bash
say() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

command -v "$PG_CONFIG" >/dev/null || die "$PG_CONFIG not found (set PG_CONFIG)"
PG_BIN=$("$PG_CONFIG" --bindir)
for tool in initdb pg_ctl psql pgbench; do
    [ -x "$PG_BIN/$tool" ] || die "$PG_BIN/$tool not found"
done
export PATH="$PG_BIN:$PATH"

# initdb and postgres refuse to run as root: the cluster belongs to postgres.
if [ "$(id -u)" -eq 0 ]; then
    CLUSTER_USER=postgres
    as_cluster_user() { runuser -u "$CLUSTER_USER" -- "$@"; }
else
    CLUSTER_USER=$(id -un)
    as_cluster_user() { "$@"; }
fi

# ---------------------------------------------------------------------------
# Throwaway cluster, stopped and removed by the EXIT trap.

WORK=$(mktemp -d "${TMPDIR:-/tmp}/allot-bench.XXXXXX")
CHILD=
cleanup() {
    [ -z "$CHILD" ] || kill "$CHILD" 2>/dev/null || true
    if [ -f "$WORK/data/postmaster.pid" ]; then
        as_cluster_user pg_ctl -D "$WORK/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
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
EOF
as_cluster_user pg_ctl -D "$WORK/data" -l "$WORK/server.log" -w -t 120 start >/dev/null ||
    { tail -n 30 "$WORK/server.log" >&2; die "server did not start"; }
export PGHOST=$WORK PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres

psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

LOAD_MAX=${LOAD_MAX:-2.5}

# Wait until no other benchmark runs and the machine is quiet: no pgbench
# process (ours have all ended when this is called) and a 1-minute load
# average below LOAD_MAX.  Sets QUIET_LOAD to the load average then.
wait_quiet() {
    local what=$1 t0=$SECONDS said=
    while :; do
        if pgrep -x pgbench >/dev/null; then
            [ -n "$said" ] || { say "$what: waiting for other pgbench runs to end"; said=1; }
        elif awk -v m="$LOAD_MAX" '{ exit !($1 >= m) }' /proc/loadavg; then
            [ -n "$said" ] || { say "$what: waiting for the load average ($(cut -d' ' -f1 /proc/loadavg)) to drop below $LOAD_MAX"; said=1; }
        else
            break
        fi
        sleep 5
    done
    # shellcheck disable=SC2034  # read by the scripts that source this file
    QUIET_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
    [ -z "$said" ] || say "$what: waited $((SECONDS - t0)) s"
}
