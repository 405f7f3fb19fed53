'use strict';
// An OpenBench server for OpenBench's own worker, over allot: the calls of
// the worker's protocol, with OpenBench's field names, replies and error
// strings, in one small Node process.  allot, inside PostgreSQL, decides
// which test each machine plays; this process keeps accounts, machines,
// tests and results in schema openbench (setup.sql).  Settings come from
// the environment:
//
//   PORT=8080 HOST=127.0.0.1 DATA_DIR=/srv/openbench PGDATABASE=farm PGUSER=openbench_web node server.js
//
// README.md lists every setting.  The database login must be the one
// setup.sql was run for: a member of allot_web, owning nothing.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { DatabaseError } = require('pg');
const { makePool } = require('allot-common/database');
const { log, serve, readBody, BodyError } = require('allot-common/http_server');
const { envInt, envText, orExit, SettingError } = require('allot-common/settings');
const { makeDb, Unavailable } = require('./db');
const { BadRequest, parseForm } = require('./forms');
const { makeMachines, Refused } = require('./machines');
const { makeNetworks } = require('./networks');
const { makeApi, ApiError } = require('./api');
const { makePages, pageHeaders, NotFound, BadInput } = require('./pages');
const { makeResolver } = require('./resolver');

// The resolver the settings name; a setting it refuses is said, not thrown.
function makeResolverSetting(settings) {
  try {
    return makeResolver(settings);
  } catch (err) {
    throw new SettingError(err.message);
  }
}
const { makeSessions } = require('./sessions');
const { makeSite } = require('./site');
const { html, layout } = require('./html');
const { makeResults } = require('./results');
const { makeVerifier } = require('./secrets');
const { makeWorkloads } = require('./workloads');

const URL_PATTERN = /^https?:\/\/[^\s]{1,2000}$/;
const port = envInt('PORT', 8080);
const host = process.env.HOST || '127.0.0.1';
const dataDir = path.resolve(process.env.DATA_DIR || 'data');
const shutdownGraceMs = envInt('SHUTDOWN_GRACE_MS', 10000);
const config = {
  clientVersion: envInt('CLIENT_VERSION', 49),
  clientRepoUrl: envText('CLIENT_REPO_URL', 'https://github.com/AndyGrant/OpenBench', URL_PATTERN),
  clientRepoRef: envText('CLIENT_REPO_REF', 'master', /^[A-Za-z0-9_.\/-]{1,100}$/),
  fastchessMinVersion: envText('FASTCHESS_MIN_VERSION', '1.8.1', /^[0-9]{1,6}(\.[0-9]{1,6}){0,3}$/),
  fastchessRepoUrl: envText('FASTCHESS_REPO_URL', 'https://github.com/AndyGrant/fastchess', URL_PATTERN),
  fastchessRepoRef: envText('FASTCHESS_REPO_REF', 'master', /^[A-Za-z0-9_.\/-]{1,100}$/),
};
const limits = {
  maxFormBytes: envInt('MAX_FORM_BYTES', 1024 * 1024),
  maxPgnBytes: envInt('MAX_PGN_BYTES', 16 * 1024 * 1024),
  maxLogChars: envInt('MAX_LOG_CHARS', 256 * 1024),
};

const pool = makePool('allot-openbench', { statementTimeoutMs: 30000, log });
const db = makeDb(pool, log);
const verify = makeVerifier({ cacheSize: envInt('SECRET_CACHE_SIZE', 100000) });
const machines = makeMachines(db, { verify, config });
const results = makeResults(db, { dataDir, limits, log });
const clientGetWorkload = makeWorkloads(db, { log });
const networks = makeNetworks(db, { dataDir, account: machines.account });
const pages = makePages(db);
const api = makeApi(db, { dataDir });
const sessions = makeSessions(db, {
  idleDays: envInt('SESSION_IDLE_DAYS', 14), secureCookies: envText('COOKIE_SECURE', 'off', /^(on|off)$/) === 'on',
});
const resolver = orExit(() => makeResolverSetting({
  kind: envText('RESOLVER', 'none', /^(none|git|github)$/),
  prefixes: (process.env.RESOLVER_REPOS ?? '').split(',').map((p) => p.trim()).filter((p) => p !== ''),
  dataDir,
  githubApi: envText('GITHUB_API', 'https://api.github.com', URL_PATTERN),
  githubToken: process.env.GITHUB_TOKEN || null,
  sourceTemplate: envText('SOURCE_ZIP_URL', '{repo}/archive/{sha}.zip', /^[^\s]{1,2000}$/),
}));
const site = makeSite(db, { machines, resolver });

