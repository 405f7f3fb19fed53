'use strict';
// How long a real client's scheduler request takes beside a hostile one, for
// bench/boinc_scheduler.sh (its intake phase).  test/t/020_boinc.pl checks
// what the front end does with each (how many of a stranger's bytes it
// examined, which path parsed a member's request); this measures what that
// costs the real client, which a test must not assert.
//
//   node boinc_intake.js SCHEDULER_URL AUTHENTICATOR HOSTS_FILE [ROUNDS]
//
// The real request is the first host's of HOSTS_FILE (boinc_load.js
// register), asking for no work, so that the rounds do not drain the farm;
// the member's is the second host's, of the same account, listing 50,000
// results in <other_results> (2.2 MB: parsed in the worker thread); the
// stranger's is 8 MiB after an unknown authenticator.  Each round sends the
// hostile request, waits 50 ms (it is on its way) and times the real one.
// Prints one JSON line: the median and the worst of ROUNDS (7) each, in ms,
// alone, beside the stranger's, beside the member's.

const http = require('node:http');
const fs = require('node:fs');
const { request, post, newHost, REFUSAL } = require('./boinc_request');

const [url, authenticator, hostsFile, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 7);

// HOSTS_FILE: host id, host_cpid, next rpc_seqno, results (boinc_load.js).
const hosts = fs.readFileSync(hostsFile, 'utf8').trim().split('\n').map((line, n) => {
  const [id, , seqno] = line.split(' ');
  return Object.assign(newHost(n, Number(id)), { seqno: Number(seqno) || 0 });
});
if (hosts.length < 2) throw new Error(`${hostsFile}: two hosts are needed`);
const idle = (text) => text.replace(/<(work_req_seconds|cpu_req_secs|cpu_req_instances)>[^<]*</g, '<$1>0.000000<');

const real = hosts[0];
const member = hosts[1];
member.results = Array.from({ length: 50000 }, (_, i) => `r${i}`);
const stranger = `<scheduler_request>\n<authenticator>${'0'.repeat(32)}</authenticator>\n${'x'.repeat(8 << 20)}`;

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

async function timed() {
  const agent = new http.Agent({ keepAlive: false });
  const started = process.hrtime.bigint();
  const { status, text } = await post(url, agent, idle(request(real, { url, authenticator })));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  real.seqno += 1;
  if (status !== 200 || !text.includes('<scheduler_reply>') || REFUSAL.test(text)) {
    throw new Error(`the real request was not served: HTTP ${status} ${text.slice(0, 300)}`);
  }
  return ms;
}

// The hostile body's POST; its answer (or the connection closed under it)
// does not matter here.
function hostile(body) {
  return post(url, new http.Agent({ keepAlive: false }), body).catch(() => null);
}

function summary(samples) {
  const s = [...samples].sort((a, b) => a - b);
  return { median: Number(s[(s.length - 1) >> 1].toFixed(1)), max: Number(s[s.length - 1].toFixed(1)) };
}

(async () => {
  const out = { rounds };
  const alone = [];
  for (let i = 0; i < rounds; i++) alone.push(await timed());
  out.alone = summary(alone);
  const beside = async (name, makeBody) => {
    const samples = [];
    for (let i = 0; i < rounds; i++) {
      const sent = hostile(makeBody());
      await sleep(50);
      samples.push(await timed());
      await sent;
    }
    out[name] = summary(samples);
  };
  await beside('stranger_8mib', () => stranger);
  const memberBody = () => {
    member.seqno += 1;
    return idle(request(member, { url, authenticator, held: true }));
  };
  out.member_bytes = Buffer.byteLength(memberBody());
  await beside('member', memberBody);
  console.log(JSON.stringify(out));
})().catch((err) => {
  console.error(err.stack ?? err);
  process.exit(1);
});
