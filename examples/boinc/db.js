'use strict';
// Database access for the front end: one statement, or one transaction,
// retried when PostgreSQL rolled it back whole (serialization failure,
// deadlock), so that running it again is safe.

const { DatabaseError } = require('pg');

const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 3;

// No connection could be had, or it broke: try again later.
class Unavailable extends Error {}

// A failure the caller cannot fix by sending the same thing again later:
// PostgreSQL refused the values, not the moment.
function isPermanent(err) {
  return err instanceof DatabaseError && ['22', '23', '42', '55', 'P0'].includes(err.code.slice(0, 2));
}

// Errors of the connection rather than of a statement (pg raises plain
// Errors for these: a refused or reset socket, a timeout, a closed client).
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
    transaction: (fn) => attempt(async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
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

module.exports = { makeDb, isPermanent, Unavailable };
