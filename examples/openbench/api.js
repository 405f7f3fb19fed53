'use strict';
// The api/ calls scripts use, with OpenBench's paths, JSON fields and
// error strings (its answers to mistakes are 200 with {"error": ...}):
//
//   GET api/config/           {"engines": [names], "books": {name: {source, sha}}}
//   GET api/config/ENGINE/    that engine's build settings, or its error
//   GET api/pgns/ID/          ID.pgn.tar: the test's PGNs, one .pgn.bz2 per
//                             workload, once the test has finished
//   GET api/workload/ID/results/   {"results": [...]}: each workload that
//                             played (or whose machine is on it now): the
//                             machine, its owner, games, pentanomial counts,
//                             time losses, crashes, active
//   GET api/workload/ID/summary/   {"summary": {user, cpu_name, isa_name}}:
//                             pentanomial totals grouped three ways, each
//                             with its Elo +- and share of the pairs
//   GET api/workload/ID/info/      {"info": {...}}: the test's settings and
//                             state with OpenBench's Test field names
//   GET api/networks/ENGINE/  {"default": null, "networks": [...]}: the
//                             engine's networks (sha256, name, engine, created)
//   GET api/spsa/ID/inputs|outputs|digest/   a tune's parameters as given,
//                             their values now, and a CSV of each one's
//                             value, bounds, c and r (text/plain)
//   GET api/spsa/ID/perturbation/  {"perturbation": {...}}: one drawn as
//                             for a workload of 4 match runners (nothing kept)
//
// Anyone may call them, as on an OpenBench server that does not require a
// login to view.

const fs = require('node:fs');
const path = require('node:path');
const stats = require('./stats');
const spsaMath = require('./spsa');

const ID = /^[1-9][0-9]{0,17}$/;
const ENGINE = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$/;

// The time in OpenBench's str(datetime) form: "2026-11-28 17:38:23.123+00:00".
const pyTime = (d) => (d ? `${d.toISOString().replace('T', ' ').replace('Z', '')}+00:00` : null);

// A test's row with OpenBench's Test field names (its model_to_dict).
function testInfo(t) {
  const engine = (which) => ({
    name: t[`${which}_name`], source: t[`${which}_source`], sha: t[`${which}_sha`], bench: Number(t[`${which}_bench`]),
  });
  const side = (which) => Object.fromEntries(['repo', 'engine', 'options', 'network', 'netname', 'time_control']
    .map((k) => [`${which}_${k}`, t[`${which}_${k}`] ?? '']));
  const finished = t.finished_at !== null;
  return {
    id: Number(t.id), author: t.author ?? '', upload_pgns: t.upload_pgns, book_name: t.book_name,
    book_index: Number(t.book_index), ...side('dev'), ...side('base'),
    workload_size: t.workload_size, priority: t.priority, throughput: Number(t.throughput),
    syzygy_wdl: t.syzygy_wdl, syzygy_adj: t.syzygy_adj, win_adj: t.win_adj, draw_adj: t.draw_adj,
    test_mode: t.type, elolower: t.elo_lower ?? 0, eloupper: t.elo_upper ?? 0, alpha: t.alpha ?? 0, beta: t.beta ?? 0,
    lowerllr: t.lower_llr ?? 0, currentllr: t.llr ?? 0, upperllr: t.upper_llr ?? 0, max_games: Number(t.max_games ?? 0),
    games: Number(t.games), use_tri: !t.use_penta, use_penta: t.use_penta,
    passed: t.passed === true, failed: t.passed === false, finished, deleted: t.deleted, approved: t.approved,
    awaiting: !t.approved && !finished, error: t.finished_by === 'bench',
    dev: engine('dev'), base: engine('base'),
    tri: [t.losses, t.draws, t.wins].map(Number), penta: [t.ll, t.ld, t.dd, t.dw, t.ww].map(Number),
    creation: pyTime(t.created_at), updated: pyTime(t.finished_at ?? t.created_at),
  };
}

// An OpenBench API refusal: {"error": message} with status 200.
class ApiError extends Error {}

