#!/usr/bin/env bash
# Run the allot demo: install prerequisites, build and install allot, start a
# throwaway cluster (pg_cron preloaded, cron.database_name = allot_demo),
# create database allot_demo with pg_cron and allot, run examples/demo.sql,
# then run the fleet emulator's reference scenario (1,000 hosts for a
# virtual week, emulator/scenarios/fleet_week.scn, under fairness recent) in
# database allot_emulate, and stop the cluster.
#
# Usage: scripts/demo.sh [--keep] [--no-emulator] [--no-build]
#        scripts/demo.sh --stop
#   --keep         leave the cluster running, with an empty database farm for
#                  the README's quick starts, and write demo.env (at the
#                  repository's root): `. ./demo.env` connects a shell to it.
#                  A cluster an earlier --keep left is stopped first.
#   --no-emulator  leave out the fleet emulator (about 5 minutes of it)
#   --no-build     use the allot already installed (also ALLOT_NO_BUILD=1,
#                  which test/t/040_readme.pl sets: the README's blocks run
#                  as printed after scripts/test.sh has built allot)
#   --stop         stop the cluster (and its status page) that --keep left,
#                  remove its directory and demo.env
# With --keep it also serves the demo farm's status page (scripts/status_page.sh)
# and prints its address; --stop stops that server too.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

DEMO_DB=allot_demo
WALK_DB=farm            # the README's quick starts run here, from empty
ENV_FILE=demo.env       # what --keep leaves: the export line of its cluster
KEEP=0
EMULATOR=1
BUILD=1
[ "${ALLOT_NO_BUILD:-0}" != 1 ] || BUILD=0
STOP=0
for arg in "$@"; do
    case $arg in
        --keep) KEEP=1 ;;
        --no-emulator) EMULATOR=0 ;;
        --no-build) BUILD=0 ;;
        --stop) STOP=1 ;;
        -h|--help) sed -n '2,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done

# The cluster an earlier --keep left (named by demo.env), stopped: its
# status page's server, then PostgreSQL; its directory and demo.env removed.
stop_kept() {
    local dir pid
    [ -f "$ENV_FILE" ] || return 1
    dir=$(sed -n 's/.* PGHOST=\([^ ]*\) .*/\1/p' "$ENV_FILE")
    case $dir in
        "${TMPDIR:-/tmp}"/allot.*) ;;
        *) die "$ENV_FILE does not name a demo cluster (PGHOST=$dir); remove it by hand" ;;
    esac
    if [ -f "$dir/web.pid" ]; then
        pid=$(cat "$dir/web.pid")
        kill "$pid" 2>/dev/null || true
    fi
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_cluster_user "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null ||
            die "could not stop the cluster in $dir"
    fi
    rm -rf "$dir" "$ENV_FILE"
    say "stopped the demo cluster in $dir"
}
if [ "$STOP" = 1 ]; then
    stop_kept || say "no demo cluster to stop ($ENV_FILE is not here)"
    exit 0
fi
if [ "$KEEP" = 1 ]; then
    stop_kept || true
fi
[ -f examples/demo.sql ] || die "examples/demo.sql not found"

# What to expect, as measured on the project's 2-core VM shared with other
# work (README, "Two commands": 5 min 32 s, 14 s without the emulator);
# installing missing packages comes on top, once.
if [ "$EMULATOR" = 1 ]; then
    say "the demo takes 5 to 7 minutes on 2 cores: building 10 s, the SQL demo 10 s, the fleet emulator about 5 minutes"
else
    say "the demo takes about 15 seconds: building 10 s, the SQL demo 5 to 10 s"
fi
started=$SECONDS
elapsed() { printf '%dm%02ds' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)); }

ensure_packages
# The walk-through that follows --keep runs the example web layer and curl.
[ "$KEEP" = 0 ] || ensure_node || die "could not install Node.js and npm"
if [ "$BUILD" = 1 ]; then
    build_and_install || die "build or install failed"
fi

new_tmpdir DEMO_DIR
start_cluster "$DEMO_DIR" "$DEMO_DB"
createdb "$DEMO_DB"
psql -X -q -v ON_ERROR_STOP=1 -d "$DEMO_DB" \
    -c 'CREATE EXTENSION pg_cron' -c 'CREATE EXTENSION allot'

say "running examples/demo.sql ($(elapsed) so far)"
rc=0
# Its progress lines are the NOTICEs of its simulations: shown as lines of
# their own, without the "psql:examples/demo.sql:106: NOTICE:  " that psql
# puts before each (psql flushes its results before each statement, so
# results and notices keep their order in the one pipe).
psql -X -q -v ON_ERROR_STOP=1 -d "$DEMO_DB" -f examples/demo.sql 2>&1 |
    sed -u 's/^psql:[^ ]*:[0-9]*: NOTICE:  /   /' || rc=$?
