#!/usr/bin/env bash
# Fetch the third-party programs test/t/060_openbench_worker.pl runs, at the
# commits it is pinned to, and check them against the hashes below:
#   - OpenBench's worker (its Client/ folder), AndyGrant/OpenBench 9906bad
#     (client version 49), GPL-3.0;
#   - fastchess, the match runner the worker builds, AndyGrant/fastchess
#     1525c4b (v1.8.1), MIT;
#   - weiss, a small UCI engine, TerjeKir/weiss at two commits (the test
#     plays one against the other), GPL-3.0.
# They are not part of allot and are never copied into the repository.  This
# needs a connection to github.com; without one, put the same files in DIR by
# other means (scripts/test.sh and the test check them the same way).
#
# Usage: scripts/fetch_openbench.sh [DIR]
#   DIR defaults to $ALLOT_OPENBENCH_DIR, else the cache scripts/test.sh looks
#   in (/var/cache/allot/openbench as root, ~/.cache/allot/openbench else).
#
# A zip is checked by its contents, not its bytes (GitHub may pack the same
# tree differently): the SHA-256 of the sorted list of its files' SHA-256s,
# top folder left out (scripts/openbench_fixtures.py tree-hash ZIP).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

dest=${1:-${ALLOT_OPENBENCH_DIR:-$ALLOT_CACHE/openbench}}
OPENBENCH=9906bad18e044c4b455539317b8cf037393a7218
FASTCHESS=1525c4b17e009e4c94c313f5a3f6fa2cf299171a
WEISS=(60c513742276cc6696e0615a06a10016bcdd0e6d 3ca09c28f533590d6bb7de67281f82ba9f6adedd)

command -v curl >/dev/null || die "curl is missing (apt-get install curl)"
command -v python3 >/dev/null || die "python3 is missing (apt-get install python3)"
mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# get URL FILE: download, or say which URL could not be had.
get() {
    say "fetching $1"
    curl -fsSL --retry 2 -o "$2" "$1" || die "could not download $1"
}

get "https://github.com/AndyGrant/OpenBench/archive/$OPENBENCH.zip" "$tmp/openbench.zip"
get "https://github.com/AndyGrant/fastchess/archive/$FASTCHESS.zip" "$tmp/fastchess-${FASTCHESS:0:7}.zip"
for sha in "${WEISS[@]}"; do
    get "https://github.com/TerjeKir/weiss/archive/$sha.zip" "$tmp/weiss-$sha.zip"
done
python3 scripts/openbench_fixtures.py extract-client "$tmp/openbench.zip" "$tmp/Client"

# The same checks the tests make; nothing lands in DIR unless all pass.
python3 scripts/openbench_fixtures.py check "$tmp" || die "the downloads do not match the pinned hashes"
rm -rf "$dest/Client"
mv "$tmp/Client" "$dest/Client"
mv "$tmp"/fastchess-*.zip "$tmp"/weiss-*.zip "$dest/"
say "OpenBench's worker, fastchess and weiss are in $dest"
[ "$dest" = "$ALLOT_CACHE/openbench" ] ||
    echo "scripts/test.sh finds them there with ALLOT_OPENBENCH_DIR=$dest"
