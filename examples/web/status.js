'use strict';
// The farm status page: GET /status.  It reads allot's status views
// (allot.status_farm, status_settings, status_workload, status_host,
// status_app, status_transitioner, status_share_history) through its own
// connection pool, logged in as a member of allot_monitor, which may read
// those views and nothing else: the page needs none of allot_web's or
// allot_admin's rights, and a bug here cannot change the farm.
// status_query.js checks the query string, status_render.js draws the HTML
// and status_chart.js the share history.
//
// Every age the page shows ("last seen 12 s ago") is worked out in the
// query, against the database server's now(): not against this server's
// clock, which may be off, nor against a time a host reported.
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
//                          first, then those seen last (hostsAtWork); and
//                          the hosts to a page when it lists them all by id
//   STATUS_HISTORY_HOURS   how far back the share history chart goes (6)
//   STATUS_FINISHED_HOURS  how long a finished workload stays listed (24)
//   STATUS_PG_POOL_SIZE    connections of its pool (2)

const crypto = require('node:crypto');
const { Pool } = require('pg');
const { intSetting } = require('allot-common/settings');
const { renderPage, renderMain, renderError, renderOff } = require('./status_render');
const { parseQuery, BadQuery } = require('./status_query');
const { bucketSecs } = require('./status_chart');

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

// Ages in seconds, as the database's clock has them at this query.
const AGO = (column) => `extract(epoch FROM now() - ${column})::float8`;

const HOST_COLUMNS = `*, ${AGO('last_seen')} AS seen_secs_ago`;

// The hosts at work (hostsAtWork): reading every host's jobs in progress
// through their index is status_host's cost, O(hosts) lookups a load.
async function hostsAtWorkRows(q, limit) {
  return hostsAtWork({
    jobs: await q(`SELECT ${HOST_COLUMNS} FROM allot.status_host WHERE jobs_in_progress > 0
                    ORDER BY peak_flops_in_progress DESC, credit DESC, host_id LIMIT $1`, [limit]),
    assigned: await q(`SELECT ${HOST_COLUMNS} FROM allot.status_host WHERE assignment_counted
                        ORDER BY threads DESC, last_seen DESC NULLS LAST, host_id LIMIT $1`, [limit]),
    seen: await q(`SELECT ${HOST_COLUMNS} FROM allot.status_host
                    ORDER BY last_seen DESC NULLS LAST, host_id LIMIT $1`, [limit]),
  }, limit);
}

// A page of every host by id, or of those a search finds: the ids first,
// then status_host's row for those ids alone.  Read for its host_id and
// name only, status_host is the host table (the planner drops the joins
// nothing uses): the ids of a page are a walk of its primary key, and a
// search reads every host's name, O(hosts).  The id matches when the
// search is a number.  Without a search, the total is the farm's count of
// hosts (status_farm, read in the same snapshot).
async function hostsPage(q, search, page, limit, hosts) {
  const match = search === null ? 'true'
    : 'strpos(lower(h.name), lower($1::text)) > 0 OR h.host_id = $2::bigint';
  const args = search === null ? [] : [search, /^[0-9]{1,18}$/.test(search) ? search : null];
  const n = args.length;
  const [{ total }] = search === null ? [{ total: hosts }]
    : await q(`SELECT count(*) AS total FROM allot.status_host h WHERE ${match}`, args);
  const ids = (await q(`SELECT h.host_id FROM allot.status_host h WHERE ${match}
                         ORDER BY h.host_id LIMIT $${n + 1} OFFSET $${n + 2}`,
  [...args, limit, (page - 1) * limit])).map((r) => r.host_id);
  const rows = ids.length === 0 ? []
    : await q(`SELECT ${HOST_COLUMNS} FROM allot.status_host WHERE host_id = ANY ($1::bigint[])
                ORDER BY host_id`, [ids]);
  return { rows, total: Number(total) };
}

// The share history, averaged over buckets of whole minutes that end at
// now(): per kind and bucket, how many minutes have a sample of that kind,
// and per workload the sums of its shares over them.  A workload without a
// row in a minute sampled for its kind had neither a share nor a fair
// share (status_chart.js).
async function shareHistory(q, windowSecs) {
  const step = bucketSecs(windowSecs);
  const rows = await q(`
    WITH h AS (
        SELECT workload_id, name, kind, share, fair_share, sampled_at,
               floor(extract(epoch FROM now() - sampled_at) / $2)::int AS bucket
          FROM allot.status_share_history
         WHERE sampled_at > now() - make_interval(secs => $1) AND sampled_at <= now()),
    m AS (SELECT kind, bucket, count(DISTINCT sampled_at) AS minutes FROM h GROUP BY kind, bucket)
    SELECT h.kind, h.workload_id, h.name, h.bucket, m.minutes,
           sum(h.share) AS share_sum, sum(h.fair_share) AS fair_sum
      FROM h JOIN m USING (kind, bucket)
     GROUP BY h.kind, h.workload_id, h.name, h.bucket, m.minutes
     ORDER BY h.kind, h.workload_id, h.bucket`, [windowSecs, step]);
  return { windowSecs, bucketSecs: step, rows };
}

