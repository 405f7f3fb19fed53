#!/usr/bin/env bash
# Build fastchess, the match runner OpenBench's worker uses, from its zip,
# into OUT (written whole or not at all).  -O0: it only referees the games,
# and the build takes a third of the time.  scripts/test.sh runs this once,
# before the TAP files' clocks start, into the cache; test/t/060 runs it
# itself when the cache has no build of this zip.
#
# Usage: scripts/build_fastchess.sh ZIP OUT
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/build_fastchess.sh ZIP OUT" >&2; exit 2; }
zip=$(realpath "$1")
out=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/fastchess-build.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
python3 -m zipfile -e "$zip" .
cd "$(ls -d -- */ | head -n 1)"
make -j"$(nproc)" CXX=g++ CXXFLAGS='-O0 -std=c++17 -DNDEBUG'
mkdir -p "$(dirname "$out")"
cp fastchess "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
