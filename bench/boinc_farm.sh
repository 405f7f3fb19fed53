# bench/boinc_farm.sh: the BOINC farm the BOINC benchmarks drive, on
# bench/cluster.sh's throwaway cluster.  Sourced by bench/boinc_scheduler.sh,
# and bench/boinc_peer.sh after bench/cluster.sh.
#
# The farm: one app (3.6e12 FLOPs a job, so 3600 s on the 1e9 FLOPS the
# client states), one CPU version for x86_64-pc-linux-gnu, one job workload
# of NJOBS unsent jobs, one volunteer account; allot.daily_quota raised so
# that hosts that take hundreds of jobs a run are not stopped by it (BOINC's
# daily_result_quota is raised for its runs too).  The front end runs as in
# production (node server.js, its packages installed with `npm ci` into a
# temp dir), logged in as a member of allot_web, with no limit on the hosts
# an account may make (the benchmark's hosts are all one account's).
#
#   boinc_farm_setup DB NJOBS      database, front end installed, keys, account
#                                  (AUTH), app version; sets FE, DATA_DIR, AUTH
#   boinc_farm_start [ENV=VALUE...]  the front end, on FE_PORT; sets SERVER_PID,
#                                  URL (its master URL); extra settings as given
#   boinc_farm_stop                the front end, stopped
#   boinc_farm_register URL N FILE N hosts registered by a first request each
# shellcheck shell=bash
# shellcheck disable=SC2034  # FE, URL, AUTH and the like are read by the scripts that source this file

EXAMPLES=$BENCH_DIR/../examples
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then die "node and npm are needed"; fi
NODE_PROF=${NODE_PROF:-0}
SERVER_PID=

boinc_farm_stop() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
trap 'boinc_farm_stop; cleanup' EXIT

boinc_farm_setup() {
    local db=$1 njobs=$2
    say "database $db: one app, one CPU version, one workload of $njobs unsent jobs"
    create_bench_db "$db"
    psql_q -d "$db" <<EOF
CREATE ROLE boinc_web LOGIN IN ROLE allot_web;
CREATE SCHEMA boinc AUTHORIZATION boinc_web;
CREATE ROLE farm_admin LOGIN IN ROLE allot_admin;
INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'bench', 3.6e12);
INSERT INTO allot.app_version (id, app_id, platform, resource, ncpus) VALUES (1, 1, 'x86_64-pc-linux-gnu', 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound)
VALUES (1, 'bench', 'bench', 1, 1000, '365 days');   -- hosts never fill up
INSERT INTO allot.job (workload_id, predicted_app_units) SELECT 1, 1 FROM generate_series(1, $njobs);
VACUUM ANALYZE;
ALTER DATABASE $db SET allot.daily_quota = 1000000;
-- All hosts are one account's, one owner in allot (0.7.0): no owner limit
-- in the way either.
ALTER DATABASE $db SET allot.owner_max_hosts = 1000000;
ALTER DATABASE $db SET allot.owner_max_new_hosts_per_day = 1000000;
EOF
    FARM_DB=$db
    say "installing the front end into $WORK/examples (npm ci)"
    tar -C "$EXAMPLES/.." --exclude=node_modules --exclude='*.log' -cf - examples | tar -C "$WORK" -xf -
    (cd "$WORK/examples" && npm ci --no-audit --no-fund --silent) || die "npm ci in examples failed"
    FE=$WORK/examples/boinc
    export DATA_DIR=$WORK/boinc-data
    mkdir -p "$DATA_DIR"
    head -c 65536 /dev/urandom >"$WORK/bench_app"
    boinc_admin setup >/dev/null
    # The front end's tables, made by their owner (as server.js does at start).
    PGUSER=boinc_web psql_q -d "$db" -f "$FE/schema.sql" >/dev/null || die "examples/boinc/schema.sql failed"
    AUTH=$(boinc_admin add-account bench | grep -Eo '[0-9a-f]{32}' | head -n 1) || die "admin.js add-account failed"
    [ -n "$AUTH" ] || die "no authenticator from admin.js add-account"
    boinc_admin add-app-version --app-version-id 1 --version-num 100 --file "$WORK/bench_app" >/dev/null ||
        die "admin.js add-app-version failed"
    FE_PORT=$(free_port)
    URL=http://127.0.0.1:$FE_PORT/
}

boinc_admin() { PGDATABASE=$FARM_DB PGUSER=farm_admin node "$FE/admin.js" "$@"; }

boinc_farm_start() {
    local prof=()
    [ "$NODE_PROF" != 1 ] || prof=(--cpu-prof --cpu-prof-dir="${PROF_DIR:-$BENCH_DIR/out/cpuprof}")
    env PGDATABASE="$FARM_DB" PGUSER=boinc_web PORT="$FE_PORT" HOST=127.0.0.1 PROJECT_NAME=bench \
        MAX_HOSTS_PER_ACCOUNT=0 NEW_HOSTS_PER_DAY=0 "$@" \
        node "${prof[@]}" "$FE/server.js" >"$WORK/fe.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        grep -q serving "$WORK/fe.log" && { say "front end serving $URL (pid $SERVER_PID)"; return; }
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$WORK/fe.log" >&2
    die "the front end did not start"
}

boinc_farm_register() {
    local scheduler=$1 n=$2 file=$3
    say "registering $n hosts at $scheduler (a first request with hostid 0 each)"
    node "$BENCH_DIR/boinc_load.js" register "$scheduler" "${4:-$AUTH}" "$n" "$file" >/dev/null ||
        die "registering hosts at $scheduler failed"
}
