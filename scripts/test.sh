#!/usr/bin/env bash
# Install prerequisites, build and install allot, then run every test suite:
#   (a) make installcheck: pg_regress tests (REGRESS) and isolation specs
#       (ISOLATION), each in its own --temp-instance (see Makefile)
#   (b) pgTAP: test/pgtap/*.sql, each in a fresh database of a throwaway cluster
#   (c) Perl TAP: test/t/*.pl with prove, if any exist, several at once; a
#       file that passes but writes to stderr (a warning) counts as failed
#   (d) the Debian package: dpkg-buildpackage in a clean copy of the tree,
#       then its autopkgtest (the pg_regress suite) against the .deb's files,
#       unpacked into a copy of the system's PostgreSQL 15
# (a), (b) and (d) run one after the other beside (c), in the background.
# All stages run even if an earlier one fails.  The last line is
# "N passed, N failed" (one per pg_regress test, isolation spec, pgTAP file,
# TAP file and the package), followed by ", N skipped" when a TAP file
# skipped itself (its third-party programs are not here: it says which);
# the exit status is non-zero if anything failed.
#
# Runs as root (clusters and tests then run as user postgres) or as a normal
# user with sudo (sudo only for apt-get and make install).
#
# Environment knobs (see also scripts/common.sh):
#   ALLOT_STAGE_TIMEOUT=S    time limit for each make installcheck half,
#                            pgTAP file and TAP file (default 900 s: a
#                            guard against a hang, generous enough for a
#                            machine busy with other work, not a speed check)
#   ALLOT_TAP_JOBS=N         Perl TAP files run at once (default 3)
#   ALLOT_OPENBENCH_DIR=DIR  OpenBench's pinned worker, fastchess and weiss,
#                            which test/t/060_openbench_worker.pl runs (they
#                            are not in the repository).  Default: the first
#                            of ../shared/openbench and $ALLOT_CACHE/openbench
#                            (scripts/fetch_openbench.sh puts them there) that
#                            holds them as pinned.  Without them 060 is
#                            skipped, saying so; with CI=true it fails.
#   ALLOT_OPENBENCH_CACHE=DIR  fastchess's build for 060, made once before the
#                            TAP files start (default $ALLOT_CACHE/build)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh
shopt -s nullglob

STAGE_TIMEOUT=${ALLOT_STAGE_TIMEOUT:-900}
PGXS_DIR=$("$PG_CONFIG" --pkglibdir 2>/dev/null)/pgxs
PASSED=0
FAILED=0
SKIPPED=0
FASTCHESS_PID=      # fastchess's build in the background (prepare_openbench)

summary_and_exit() {
    local skipped=
    [ "$SKIPPED" -eq 0 ] || skipped=", $SKIPPED skipped"
    echo "$PASSED passed, $FAILED failed$skipped"
    [ "$FAILED" -eq 0 ] && exit 0 || exit 1
}

# Print a possibly long file (diffs, logs), capped at 400 lines.
show_file() {
    local f=$1 n
    [ -s "$f" ] || return 0
    n=$(wc -l <"$f")
    echo "----- ${f#"$WORK"/} ($n lines) -----"
    head -n 400 "$f"
    if [ "$n" -gt 400 ]; then
        echo "----- truncated; rerun with ALLOT_KEEP_TMP=1 to keep it -----"
    fi
}

# ---------------------------------------------------------------------------
# (a) pg_regress and isolation tests.  `make installcheck` runs both in one
# recipe and stops at the first failing half, so run each half on its own
# (the other list emptied on the command line) to always get both counts.

