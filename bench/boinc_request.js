'use strict';
// The scheduler request of Debian's BOINC 7.20.5 client asking for one
// CPU's worth of work (cpu_req_secs 3600, cpu_req_instances 1, p_fpops 1e9,
// p_ncpus 2), no reports, and what the benchmarks read of a reply: for
// bench/boinc_load.js and bench/boinc_intake.js.

const crypto = require('node:crypto');
const http = require('node:http');

// The request of host {id, n, cpid, cross, seqno, key, results} to
// scheduler url, for account authenticator; with held, every result it
// holds listed in <other_results>.
function request(host, { url, authenticator, held = false }) {
  const base = new URL('./', url).href;   // what the request names as the preferences' source
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

// One POST of body to url on agent: {status, text}.
function post(url, agent, body) {
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

// The names of the jobs a reply sends: its <result> elements (BOINC's own
// scheduler writes <name> after other elements; allot's front end first).
function sentNames(text) {
  const names = [];
  for (const m of text.matchAll(/<result>([\s\S]*?)<\/result>/g)) {
    const name = /<name>([^<]+)<\/name>/.exec(m[1]);
    if (name) names.push(name[1]);
  }
  return names;
}

// A reply that refuses the request (either server's words): counted as a
// failure, not as a reply that sent nothing.
const REFUSAL = /Invalid or missing account key|Bad scheduler request|is in progress|The project is busy|No new computer|<project_is_down|Incomplete request|Can't parse request|Server error/;

module.exports = { request, post, newHost, sentNames, REFUSAL };
