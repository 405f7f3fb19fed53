#!/usr/bin/env bash
# BOINC's own server, built from its sources and served on loopback, for
# bench/boinc_peer.sh: the peer that allot's BOINC front end is measured
# against (issue 32).  Nothing of BOINC is in this repository, and this
# script downloads nothing: give it a copy of BOINC's sources.
#
#   BOINC_SRC=DIR bench/boinc_server.sh start   build (once), make a project, start it;
#                                               prints what bench/boinc_peer.sh needs
#   bench/boinc_server.sh stop                  stop everything start started
#   BOINC_SRC=DIR bench/boinc_server.sh peer    start, bench/boinc_peer.sh, stop (pass
#                                               or fail); its environment passes through
#
# A rerun, from nothing (as root on Debian 12; BOINC's repository cloned or
# mirrored somewhere, at tag server_release/1.6/1.6.2, commit 679b7c89d0db):
#
#   apt-get install <the packages below>     # then, if their services started:
#   systemctl stop mariadb apache2 || true   # nothing of theirs is needed
#   git --git-dir=BOINC.git archive server_release/1.6/1.6.2 | tar -x -C /tmp/boinc-src
#   BOINC_SRC=/tmp/boinc-src PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config \
#       CLIENTS="1 8" ROUNDS=3 bench/boinc_server.sh peer
#
# The first start builds BOINC (about ten minutes of two CPUs, under nice);
# later ones reuse the build.  The report is bench/boinc_peer.sh's.  Leave
# BOINC_DIR's files to RUN_USER: MariaDB, the feeder and Apache write there.
#
# What start makes, under BOINC_DIR (every process as RUN_USER, a system user
# made if missing when run as root; nothing listens beyond 127.0.0.1):
#   - the build: BOINC_SRC is copied to BOINC_DIR/src and built there
#     (./_autosetup, ./configure --disable-client --disable-manager
#     --enable-server, make), unless BOINC_SRC is already a built tree
#     (it has sched/fcgi).  Measured with tag server_release/1.6/1.6.2.
#   - MariaDB with its own data directory on DB_PORT (1 GB buffer pool,
#     every commit flushed, as a production server would be);
#   - a project made by BOINC's tools/make_project, with one app ("peer", a
#     tiny executable signed by bin/update_versions), NJOBS workunits made
#     by bin/create_work --stdin, their results made by bin/transitioner
#     --one_pass (repeated until every one is unsent), and config.xml set
#     for a load test: shmem_work_items 500 (BOINC's best on this 2-CPU
#     machine: 100, the default, starves), min_sendwork_interval 0 (the
#     default 6 s refuses a host that asked within 6 s), daily_result_quota
#     raised, sched_debug_level 2;
#   - the feeder (bin/feeder, sleep_interval FEEDER_SLEEP s);
#   - Apache (prefork) on HTTP_PORT with its own configuration file, serving
#     the scheduler as a CGI program (/boinc_cgi/cgi) and through mod_fcgid
#     (/boinc_fcgi/fcgi, FCGI_PROCS processes);
#   - an account, made in BOINC's database: its authenticator is
#     BOINC_AUTH.
#
# Environment:
#   BOINC_SRC             BOINC's sources (start, peer)
#   BOINC_DIR=bench/out/boinc-server    where all of it lives (git-ignored)
#   RUN_USER=boincpeer    the user every process runs as (when run as root)
#   DB_PORT=23306 HTTP_PORT=28080
#   NJOBS=60000           workunits, one result each, one a request (a
#                         request asks for an hour and a job is estimated
#                         at an hour)
#   FEEDER_SLEEP=0.1 FCGI_PROCS=8
#
# Debian packages (apt-get install): autoconf automake libtool pkg-config m4
# libssl-dev libcurl4-openssl-dev libmariadb-dev-compat libmariadb-dev
# zlib1g-dev libfcgi-dev nlohmann-json3-dev libzip-dev (the build);
# mariadb-server apache2 libapache2-mod-fcgid (serving); python3-mysqldb
# (make_project); php-cli php-mysql php-xml (xadd, update_versions).  Their
# own services need not run; if they do, they are left alone.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BOINC_DIR=${BOINC_DIR:-$BENCH_DIR/out/boinc-server}
RUN_USER=${RUN_USER:-boincpeer}
DB_PORT=${DB_PORT:-23306}
HTTP_PORT=${HTTP_PORT:-28080}
NJOBS=${NJOBS:-60000}
FEEDER_SLEEP=${FEEDER_SLEEP:-0.1}
FCGI_PROCS=${FCGI_PROCS:-8}
MAKE_JOBS=${MAKE_JOBS:-2}
PROJECT=boinc_peer
PROJ=$BOINC_DIR/project
RUN=$BOINC_DIR/run
ENV_FILE=$BOINC_DIR/env

