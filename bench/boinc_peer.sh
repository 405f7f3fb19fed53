#!/usr/bin/env bash
# BOINC's own scheduler and allot's BOINC front end (examples/boinc), under
# the same load, interleaved in one session on one machine: the fair peer
# comparison (issue 32).
#
# BOINC's server is not built or started here (bench/boinc_server.sh builds
# and starts one, and `bench/boinc_server.sh peer` runs this script against
# it): give the URL of a running BOINC scheduler (its cgi or fcgi program), an account key of its project,
# and the processes (or cgroups) whose CPU is its: the web server and its
# scheduler processes, the database, the feeder.  The front end runs on
# bench/cluster.sh's throwaway cluster, set up as bench/boinc_scheduler.sh
# sets it up (bench/boinc_farm.sh).  The same driver (bench/boinc_load.js)
# sends both the request Debian's 7.20.5 client sends for one CPU's worth of
# work (cpu_req_secs 3600, cpu_req_instances 1, p_fpops 1e9; jobs estimated
# at 3600 s, so one a reply when the server has work), from NHOSTS hosts per
# side registered by a first request each, each host's rpc_seqno going up
# as a real client's does.  For each of ROUNDS rounds and each client count
# of CLIENTS, one run per side, WARMUP s untimed then DURATION s timed, the
# sides' order swapped every round so that neither always runs first.
#
# Reported per run and, for each side and client count, as medians over the
# rounds: jobs/s, jobs per reply (BOINC's feeder must keep its shared
# memory full: a side below MIN_JOBS_PER_REPLY is marked NOT FED, and its
# jobs/s says more about its feeder than its scheduler), server CPU per job
# and per request, p50 and p99 latency, and the machine's other load.  The
# load average at the start and the end is printed: run it on an idle
# machine.
#
# Usage:
#   BOINC_SCHEDULER=http://127.0.0.1:8080/boinc_fcgi/fcgi BOINC_AUTH=KEY \
#   BOINC_CPU="apache=$(cat /var/run/apache2/apache2.pid) mariadb=PID feeder=PID" \
#   PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config bench/boinc_peer.sh
#
# Environment:
#   BOINC_SCHEDULER, BOINC_AUTH   the BOINC side (required)
#   BOINC_CPU             LABEL=PID (that process and its descendants) or
#                         LABEL=cgroup:/sys/fs/cgroup/PATH, space-separated
#   PG_CONFIG=pg_config   the PostgreSQL installation, and the allot in it
#   CLIENTS="1 8" ROUNDS=3 DURATION=30 WARMUP=3 NHOSTS=200
#   NJOBS=300000          the front end's unsent jobs (one a request)
#   MIN_JOBS_PER_REPLY=0.9
#   BUSY_MAX=25 WAIT_MAX=60   quiet machine before each run: bench/cluster.sh
#
# The report is also written to bench/out/boinc_peer-<date>.txt (git-ignored).
set -euo pipefail

BOINC_SCHEDULER=${BOINC_SCHEDULER:?set BOINC_SCHEDULER to a running BOINC scheduler URL}
BOINC_AUTH=${BOINC_AUTH:?set BOINC_AUTH to an account key of that BOINC project}
BOINC_CPU=${BOINC_CPU:?set BOINC_CPU to the BOINC server processes: LABEL=PID or LABEL=cgroup:PATH, space-separated}
CLIENTS=${CLIENTS:-"1 8"}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-30}
WARMUP=${WARMUP:-3}
NHOSTS=${NHOSTS:-200}
NJOBS=${NJOBS:-300000}
MIN_JOBS_PER_REPLY=${MIN_JOBS_PER_REPLY:-0.9}
PG_CONFIG=${PG_CONFIG:-pg_config}

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/cluster.sh
source "$BENCH_DIR/cluster.sh"
# shellcheck source=bench/boinc_farm.sh
source "$BENCH_DIR/boinc_farm.sh"
mkdir -p "$BENCH_DIR/out"
STAMP=$(date +%Y%m%d-%H%M%S)
REPORT="$BENCH_DIR/out/boinc_peer-$STAMP.txt"
RUNS=$WORK/runs

# BOINC's side answers at all, and with a scheduler reply.
probe=$(curl -s -m 20 -X POST --data-binary '<scheduler_request></scheduler_request>' "$BOINC_SCHEDULER" || true)
case "$probe" in
*'<scheduler_reply'*) ;;
*) die "$BOINC_SCHEDULER does not answer as a BOINC scheduler: ${probe:0:200}" ;;
esac

boinc_farm_setup bench_peer "$NJOBS"
boinc_farm_start
boinc_farm_register "${URL}scheduler" "$NHOSTS" "$WORK/hosts-allot"
boinc_farm_register "$BOINC_SCHEDULER" "$NHOSTS" "$WORK/hosts-boinc" "$BOINC_AUTH"

