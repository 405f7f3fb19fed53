'use strict';
// The scheduler: one <scheduler_request> in, one <scheduler_reply> out.
//
//   1. the account, by the key the request names first (intake.js and
//      accounts.js, before the rest is read);
//   2. read and check every field the front end uses (hostile until checked);
//   3. the host: registered in allot on first contact, found again after,
//      also when the client attached again (hosts.js); in the same
//      statement, both sides of step 5 are read;
//   4. reports first: allot.report_job per <result>, naming its sending,
//      each acknowledged (results.js);
//   5. the client's list of what it holds against allot's: lost sendings
//      reported, sendings allot moved on from aborted (results.js);
//   6. one allot.request_work for what the client asks;
//   7. the reply: acks, aborts, jobs as BOINC workunits and results, credit,
//      the account's preferences (resource share), its notices feed, and
//      messages telling the volunteer what went wrong and why nothing was
//      sent (messages.js).
//
// Each allot call runs in its own transaction, beside the front end's own
// rows it concerns (docs/web-layer.md, "One call per transaction").

const { DatabaseError } = require('pg');
const xml = require('./xml');
const { isPermanent, Unavailable } = require('allot-common/database');
const { BadRequest } = require('./request');
const { makeHosts, HostLimit } = require('./hosts');
const { Busy } = require('./intake');
const { Messages } = require('./messages');

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
  w.message('notice', message);
  return w.toString();
}

// BOINC's own words for an unknown account, so that clients show them.
const BAD_KEY = 'Invalid or missing account key.  To fix, remove and add this project.';
const BAD_KEY_DELAY = 3600;

// ---------------------------------------------------------------------------

