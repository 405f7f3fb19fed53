# shellcheck shell=bash
# Helpers shared by scripts/test.sh and scripts/demo.sh.  Source it from the
# repository root:   cd "$(dirname "$0")/.." && source scripts/common.sh
#
# Sourcing it also installs an EXIT/INT/TERM trap that stops every throwaway
# cluster the script started (pg_ctl -m immediate) and removes its temp dirs.
#
# Environment knobs:
#   ALLOT_PGPORT=N      port of the throwaway clusters (default 5432; they
#                       listen on a unix socket in their own dir only, no TCP)
#   ALLOT_KEEP_TMP=1    keep the temp dirs (logs, results/, regression.diffs)
#                       for inspection; servers are still stopped
#   ALLOT_CACHE=DIR     what tests fetch or build once and keep (default
#                       /var/cache/allot as root, ~/.cache/allot else)
#   ALLOT_PG_BIN=DIR    the PostgreSQL 15 binaries to build, install and test
#                       with (default: Debian's); scripts/pg_copy.sh makes a
#                       private copy, so that several checkouts can test at once

PG_BIN=${ALLOT_PG_BIN:-/usr/lib/postgresql/15/bin}
PG_CONFIG=$PG_BIN/pg_config
export PATH="$PG_BIN:$PATH"      # psql, createdb, pg_ctl ... of version 15

# OS user that owns the clusters: initdb/postgres refuse to run as root.
if [ "$(id -u)" -eq 0 ]; then CLUSTER_USER=postgres; else CLUSTER_USER=$(id -un); fi
CLUSTER_PORT=${ALLOT_PGPORT:-5432}

# What tests fetch or build once and keep between runs (OpenBench's worker
# and its programs, scripts/fetch_openbench.sh; the fastchess build).
if [ "$(id -u)" -eq 0 ]; then
    export ALLOT_CACHE=${ALLOT_CACHE:-/var/cache/allot}
else
    export ALLOT_CACHE=${ALLOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/allot}
fi

# chromium: test/t/030_status_page.pl loads the status page in it.
# boinc-client and libboinc-app-dev: test/t/020_boinc.pl runs Debian's BOINC
# client against examples/boinc, with an app built against the BOINC API,
# in a network namespace of its own (iproute2 brings up its loopback;
# unshare and nsenter are util-linux's).
# python3-requests, python3-psutil, python3-cpuinfo and g++:
# test/t/060_openbench_worker.pl runs OpenBench's worker (Python), which
# builds fastchess (C++) and the engines (gcc) it plays.
# git: examples/openbench/resolver.js reads branches with it, and
# test/openbench/resolver_test.js serves a repository with git daemon.
APT_PACKAGES=(postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
              postgresql-15-cron libtap-parser-sourcehandler-pgtap-perl
              libipc-run-perl libpq-dev make gcc g++ curl chromium
              boinc-client libboinc-app-dev iproute2 util-linux
              python3 python3-requests python3-psutil python3-cpuinfo git)

say() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Run a command as root: directly when we are root, else through sudo.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "error: need root (or sudo) for: $*" >&2
        return 1
    fi
}

# Run a command as the cluster user (postgres when we are root).  The
# environment (PATH, PG*, ...) is kept; runuser only changes HOME/USER/SHELL.
# CLUSTER_USER_PREFIX is the same as a command prefix, for use with run_limited.
if [ "$(id -u)" -eq 0 ]; then
    CLUSTER_USER_PREFIX=(runuser -u "$CLUSTER_USER" --)
else
    CLUSTER_USER_PREFIX=()
fi
as_cluster_user() { "${CLUSTER_USER_PREFIX[@]}" "$@"; }

# run_limited SECS LOG CMD...: run CMD with a time limit; its output is shown
# and, if LOG is not empty, also written to LOG.  CMD runs in the background
# under timeout(1) while we wait for it: bash would delay our INT/TERM trap
# until a foreground command ends, and this way the trap can stop CMD with its
# whole process group (timeout(1) gives it one) at once.
CHILD_PID=
run_limited() {
    local secs=$1 log=$2 rc=0
    shift 2
    if [ -n "$log" ]; then
        # shellcheck disable=SC2016  # $@ and $0 belong to the inner bash
        timeout -k 10 "$secs" bash -o pipefail -c '"$@" 2>&1 | tee "$0"' "$log" "$@" &
    else
        timeout -k 10 "$secs" "$@" &
    fi
    CHILD_PID=$!
    wait "$CHILD_PID" || rc=$?
    CHILD_PID=
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        printf '\ntimed out after %ss: %s\n' "$secs" "$*"
    fi
    return "$rc"
}

