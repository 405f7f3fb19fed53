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
// of work (cpu_req_secs 3600, cpu_req_instances 1, p_fpops 1e9, p_ncpus 2),
// with no reports.  With HELD=1 each host lists, in <other_results>, every
// result it was sent (it never finishes one, so the list grows); by default
// the block is left out, as in the comparison with BOINC's own server.

const http = require('node:http');
const fs = require('node:fs');
const crypto = require('node:crypto');

const [mode, base, authenticator] = process.argv.slice(2, 5);
const url = new URL('scheduler', base);
const held = process.env.HELD === '1';

function request(host) {
  const others = held ? `<other_results>\n${host.results.map((n) => `<other_result>\n<name>${n}</name>\n</other_result>\n`).join('')}</other_results>\n` : '';
  const key = host.key ? `<code_sign_key>\n${host.key}</code_sign_key>\n` : '';
  return `<scheduler_request>
    <authenticator>${authenticator}</authenticator>
    <hostid>${host.id}</hostid>
    <rpc_seqno>${host.seqno}</rpc_seqno>
    <core_client_major_version>7</core_client_major_version>
    <core_client_minor_version>20</core_client_minor_version>
    <core_client_release>5</core_client_release>
    <resource_share_fraction>1.000000</resource_share_fraction>
    <rrs_fraction>1.000000</rrs_fraction>
    <prrs_fraction>1.000000</prrs_fraction>
    <duration_correction_factor>1.000000</duration_correction_factor>
    <allow_multiple_clients>0</allow_multiple_clients>
    <sandbox>1</sandbox>
    <dont_send_work>0</dont_send_work>
    <work_req_seconds>3600.000000</work_req_seconds>
    <cpu_req_secs>3600.000000</cpu_req_secs>
    <cpu_req_instances>1.000000</cpu_req_instances>
    <estimated_delay>0.000000</estimated_delay>
    <client_cap_plan_class>1</client_cap_plan_class>
    <platform_name>x86_64-pc-linux-gnu</platform_name>
    <alt_platform>
        <name>i686-pc-linux-gnu</name>
    </alt_platform>
<working_global_preferences>
<global_preferences>
   <source_project>${base}</source_project>
   <mod_time>1700000000.000000</mod_time>
   <run_on_batteries>1</run_on_batteries>
   <run_if_user_active>1</run_if_user_active>
   <run_gpu_if_user_active>0</run_gpu_if_user_active>
   <suspend_cpu_usage>0.000000</suspend_cpu_usage>
   <idle_time_to_run>3.000000</idle_time_to_run>
   <max_ncpus_pct>100.000000</max_ncpus_pct>
   <cpu_usage_limit>100.000000</cpu_usage_limit>
   <work_buf_min_days>0.100000</work_buf_min_days>
   <work_buf_additional_days>0.500000</work_buf_additional_days>
   <disk_interval>60.000000</disk_interval>
   <disk_max_used_gb>0.000000</disk_max_used_gb>
   <disk_max_used_pct>90.000000</disk_max_used_pct>
   <disk_min_free_gb>0.100000</disk_min_free_gb>
   <ram_max_used_busy_pct>50.000000</ram_max_used_busy_pct>
   <ram_max_used_idle_pct>90.000000</ram_max_used_idle_pct>
   <max_bytes_sec_up>0.000000</max_bytes_sec_up>
   <max_bytes_sec_down>0.000000</max_bytes_sec_down>
   <cpu_scheduling_period_minutes>60.000000</cpu_scheduling_period_minutes>
   <vm_max_used_pct>75.000000</vm_max_used_pct>
</global_preferences>
</working_global_preferences>
<cross_project_id>${host.cross}</cross_project_id>
<time_stats>
    <on_frac>0.998000</on_frac>
    <connected_frac>-1.000000</connected_frac>
    <cpu_and_network_available_frac>0.999000</cpu_and_network_available_frac>
    <active_frac>0.997000</active_frac>
    <gpu_active_frac>0.997000</gpu_active_frac>
    <client_start_time>1700000000.000000</client_start_time>
    <total_start_time>1700000000.000000</total_start_time>
    <total_duration>86400.000000</total_duration>
    <total_active_duration>86000.000000</total_active_duration>
    <total_gpu_active_duration>86000.000000</total_gpu_active_duration>
    <now>${(Date.now() / 1000).toFixed(6)}</now>
    <previous_uptime>86400.000000</previous_uptime>
    <session_active_duration>3600.000000</session_active_duration>
    <session_gpu_active_duration>3600.000000</session_gpu_active_duration>
</time_stats>
<net_stats>
    <bwup>0.000000</bwup>
    <avg_up>0.000000</avg_up>
    <avg_time_up>0.000000</avg_time_up>
    <bwdown>0.000000</bwdown>
    <avg_down>0.000000</avg_down>
    <avg_time_down>0.000000</avg_time_down>
</net_stats>
<host_info>
    <timezone>0</timezone>
    <domain_name>bench-host-${host.n}</domain_name>
    <ip_addr>127.0.0.1</ip_addr>
    <host_cpid>${host.cpid}</host_cpid>
    <p_ncpus>2</p_ncpus>
    <p_vendor>GenuineIntel</p_vendor>
    <p_model>Intel(R) Xeon(R) CPU @ 2.20GHz [Family 6 Model 79 Stepping 0]</p_model>
    <p_features>fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch invpcid_single pti ssbd ibrs ibpb stibp fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm rdseed adx smap xsaveopt arat md_clear arch_capabilities</p_features>
    <p_fpops>1000000000.000000</p_fpops>
    <p_iops>1000000000.000000</p_iops>
    <p_membw>1000000000.000000</p_membw>
    <p_calculated>0.000000</p_calculated>
    <p_vm_extensions_disabled>0</p_vm_extensions_disabled>
    <m_nbytes>8341942272.000000</m_nbytes>
    <m_cache>262144.000000</m_cache>
    <m_swap>0.000000</m_swap>
    <d_total>105089261568.000000</d_total>
    <d_free>60117385216.000000</d_free>
    <os_name>Linux Debian</os_name>
    <os_version>Debian GNU/Linux 12 (bookworm) [6.1.0-13-cloud-amd64|libc 2.36]</os_version>
    <n_usable_coprocs>0</n_usable_coprocs>
    <wsl_available>0</wsl_available>
    <coprocs>
    </coprocs>
</host_info>
<disk_usage>
    <d_boinc_used_total>1048576.000000</d_boinc_used_total>
    <d_boinc_used_project>524288.000000</d_boinc_used_project>
    <d_project_share>0.000000</d_project_share>
</disk_usage>
${key}${others}</scheduler_request>
`;
}

function post(agent, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST', agent,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'BOINC client (x86_64-pc-linux-gnu 7.20.5)',
        'Content-Length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function newHost(n, id = 0) {
  const cpid = crypto.createHash('md5').update(`bench host ${n}`).digest('hex');
  return { n, id, cpid, cross: crypto.createHash('md5').update(`cross ${n}`).digest('hex'), seqno: 0, key: null, results: [] };
}

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
