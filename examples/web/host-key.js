'use strict';
// The operator's command for host keys (README.md, "Host keys").
//
//   node host-key.js issue HOST     a new key for HOST, printed once on stdout;
//                                   it replaces the host's old key at once
//   node host-key.js revoke HOST    the host's key stops working at once
//
// HOST is a host id or a host name (allot.host.name, when it names one host).
// It connects with the standard PG* variables as an operator: a member of
// allot_admin, or the owner of the database.  Only the key's scrypt hash is
// stored (web.host_key, setup.sql); nothing can show the key again.

const crypto = require('node:crypto');
const { Client } = require('pg');
const { SCRYPT, newKey, hashKey } = require('./auth');

function usage() {
  console.error('usage: node host-key.js issue|revoke HOST   (HOST: a host id or name)');
  process.exit(2);
}

// The id of the one host HOST names, or an error that says why not.
async function hostIdOf(db, host) {
  const byId = /^[1-9][0-9]{0,18}$/.test(host);
  const { rows } = await db.query(
    byId ? 'SELECT id::text FROM allot.host WHERE id = $1::bigint'
      : 'SELECT id::text FROM allot.host WHERE name = $1 ORDER BY id',
    [host]);
  if (rows.length === 0) throw new Error(`no host ${byId ? 'has id' : 'is named'} ${JSON.stringify(host)}`);
  if (rows.length > 1) {
    throw new Error(`${rows.length} hosts are named ${JSON.stringify(host)} (ids ${rows.map((r) => r.id).join(', ')}): give the id`);
  }
  return rows[0].id;
}

async function issue(db, hostId) {
  const key = newKey();
  const salt = crypto.randomBytes(SCRYPT.saltlen);
  const hash = await hashKey(key, salt);
  await db.query(
    `INSERT INTO web.host_key (host_id, salt, hash, scrypt_n, scrypt_r, scrypt_p)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (host_id) DO UPDATE
        SET salt = excluded.salt, hash = excluded.hash, scrypt_n = excluded.scrypt_n,
            scrypt_r = excluded.scrypt_r, scrypt_p = excluded.scrypt_p, issued_at = now()`,
    [hostId, salt, hash, SCRYPT.N, SCRYPT.r, SCRYPT.p]);
  process.stdout.write(`${key}\n`);
  console.error(`host ${hostId}: a new key, shown only this once (its old key, if any, no longer works)`);
}

async function revoke(db, hostId) {
  const { rowCount } = await db.query('DELETE FROM web.host_key WHERE host_id = $1', [hostId]);
  console.error(rowCount ? `host ${hostId}: key revoked` : `host ${hostId} had no key`);
}

async function main() {
  const [command, host] = process.argv.slice(2);
  const action = new Map([['issue', issue], ['revoke', revoke]]).get(command);
  if (action === undefined || host === undefined || process.argv.length > 4) usage();
  const db = new Client({ fallback_application_name: 'allot-web host-key' });
  await db.connect();
  try {
    await action(db, await hostIdOf(db, host));
  } finally {
    await db.end();
  }
}

main().catch((err) => {
  console.error(`host-key.js: ${err.message}`);
  process.exit(1);
});
