'use strict';
// The farm status page: GET /status.  It reads allot's status views
// (allot.status_farm, status_workload, status_host, status_app,
// status_transitioner) through its own connection pool, logged in as a
// member of allot_monitor, which may read those views and nothing else: the
// page needs none of allot_web's or allot_admin's rights, and a bug here
// cannot change the farm.  status_render.js draws the HTML.
//
// Settings (environment; the page is off unless STATUS_PGUSER is set, and
// GET /status then answers a page that says what to set):
//   STATUS_PGUSER          the login role, a member of allot_monitor
//   STATUS_PGPASSWORD      its password, if it needs one
//   STATUS_PGHOST, STATUS_PGPORT, STATUS_PGDATABASE
//                          where the farm is; each defaults to PGHOST,
//                          PGPORT, PGDATABASE, as the web layer's own pool
//   STATUS_REFRESH_SECS    how often the page refreshes itself (10)
//   STATUS_HOSTS           how many hosts it lists (50): the hosts at work
//                          first, then those seen last (hostsAtWork)
//   STATUS_PG_POOL_SIZE    connections of its pool (2)

const crypto = require('node:crypto');
const { Pool } = require('pg');
const { intSetting } = require('allot-common/settings');
const { renderPage, renderMain, renderError, renderOff } = require('./status_render');

// The hosts a page lists, at most `limit`: the hosts at work first, since a
// farm's operators and volunteers look for them, and a farm of idle
// engine-testing workers would otherwise hide the volunteers who earn the
// credit.  Up to half are hosts with jobs in progress (the most peak FLOPS
// first) and the rest hosts on a counted assignment (the most threads
// first), either kind taking the other's places when it has fewer; then
// the hosts seen last fill what is left.  `kinds` holds the three lists,
// each ordered and at most `limit` long.
function hostsAtWork(kinds, limit) {
  const { jobs, assigned, seen } = kinds;
  const nJobs = Math.min(jobs.length, Math.max(Math.ceil(limit / 2), limit - assigned.length));
  const out = jobs.slice(0, nJobs);
  const listed = new Set(out.map((h) => String(h.host_id)));
  for (const h of [...assigned, ...seen]) {
    if (out.length >= limit) break;
    if (listed.has(String(h.host_id))) continue;
    listed.add(String(h.host_id));
    out.push(h);
  }
  return out;
}

// One snapshot of the views: every query sees the same instant.  The
// workloads are those a page is about: not finished, or still holding
// hosts or jobs (a farm keeps every finished workload).
async function readStatus(pool, hostsLimit) {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const q = async (sql, params) => (await client.query(sql, params)).rows;
    const [meta] = await q('SELECT current_database() AS database, now() AS now');
    // the durations as seconds, for the page to write as people do
    const [farm] = await q(`SELECT *, extract(epoch FROM assignment_ttl)::float8 AS assignment_ttl_secs,
                                   extract(epoch FROM rec_half_life)::float8 AS rec_half_life_secs
                              FROM allot.status_farm`);
    const workloads = await q(`SELECT * FROM allot.status_workload
                                WHERE state <> 'finished' OR hosts > 0 OR jobs_in_progress > 0
                                ORDER BY kind, priority DESC, workload_id`);
    // Finding the hosts at work reads every host's jobs in progress through
    // their index (status_host's cost): O(hosts) lookups a load.
    const hosts = hostsAtWork({
      jobs: await q(`SELECT * FROM allot.status_host WHERE jobs_in_progress > 0
                      ORDER BY peak_flops_in_progress DESC, credit DESC, host_id LIMIT $1`, [hostsLimit]),
      assigned: await q(`SELECT * FROM allot.status_host WHERE assignment_counted
                          ORDER BY threads DESC, last_seen DESC NULLS LAST, host_id LIMIT $1`, [hostsLimit]),
      seen: await q(`SELECT * FROM allot.status_host
                      ORDER BY last_seen DESC NULLS LAST, host_id LIMIT $1`, [hostsLimit]),
    }, hostsLimit);
    const apps = await q('SELECT * FROM allot.status_app ORDER BY app_id');
    const runs = await q('SELECT * FROM allot.status_transitioner LIMIT 10');
    await client.query('COMMIT');
    return { ...meta, farm, workloads, hosts, apps, runs };
  } catch (err) {
    broken = true;            // a connection in a failed transaction is not reused
    throw err;
  } finally {
    client.release(broken);
  }
}