# BOINC's Python tools need the system's python3 and its MySQLdb, whatever
# python3 comes first on the caller's PATH.
SYS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
PYTHON=/usr/bin/python3

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'boinc_server.sh: %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" -eq 0 ]; then
    as_user() { runuser -u "$RUN_USER" -- env PATH="$SYS_PATH" HOME="$BOINC_DIR" USER="$RUN_USER" "$@"; }
else
    RUN_USER=$(id -un)
    as_user() { env PATH="$SYS_PATH" HOME="$BOINC_DIR" USER="$RUN_USER" "$@"; }
fi

# The database, as the project's own login (its password is in env).
sql() {
    # shellcheck disable=SC1090
    source "$ENV_FILE"
    mariadb --protocol=tcp -h 127.0.0.1 -P "$DB_PORT" -u boincadm -p"$DB_PASSWORD" -N -B "$PROJECT" -e "$1"
}

need() {
    local missing=() c
    for c in mariadbd mariadb-install-db mariadb /usr/sbin/apache2 "$PYTHON" php curl; do
        command -v "$c" >/dev/null || missing+=("$c")
    done
    [ -f /usr/lib/apache2/modules/mod_fcgid.so ] || missing+=("mod_fcgid (libapache2-mod-fcgid)")
    "$PYTHON" -c 'import MySQLdb' 2>/dev/null || missing+=("$PYTHON's MySQLdb (python3-mysqldb)")
    [ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]} (see this script's header for the Debian packages)"
}

# BOINC_SRC, built: as given when it is a built tree, else a copy built here.
build() {
    [ -n "${BOINC_SRC:-}" ] || die "set BOINC_SRC to a copy of BOINC's sources (tag server_release/1.6/1.6.2)"
    [ -f "$BOINC_SRC/sched/sched_main.cpp" ] || die "$BOINC_SRC does not hold BOINC's sources (no sched/sched_main.cpp)"
    if [ -x "$BOINC_SRC/sched/fcgi" ] && [ -x "$BOINC_SRC/sched/feeder" ]; then
        SRC=$(cd "$BOINC_SRC" && pwd)
        return
    fi
    SRC=$BOINC_DIR/src
    if [ ! -x "$SRC/sched/fcgi" ]; then
        say "building BOINC's server in $SRC (about half an hour on 2 CPUs; log: $BOINC_DIR/build.log)"
        rm -rf "$SRC"
        mkdir -p "$SRC"
        cp -R "$BOINC_SRC/." "$SRC"
        (cd "$SRC" && ./_autosetup && ./configure --disable-client --disable-manager --enable-server &&
            nice -n 15 make -j"$MAKE_JOBS") >"$BOINC_DIR/build.log" 2>&1 || die "the build failed: see $BOINC_DIR/build.log"
    fi
}

start_db() {
    local pw
    mkdir -p "$RUN"
    as_user mariadb-install-db --no-defaults --datadir="$BOINC_DIR/db" --user="$RUN_USER" \
        --auth-root-authentication-method=socket --auth-root-socket-user="$RUN_USER" --skip-test-db >"$RUN/install-db.log" 2>&1 || die "mariadb-install-db failed: see $RUN/install-db.log"
    as_user mariadbd --no-defaults --datadir="$BOINC_DIR/db" --socket="$RUN/mysqld.sock" --port="$DB_PORT" \
        --bind-address=127.0.0.1 --pid-file="$RUN/mysqld.pid" --log-error="$RUN/mysqld.log" \
        --innodb-buffer-pool-size=1G --innodb-flush-log-at-trx-commit=1 --max-connections=300 \
        </dev/null >/dev/null 2>&1 &
    for _ in $(seq 60); do [ -S "$RUN/mysqld.sock" ] && break; sleep 1; done
    [ -S "$RUN/mysqld.sock" ] || die "MariaDB did not start: see $RUN/mysqld.log"
    pw=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
    # root is the data directory's owner, over the socket only.
    as_user mariadb --socket="$RUN/mysqld.sock" -u "$RUN_USER" -e "
        CREATE USER 'boincadm'@'127.0.0.1' IDENTIFIED BY '$pw';
        CREATE USER 'boincadm'@'localhost' IDENTIFIED BY '$pw';
        GRANT ALL ON *.* TO 'boincadm'@'127.0.0.1';
        GRANT ALL ON *.* TO 'boincadm'@'localhost';" || die "could not make the project's database login"
    printf 'DB_PASSWORD=%s\n' "$pw" >"$ENV_FILE"
    chmod 600 "$ENV_FILE"
}

