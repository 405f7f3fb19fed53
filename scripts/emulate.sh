#!/usr/bin/env bash
# Run a fleet emulator scenario (emulator/README.md) on a throwaway cluster:
# build the emulator, start a cluster, create database allot_emulate with
# allot, run the scenario, stop the cluster.  The outputs (summary.txt,
# metrics.csv, workloads.csv, shares.csv, shares.svg) go to a directory it
# prints, emulator/out/NAME-TIME by default.
#
# Usage: scripts/emulate.sh SCENARIO [--out DIR] [--install] [EMULATOR OPTIONS]
#   SCENARIO      a scenario file, e.g. emulator/scenarios/seed003_ex1.scn
#   --out DIR     write the outputs to DIR
#   --install     first install the Debian packages and build and install allot
#                 (otherwise allot must be installed already)
#   other options go to allot-emulate, e.g. -s allot.fairness=debt, -L 1d, -c 4
#
# Environment: ALLOT_PGPORT (see scripts/common.sh), ALLOT_EMULATE_TIMEOUT
# (seconds, default 3600).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

SCENARIO=
OUT=
INSTALL=0
EMULATOR_ARGS=()
while [ $# -gt 0 ]; do
    case $1 in
        --out) [ $# -ge 2 ] || die "--out needs a directory"; OUT=$2; shift 2 ;;
        --install) INSTALL=1; shift ;;
        -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -[docSLs]) [ $# -ge 2 ] || die "$1 needs a value"; EMULATOR_ARGS+=("$1" "$2"); shift 2 ;;
        -*) EMULATOR_ARGS+=("$1"); shift ;;
        *) [ -z "$SCENARIO" ] || die "one scenario at a time"; SCENARIO=$1; shift ;;
    esac
done
[ -n "$SCENARIO" ] || die "usage: scripts/emulate.sh SCENARIO [options] (try --help)"
[ -f "$SCENARIO" ] || die "no such scenario: $SCENARIO"

if [ "$INSTALL" = 1 ]; then
    ensure_packages
    build_and_install || die "build or install failed"
fi
[ -f "$("$PG_CONFIG" --sharedir)/extension/allot.control" ] ||
    die "allot is not installed: run 'make install' or scripts/emulate.sh --install"
[ -f /usr/include/postgresql/libpq-fe.h ] ||
    die "the emulator needs libpq-dev (apt-get install libpq-dev)"

name=$(basename "$SCENARIO" .scn)
if [ -z "$OUT" ]; then
    OUT=emulator/out/$name-$(date +%Y%m%d-%H%M%S)
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

new_tmpdir EMU_DIR
say "building the emulator"
make -s -C emulator BUILD="$EMU_DIR/build" PG_CONFIG="$PG_CONFIG" ||
    die "the emulator does not build"

start_cluster "$EMU_DIR"
createdb allot_emulate
psql -X -q -v ON_ERROR_STOP=1 -d allot_emulate -c 'CREATE EXTENSION allot'

say "running $SCENARIO"
rc=0
run_limited "${ALLOT_EMULATE_TIMEOUT:-3600}" "" "$EMU_DIR/build/allot-emulate" \
    -d dbname=allot_emulate -o "$OUT" ${EMULATOR_ARGS[@]+"${EMULATOR_ARGS[@]}"} "$SCENARIO" || rc=$?
stop_cluster "$EMU_DIR"
if [ "$rc" -ne 0 ]; then
    echo "allot-emulate failed (exit $rc)" >&2
    exit "$rc"
fi
say "outputs in $OUT"
