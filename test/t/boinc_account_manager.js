'use strict';
// A stand-in for an account manager (BAM!, GridRepublic, Science United),
// for test/t/021_boinc_project.pl: what such a manager does with a BOINC
// project's RPCs to attach a volunteer's computer, and nothing more.
//
//   node boinc_account_manager.js PORT PROJECT_URL USERS_JSON LOG
//
// USERS_JSON: {"LOGIN": {"password": P, "name": N, "resource_share": S}}.
// The BOINC client, told `boinccmd --join_acct_mgr http://127.0.0.1:PORT/
// LOGIN P`, posts an <acct_mgr_request> to rpc.php with LOGIN and
// md5(P + lowercase LOGIN).  The manager checks them, then, on the project:
//
//   create_account.php   the volunteer's account (LOGIN is her email
//                        address, so the hash is the project's passwd_hash
//                        too); an address already taken: lookup_account.php
//   am_set_info.php      her resource share, in <project_preferences>
//   am_get_info.php      read back: her account id and resource share
//
// and answers the client with the project's URL (signed with the manager's
// key, as the client demands) and her account key: the client attaches.
// Each step is logged to LOG, one line each, for the test to read.

const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');

const [port, projectUrl, usersJson, logFile] = process.argv.slice(2);
const users = JSON.parse(usersJson);
const log = (line) => fs.appendFileSync(logFile, `${line}\n`);
const md5 = (text) => crypto.createHash('md5').update(text).digest('hex');

// BOINC's hex lines (lib/crypt.cpp): 32 bytes a line, then ".".
function hexLines(bytes) {
  const hex = bytes.toString('hex');
  const lines = [];
  for (let i = 0; i < hex.length; i += 64) lines.push(hex.slice(i, i + 64));
  return `${lines.join('\n')}\n.\n`;
}
const pad = (b) => Buffer.concat([Buffer.alloc(128 - b.length), b]);
const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 1024, publicExponent: 65537 });
const jwk = publicKey.export({ format: 'jwk' });
const signingKey = `1024\n${hexLines(Buffer.concat([pad(Buffer.from(jwk.n, 'base64url')), pad(Buffer.from(jwk.e, 'base64url'))]))}`;
// The client checks a URL's signature as a file's: of the md5 of its text.
const sign = (text) => hexLines(crypto.privateEncrypt({ key: privateKey, padding: crypto.constants.RSA_PKCS1_PADDING },
  Buffer.from(md5(text), 'ascii')));

// One call of the project's RPCs; its XML.
function call(method, page, params) {
  const query = new URLSearchParams(params).toString();
  const url = new URL(page + (method === 'GET' ? `?${query}` : ''), projectUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method, headers: method === 'POST' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {},
    }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? query : undefined);
  });
}
const tag = (xml, name) => (new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml) ?? [])[1];

async function attach(login, passwordHash) {
  const user = users[login];
  if (!user || md5(user.password + login.toLowerCase()) !== passwordHash) return { error: -206, message: 'bad login' };
  let out = await call('GET', 'create_account.php', { email_addr: login, passwd_hash: passwordHash, user_name: user.name });
  if (tag(out, 'error_num') === '-137') out = await call('GET', 'lookup_account.php', { email_addr: login, passwd_hash: passwordHash });
  const key = tag(out, 'authenticator');
  if (!key) return { error: -1, message: `the project gave no key: ${out}` };
  log(`create_account.php: a key for ${login}`);
  const prefs = `<project_preferences>\n<resource_share>${user.resource_share}</resource_share>\n</project_preferences>\n`;
  out = await call('POST', 'am_set_info.php', { account_key: key, project_prefs: prefs });
  log(`am_set_info.php: ${/<success\/>/.test(out) ? 'success' : out.replace(/\s+/g, ' ')}`);
  out = await call('GET', 'am_get_info.php', { account_key: key });
  log(`am_get_info.php: id ${tag(out, 'id')}, resource_share ${tag(out, 'resource_share')}`);
  return { key };
}

http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', async () => {
    let reply;
    if (req.method === 'POST' && req.url === '/rpc.php') {
      const login = tag(body, 'name') ?? '';
      log(`rpc.php: a request of ${login}`);
      const r = await attach(login, tag(body, 'password_hash') ?? '').catch((err) => ({ error: -1, message: err.message }));
      reply = r.error !== undefined
        ? `<acct_mgr_reply>\n<error_num>${r.error}</error_num>\n<error_msg>${r.message}</error_msg>\n</acct_mgr_reply>\n`
        : `<acct_mgr_reply>\n<name>test account manager</name>\n<signing_key>\n${signingKey}</signing_key>\n<repeat_sec>86400</repeat_sec>\n` +
          `<account>\n<url>${projectUrl}</url>\n<url_signature>\n${sign(projectUrl)}</url_signature>\n` +
          `<authenticator>${r.key}</authenticator>\n</account>\n</acct_mgr_reply>\n`;
      log(`rpc.php: ${r.error === undefined ? 'told the client to attach' : `refused: ${r.message}`}`);
    } else {
      reply = '<html><body>test account manager</body></html>\n';
    }
    res.writeHead(200, { 'Content-Type': 'text/xml' });
    res.end(reply);
  });
}).listen(Number(port), '127.0.0.1', () => log(`listening on ${port}`));
process.on('SIGTERM', () => process.exit(0));
