'use strict';
// The operator's side of the OpenBench front end: accounts, engines, books,
// networks and tests.  Connects with the standard PG* variables as the
// operator setup.sql was run by (a member of allot_admin); DATA_DIR as for
// server.js.
//
//   node admin.js add-user NAME [--password-stdin] [--approver | --operator]
//                                                      an account; prints a new password unless given one
//   node admin.js set-role NAME developer|approver|operator    what the account may do on the web site
//   node admin.js enable-user NAME                     it may log in, create tests, and run workers
//   node admin.js disable-user NAME                    its workers are refused from their next call
//   node admin.js add-engine NAME --compilers 'gcc>=10,clang>=14' [--path src] [--cpuflags POPCNT,BMI2]
//                 [--systems Linux,Windows] [--private] [--nps N] [--repo URL]
//   node admin.js add-book NAME --source URL (--sha256 HEX | --file PATH)
//   node admin.js add-network --engine E --name N --file PATH
//   node admin.js create-test --dev-source URL --dev-sha SHA --dev-bench N
//                 --base-source URL --base-sha SHA --base-bench N --book NAME --tc TC
//                 (--sprt ELO0,ELO1 [--trinomial] | --games N) [more: README.md]
//   node admin.js create-test --spsa FILE --iterations N --dev-source URL --dev-sha SHA --dev-bench N
//                 --book NAME --tc TC            an SPSA tune of one commit (README.md)
//   node admin.js stop-test ID
//   node admin.js tests                                 every test, its games and state
//   node admin.js prune-hosts [--days N]                allot hosts of machines not seen for N days (7)

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { DatabaseError } = require('pg');
const {
  UsageError, Refused, options, need, number, list, readOptionFile, withDb: connect, transaction, run,
} = require('allot-common/admin');
const { newHashRow } = require('./secrets');
const { networkPath } = require('./networks');
const spec = require('./test_spec');
const spsa = require('./spsa');

const dataDir = path.resolve(process.env.DATA_DIR || 'data');

const WORD = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$/;
const URL_PATTERN = /^https?:\/\/[^\s]{1,2000}$/;

const withDb = (fn) => connect('allot-openbench-admin', fn);

// A test_spec check, its SpecError told as a mistake in the command line.
function checked(fn, ...args) {
  try {
    return fn(...args);
  } catch (err) {
    if (err instanceof spec.SpecError) throw new UsageError(err.message);
    throw err;
  }
}

async function readStdinLine() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/, 1)[0];
}

// A network named by its name or by its sha, for a test's side.
async function network(db, engine, identifier) {
  if (identifier === undefined) return { sha: null, name: null };
  const { rows } = await db.query(
    'SELECT sha, name FROM openbench.network WHERE engine = $1 AND (name = $2 OR sha = upper($2))', [engine, identifier]);
  if (rows.length === 0) throw new UsageError(`engine ${engine} has no network ${JSON.stringify(identifier)} (add-network)`);
  return rows[0];
}

const TEST_OPTIONS = [
  'name', 'engine', 'base-engine', 'dev-name', 'base-name', 'dev-source', 'base-source', 'dev-sha', 'base-sha',
  'dev-bench', 'base-bench', 'options', 'dev-options', 'base-options', 'dev-network', 'base-network', 'book',
  'tc', 'base-tc', 'sprt', 'alpha', 'beta', 'games', 'throughput', 'priority', 'workload-size', 'upload-pgns',
  'scale-method', 'scale-nps', 'syzygy-adj', 'syzygy-wdl', 'win-adj', 'draw-adj',
  'spsa', 'iterations', 'spsa-alpha', 'spsa-gamma', 'a-ratio', 'reporting', 'distribution',
];