# Install the Debian packages we need; no apt at all when all are present.
ensure_packages() {
    local pkg missing=()
    for pkg in "${APT_PACKAGES[@]}"; do
        if [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" != installed ]; then
            missing+=("$pkg")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    say "installing missing packages: ${missing[*]}"
    as_root apt-get update || return 1
    as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y "${APT_PACKAGES[@]}" </dev/null || return 1
    # Debian starts the system's BOINC client when boinc-client is
    # installed; the tests run a client of their own, so leave none running
    # that they installed.
    if [[ " ${missing[*]} " == *" boinc-client "* ]] && [ -d /run/systemd/system ]; then
        as_root systemctl disable --now boinc-client.service || true
    fi
}

# Node.js and npm, for examples/web and test/t/006_web.pl.  Checked by
# command, not by package: NodeSource's nodejs bundles npm and conflicts
# with Debian's npm package, so asking apt for both would fail there.
ensure_node() {
    if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
        return 0
    fi
    say "installing nodejs and npm"
    as_root apt-get update || return 1
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm </dev/null || return 1
}

# make clean; make; make install (the latter as root).  Their output goes to
# a log, shown (its last lines) only when something fails: a reader of the
# demo or the test command wants the progress, not the compiler's command
# lines.  Written with explicit error checks so that it also works inside
# `if ! build_and_install`.
build_and_install() {
    local log rc=0
    log=$(mktemp "${TMPDIR:-/tmp}/allot-build.XXXXXX") || return 1
    say "building and installing allot (output in $log)"
    { make -s clean PG_CONFIG="$PG_CONFIG" &&
      make -j"$(nproc)" PG_CONFIG="$PG_CONFIG" &&
      as_root make install PG_CONFIG="$PG_CONFIG"; } >"$log" 2>&1 </dev/null || rc=$?
    if [ "$rc" -ne 0 ]; then
        printf 'error: build or install failed (exit %s); the last 40 lines of %s:\n' \
            "$rc" "$log" >&2
        tail -n 40 "$log" >&2
        return "$rc"
    fi
    rm -f "$log"
}

# ---------------------------------------------------------------------------
# Temp dirs and clusters, cleaned up by the trap below.

CLEANUP_DIRS=()

# new_tmpdir VAR: create a temp dir owned by the cluster user, store its path
# in VAR and register it for cleanup.
new_tmpdir() {
    local _new_dir   # odd name: must not shadow the caller's VAR
    _new_dir=$(mktemp -d "${TMPDIR:-/tmp}/allot.XXXXXX") || return 1
    CLEANUP_DIRS+=("$_new_dir")
    if [ "$(id -u)" -eq 0 ]; then
        chown "$CLUSTER_USER:" "$_new_dir" || return 1
    fi
    printf -v "$1" '%s' "$_new_dir"
}
unregister_tmpdir() {   # keep this dir (and its server) after the script ends
    local d keep=()
    for d in "${CLEANUP_DIRS[@]}"; do [ "$d" = "$1" ] || keep+=("$d"); done
    CLEANUP_DIRS=(${keep[@]+"${keep[@]}"})
}

# Stop any postmaster whose data directory lies below DIR: our own clusters,
# but also pg_regress temp instances and PostgreSQL::Test::Cluster nodes left
# behind by an interrupted run.
stop_servers_under() {
    local pidfile datadir pid
    [ -d "$1" ] || return 0
    while IFS= read -r pidfile; do
        datadir=$(dirname "$pidfile")
        pid=$(head -n 1 "$pidfile" 2>/dev/null) || continue
        as_cluster_user "$PG_BIN/pg_ctl" -D "$datadir" -m immediate -w stop >/dev/null 2>&1 ||
            { [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; } || true
    done < <(find "$1" -name postmaster.pid 2>/dev/null)
}

# start_cluster DIR [CRON_DB]: initdb DIR/data and start it, listening only on
# a unix socket in DIR, with pg_cron preloaded (cron.database_name = CRON_DB,
# default postgres).  Exports PGHOST/PGPORT/PGUSER/PGDATABASE so psql,
# createdb, pg_prove and pgbench reach it.  DIR must come from new_tmpdir.
start_cluster() {
    local dir=$1 cron_db=${2:-postgres}
    say "starting throwaway cluster in $dir"
    as_cluster_user "$PG_BIN/initdb" -D "$dir/data" --auth=trust -U postgres \
        --encoding=UTF8 --locale=C --no-sync --no-instructions \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
    cat >>"$dir/data/postgresql.conf" <<EOF

# --- throwaway cluster for allot (scripts/common.sh) ---
listen_addresses = ''
unix_socket_directories = '$dir'
port = $CLUSTER_PORT
shared_preload_libraries = 'pg_cron'
cron.database_name = '$cron_db'
cron.host = '$dir'                # pg_cron jobs connect via the socket too
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
    as_cluster_user "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
        >/dev/null || { tail -n 30 "$dir/server.log" >&2; return 1; }
    export PGHOST=$dir PGPORT=$CLUSTER_PORT PGUSER=postgres PGDATABASE=postgres
}

# stop_cluster DIR: stop the cluster started by start_cluster DIR.
stop_cluster() {
    as_cluster_user "$PG_BIN/pg_ctl" -D "$1/data" -m immediate -w stop >/dev/null
}

cleanup() {
    local d
    for d in ${CLEANUP_DIRS[@]+"${CLEANUP_DIRS[@]}"}; do
        stop_servers_under "$d"
        if [ "${ALLOT_KEEP_TMP:-0}" = 1 ]; then
            echo "kept $d" >&2
        else
            rm -rf "$d"
        fi
    done
}
# INT/TERM: stop a running run_limited command first, then exit (which runs
# the EXIT trap).
on_signal() {
    trap '' INT TERM
    if [ -n "$CHILD_PID" ]; then
        kill -TERM "$CHILD_PID" 2>/dev/null || true
        wait "$CHILD_PID" 2>/dev/null || true
    fi
    exit "$1"
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
