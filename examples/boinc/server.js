'use strict';
// A BOINC project served by allot: the master page, the scheduler, file
// downloads and the upload handler, the pages volunteers' tools and account
// managers call, the volunteers' own pages (login, preferences, password
// reset), their notices, the statistics exports and the farm's status page,
// in one process over one connection pool.  Settings come from the
// environment:
//
//   PORT=8081 HOST=127.0.0.1 URL=http://boinc.example.org/ DATA_DIR=/srv/boinc \
//   PROJECT_NAME='My project' PGDATABASE=farm PGUSER=boinc_web node server.js
//
// PORT defaults to 8081, beside the example web layer's 8080 (examples/web),
// so that both can run on one machine.  URL is the master URL volunteers
// attach to (default http://HOST:PORT/);
// DATA_DIR holds keys/ (from `node admin.js setup`), download/ and upload/.
// The database login must be a member of allot_web and own schema boinc.

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { makePool, makeDb, Unavailable } = require('allot-common/database');
const { log, serve, readBody, BodyError } = require('allot-common/http_server');
const { envInt, orExit } = require('allot-common/settings');
const { makeScheduler } = require('./scheduler');
const { makeAccounts } = require('./accounts');
const { makeResults } = require('./results');
const { makeWebRpc, makeGuard } = require('./web_rpc');
const { makeWebPages } = require('./web_pages');
const { makeNotices } = require('./notices');
const { makeMail } = require('./mail');
const { makePages, PageError } = require('./pages');
const { makeStats } = require('./stats');
const files = require('./files');
const intake = require('./intake');
const signing = require('./signing');
const xml = require('./xml');
// The farm's status page (GET /status) is examples/web's.
const status = require('allot-web/status');

const port = envInt('PORT', 8081);
const host = process.env.HOST || '127.0.0.1';
const baseUrl = new URL(process.env.URL || `http://${host}:${port}/`).href;
const dataDir = path.resolve(process.env.DATA_DIR || 'data');
const projectName = process.env.PROJECT_NAME || 'allot BOINC project';
const maxRequestBytes = envInt('MAX_REQUEST_BYTES', 8 * 1024 * 1024);
const shutdownGraceMs = envInt('SHUTDOWN_GRACE_MS', 10000);

const limits = {
  maxResults: envInt('MAX_RESULTS_PER_REQUEST', 200),
  maxHeld: envInt('MAX_HELD_RESULTS', 20000),
  maxCoprocs: 64,
  maxRequestDelay: envInt('MAX_REQUEST_DELAY', 60),
  maxNextRpcDelay: envInt('MAX_NEXT_RPC_DELAY', 86400),
  badRequestDelay: 3600,
  memoryBound: envInt('RSC_MEMORY_BOUND', 1e9),
  diskBound: envInt('RSC_DISK_BOUND', 1e9),
  // How long an account's other hosts' credit is kept (scheduler.js), and
  // for how many accounts at most.
  creditCacheSecs: envInt('ACCOUNT_CREDIT_SECS', 60),
  creditCacheAccounts: envInt('ACCOUNT_CREDIT_CACHE', 10000),
  // How long a workload whose app version has no executable is not asked
  // for, per kind of host (results.js).
  excludeSecs: envInt('NO_EXECUTABLE_RETRY_SECS', 60),
  // Hosts an account may have, and make in a day (hosts.js); 0: no limit.
  maxHostsPerAccount: envInt('MAX_HOSTS_PER_ACCOUNT', 100),
  newHostsPerDay: envInt('NEW_HOSTS_PER_DAY', 10),
};

let codeSignKey;
try {
  codeSignKey = signing.loadPublicKeyText(dataDir);
} catch (err) {
  console.error(`no code signing key in ${dataDir}/keys (${err.message}): run node admin.js setup first`);
  process.exit(2);
}
for (const dir of [files.downloadDir(dataDir), files.uploadDir(dataDir)]) fs.mkdirSync(dir, { recursive: true, mode: 0o755 });