// The worker's calls: who may make them, and how.  `machine`: the call
// carries machine_id and secret, checked before the handler runs.
const CALLS = new Map([
  ['clientVersionRef', { methods: ['POST'], run: machines.clientVersionRef }],
  ['clientMatchRunnerVersionRef', { methods: ['POST'], run: machines.clientMatchRunnerVersionRef }],
  ['clientGetBuildInfo', { methods: ['GET', 'POST'], run: machines.clientGetBuildInfo }],
  ['clientWorkerInfo', { methods: ['POST'], run: machines.clientWorkerInfo }],
  ['clientGetWorkload', { methods: ['POST'], run: clientGetWorkload, machine: true }],
  ['clientSubmitNPS', { methods: ['POST'], run: results.clientSubmitNPS, machine: true }],
  ['clientHeartbeat', { methods: ['POST'], run: results.clientHeartbeat, machine: true }],
  ['clientSubmitResults', { methods: ['POST'], run: results.clientSubmitResults, machine: true }],
  ['clientSubmitPGN', { methods: ['POST'], run: results.clientSubmitPGN, machine: true, big: true }],
  ['clientSubmitError', { methods: ['POST'], run: results.clientSubmitError, machine: true }],
  ['clientBenchError', { methods: ['POST'], run: results.clientBenchError, machine: true }],
]);

class HttpError extends Error {
  constructor(status, message, headers = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

// A page of the web site (pages.js) or one of its forms (site.js), or its
// error as a sentence on a page: 404 for a path that names nothing, 405
// for a POST to a page, 503 while the database is away, 500 (logged, never
// shown) for a fault of ours.
async function servePage(req, res, parts) {
  const nonce = crypto.randomBytes(16).toString('base64');
  let status = 200;
  let body;
  let note = '';
  const out = { cookies: [] };
  let ctx = { session: { account: null, csrf: '' }, sessions, nonce };
  try {
    ctx.session = await sessions.load(req);
    out.cookies.push(...ctx.session.cookies);
    const readForm = async () => parseForm(await readBody(req, limits.maxFormBytes), req.headers['content-type']);
    const answer = await site.handle(ctx, req.method === 'HEAD' ? 'GET' : req.method, parts, readForm, out);
    if (answer?.redirect) {
      res.writeHead(303, { Location: answer.redirect.location, 'Cache-Control': 'no-store', 'Set-Cookie': out.cookies, 'Content-Length': 0 });
      res.end();
      return `-> ${answer.redirect.location}`;
    }
    if (answer?.page) {
      body = String(answer.page);
      status = answer.status ?? 200;
      if (status !== 200) note = `refused: ${status}`;
    } else if (req.method === 'POST') {
      throw new HttpError(405, 'this page takes no form');
    } else {
      body = await pages.render(parts, ctx, new URL(req.url, 'http://site').searchParams);
      if (body === null) throw new NotFound('this site has no such page');
    }
  } catch (err) {
    let message = 'Something went wrong on the server; it is logged.';
    status = 500;
    if (err instanceof NotFound) {
      status = 404;
      message = `Not found: ${err.message}.`;
    } else if (err instanceof BadInput) {
      status = 400;
      message = `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`;
    } else if (err instanceof HttpError || err instanceof BodyError) {
      status = err.status;
      message = `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`;
    } else if (err instanceof Unavailable) {
      status = 503;
      message = `${err.message}; try again shortly.`;
    } else {
      log(`internal error on ${req.method} ${req.url.slice(0, 200)}: ${err.stack ?? err}`);
    }
    note = `error: ${message}`;
    body = String(layout(ctx, 'Sorry', html`<p id="message">${message}</p>`));
  }
  const bytes = Buffer.from(body);
  res.writeHead(status, { ...pageHeaders(nonce), 'Content-Length': bytes.length, 'Set-Cookie': out.cookies });
  res.end(req.method === 'HEAD' ? undefined : bytes);
  return note;
}

function send(res, status, body, headers = {}) {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    'Content-Type': 'application/json', 'Content-Length': bytes.length, 'Cache-Control': 'no-store', ...headers,
  });
  res.end(bytes);
}

