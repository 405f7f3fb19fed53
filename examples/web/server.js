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

const { makePool } = require('allot-common/database');
const { log, serve } = require('allot-common/http_server');
const { envInt, orExit } = require('allot-common/settings');
const { makeHandler } = require('./app');
const status = require('./status');

const port = envInt('PORT', 8080);
const host = process.env.HOST || '127.0.0.1';
const maxBodyBytes = envInt('MAX_BODY_BYTES', 64 * 1024);
const authCacheSize = envInt('AUTH_CACHE_SIZE', 100000);
const shutdownGraceMs = envInt('SHUTDOWN_GRACE_MS', 10000);

const pool = makePool('allot-web', { statementTimeoutMs: 10000, log });

const handle = makeHandler(pool, { maxBodyBytes, log, authCacheSize });

// The farm status page (GET /status), with its own pool as a member of
// allot_monitor, when STATUS_PGUSER is set (status.js, docs/status-page.md);
// without it, GET /status says what to set.
const statusPage = orExit(() => status.fromEnv(process.env, log));

// requestTimeout also bounds how long an oversized body may take to be read.
// PORT=0 takes a free port: the log line says which.
serve(statusPage ? statusPage.wrap(handle) : status.off(handle), {
  host, port, requestTimeout: 30000, headersTimeout: 10000, graceMs: shutdownGraceMs,
  announce: (address) => `listening on http://${host}:${address.port}/ (body limit ${maxBodyBytes} bytes)`,
  release: () => Promise.all([pool.end(), statusPage?.end()]),
});
