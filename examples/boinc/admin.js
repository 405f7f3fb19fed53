'use strict';
// The operator's side of the BOINC front end.  Connects with the standard
// PG* variables as an operator (a member of allot_admin); DATA_DIR as for
// server.js.
//
//   node admin.js setup                         make the code signing key and the directories
//   node admin.js add-account NAME              a volunteer account; prints its authenticator
//   node admin.js add-app-version --app-version-id ID --version-num N --file PATH
//                [--platform P] [--api-version V] [--outputs out,...] [--output-max-bytes N]
//                                               sign and publish the executable of an allot app version
//   node admin.js submit --workload ID [--count N] [--app-units X] [--command-line TEXT] [--quorum Q]
//                                               add jobs to a job workload; with Q, each is sent
//                                               to Q accounts, and decided when their outputs agree
//   node admin.js validate [--check PROGRAM]    the validator: judge each reported result: valid or
//                                               not, and what its outputs are (their MD5s), which
//                                               allot compares between a job's replicas
//   node admin.js sweep                         close the sendings allot moved on from whose
//                                               hosts have not asked since; delete their uploads
//   node admin.js merge-hosts KEEP GONE         host GONE is host KEEP come back under a new id:
//                                               allot.merge_host, and the front end's rows
//   node admin.js notice --title TEXT --text TEXT [--account ID]
//                                               a notice: the project's news, or one account's own;
//                                               clients show it within an hour (notices.php)
//
// Schedule `node admin.js validate` and `node admin.js sweep` beside the
// pg_cron transitioner (cron, a systemd timer): validate marks jobs valid,
// and the next run_transitioner grants their credit; sweep deletes what
// hosts that vanished uploaded of jobs that timed out.

const crypto = require('node:crypto');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const {
  UsageError, Refused, options, positiveInt, readOptionFile, withDb: connect, transaction, run,
} = require('allot-common/admin');
const files = require('./files');
const signing = require('./signing');
const { newKey, keyHash } = require('./accounts');
const { makeResults } = require('./results');
const notices = require('./notices');

const dataDir = path.resolve(process.env.DATA_DIR || 'data');

// BOINC's names for allot's coprocessor types.
const BOINC_COPROC = { nvidia: 'NVIDIA', amd: 'ATI', intel: 'intel_gpu' };

// The limits of boinc.account.name, boinc.workunit.command_line and a
// notice's title and text (schema.sql).
const MAX_NAME = 254;
const MAX_COMMAND_LINE = 4096;
const MAX_TITLE = 200;
const MAX_NOTICE = 4000;

const withDb = (fn) => connect('allot-boinc-admin', fn);

