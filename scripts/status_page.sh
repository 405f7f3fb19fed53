#!/usr/bin/env bash
# Serve the farm status page of a database (docs/status-page.md) with the
# example web layer, in the background, as scripts/demo.sh --keep does.  It
# creates two login roles if missing, allot_demo_web (in allot_web, for the
# web layer's API) and allot_demo_monitor (in allot_monitor, for the page),
# without passwords: for a throwaway cluster that trusts its unix socket.
# It installs the front ends' packages if needed (npm ci), starts
# `node server.js` on a free port of 127.0.0.1, and prints the page's
# address and how to stop it.
#
# Usage: scripts/status_page.sh DB LOGDIR
#   PGHOST, PGPORT and PGUSER (a superuser) name the cluster; the server's
#   log is LOGDIR/web.log.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

[ $# -eq 2 ] || die "usage: scripts/status_page.sh DB LOGDIR"
db=$1 log=$2/web.log

ensure_node >&2 || die "could not install node and npm"
# The front ends' packages (one npm workspace, examples/), with what the
# web layer needs among them.
if [ ! -d examples/node_modules/pg ] || [ ! -d examples/node_modules/allot-common ]; then
    # npm's summary ("added 26 packages") is stdout, its errors stderr
    (cd examples && npm ci --no-audit --no-fund >/dev/null) || die "npm ci failed in examples"
fi
psql -X -q -v ON_ERROR_STOP=1 -d "$db" >&2 <<'SQL' || die "could not create the web layer's roles"
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'allot_demo_web') THEN
        CREATE ROLE allot_demo_web LOGIN IN ROLE allot_web;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'allot_demo_monitor') THEN
        CREATE ROLE allot_demo_monitor LOGIN IN ROLE allot_monitor;
    END IF;
END
$$;
SQL

# setsid: the server outlives this script and the terminal's signals.
PORT=0 HOST=127.0.0.1 PGDATABASE=$db PGUSER=allot_demo_web STATUS_PGUSER=allot_demo_monitor \
    setsid node examples/web/server.js </dev/null >"$log" 2>&1 &
pid=$!
url=
for _ in $(seq 1 150); do
    url=$(sed -n 's|.*listening on \(http://[^ ]*\)/ .*|\1/status|p' "$log")
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$url" ]; then
    kill "$pid" 2>/dev/null || true
    tail -n 20 "$log" >&2
    die "the web layer did not start (log: $log)"
fi
cat <<MSG
  status page: $url   (database $db; log: $log)
  stop it:     kill $pid
MSG
