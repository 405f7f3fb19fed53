'use strict';
// The pages BOINC's own tools call besides the scheduler, by BOINC's names
// and in its formats (html/user/*.php):
//
//   GET /get_project_config.php   the Manager's add-project wizard and
//                                 `boinccmd --get_project_config URL`
//   GET /lookup_account.php       `boinccmd --lookup_account URL EMAIL PASSWORD`,
//                                 the Manager's sign-in: a key of the account
//   GET /create_account.php       `boinccmd --create_account URL EMAIL PASSWORD NAME`,
//                                 the Manager's sign-up (ACCOUNT_CREATION=open)
//   GET /am_get_info.php          an account manager (BAM!, GridRepublic, Science
//                                 United) reads the account of a key: its id,
//                                 name, cpid, creation time and project
//                                 preferences (resource share)
//   GET|POST /am_set_info.php     and sets them: name, resource share (in
//                                 <project_preferences>), email address with
//                                 the password hash made with it, password
//                                 hash
//
// An account manager attaches a volunteer's computers with a key it gets
// from lookup_account.php or create_account.php, as any tool does; these
// two keep the account in step with the manager's settings.  Of BOINC's
// preferences only the resource share is kept (sent to the computers in
// every scheduler reply); global preferences, country, URL, venue and the
// like are taken and not kept, and a team is refused (the front end has
// none).
//
// Query parameters are hostile until checked: an email address of at most
// 254 ASCII characters of an address's shape (lowercased, as the client
// does), passwd_hash of 32 hex digits, a user name through
// allot.check_name.  BOINC's tools read errors as <error><error_num>.
//
// The password pages (these two, and web_pages.js's login) are guarded
// against guessing (config.guard, throttle.js): at most
// config.passwordTries attempts a minute from one client address, all pages
// together, and at most 10 wrong passwords in 15 minutes for one email
// address, whoever sends them; past either the answer is "try later"
// without a look at the password.  Each try costs scrypt (accounts.js),
// behind a gate shared fairly between sign-ups and lookups and between
// client addresses (fair_gate.js).

const crypto = require('node:crypto');
const { DatabaseError } = require('pg');
const xml = require('./xml');
const { Throttle } = require('./throttle');
const { Busy, ERR } = require('./accounts');
const notices = require('./notices');

