'use strict';
// The volunteer's own pages, in a browser, by BOINC's names where BOINC
// has them:
//
//   GET  /login_form.php          email address and password
//   POST /login_action.php        a session cookie, then home.php
//   GET  /home.php                the account: name, email address, credit,
//                                 computers, resource share; the forms below
//   POST /edit_prefs.php          resource share (sent to every computer of
//                                 the account at its next scheduler request)
//   POST /edit_email.php          a new email address, with the password
//   POST /logout.php              the session ended
//   GET  /get_passwd.php          "forgot my password": an email address
//   POST /get_passwd.php          a reset link mailed (MAIL_COMMAND), valid
//                                 for an hour; the same answer whether or
//                                 not an account has the address
//   GET  /reset_password.php?token=T   a new password for it
//   POST /reset_password.php      the password set, every session ended
//
// A browser sends the password itself; the front end makes BOINC's
// passwd_hash of it (md5 of password and lowercase email address) and
// checks that as the client pages do (accounts.js: scrypt, behind the fair
// gate), within the same limits per client address and per email address
// (config.guard).  The session cookie is 128 random bits, HttpOnly,
// SameSite=Strict (Secure under https), kept as its SHA-256 for
// SESSION_SECS; every form of a session carries the session's own token,
// so that another site cannot post one.  Every value is checked, every
// output escaped; the pages load nothing and run nothing.

const crypto = require('node:crypto');
const xml = require('./xml');
const { keyHash, newKey, RESET_SECS } = require('./accounts');
const { Busy } = require('./fair_gate');
const credit = require('./credit');
const notices = require('./notices');
const { html } = require('./pages');

