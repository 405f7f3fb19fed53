'use strict';
// A front end's calls into the database: one statement, or one
// transaction, retried when PostgreSQL rolled it back whole (serialization
// failure, deadlock), so that running it again is safe.  A connection that
// cannot be had, or breaks, becomes Unavailable, which each front end
// answers in its own protocol's words (503, "try later").

const { DatabaseError, Pool } = require('pg');
const { envInt } = require('./settings');

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

// The front end's pool of connections, to where the PG* variables say:
// PG_POOL_SIZE connections (10), each with statement_timeout
// PG_STATEMENT_TIMEOUT_MS (statementTimeoutMs unless set; 0: none).  An
// idle connection that breaks (a server restart) is dropped from the pool
// and logged: without a listener its 'error' event would end the process.
function makePool(applicationName, { statementTimeoutMs, log }) {
  const pool = new Pool({
    max: envInt('PG_POOL_SIZE', 10),
    fallback_application_name: applicationName,
    connectionTimeoutMillis: 5000,     // fail (Unavailable) rather than hang when the database is down
    statement_timeout: envInt('PG_STATEMENT_TIMEOUT_MS', statementTimeoutMs),
  });
  pool.on('error', (err) => log(`idle database connection lost: ${err.message}`));
  return pool;
}

// makeDb(pool, log): query(sql, params), and transaction(fn), where
// fn(client) runs between BEGIN and COMMIT and any error rolls back.
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

module.exports = { makePool, makeDb, isPermanent, Unavailable, RETRYABLE };
