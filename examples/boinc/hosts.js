'use strict';
// The host a scheduler request comes from: registered in allot on first
// contact (allot.register_host), updated on every later one.
//
// Which host it is:
//   - the <hostid> the client names, when it is one of this account's;
//   - with <hostid> 0 (a client that detached and attached again, or reset
//     its state), the account's host with the same <host_cpid>, platform
//     and CPU count, last contacted most recently: the volunteer's machine
//     keeps its host, its credit and its history (BOINC's
//     find_host_by_cpid).  Only the account's own hosts are looked at: a
//     host_cpid is no secret, and another account naming it gets a host of
//     its own.  A client run with <allow_multiple_clients> is never taken
//     for another;
//   - else a new host.

const { DatabaseError } = require('pg');
const { MAX_INT32 } = require('./request');

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

function makeHosts(db, { log }) {
  // Update host hostId of the account from the request; null when it is not
  // the account's, or allot no longer has it (the operator deleted it).
  async function update(acct, hostId, args, details) {
    return db.transaction(async (c) => {
      const { rows } = await c.query(
        'SELECT extract(epoch FROM created_at)::bigint AS created FROM boinc.host WHERE host_id = $1 AND account_id = $2 FOR UPDATE',
        [hostId, acct.id]);
      if (rows.length === 0) return null;
      await c.query('SELECT allot.register_host($1, $2, $3, $4, $5, $6, $7::jsonb)', [hostId, ...args]);
      await c.query(
        `UPDATE boinc.host SET host_cpid = $2, domain_name = $3, os_name = $4, os_version = $5, platform = $6,
                p_ncpus = $7, p_fpops = $8, rpc_seqno = $9, last_rpc_at = now()
          WHERE host_id = $1`, [hostId, ...details]);
      return { hostId, created: false, createdAt: Number(rows[0].created) };
    }).catch((err) => {
      if (err instanceof DatabaseError && (err.code === 'P0002' || err.code === '42501')) {
        log(`[HOST#${hostId}] ${err.message}; registering the client as a new host`);
        return null;
      }
      throw err;
    });
  }

  // The account's host this client was before it attached again, or null.
  async function reattached(acct, r) {
    if (r.hostid !== 0 || r.allowMultipleClients || !r.host.hostCpid) return null;
    const { rows } = await db.query(
      `SELECT host_id FROM boinc.host
        WHERE account_id = $1 AND host_cpid = $2 AND platform = $3 AND p_ncpus = $4
        ORDER BY last_rpc_at DESC NULLS LAST, host_id DESC LIMIT 1`,
      [acct.id, r.host.hostCpid, r.platform, r.host.ncpus]);
    return rows[0] ? Number(rows[0].host_id) : null;
  }

  // Returns {hostId, created, createdAt, reattached}.
  async function identify(acct, r) {
    const h = r.host;
    const flops = h.fpops >= 1 ? h.fpops : null;   // 0: the client does not know
    const args = [h.domainName, r.platform, h.cpuFlags, h.ncpus, flops, JSON.stringify(allotCoprocs(r.coprocs))];
    const details = [h.hostCpid, h.domainName, h.osName, h.osVersion, r.platform, h.ncpus, flops, r.rpcSeqno];
    const known = r.hostid > 0 ? r.hostid : await reattached(acct, r);
    if (known !== null) {
      const found = await update(acct, known, args, details);
      if (found) return { ...found, reattached: r.hostid === 0 };
    }
    return db.transaction(async (c) => {
      const { rows } = await c.query('SELECT allot.register_host(NULL, $1, $2, $3, $4, $5, $6::jsonb) AS id', args);
      const id = rows[0].id;
      if (Number(id) > MAX_INT32) throw new Error(`host id ${id} does not fit BOINC's 32-bit host ids`);
      await c.query(
        `INSERT INTO boinc.host (host_id, account_id, host_cpid, domain_name, os_name, os_version, platform,
                                 p_ncpus, p_fpops, rpc_seqno, last_rpc_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())`, [id, acct.id, ...details]);
      return { hostId: Number(id), created: true, createdAt: Math.floor(Date.now() / 1000), reattached: false };
    });
  }

  return { identify };
}

module.exports = { makeHosts };
