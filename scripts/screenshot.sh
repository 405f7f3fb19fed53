#!/usr/bin/env bash
# Load a page in headless Chromium (Debian's chromium package) and save a
# screenshot; with --dom, also the page's DOM after its scripts ran.  Used by
# test/t/030_status_page.pl and to make docs/status-page.png:
#
#   scripts/demo.sh --keep                   # prints the status page's address
#   scripts/screenshot.sh http://127.0.0.1:PORT/status docs/status-page.png
#
# Usage: scripts/screenshot.sh [--size WxH] [--dom FILE] [--wait MS] URL PNG
#   --size WxH   the window, in CSS pixels (default 1000x1500)
#   --dom FILE   also write the DOM there (a second page load)
#   --wait MS    let the page's timers run for MS ms of virtual time first
#
# The browser gets a fresh profile in a temp dir, no GPU, no sandbox (as root
# Chromium runs only without it, and it only loads pages this machine
# serves), and no network of its own: no background or component updates,
# no sync, no QUIC, and no name resolves but localhost and 127.0.0.1.
set -euo pipefail

size=1000x1500 dom= wait_ms=
while [ $# -gt 0 ]; do
    case $1 in
        --size) size=$2; shift 2 ;;
        --dom) dom=$2; shift 2 ;;
        --wait) wait_ms=$2; shift 2 ;;
        -h|--help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -eq 2 ] || { echo "usage: scripts/screenshot.sh [--size WxH] [--dom FILE] [--wait MS] URL PNG" >&2; exit 2; }
url=$1 png=$2
[[ $size =~ ^[0-9]+x[0-9]+$ ]] || { echo "--size must be WxH, not $size" >&2; exit 2; }
[ -z "$wait_ms" ] || [[ $wait_ms =~ ^[0-9]+$ ]] || { echo "--wait must be milliseconds, not $wait_ms" >&2; exit 2; }
command -v chromium >/dev/null || { echo "chromium is not installed (apt-get install chromium)" >&2; exit 1; }

profile=$(mktemp -d "${TMPDIR:-/tmp}/allot-chromium.XXXXXX")
trap 'rm -rf "$profile"' EXIT

browse() {
    # HOME and XDG dirs too: Chromium writes caches and crash reports there.
    env HOME="$profile" XDG_CONFIG_HOME="$profile/config" XDG_CACHE_HOME="$profile/cache" \
        timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu \
        --disable-background-networking --disable-component-update --disable-sync \
        --no-first-run --disable-quic --disable-extensions --no-default-browser-check \
        --host-resolver-rules='MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1' \
        --user-data-dir="$profile/data" --hide-scrollbars --force-device-scale-factor=1 \
        --window-size="${size/x/,}" ${wait_ms:+--virtual-time-budget=$wait_ms} "$@" "$url" \
        2>>"$profile/chromium.log"
}

if ! browse --screenshot="$png" >/dev/null || [ ! -s "$png" ]; then
    echo "chromium made no screenshot of $url; its log:" >&2
    tail -n 20 "$profile/chromium.log" >&2
    exit 1
fi
if [ -n "$dom" ]; then
    if ! browse --dump-dom >"$dom" || [ ! -s "$dom" ]; then
        echo "chromium gave no DOM of $url; its log:" >&2
        tail -n 20 "$profile/chromium.log" >&2
        exit 1
    fi
fi
