#!/bin/sh
# Build and run the unit tests of the pure C parts (TAP on stdout), from
# anywhere: test/unit/run.sh
set -e
cd "$(dirname "$0")"
exec make --no-print-directory check