// The page's security headers: nothing loads from anywhere else, and only
// this response's own style and script run.
function headers(type, nonce, length) {
  return {
    'Content-Type': `${type}; charset=utf-8`,
    'Content-Length': length,
    'Cache-Control': 'no-store',
    'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; `
      + `script-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; `
      + "form-action 'none'; frame-ancestors 'none'",
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
}

const isStatus = (req) => req.url.split('?', 1)[0] === '/status';

// A web layer started without STATUS_PGUSER: GET /status answers 404 with a
// page that says how to turn the status page on, rather than a bare 404
// that leaves its reader guessing.  (The server's log line says so too:
// allot-common/http_server.js logs each request with what its handler adds.)
function off(handler) {
  return async (req, res) => {
    if (!isStatus(req)) return handler(req, res);
    const nonce = crypto.randomBytes(16).toString('base64');
    const bytes = Buffer.from(renderOff(nonce));
    res.writeHead(404, headers('text/html', nonce, bytes.length));
    res.end(req.method === 'HEAD' ? undefined : bytes);
    return { path: '/status', note: '(the status page is off: STATUS_PGUSER is not set)' };
  };
}

// fromEnv(env, log): the status page, or null when STATUS_PGUSER is unset.
// Its wrap(handler) serves /status and hands every other request on.
function fromEnv(env, log) {
  if (!env.STATUS_PGUSER) return null;
  const refreshSecs = intSetting(env, 'STATUS_REFRESH_SECS', 10, 1);
  const hostsLimit = intSetting(env, 'STATUS_HOSTS', 50, 1);
  const pool = new Pool({
    user: env.STATUS_PGUSER,
    password: env.STATUS_PGPASSWORD || undefined,
    host: env.STATUS_PGHOST || undefined,
    port: env.STATUS_PGPORT ? intSetting(env, 'STATUS_PGPORT', 5432, 1) : undefined,
    database: env.STATUS_PGDATABASE || undefined,
    max: intSetting(env, 'STATUS_PG_POOL_SIZE', 2, 1),
    application_name: 'allot-status',
    connectionTimeoutMillis: 5000,
    statement_timeout: 5000,
  });
  pool.on('error', (err) => log(`status: idle database connection lost: ${err.message}`));

  async function serve(req, res) {
    const nonce = crypto.randomBytes(16).toString('base64');
    const url = new URL(req.url, 'http://status.invalid');
    const part = url.searchParams.get('part');
    let status = 200;
    let body;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      status = 405;
      body = renderError(`/status takes GET, not ${req.method}`, nonce);
    } else if (part !== null && part !== 'main') {
      status = 400;
      body = renderError('part must be main', nonce);
    } else {
      try {
        const s = { ...(await readStatus(pool, hostsLimit)), refreshSecs, hostsLimit };
        body = part === 'main' ? renderMain(s) : renderPage(s, nonce);
      } catch (err) {
        // 42501: the login is not a member of allot_monitor
        status = err.code === '42501' ? 500 : 503;
        log(`status: ${err.code ?? 'no SQLSTATE'}: ${err.message}`);
        body = renderError(status === 500
          ? 'The status page\'s database login may not read the status views (see docs/status-page.md).'
          : 'The database is unavailable.', nonce);
      }
    }
    const bytes = Buffer.from(body);
    res.writeHead(status, headers('text/html', nonce, bytes.length));
    res.end(req.method === 'HEAD' ? undefined : bytes);
    // the query string is the client's: only its one known value is logged
    const query = part === null ? '' : `?part=${part === 'main' ? 'main' : '(bad)'}`;
    return { path: `/status${query}` };
  }

  return {
    wrap: (handler) => (req, res) => (isStatus(req) ? serve(req, res) : handler(req, res)),
    end: () => pool.end(),
  };
}

module.exports = { fromEnv, off, readStatus, hostsAtWork };