# run_installcheck LABEL OUTDIR MAKE_ARGS...  (OUTDIR: pg_regress --outputdir)
run_installcheck() {
    local label=$1 outdir=$COPY${2:+/$2} rc=0 ok bad
    shift 2
    local log="$WORK/$label.log"
    say "make installcheck ($label)"
    # -s: pg_regress's progress, without make's echo of its command line
    run_limited "$STAGE_TIMEOUT" "$log" "${CLUSTER_USER_PREFIX[@]}" \
        make -s --no-print-directory -C "$COPY" installcheck \
        PG_CONFIG="$PG_CONFIG" TAP_TESTS= "$@" || rc=$?
    # pg_regress prints one "... ok" / "... FAILED" line per test
    ok=$(grep -cE '\.\.\. (ok|failed \(ignored\))' "$log" || true)
    bad=$(grep -cE '\.\.\. FAILED' "$log" || true)
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        bad=$((bad + 1))    # the test that was running when time ran out
    elif [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
        bad=1               # failed outside any test (initdb, missing file...)
    fi
    PASSED=$((PASSED + ok))
    FAILED=$((FAILED + bad))
    [ "$rc" -eq 0 ] && return 0

    echo "$label: make installcheck failed (exit $rc)"
    show_file "$outdir/regression.diffs"
    # a crashed backend is only visible in the temp instance's server log
    grep -hE 'TRAP:|terminated by signal|PANIC:' "$outdir/log/postmaster.log" 2>/dev/null |
        head -n 20 || true
}

# run_quietly SECS LOG CMD...: run_limited, its standard output kept in
# LOG only, and shown only when CMD fails: a passing file's prove summary
# ("All tests successful.", "Files=1, ...", "Result: PASS") says nothing the
# progress line and the stage's count do not.  Standard error is left as
# the caller has it (run_tap checks that a passing test writes none).
run_quietly() {
    local secs=$1 log=$2 rc=0
    shift 2
    run_limited "$secs" "" "$@" >"$log" || rc=$?
    [ "$rc" -eq 0 ] || cat "$log"
    return "$rc"
}

# ---------------------------------------------------------------------------
# (b) pgTAP: one fresh database per file so files cannot see each other.
run_pgtap() {
    local files=(test/pgtap/*.sql) f db rc dir failed_files=()
    if [ ${#files[@]} -eq 0 ]; then
        say "pgTAP: no files in test/pgtap"
        return 0
    fi
    new_tmpdir dir
    if ! start_cluster "$dir"; then
        echo "pgTAP: could not start the cluster"
        FAILED=$((FAILED + ${#files[@]}))
        return 0
    fi
    for f in "${files[@]}"; do
        db=pgtap_$(basename "$f" .sql | tr -c 'A-Za-z0-9_\n' '_')
        say "pgTAP: $f (database $db)"
        rc=0
        { createdb "$db" &&
          psql -X -q -v ON_ERROR_STOP=1 -d "$db" \
              -c 'CREATE EXTENSION pgtap' -c 'CREATE EXTENSION allot' &&
          run_quietly "$STAGE_TIMEOUT" "$WORK/pgtap.log" \
              pg_prove --psql-bin "$PG_BIN/psql" -d "$db" --failures --comments "$f"
        } || rc=$?
        if [ "$rc" -eq 0 ]; then
            PASSED=$((PASSED + 1))
        else
            FAILED=$((FAILED + 1))
            failed_files+=("$f")
        fi
    done
    stop_cluster "$dir"
    say "pgTAP: ${#files[@]} files, $((${#files[@]} - ${#failed_files[@]})) passed," \
        "${#failed_files[@]} failed${failed_files[0]+: ${failed_files[*]}}"
}

# ---------------------------------------------------------------------------
# (c) Perl TAP tests: they start their own clusters through
# PostgreSQL::Test::Cluster, so run them as the cluster user, from test/ in
# the scratch copy (tmp_check/ and its logs land in test/tmp_check).
# ALLOT_REPO is the checkout itself: a test that needs files beside it
# finds them there (ALLOT_OPENBENCH_DIR, when set, names OpenBench's).
#
# TAP_JOBS files run at once: most of these tests wait (for a real client's
# polling, a minute boundary, a standby), so they overlap well.  Each has
# its own clusters, ports, temp dirs and network namespace.  The longest
# start first, so that the short ones fill the gaps.
TAP_JOBS=${ALLOT_TAP_JOBS:-3}
# Everything but 060 runs at a lower priority (nice 5): OpenBench's worker
# gives each engine's bench a minute, and on a machine this suite keeps busy
# the bench took longer.  Nothing else here times itself.
BESIDE_NICENESS=5
# 060 comes fourth: fastchess, which it needs, is built meanwhile.
TAP_LONGEST_FIRST=(040_readme 021_boinc_project 022_boinc_quorum 060_openbench_worker 020_boinc 011_bench
                   050_concurrency 002_pg_cron 071_failover 030_status_page 010_emulator)
TAP_WORKERS=()

# INT/TERM: fastchess's build and the running TAP files' workers go first (each waits for a
# timeout(1) that runs prove), then what common.sh stops.
stop_tap_workers() {
    local pid
    [ -z "$FASTCHESS_PID" ] || kill -TERM "$FASTCHESS_PID" 2>/dev/null || true
    if [ -n "$BESIDE_PID" ]; then
        kill -TERM "$BESIDE_PID" 2>/dev/null || true
        wait "$BESIDE_PID" 2>/dev/null || true
    fi
    for pid in ${TAP_WORKERS[@]+"${TAP_WORKERS[@]}"}; do
        pkill -TERM -P "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
    done
}
trap 'stop_tap_workers; on_signal 130' INT
trap 'stop_tap_workers; on_signal 143' TERM

# run_tap_file FILE DIR: one file, its output, stderr and exit status
# (with the seconds it took) into DIR/NAME.{out,err,rc}.
run_tap_file() {
    local f=$1 dir=$2 name rc=0 t0=$SECONDS niceness=$BESIDE_NICENESS
    name=$(basename "$f" .pl)
    [ "$name" != 060_openbench_worker ] || niceness=0
    run_limited "$STAGE_TIMEOUT" "" nice -n "$niceness" "${CLUSTER_USER_PREFIX[@]}" \
        env -C "$COPY/test" -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE \
        TESTDIR="$COPY/test" TMPDIR="$WORK/tmp" ALLOT_REPO="$PWD" \
        PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
        PERL5LIB="$PGXS_DIR/src/test/perl${PERL5LIB:+:$PERL5LIB}" \
        prove "${f#test/}" >"$dir/$name.out" 2>"$dir/$name.err" </dev/null || rc=$?
    echo "$rc $((SECONDS - t0))" >"$dir/$name.rc"
}

# report_tap_file FILE DIR: count a finished file, and show why it failed.
report_tap_file() {
    local f=$1 dir=$2 name rc secs log
    name=$(basename "$f" .pl)
    read -r rc secs <"$dir/$name.rc"
    # A test that passes says nothing on stderr: a warning there (Perl's,
    # node's, a tool's) is a defect to fix, not noise to get used to.
    if [ -s "$dir/$name.err" ]; then
        echo "----- $f wrote to stderr -----"
        cat "$dir/$name.err"
        if [ "$rc" -eq 0 ]; then
            echo "$f: failed: it passed but wrote to stderr"
            rc=1
        fi
    fi
    # prove says "skipped: REASON" of a file that planned skip_all
    if [ "$rc" -eq 0 ] && grep -q '\.\. skipped: ' "$dir/$name.out"; then
        say "TAP: $f skipped: $(sed -n 's/.*\.\. skipped: //p' "$dir/$name.out" | head -n 1)"
        SKIPPED=$((SKIPPED + 1))
        return 0
    fi
    if [ "$rc" -eq 0 ]; then
        say "TAP: $f passed ($secs s)"
        PASSED=$((PASSED + 1))
        return 0
    fi
    say "TAP: $f FAILED ($secs s)"
    cat "$dir/$name.out"
    FAILED=$((FAILED + 1))
    TAP_FAILED_FILES+=("$f")
    log="$COPY/test/tmp_check/log/regress_log_$name"
    if [ -s "$log" ]; then
        echo "----- last 80 lines of ${log#"$WORK"/} -----"
        tail -n 80 "$log"
    fi
}

run_tap() {
    local files=() f n dir pid i done_pid
    local -A started=() worker_file=()
    for n in "${TAP_LONGEST_FIRST[@]}"; do
        [ -f "test/t/$n.pl" ] && files+=("test/t/$n.pl") && started[test/t/$n.pl]=1
    done
    for f in test/t/*.pl; do
        [ -n "${started[$f]:-}" ] || files+=("$f")
    done
    if [ ${#files[@]} -eq 0 ]; then
        say "TAP: no files in test/t"
        return 0
    fi
    # File::Temp dirs (socket dirs; kept when a test fails) go below $WORK too
    mkdir -p "$WORK/tmp" "$WORK/tap"
    if [ "$(id -u)" -eq 0 ]; then
        chown "$CLUSTER_USER:" "$WORK/tmp"
    fi
    dir=$WORK/tap
    TAP_FAILED_FILES=()
    say "TAP: ${#files[@]} files, $TAP_JOBS at a time"
    i=0
    while [ "$i" -lt ${#files[@]} ] || [ ${#TAP_WORKERS[@]} -gt 0 ]; do
        if [ "$i" -lt ${#files[@]} ] && [ ${#TAP_WORKERS[@]} -lt "$TAP_JOBS" ]; then
            f=${files[$i]}
            i=$((i + 1))
            [ "$f" != test/t/060_openbench_worker.pl ] || wait_for_fastchess
            say "TAP: $f started"
            run_tap_file "$f" "$dir" &
            TAP_WORKERS+=("$!")
            worker_file[$!]=$f
            continue
        fi
        done_pid=
        wait -n -p done_pid "${TAP_WORKERS[@]}" || true
        [ -n "$done_pid" ] || continue
        report_tap_file "${worker_file[$done_pid]}" "$dir"
        local still=()
        for pid in "${TAP_WORKERS[@]}"; do
            [ "$pid" = "$done_pid" ] || still+=("$pid")
        done
        TAP_WORKERS=(${still[@]+"${still[@]}"})
    done
    say "TAP: ${#files[@]} files, $((${#files[@]} - ${#TAP_FAILED_FILES[@]})) passed," \
        "${#TAP_FAILED_FILES[@]} failed${TAP_FAILED_FILES[0]+: ${TAP_FAILED_FILES[*]}}"
}

# ---------------------------------------------------------------------------
# OpenBench's pinned worker and the programs it builds, for
# test/t/060_openbench_worker.pl: not in the repository (third-party, GPL).
# The first place that holds them as pinned (scripts/openbench_fixtures.py
# check) is copied into the scratch area, where the cluster user can read
# them whatever the checkout's parent allows, and fastchess is built from
# them in the background while the first TAP files run: its two minutes are not
# spent inside the test's own time limit, and the build is kept for the next
# run.  When no place holds them, the test skips itself (fails under CI=true)
# and says what is missing.
prepare_openbench() {
    local d found= zip key cache=${ALLOT_OPENBENCH_CACHE:-$ALLOT_CACHE/build}
    for d in ${ALLOT_OPENBENCH_DIR:+"$ALLOT_OPENBENCH_DIR"} ../shared/openbench "$ALLOT_CACHE/openbench"; do
        if [ -d "$d" ] && python3 scripts/openbench_fixtures.py check "$d" >/dev/null 2>&1; then
            found=$d
            break
        fi
    done
    if [ -z "$found" ]; then
        unset ALLOT_OPENBENCH_DIR
        return 0
    fi
    cp -R --no-preserve=mode "$found" "$WORK/openbench"
    mkdir -p "$cache"
    if [ "$(id -u)" -eq 0 ]; then
        chown -R "$CLUSTER_USER:" "$WORK/openbench" "$cache"
    fi
    export ALLOT_OPENBENCH_DIR="$WORK/openbench" ALLOT_OPENBENCH_CACHE="$cache"
    zip=$(ls "$WORK"/openbench/fastchess-*.zip)
    key=$(sha256sum "$zip" | cut -c1-16)
    [ -x "$cache/fastchess-$key-O0" ] && return 0
    say "OpenBench: building fastchess from $found, in the background (log: $WORK/fastchess.log)"
    "${CLUSTER_USER_PREFIX[@]}" env TMPDIR="$WORK" \
        timeout -k 10 "$STAGE_TIMEOUT" bash scripts/build_fastchess.sh "$zip" "$cache/fastchess-$key-O0" \
        >"$WORK/fastchess.log" 2>&1 </dev/null &
    FASTCHESS_PID=$!
}

# Before 060 starts: fastchess's build has ended (if it failed, 060 tries
# again itself and shows why).
wait_for_fastchess() {
    [ -n "$FASTCHESS_PID" ] || return 0
    if wait "$FASTCHESS_PID"; then
        say "OpenBench: fastchess built"
    else
        say "OpenBench: fastchess's build failed; the last lines of its log:"
        tail -n 20 "$WORK/fastchess.log"
    fi
    FASTCHESS_PID=
}

# ---------------------------------------------------------------------------
# (a), (b) and (d), one after the other, run beside the TAP files (c): most
# TAP files wait (for a real client's polling, a minute boundary, a
# standby), and the SQL suites and the package's build keep the CPUs busy
# meanwhile, so that the whole stays within ten minutes on two cores.  They
# run in a subshell with its own counts (written to a file at its end), its
# own temp dirs and clusters (cleaned up by its own EXIT trap), and its own
# lines in the output, which may come between the TAP files' lines.
BESIDE_PID=

start_beside_tap() {
    (
        renice -n "$BESIDE_NICENESS" -p "$BASHPID" >/dev/null
        CLEANUP_DIRS=()
        trap cleanup EXIT
        trap 'on_signal 130' INT
        trap 'on_signal 143' TERM
        PASSED=0
        FAILED=0
        run_installcheck regress "" ISOLATION=
        run_installcheck isolation output_iso REGRESS=
        run_pgtap
        run_package
        echo "$PASSED $FAILED" >"$WORK/beside.counts"
    ) </dev/null &
    BESIDE_PID=$!
}

end_beside_tap() {
    local passed failed
    if [ -n "$BESIDE_PID" ]; then
        wait "$BESIDE_PID" || true
        BESIDE_PID=
    fi
    if read -r passed failed 2>/dev/null <"$WORK/beside.counts"; then
        PASSED=$((PASSED + passed))
        FAILED=$((FAILED + failed))
    else
        echo "the SQL suites and the package ended without their counts"
        FAILED=$((FAILED + 1))
    fi
}

# ---------------------------------------------------------------------------
# (d) The Debian package (debian/).  dpkg-buildpackage -us -uc -b builds it in
# a clean copy of the tree, with pg_buildext, against the system's
# PostgreSQL 15.  Its version must be allot.control's.  Then the package's
# own test, debian/tests/installcheck (the pg_regress suite), runs against
# its files: the .deb is unpacked (dpkg-deb -x) into a copy of the system's
# PostgreSQL 15 from which every file of allot was removed, so that the
# copy's server finds the package's files where apt would have put them.
# The system's PostgreSQL is not touched.
package_failed() {
    echo "package: $1"
    if [ -s "$WORK/package.log" ]; then
        echo "----- last 60 lines of package.log -----"
        tail -n 60 "$WORK/package.log"
    fi
    FAILED=$((FAILED + 1))
}

run_package() {
    local dir src root log version want contents listed expected rc=0
    local sys=/usr/lib/postgresql/15 share=/usr/share/postgresql/15
    say "Debian package: dpkg-buildpackage, then the regression suite against the .deb"
    log="$WORK/package.log"
    new_tmpdir dir
    src=$dir/allot
    root=$dir/root
    mkdir "$src"
    tar -cf - --exclude=./.git --exclude=./tmp_check --exclude=./tmp_check_iso \
        --exclude=./results --exclude=./output_iso --exclude=./log . | tar -xf - -C "$src"
    if ! env -C "$src" dpkg-buildpackage -us -uc -b -J"$(nproc)" >"$log" 2>&1 </dev/null; then
        package_failed "dpkg-buildpackage failed"
        return 0
    fi
    local debs=("$dir"/postgresql-15-allot_*.deb)
    if [ ${#debs[@]} -ne 1 ]; then
        package_failed "dpkg-buildpackage made no postgresql-15-allot .deb"
        return 0
    fi
    say "package: $(basename "${debs[0]}")"

    version=$(dpkg-deb -f "${debs[0]}" Version)
    want=$(sed -n "s/^default_version = '\(.*\)'\$/\1/p" allot.control)
    if [ "$version" != "$want" ]; then
        package_failed "the package is allot $version, but allot.control's default_version is $want: add a debian/changelog entry for $want"
        return 0
    fi
    contents=$(dpkg-deb -c "${debs[0]}" | awk '{ print $6 }')
    listed=$(sed -n 's|^\./usr/share/postgresql/15/extension/\(.\+\)$|\1|p' <<<"$contents" | sort)
    expected=$(printf '%s\n' allot.control allot--*.sql | sort)
    if [ "$listed" != "$expected" ] || ! grep -qx '\./usr/lib/postgresql/15/lib/allot\.so' <<<"$contents"; then
        package_failed "the package does not hold allot.so, allot.control and exactly the tree's scripts: ${listed//$'\n'/ }"
        return 0
    fi

    mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql"
    cp -a "$sys" "$root/usr/lib/postgresql/"
    cp -a "$share" "$root/usr/share/postgresql/"
    rm -rf "$root$sys/lib/allot.so" "$root$sys/lib/bitcode/allot" \
        "$root$sys/lib/bitcode/allot.index.bc" "$root$share"/extension/allot[.-]*
    dpkg-deb -x "${debs[0]}" "$root"
    run_limited "$STAGE_TIMEOUT" "" env -C "$src" PG_CONFIG="$root$sys/bin/pg_config" \
        debian/tests/installcheck >>"$log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        package_failed "debian/tests/installcheck failed against the unpacked .deb (exit $rc)"
        return 0
    fi
    grep -E "^### allot|tests passed" "$log" || true
    PASSED=$((PASSED + 1))
}

# ---------------------------------------------------------------------------

# The Debian package (d) is built with dpkg-buildpackage, debhelper and
# pg_buildext (postgresql-common, pulled in by postgresql-server-dev-all).
APT_PACKAGES+=(build-essential dpkg-dev debhelper postgresql-server-dev-all)
ensure_packages
ensure_node
if ! build_and_install; then
    echo "build or install failed"
    FAILED=1
    summary_and_exit
fi

# Scratch copy of the tree (with the fresh build): pg_regress and the TAP
# tests write into it, and as root it must belong to the cluster user.
new_tmpdir WORK
COPY=$WORK/repo
mkdir "$COPY"
tar -cf - --exclude=./.git --exclude=./tmp_check --exclude=./tmp_check_iso \
    --exclude=./results --exclude=./output_iso --exclude=./log . | tar -xf - -C "$COPY"
if [ "$(id -u)" -eq 0 ]; then
    chown -R "$CLUSTER_USER:" "$COPY"
fi
prepare_openbench
start_beside_tap
run_tap
end_beside_tap
summary_and_exit
