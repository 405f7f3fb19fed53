#!/usr/bin/env bash
# Make a private copy of Debian's PostgreSQL 15 (server, headers, PGXS,
# pgTAP and pg_cron included) under DIR, so that allot can be built,
# installed and tested there without touching the system installation:
# several checkouts can then test at once, and a benchmark can be sure which
# allot it measures.  PostgreSQL finds its files relative to its binaries,
# so the copy keeps the system's layout below DIR.
#
# Usage: scripts/pg_copy.sh DIR
#   then: ALLOT_PG_BIN=DIR/usr/lib/postgresql/15/bin scripts/test.sh
#   (or PG_CONFIG=DIR/usr/lib/postgresql/15/bin/pg_config for make and bench/)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

[ $# -eq 1 ] || die "usage: scripts/pg_copy.sh DIR"
dest=$1
ensure_packages
[ ! -e "$dest/usr/lib/postgresql/15" ] || die "$dest already holds a copy"
mkdir -p "$dest/usr/lib/postgresql" "$dest/usr/share/postgresql" "$dest/usr/include"
cp -a /usr/lib/postgresql/15 "$dest/usr/lib/postgresql/"
cp -a /usr/share/postgresql/15 "$dest/usr/share/postgresql/"
cp -a /usr/include/postgresql "$dest/usr/include/"
say "PostgreSQL 15 copied to $dest"
echo "ALLOT_PG_BIN=$(cd "$dest" && pwd)/usr/lib/postgresql/15/bin"
