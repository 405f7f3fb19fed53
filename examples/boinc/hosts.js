'use strict';
// The host a scheduler request comes from: registered in allot on first
// contact (allot.register_host), and again whenever it states other figures
// (name, platform, CPU flags, CPUs, FLOPS, coprocessors) than it last did;
// what the client says of itself is kept on every contact.
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
//   - else a new host, within the account's limits: at most
//     limits.maxHostsPerAccount hosts, and at most limits.newHostsPerDay
//     made in the last 24 hours (a host is free to make, and each costs
//     allot a row and a share of the farm's estimates).  A request past
//     either gets no host (HostLimit: the scheduler tells the volunteer why
//     and when to try again).  The account's row is locked while its new
//     host is made, so that two requests at once cannot both pass.
//
// Every host belongs to its account in allot too (register_host's owner,
// "boinc:<account id>"): allot counts an account as one voice however many
// hosts it has, never sends it two replicas of one job, and refuses a host
// beyond allot.owner_max_hosts per account, or beyond
// allot.owner_max_new_hosts_per_day registered in a day (53400, which the
// scheduler tells the volunteer).  The front end's limits are its own,
// per account and set by the operator in its environment; allot's apply
// beside them, to every front end alike.

const { DatabaseError } = require('pg');
const { MAX_INT32 } = require('./request');

// The account's key as allot's owner of its hosts.
function ownerKey(acct) {
  return `boinc:${acct.id}`;
}

// A new host the account may not have now: message for the volunteer, and
// seconds until it may (retrySecs).
class HostLimit extends Error {
  constructor(message, retrySecs) {
    super(message);
    this.retrySecs = retrySecs;
  }
}

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

function makeHosts(db, { log, limits }) {
  // Update host hostId of the account from the request, in one statement
  // (boinc.contact): allot.register_host only when the host states other
  // figures than it last did.  Null when it is not the account's, or allot
  // no longer has it (the operator deleted it).
  async function update(acct, hostId, args, compare) {
    const owner = ownerKey(acct);
    try {
      const { rows } = await db.query({
        name: 'boinc-contact',
        text: 'SELECT created, registered, open, current FROM boinc.contact($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11)',
        values: [hostId, acct.id, JSON.stringify([...args, owner]), ...args, compare, owner],
      });
      if (rows.length === 0) return null;
      const sides = compare ? { open: rows[0].open, current: rows[0].current } : null;
      return { hostId, created: false, createdAt: Number(rows[0].created), registered: rows[0].registered, sides };
    } catch (err) {
      if (err instanceof DatabaseError && (err.code === 'P0002' || err.code === '42501')) {
        log(`[HOST#${hostId}] ${err.message}; registering the client as a new host`);
        return null;
      }
      throw err;
    }
  }

  // What the client says of itself, and that it asked (boinc.note), when
  // no boinc.send_work did it.
  async function note(hostId, details) {
    await db.query({ name: 'boinc-note', text: 'SELECT boinc.note($1, $2::text[])', values: [hostId, details] });
  }

  // What the host stated is to be registered again at its next request
  // (allot refused a request of it: the operator may have deleted it).
  async function forget(hostId) {
    await db.query({ name: 'boinc-forget', text: 'UPDATE boinc.host SET stated = NULL WHERE host_id = $1', values: [hostId] });
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

  // Whether the account may have one more host now, its row locked until
  // the caller's transaction ends; else HostLimit.  0 turns a limit off.
  async function withinLimits(c, acct) {
    const { maxHostsPerAccount: most, newHostsPerDay: perDay } = limits;
    if (most === 0 && perDay === 0) return;
    const { rows: [n] } = await c.query(
      `SELECT (SELECT count(*) FROM boinc.host WHERE account_id = a.id) AS hosts,
              (SELECT count(*) FROM boinc.host WHERE account_id = a.id AND created_at > now() - interval '1 day') AS today,
              (SELECT ceil(extract(epoch FROM min(created_at) + interval '1 day' - now()))
                 FROM boinc.host WHERE account_id = a.id AND created_at > now() - interval '1 day') AS wait
         FROM boinc.account a WHERE a.id = $1 FOR UPDATE OF a`, [acct.id]);
    if (most > 0 && Number(n.hosts) >= most) {
      throw new HostLimit(`This account has ${n.hosts} computers, the most it may have (${most}); ` +
                          'ask the project to allow more', 3600);
    }
    if (perDay > 0 && Number(n.today) >= perDay) {
      throw new HostLimit(`This account added ${n.today} computers in the last 24 hours, the most it may (${perDay})`,
                          Math.max(60, Number(n.wait)));
    }
  }

  // Returns {hostId, created, createdAt, reattached, sides, details}: sides,
  // when the client sent its list (<other_results>), are what
  // results.reconcile compares it with, read in the same statement: {open,
  // current}; details, what boinc.note is to note of a known host.
  async function identify(acct, r) {
    const h = r.host;
    const flops = h.fpops >= 1 ? h.fpops : null;   // 0: the client does not know
    const args = [h.domainName, r.platform, h.cpuFlags, h.ncpus, flops, JSON.stringify(allotCoprocs(r.coprocs))];
    const details = [h.hostCpid, h.domainName, h.osName, h.osVersion, r.platform, h.ncpus, flops, r.rpcSeqno];
    const known = r.hostid > 0 ? r.hostid : await reattached(acct, r);
    if (known !== null) {
      const found = await update(acct, known, args, r.held.listed);
      if (found) return { ...found, reattached: r.hostid === 0, details: details.map((d) => (d === null ? null : String(d))) };
    }
    return db.transaction(async (c) => {
      await withinLimits(c, acct);
      const owner = ownerKey(acct);
      const { rows } = await c.query('SELECT allot.register_host(NULL, $1, $2, $3, $4, $5, $6::jsonb, $7) AS id',
                                     [...args, owner]);
      const id = rows[0].id;
      if (Number(id) > MAX_INT32) throw new Error(`host id ${id} does not fit BOINC's 32-bit host ids`);
      await c.query(
        `INSERT INTO boinc.host (host_id, account_id, host_cpid, domain_name, os_name, os_version, platform,
                                 p_ncpus, p_fpops, rpc_seqno, last_rpc_at, stated)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), $11)`, [id, acct.id, ...details, JSON.stringify([...args, owner])]);
      // A new host has no results, and allot nothing in progress on it.
      return { hostId: Number(id), created: true, createdAt: Math.floor(Date.now() / 1000), reattached: false,
               sides: { open: [], current: [] }, details: null };
    });
  }

  return { identify, note, forget };
}

module.exports = { makeHosts, HostLimit };
