'use strict';
// The HTTP side of allot's example web layer: one POST endpoint per allot
// call, JSON in and out.  Each request is authenticated as the host it names
// (auth.js), then runs exactly one parameterised SQL call of allot, in its
// own transaction, and allot decides everything inside it; this file only
// checks the shape of the input and maps errors to statuses.

const { DatabaseError } = require('pg');
const { makeDb, Unavailable, RETRYABLE } = require('allot-common/database');
const { readBody, BodyError } = require('allot-common/http_server');
const { bearerKey, makeAuthenticator } = require('./auth');

// An error the web layer answers itself.  sqlstate is the code PostgreSQL
// uses for the same condition, so that a client reads one field whoever
// refused the request; null where there is no such condition (routing).
class HttpError extends Error {
  constructor(status, message, sqlstate = null, headers = {}) {
    super(message);
    this.status = status;
    this.sqlstate = sqlstate;
    this.headers = headers;
  }
}

const badValue = (message) => new HttpError(400, message, '22023');

// 401 with a WWW-Authenticate challenge (RFC 6750).  An unknown host and a
// wrong key get the same answer, so the reply tells nothing about which
// hosts exist.
const REALM = 'Bearer realm="allot"';
const noKey = () => new HttpError(401,
  'every endpoint needs the host\'s key: Authorization: Bearer <key>', '28000',
  { 'WWW-Authenticate': REALM });
const wrongKey = (hostId) => new HttpError(401, `the key is not the one issued to host ${hostId}`,
  '28P01', { 'WWW-Authenticate': `${REALM}, error="invalid_token"` });

// docs/errors.md: every error a caller can cause has its own SQLSTATE.
function statusOf(sqlstate) {
  if (sqlstate === 'P0002') return 404;             // unknown host or job
  if (sqlstate === '42501') return 403;             // a job of another host
  if (sqlstate === '55000') return 409;             // not in that state
  const cls = sqlstate.slice(0, 2);
  if (cls === '22' || cls === '23') return 400;     // bad values
  if (RETRYABLE.has(sqlstate) || cls === '08' || cls === '53' ||
      cls === '57') return 503;                     // busy, cancelled, shutting down
  return 500;
}

// ----------------------------------------------------------------------------
// Input checks.  allot checks every value again; these only keep out what
// would otherwise reach it as a different value or type.

const BIGINT_MAX = 9223372036854775807n;

// A bigint id, passed on to PostgreSQL as a string.  JSON numbers above 2^53
// are already rounded by JSON.parse, so larger ids must be strings of digits.
function positiveId(v, name) {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return String(v);
  if (typeof v === 'string' && /^[1-9][0-9]{0,18}$/.test(v) && BigInt(v) <= BIGINT_MAX) return v;
  throw badValue(`${name} must be a positive integer, not ${show(v)}`);
}