const commands = {
  async setup() {
    const made = signing.ensureKeys(dataDir);
    for (const dir of [files.downloadDir(dataDir), files.uploadDir(dataDir)]) fs.mkdirSync(dir, { recursive: true });
    console.log(`${made ? 'made' : 'kept'} the code signing key in ${signing.keyPaths(dataDir).dir}`);
    console.log(`download and upload directories in ${dataDir}`);
  },

  async 'add-account'([name, ...rest]) {
    if (!name || rest.length) throw new UsageError('usage: add-account NAME');
    if (name.length > MAX_NAME) throw new UsageError(`NAME must be at most ${MAX_NAME} characters, not ${name.length}`);
    const authenticator = newKey();
    const id = await withDb(async (db) => transaction(db, async () => {
      // One account per name from this command: two runs at once for one
      // name wait for each other here.  (Volunteers' own accounts,
      // create_account.php, are told apart by their email address.)
      await db.query("SELECT pg_advisory_xact_lock(hashtext('boinc.account name'), hashtext($1))", [name]);
      const { rows: taken } = await db.query('SELECT id FROM boinc.account WHERE name = $1 ORDER BY id LIMIT 1', [name]);
      if (taken.length) throw new Refused(`an account named ${JSON.stringify(name)} already exists (account ${taken[0].id})`);
      const { rows } = await db.query(
        "INSERT INTO boinc.account (name) VALUES (allot.check_name('user name', $1)) RETURNING id", [name]);
      await db.query('INSERT INTO boinc.account_key (key_sha256, account_id) VALUES ($1, $2)',
        [keyHash(authenticator), rows[0].id]);
      return rows[0].id;
    }));
    console.log(`account ${id} (${name}); its authenticator, shown only now:`);
    console.log(authenticator);
  },

  async 'add-app-version'(args) {
    const o = options(args, ['app-version-id', 'version-num', 'file', 'platform', 'api-version', 'outputs', 'output-max-bytes']);
    const id = positiveInt(o['app-version-id'], 'app-version-id');
    if (!/^[0-9]{1,9}$/.test(o['version-num'] ?? '')) throw new UsageError('--version-num must be an integer, e.g. 100');
    const versionNum = Number(o['version-num']);
    if (o.platform !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(o.platform)) {
      throw new UsageError(`--platform must be a BOINC platform name such as x86_64-pc-linux-gnu, not ${JSON.stringify(o.platform)}`);
    }
    if (o['api-version'] !== undefined && !/^[0-9]{1,3}(\.[0-9]{1,3}){0,2}$/.test(o['api-version'])) {
      throw new UsageError(`--api-version must be a version such as 7.20.5, not ${JSON.stringify(o['api-version'])}`);
    }
    const outputs = (o.outputs ?? 'out').split(',');
    if (!outputs.every((n) => /^[A-Za-z0-9_.-]{1,64}$/.test(n))) throw new UsageError('--outputs: names of letters, digits and "_.-"');
    if (new Set(outputs).size !== outputs.length) throw new UsageError(`--outputs names a file twice: ${o.outputs}`);
    const maxBytes = positiveInt(o['output-max-bytes'] ?? '16777216', 'output-max-bytes');
    const bytes = readOptionFile(o.file, 'file');
    if (!fs.existsSync(signing.keyPaths(dataDir).privateKey)) {
      throw new Refused(`no code signing key in ${signing.keyPaths(dataDir).dir}: run node admin.js setup first (DATA_DIR as for server.js)`);
    }
    const md5 = crypto.createHash('md5').update(bytes).digest('hex');
    const signature = signing.signMd5(dataDir, md5);
    if (!signing.verifyMd5(dataDir, md5, signature)) throw new Error('the signature does not verify');

    await withDb(async (db) => transaction(db, async () => {
      const { rows } = await db.query(
        `SELECT a.name AS app, v.platform, v.resource, v.ncoprocs
           FROM allot.app_version v JOIN allot.app a ON a.id = v.app_id WHERE v.id = $1`, [id]);
      if (rows.length === 0) throw new UsageError(`allot has no app version ${id}`);
      const v = rows[0];
      const platform = o.platform ?? v.platform ?? 'x86_64-pc-linux-gnu';
      if (v.platform !== null && v.platform !== platform) {
        throw new UsageError(`allot app version ${id} runs on ${v.platform}, not ${platform}`);
      }
      const fileName = `${v.app}_${versionNum}_${platform}`;
      if (!files.FILE_NAME.test(fileName)) throw new UsageError(`app name ${JSON.stringify(v.app)} cannot name a file`);
      // An executable is published once: clients keep what they
      // downloaded by its name, version and md5.
      const { rows: published } = await db.query(
        `SELECT app_version_id, version_num, file_name FROM boinc.app_version
          WHERE app_version_id = $1 OR file_name = $2 OR (app_name, platform, version_num) = ($3, $4, $5)
          ORDER BY app_version_id <> $1 LIMIT 1`, [id, fileName, v.app, platform, versionNum]);
      if (published.length) {
        const p = published[0];
        throw new Refused(String(p.app_version_id) === id
          ? `allot app version ${id} is already published, as ${p.file_name}: publish a new executable as a new allot app version`
          : `${v.app} version ${versionNum} for ${platform} is already published, as allot app version ${p.app_version_id}: ` +
            'give this one another --version-num');
      }
      await db.query(
        `INSERT INTO boinc.app_version (app_version_id, app_name, version_num, platform, api_version, coproc_type,
                                        ncoprocs, file_name, nbytes, md5, signature, output_names, output_max_nbytes)
         VALUES ($1, $2, $3, $4, coalesce($5, '7.20.5'), $6, $7, $8, $9, $10, $11, $12, $13)`,
        [id, v.app, versionNum, platform, o['api-version'] ?? null,
         v.resource === 'cpu' ? null : (BOINC_COPROC[v.resource] ?? v.resource), v.ncoprocs,
         fileName, bytes.length, md5, signature, outputs, maxBytes]);
      // Published last: a file the database does not know is never served
      // as this version, and 'wx' never replaces a published one.
      const target = path.join(files.downloadDir(dataDir), fileName);
      try {
        fs.writeFileSync(target, bytes, { mode: 0o644, flag: 'wx' });
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
        throw new Refused(`${target} already exists, but no app version in the database is published as it: ` +
                          'move it away (it may be what clients downloaded before), or give another --version-num');
      }
      console.log(`app version ${id}: ${v.app} ${versionNum} for ${platform}, ${fileName} (md5 ${md5}), signed`);
    }));
  },

  async submit(args) {
    const o = options(args, ['workload', 'count', 'app-units', 'command-line', 'quorum']);
    const workload = positiveInt(o.workload, 'workload');
    const count = Number(positiveInt(o.count ?? '1', 'count'));
    const units = Number(o['app-units'] ?? 1);
    if (!(Number.isFinite(units) && units > 0)) {
      throw new UsageError(`--app-units must be a positive number, not ${JSON.stringify(o['app-units'])}`);
    }
    const commandLine = o['command-line'] ?? '';
    if (commandLine.length > MAX_COMMAND_LINE) {
      throw new UsageError(`--command-line must be at most ${MAX_COMMAND_LINE} characters, not ${commandLine.length}`);
    }
    const quorum = Number(positiveInt(o.quorum ?? '1', 'quorum'));
    const ids = await withDb(async (db) => transaction(db, async () => {
      const { rows: found } = await db.query('SELECT 1 FROM allot.workload WHERE id = $1', [workload]);
      if (found.length === 0) throw new Refused(`allot has no workload ${workload}`);
      // A quorum of Q: Q replicas, one per account, decided when Q agree
      // (allot makes the replicas; they share the job's workunit row).
      const { rows } = await db.query(
        `INSERT INTO allot.job (workload_id, predicted_app_units, min_quorum, target_nresults)
         SELECT $1, $2, $4, $4 FROM generate_series(1, $3) RETURNING id`, [workload, units, count, quorum]);
      const jobIds = rows.map((r) => r.id);
      await db.query(
        'INSERT INTO boinc.workunit (job_id, command_line) SELECT unnest($1::bigint[]), $2',
        [jobIds, commandLine]);
      return jobIds;
    }));
    console.log(`jobs ${ids.join(' ')}`);
  },

  async validate(args) {
    const o = options(args, ['check']);
    await withDb(async (db) => {
      // Every reported result not judged yet: a job's own, or one replica
      // of a job with a quorum (allot.job.replica_of).  Its outputs' MD5s,
      // in name order, are its digest: allot decides a replicated job when
      // enough accounts' valid results have the same one.
      const { rows } = await db.query(
        `SELECT j.id AS job_id, r.sending, r.name AS result,
                array_agg(o.name ORDER BY o.name) AS names, array_agg(o.nbytes ORDER BY o.name) AS sizes,
                array_agg(o.md5 ORDER BY o.name) AS md5s
           FROM allot.job j
           JOIN boinc.result r ON r.job_id = j.id AND r.host_id = j.host_id AND r.outcome = 'success'
                              AND (r.sending IS NULL OR r.sending = j.sending)
           JOIN boinc.output_file o ON o.result_name = r.name
          WHERE j.state = 'done' AND j.validated IS NULL AND j.verdict IS NULL
          GROUP BY j.id, r.name ORDER BY j.id LIMIT 10000`);
      const { discard } = makeResults(db, { dataDir, log: console.log, limits: {} });
      for (const job of rows) {
        const paths = job.names.map((n) => files.uploadPath(dataDir, job, n));
        let why = null;
        for (let i = 0; i < paths.length && why === null; i++) {
          const have = await files.fileDigest(paths[i]);
          if (have === null) why = `${job.names[i]} is missing`;
          else if (have.md5 !== job.md5s[i] || have.nbytes !== Number(job.sizes[i])) why = `${job.names[i]} changed since its report`;
        }
        if (why === null && o.check) {
          why = await new Promise((resolve, reject) => {
            execFile(o.check, paths, { timeout: 60000 }, (err, stdout, stderr) => {
              // A program that cannot be run judges nothing: stop before
              // it marks a job invalid.
              if (err && ['ENOENT', 'EACCES', 'ENOEXEC'].includes(err.code)) {
                reject(new Refused(`--check ${JSON.stringify(o.check)} cannot be run (${err.code}): stopped before job ${job.job_id}`));
              }
              resolve(err ? `${o.check} says no: ${(stderr || err.message).trim().slice(0, 200)}` : null);
            });
          });
        }
        const digest = job.md5s.join(' ');
        // The results found invalid by this verdict: this one, or, when it
        // decided a replicated job, those that disagree with the decision.
        const invalid = await transaction(db, async () => {
          await db.query('SELECT allot.validate_job($1, $2, $3, $4)', [job.job_id, why === null, job.sending, digest]);
          const { rows: out } = await db.query(
            `UPDATE boinc.result r SET outcome = 'invalid', detail = CASE WHEN r.name = $2 THEN $3
                                                                     ELSE 'its output disagrees with the quorum''s' END
               FROM allot.job j
              WHERE r.job_id = j.id AND r.outcome = 'success' AND (r.sending IS NULL OR r.sending = j.sending)
                AND (j.id = $1 OR j.replica_of = (SELECT coalesce(replica_of, id) FROM allot.job WHERE id = $1)
                     OR j.id = (SELECT replica_of FROM allot.job WHERE id = $1))
                AND (j.validated = false OR (r.name = $2 AND $3::text IS NOT NULL))
             RETURNING r.name, r.job_id, r.sending`, [job.job_id, job.result, why]);
          return out;
        });
        // An invalid result's outputs go with it.
        await discard(invalid);
        console.log(`job ${job.job_id} (${job.result}): ${why === null ? `valid, digest ${digest}` : `invalid: ${why}`}` +
                    invalid.filter((r) => r.name !== job.result).map((r) => `; ${r.name} disagrees: invalid`).join(''));
      }
      console.log(`${rows.length} result(s) judged`);
    });
  },

  // Sendings the front end has not closed that allot has moved on from
  // (timed out, requeued), found by their host's next request, or here
  // when it never comes.
  async sweep(args) {
    if (args.length) throw new UsageError('usage: sweep');
    await withDb(async (db) => {
      const { rows } = await db.query(
        `UPDATE boinc.result r
            SET reported_at = now(), outcome = 'superseded',
                detail = 'allot no longer has it in progress on this host (timed out or requeued); swept'
          WHERE r.outcome IS NULL
            AND NOT EXISTS (SELECT FROM allot.job j
                             WHERE j.id = r.job_id AND j.state = 'in_progress' AND j.host_id = r.host_id
                               AND j.sending = coalesce(r.sending, j.sending))
          RETURNING r.name, r.job_id, r.sending`);
      await makeResults(db, { dataDir, log: console.log, limits: {} }).discard(rows);
      for (const r of rows) console.log(`${r.name}: superseded, its uploads deleted`);
      console.log(`${rows.length} sending(s) swept`);
    });
  },

  // allot.merge_host and the front end's rows, in one transaction: the
  // results of GONE become KEEP's, and GONE's row goes.  Both hosts must be
  // one account's.
  async 'merge-hosts'(args) {
    if (args.length !== 2) throw new UsageError('usage: merge-hosts KEEP GONE');
    const [keep, gone] = args.map((a, i) => positiveInt(a, i === 0 ? 'KEEP' : 'GONE'));
    await withDb(async (db) => transaction(db, async () => {
      const { rows } = await db.query(
        'SELECT host_id, account_id FROM boinc.host WHERE host_id IN ($1, $2) ORDER BY host_id FOR UPDATE', [keep, gone]);
      const owner = new Map(rows.map((r) => [String(r.host_id), String(r.account_id)]));
      for (const id of [keep, gone]) if (!owner.has(id)) throw new UsageError(`the front end has no host ${id}`);
      if (owner.get(keep) !== owner.get(gone)) {
        throw new UsageError(`host ${keep} is account ${owner.get(keep)}'s and host ${gone} account ${owner.get(gone)}'s: not merged`);
      }
      const { rows: [{ merged }] } = await db.query('SELECT allot.merge_host($1, $2) AS merged', [keep, gone]);
      const moved = await db.query('UPDATE boinc.result SET host_id = $1 WHERE host_id = $2', [keep, gone]);
      await db.query(
        `UPDATE boinc.host k SET last_rpc_at = greatest(k.last_rpc_at, g.last_rpc_at)
           FROM boinc.host g WHERE k.host_id = $1 AND g.host_id = $2`, [keep, gone]);
      await db.query('DELETE FROM boinc.host WHERE host_id = $1', [gone]);
      console.log(`host ${gone} merged into host ${keep}: ${merged.jobs} job(s) and ${merged.reports} report(s) in allot, ` +
                  `${moved.rowCount} result(s) in the front end`);
    }));
  },

  async notice(args) {
    const o = options(args, ['title', 'text', 'account']);
    for (const [name, max] of [['title', MAX_TITLE], ['text', MAX_NOTICE]]) {
      const v = o[name] ?? '';
      if (v.trim() === '') throw new UsageError(`--${name} is required`);
      if (v.length > max) throw new UsageError(`--${name} must be at most ${max} characters, not ${v.length}`);
    }
    const account = o.account === undefined ? null : positiveInt(o.account, 'account');
    const id = await withDb(async (db) => transaction(db, async () => {
      if (account !== null) {
        const { rows } = await db.query('SELECT 1 FROM boinc.account WHERE id = $1', [account]);
        if (rows.length === 0) throw new Refused(`the front end has no account ${account}`);
      }
      return notices.post(db, account, o.title, o.text);
    }));
    console.log(`notice ${id} for ${account === null ? 'everyone' : `account ${account}`}: ${o.title}`);
  },
};

run(commands, 'usage: node admin.js setup | add-account NAME | add-app-version ... | submit ... [--quorum Q] | validate [--check PROGRAM] | sweep | merge-hosts KEEP GONE | notice --title T --text T [--account ID]');
