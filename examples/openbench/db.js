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

const { DatabaseError } = require('pg');

const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 3;

// pg_advisory_xact_lock's (int4, int4) key: "open" "bnch".
const ASSIGNMENT_LOCK = [1869636974, 1651401576];

// No connection could be had, or it broke: the worker should try later.
class Unavailable extends Error {}

function isConnectionError(err) {
  return !(err instanceof DatabaseError) &&
    ((typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code)) ||
     /Connection terminated|timeout exceeded|Client has encountered a connection error|not queryable/.test(err.message));
}

function makeDb(pool, log) {
  async function attempt(fn) {
    for (let n = 1; ; n++) {
      try {
        return await fn();
      } catch (err) {
        if (isConnectionError(err)) {
          log(`database unavailable: ${err.message}`);
          throw new Unavailable('the database is unavailable');
        }
        if (!(err instanceof DatabaseError && n < ATTEMPTS && RETRYABLE.has(err.code))) throw err;
      }
    }
  }

  return {
    query: (sql, params) => attempt(() => pool.query(sql, params)),

    // fn(client) runs between BEGIN and COMMIT; any error rolls back.
    // lock: 'assign' (exclusive), 'count' (shared) or none.
    transaction: (fn, { lock = null } = {}) => attempt(async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        if (lock === 'assign') await client.query('SELECT pg_advisory_xact_lock($1, $2)', ASSIGNMENT_LOCK);
        else if (lock === 'count') await client.query('SELECT pg_advisory_xact_lock_shared($1, $2)', ASSIGNMENT_LOCK);
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    }),
  };
}

module.exports = { makeDb, Unavailable };
