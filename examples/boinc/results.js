'use strict';
// Sendings as BOINC results.  Each time allot sends a job is a sending of
// its own, numbered by allot (allot.job.sending); the front end gives it a
// BOINC result named job{J}_{S}_{96 random bits} (a row of boinc.result),
// its outputs a directory of their own (files.js), and closes it once:
//
//   reported    the client reports it: allot.report_job names the sending,
//               and refuses a sending it has moved on from (outcome refused);
//   lost        allot still has it in progress on the host, but the client
//               neither reports nor lists it (<other_results>): reported to
//               allot as lost at once, so that the job goes to another host
//               now rather than at its deadline (BOINC's lost results);
//   superseded  allot has moved on from it (timed out, requeued) before the
//               client reported it; found when the host next asks, or by
//               `node admin.js sweep` for hosts that never come back.
//
// A sending closed without a success has its uploads deleted then.
//
// The client's list also says what it should stop (reconcile):
//   <result_abort>  every result it lists that is not a sending allot has
//                   in progress on this host: its report would be refused,
//                   so every second more of it is waste;
//   <result_abort_if_not_started>  a sending still in progress here whose
//                   deadline has passed: allot takes its report until the
//                   transitioner times it out, so a copy that runs may make
//                   it, and one that has not started will not (BOINC's rule
//                   for timed-out results, where a late result may count).

const { DatabaseError } = require('pg');
const files = require('./files');
const { isPermanent } = require('allot-common/database');

// boinc.send_work's error: allot chose a job whose app version has no
// executable here (schema.sql).
const NO_EXECUTABLE = 'BX001';