const COOKIE = 'boinc_session';
const EMAIL = /^[A-Za-z0-9.!#$%*+/=?^_{|}~'-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const TOKEN = /^[0-9a-f]{32}$/;
const MIN_PASSWORD = 6;
const MAX_PASSWORD = 256;

const e = xml.escape;
const md5 = (text) => crypto.createHash('md5').update(text, 'utf8').digest('hex');
// BOINC's passwd_hash: what a client sends for this password.
const passwdHash = (password, email) => md5(password + email.toLowerCase());

class PageRefusal extends Error {}

function page(projectName, title, body, status = 200) {
  return {
    status,
    type: 'text/html; charset=utf-8',
    body: html(projectName, title, body),
  };
}

const redirect = (to, headers = {}) => ({ status: 303, type: 'text/plain', body: `see ${to}\n`, headers: { Location: to, ...headers } });

// One form field: its one value, or '' when missing.
function field(form, name, max = 254) {
  const values = form.getAll(name);
  if (values.length > 1) throw new PageRefusal(`${name} is given ${values.length} times`);
  const v = values[0] ?? '';
  if (v.length > max) throw new PageRefusal(`${name} is longer than ${max} characters`);
  return v;
}

function emailField(form, name = 'email_addr') {
  const v = field(form, name).trim().toLowerCase();
  if (!EMAIL.test(v)) throw new PageRefusal('That is not an email address.');
  return v;
}

function passwordField(form, name = 'passwd') {
  const v = field(form, name, MAX_PASSWORD);
  if (v.length < MIN_PASSWORD) throw new PageRefusal(`A password has at least ${MIN_PASSWORD} characters.`);
  return v;
}

function cookies(req) {
  const out = new Map();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  return out;
}

function makeWebPages(db, accounts, config) {
  const { log, guard, mail } = config;
  const secure = new URL(config.baseUrl).protocol === 'https:';
  const sessionSecs = config.sessionSecs ?? 86400;
  const show = (title, body, status) => page(config.projectName, title, body, status);
  const refusal = (title, message, status = 400) => show(title, `<p>${e(message)}</p>`, status);

  // The session a request carries: {accountId, formToken}, or null.
  async function session(req) {
    const key = cookies(req).get(COOKIE);
    if (!key || !TOKEN.test(key)) return null;
    const { rows } = await db.query(
      'SELECT account_id, form_token FROM boinc.web_session WHERE key_sha256 = $1 AND expires_at > now()', [keyHash(key)]);
    return rows[0] ? { accountId: rows[0].account_id, formToken: rows[0].form_token, key } : null;
  }

  // A POST of a logged-in volunteer: the session, its form token checked.
  async function posted(req, form) {
    const s = await session(req);
    if (s === null) throw new PageRefusal('Log in first.');
    const sent = field(form, 'form_token', 64);
    if (sent.length !== s.formToken.length || !crypto.timingSafeEqual(Buffer.from(sent), Buffer.from(s.formToken))) {
      throw new PageRefusal('This form is not one this project gave you; reload the page.');
    }
    return s;
  }

  // The guards of the password pages (web_rpc.js's, shared): per client
  // address, then per email address.
  function guarded(req, email) {
    const address = req.socket.remoteAddress ?? '?';
    if (!guard.perAddress.hit(address)) {
      throw new PageRefusal(`Too many attempts; try again in ${guard.perAddress.retryAfter(address)} s.`);
    }
    if (email !== null && guard.perEmail.over(email)) {
      throw new PageRefusal(`Too many wrong passwords for this address; try again in ${guard.perEmail.retryAfter(email)} s.`);
    }
    return address;
  }

  const loginForm = (message = '') => show('Log in', `${message ? `<p>${e(message)}</p>\n` : ''}<form method="post" action="login_action.php">
<p><label>Email address <input name="email_addr" type="email" autocomplete="username" required></label></p>
<p><label>Password <input name="passwd" type="password" autocomplete="current-password" required></label></p>
<p><button>Log in</button></p>
</form>
${mail.enabled ? '<p><a href="get_passwd.php">Forgot your password?</a></p>' : ''}`);

  async function home(req) {
    const s = await session(req);
    if (s === null) return redirect('login_form.php');
    const a = await accounts.get(s.accountId);
    if (a === null) return redirect('login_form.php');
    const { rows: hosts } = await db.query('SELECT host_id FROM boinc.host WHERE account_id = $1', [a.id]);
    const ids = hosts.map((h) => h.host_id);
    const c = credit.sum(await credit.hostCredit(db, ids), ids);
    const token = `<input type="hidden" name="form_token" value="${e(s.formToken)}">`;
    return show(`Your account, ${a.name}`, `<table>
<tr><th>name</th><td>${e(a.name)}</td></tr>
<tr><th>email address</th><td>${e(a.email_addr ?? '')}</td></tr>
<tr><th>computers</th><td>${ids.length}</td></tr>
<tr><th>total credit</th><td>${c.total.toFixed(2)}</td></tr>
<tr><th>recent average credit</th><td>${c.expavg.toFixed(2)}</td></tr>
<tr><th>resource share</th><td>${e(a.resource_share)}</td></tr>
</table>
<h2>Preferences</h2>
<form method="post" action="edit_prefs.php">${token}
<p><label>Resource share (0 to 1000000; 100 is the default) <input name="resource_share" value="${e(a.resource_share)}"></label></p>
<p><button>Save</button></p>
</form>
<h2>Email address</h2>
<form method="post" action="edit_email.php">${token}
<p><label>New email address <input name="email_addr" type="email" required></label></p>
<p><label>Your password <input name="passwd" type="password" autocomplete="current-password" required></label></p>
<p><button>Change</button></p>
</form>
<form method="post" action="logout.php">${token}<p><button>Log out</button></p></form>`);
  }

  async function login(req, form) {
    const email = emailField(form);
    const password = field(form, 'passwd', MAX_PASSWORD);
    const address = guarded(req, email);
    const found = await accounts.check({ email, passwdHash: passwdHash(password, email) }, address);
    if (found.error !== undefined) {
      guard.perEmail.hit(email);
      log(`login: refused for ${address}`);
      return loginForm('Wrong email address or password.');
    }
    const key = newKey();
    await db.query(
      `INSERT INTO boinc.web_session (key_sha256, account_id, form_token, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4))`, [keyHash(key), found.id, newKey(), sessionSecs]);
    // Sessions long over go when someone logs in: the table stays small.
    await db.query("DELETE FROM boinc.web_session WHERE expires_at < now() - interval '1 day'");
    log(`login: account ${found.id}, a session`);
    const cookie = `${COOKIE}=${key}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${sessionSecs}${secure ? '; Secure' : ''}`;
    return redirect('home.php', { 'Set-Cookie': cookie });
  }

  async function editPrefs(req, form) {
    const s = await posted(req, form);
    const text = field(form, 'resource_share', 32).trim();
    const share = Number(text);
    if (!/^[0-9]+(\.[0-9]+)?$/.test(text) || !(share >= 0 && share <= 1e6)) {
      throw new PageRefusal('A resource share is a number from 0 to 1000000.');
    }
    await accounts.update(s.accountId, { resourceShare: share }, req.socket.remoteAddress ?? '?');
    log(`edit_prefs: account ${s.accountId}, resource share ${share}`);
    return redirect('home.php');
  }

  async function editEmail(req, form) {
    const s = await posted(req, form);
    const email = emailField(form);
    const password = field(form, 'passwd', MAX_PASSWORD);
    const a = await accounts.get(s.accountId);
    const address = guarded(req, a.email_addr);
    // The password, checked against the address it was made with.
    const found = await accounts.check({ email: a.email_addr, passwdHash: passwdHash(password, a.email_addr) }, address);
    if (found.error !== undefined || found.id !== a.id) {
      guard.perEmail.hit(a.email_addr);
      throw new PageRefusal('Wrong password.');
    }
    const failed = await accounts.update(a.id, { email, passwdHash: passwdHash(password, email) }, address,
      (c) => notices.post(c, a.id, 'Email address changed',
        `The email address of your account is now ${email} (it was ${a.email_addr}). Use it to log in.`));
    if (failed) throw new PageRefusal(failed.message);
    log(`edit_email: account ${a.id}`);
    return redirect('home.php');
  }

  async function logout(req, form) {
    const s = await posted(req, form);
    await db.query('DELETE FROM boinc.web_session WHERE key_sha256 = $1', [keyHash(s.key)]);
    return redirect('login_form.php', { 'Set-Cookie': `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0` });
  }

  const forgotForm = () => show('Forgot your password?', mail.enabled
    ? `<form method="post" action="get_passwd.php">
<p><label>Your account's email address <input name="email_addr" type="email" required></label></p>
<p><button>Send me a link</button></p>
</form>`
    : '<p>This project sends no email: ask its operator to reset your password.</p>');

  async function forgot(req, form) {
    if (!mail.enabled) return forgotForm();
    const email = emailField(form);
    const address = guarded(req, null);
    // At most three mails an hour to an address, whoever asks.
    if (!guard.perEmailMail.hit(email)) {
      throw new PageRefusal(`A link was mailed to this address lately; try again in ${guard.perEmailMail.retryAfter(email)} s.`);
    }
    const made = await accounts.resetToken(email);
    if (made !== null) {
      const link = new URL(`reset_password.php?token=${made.token}`, config.baseUrl).href;
      // Not awaited: the answer must not tell, by its time, whether an
      // account has the address.
      mail.send(email, `${config.projectName}: your password`,
        `Hello ${made.name},\n\nsomeone (you, we hope) asked to reset the password of your account at ` +
        `${config.projectName}. To choose a new one, open this link within ${RESET_SECS / 60} minutes:\n\n${link}\n\n` +
        'If you did not ask, ignore this message: your password stays as it is.\n')
        .catch((err) => log(`mail: ${err.message}`));
      log(`get_passwd: a reset link for account ${made.id} (from ${address})`);
    } else {
      log(`get_passwd: no account has the address given (from ${address})`);
    }
    return show('Forgot your password?', '<p>If an account has this address, a message with a link to reset its password is on its way. The link works for an hour.</p>');
  }

  async function resetForm(params) {
    const token = params.get('token') ?? '';
    if (!TOKEN.test(token) || await accounts.resetTarget(token) === null) {
      return refusal('Reset your password', 'This link is not valid, or no longer: ask for another.', 404);
    }
    return show('Reset your password', `<form method="post" action="reset_password.php">
<input type="hidden" name="token" value="${e(token)}">
<p><label>New password (at least ${MIN_PASSWORD} characters) <input name="passwd" type="password" autocomplete="new-password" required></label></p>
<p><button>Set it</button></p>
</form>`);
  }

  async function reset(req, form) {
    const token = field(form, 'token', 64);
    const password = passwordField(form);
    const address = guarded(req, null);
    const target = TOKEN.test(token) ? await accounts.resetTarget(token) : null;
    const id = target === null ? null : await accounts.resetPassword(token, passwdHash(password, target.email_addr), address,
      (c, accountId) => notices.post(c, accountId, 'Password changed',
        'The password of your account was reset through a link mailed to you. If you did not do it, reset it again.'));
    if (id === null) return refusal('Reset your password', 'This link is not valid, or no longer: ask for another.', 404);
    log(`reset_password: account ${id}, a new password`);
    return show('Reset your password', '<p>Your password is set. <a href="login_form.php">Log in</a> with it; BOINC\'s own tools (the Manager, boinccmd) take it too.</p>');
  }

  // The routes: GET ones take the query, POST ones the form.
  const routes = {
    'GET /login_form.php': () => loginForm(),
    'POST /login_action.php': (req, form) => login(req, form),
    'GET /home.php': (req) => home(req),
    'POST /edit_prefs.php': (req, form) => editPrefs(req, form),
    'POST /edit_email.php': (req, form) => editEmail(req, form),
    'POST /logout.php': (req, form) => logout(req, form),
    'GET /get_passwd.php': () => forgotForm(),
    'POST /get_passwd.php': (req, form) => forgot(req, form),
    'GET /reset_password.php': (req, params) => resetForm(params),
    'POST /reset_password.php': (req, form) => reset(req, form),
  };

  return {
    // Whether path is one of these pages, and with which methods.
    methods: (path) => ['GET', 'POST'].filter((m) => Object.hasOwn(routes, `${m} ${path}`)),

    // The answer {status, type, body, headers}: params are the query (GET)
    // or the form (POST), URLSearchParams either way.
    async answer(req, path, params) {
      try {
        return await routes[`${req.method} ${path}`](req, params);
      } catch (err) {
        if (err instanceof PageRefusal) return refusal('Sorry', err.message);
        if (err instanceof Busy) return refusal('Sorry', `${err.message}.`, 503);
        if (err.code === '22023') return refusal('Sorry', err.message);   // allot.check_name
        throw err;
      }
    },
  };
}

module.exports = { makeWebPages, passwdHash };