// results: results.js's, which the upload handler shares; notices:
// notices.js's (the feed each reply names).
function makeScheduler(db, results, notices, config) {
  const { log, limits } = config;
  const hosts = makeHosts(db, config);

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

  // Which app versions allot may choose for a host: its platform and its
  // coprocessor types (results.send leaves out, per kind, workloads whose
  // chosen version has no executable).
  function hostKind(r) {
    const gpus = [...new Set(r.coprocs.filter((c) => c.count >= 1).map((c) => c.resource))].sort();
    return gpus.length ? `${r.platform}+${gpus.join('+')}` : r.platform;
  }

  // The host's own credit, when no request_work read it.
  async function hostCredit(hostId) {
    const { rows } = await db.query({
      name: 'boinc-host-credit',
      text: 'SELECT total_credit, expavg_credit FROM allot.host_credit(ARRAY[$1]::bigint[])',
      values: [hostId],
    });
    return rows[0] ? { total: rows[0].total_credit, expavg: rows[0].expavg_credit } : { total: 0, expavg: 0 };
  }

  // The account's credit: this host's, read now, plus its other hosts',
  // kept per account from one read of them all (allot.host_credit) for at
  // most limits.creditCacheSecs, their recent average decayed meanwhile as
  // allot decays it (half-life one week).  An account with one host is
  // always exact; another host's new credit shows within that time.
  const accounts = new Map();   // account id -> {at (ms), total, expavg, hosts: Map(host id -> {total, expavg})}
  const WEEK_MS = 7 * 86400 * 1000;
  async function accountCredit(accountId, hostId, mine) {
    const now = Date.now();
    let kept = accounts.get(accountId);
    if (kept === undefined || now - kept.at > limits.creditCacheSecs * 1000) {
      const { rows } = await db.query({
        name: 'boinc-account-credit',
        text: `SELECT c.host_id, c.total_credit, c.expavg_credit
                 FROM allot.host_credit(ARRAY(SELECT host_id FROM boinc.host WHERE account_id = $1)) c`,
        values: [accountId],
      });
      kept = { at: now, total: 0, expavg: 0, hosts: new Map() };
      for (const c of rows) {
        kept.hosts.set(Number(c.host_id), { total: c.total_credit, expavg: c.expavg_credit });
        kept.total += c.total_credit;
        kept.expavg += c.expavg_credit;
      }
      accounts.delete(accountId);
      accounts.set(accountId, kept);
      // Oldest reads first: the one read longest ago makes way.
      if (accounts.size > limits.creditCacheAccounts) accounts.delete(accounts.keys().next().value);
    }
    const own = kept.hosts.get(hostId) ?? { total: 0, expavg: 0 };
    const decay = 2 ** (-(now - kept.at) / WEEK_MS);
    return {
      total: Math.max(0, kept.total - own.total) + mine.total,
      expavg: Math.max(0, kept.expavg - own.expavg) * decay + mine.expavg,
    };
  }

  // Delays from allot's backoff hint: with nothing sent, the client waits
  // (request_delay, capped so that its reports are not held up long) and is
  // called back when allot expects work (next_rpc_delay).
  // A host whose tasks failed in a row is backing off (reply.request_delay,
  // allot's error backoff): it is told not to ask before then, beyond the
  // cap, as BOINC's own scheduler tells it.
  function delays(reply, sentCount) {
    const waits = Object.values(reply?.resources ?? {})
      .filter((r) => r.status !== 'work' && r.backoff_secs > 0)
      .map((r) => r.backoff_secs);
    const out = {};
    if (waits.length > 0) {
      const hint = Math.min(...waits);
      out.nextRpcDelay = Math.min(hint, limits.maxNextRpcDelay);
      if (sentCount === 0) out.requestDelay = Math.min(hint, limits.maxRequestDelay);
    }
    const errorDelay = Number(reply?.request_delay);
    if (Number.isFinite(errorDelay) && errorDelay > 0) {
      const wait = Math.min(Math.ceil(errorDelay), limits.maxNextRpcDelay);
      out.requestDelay = Math.max(out.requestDelay ?? 0, wait);
      out.nextRpcDelay = Math.max(out.nextRpcDelay ?? 0, wait);
    }
    return out;
  }

  // Made once: every reply names them.
  const downloadUrl = new URL('download/', config.baseUrl).href;
  const uploadUrl = new URL('file_upload_handler', config.baseUrl).href;

  function writeJobs(w, sent) {
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
        .el('url', downloadUrl + v.file_name)   // a FILE_NAME: nothing to encode
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
          .el('upload_url', uploadUrl)
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
    let parsed;
    try {
      parsed = await config.parser.read(body, limits, acct.id);
      r = parsed.request;
      if (r.authenticator !== authenticator) throw new BadRequest('<authenticator> is not the one it begins with');
    } catch (err) {
      if (err instanceof Busy) {
        log(`refused a scheduler request of account ${acct.id} (${body.length} bytes): ${err.message}`);
        return refusal(config, `The project is busy: ${err.message}; trying again soon.`, limits.maxRequestDelay);
      }
      if (!(err instanceof BadRequest || err instanceof xml.XmlError)) throw err;
      log(`refused a scheduler request of account ${acct.id}: ${err.message}`);
      return refusal(config, `Bad scheduler request: ${err.message}`, limits.badRequestDelay);
    }
    let h;
    try {
      h = await hosts.identify(acct, r);
    } catch (err) {
      if (err instanceof HostLimit) {
        log(`refused a new host of account ${acct.id}: ${err.message}`);
        return refusal(config, `No new computer for this account: ${err.message}.`, err.retrySecs);
      }
      // allot's limits per owner (allot.owner_max_hosts, and hosts made
      // today), beside the front end's own.
      if (err instanceof DatabaseError && err.code === '53400') {
        log(`refused a new host of account ${acct.id}: ${err.message}`);
        return refusal(config, `No new host for this account: ${err.message}`, limits.maxRequestDelay);
      }
      // allot checks every figure again; one it refuses is this host's fault.
      if (!isPermanent(err)) throw err;
      log(`refused a scheduler request of account ${acct.id}: ${err.message}`);
      return refusal(config, `Bad scheduler request: ${err.message}`, limits.badRequestDelay);
    }
    const tag = `[HOST#${h.hostId}]`;

    const acks = [];
    const told = new Messages();
    for (const rep of r.results) {
      try {
        told.report(rep.name, await results.report(h.hostId, rep));
        acks.push(rep.name);
      } catch (err) {
        if (err instanceof Unavailable) throw err;
        // Not acknowledged: the client reports it again next time.
        log(`${tag} report of ${rep.name} failed, not acknowledged: ${err.message}`);
      }
    }

    // Before any job is sent: a result sent in this reply is in no list yet.
    const stops = await results.reconcile(h.hostId, r.held, h.sides ?? null);
    const { aborts, abortsIfNotStarted } = stops;
    told.stops(stops);

    const request = workRequest(r);
    let outcome = { reply: null, sent: [], credit: null };
    let noted = h.details === null;   // a new host's row was just made
    if (request !== null) {
      try {
        outcome = await results.send(h.hostId, request, hostKind(r), h.details);
        noted = true;
      } catch (err) {
        if (err instanceof Unavailable || (err instanceof DatabaseError && !isPermanent(err))) throw err;
        log(`${tag} no work sent: ${err.message}`);
        // allot refused this host: register it again at its next request,
        // which finds out whether allot still has it.
        if (err instanceof DatabaseError && !h.created) await hosts.forget(h.hostId);
        outcome = { reply: null, sent: [], credit: null };
      }
    }

    if (!noted) await hosts.note(h.hostId, h.details);
    const mine = outcome.credit ?? await hostCredit(h.hostId);
    const user = await accountCredit(acct.id, h.hostId, mine);

    const w = newReply(config);
    w.flag('dont_use_dcf');
    const d = delays(outcome.reply, outcome.sent.length);
    if (d.requestDelay !== undefined) w.num('request_delay', d.requestDelay);
    if (d.nextRpcDelay !== undefined) w.num('next_rpc_delay', d.nextRpcDelay);
    if (request !== null) {
      const asked = request.resources
        ? Object.keys(request.resources).filter((k) => request.resources[k].req_secs > 0 || request.resources[k].req_instances > 0)
        : ['cpu'];
      told.backoffs(outcome.reply, new Set(asked), d);
    }
    const messages = told.write(w);
    w.el('userid', acct.id).el('user_name', acct.name)
      .num('user_total_credit', user.total).num('user_expavg_credit', user.expavg)
      .el('user_create_time', acct.created);
    // The host id, when the client has another (0 on first contact, and
    // after it attached again).  A client told a new id while it had one
    // takes its state file for a copy and makes itself a new host_cpid.
    if (r.hostid !== h.hostId) w.el('hostid', h.hostId);
    w.num('host_total_credit', mine.total).num('host_expavg_credit', mine.expavg)
      .el('host_create_time', h.createdAt);
    // The volunteer's preferences: the client takes its resource share
    // from them (client/cs_account.cpp).
    w.open('project_preferences').num('resource_share', Number(acct.resource_share ?? 100)).close('project_preferences');
    w.open('rss_feeds').open('rss_feed').el('url', notices.feedUrl(acct.id)).num('poll_interval', notices.pollSecs)
      .close('rss_feed').close('rss_feeds');
    for (const name of acks) w.open('result_ack').el('name', name).close('result_ack');
    for (const { name } of aborts) w.open('result_abort').el('name', name).close('result_abort');
    for (const name of abortsIfNotStarted) {
      w.open('result_abort_if_not_started').el('name', name).close('result_abort_if_not_started');
    }
    if (!r.hasKey) w.block('code_sign_key', config.codeSignKey);
    writeJobs(w, outcome.sent);

    const asked = request === null ? 'nothing' : JSON.stringify(request);
    const statuses = outcome.reply ? JSON.stringify(outcome.reply.resources) : '-';
    const how = h.created ? ' (new host)' : h.reattached ? ' (host attached again)' : '';
    const stopped = [...aborts.map((a) => a.name), ...abortsIfNotStarted.map((name) => `${name} (if not started)`)];
    log(`${tag} scheduler request${how}: ${parsed.bytes} bytes parsed ${parsed.parsedBy === 'worker' ? 'in the worker thread' : 'inline'} ` +
        `(${parsed.ms.toFixed(1)} ms); ${r.results.length} reported, ${acks.length} acked, ` +
        `${r.held.others.length} listed, aborts ${stopped.join(' ') || 'none'}; asked ${asked}; allot: ${statuses}; sent ` +
        `${outcome.sent.map((s) => `job ${s.job.job_id} as ${s.name} (est ${s.job.est_secs.toFixed(1)} s)`).join(', ') || 'nothing'}; ` +
        `request_delay ${d.requestDelay ?? '-'}, next_rpc_delay ${d.nextRpcDelay ?? '-'}; ` +
        `host credit ${mine.total.toFixed(6)}, user credit ${user.total.toFixed(6)}; ${messages} message(s)`);
    return w.toString();
  }

  // Replies for requests intake.js does not let in.
  const refuse = {
    unknown: () => refusal(config, BAD_KEY, BAD_KEY_DELAY),
    bad: (message) => refusal(config, `Bad scheduler request: ${message}`, limits.badRequestDelay),
    busy: () => refusal(config, 'Another scheduler request of this host is in progress.', limits.maxRequestDelay),
  };

  return { handle, refuse };
}

module.exports = { makeScheduler, BAD_KEY };
