'use strict';
// The scheduler: one <scheduler_request> in, one <scheduler_reply> out.
//
//   1. the account, by the SHA-256 of the authenticator the request names
//      first (intake.js, before the rest is read);
//   2. read and check every field the front end uses (hostile until checked);
//   3. the host: registered in allot on first contact, updated after;
//   4. reports first: allot.report_job per <result>, each acknowledged;
//   5. one allot.request_work for what the client asks;
//   6. the reply: acks, jobs as BOINC workunits and results, credit.
//
// Each allot call runs in its own transaction, beside the front end's own
// rows it concerns (README "One call per transaction").

const crypto = require('node:crypto');
const { DatabaseError } = require('pg');
const xml = require('./xml');
const files = require('./files');
const { isPermanent, Unavailable } = require('./db');
const { BadRequest, MAX_INT32 } = require('./request');

// ---------------------------------------------------------------------------
// Replies.

function newReply(config) {
  const w = new xml.Writer('scheduler_reply');
  w.el('scheduler_version', 1);
  w.el('project_name', config.projectName);
  return w;
}

// A reply that serves nothing: a message for the volunteer and a delay.
function refusal(config, message, delaySecs) {
  const w = newReply(config);
  w.num('request_delay', delaySecs);
  w.lines.push(`<message priority="notice">${xml.escape(message.replace(/[\u0000-\u001f\u007f]/g, '?'))}</message>`);
  return w.toString();
}

// BOINC's own words for an unknown account, so that clients show them.
const BAD_KEY = 'Invalid or missing account key.  To fix, remove and add this project.';
const BAD_KEY_DELAY = 3600;

// ---------------------------------------------------------------------------

