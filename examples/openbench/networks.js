'use strict';
// Networks: POST api/networks/ENGINE/SHA/ with an account's username and
// password gives the file, which the worker checks against the first 8 hex
// digits of its sha256.  The operator adds networks (admin.js add-network);
// they are kept in DATA_DIR/networks/ENGINE/SHA.

const fs = require('node:fs');
const path = require('node:path');
const { Refused } = require('./machines');

const ENGINE = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$/;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

function networkPath(dataDir, engine, sha) {
  if (!ENGINE.test(engine) || !/^[0-9A-F]{8}$/.test(sha)) throw new Error(`not a network: ${engine} ${sha}`);
  return path.join(dataDir, 'networks', engine, sha);
}

function makeNetworks(db, { dataDir, account }) {
  return {
    // Streams the network into res, and returns a note for the log.
    async download(res, engine, identifier, form) {
      try {
        await account(form);
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        // OpenBench answers a network download without a login in plain text
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' });
        res.end('Bad Credentials');
        return 'error: Bad Credentials';
      }
      const known = ENGINE.test(engine) && NAME.test(identifier);
      const { rows } = known ? await db.query(
        `SELECT engine, sha, bytes FROM openbench.network
          WHERE engine = $1 AND (sha = upper($2) OR name = $2) ORDER BY sha = upper($2) DESC LIMIT 1`,
        [engine, identifier]) : { rows: [] };
      if (rows.length === 0) {
        const body = Buffer.from(JSON.stringify({ error: 'No network found with matching Sha' }));
        res.writeHead(404, { 'Content-Type': 'application/json', 'Content-Length': body.length });
        res.end(body);
        return `error: no network ${identifier.slice(0, 40)} for ${engine.slice(0, 40)}`;
      }
      const n = rows[0];
      const file = networkPath(dataDir, n.engine, n.sha);
      const handle = await fs.promises.open(file, 'r');
      try {
        const { size } = await handle.stat();
        res.writeHead(200, {
          'Content-Type': 'application/octet-stream', 'Content-Length': size,
          'Content-Disposition': `attachment; filename=${n.sha}`, 'Cache-Control': 'no-store',
        });
        await new Promise((resolve, reject) => {
          const stream = handle.createReadStream({ autoClose: false });
          stream.on('error', reject);
          res.on('close', resolve);
          stream.pipe(res);
        });
      } finally {
        await handle.close();
      }
      return `network ${n.engine} ${n.sha}`;
    },
  };
}

module.exports = { makeNetworks, networkPath };
