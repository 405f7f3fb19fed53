'use strict';
// Load for bench/boinc_scheduler.sh: simulated BOINC 7.20.5 clients sending
// scheduler requests to the example front end (examples/boinc).
//
//   node boinc_load.js register BASE_URL AUTHENTICATOR NHOSTS HOSTS_FILE
//       NHOSTS new hosts, each by a first request with <hostid>0</hostid>
//       and a host_cpid of its own; into HOSTS_FILE, one line each: its host
//       id, host_cpid and the results it was sent (comma-separated)
//   node boinc_load.js run BASE_URL AUTHENTICATOR HOSTS_FILE SECONDS CONCURRENCY [WARMUP]
//       CONCURRENCY clients, each on one kept-alive connection, each asking
//       for its own hosts in turn (client k: hosts k, k + CONCURRENCY, ...),
//       so that no host has two requests at once; WARMUP seconds untimed,
//       then SECONDS timed.  Prints one JSON line: requests, jobs (counted
//       in the replies), seconds, requests/s and jobs/s, p50/p99 latency in
//       ms, and the answers that were not a scheduler reply.
//
// The request is the one Debian's 7.20.5 client sends for one CPU's worth
// of work (boinc_request.js), with no reports.  With HELD=1 each host lists, in <other_results>, every
// result it was sent (it never finishes one, so the list grows); by default
// the block is left out, as in the comparison with BOINC's own server.

const http = require('node:http');
const fs = require('node:fs');
const { request: requestOf, post: postTo, newHost } = require('./boinc_request');

const [mode, base, authenticator] = process.argv.slice(2, 5);
const url = new URL('scheduler', base);
const held = process.env.HELD === '1';

const request = (host) => requestOf(host, { url: url.href, authenticator, held });
const post = (agent, body) => postTo(url, agent, body);

// One request of host; the reply's results and key are remembered.
async function ask(agent, host) {
  const started = process.hrtime.bigint();
  const { status, text } = await post(agent, request(host));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  host.seqno += 1;
  const ok = status === 200 && text.includes('<scheduler_reply>') && !text.includes('<message');
  let jobs = 0;
  if (ok) {
    for (const m of text.matchAll(/<result>\n<name>([^<]+)<\/name>/g)) {
      jobs += 1;
      if (held) host.results.push(m[1]);
    }
    const id = /<hostid>([0-9]+)<\/hostid>/.exec(text);
    if (id) host.id = Number(id[1]);
    const key = /<code_sign_key>\n([^<]*)<\/code_sign_key>/.exec(text);
    if (key) host.key = key[1];
  }
  return { ok, ms, jobs, text };
}

// CPU clock ticks (utime + stime) so far of the front end (SERVER_PID) and
// of the cluster (POSTMASTER_PID: its own, its exited children's, and each
// live child's), from /proc.
function stat(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;   // gone meanwhile
  }
}
function serverTicks() {
  const ticks = (f) => Number(f[11]) + Number(f[12]);
  const node = stat(process.env.SERVER_PID);
  const pm = process.env.POSTMASTER_PID;
  const own = stat(pm);
  let pg = ticks(own) + Number(own[13]) + Number(own[14]);
  for (const name of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    const f = stat(name);
    if (f && f[1] === pm) pg += ticks(f);
  }
  // The whole machine's busy ticks (all CPUs; steal counted as busy), and
  // this driver's own CPU, so that the others' load can be told apart.
  const cpu = fs.readFileSync('/proc/stat', 'latin1').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const busy = cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6] + cpu[7];
  const me = process.cpuUsage();
  return { node: node ? ticks(node) : 0, pg, busy, driverUs: me.user + me.system };
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
    const sent = [...r.text.matchAll(/<result>\n<name>([^<]+)<\/name>/g)].map((m) => m[1]);
    ids.push(`${host.id} ${host.cpid} ${sent.join(',')}`);
  }
  fs.writeFileSync(file, `${ids.join('\n')}\n`);
  agent.destroy();
  console.log(JSON.stringify({ registered: ids.length }));
}

async function run(file, seconds, concurrency, warmup) {
  const hosts = fs.readFileSync(file, 'utf8').trim().split('\n').map((line, n) => {
    const [id, , sent] = line.split(' ');
    const host = newHost(n, Number(id));
    if (held && sent) host.results.push(...sent.split(','));
    return host;
  });
  const latencies = [];
  let requests = 0;
  let all = 0;   // with the warm-up's
  let jobs = 0;
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
      latencies.push(r.ms);
      if (!r.ok) {
        failures += 1;
        firstFailure ??= r.text.slice(0, 400);
      }
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: concurrency }, (_, k) => client(k)));
  // What the hosts hold now, for the next run (HELD=1 lists it).
  if (held) fs.writeFileSync(file, `${hosts.map((h) => `${h.id} ${h.cpid} ${h.results.join(',')}`).join('\n')}\n`);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = serverTicks();
  latencies.sort((a, b) => a - b);
  console.log(JSON.stringify({
    requests, all_requests: all, jobs, secs: Number(secs.toFixed(2)),
    rps: Number((requests / secs).toFixed(1)), jps: Number((jobs / secs).toFixed(1)),
    p50: Number(percentile(latencies, 0.5).toFixed(2)), p99: Number(percentile(latencies, 0.99).toFixed(2)),
    node_ticks: cpu1.node - cpu0.node, pg_ticks: cpu1.pg - cpu0.pg, busy_ticks: cpu1.busy - cpu0.busy,
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