# config.xml's <config> element: NAME set to VALUE, added when absent.
set_config() {
    python3 - "$PROJ/config.xml" "$1" "$2" <<'EOF'
import re, sys
path, name, value = sys.argv[1:]
text = open(path).read()
tag = re.compile(r'<%s>[^<]*</%s>' % (name, name))
if tag.search(text):
    text = tag.sub('<%s>%s</%s>' % (name, value, name), text, count=1)
else:
    text = text.replace('</config>', '    <%s>%s</%s>\n  </config>' % (name, value, name), 1)
open(path, 'w').write(text)
EOF
}

make_project() {
    # shellcheck disable=SC1090
    source "$ENV_FILE"
    say "making the project with BOINC's tools/make_project"
    (cd "$SRC/tools" && as_user env PYTHONDONTWRITEBYTECODE=1 "$PYTHON" ./make_project --srcdir "$SRC" --no_query --delete_prev_inst \
        --project_root "$PROJ" --url_base "http://127.0.0.1:$HTTP_PORT/" \
        --db_host "127.0.0.1:$DB_PORT" --db_user boincadm --db_passwd "$DB_PASSWORD" --db_name "$PROJECT" \
        --user_name "$RUN_USER" "$PROJECT" 'allot peer benchmark') >"$RUN/make_project.log" 2>&1 ||
        die "make_project failed: see $RUN/make_project.log"
    # make_project installs the FastCGI scheduler only over an older one.
    as_user cp "$SRC/sched/fcgi" "$PROJ/cgi-bin/fcgi"
    set_config shmem_work_items 500
    set_config min_sendwork_interval 0
    set_config daily_result_quota 1000000
    set_config max_wus_to_send 50
    set_config sched_debug_level 2

    say "one app (peer), its version signed by bin/update_versions"
    python3 - "$PROJ/project.xml" <<'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
text = text.replace('</boinc>', '    <app>\n        <name>peer</name>\n        <user_friendly_name>peer</user_friendly_name>\n    </app>\n</boinc>', 1)
open(path, 'w').write(text)
EOF
    local v=$PROJ/apps/peer/1.0/x86_64-pc-linux-gnu
    as_user mkdir -p "$v"
    as_user sh -c "printf '#!/bin/sh\nexit 0\n' >'$v/peer_1.0_x86_64-pc-linux-gnu' && chmod 755 '$v/peer_1.0_x86_64-pc-linux-gnu'"
    as_user sh -c "printf '<input_template>\n<workunit>\n</workunit>\n</input_template>\n' >'$PROJ/templates/peer_in'"
    as_user sh -c "cat >'$PROJ/templates/peer_out'" <<'EOF'
<output_template>
<file_info>
    <name><OUTFILE_0/></name>
    <generated_locally/>
    <upload_when_present/>
    <max_nbytes>10000</max_nbytes>
    <url><UPLOAD_URL/></url>
</file_info>
<result>
    <file_ref>
        <file_name><OUTFILE_0/></file_name>
        <open_name>out</open_name>
    </file_ref>
</result>
</output_template>
EOF
    (cd "$PROJ" && as_user bin/xadd && as_user bin/update_versions --noconfirm) >>"$RUN/make_project.log" 2>&1 ||
        die "xadd or update_versions failed: see $RUN/make_project.log"
}