// A tune's settings from create-test's options (--spsa FILE: its
// parameters, one a line), or null for a test.  Game pairs per iteration
// are the workload size.
function tuneOptions(o, workloadSize) {
  if (o.spsa === undefined) {
    const stray = ['iterations', 'spsa-alpha', 'spsa-gamma', 'a-ratio', 'reporting', 'distribution'].find((k) => o[k] !== undefined);
    if (stray) throw new UsageError(`--${stray} is for a tune (--spsa FILE)`);
    return null;
  }
  if (o.sprt !== undefined || o.games !== undefined) throw new UsageError('a tune (--spsa) has no --sprt or --games');
  for (const k of ['base-source', 'base-sha', 'base-bench', 'base-engine', 'base-tc', 'base-options']) {
    if (o[k] !== undefined) throw new UsageError(`a tune plays one commit against itself: no --${k}`);
  }
  const run = {
    iterations: number(o.iterations, 'iterations', 1, 1e8, { integer: true }),
    pairsPer: workloadSize,
    alpha: number(o['spsa-alpha'] ?? '0.602', 'spsa-alpha', 0.001, 10),
    gamma: number(o['spsa-gamma'] ?? '0.101', 'spsa-gamma', 0.001, 10),
    aRatio: number(o['a-ratio'] ?? '0.1', 'a-ratio', 0.001, 1000),
    reportingType: checked(spec.oneOf, o.reporting ?? 'BATCHED', ['BATCHED', 'BULK'], '--reporting'),
    distributionType: checked(spec.oneOf, o.distribution ?? 'SINGLE', ['SINGLE', 'MULTIPLE'], '--distribution'),
  };
  try {
    return spsa.createSettings(run, spsa.parseInputs(readOptionFile(o.spsa, 'spsa').toString('utf8')));
  } catch (err) {
    if (err instanceof spsa.SpsaInputError) throw new UsageError(`--spsa ${JSON.stringify(o.spsa)}: ${err.message}`);
    throw err;
  }
}

