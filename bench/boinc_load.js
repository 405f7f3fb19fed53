'use strict';
// Load for bench/boinc_scheduler.sh and bench/boinc_peer.sh: simulated
// BOINC 7.20.5 clients sending scheduler requests to a BOINC scheduler,
// allot's front end (examples/boinc) or BOINC's own.
//
//   node boinc_load.js register SCHEDULER_URL AUTHENTICATOR NHOSTS HOSTS_FILE
//       NHOSTS new hosts, each by a first request with <hostid>0</hostid>
//       and a host_cpid of its own; into HOSTS_FILE, one line each: its host
//       id, host_cpid, the rpc_seqno of its next request, and the results it
//       was sent (comma-separated)
//   node boinc_load.js run SCHEDULER_URL AUTHENTICATOR HOSTS_FILE SECONDS CONCURRENCY [WARMUP]
//       CONCURRENCY clients, each on one kept-alive connection, each asking
//       for its own hosts in turn (client k: hosts k, k + CONCURRENCY, ...),
//       so that no host has two requests at once; WARMUP seconds untimed,
//       then SECONDS timed.  Prints one JSON line: requests, jobs (counted
//       in the replies' <result>s, wherever their <name> is), replies that
//       sent none, seconds, requests/s and jobs/s, jobs per reply, p50/p99
//       latency in ms, the server CPU, and the answers that were refusals
//       or not a scheduler reply.  HOSTS_FILE is written back with each
//       host's next rpc_seqno: a host's seqno only goes up, as a real
//       client's does (BOINC's scheduler takes a host whose seqno went
//       back for a copied client, and makes it a new host).
//
// SCHEDULER_URL is the scheduler's own URL (allot's front end:
// MASTER_URL/scheduler; BOINC's: its cgi or fcgi program).  The request is
// the one Debian's 7.20.5 client sends for one CPU's worth of work
// (cpu_req_secs 3600, cpu_req_instances 1, p_fpops 1e9, p_ncpus 2), with
// no reports.  With HELD=1 each host lists, in <other_results>, every
// result it was sent (it never finishes one, so the list grows); by default
// the block is left out, as in the comparison with BOINC's own server.
//
// Server CPU: CPU="LABEL=PID ..." counts each PID's process tree (its own
// CPU and its children's, living or reaped: utime + stime + cutime + cstime
// from /proc); LABEL=cgroup:/sys/fs/cgroup/PATH counts a cgroup's
// usage_usec.  SERVER_PID and POSTMASTER_PID (bench/boinc_scheduler.sh)
// stand for node=SERVER_PID pg=POSTMASTER_PID.

const http = require('node:http');
const fs = require('node:fs');
const { request, post, newHost, sentNames, REFUSAL } = require('./boinc_request');

const [mode, schedulerUrl, authenticator] = process.argv.slice(2, 5);
const url = new URL(schedulerUrl);
const held = process.env.HELD === '1';
const CLK_TCK = Number(process.env.CLK_TCK || 100);

// One request of host; the reply's results and key are remembered.
async function ask(agent, host) {
  const started = process.hrtime.bigint();
  const { status, text } = await post(url, agent, request(host, { url, authenticator, held }));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  host.seqno += 1;
  const ok = status === 200 && text.includes('<scheduler_reply>') && !REFUSAL.test(text);
  let jobs = 0;
  if (ok) {
    const names = sentNames(text);
    jobs = names.length;
    if (held) host.results.push(...names);
    const id = /<hostid>\s*([0-9]+)\s*<\/hostid>/.exec(text);
    if (id) host.id = Number(id[1]);
    const key = /<code_sign_key>\n([^<]*)<\/code_sign_key>/.exec(text);
    if (key) host.key = key[1];
  }
  return { ok, ms, jobs, text };
}

// CPU so far, in ms, of each source: a process tree (utime + stime +
// cutime + cstime of the process and every descendant, from /proc: a
// child's CPU moves into its parent's cutime when it is reaped, so nothing
// is counted twice or lost) or a cgroup (usage_usec of its cpu.stat).
function stat(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;   // gone meanwhile
  }
}
const SOURCES = (() => {
  const out = [];
  for (const item of (process.env.CPU ?? '').split(/\s+/).filter(Boolean)) {
    const [label, what] = item.split('=');
    if (!label || !what) throw new Error(`CPU: "${item}" is not LABEL=PID or LABEL=cgroup:PATH`);
    out.push({ label, what });
  }
  if (process.env.SERVER_PID) out.push({ label: 'node', what: process.env.SERVER_PID });
  if (process.env.POSTMASTER_PID) out.push({ label: 'pg', what: process.env.POSTMASTER_PID });
  return out;
})();
function cpuMs() {
  const procs = new Map();   // pid -> {ppid, ticks}
  if (SOURCES.some((s) => !s.what.startsWith('cgroup:'))) {
    for (const name of fs.readdirSync('/proc')) {
      if (!/^[0-9]+$/.test(name)) continue;
      const f = stat(name);
      if (f) procs.set(name, { ppid: f[1], ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
    }
  }
  const out = {};
  for (const { label, what } of SOURCES) {
    if (what.startsWith('cgroup:')) {
      const text = fs.readFileSync(`${what.slice('cgroup:'.length)}/cpu.stat`, 'latin1');
      out[label] = Number(/usage_usec ([0-9]+)/.exec(text)[1]) / 1000;
      continue;
    }
    let ticks = 0;
    for (const [pid, p] of procs) {
      // in the tree: the process itself or one of its descendants
      for (let q = pid, depth = 0; q && q !== '0' && depth < 64; q = procs.get(q)?.ppid, depth++) {
        if (q === what) {
          ticks += p.ticks;
          break;
        }
      }
    }
    out[label] = ticks * 1000 / CLK_TCK;
  }
  return out;
}
function serverTicks() {
  // The whole machine's busy ticks (all CPUs; steal counted as busy), and
  // this driver's own CPU, so that the others' load can be told apart.
  const cpu = fs.readFileSync('/proc/stat', 'latin1').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const busy = cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6] + cpu[7];
  const me = process.cpuUsage();
  return { ms: cpuMs(), busy, driverUs: me.user + me.system };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)];
}