const EMAIL = /^[A-Za-z0-9.!#$%*+/=?^_{|}~'-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const PASSWD_HASH = /^[0-9a-f]{32}$/;
const MAX_NAME = 254;
// What get_project_config.php says the server is.
const SERVER_VERSION = `allot examples/boinc ${require('./package.json').version}`;

const document = (body) => `<?xml version="1.0" encoding="UTF-8" ?>\n${body}`;

function error(num, message) {
  return document(`<error>\n    <error_num>${num}</error_num>\n    <error_msg>${xml.escape(message)}</error_msg>\n</error>\n`);
}

const accountOut = (key) => document(`<account_out>\n    <authenticator>${key}</authenticator>\n</account_out>\n`);

// A parameter: the one value of name, or null when it is missing.
function param(params, name) {
  const values = params.getAll(name);
  if (values.length > 1) throw new RpcError(-1, `${name} is given ${values.length} times`);
  return values[0] ?? null;
}

class RpcError extends Error {
  constructor(num, message) {
    super(message);
    this.num = num;
  }
}

function email(params) {
  const value = (param(params, 'email_addr') ?? '').toLowerCase();
  if (value.length > 254 || !EMAIL.test(value)) throw new RpcError(ERR.BAD_EMAIL_ADDR, 'Not an email address');
  return value;
}

function passwdHash(params, name = 'passwd_hash') {
  const value = param(params, name) ?? '';
  if (!PASSWD_HASH.test(value)) throw new RpcError(ERR.BAD_PASSWD, `${name} must be 32 hex digits (BOINC's md5 of password and email)`);
  return value;
}

// The guards of every password page: tries per client address, wrong
// passwords per email address, reset mails per email address.
function makeGuard({ passwordTries }) {
  return {
    perAddress: new Throttle({ max: passwordTries, windowMs: 60000 }),
    perEmail: new Throttle({ max: 10, windowMs: 15 * 60000 }),
    perEmailMail: new Throttle({ max: 3, windowMs: 60 * 60000 }),
  };
}

// What a project preferences document says of the resource share, or
// null when it does not say: <project_preferences>...<resource_share>N...
function resourceShareOf(text) {
  let doc;
  try {
    doc = xml.parse(text);
  } catch (err) {
    throw new RpcError(ERR.XML_PARSE, `Invalid project preferences: ${err.message}`);
  }
  const prefs = doc.project_preferences;
  if (prefs === undefined || (prefs !== '' && (typeof prefs !== 'object' || Array.isArray(prefs)))) {
    throw new RpcError(ERR.XML_PARSE, 'Invalid project preferences: no <project_preferences>');
  }
  const v = prefs === '' ? undefined : prefs.resource_share;
  if (v === undefined) return null;
  const share = typeof v === 'string' && /^[0-9]+(\.[0-9]*)?$/.test(v.trim()) ? Number(v) : NaN;
  if (!(share >= 0 && share <= 1e6)) throw new RpcError(ERR.XML_PARSE, 'Invalid project preferences: resource_share must be 0 to 1000000');
  return share;
}

function makeWebRpc(db, accounts, config) {
  const { log, guard } = config;
  const { perAddress, perEmail } = guard;

  // The guards, then fn(address); every refusal as BOINC's <error>.
  async function guarded(req, what, fn) {
    const address = req.socket.remoteAddress ?? '?';
    try {
      if (!perAddress.hit(address)) {
        log(`${what}: refused, ${address} tried too often`);
        throw new RpcError(ERR.RETRY, `Too many attempts; try again in ${perAddress.retryAfter(address)} s`);
      }
      return await fn(address);
    } catch (err) {
      if (err instanceof RpcError) return error(err.num, err.message);
      if (err instanceof Busy) return error(ERR.RETRY, err.message);
      throw err;
    }
  }

  async function lookup(email, hash, address) {
    if (perEmail.over(email)) {
      throw new RpcError(ERR.RETRY, `Too many wrong passwords for this address; try again in ${perEmail.retryAfter(email)} s`);
    }
    const found = await accounts.lookup({ email, passwdHash: hash }, address);
    if (found.error !== undefined) {
      perEmail.hit(email);
      throw new RpcError(found.error, found.message);
    }
    return found;
  }

  // The account of an account manager's key, or RpcError (BOINC's
  // ERR_DB_NOT_FOUND).  An unknown key counts against its address's tries.
  async function byKey(req, params) {
    const key = param(params, 'account_key') ?? '';
    const acct = /^[0-9a-f]{32}$/.test(key) ? await accounts.identify(key) : null;
    if (acct === null) {
      const address = req.socket.remoteAddress ?? '?';
      if (!perAddress.hit(address)) throw new RpcError(ERR.RETRY, `Too many attempts; try again in ${perAddress.retryAfter(address)} s`);
      throw new RpcError(ERR.DB_NOT_FOUND, 'No account has this key');
    }
    return accounts.get(acct.id);
  }

  // am_get_info/am_set_info: fn(), every refusal as BOINC's <error>.
  async function rpc(fn) {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof RpcError) return error(err.num, err.message);
      if (err instanceof Busy) return error(ERR.RETRY, err.message);
      if (err instanceof DatabaseError && err.code === '22023') return error(ERR.BAD_USER_NAME, err.message);
      throw err;
    }
  }

  return {
    async projectConfig() {
      const { rows } = await db.query('SELECT DISTINCT platform FROM boinc.app_version ORDER BY platform');
      const w = new xml.Writer('project_config');
      w.el('name', config.projectName).el('master_url', config.baseUrl).el('web_rpc_url_base', config.baseUrl)
        .el('server_version', SERVER_VERSION)
        .el('web_stopped', 0).el('sched_stopped', 0).el('min_passwd_length', 6);
      if (!config.accountCreation) w.flag('account_creation_disabled');
      w.open('platforms');
      for (const { platform } of rows) {
        w.open('platform').el('platform_name', platform).el('user_friendly_name', platform).close('platform');
      }
      w.close('platforms');
      return document(w.toString());
    },

    lookupAccount: (req, params) => guarded(req, 'lookup_account', async (address) => {
      const found = await lookup(email(params), passwdHash(params), address);
      log(`lookup_account: a new key of account ${found.id}`);
      return accountOut(found.key);
    }),

    createAccount: (req, params) => guarded(req, 'create_account', async (address) => {
      if (!config.accountCreation) throw new RpcError(ERR.ACCT_CREATION_DISABLED, 'The project is not accepting new accounts');
      const name = param(params, 'user_name') ?? '';
      if (name.length < 1 || name.length > MAX_NAME) {
        throw new RpcError(ERR.BAD_USER_NAME, `user_name must be 1 to ${MAX_NAME} characters`);
      }
      const emailAddr = email(params);
      if (perEmail.over(emailAddr)) throw new RpcError(ERR.RETRY, 'Too many wrong passwords for this address; try again later');
      let made;
      try {
        made = await accounts.create({ email: emailAddr, passwdHash: passwdHash(params), name }, address);
      } catch (err) {
        // allot.check_name names the character it refuses.
        if (err instanceof DatabaseError && err.code === '22023') throw new RpcError(ERR.BAD_USER_NAME, err.message);
        throw err;
      }
      if (made.error !== undefined) {
        perEmail.hit(emailAddr);
        throw new RpcError(made.error, made.message);
      }
      log(`create_account: account ${made.id}, a key`);
      return accountOut(made.key);
    }),

    amGetInfo: (req, params) => rpc(async () => {
      const a = await byKey(req, params);
      const cpid = crypto.createHash('md5').update(a.cross_project_id + (a.email_addr ?? '')).digest('hex');
      // BOINC's page urlencodes the name; the manager decodes it.
      return document(`<am_get_info_reply>
    <success/>
    <id>${a.id}</id>
    <name>${encodeURIComponent(a.name)}</name>
    <country></country>
    <cpid>${cpid}</cpid>
    <has_profile>0</has_profile>
    <create_time>${a.created}</create_time>
    <global_prefs>
</global_prefs>
    <project_prefs>
<project_preferences>
<resource_share>${Number(a.resource_share)}</resource_share>
</project_preferences>
</project_prefs>
    <url></url>
    <send_email>0</send_email>
    <show_hosts>0</show_hosts>
    <teamid>0</teamid>
    <venue></venue>
</am_get_info_reply>
`);
    }),

    amSetInfo: (req, params) => rpc(async () => {
      const a = await byKey(req, params);
      const changes = {};
      const name = param(params, 'name');
      if (name !== null && name !== '') {
        if (name.length > MAX_NAME) throw new RpcError(ERR.BAD_USER_NAME, `name must be at most ${MAX_NAME} characters`);
        changes.name = name;
      }
      const prefs = param(params, 'project_prefs');
      if (prefs !== null && prefs !== '') {
        if (prefs.length > 65536) throw new RpcError(ERR.XML_PARSE, 'Invalid project preferences: longer than 64 KiB');
        const share = resourceShareOf(prefs);
        if (share !== null) changes.resourceShare = share;
      }
      const teamid = param(params, 'teamid');
      if (teamid !== null && teamid !== '' && teamid !== '0') throw new RpcError(-1, 'This project has no teams');
      const newEmail = param(params, 'email_addr');
      if (newEmail !== null && newEmail !== '' && newEmail.toLowerCase() !== a.email_addr) changes.email = email(params);
      if (param(params, 'password_hash') !== null) changes.passwdHash = passwdHash(params, 'password_hash');
      if (Object.keys(changes).length === 0) return document('<am_set_info_reply>\n    <success/>\n</am_set_info_reply>\n');
      const told = [];
      if (changes.email !== undefined) told.push(`The email address of your account is now ${changes.email} (it was ${a.email_addr ?? 'none'}).`);
      else if (changes.passwdHash !== undefined) told.push('The password of your account was changed.');
      const failed = await accounts.update(a.id, changes, req.socket.remoteAddress ?? '?',
        (c) => (told.length ? notices.post(c, a.id, 'Account changed by your account manager', told.join(' ')) : null));
      if (failed) throw new RpcError(failed.error, failed.message);
      log(`am_set_info: account ${a.id}: ${Object.keys(changes).join(', ')}`);
      return document('<am_set_info_reply>\n    <success/>\n</am_set_info_reply>\n');
    }),
  };
}

module.exports = { makeWebRpc, makeGuard };