const commands = {
  async 'add-user'([name, ...rest]) {
    if (!name || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
      throw new UsageError('usage: add-user NAME [--password-stdin] [--approver | --operator]   (NAME: letters, digits and "_.-")');
    }
    const o = options(rest, [], ['password-stdin', 'approver', 'operator']);
    if (o.approver && o.operator) throw new UsageError('give one of --approver and --operator (an operator approves too)');
    const password = o['password-stdin'] ? await readStdinLine() : crypto.randomBytes(18).toString('base64url');
    if (password.length < 8 || password.length > 1024) throw new UsageError('a password has 8 to 1024 characters');
    const h = await newHashRow(password);
    const { rowCount } = await withDb((db) => db.query(
      `INSERT INTO openbench.account (name, salt, hash, scrypt_n, scrypt_r, scrypt_p, approver, operator)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (name) DO NOTHING`,
      [name, h.salt, h.hash, h.scrypt_n, h.scrypt_r, h.scrypt_p, o.approver === true, o.operator === true]));
    if (rowCount === 0) throw new Refused(`an account named ${JSON.stringify(name)} already exists: its password is unchanged`);
    console.log(`account ${name}${o.operator ? ', an operator' : o.approver ? ', an approver' : ''}`);
    if (!o['password-stdin']) console.log(`its password, shown only now:\n${password}`);
  },

  // What an account may do on the web site: a developer creates tests and
  // acts on its own, an approver approves and acts on anyone's, an
  // operator also enables accounts and makes approvers there.
  async 'set-role'([name, role, ...rest]) {
    const roles = { developer: [false, false], approver: [true, false], operator: [false, true] };
    if (!name || !Object.hasOwn(roles, role ?? '') || rest.length) {
      throw new UsageError('usage: set-role NAME developer|approver|operator');
    }
    const { rowCount } = await withDb((db) => db.query(
      'UPDATE openbench.account SET approver = $2, operator = $3 WHERE name = $1', [name, ...roles[role]]));
    if (rowCount === 0) throw new UsageError(`no account ${JSON.stringify(name)}`);
    console.log(`account ${name}: ${role}`);
  },

  async 'enable-user'([name, ...rest]) {
    if (!name || rest.length) throw new UsageError('usage: enable-user NAME');
    const { rowCount } = await withDb((db) => db.query('UPDATE openbench.account SET enabled = true WHERE name = $1', [name]));
    if (rowCount === 0) throw new UsageError(`no account ${JSON.stringify(name)}`);
    console.log(`account ${name} enabled`);
  },

  async 'disable-user'([name, ...rest]) {
    if (!name || rest.length) throw new UsageError('usage: disable-user NAME');
    const { rowCount } = await withDb((db) => transaction(db, async () => {
      const r = await db.query('UPDATE openbench.account SET enabled = false WHERE name = $1 RETURNING id', [name]);
      // its browsers are logged out too
      if (r.rowCount) await db.query('DELETE FROM openbench.session WHERE account_id = $1', [r.rows[0].id]);
      return r;
    }));
    if (rowCount === 0) throw new UsageError(`no account ${JSON.stringify(name)}`);
    console.log(`account ${name} disabled`);
  },

  // In both places: how to build it (openbench.engine, sent to workers) and
  // what a host needs for it (allot.engine, checked by assign_workload).
  async 'add-engine'([name, ...rest]) {
    if (!name || !WORD.test(name)) throw new UsageError('usage: add-engine NAME --compilers LIST [...]');
    const o = options(rest, ['compilers', 'path', 'cpuflags', 'systems', 'nps', 'repo'], ['private']);
    if (o.repo !== undefined && !/^(https?|git):\/\/[^\s]{1,2000}$/.test(o.repo)) {
      throw new UsageError(`--repo must be the URL of the engine's repository (https://github.com/OWNER/REPO), not ${JSON.stringify(o.repo)}`);
    }
    const compilers = list(o.compilers);
    if (compilers.length === 0 || !compilers.every((c) => /^[^\s<>=]+(>=[0-9]+(\.[0-9]+)*)?$/.test(c))) {
      throw new UsageError('--compilers: a list such as "gcc>=10,clang>=14" (a name, optionally >= a version)');
    }
    const cpuflags = list(o.cpuflags);
    const systems = o.systems === undefined ? ['Linux'] : list(o.systems);
    if (![...cpuflags, ...systems].every((x) => WORD.test(x)) || systems.length === 0) {
      throw new UsageError('--cpuflags and --systems: lists of names such as "POPCNT,BMI2" and "Linux,Windows"');
    }
    const nps = number(o.nps ?? '1000000', 'nps', 1, 1e12, { integer: true });
    const private_ = o.private === true;
    await withDb((db) => transaction(db, async () => {
      await db.query(
        `INSERT INTO openbench.engine (name, build_path, compilers, cpuflags, systems, private, scale_nps, repository)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (name) DO UPDATE SET build_path = excluded.build_path, compilers = excluded.compilers,
             cpuflags = excluded.cpuflags, systems = excluded.systems, private = excluded.private,
             scale_nps = excluded.scale_nps, repository = excluded.repository`,
        [name, o.path ?? '', compilers, cpuflags, systems, private_, nps, o.repo ?? null]);
      await db.query(
        `INSERT INTO allot.engine (name, systems, cpu_flags, compilers, private) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO UPDATE SET systems = excluded.systems, cpu_flags = excluded.cpu_flags,
             compilers = excluded.compilers, compiler = NULL, compiler_min = NULL, private = excluded.private`,
        [name, systems, cpuflags, private_ ? null : compilers, private_]);
    }));
    console.log(`engine ${name}: ${private_ ? 'private, ' : ''}built in "${o.path ?? ''}" with ${compilers.join(' or ')}` +
                `${cpuflags.length ? `, needs ${cpuflags.join(' ')}` : ''}, on ${systems.join(' ')}`);
  },

  async 'add-book'([name, ...rest]) {
    if (!name || !/^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}\.(epd|pgn)$/.test(name)) {
      throw new UsageError('usage: add-book NAME.epd|NAME.pgn --source URL (--sha256 HEX | --file PATH)');
    }
    const o = options(rest, ['source', 'sha256', 'file']);
    const source = need(o, 'source', URL_PATTERN, 'an http(s) URL of a zip holding the book');
    if ((o.sha256 === undefined) === (o.file === undefined)) throw new UsageError('give one of --sha256 and --file');
    const sha256 = o.file !== undefined
      ? crypto.createHash('sha256').update(readOptionFile(o.file, 'file')).digest('hex')
      : need(o, 'sha256', /^[0-9a-fA-F]{64}$/, 'a sha256 in hex').toLowerCase();
    await withDb((db) => db.query(
      `INSERT INTO openbench.book (name, sha256, source) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, source = excluded.source`, [name, sha256, source]));
    console.log(`book ${name}: sha256 ${sha256}, from ${source}`);
  },

  async 'add-network'(args) {
    const o = options(args, ['engine', 'name', 'file']);
    const engine = need(o, 'engine', WORD, 'an engine name');
    const name = need(o, 'name', /^[A-Za-z0-9_.-]{1,64}$/, 'a name of letters, digits and "_.-"');
    const bytes = readOptionFile(o.file, 'file');
    if (bytes.length === 0) throw new UsageError(`${o.file} is empty`);
    const sha = crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 8).toUpperCase();
    const target = networkPath(dataDir, engine, sha);
    await withDb((db) => transaction(db, async () => {
      const { rows: engines } = await db.query('SELECT 1 FROM openbench.engine WHERE name = $1 FOR SHARE', [engine]);
      if (engines.length === 0) throw new UsageError(`no engine ${JSON.stringify(engine)} (add-engine first)`);
      // A network is known by its name and by its sha, each once per engine.
      const { rows: [had] } = await db.query(
        'SELECT name, sha FROM openbench.network WHERE engine = $1 AND (name = $2 OR sha = $3) ORDER BY name <> $2 LIMIT 1',
        [engine, name, sha]);
      if (had) {
        throw new Refused(had.name === name
          ? `engine ${engine} already has a network named ${JSON.stringify(name)} (${had.sha}): give this one another --name`
          : `engine ${engine} already has this file, as network ${JSON.stringify(had.name)} (${sha})`);
      }
      await db.query('INSERT INTO openbench.network (engine, name, sha, bytes) VALUES ($1, $2, $3, $4)',
        [engine, name, sha, bytes.length]);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      try {
        fs.writeFileSync(target, bytes, { mode: 0o644, flag: 'wx' });
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
        throw new Refused(`${target} already exists, but no network in the database is that file: move it away first`);
      }
    }));
    console.log(`network ${name} of ${engine}: ${sha}, ${bytes.length} bytes, in ${target}`);
  },

  // A test: an allot assignment workload, and the front end's row of the
  // same id with everything a worker needs to play it.
  async 'create-test'(args) {
    const o = options(args, TEST_OPTIONS, ['trinomial']);
    const engine = need(o, 'engine', WORD, 'the name of an engine (add-engine)');
    const baseEngine = o['base-engine'] ?? engine;
    const workloadSize = number(o['workload-size'] ?? '32', 'workload-size', 1, 1024, { integer: true });
    const tune = tuneOptions(o, workloadSize);
    const sha = /^[0-9a-fA-F]{40}$/;
    const side = (which, tc) => {
      const s = {
        source: need(o, `${which}-source`, URL_PATTERN, 'an http(s) URL of a zip of the source'),
        sha: need(o, `${which}-sha`, sha, 'a 40-digit commit sha').toLowerCase(),
        bench: number(o[`${which}-bench`], `${which}-bench`, 1, 1e15, { integer: true }),
        options: checked(spec.engineOptions, o[`${which}-options`] ?? o.options ?? 'Threads=1 Hash=16',
          o[`${which}-options`] ? `--${which}-options` : '--options'),
        tc,
      };
      s.name = o[`${which}-name`] ?? s.sha.slice(0, 8);
      return s;
    };
    const dev = side('dev', checked(spec.timeControl, o.tc, '--tc'));
    const base = tune ? dev
      : side('base', o['base-tc'] === undefined ? dev.tc : checked(spec.timeControl, o['base-tc'], '--base-tc'));
    if (!o.book) throw new UsageError('--book is required (add-book first)');
    if (!tune && (o.sprt === undefined) === (o.games === undefined)) {
      throw new UsageError('give one of --sprt ELO0,ELO1 and --games N (or --spsa FILE for a tune)');
    }
    if (o.trinomial && o.sprt === undefined) throw new UsageError('--trinomial is for an SPRT');
    const sprt = o.sprt === undefined ? null
      : checked(spec.sprt, o.sprt, o.alpha ?? '0.05', o.beta ?? '0.05', { bounds: '--sprt', alpha: '--alpha', beta: '--beta' });
    const maxGames = o.games === undefined ? null : number(o.games, 'games', 2, 1e9, { integer: true });
    const throughput = number(o.throughput ?? '1000', 'throughput', 1, 1e9, { integer: true });
    const priority = number(o.priority ?? '0', 'priority', -1000, 1000, { integer: true });
    const t = {
      type: tune ? 'SPSA' : sprt ? 'SPRT' : 'GAMES',
      dev_engine: engine, base_engine: baseEngine,
      book_name: o.book,
      upload_pgns: checked(spec.oneOf, o['upload-pgns'] ?? 'COMPACT', ['FALSE', 'COMPACT', 'VERBOSE'], '--upload-pgns'),
      scale_method: checked(spec.oneOf, o['scale-method'] ?? 'BOTH', ['DEV', 'BASE', 'BOTH'], '--scale-method'),
      syzygy_adj: checked(spec.syzygy, o['syzygy-adj'], '--syzygy-adj'),
      syzygy_wdl: checked(spec.syzygy, o['syzygy-wdl'], '--syzygy-wdl'),
      win_adj: checked(spec.adjudication, o['win-adj'], '--win-adj'),
      draw_adj: checked(spec.adjudication, o['draw-adj'], '--draw-adj'),
      workload_size: workloadSize,
      use_penta: o.trinomial !== true,
      elo_lower: sprt?.lower ?? null, elo_upper: sprt?.upper ?? null, alpha: sprt?.alpha ?? null, beta: sprt?.beta ?? null,
      lower_llr: sprt?.lowerLlr ?? null, upper_llr: sprt?.upperLlr ?? null, max_games: maxGames,
    };
    for (const [which, s] of [['dev', dev], ['base', base]]) {
      for (const k of ['name', 'source', 'sha', 'bench', 'options']) t[`${which}_${k}`] = s[k];
      t[`${which}_time_control`] = s.tc;
    }

    const id = await withDb((db) => transaction(db, async () => {
      const { rows: engines } = await db.query(
        'SELECT name, scale_nps FROM openbench.engine WHERE name = ANY ($1::text[])', [[engine, baseEngine]]);
      for (const e of [engine, baseEngine]) {
        if (!engines.some((r) => r.name === e)) throw new UsageError(`no engine ${JSON.stringify(e)} (add-engine first)`);
      }
      const { rows: books } = await db.query('SELECT 1 FROM openbench.book WHERE name = $1', [o.book]);
      if (books.length === 0) throw new UsageError(`no book ${JSON.stringify(o.book)} (add-book first)`);
      const devNet = await network(db, engine, o['dev-network']);
      const baseNet = await network(db, baseEngine, o['base-network']);
      Object.assign(t, { dev_network: devNet.sha, dev_netname: devNet.name, base_network: baseNet.sha, base_netname: baseNet.name });
      t.scale_nps = o['scale-nps'] !== undefined
        ? number(o['scale-nps'], 'scale-nps', 1, 1e12, { integer: true })
        : Number(engines.find((r) => r.name === engine).scale_nps);
      const name = o.name ?? (tune ? `${engine} ${dev.name} tune` : `${engine} ${dev.name} vs ${base.name}`);
      const { rows: [w] } = await db.query('SELECT openbench.create_test($1::jsonb, $2::jsonb, $3, $4, $5, true) AS id',
        [JSON.stringify(t), tune === null ? null : JSON.stringify(tune), name, priority, throughput])
        .catch((err) => {
          if (!(err instanceof DatabaseError && err.code === '23505' && err.constraint === 'workload_pkey')) throw err;
          // Workloads inserted with ids of their own leave the identity
          // behind them; the id it gave is taken.
          throw new Refused(`allot.workload's next id is taken (${err.detail}): workloads were inserted with ids ` +
                            'of their own; the owner of allot.workload can move it past them: ALTER TABLE allot.workload ' +
                            'ALTER COLUMN id RESTART WITH (one more than the largest id)');
        });
      return w.id;
    }));
    console.log(`test ${id}`);
  },

  async 'stop-test'([id, ...rest]) {
    if (!/^[1-9][0-9]{0,17}$/.test(id ?? '') || rest.length) throw new UsageError('usage: stop-test ID');
    const stopped = await withDb((db) => transaction(db, async () => {
      const { rows } = await db.query('SELECT finished_at IS NULL AS running FROM openbench.test WHERE id = $1 FOR UPDATE', [id]);
      if (rows.length === 0) throw new Refused(`no test ${id} (node admin.js tests lists them)`);
      await db.query(
        `UPDATE openbench.test SET finished_at = now(), finished_by = 'operator' WHERE id = $1 AND finished_at IS NULL`, [id]);
      await db.query(`UPDATE allot.workload SET state = 'finished' WHERE id = $1 AND state <> 'finished'`, [id]);
      return rows[0].running;
    }));
    console.log(stopped ? `test ${id} stopped; its workers are told to stop at their next report` : `test ${id} had already stopped`);
  },

  async tests(args) {
    options(args, []);
    const { rows } = await withDb((db) => db.query(
      `SELECT t.id, w.name, t.type, w.state, w.throughput, w.priority, t.games, t.losses, t.draws, t.wins,
              t.ll, t.ld, t.dd, t.dw, t.ww, t.llr, t.lower_llr, t.upper_llr, t.max_games, t.finished_by, t.passed,
              2 * r.iterations * r.pairs_per AS tune_games
         FROM openbench.test t JOIN allot.workload w ON w.id = t.id
         LEFT JOIN openbench.spsa_run r ON r.test_id = t.id ORDER BY t.id`));
    for (const t of rows) {
      // A GAMES test stops at the report that reaches its number, and a
      // report holds what the worker played since its last: up to a whole
      // workload (2 x runner-count x rounds-per-runner games).  So a test
      // may have played more games than it asked for, and says both.
      const rule = t.type === 'SPRT'
        ? `LLR ${t.llr.toFixed(2)} in [${t.lower_llr.toFixed(2)}, ${t.upper_llr.toFixed(2)}]`
        : t.type === 'SPSA' ? `${t.games} games played, ${t.tune_games} for its iterations`
          : `${t.games} games played, ${t.max_games} asked for`;
      const verdictText = t.passed === null ? 'stopped' : t.passed ? 'passed' : 'failed';
      const state = t.finished_by ? `${verdictText} (${t.finished_by})` : t.state;
      console.log(`${t.id}\t${t.name}\t${t.type}\tthroughput ${t.throughput}\tpriority ${t.priority}\t` +
                  `${state}\tL-D-W ${t.losses}-${t.draws}-${t.wins}\tpairs ${t.ll} ${t.ld} ${t.dd} ${t.dw} ${t.ww}\t${rule}`);
    }
  },

  // Hosts of machines not seen for a while leave allot; the machines and
  // their results stay, as history.  A worker still running with such a
  // machine gets "Bad Client Version: Bad Machine Id" at its next call.
  async 'prune-hosts'(args) {
    const o = options(args, ['days']);
    const days = number(o.days ?? '7', 'days', 0, 36500);
    const { rowCount } = await withDb((db) => db.query(
      `DELETE FROM allot.host h USING openbench.machine m
        WHERE h.id = m.host_id AND h.registered_at IS NOT NULL
          AND m.last_seen < now() - make_interval(secs => $1::double precision * 86400)`, [days]));
    console.log(`${rowCount} host(s) of machines not seen for ${days} days removed from allot`);
  },
};

run(commands, 'usage: node admin.js add-user | set-role | enable-user | disable-user | add-engine | add-book | add-network | create-test | stop-test | tests | prune-hosts');