async function handle(req, res) {
  const urlPath = req.url.split('?', 1)[0];
  // The worker ends every URL with a slash: /clientGetWorkload/.
  const parts = urlPath.split('/').filter((p) => p !== '');
  let note = '';
  try {
    const allow = (methods) => {
      if (!methods.includes(req.method)) {
        throw new HttpError(405, `${urlPath} takes ${methods.join(', ')}`, { Allow: methods.join(', ') });
      }
    };
    const call = parts.length === 1 ? CALLS.get(parts[0]) : undefined;
    if (call) {
      allow(call.methods);
      const body = await readBody(req, call.big ? limits.maxPgnBytes + 65536 : limits.maxFormBytes);
      const form = parseForm(body, req.headers['content-type']);
      const machine = call.machine ? await machines.machine(form) : null;
      const out = await call.run(form, machine);
      note = out.note ?? '';
      send(res, 200, out.reply);
    } else if (parts.length === 4 && parts[0] === 'api' && parts[1] === 'networks') {
      allow(['POST']);
      const form = parseForm(await readBody(req, limits.maxFormBytes), req.headers['content-type']);
      note = await networks.download(res, decodeURIComponent(parts[2]), decodeURIComponent(parts[3]), form);
    } else if (parts.length === 2 && parts[0] === 'api' && parts[1] === 'buildinfo') {
      allow(['GET', 'POST']);
      // OpenBench's api/buildinfo/: what the worker's clientGetBuildInfo gets
      send(res, 200, (await machines.clientGetBuildInfo()).reply);
    } else if (parts[0] === 'api' && ((parts[1] === 'config' && parts.length <= 3) || (parts[1] === 'pgns' && parts.length === 3)
                                      || (parts[1] === 'networks' && parts.length === 3)
                                      || ((parts[1] === 'workload' || parts[1] === 'spsa') && parts.length === 4))) {
      allow(['GET', 'POST']);
      try {
        if (parts[1] === 'config') send(res, 200, await api.config(parts[2] === undefined ? undefined : decodeURIComponent(parts[2])));
        else if (parts[1] === 'workload') send(res, 200, await api.workload(parts[2], parts[3]));
        else if (parts[1] === 'networks') send(res, 200, await api.networks(decodeURIComponent(parts[2])));
        else if (parts[1] === 'spsa') {
          const out = await api.spsa(parts[2], parts[3]);
          if (typeof out === 'string') {
            const bytes = Buffer.from(out);
            res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': bytes.length, 'Cache-Control': 'no-store' });
            res.end(bytes);
          } else send(res, 200, out);
        } else note = await api.pgns(res, parts[2]);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        note = `error: ${err.message}`;
        send(res, 200, { error: err.message });   // OpenBench's way
      }
    } else if (parts.length === 0 || ['index', 'greens', 'user', 'search', 'test', 'tune', 'profile', 'login', 'logout', 'register', 'users', 'machines', 'machine', 'events', 'errors'].includes(parts[0])) {
      allow(['GET', 'HEAD', 'POST']);
      note = await servePage(req, res, parts.map(decodeURIComponent));
    } else {
      throw new HttpError(404, `no such call: ${urlPath.slice(0, 100)}`);
    }
  } catch (err) {
    let status = 500;
    let headers = {};
    let message = 'internal error';
    if (err instanceof Refused) {
      status = 200;   // OpenBench answers these with a 200 and {"error": ...}
      message = err.message;
    } else if (err instanceof BadRequest) {
      status = 400;
      message = `Bad Request: ${err.message}`;
    } else if (err instanceof HttpError || err instanceof BodyError) {
      ({ status, headers, message } = err);
    } else if (err instanceof Unavailable) {
      status = 503;
      message = err.message;
    } else if (err instanceof URIError) {
      status = 404;
      message = 'malformed path';
    } else if (err instanceof DatabaseError && err.code === 'P0002') {
      // the machine's allot host is gone (admin.js prune-hosts): OpenBench's
      // answer for a machine it no longer has
      status = 200;
      message = 'Bad Client Version: Bad Machine Id';
    } else if (err instanceof DatabaseError && ['22', '23'].includes(err.code.slice(0, 2))) {
      status = 400;   // a value the database refused (allot or setup.sql checked it)
      message = `Bad Request: ${err.message}`;
    } else {
      log(`internal error on ${req.method} ${urlPath}: ${err.stack ?? err}`);
    }
    note = `error: ${message}`;
    if (res.headersSent) res.destroy();
    else send(res, status, { error: message }, headers);
  }
  return { note };
}

// The database as the front end needs it: its schema set up, the farm's
// settings, and allot agreeing with the tests that stopped (a test marked
// finished in an earlier life whose allot workload was left active).
async function checkDatabase() {
  try {
    await pool.query('SELECT 1 FROM openbench.test LIMIT 0');
  } catch (err) {
    throw new Error(`${err.message}: run examples/openbench/setup.sql for this login first (README.md)`);
  }
  const { rows: [s] } = await pool.query(
    `SELECT current_setting('allot.count_requester', true) AS count_requester,
            current_setting('allot.repeat_upper', true) AS repeat_upper`);
  const profile = `allot.count_requester = ${s.count_requester ?? 'off'}, allot.repeat_upper = ${s.repeat_upper ?? '0'}`;
  if (s.count_requester === 'on' && Number(s.repeat_upper) === 1.25) log(`selection: OpenBench's 2024 profile (${profile})`);
  else log(`selection: ${profile}; OpenBench's own is count_requester = on, repeat_upper = 1.25 (README.md)`);
  const { rows } = await pool.query(
    'SELECT id FROM openbench.test WHERE finished_at IS NOT NULL AND openbench.finish_test(id)');
  for (const r of rows) log(`test ${r.id} had stopped: finished in allot too`);
}

async function start() {
  fs.mkdirSync(dataDir, { recursive: true });
  await checkDatabase();
  serve(handle, {
    host, port, requestTimeout: 300000, headersTimeout: 10000, graceMs: shutdownGraceMs,
    announce: () => `serving OpenBench workers at http://${host}:${port}/ (data in ${dataDir})`,
    release: () => pool.end(),
  });
}

start().catch((err) => {
  console.error(`cannot start: ${err.message}`);
  process.exit(1);
});