const pool = makePool('allot-boinc', { statementTimeoutMs: 30000, log });
const db = makeDb(pool, log);
const parser = intake.makeParser({
  parseMs: envInt('PARSE_TIMEOUT_MS', 5000),
  inlineBytes: envInt('INLINE_PARSE_BYTES', intake.INLINE_PARSE_BYTES),
});
const config = { baseUrl, projectName, dataDir, codeSignKey, limits, log, parser };
const accounts = makeAccounts(db, {
  maxKeys: envInt('MAX_KEYS_PER_ACCOUNT', 20),
  scryptAtOnce: 2,
  cacheSecs: envInt('ACCOUNT_KEY_CACHE_SECS', 60),
  cacheSize: envInt('ACCOUNT_KEY_CACHE', 10000),
});
const results = makeResults(db, config);
const notices = makeNotices(db, { ...config, noticePollSecs: envInt('NOTICE_POLL_SECS', 3600) });
const scheduler = makeScheduler(db, results, notices, config);
const guard = makeGuard({ passwordTries: envInt('PASSWORD_TRIES_PER_MINUTE', 10) });
const webRpc = makeWebRpc(db, accounts, {
  ...config,
  guard,
  accountCreation: (process.env.ACCOUNT_CREATION || 'closed') === 'open',
});
const mail = makeMail({ command: process.env.MAIL_COMMAND || '', from: process.env.MAIL_FROM || '', log,
  timeoutMs: envInt('MAIL_TIMEOUT_MS', 30000) });
const webPages = makeWebPages(db, accounts, { ...config, guard, mail, sessionSecs: envInt('SESSION_SECS', 86400) });
const pages = makePages(db, config);
const stats = makeStats(db, { ...config, maxAgeSecs: envInt('STATS_MAX_AGE', 3600) });
// The farm's status page when STATUS_PGUSER is set (examples/web/status.js);
// a bad STATUS_* setting stops the server, as a bad number does.
const statusPage = orExit(() => status.fromEnv(process.env, log));

// The master page: clients look in it, line by line, for the scheduler.
const masterPage = `<!DOCTYPE html>
<html><head><title>${xml.escape(projectName)}</title>
<link rel="boinc_scheduler" href="${xml.escape(new URL('scheduler', baseUrl).href)}">
</head><body>
<h1>${xml.escape(projectName)}</h1>
<p>A BOINC project whose jobs are scheduled by allot. Attach with
<code>boinccmd --project_attach ${xml.escape(baseUrl)} YOUR_ACCOUNT_KEY</code>.</p>
</body></html>
`;

function send(res, status, type, body, headers = {}) {
  const bytes = Buffer.from(body);
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': bytes.length, 'Cache-Control': 'no-store', ...headers });
  res.end(bytes);
}

class HttpError extends Error {
  constructor(status, message, headers = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

// Hosts (account, host id) with a scheduler request in progress.
const inProgress = new Set();

// A scheduler request: its sender is known from its first bytes before the
// rest is read, and only a known account's request is parsed (intake.js).
async function schedule(req, res) {
  const pre = await intake.readPreamble(req).catch(() => {
    throw new HttpError(400, 'the request body was cut off');
  });
  const who = intake.sender(pre);
  const acct = who === null ? null : await accounts.identify(who.authenticator);
  if (acct === null) {
    intake.discard(req, pre, maxRequestBytes);
    // How many of its bytes were looked at: the rest is dropped unread.
    const seen = `examined ${intake.examined(pre)} of its bytes, the rest dropped unread`;
    log(who === null
      ? `refused a scheduler request: no <authenticator> in its first ${intake.PREAMBLE_BYTES} bytes; ${seen}`
      : `refused a scheduler request: unknown authenticator (hostid ${who.hostid}); ${seen}`);
    send(res, 200, 'text/xml', who === null
      ? scheduler.refuse.bad(`no <authenticator> in its first ${intake.PREAMBLE_BYTES} bytes`)
      : scheduler.refuse.unknown(), { Connection: 'close' });
    return;
  }
  const key = `${acct.id}/${who.hostid}`;
  if (inProgress.has(key)) {
    intake.discard(req, pre, maxRequestBytes);
    log(`refused a scheduler request of account ${acct.id}, host ${who.hostid}: another is in progress`);
    send(res, 200, 'text/xml', scheduler.refuse.busy(), { Connection: 'close' });
    return;
  }
  inProgress.add(key);
  try {
    const body = await intake.readRest(req, pre, maxRequestBytes).catch((err) => {
      throw err instanceof intake.TooLarge
        ? new HttpError(413, err.message, { Connection: 'close' })
        : new HttpError(400, 'the request body was cut off');
    });
    // The client says x-www-form-urlencoded; the body is the raw XML.
    send(res, 200, 'text/xml', await scheduler.handle(body, acct, who.authenticator));
  } finally {
    inProgress.delete(key);
  }
}

// The pages that answer GET with a query (web_rpc.js, notices.js, pages.js).
const asXml = (body) => ({ type: 'text/xml', body });
const queryPages = {
  '/get_project_config.php': () => webRpc.projectConfig().then(asXml),
  '/lookup_account.php': (req, params) => webRpc.lookupAccount(req, params).then(asXml),
  '/create_account.php': (req, params) => webRpc.createAccount(req, params).then(asXml),
  '/am_get_info.php': (req, params) => webRpc.amGetInfo(req, params).then(asXml),
  '/notices.php': (req, params) => notices.feed(params).then((body) => ({ type: 'application/xml', body })),
  '/server_status.php': (req, params) => pages.serverStatus(params),
  '/show_user.php': (req, params) => pages.showUser(params),
  '/show_host_detail.php': (req, params) => pages.showHost(params),
};

// Headers of every page: nothing is loaded or run, a form posts only here.
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
};

// A page's parameters: the query of a GET, the form of a POST (at most
// 64 KiB, application/x-www-form-urlencoded).
async function params(req) {
  if (req.method !== 'POST') return new URL(req.url, 'http://query.invalid').searchParams;
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new HttpError(415, 'a form must be application/x-www-form-urlencoded');
  }
  const body = await readBody(req, 65536).catch((err) => {
    throw err instanceof BodyError ? new HttpError(err.status, err.message, err.headers) : err;
  });
  return new URLSearchParams(body.toString('utf8'));
}