make_work() {
    local made=0 batch=5000 n unsent
    say "$NJOBS workunits (bin/create_work --stdin), an hour's work each at 1e9 FLOPS"
    while [ "$made" -lt "$NJOBS" ]; do
        n=$((NJOBS - made < batch ? NJOBS - made : batch))
        seq "$((made + 1))" "$((made + n))" | sed 's/^/--wu_name peer_/' |
            (cd "$PROJ" && as_user bin/create_work --appname peer --wu_template templates/peer_in \
                --result_template templates/peer_out --rsc_fpops_est 3.6e12 --rsc_fpops_bound 3.6e13 \
                --delay_bound 864000 --stdin) >>"$RUN/create_work.log" 2>&1 ||
            die "create_work failed: see $RUN/create_work.log"
        made=$((made + n))
    done
    say "their results (bin/transitioner --one_pass, until every one is unsent)"
    for _ in $(seq 500); do
        unsent=$(sql "SELECT count(*) FROM result WHERE server_state = 2")
        [ "$unsent" -ge "$NJOBS" ] && break
        (cd "$PROJ" && as_user bin/transitioner --one_pass -d 1) >>"$RUN/transitioner.log" 2>&1 ||
            die "the transitioner failed: see $RUN/transitioner.log"
    done
    [ "$unsent" -ge "$NJOBS" ] || die "only $unsent of $NJOBS results were made"
    say "$unsent unsent results"
    # Statistics of the tables as they now are: InnoDB's, taken while they
    # were empty, lead the feeder's first query (result joined to workunit)
    # into a plan that runs for minutes, and the scheduler answers "feeder
    # not running" meanwhile.
    sql "ANALYZE TABLE result, workunit, app" >/dev/null
}

make_account() {
    local auth
    auth=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    sql "INSERT INTO user (create_time, email_addr, name, authenticator, total_credit, expavg_credit,
                           expavg_time, teamid, venue, send_email, show_hosts, posts, seti_id,
                           seti_nresults, seti_last_result_time, seti_total_cpu, has_profile,
                           cross_project_id, passwd_hash, email_validated, donated)
         VALUES (UNIX_TIMESTAMP(), 'peer@example.org', 'peer', '$auth', 0, 0, 0, 0, '', 0, 0, 0, 0,
                 0, 0, 0, 0, '$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')', 'x', 1, 0)"
    printf 'BOINC_AUTH=%s\n' "$auth" >>"$ENV_FILE"
}

start_feeder() {
    # The feeder writes its own pid before it becomes bin/feeder (exec): stop
    # must end this server's feeder, never another one of the same user.
    # shellcheck disable=SC2016  # $$ is the inner shell's
    (cd "$PROJ" && as_user sh -c 'echo $$ >"$1"; exec bin/feeder -d 1 --sleep_interval "$2"' feeder \
        "$RUN/feeder.pid" "$FEEDER_SLEEP" </dev/null >"$RUN/feeder.log" 2>&1 &)
    for _ in $(seq 30); do [ -s "$RUN/feeder.pid" ] && break; sleep 1; done
    sleep 1
    if ! { [ -s "$RUN/feeder.pid" ] && kill -0 "$(cat "$RUN/feeder.pid")" 2>/dev/null; }; then
        die "the feeder did not start: see $RUN/feeder.log"
    fi
}

start_apache() {
    local conf=$RUN/httpd.conf mods=/usr/lib/apache2/modules
    mkdir -p "$RUN/fcgid"
    cat >"$conf" <<EOF
ServerRoot "$RUN"
ServerName 127.0.0.1
Listen 127.0.0.1:$HTTP_PORT
DefaultRuntimeDir "$RUN"
PidFile "$RUN/httpd.pid"
ErrorLog "$RUN/httpd-error.log"
LogLevel warn
LoadModule mpm_prefork_module $mods/mod_mpm_prefork.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule alias_module $mods/mod_alias.so
LoadModule mime_module $mods/mod_mime.so
LoadModule cgi_module $mods/mod_cgi.so
LoadModule fcgid_module $mods/mod_fcgid.so
StartServers 10
MinSpareServers 10
MaxSpareServers 40
MaxRequestWorkers 64
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 30
TypesConfig /etc/mime.types
FcgidIPCDir "$RUN/fcgid"
FcgidProcessTableFile "$RUN/fcgid/shm"
FcgidMaxProcesses $FCGI_PROCS
FcgidMaxProcessesPerClass $FCGI_PROCS
FcgidMinProcessesPerClass $FCGI_PROCS
FcgidMaxRequestsPerProcess 0
FcgidIOTimeout 60
FcgidInitialEnv BOINC_PROJECT_DIR $PROJ
ScriptAlias /boinc_cgi/ "$PROJ/cgi-bin/"
Alias /boinc_fcgi/ "$PROJ/cgi-bin/"
<Directory "$PROJ/cgi-bin">
    Require all granted
    Options +ExecCGI
</Directory>
<Location /boinc_fcgi/>
    SetHandler fcgid-script
</Location>
EOF
    chown -R "$RUN_USER": "$RUN"
    as_user /usr/sbin/apache2 -f "$conf" -k start || die "Apache did not start: see $RUN/httpd-error.log"
    for _ in $(seq 30); do [ -s "$RUN/httpd.pid" ] && break; sleep 1; done
    [ -s "$RUN/httpd.pid" ] || die "Apache did not start: see $RUN/httpd-error.log"
}