async function register(nhosts, file) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const ids = [];
  let key = null;
  for (let n = 0; n < nhosts; n++) {
    const host = newHost(n);
    host.key = key;
    const r = await ask(agent, host);
    if (!r.ok || host.id === 0) throw new Error(`host ${n} was not registered: ${r.text.slice(0, 400)}`);
    key ??= host.key;
    // The results it was sent, which it holds (and lists with HELD=1).
    ids.push(`${host.id} ${host.cpid} ${host.seqno} ${sentNames(r.text).join(',')}`);
  }
  fs.writeFileSync(file, `${ids.join('\n')}\n`);
  agent.destroy();
  console.log(JSON.stringify({ registered: ids.length }));
}

async function run(file, seconds, concurrency, warmup) {
  const hosts = fs.readFileSync(file, 'utf8').trim().split('\n').map((line, n) => {
    const [id, , seqno, sent] = line.split(' ');
    const host = newHost(n, Number(id));
    host.seqno = Number(seqno);
    if (held && sent) host.results.push(...sent.split(','));
    return host;
  });
  const latencies = [];
  let requests = 0;
  let all = 0;   // with the warm-up's
  let jobs = 0;
  let empty = 0;   // replies that sent no job
  let failures = 0;
  let firstFailure = null;
  let timing = false;
  const start = Date.now();
  const timedFrom = start + warmup * 1000;
  const until = timedFrom + seconds * 1000;
  let t0 = null;
  let cpu0 = null;
  const client = async (k) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = k; Date.now() < until; i = (i + concurrency) % hosts.length) {
      const host = hosts[i];
      const r = await ask(agent, host);
      all += 1;
      if (!timing && Date.now() >= timedFrom) {
        timing = true;
        t0 = process.hrtime.bigint();
        cpu0 = serverTicks();
      }
      if (!timing) continue;
      requests += 1;
      jobs += r.jobs;
      if (r.ok && r.jobs === 0) empty += 1;
      latencies.push(r.ms);
      if (!r.ok) {
        failures += 1;
        firstFailure ??= r.text.slice(0, 400);
      }
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: concurrency }, (_, k) => client(k)));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = serverTicks();
  // Each host's next seqno, and what it holds (HELD=1 lists it), for the
  // next run.
  fs.writeFileSync(file, `${hosts.map((h) => `${h.id} ${h.cpid} ${h.seqno} ${h.results.join(',')}`).join('\n')}\n`);
  latencies.sort((a, b) => a - b);
  const cpu = Object.fromEntries(Object.keys(cpu1.ms).map((k) => [k, Number((cpu1.ms[k] - cpu0.ms[k]).toFixed(1))]));
  const serverMs = Object.values(cpu).reduce((a, b) => a + b, 0);
  console.log(JSON.stringify({
    requests, all_requests: all, jobs, empty, secs: Number(secs.toFixed(2)),
    rps: Number((requests / secs).toFixed(1)), jps: Number((jobs / secs).toFixed(1)),
    jobs_per_reply: Number((requests ? jobs / requests : 0).toFixed(3)),
    p50: Number(percentile(latencies, 0.5).toFixed(2)), p99: Number(percentile(latencies, 0.99).toFixed(2)),
    cpu_ms: cpu, cpu_ms_per_job: Number((jobs ? serverMs / jobs : 0).toFixed(3)),
    cpu_ms_per_request: Number((requests ? serverMs / requests : 0).toFixed(3)),
    // (ticks, as bench/boinc_scheduler.sh reads them)
    node_ticks: Math.round((cpu.node ?? 0) * CLK_TCK / 1000), pg_ticks: Math.round((cpu.pg ?? 0) * CLK_TCK / 1000),
    busy_ticks: cpu1.busy - cpu0.busy, busy_ms: Number(((cpu1.busy - cpu0.busy) * 1000 / CLK_TCK).toFixed(1)),
    driver_us: cpu1.driverUs - cpu0.driverUs,
    failures, firstFailure,
  }));
}

(async () => {
  if (mode === 'register') await register(Number(process.argv[5]), process.argv[6]);
  else if (mode === 'run') await run(process.argv[5], Number(process.argv[6]), Number(process.argv[7]), Number(process.argv[8] ?? 0));
  else throw new Error(`unknown mode ${mode}`);
})().catch((err) => {
  console.error(err.stack ?? err);
  process.exit(1);
});