# run SIDE ROUND N: one timed run of a side, its JSON line into $RUNS.
run() {
    local side=$1 round=$2 n=$3 url auth cpu out
    if [ "$side" = boinc ]; then
        url=$BOINC_SCHEDULER auth=$BOINC_AUTH cpu=$BOINC_CPU
    else
        url=${URL}scheduler auth=$AUTH cpu="node=$SERVER_PID pg=$POSTMASTER_PID"
        psql_q -d bench_peer -c CHECKPOINT >/dev/null
    fi
    wait_quiet "$side, $n client(s), round $round"
    say "$side, $n client(s), round $round: ${WARMUP}s warm-up, ${DURATION}s timed"
    out=$(CPU=$cpu CLK_TCK=$CLK_TCK bg_run node "$BENCH_DIR/boinc_load.js" run "$url" "$auth" "$WORK/hosts-$side" \
        "$DURATION" "$n" "$WARMUP") || die "the load driver failed on $side"
    printf '%s %s %s %s %s\n' "$side" "$round" "$n" "$(printf '%s' "$QUIET" | tr ' ' '_')" "$out" >>"$RUNS"
    node -e '
        const r = JSON.parse(process.argv[1]);
        console.log(`    ${r.jps} jobs/s, ${r.jobs_per_reply} jobs/reply, ${r.cpu_ms_per_job} ms CPU/job, ` +
                    `${r.cpu_ms_per_request} ms CPU/request, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.failures} failed`);
        if (r.failures) console.log(`    first failure: ${r.firstFailure}`);' "$out"
}

START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
    for n in $CLIENTS; do
        if [ $((round % 2)) -eq 1 ]; then sides="boinc allot"; else sides="allot boinc"; fi
        for side in $sides; do run "$side" "$round" "$n"; done
    done
done
END_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
boinc_farm_stop

# ---------------------------------------------------------------------------
{
    report_header "BOINC's scheduler beside allot's front end (bench/boinc_peer.sh)"
    echo "BOINC: $BOINC_SCHEDULER, CPU of: $BOINC_CPU"
    echo "allot: examples/boinc, Node $(node --version), one process, and its PostgreSQL cluster"
    echo "$NHOSTS hosts a side; the 7.20.5 client's request for one CPU (one job a reply when fed);"
    echo "warm-up ${WARMUP}s, timed ${DURATION}s, $ROUNDS round(s), sides alternating; load average $START_LOAD at the start, $END_LOAD at the end"
    echo
    # shellcheck disable=SC2016  # JavaScript, not shell
    node -e '
        const fs = require("fs");
        const [file, minFed, hz] = process.argv.slice(1);
        const runs = fs.readFileSync(file, "utf8").trim().split("\n").map((line) => {
            const [side, round, n, quiet, ...json] = line.split(" ");
            return { side, round: Number(round), n: Number(n), quiet: quiet.replace(/_/g, " "), r: JSON.parse(json.join(" ")) };
        });
        const others = (r) => Math.max(0, (r.busy_ms - Object.values(r.cpu_ms).reduce((a, b) => a + b, 0) - r.driver_us / 1000) / 1000) / r.secs;
        const fmt = (x, d = 2) => (x === null || x === undefined ? "-" : Number(x).toFixed(d));
        const row = (cols) => cols.map((c, i) => String(c)[i < 3 ? "padEnd" : "padStart"]([6, 6, 3, 9, 10, 9, 10, 8, 8, 7][i] ?? 0)).join(" ");
        console.log(row(["side", "round", "N", "jobs/s", "jobs/reply", "CPU/job", "CPU/req", "p50 ms", "p99 ms", "failed"]) + "  machine");
        for (const { side, round, n, quiet, r } of runs) {
            console.log(row([side, round, n, fmt(r.jps, 1), fmt(r.jobs_per_reply, 3), fmt(r.cpu_ms_per_job), fmt(r.cpu_ms_per_request),
                fmt(r.p50), fmt(r.p99), r.failures]) + `  ${quiet}; others ${others(r).toFixed(2)} CPU; ` +
                Object.entries(r.cpu_ms).map(([k, v]) => `${k} ${(v / r.requests).toFixed(2)}`).join(", ") + " ms/req");
        }
        const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
        console.log("\nMedians over the rounds (CPU in ms of server CPU):");
        const ns = [...new Set(runs.map((x) => x.n))];
        for (const n of ns) {
            const m = {};
            for (const side of ["boinc", "allot"]) {
                const rs = runs.filter((x) => x.side === side && x.n === n).map((x) => x.r);
                m[side] = Object.fromEntries(["jps", "jobs_per_reply", "cpu_ms_per_job", "cpu_ms_per_request", "p50", "p99"].map((k) => [k, median(rs.map((r) => r[k]))]));
                m[side].fed = m[side].jobs_per_reply >= Number(minFed);
                console.log(`  N=${n} ${side.padEnd(5)} ${fmt(m[side].jps, 1)} jobs/s, ${fmt(m[side].jobs_per_reply, 3)} jobs/reply` +
                    `${m[side].fed ? "" : " (NOT FED: below " + minFed + ")"}, ${fmt(m[side].cpu_ms_per_job)} CPU/job, ` +
                    `${fmt(m[side].cpu_ms_per_request)} CPU/request, p50 ${fmt(m[side].p50)} ms, p99 ${fmt(m[side].p99)} ms`);
            }
            const fair = m.boinc.fed && m.allot.fed;
            console.log(`  N=${n} allot / BOINC: ${fmt(m.allot.jps / m.boinc.jps)}x the jobs/s, ` +
                `${fmt(m.allot.cpu_ms_per_job / m.boinc.cpu_ms_per_job)}x the CPU per job, ` +
                `${fmt(m.allot.cpu_ms_per_request / m.boinc.cpu_ms_per_request)}x the CPU per request` +
                (fair ? "" : "  -- NOT A FAIR COMPARISON: a side was not fed"));
        }' "$RUNS" "$MIN_JOBS_PER_REPLY" "$CLK_TCK"
} | tee "$REPORT"
say "report: $REPORT"