// A ustar header for a file of `size` bytes named `name` (ASCII, < 100).
function tarHeader(name, size, mtime) {
  const h = Buffer.alloc(512, 0);
  const put = (text, offset, length) => h.write(text, offset, length, 'latin1');
  const octal = (n, length) => n.toString(8).padStart(length - 1, '0');
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(Math.floor(mtime / 1000), 12), 136, 12);
  put('        ', 148, 8);   // the checksum counts its own field as spaces
  put('0', 156, 1);
  put('ustar\u000000', 257, 8);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${octal(sum, 7)}\u0000 `, 148, 8);
  return h;
}

function makeApi(db, { dataDir }) {
  async function config(engine) {
    if (engine === undefined) {
      const { rows: engines } = await db.query('SELECT name FROM openbench.engine ORDER BY name');
      const { rows: books } = await db.query('SELECT name, source, sha256 FROM openbench.book ORDER BY name');
      return {
        engines: engines.map((e) => e.name),
        books: Object.fromEntries(books.map((b) => [b.name, { source: b.source, sha: b.sha256 }])),
      };
    }
    const { rows } = await db.query(
      'SELECT name, build_path, compilers, cpuflags, systems, private, scale_nps FROM openbench.engine WHERE name = $1', [engine]);
    if (rows.length === 0) throw new ApiError('Engine not found. Check /api/config/ for a full list');
    const e = rows[0];
    return {
      private: e.private, nps: Number(e.scale_nps),
      build: { path: e.build_path, compilers: e.compilers, cpuflags: e.cpuflags, systems: e.systems },
    };
  }

  // Streams the tar to res; returns a note for the log.
  async function pgns(res, idText) {
    if (!ID.test(idText)) throw new ApiError('Requested Workload Id does not exist');
    const { rows: tests } = await db.query('SELECT finished_at FROM openbench.test WHERE id = $1', [idText]);
    if (tests.length === 0) throw new ApiError('Requested Workload Id does not exist');
    const { rows: files } = await db.query(
      'SELECT file_name, bytes FROM openbench.pgn WHERE test_id = $1 ORDER BY result_id', [idText]);
    if (files.length === 0) throw new ApiError(`Unable to find PGN for Workload #${idText}`);
    if (tests[0].finished_at === null) throw new ApiError('PGNs cannot be downloaded while the Workload is active');
    // read them all before answering: a file gone (or changed) is an error
    // the script can be told, not a truncated archive
    const parts = [];
    for (const f of files) {
      const data = await fs.promises.readFile(path.join(dataDir, 'pgns', f.file_name)).catch(() => null);
      if (data === null || data.length !== Number(f.bytes)) throw new ApiError(`Unable to find PGN for Workload #${idText}`);
      parts.push(tarHeader(f.file_name, data.length, Date.now()), data, Buffer.alloc((512 - (data.length % 512)) % 512));
    }
    parts.push(Buffer.alloc(1024));
    const body = Buffer.concat(parts);
    res.writeHead(200, {
      'Content-Type': 'application/octet-stream', 'Content-Length': body.length, 'Cache-Control': 'no-store',
      'Content-Disposition': `attachment; filename=${idText}.pgn.tar`,
    });
    res.end(body);
    return `${files.length} PGNs`;
  }

  async function workload(idText, query) {
    if (!ID.test(idText)) throw new ApiError('Requested Workload Id does not exist');
    const { rows: tests } = await db.query(
      `SELECT t.*, w.priority, w.throughput, a.name AS author FROM openbench.test t
         JOIN openbench.test_workload w ON w.id = t.id LEFT JOIN openbench.account a ON a.id = t.author_id
        WHERE t.id = $1`, [idText]);
    if (tests.length === 0) throw new ApiError('Requested Workload Id does not exist');
    if (query === 'info') return { info: testInfo(tests[0]) };
    if (query === 'results') {
      const { rows } = await db.query(
        `SELECT r.host_id, a.name, r.games, r.ll, r.ld, r.dd, r.dw, r.ww, r.timelosses, r.crashes,
                m.last_seen > now() - interval '1 minute'
                AND r.id = (SELECT max(x.id) FROM openbench.result x WHERE x.host_id = r.host_id) AS active
           FROM openbench.result r JOIN openbench.machine m ON m.host_id = r.host_id
           JOIN openbench.account a ON a.id = m.account_id
          WHERE r.test_id = $1 ORDER BY r.id`, [idText]);
      return {
        results: rows.filter((r) => Number(r.games) > 0 || r.active).map((r) => ({
          machine__id: Number(r.host_id), machine__user__username: r.name, games: Number(r.games),
          LL: Number(r.ll), LD: Number(r.ld), DD: Number(r.dd), DW: Number(r.dw), WW: Number(r.ww),
          timeloss: Number(r.timelosses), crashes: Number(r.crashes), active: r.active,
        })),
      };
    }
    if (query === 'summary') {
      const { rows } = await db.query(
        `SELECT a.name, m.info ->> 'cpu_name' AS cpu_name, m.info ->> 'isa_name' AS isa_name, r.ll, r.ld, r.dd, r.dw, r.ww
           FROM openbench.result r JOIN openbench.machine m ON m.host_id = r.host_id
           JOIN openbench.account a ON a.id = m.account_id WHERE r.test_id = $1`, [idText]);
      const group = (key) => {
        const totals = new Map();
        for (const r of rows) {
          const k = r[key] || 'Unknown';
          const t = totals.get(k) ?? [0, 0, 0, 0, 0];
          ['ll', 'ld', 'dd', 'dw', 'ww'].forEach((c, i) => { t[i] += Number(r[c]); });
          totals.set(k, t);
        }
        const all = [...totals.values()].reduce((s, t) => s + t.reduce((a, b) => a + b, 0), 0);
        return [...totals].map(([k, t]) => {
          const pairs = t.reduce((a, b) => a + b, 0);
          const [lower, elo, upper] = stats.elo(t);
          return {
            key: k, penta: `(${t.join(', ')})`, elo: `${elo.toFixed(2)} \u00b1 ${((upper - lower) / 2).toFixed(2)}`,
            pairs, percent: (all ? (100 * pairs) / all : 0).toFixed(2),
          };
        }).sort((a, b) => b.pairs - a.pairs);
      };
      return { summary: { user: group('name'), cpu_name: group('cpu_name'), isa_name: group('isa_name') } };
    }
    throw new ApiError('Valid /query/ endpoints are: [ results, info, summary ]');
  }

  async function networks(engine) {
    const { rows: engines } = ENGINE.test(engine)
      ? await db.query('SELECT 1 FROM openbench.engine WHERE name = $1', [engine]) : { rows: [] };
    if (engines.length === 0) throw new ApiError('Engine not found. Check /api/config/ for a full list');
    const { rows } = await db.query(
      'SELECT engine, name, sha, created_at FROM openbench.network WHERE engine = $1 ORDER BY created_at, sha', [engine]);
    return {
      default: null,
      networks: rows.map((n) => ({ sha256: n.sha, name: n.name, engine: n.engine, created: pyTime(n.created_at) })),
    };
  }

  // A tune's description (text) or a perturbation (JSON).
  async function spsa(idText, query) {
    if (!ID.test(idText)) throw new ApiError('Requested Workload Id does not exist');
    const { rows: tests } = await db.query('SELECT type, games FROM openbench.test WHERE id = $1', [idText]);
    if (tests.length === 0) throw new ApiError('Requested Workload Id does not exist');
    if (tests[0].type !== 'SPSA') throw new ApiError('Requested Workload is not an SPSA tune');
    const { rows: [runRow] } = await db.query('SELECT * FROM openbench.spsa_run WHERE test_id = $1', [idText]);
    const { rows } = await db.query('SELECT * FROM openbench.spsa_parameter WHERE test_id = $1 ORDER BY index', [idText]);
    const run = spsaMath.runFromRow(runRow);
    const params = rows.map(spsaMath.fromRow);
    const games = Number(tests[0].games);
    if (query === 'inputs') return spsaMath.inputsText(params);
    if (query === 'outputs') return spsaMath.outputsText(params);
    if (query === 'digest') return spsaMath.digestText(run, params, games);
    if (query === 'perturbation') return { perturbation: spsaMath.perturbation(run, params, games, 4) };
    throw new ApiError('Valid /query/ endpoints are: [ inputs, outputs, digest, perturbation ]');
  }

  return { config, pgns, workload, networks, spsa };
}

module.exports = { makeApi, ApiError, tarHeader };