// A short rendering of a rejected value for an error message.
function show(v) {
  if (v === undefined) return 'missing';
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

function optionalNumber(body, field) {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number') throw badValue(`${field} must be a number, not ${show(v)}`);
  return v;
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

// ----------------------------------------------------------------------------
// Endpoints.  Each takes the parsed body and the host id it was authenticated
// for, and returns the reply as JSON text; allot's jsonb replies are passed
// through as text, so no number is rounded.

// OpenBench "get workload": the fairest workload this host can run now.
async function workload(db, body, hostId) {
  const exclude = body.exclude ?? [];
  if (!Array.isArray(exclude)) throw badValue(`exclude must be an array of workload ids, not ${show(exclude)}`);
  const ids = exclude.map((id, i) => positiveId(id, `exclude[${i}]`));
  const { rows } = await db(
    'SELECT to_jsonb(a)::text AS workload FROM allot.assign_workload($1, exclude => $2::bigint[]) a',
    [hostId, ids]);
  // zero rows: nothing fits this host now, and allot released its assignment
  return `{"workload": ${rows.length ? rows[0].workload : 'null'}}`;
}

// The host is still working on its assignment.
async function heartbeat(db, body, hostId) {
  const { rows } = await db('SELECT allot.heartbeat($1) AS assigned', [hostId]);
  return JSON.stringify({ assigned: rows[0].assigned });
}

// The host stops working: its assignment no longer counts.
async function release(db, body, hostId) {
  const { rows } = await db('SELECT allot.release_assignment($1) AS released', [hostId]);
  return JSON.stringify({ released: rows[0].released });
}

// BOINC scheduler request: jobs for the seconds or instances asked for.
async function requestWork(db, body, hostId) {
  if (!isObject(body.request)) throw badValue(`request must be a JSON object, not ${show(body.request)}`);
  const { rows } = await db('SELECT allot.request_work($1, $2::jsonb)::text AS reply',
    [hostId, JSON.stringify(body.request)]);
  return rows[0].reply;
}

// A finished, failed or abandoned job.  Figures left out take report_job's
// own defaults, so they are passed by name and only when given.
const REPORT_FIGURES = ['app_units', 'elapsed_secs', 'raw_flops_per_sec'];

async function report(db, body, hostId) {
  const params = [hostId, positiveId(body.job_id, 'job_id')];
  if (typeof body.outcome !== 'string') throw badValue(`outcome must be a string, not ${show(body.outcome)}`);
  params.push(body.outcome);
  const args = ['$1', '$2', '$3'];
  for (const name of REPORT_FIGURES) {
    const v = optionalNumber(body, name);
    if (v === null) continue;
    params.push(v);
    args.push(`${name} => $${params.length}::float8`);  // name from the fixed list above
  }
  // The sending the host was sent (request_work's reply names it): a report
  // of a stale copy is then refused.
  const sending = optionalNumber(body, 'sending');
  if (sending !== null) {
    if (!Number.isInteger(sending) || sending < 1 || sending > 2147483647) {
      throw badValue(`sending must be a sending's number, 1 or more, not ${show(sending)}`);
    }
    params.push(sending);
    args.push(`sending => $${params.length}::int`);
  }
  const { rows } = await db(`SELECT allot.report_job(${args.join(', ')})::text AS reply`, params);
  return rows[0].reply;
}

const ROUTES = new Map([
  ['/api/workload', workload],
  ['/api/heartbeat', heartbeat],
  ['/api/release', release],
  ['/api/request_work', requestWork],
  ['/api/report', report],
]);

// ----------------------------------------------------------------------------
// Request body: at most maxBodyBytes (allot-common/http_server.js's
// readBody), UTF-8 JSON, an object.

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes) {
  let value;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (err) {
    throw new HttpError(400, `malformed JSON: ${err.message}`, '22P02');
  }
  if (!isObject(value)) throw badValue('the request body must be a JSON object');
  return value;
}

// ----------------------------------------------------------------------------

// The reply to any error: its status and {"error", "sqlstate"} body, with
// PostgreSQL's detail and hint when it gave them.
function errorReply(err, log) {
  if (err instanceof HttpError) {
    return { status: err.status, headers: err.headers, body: { error: err.message, sqlstate: err.sqlstate } };
  }
  // 54000 (program_limit_exceeded) for a body over the limit
  if (err instanceof BodyError) {
    return { status: err.status, headers: err.headers,
             body: { error: err.message, sqlstate: err.status === 413 ? '54000' : null } };
  }
  // no SQLSTATE: no connection could be had, or it broke
  if (err instanceof Unavailable) return { status: 503, headers: {}, body: { error: err.message, sqlstate: null } };
  if (err instanceof DatabaseError) {
    const status = statusOf(err.code);
    if (status >= 500) log(`database error ${err.code}: ${err.message}`);
    const body = { error: err.message, sqlstate: err.code };
    if (err.detail) body.detail = err.detail;
    if (err.hint) body.hint = err.hint;
    return { status, headers: {}, body };
  }
  log(`internal error: ${err.stack ?? err}`);
  return { status: 500, headers: {}, body: { error: 'internal error', sqlstate: null } };
}

// makeHandler(pool, options) returns the 'request' listener of an HTTP
// server (allot-common/http_server.js serves it): each statement is retried
// when PostgreSQL rolled it back whole, which makes running it again safe
// (README "Calling allot from a web layer").  authCacheSize is how many
// verified keys are remembered (auth.js).
function makeHandler(pool, { maxBodyBytes, log, authCacheSize }) {
  const db = makeDb(pool, log).query;

  function send(res, status, text, headers = {}) {
    const body = Buffer.from(`${text}\n`);
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': body.length,
      'Cache-Control': 'no-store',
      ...headers,
    });
    res.end(body);
  }

  const verify = makeAuthenticator(db, { cacheSize: authCacheSize });

  return async function handle(req, res) {
    const path = req.url.split('?', 1)[0];
    let who = '';
    try {
      const endpoint = ROUTES.get(path);
      if (endpoint === undefined) throw new HttpError(404, `no endpoint ${show(path)}`);
      if (req.method !== 'POST') {
        throw new HttpError(405, `${path} takes POST, not ${req.method}`, null, { Allow: 'POST' });
      }
      const bytes = await readBody(req, maxBodyBytes);
      // Who is asking, before anything else of the body is looked at.
      const key = bearerKey(req);
      if (key === null) throw noKey();
      const body = parseJson(bytes);
      const hostId = positiveId(body.host_id, 'host_id');
      const how = await verify(hostId, key);
      who = `host ${hostId} (key ${how ?? 'refused'})`;
      if (how === null) throw wrongKey(hostId);
      send(res, 200, await endpoint(db, body, hostId));
    } catch (err) {
      const { status, headers, body } = errorReply(err, log);
      if (res.headersSent) res.destroy();   // failed mid-reply: nothing sane to add
      else send(res, status, JSON.stringify(body), headers);
    }
    return { note: who };
  };
}

module.exports = { makeHandler };
