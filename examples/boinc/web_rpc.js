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
//
// Query parameters are hostile until checked: an email address of at most
// 254 ASCII characters of an address's shape (lowercased, as the client
// does), passwd_hash of 32 hex digits, a user name through
// allot.check_name.  BOINC's tools read errors as <error><error_num>.
//
// The two password pages are guarded against guessing (throttle.js): at
// most config.passwordTries attempts a minute from one client address, both
// pages together, and at most 10 wrong passwords in 15 minutes for one email
// address, whoever sends them; past either the answer is "try later"
// without a look at the password.  Each try costs scrypt (accounts.js).

const { DatabaseError } = require('pg');
const xml = require('./xml');
const { Throttle } = require('./throttle');
const { Busy, ERR } = require('./accounts');

const EMAIL = /^[A-Za-z0-9.!#$%*+/=?^_{|}~'-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const PASSWD_HASH = /^[0-9a-f]{32}$/;
const MAX_NAME = 254;

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

function passwdHash(params) {
  const value = param(params, 'passwd_hash') ?? '';
  if (!PASSWD_HASH.test(value)) throw new RpcError(ERR.BAD_PASSWD, 'passwd_hash must be 32 hex digits (BOINC\'s md5 of password and email)');
  return value;
}

function makeWebRpc(db, accounts, config) {
  const { log } = config;
  const perAddress = new Throttle({ max: config.passwordTries, windowMs: 60000 });
  const perEmail = new Throttle({ max: 10, windowMs: 15 * 60000 });

  // The guards, then fn; every refusal as BOINC's <error>.
  async function guarded(req, what, fn) {
    const address = req.socket.remoteAddress ?? '?';
    try {
      if (!perAddress.hit(address)) {
        log(`${what}: refused, ${address} tried too often`);
        throw new RpcError(ERR.RETRY, `Too many attempts; try again in ${perAddress.retryAfter(address)} s`);
      }
      return await fn();
    } catch (err) {
      if (err instanceof RpcError) return error(err.num, err.message);
      if (err instanceof Busy) return error(ERR.RETRY, err.message);
      throw err;
    }
  }

  async function lookup(email, hash) {
    if (perEmail.over(email)) {
      throw new RpcError(ERR.RETRY, `Too many wrong passwords for this address; try again in ${perEmail.retryAfter(email)} s`);
    }
    const found = await accounts.lookup({ email, passwdHash: hash });
    if (found.error !== undefined) {
      perEmail.hit(email);
      throw new RpcError(found.error, found.message);
    }
    return found;
  }

  return {
    async projectConfig() {
      const { rows } = await db.query('SELECT DISTINCT platform FROM boinc.app_version ORDER BY platform');
      const w = new xml.Writer('project_config');
      w.el('name', config.projectName).el('master_url', config.baseUrl).el('web_rpc_url_base', config.baseUrl)
        .el('web_stopped', 0).el('sched_stopped', 0).el('min_passwd_length', 6);
      if (!config.accountCreation) w.flag('account_creation_disabled');
      w.open('platforms');
      for (const { platform } of rows) {
        w.open('platform').el('platform_name', platform).el('user_friendly_name', platform).close('platform');
      }
      w.close('platforms');
      return document(w.toString());
    },

    lookupAccount: (req, params) => guarded(req, 'lookup_account', async () => {
      const found = await lookup(email(params), passwdHash(params));
      log(`lookup_account: a new key of account ${found.id}`);
      return accountOut(found.key);
    }),

    createAccount: (req, params) => guarded(req, 'create_account', async () => {
      if (!config.accountCreation) throw new RpcError(ERR.ACCT_CREATION_DISABLED, 'The project is not accepting new accounts');
      const name = param(params, 'user_name') ?? '';
      if (name.length < 1 || name.length > MAX_NAME) {
        throw new RpcError(ERR.BAD_USER_NAME, `user_name must be 1 to ${MAX_NAME} characters`);
      }
      const address = email(params);
      if (perEmail.over(address)) throw new RpcError(ERR.RETRY, 'Too many wrong passwords for this address; try again later');
      let made;
      try {
        made = await accounts.create({ email: address, passwdHash: passwdHash(params), name });
      } catch (err) {
        // allot.check_name names the character it refuses.
        if (err instanceof DatabaseError && err.code === '22023') throw new RpcError(ERR.BAD_USER_NAME, err.message);
        throw err;
      }
      if (made.error !== undefined) {
        perEmail.hit(address);
        throw new RpcError(made.error, made.message);
      }
      log(`create_account: account ${made.id}, a key`);
      return accountOut(made.key);
    }),
  };
}

module.exports = { makeWebRpc };