[ "$rc" -eq 0 ] || echo "examples/demo.sql failed (psql exit $rc)" >&2

# Beside the emulator's table: why the workload furthest above its fair
# share got more of the FLOPs done than allot gave it.  allot shares peak
# FLOPS; the table counts FLOPs done, and fleet_week's GPU versions deliver
# half their peak (docs/emulator.md: peak, not delivered).
share_gap_note() {
    awk -F, 'NR > 1 && (top == "" || $5 - $6 > gap) { top = $2; share = $5; fair = $6; gap = $5 - $6 }
        END {
            if (top == "") exit
            printf "\nWhy %s did %.1f%% of the FLOPs against a fair %.1f%%: allot shares the farm in\n", top, 100 * share, 100 * fair
            print "peak FLOPS (a job counts as its estimated run time x the peak FLOPS of the devices"
            print "it holds), while the table counts the FLOPs the jobs really did. The GPUs of this"
            print "fleet deliver half their peak (efficiency=0.5 in fleet_week.scn), so a GPU job (all"
            print "of pulsar'"'"'s, protein'"'"'s on a GPU) does half the FLOPs allot counted for it, and the"
            printf "part of %s, which runs on CPUs alone, grows. docs/emulator.md says more.\n\n", top
        }' "$1"
}

# The fleet emulator: the same allot, driven through its public functions
# by 1,000 emulated hosts in virtual time, under allot.fairness = recent,
# the mode docs/emulator.md recommends for hosts that buffer
# hours of work.  Its outputs stay in the tree.
if [ "$EMULATOR" = 1 ]; then
    EMU_SCENARIO=emulator/scenarios/fleet_week.scn
    EMU_OUT=emulator/out/demo-$(date +%Y%m%d-%H%M%S)
    say "fleet emulator: $EMU_SCENARIO, about 5 minutes, a progress line per virtual 10% ($(elapsed) so far)"
    emu_rc=0
    { make -s -C emulator BUILD="$DEMO_DIR/emulator" PG_CONFIG="$PG_CONFIG" &&
      createdb allot_emulate &&
      psql -X -q -v ON_ERROR_STOP=1 -d allot_emulate -c 'CREATE EXTENSION allot' &&
      mkdir -p "$EMU_OUT" &&
      run_limited 1800 "" "$DEMO_DIR/emulator/allot-emulate" \
          -d dbname=allot_emulate -o "$EMU_OUT" -s allot.fairness=recent "$EMU_SCENARIO"
    } || emu_rc=$?
    if [ "$emu_rc" -eq 0 ]; then
        share_gap_note "$EMU_OUT/workloads.csv"
        say "fleet emulator chart: $(cd "$EMU_OUT" && pwd)/shares.svg"
    else
        echo "the fleet emulator failed (exit $emu_rc)" >&2
        [ "$rc" -ne 0 ] || rc=$emu_rc
    fi
fi

if [ "$KEEP" = 1 ]; then
    createdb "$WALK_DB"
    unregister_tmpdir "$DEMO_DIR"     # the EXIT trap leaves it alone now
    # The demo farm's status page (docs/status-page.md), served until stopped.
    status_page=$(bash scripts/status_page.sh "$DEMO_DB" "$DEMO_DIR") ||
        status_page="  status page: could not start it (log: $DEMO_DIR/web.log)"
    web_pid=$(sed -n 's/.*stop it: *kill \([0-9]*\).*/\1/p' <<<"$status_page")
    [ -z "$web_pid" ] || echo "$web_pid" >"$DEMO_DIR/web.pid"
    status_page=$(grep -v 'stop it:' <<<"$status_page")
    databases="$DEMO_DB (the demo above), "
    [ "$EMULATOR" = 0 ] || databases+="allot_emulate (the fleet emulator), "
    cat >"$ENV_FILE" <<ENV
# The cluster scripts/demo.sh --keep left running; scripts/demo.sh --stop stops it.
export PATH=$PG_BIN:\$PATH PGHOST=$DEMO_DIR PGPORT=$CLUSTER_PORT PGUSER=postgres PGDATABASE=$WALK_DB
ENV
    cat <<MSG

The cluster is still running: unix socket only, in $DEMO_DIR (log: $DEMO_DIR/server.log).
Its databases: ${databases}and $WALK_DB (empty, for the README's quick starts).
To use it, in a shell at the repository's root:
  . ./$ENV_FILE
$status_page
To stop it:
  scripts/demo.sh --stop
MSG
else
    stop_cluster "$DEMO_DIR"
fi
say "done in $(elapsed)"
exit "$rc"
