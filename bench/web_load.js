'use strict';
// Load for bench/web_auth.sh: CONCURRENCY clients, each on one kept-alive
// connection, send POST /api/heartbeat for the hosts of HOSTS_FILE in turn,
// each with its key, for SECONDS seconds (0: one request per host, as a
// warm-up).  Prints one JSON line: requests, requests/s, latency percentiles
// in ms, and how many answers were not 200.
//
//   node web_load.js BASE_URL SECONDS CONCURRENCY HOSTS_FILE
//   HOSTS_FILE: one "host_id key" per line

const http = require('node:http');
const fs = require('node:fs');

const [base, seconds, concurrency, hostsFile] = process.argv.slice(2);
const hosts = fs.readFileSync(hostsFile, 'utf8').trim().split('\n').map((line) => {
  const [id, key] = line.split(' ');
  return { body: JSON.stringify({ host_id: Number(id) }), auth: `Bearer ${key}` };
});
const url = new URL('/api/heartbeat', base);

function post(agent, host) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST', agent,
      headers: { 'Content-Type': 'application/json', Authorization: host.auth,
        'Content-Length': Buffer.byteLength(host.body) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(host.body);
  });
}

async function client(n, until, latencies, failures) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const onePass = Number(seconds) === 0;
  for (let i = n; onePass ? i < hosts.length : Date.now() < until; i += Number(concurrency)) {
    const started = process.hrtime.bigint();
    const status = await post(agent, hosts[i % hosts.length]);
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (status !== 200) failures.count++;
  }
  agent.destroy();
}

async function main() {
  const latencies = [];
  const failures = { count: 0 };
  const started = Date.now();
  const until = started + Number(seconds) * 1000;
  await Promise.all(Array.from({ length: Number(concurrency) }, (_, n) => client(n, until, latencies, failures)));
  const elapsed = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  console.log(JSON.stringify({
    requests: latencies.length, seconds: elapsed, rps: latencies.length / elapsed,
    p50_ms: at(0.5), p99_ms: at(0.99), not_200: failures.count,
  }));
}

main().catch((err) => { console.error(err.message); process.exit(1); });