async function handle(req, res) {
  const urlPath = req.url.split('?', 1)[0];
  try {
    const route = (methods) => {
      if (!methods.includes(req.method)) {
        throw new HttpError(405, `${urlPath} takes ${methods.join(', ')}`, { Allow: methods.join(', ') });
      }
    };
    if (urlPath === '/' || urlPath === '/index.html') {
      route(['GET', 'HEAD']);
      send(res, 200, 'text/html; charset=utf-8', masterPage);
    } else if (urlPath === '/scheduler') {
      route(['POST']);
      await schedule(req, res);
    } else if (urlPath.startsWith('/download/')) {
      route(['GET', 'HEAD']);
      await files.download(req, res, dataDir, decodeURIComponent(urlPath.slice('/download/'.length)));
    } else if (urlPath === '/file_upload_handler') {
      route(['POST']);
      await files.upload(req, res, { dataDir, lookup: results.uploadTarget, log });
    } else if (Object.hasOwn(queryPages, urlPath)) {
      route(['GET']);
      const { type, body } = await queryPages[urlPath](req, new URL(req.url, 'http://query.invalid').searchParams);
      send(res, 200, type, body, PAGE_HEADERS);
    } else if (urlPath === '/am_set_info.php') {
      // BOINC's takes its parameters from the query or a posted form.
      route(['GET', 'POST']);
      send(res, 200, 'text/xml', await webRpc.amSetInfo(req, await params(req)), PAGE_HEADERS);
    } else if (webPages.methods(urlPath).length > 0) {
      route(webPages.methods(urlPath));
      const { status, type, body, headers = {} } = await webPages.answer(req, urlPath, await params(req));
      send(res, status, type, body, { ...PAGE_HEADERS, ...headers });
    } else if (urlPath.startsWith('/stats/')) {
      route(['GET', 'HEAD']);
      if (!await stats.serve(req, res, urlPath.slice('/stats/'.length))) throw new HttpError(404, 'no such file');
    } else {
      throw new HttpError(404, 'no such page');
    }
  } catch (err) {
    let status = 500;
    let headers = {};
    if (err instanceof HttpError) ({ status, headers } = err);
    else if (err instanceof PageError) status = err.status;
    else if (err instanceof Unavailable) status = 503;
    else if (err instanceof URIError) status = 404;
    else log(`internal error on ${req.method} ${urlPath}: ${err.stack ?? err}`);
    if (res.headersSent) res.destroy();
    else {
      const told = err instanceof HttpError || err instanceof PageError;
      send(res, status, 'text/plain', `${told ? err.message : http.STATUS_CODES[status]}\n`, headers);
    }
  }
}

async function start() {
  // The front end's own tables, created by the login that owns schema boinc.
  await pool.query(fs.readFileSync(path.join(__dirname, 'schema.sql'), 'utf8'));
  serve(statusPage ? statusPage.wrap(handle) : handle, {
    host, port, requestTimeout: 120000, headersTimeout: 10000, graceMs: shutdownGraceMs,
    announce: () => `serving ${projectName} at ${baseUrl} (listening on ${host}:${port}, data in ${dataDir})`,
    release: async () => {
      parser.close();
      await Promise.all([pool.end(), statusPage?.end()]);
    },
  });
}

start().catch((err) => {
  console.error(`cannot start: ${err.message}`);
  process.exit(1);
});
