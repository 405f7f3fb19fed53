'use strict';
// Credit as allot grants it (allot.host_credit: each host's total, and
// BOINC's recent average), for the pages and the stats exports.

const CHUNK = 10000;   // host ids per call, host_credit's limit

// Map of host id (text) to {total, expavg}; a host without credit is left out.
async function hostCredit(db, hostIds) {
  const out = new Map();
  for (let i = 0; i < hostIds.length; i += CHUNK) {
    const { rows } = await db.query(
      'SELECT host_id, total_credit, expavg_credit FROM allot.host_credit($1::bigint[])',
      [hostIds.slice(i, i + CHUNK).map(String)]);
    for (const r of rows) out.set(String(r.host_id), { total: r.total_credit, expavg: r.expavg_credit });
  }
  return out;
}

// The sum over hosts: {total, expavg}.
function sum(credit, hostIds) {
  const out = { total: 0, expavg: 0 };
  for (const id of hostIds) {
    const c = credit.get(String(id));
    if (c) {
      out.total += c.total;
      out.expavg += c.expavg;
    }
  }
  return out;
}

module.exports = { hostCredit, sum };
