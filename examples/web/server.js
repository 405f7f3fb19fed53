'use strict';
// allot's example web layer: reads its settings from the environment, opens
// one connection pool, serves app.js's endpoints, and on SIGTERM or SIGINT
// finishes the requests in flight before it exits.
//
//   PORT=8080 HOST=127.0.0.1 PGHOST=/var/run/postgresql PGDATABASE=farm PGUSER=web node server.js
//
// The database connection comes from the standard PG* variables (PGHOST,
// PGPORT, PGDATABASE, PGUSER, PGPASSWORD, PGAPPNAME), read by the pg package.
// Hosts authenticate with keys (auth.js; README.md, "Host keys"): the
// database needs setup.sql, and AUTH_CACHE_SIZE bounds the verified keys
// the server remembers.

const http = require('node:http');
const { Pool } = require('pg');
const { makeHandler } = require('./app');
const status = require('./status');

function envInt(name, fallback) {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^[0-9]+$/.test(text)) {
    console.error(`${name} must be a non-negative integer, not ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return Number(text);
}

const log = (line) => console.log(`${new Date().toISOString()} ${line}`);

const port = envInt('PORT', 8080);
const host = process.env.HOST || '127.0.0.1';
const maxBodyBytes = envInt('MAX_BODY_BYTES', 64 * 1024);
const authCacheSize = envInt('AUTH_CACHE_SIZE', 100000);
const shutdownGraceMs = envInt('SHUTDOWN_GRACE_MS', 10000);

const pool = new Pool({
  max: envInt('PG_POOL_SIZE', 10),
  fallback_application_name: 'allot-web',
  connectionTimeoutMillis: 5000,     // fail with 503 rather than hang when the database is down
  statement_timeout: envInt('PG_STATEMENT_TIMEOUT_MS', 10000),
});
// An idle connection that breaks (a server restart) is dropped from the pool;
// without a listener its 'error' event would end the process.
pool.on('error', (err) => log(`idle database connection lost: ${err.message}`));

const { handle, stopKeepAlive } = makeHandler(pool, { maxBodyBytes, log, authCacheSize });

// The farm status page (GET /status), with its own pool as a member of
// allot_monitor, when STATUS_PGUSER is set (status.js, docs/status-page.md);
// without it, GET /status says what to set.
let statusPage = null;
try {
  statusPage = status.fromEnv(process.env, log);
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
const serve = statusPage ? statusPage.wrap(handle) : status.off(handle, log);

// requestTimeout also bounds how long an oversized body may take to be read
const server = http.createServer({ requestTimeout: 30000, headersTimeout: 10000 }, serve);

server.on('error', (err) => {     // cannot listen: port taken, bad HOST
  console.error(`cannot serve on ${host}:${port}: ${err.message}`);
  process.exit(1);
});
// PORT=0 takes a free port: the log line says which.
server.listen(port, host, () => log(`listening on http://${host}:${server.address().port}/ (body limit ${maxBodyBytes} bytes)`));

let stopping = false;
function shutdown(signal) {
  if (stopping) return;
  stopping = true;
  log(`${signal}: no new connections; finishing requests in flight`);
  stopKeepAlive();
  server.close(async () => {
    await Promise.all([pool.end(), statusPage?.end()]);
    log('stopped');
    process.exit(0);
  });
  server.closeIdleConnections();
  setTimeout(() => {
    log(`requests still running after ${shutdownGraceMs} ms; exiting`);
    process.exit(1);
  }, shutdownGraceMs).unref();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
