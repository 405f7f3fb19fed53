#!/usr/bin/env bash
# Run the allot demo: install prerequisites, build and install allot, start a
# throwaway cluster (pg_cron preloaded, cron.database_name = allot_demo),
# create database allot_demo with pg_cron and allot, run examples/demo.sql,
# then run the fleet emulator's reference scenario (1,000 hosts for a
# virtual week, emulator/scenarios/fleet_week.scn, under fairness recent) in
# database allot_emulate, and stop the cluster.
#
# Usage: scripts/demo.sh [--keep]
#   --keep   leave the cluster running afterwards and print how to connect
#            to it and how to stop it; also serve the demo farm's status
#            page (scripts/status_page.sh) and print its address
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

DEMO_DB=allot_demo
KEEP=0
for arg in "$@"; do
    case $arg in
        --keep) KEEP=1 ;;
        -h|--help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done
[ -f examples/demo.sql ] || die "examples/demo.sql not found"

ensure_packages
build_and_install || die "build or install failed"

new_tmpdir DEMO_DIR
start_cluster "$DEMO_DIR" "$DEMO_DB"
createdb "$DEMO_DB"
psql -X -q -v ON_ERROR_STOP=1 -d "$DEMO_DB" \
    -c 'CREATE EXTENSION pg_cron' -c 'CREATE EXTENSION allot'

say "running examples/demo.sql"
rc=0
psql -X -v ON_ERROR_STOP=1 -d "$DEMO_DB" -f examples/demo.sql || rc=$?
[ "$rc" -eq 0 ] || echo "examples/demo.sql failed (psql exit $rc)" >&2

# The fleet emulator: the same allot, driven through its public functions
# by 1,000 emulated hosts in virtual time, under allot.fairness = recent,
# the mode README "The fleet emulator" recommends for hosts that buffer
# hours of work.  Its outputs stay in the tree.
EMU_SCENARIO=emulator/scenarios/fleet_week.scn
EMU_OUT=emulator/out/demo-$(date +%Y%m%d-%H%M%S)
say "fleet emulator: $EMU_SCENARIO"
emu_rc=0
{ make -s -C emulator BUILD="$DEMO_DIR/emulator" PG_CONFIG="$PG_CONFIG" &&
  createdb allot_emulate &&
  psql -X -q -v ON_ERROR_STOP=1 -d allot_emulate -c 'CREATE EXTENSION allot' &&
  mkdir -p "$EMU_OUT" &&
  run_limited 1800 "" "$DEMO_DIR/emulator/allot-emulate" \
      -d dbname=allot_emulate -o "$EMU_OUT" -s allot.fairness=recent "$EMU_SCENARIO"
} || emu_rc=$?
if [ "$emu_rc" -eq 0 ]; then
    say "fleet emulator chart: $(cd "$EMU_OUT" && pwd)/shares.svg"
else
    echo "the fleet emulator failed (exit $emu_rc)" >&2
    [ "$rc" -ne 0 ] || rc=$emu_rc
fi

if [ "$KEEP" = 1 ]; then
    unregister_tmpdir "$DEMO_DIR"     # the EXIT trap leaves it alone now
    # The demo farm's status page (docs/status-page.md), served until stopped.
    status_page=$(bash scripts/status_page.sh "$DEMO_DB" "$DEMO_DIR") ||
        status_page="  status page: could not start it (log: $DEMO_DIR/web.log)"
    stop_cmd="$PG_BIN/pg_ctl -D $DEMO_DIR/data -m fast stop && rm -rf $DEMO_DIR"
    if [ "$(id -u)" -eq 0 ]; then
        stop_cmd="runuser -u $CLUSTER_USER -- $PG_BIN/pg_ctl -D $DEMO_DIR/data -m fast stop && rm -rf $DEMO_DIR"
    fi
    cat <<MSG

Cluster left running (unix socket only, in $DEMO_DIR; log: $DEMO_DIR/server.log).
  connect: psql -h $DEMO_DIR -p $CLUSTER_PORT -U postgres $DEMO_DB
  stop:    $stop_cmd
$status_page
MSG
else
    stop_cluster "$DEMO_DIR"
fi
exit "$rc"