function makeScheduler(db, config) {
  const { log, limits } = config;

  async function account(authenticator) {
    if (authenticator === '') return null;
    const hash = crypto.createHash('sha256').update(authenticator, 'utf8').digest();
    const { rows } = await db.query(
      'SELECT id, name, extract(epoch FROM created_at)::bigint AS created FROM boinc.account WHERE authenticator_sha256 = $1',
      [hash]);
    return rows[0] ?? null;
  }

  // allot's coprocessors of the host: {resource: {count, peak_flops}}.
  function allotCoprocs(coprocs) {
    const out = {};
    for (const c of coprocs) {
      if (c.count >= 1 && c.peakFlops >= 1 && out[c.resource] === undefined) {
        out[c.resource] = { count: c.count, peak_flops: c.peakFlops };
      }
    }
    return out;
  }

  // Register a new host, or update the one the client names if it is this
  // account's.  Returns {hostId, created, createdAt}.
  async function host(acct, r) {
    const h = r.host;
    const flops = h.fpops >= 1 ? h.fpops : null;   // 0: the client does not know
    const args = [h.domainName, r.platform, h.cpuFlags, h.ncpus, flops, JSON.stringify(allotCoprocs(r.coprocs))];
    const details = [h.hostCpid, h.domainName, h.osName, h.osVersion, r.platform, h.ncpus, flops, r.rpcSeqno];
    if (r.hostid > 0) {
      const known = await db.transaction(async (c) => {
        const { rows } = await c.query(
          'SELECT extract(epoch FROM created_at)::bigint AS created FROM boinc.host WHERE host_id = $1 AND account_id = $2 FOR UPDATE',
          [r.hostid, acct.id]);
        if (rows.length === 0) return null;
        await c.query('SELECT allot.register_host($1, $2, $3, $4, $5, $6, $7::jsonb)', [r.hostid, ...args]);
        await c.query(
          `UPDATE boinc.host SET host_cpid = $2, domain_name = $3, os_name = $4, os_version = $5, platform = $6,
                  p_ncpus = $7, p_fpops = $8, rpc_seqno = $9, last_rpc_at = now()
            WHERE host_id = $1`, [r.hostid, ...details]);
        return { hostId: r.hostid, created: false, createdAt: Number(rows[0].created) };
      }).catch((err) => {
        // allot no longer has it (the operator deleted it): a new host.
        if (err instanceof DatabaseError && (err.code === 'P0002' || err.code === '42501')) {
          log(`[HOST#${r.hostid}] ${err.message}; registering the client as a new host`);
          return null;
        }
        throw err;
      });
      if (known) return known;
    }
    return db.transaction(async (c) => {
      const { rows } = await c.query('SELECT allot.register_host(NULL, $1, $2, $3, $4, $5, $6::jsonb) AS id', args);
      const id = rows[0].id;
      if (Number(id) > MAX_INT32) throw new Error(`host id ${id} does not fit BOINC's 32-bit host ids`);
      await c.query(
        `INSERT INTO boinc.host (host_id, account_id, host_cpid, domain_name, os_name, os_version, platform,
                                 p_ncpus, p_fpops, rpc_seqno, last_rpc_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())`, [id, acct.id, ...details]);
      return { hostId: Number(id), created: true, createdAt: Math.floor(Date.now() / 1000) };
    });
  }

  // How a finished result is judged: the outcome allot is told, and why.
  async function judge(report, row, outputs) {
    if (report.state === 6) return { outcome: 'aborted', detail: 'aborted on the host' };
    if (report.state !== 5 || report.exitStatus !== 0) {
      return { outcome: 'error', detail: `state ${report.state}, exit status ${report.exitStatus}` };
    }
    const checked = [];
    for (const out of outputs) {
      const stated = report.fileInfos.find((f) => f.name === out.name);
      if (!stated || stated.md5 === null || stated.nbytes === null) {
        return { outcome: 'error', detail: `output ${out.name} not reported` };
      }
      const have = await files.fileDigest(files.uploadPath(config.dataDir, row.job_id, out.name));
      if (have === null) return { outcome: 'error', detail: `output ${out.name} missing` };
      if (have.nbytes !== stated.nbytes || have.md5 !== stated.md5) {
        return {
          outcome: 'error',
          detail: `output ${out.name} differs: ${have.nbytes} bytes md5 ${have.md5}, ` +
                  `the client has ${stated.nbytes} bytes md5 ${stated.md5}`,
        };
      }
      checked.push({ name: out.name, ...have });
    }
    return { outcome: 'success', detail: `${checked.length} output file(s), md5 checked`, checked };
  }

  // One reported result; returns whether to acknowledge it.
  async function report(hostId, rep) {
    const { rows } = await db.query(
      `SELECT r.job_id, r.app_units, r.reported_at IS NOT NULL AS reported,
              coalesce(array_agg(o.name ORDER BY o.name) FILTER (WHERE o.name IS NOT NULL), '{}') AS outputs
         FROM boinc.result r LEFT JOIN boinc.output_file o ON o.result_name = r.name
        WHERE r.name = $1 AND r.host_id = $2
        GROUP BY r.name`, [rep.name, hostId]);
    const row = rows[0];
    if (row === undefined) {
      // Not sent to this host: acknowledged, so that the client forgets it.
      log(`[HOST#${hostId}] report of unknown result ${rep.name}: acknowledged, ignored`);
      return true;
    }
    if (row.reported) return true;   // reported before; the ack got lost
    const verdict = await judge(rep, row, row.outputs.map((name) => ({ name })));
    const args = [hostId, row.job_id, verdict.outcome, row.app_units];
    let call = 'SELECT allot.report_job($1, $2, $3, app_units => $4::float8';
    if (rep.elapsed !== null && rep.elapsed >= 1e-6 && rep.elapsed <= 1e10) {
      args.push(rep.elapsed);
      call += ', elapsed_secs => $5::float8';
    }
    call += ')::text AS reply';
    try {
      await db.transaction(async (c) => {
        const { rows: [{ reply }] } = await c.query(call, args);
        await c.query('UPDATE boinc.result SET reported_at = now(), outcome = $2, detail = $3 WHERE name = $1',
          [rep.name, verdict.outcome, verdict.detail]);
        for (const f of verdict.checked ?? []) {
          await c.query('UPDATE boinc.output_file SET nbytes = $2, md5 = $3 WHERE name = $1', [f.name, f.nbytes, f.md5]);
        }
        log(`[HOST#${hostId}] reported ${rep.name} (job ${row.job_id}): ${verdict.outcome}, ${verdict.detail}; allot: ${reply}`);
      });
    } catch (err) {
      if (!isPermanent(err)) throw err;
      // allot refuses it for good (a late report after a timeout, say):
      // record why, and acknowledge, since sending it again cannot help.
      await db.query('UPDATE boinc.result SET reported_at = now(), outcome = $2, detail = $3 WHERE name = $1',
        [rep.name, 'refused', `${err.code}: ${err.message}`]);
      log(`[HOST#${hostId}] reported ${rep.name} (job ${row.job_id}): refused by allot: ${err.code} ${err.message}`);
    }
    return true;
  }

  // allot's request from the client's: seconds and instances per resource
  // (BOINC 6+), else the old single pool of seconds.
  function workRequest(r) {
    const w = r.work;
    if (r.dontSendWork) return null;
    if (w.resourceForm) {
      const resources = { cpu: { req_secs: w.cpuSecs, req_instances: w.cpuInstances, estimated_delay: w.cpuDelay } };
      for (const c of r.coprocs) {
        if (resources[c.resource] === undefined && c.count >= 1) {
          resources[c.resource] = { req_secs: c.reqSecs, req_instances: c.reqInstances, estimated_delay: c.estimatedDelay };
        }
      }
      const asked = Object.values(resources).some((x) => x.req_secs > 0 || x.req_instances > 0);
      return asked ? { resources } : null;
    }
    return w.legacySecs > 0 ? { work_req_seconds: w.legacySecs } : null;
  }

  // One request_work, and the front end's rows for what it sent, in one
  // transaction: a job is never in progress without its BOINC result.
  async function work(hostId, request) {
    return db.transaction(async (c) => {
      const { rows: [{ reply }] } = await c.query('SELECT allot.request_work($1, $2::jsonb) AS reply',
        [hostId, JSON.stringify(request)]);
      const jobs = reply.jobs ?? [];
      if (jobs.length === 0) return { reply, sent: [] };
      const versionIds = [...new Set(jobs.map((j) => String(j.app_version_id)))];
      const { rows: versions } = await c.query(
        'SELECT * FROM boinc.app_version WHERE app_version_id = ANY ($1::bigint[])', [versionIds]);
      const byId = new Map(versions.map((v) => [String(v.app_version_id), v]));
      const missing = versionIds.filter((id) => !byId.has(id));
      if (missing.length > 0) {
        // The operator has not registered an executable: send nothing, so
        // that no job is lost (the transaction rolls back).
        throw new Error(`allot app version(s) ${missing.join(', ')} have no executable: node admin.js add-app-version`);
      }
      const { rows: wus } = await c.query(
        'SELECT job_id, command_line FROM boinc.workunit WHERE job_id = ANY ($1::bigint[])',
        [jobs.map((j) => String(j.job_id))]);
      const commandLines = new Map(wus.map((w) => [String(w.job_id), w.command_line]));
      const sent = [];
      for (const job of jobs) {
        const version = byId.get(String(job.app_version_id));
        const token = crypto.randomBytes(12).toString('hex');
        const name = `job${job.job_id}_${token}`;
        const deadline = job.deadline ? Date.parse(job.deadline) / 1000 : Date.now() / 1000 + 7 * 86400;
        await c.query(
          `INSERT INTO boinc.result (name, job_id, host_id, app_version_id, app_units, deadline)
           VALUES ($1, $2, $3, $4, $5, to_timestamp($6))`,
          [name, job.job_id, hostId, job.app_version_id, job.predicted_app_units ?? 1, deadline]);
        const outputs = version.output_names.map((openName, i) => ({ name: `${name}_${i}`, openName }));
        for (const o of outputs) {
          await c.query(
            `INSERT INTO boinc.output_file (name, result_name, job_id, open_name, max_nbytes)
             VALUES ($1, $2, $3, $4, $5)`, [o.name, name, job.job_id, o.openName, version.output_max_nbytes]);
        }
        sent.push({ job, version, name, deadline, outputs, commandLine: commandLines.get(String(job.job_id)) ?? '' });
      }
      return { reply, sent };
    });
  }

  // Delays from allot's backoff hint: with nothing sent, the client waits
  // (request_delay, capped so that its reports are not held up long) and is
  // called back when allot expects work (next_rpc_delay).
  function delays(reply, sentCount) {
    const waits = Object.values(reply?.resources ?? {})
      .filter((r) => r.status !== 'work' && r.backoff_secs > 0)
      .map((r) => r.backoff_secs);
    if (waits.length === 0) return {};
    const hint = Math.min(...waits);
    const out = { nextRpcDelay: Math.min(hint, limits.maxNextRpcDelay) };
    if (sentCount === 0) out.requestDelay = Math.min(hint, limits.maxRequestDelay);
    return out;
  }

  function writeJobs(w, sent) {
    const url = (p) => new URL(p, config.baseUrl).href;
    const apps = new Set();
    const versions = new Map();
    for (const s of sent) {
      apps.add(s.version.app_name);
      const v = versions.get(s.version.app_version_id) ?? { version: s.version, job: s.job, flops: 0 };
      // The version's speed on this host, as allot projected it: the
      // client's run-time estimate is rsc_fpops_est / flops = est_secs.
      v.flops = Math.max(v.flops, s.job.peak_flops_per_sec);
      versions.set(s.version.app_version_id, v);
    }
    for (const app of apps) w.open('app').el('name', app).close('app');
    for (const { version: v, job, flops } of versions.values()) {
      w.open('file_info')
        .el('name', v.file_name)
        .el('url', url(`download/${v.file_name}`))
        .flag('executable')
        .num('nbytes', Number(v.nbytes))
        .el('md5_cksum', v.md5)
        .block('file_signature', v.signature)
        .close('file_info');
      w.open('app_version')
        .el('app_name', v.app_name)
        .el('version_num', v.version_num)
        .el('platform', v.platform)
        .el('api_version', v.api_version)
        .num('avg_ncpus', job.ncpus)
        .num('max_ncpus', job.ncpus)
        .num('flops', flops);
      if (v.coproc_type) {
        w.open('coproc').el('type', v.coproc_type).num('count', job.ncoprocs).close('coproc');
      }
      w.open('file_ref').el('file_name', v.file_name).flag('main_program').close('file_ref')
        .close('app_version');
    }
    for (const s of sent) {
      const flops = versions.get(s.version.app_version_id).flops;
      for (const o of s.outputs) {
        w.open('file_info')
          .el('name', o.name)
          .el('upload_url', url('file_upload_handler'))
          .num('max_nbytes', Number(s.version.output_max_nbytes))
          .close('file_info');
      }
      w.open('workunit')
        .el('name', `${s.name}_wu`)
        .el('app_name', s.version.app_name)
        .el('version_num', s.version.version_num)
        .el('command_line', s.commandLine)
        .num('rsc_fpops_est', s.job.est_secs * flops)
        .num('rsc_fpops_bound', s.job.bound_secs * flops)
        .num('rsc_memory_bound', limits.memoryBound)
        .num('rsc_disk_bound', limits.diskBound)
        .close('workunit');
      w.open('result')
        .el('name', s.name)
        .el('wu_name', `${s.name}_wu`)
        .el('platform', s.version.platform)
        .el('version_num', s.version.version_num)
        .num('report_deadline', Math.floor(s.deadline));
      for (const o of s.outputs) {
        w.open('file_ref').el('file_name', o.name).el('open_name', o.openName).close('file_ref');
      }
      w.flag('report_immediately').close('result');
    }
  }

  // The whole request of a known account: intake.js has looked the account
  // up by the authenticator the request names first, before reading the
  // rest.  Returns the reply's XML.
  async function handle(body, acct, authenticator) {
    let r;
    try {
      r = await config.parser.read(body, limits);
      if (r.authenticator !== authenticator) throw new BadRequest('<authenticator> is not the one it begins with');
    } catch (err) {
      if (!(err instanceof BadRequest || err instanceof xml.XmlError)) throw err;
      log(`refused a scheduler request of account ${acct.id}: ${err.message}`);
      return refusal(config, `Bad scheduler request: ${err.message}`, limits.badRequestDelay);
    }
    let h;
    try {
      h = await host(acct, r);
    } catch (err) {
      // allot checks every figure again; one it refuses is this host's fault.
      if (!isPermanent(err)) throw err;
      log(`refused a scheduler request of account ${acct.id}: ${err.message}`);
      return refusal(config, `Bad scheduler request: ${err.message}`, limits.badRequestDelay);
    }
    const tag = `[HOST#${h.hostId}]`;

    const acks = [];
    for (const rep of r.results) {
      try {
        if (await report(h.hostId, rep)) acks.push(rep.name);
      } catch (err) {
        if (err instanceof Unavailable) throw err;
        // Not acknowledged: the client reports it again next time.
        log(`${tag} report of ${rep.name} failed, not acknowledged: ${err.message}`);
      }
    }

    const request = workRequest(r);
    let outcome = { reply: null, sent: [] };
    if (request !== null) {
      try {
        outcome = await work(h.hostId, request);
      } catch (err) {
        if (err instanceof Unavailable || (err instanceof DatabaseError && !isPermanent(err))) throw err;
        log(`${tag} no work sent: ${err.message}`);
      }
    }

    const { rows: credit } = await db.query(
      `SELECT c.host_id, c.total_credit, c.expavg_credit
         FROM allot.host_credit(ARRAY(SELECT host_id FROM boinc.host WHERE account_id = $1)) c`, [acct.id]);
    const mine = credit.find((c) => Number(c.host_id) === h.hostId) ?? { total_credit: 0, expavg_credit: 0 };
    const userTotal = credit.reduce((s, c) => s + c.total_credit, 0);
    const userAvg = credit.reduce((s, c) => s + c.expavg_credit, 0);

    const w = newReply(config);
    w.flag('dont_use_dcf');
    const d = delays(outcome.reply, outcome.sent.length);
    if (d.requestDelay !== undefined) w.num('request_delay', d.requestDelay);
    if (d.nextRpcDelay !== undefined) w.num('next_rpc_delay', d.nextRpcDelay);
    w.el('userid', acct.id).el('user_name', acct.name)
      .num('user_total_credit', userTotal).num('user_expavg_credit', userAvg)
      .el('user_create_time', acct.created);
    // Only a new host gets its id: a client told its id again takes it for
    // a copied state file and makes itself a new cross-project id.
    if (h.created) w.el('hostid', h.hostId);
    w.num('host_total_credit', mine.total_credit).num('host_expavg_credit', mine.expavg_credit)
      .el('host_create_time', h.createdAt);
    for (const name of acks) w.open('result_ack').el('name', name).close('result_ack');
    if (!r.hasKey) w.block('code_sign_key', config.codeSignKey);
    writeJobs(w, outcome.sent);

    const asked = request === null ? 'nothing' : JSON.stringify(request);
    const statuses = outcome.reply ? JSON.stringify(outcome.reply.resources) : '-';
    log(`${tag} scheduler request${h.created ? ' (new host)' : ''}: ${r.results.length} reported, ` +
        `${acks.length} acked; asked ${asked}; allot: ${statuses}; sent ` +
        `${outcome.sent.map((s) => `job ${s.job.job_id} as ${s.name} (est ${s.job.est_secs.toFixed(1)} s)`).join(', ') || 'nothing'}; ` +
        `request_delay ${d.requestDelay ?? '-'}, next_rpc_delay ${d.nextRpcDelay ?? '-'}; ` +
        `host credit ${mine.total_credit.toFixed(6)}, user credit ${userTotal.toFixed(6)}`);
    return w.toString();
  }

  // Replies for requests intake.js does not let in.
  const refuse = {
    unknown: () => refusal(config, BAD_KEY, BAD_KEY_DELAY),
    bad: (message) => refusal(config, `Bad scheduler request: ${message}`, limits.badRequestDelay),
    busy: () => refusal(config, 'Another scheduler request of this host is in progress.', limits.maxRequestDelay),
  };

  return { identify: account, handle, refuse };
}

module.exports = { makeScheduler, BAD_KEY };