# The scheduler answers with work in the feeder's shared memory: an empty
# request must get a reply that is not "feeder not running".
wait_scheduler() {
    local url=$1 reply=
    for _ in $(seq 60); do
        reply=$(curl -s -m 20 -X POST --data-binary '<scheduler_request></scheduler_request>' "$url" || true)
        case "$reply" in
        *'<scheduler_reply'*) case "$reply" in *'not running'*) ;; *) return 0 ;; esac ;;
        esac
        sleep 2
    done
    die "the scheduler at $url does not serve: ${reply:0:200} (see $PROJ/log_*/scheduler.log)"
}

start() {
    need
    [ ! -e "$RUN/mysqld.pid" ] || die "a server of $BOINC_DIR seems to run (stop it first: $0 stop)"
    if [ "$(id -u)" -eq 0 ] && ! id "$RUN_USER" >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_USER"
    fi
    mkdir -p "$BOINC_DIR"
    # A start that fails half-way stops what it started.
    trap stop EXIT
    build
    rm -rf "$BOINC_DIR/db" "$PROJ" "$RUN"
    mkdir -p "$RUN"
    chown "$RUN_USER": "$BOINC_DIR" "$RUN"
    start_db
    make_project
    make_work
    make_account
    start_feeder
    start_apache
    wait_scheduler "http://127.0.0.1:$HTTP_PORT/boinc_fcgi/fcgi"
    # shellcheck disable=SC1090
    source "$ENV_FILE"
    {
        printf 'BOINC_SCHEDULER=http://127.0.0.1:%s/boinc_fcgi/fcgi\n' "$HTTP_PORT"
        printf 'BOINC_CPU="apache=%s mariadb=%s feeder=%s"\n' "$(cat "$RUN/httpd.pid")" \
            "$(cat "$RUN/mysqld.pid")" "$(head -n 1 "$RUN/feeder.pid")"
    } >>"$ENV_FILE"
    say "BOINC's scheduler serves http://127.0.0.1:$HTTP_PORT/boinc_fcgi/fcgi (FastCGI) and /boinc_cgi/cgi (CGI)"
    grep -v '^DB_PASSWORD' "$ENV_FILE"
    trap - EXIT
}

stop() {
    local pid
    if [ -s "$RUN/httpd.pid" ]; then
        as_user /usr/sbin/apache2 -f "$RUN/httpd.conf" -k stop 2>/dev/null || true
        for _ in $(seq 30); do [ -e "$RUN/httpd.pid" ] || break; sleep 1; done
    fi
    if [ -s "$RUN/feeder.pid" ]; then
        while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$RUN/feeder.pid"
        rm -f "$RUN/feeder.pid"
    fi
    if [ -s "$RUN/mysqld.pid" ]; then
        pid=$(cat "$RUN/mysqld.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    fi
    rm -f "$RUN/mysqld.pid" "$RUN/httpd.pid"
    say "BOINC's server of $BOINC_DIR stopped"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
peer)
    start
    trap stop EXIT
    # shellcheck disable=SC1090
    source "$ENV_FILE"
    export BOINC_SCHEDULER BOINC_AUTH BOINC_CPU
    bash "$BENCH_DIR/boinc_peer.sh"
    ;;
*) die "usage: BOINC_SRC=DIR $0 start|stop|peer" ;;
esac