// One snapshot of the views: every query sees the same instant, and now()
// is that instant.  The workloads are those a page is about: not finished,
// finished within finishedSecs, or still holding hosts or jobs (a farm
// keeps every finished workload).  opts: { hostsLimit, historySecs,
// finishedSecs, query (parseQuery's) }.
async function readStatus(pool, opts) {
  const { query } = opts;
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const q = async (sql, params) => (await client.query(sql, params)).rows;
    const [meta] = await q('SELECT current_database() AS database, now() AS now, now()::text AS now_text');
    // the durations as seconds, for the page to write as people do
    const [farm] = await q(`SELECT f.*, extract(epoch FROM f.assignment_ttl)::float8 AS assignment_ttl_secs,
                                   extract(epoch FROM f.rec_half_life)::float8 AS rec_half_life_secs,
                                   extract(epoch FROM s.share_history_retention)::float8
                                       AS share_history_retention_secs,
                                   ${AGO('f.transitioner_last_run')} AS transitioner_last_run_secs_ago
                              FROM allot.status_farm f, allot.status_settings s`);
    const workloads = await q(`SELECT *, ${AGO('finished_at')} AS finished_secs_ago FROM allot.status_workload
                                WHERE state <> 'finished' OR hosts > 0 OR jobs_in_progress > 0
                                   OR finished_at > now() - make_interval(secs => $1)
                                ORDER BY kind, state = 'finished', priority DESC, workload_id`,
    [opts.finishedSecs]);
    const limit = query.limit ?? opts.hostsLimit;
    const browse = query.page !== null || query.q !== null;
    const hosts = { browse, page: query.page ?? 1, limit, limitGiven: query.limit, search: query.q,
      ...(browse ? await hostsPage(q, query.q, query.page ?? 1, limit, farm.hosts)
        : { rows: await hostsAtWorkRows(q, limit), total: null }) };
    const history = await shareHistory(q, opts.historySecs);
    const apps = await q('SELECT * FROM allot.status_app ORDER BY app_id');
    const runs = await q(`SELECT *, ${AGO('finished_at')} AS finished_secs_ago
                            FROM allot.status_transitioner LIMIT 10`);
    await client.query('COMMIT');
    return { ...meta, farm, workloads, hosts, history, apps, runs, finishedSecs: opts.finishedSecs };
  } catch (err) {
    broken = true;            // a connection in a failed transaction is not reused
    throw err;
  } finally {
    client.release(broken);
  }
}

// The page's security headers: nothing loads from anywhere else, only this
// response's own style and script run, and its one form (the host search)
// submits to the page itself.
function headers(type, nonce, length) {
  return {
    'Content-Type': `${type}; charset=utf-8`,
    'Content-Length': length,
    'Cache-Control': 'no-store',
    'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; `
      + `script-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; `
      + "form-action 'self'; frame-ancestors 'none'",
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
  const historySecs = 3600 * intSetting(env, 'STATUS_HISTORY_HOURS', 6, 1);
  const finishedSecs = 3600 * intSetting(env, 'STATUS_FINISHED_HOURS', 24, 0);
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
    const search = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
    let query = null;
    let status = 200;
    let body;
    let why = '';
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      status = 405;
      body = renderError(`/status takes GET, not ${req.method}`, nonce);
    } else {
      try {
        query = parseQuery(search);
      } catch (err) {
        if (!(err instanceof BadQuery)) throw err;
        status = 400;
        why = ` (${err.message})`;
        body = renderError(`Bad request: ${err.message}.`, nonce);
      }
    }
    if (status === 200) {
      try {
        const s = {
          ...(await readStatus(pool, { hostsLimit, historySecs, finishedSecs, query })),
          refreshSecs, hostsLimit,
        };
        body = query.part === 'main' ? renderMain(s) : renderPage(s, nonce);
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
    // the query string is the client's: only values that passed the checks
    // are logged, a search by its length
    const parts = query === null ? [] : [
      query.part && `part=${query.part}`, query.page && `page=${query.page}`,
      query.limit && `limit=${query.limit}`, query.q && `q=(${[...query.q].length} characters)`,
    ].filter(Boolean);
    const shown = query === null ? (search === '' ? '' : '?(refused)')
      : (parts.length === 0 ? '' : `?${parts.join('&')}`);
    return { path: `/status${shown}`, note: why.trim() };
  }

  return {
    wrap: (handler) => (req, res) => (isStatus(req) ? serve(req, res) : handler(req, res)),
    end: () => pool.end(),
  };
}

module.exports = { fromEnv, off, readStatus, hostsAtWork };
