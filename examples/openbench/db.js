'use strict';
// The front end's transactions.  Each worker call is one transaction with
// at most one allot call in it, beside the front end's own rows it
// concerns (docs/web-layer.md, "One call per transaction"), retried
// when PostgreSQL rolled it back whole (serialization failure, deadlock).
//
// Assignments and the explanation logged beside each must agree: the
// explanation is of the farm the assignment saw.  So a transaction that
// assigns holds the front end's assignment lock exclusively, and those
// that change what an assignment counts (heartbeats, releases) hold it
// shared: nothing the front end does moves between the two reads.  Both
// reads use the transaction's now(), so time does not move between them
// either.  The lock is a transaction-scoped advisory lock in a key space
// of the front end's own, taken first, before any of allot's locks.

const common = require('allot-common/database');

// pg_advisory_xact_lock's (int4, int4) key: "open" "bnch".
const ASSIGNMENT_LOCK = [1869636974, 1651401576];

// The front end's transactions (allot-common/database.js: retries, and
// Unavailable when no connection can be had), with the assignment lock.
function makeDb(pool, log) {
  const db = common.makeDb(pool, log);
  return {
    query: db.query,

    // fn(client) runs between BEGIN and COMMIT; any error rolls back.
    // lock: 'assign' (exclusive), 'count' (shared) or none.
    transaction: (fn, { lock = null } = {}) => db.transaction(async (client) => {
      if (lock === 'assign') await client.query('SELECT pg_advisory_xact_lock($1, $2)', ASSIGNMENT_LOCK);
      else if (lock === 'count') await client.query('SELECT pg_advisory_xact_lock_shared($1, $2)', ASSIGNMENT_LOCK);
      return fn(client);
    }),
  };
}

module.exports = { makeDb, Unavailable: common.Unavailable };
