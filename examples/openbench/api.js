'use strict';
// The api/ calls scripts use, with OpenBench's paths, JSON fields and
// error strings (its answers to mistakes are 200 with {"error": ...}):
//
//   GET api/config/           {"engines": [names], "books": {name: {source, sha}}}
//   GET api/config/ENGINE/    that engine's build settings, or its error
//   GET api/pgns/ID/          ID.pgn.tar: the test's PGNs, one .pgn.bz2 per
//                             workload, once the test has finished
//
// Anyone may call them, as on an OpenBench server that does not require a
// login to view.

const fs = require('node:fs');
const path = require('node:path');

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

  return { config, pgns };
}

module.exports = { makeApi, ApiError, tarHeader };
