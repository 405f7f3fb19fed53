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
//
// Anyone may call them, as on an OpenBench server that does not require a
// login to view.

const fs = require('node:fs');
const path = require('node:path');
const stats = require('./stats');

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
    if (!/^[1-9][0-9]{0,17}$/.test(idText)) throw new ApiError('Requested Workload Id does not exist');
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
    if (!/^[1-9][0-9]{0,17}$/.test(idText)) throw new ApiError('Requested Workload Id does not exist');
    const { rows: tests } = await db.query('SELECT 1 FROM openbench.test WHERE id = $1', [idText]);
    if (tests.length === 0) throw new ApiError('Requested Workload Id does not exist');
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
    throw new ApiError('Valid /query/ endpoints are: [ results, summary ]');
  }

  return { config, pgns, workload };
}

module.exports = { makeApi, ApiError, tarHeader };