function makeResults(db, config) {
  const { log, limits, dataDir } = config;

  // Delete the uploads of sendings that ended without a success.
  async function discard(rows) {
    if (rows.length === 0) return;
    const { rows: outputs } = await db.query(
      'SELECT result_name, name FROM boinc.output_file WHERE result_name = ANY ($1::text[])', [rows.map((r) => r.name)]);
    for (const row of rows) {
      const names = outputs.filter((o) => o.result_name === row.name).map((o) => o.name);
      await files.removeUploads(dataDir, row, names);
    }
  }

  // How a finished result is judged: the outcome allot is told, and why.
  async function judge(report, row) {
    if (report.state === 6) return { outcome: 'aborted', detail: 'aborted on the host' };
    if (report.state !== 5 || report.exitStatus !== 0) {
      return { outcome: 'error', detail: `state ${report.state}, exit status ${report.exitStatus}` };
    }
    const checked = [];
    for (const name of row.outputs) {
      const stated = report.fileInfos.find((f) => f.name === name);
      if (!stated || stated.md5 === null || stated.nbytes === null) {
        return { outcome: 'error', detail: `output ${name} not reported` };
      }
      const have = await files.fileDigest(files.uploadPath(dataDir, row, name));
      if (have === null) return { outcome: 'error', detail: `output ${name} missing` };
      if (have.nbytes !== stated.nbytes || have.md5 !== stated.md5) {
        return {
          outcome: 'error',
          detail: `output ${name} differs: ${have.nbytes} bytes md5 ${have.md5}, ` +
                  `the client has ${stated.nbytes} bytes md5 ${stated.md5}`,
        };
      }
      checked.push({ name, ...have });
    }
    return { outcome: 'success', detail: `${checked.length} output file(s), md5 checked`, checked };
  }

  const close = (c, name, outcome, detail) => c.query(
    'UPDATE boinc.result SET reported_at = now(), outcome = $2, detail = $3 WHERE name = $1 AND outcome IS NULL',
    [name, outcome, detail]);

  // One reported result.  Returns what came of it, for the volunteer's
  // messages: {outcome, detail, checked} (checked: the front end, not the
  // client, found the error), outcome 'unknown' for a result not sent to
  // this host, 'again' for one closed before.  Every answer is acknowledged;
  // a failure throws, and the client reports it again next time.
  async function report(hostId, rep) {
    const { rows } = await db.query(
      `SELECT r.name, r.job_id, r.sending, r.app_units, r.outcome IS NOT NULL AS closed,
              coalesce(array_agg(o.name ORDER BY o.name) FILTER (WHERE o.name IS NOT NULL), '{}') AS outputs
         FROM boinc.result r LEFT JOIN boinc.output_file o ON o.result_name = r.name
        WHERE r.name = $1 AND r.host_id = $2
        GROUP BY r.name`, [rep.name, hostId]);
    const row = rows[0];
    if (row === undefined) {
      // Not sent to this host: acknowledged, so that the client forgets it.
      log(`[HOST#${hostId}] report of unknown result ${rep.name}: acknowledged, ignored`);
      return { outcome: 'unknown' };
    }
    if (row.closed) return { outcome: 'again' };   // reported before (the ack got lost), or closed meanwhile
    const verdict = await judge(rep, row);
    const args = [hostId, row.job_id, verdict.outcome, row.app_units, row.sending];
    let call = 'SELECT allot.report_job($1, $2, $3, app_units => $4::float8, sending => $5::int';
    if (rep.elapsed !== null && rep.elapsed >= 1e-6 && rep.elapsed <= 1e10) {
      args.push(rep.elapsed);
      call += ', elapsed_secs => $6::float8';
    }
    call += ')::text AS reply';
    let outcome = verdict.outcome;
    let detail = verdict.detail;
    try {
      await db.transaction(async (c) => {
        const { rows: [{ reply }] } = await c.query(call, args);
        await close(c, rep.name, verdict.outcome, verdict.detail);
        for (const f of verdict.checked ?? []) {
          await c.query('UPDATE boinc.output_file SET nbytes = $2, md5 = $3 WHERE name = $1', [f.name, f.nbytes, f.md5]);
        }
        log(`[HOST#${hostId}] reported ${rep.name} (job ${row.job_id}, sending ${row.sending ?? '-'}): ` +
            `${verdict.outcome}, ${verdict.detail}; allot: ${reply}`);
      });
    } catch (err) {
      if (!isPermanent(err)) throw err;
      // allot refuses it for good (a sending it has moved on from): record
      // why, and acknowledge, since sending it again cannot help.
      outcome = 'refused';
      detail = err.message;
      await close(db, rep.name, 'refused', `${err.code}: ${err.message}`);
      log(`[HOST#${hostId}] reported ${rep.name} (job ${row.job_id}, sending ${row.sending ?? '-'}): ` +
          `refused by allot: ${err.code} ${err.message}`);
    }
    if (outcome !== 'success') await discard([row]);
    // The client said it succeeded, and the front end found otherwise.
    const checked = verdict.outcome === 'error' && rep.state === 5 && rep.exitStatus === 0;
    return { outcome, detail, checked };
  }

  // The client's list against allot's (the module comment): closes what
  // is lost or superseded, and returns {aborts: [{name, reason}],
  // abortsIfNotStarted: [name], lost: [name]} (reason: why allot ended the
  // sending, when it says; messages.js has general words otherwise).
  // Only this host's own sendings are ever closed: a name the client lists
  // that is not one of them changes nothing but its own reply.
  // sides: {open, current}, read before this request's reports
  // (hosts.identify); the results it reports are left to report().
  async function reconcile(hostId, held, sides) {
    // Without the list (the client sends one in every request, even when
    // empty) there is nothing to compare: what allot moved on from is
    // closed at a later request or by admin.js sweep.
    if (!held.listed || sides === null) return { aborts: [], abortsIfNotStarted: [], lost: [] };
    const { open, current } = sides;
    const inProgress = new Map(current.map((j) => [String(j.job_id), j]));
    const nowSecs = Date.now() / 1000;
    const listed = new Set(held.others);
    const reported = new Set(held.reported);
    const holds = (name) => listed.has(name) || reported.has(name);
    const lost = [];
    const superseded = [];
    const alive = new Set();   // names of the host's sendings allot has in progress
    const abortsIfNotStarted = [];
    for (const row of open) {
      // Reported in this request: report() took it (or, failing, the
      // client reports it again next time).
      if (reported.has(row.name)) continue;
      const job = inProgress.get(String(row.job_id));
      if (job === undefined || (row.sending !== null && job.sending !== row.sending)) {
        superseded.push(row);
        continue;
      }
      alive.add(row.name);
      if (!holds(row.name)) {
        // A list cut short (limits.maxHeld) proves nothing lost.
        if (held.listed && held.complete) lost.push(row);
      } else if (listed.has(row.name) && job.deadline !== null && job.deadline < nowSecs) {
        abortsIfNotStarted.push(row.name);
      }
    }
    // Hook: allot does not yet say why it ended a sending (issue 32, the
    // core's half); when host_jobs or the row carries it (ended_reason),
    // the volunteer is told that instead of messages.js's general words.
    const reasons = new Map(open.filter((row) => row.ended_reason).map((row) => [row.name, row.ended_reason]));
    const aborts = held.others.filter((name) => !alive.has(name)).slice(0, limits.maxResults)
      .map((name) => ({ name, reason: reasons.get(name) }));

    const dead = [];
    const reportedLost = [];
    for (const row of lost) {
      try {
        await db.transaction(async (c) => {
          const { rows: [{ reply }] } = await c.query(
            "SELECT allot.report_job($1, $2, 'lost', sending => $3::int)::text AS reply", [hostId, row.job_id, row.sending]);
          await close(c, row.name, 'lost', 'the client no longer has it');
          log(`[HOST#${hostId}] lost ${row.name} (job ${row.job_id}, sending ${row.sending ?? '-'}): ` +
              `neither reported nor listed by the client; allot: ${reply}`);
        });
      } catch (err) {
        if (!isPermanent(err)) throw err;
        superseded.push(row);   // allot moved on meanwhile
        continue;
      }
      reportedLost.push(row.name);
      dead.push(row);
    }
    for (const row of superseded) {
      await close(db, row.name, 'superseded', 'allot no longer has it in progress on this host (timed out or requeued)');
      log(`[HOST#${hostId}] ${row.name} (job ${row.job_id}, sending ${row.sending ?? '-'}) is over in allot: superseded`);
      dead.push(row);
    }
    await discard(dead);
    return { aborts, abortsIfNotStarted, lost: reportedLost };
  }

  // Workloads not asked for, per kind of host (platform and coprocessor
  // types): allot chose for a host of that kind a job whose app version has
  // no executable here.  Each is left out for limits.excludeSecs, then
  // asked for again (the operator may have added the executable).
  const excluded = new Map();   // kind -> Map(workload id -> until, ms)

  function exclusions(kind, now) {
    const map = excluded.get(kind);
    if (map === undefined) return [];
    for (const [id, until] of map) if (until <= now) map.delete(id);
    return [...map.keys()];
  }

  // One request_work, and the front end's rows for what it sent, in one
  // statement (boinc.send_work): a job is never in progress without its
  // BOINC result.  A job of an app version without an executable is never
  // sent: allot's choice is undone, and the request asked again without its
  // workload (and so are this kind of host's next requests, for a while).
  // Returns {reply, sent, credit: {total, expavg}}.
  // details: what boinc.note notes of a known host (null for a new one).
  async function send(hostId, request, kind, details) {
    const now = Date.now();
    for (let attempt = 0; ; attempt++) {
      const exclude = exclusions(kind, now);
      let row;
      try {
        ({ rows: [row] } = await db.query({
          name: 'boinc-send-work',
          text: 'SELECT reply, names, command_lines, versions, total_credit, expavg_credit ' +
                'FROM boinc.send_work($1, $2::jsonb, $3::bigint[], $4::text[])',
          values: [hostId, JSON.stringify(request), exclude, details],
        }));
      } catch (err) {
        if (!(err instanceof DatabaseError && err.code === NO_EXECUTABLE && attempt < 3)) throw err;
        const map = excluded.get(kind) ?? new Map();
        excluded.set(kind, map);
        const workloads = JSON.parse(err.detail);
        for (const id of workloads) map.set(String(id), now + limits.excludeSecs * 1000);
        log(`[HOST#${hostId}] ${err.message} (node admin.js add-app-version): workload(s) ${workloads.join(', ')} ` +
            `not sent to hosts of ${kind} for ${limits.excludeSecs} s`);
        continue;
      }
      const { reply, names, command_lines: commandLines, versions } = row;
      const credit = { total: row.total_credit ?? 0, expavg: row.expavg_credit ?? 0 };
      const jobs = reply.jobs ?? [];
      const sent = jobs.map((job, i) => {
        const version = versions[String(job.app_version_id)];
        const name = names[i];
        return {
          job, version, name,
          deadline: job.deadline ? Date.parse(job.deadline) / 1000 : now / 1000 + 7 * 86400,
          outputs: version.output_names.map((openName, k) => ({ name: `${name}_${k}`, openName })),
          commandLine: commandLines[i],
        };
      });
      return { reply, sent, credit };
    }
  }

  // Where an output may be uploaded (files.upload's lookup): its sending,
  // and whether allot still has that sending in progress on its host.
  async function uploadTarget(name) {
    const { rows } = await db.query(
      `SELECT r.job_id, r.sending, o.max_nbytes, r.outcome IS NOT NULL AS reported,
              EXISTS (SELECT FROM allot.host_jobs(r.host_id) j
                       WHERE j.job_id = r.job_id AND j.sending = coalesce(r.sending, j.sending)) AS alive
         FROM boinc.output_file o JOIN boinc.result r ON r.name = o.result_name WHERE o.name = $1`, [name]);
    const row = rows[0];
    return row ? { result: row, maxNbytes: Number(row.max_nbytes), reported: row.reported, alive: row.alive } : null;
  }

  return { send, report, reconcile, uploadTarget, discard };
}

module.exports = { makeResults };
