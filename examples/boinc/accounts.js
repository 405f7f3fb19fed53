'use strict';
// Accounts, their keys and their passwords.
//
// Keys.  A key (BOINC's "authenticator", the account key a volunteer
// attaches with) is 128 random bits in hex.  Only its SHA-256 is kept
// (boinc.account_key): a copy of the database attaches no host.  So the
// front end can never give a key back, and lookup_account.php, which must
// answer with one, makes a new key each time the password is right, up to
// maxKeys per account, the key used longest ago making way.  Every key of
// an account is the account: a volunteer's hosts may each use another.
//
// Passwords.  A BOINC client never sends the password itself: it sends
// md5(password + lowercase email), BOINC's "passwd_hash", and that hash is
// what a thief would replay.  The front end keeps only scrypt of it (N 2^15,
// r 8, p 1, a random salt per account: about 0.1 s and 32 MiB a try).
// scrypt runs in libuv's thread pool, off the event loop, behind a gate
// (fair_gate.js): at most scryptAtOnce at a time, so that a flood of logins
// cannot take the threads the file uploads need, the waiting shared fairly
// between setting and checking passwords, and between client addresses.
//
// A forgotten password is reset with a token sent by mail (web_pages.js):
// 128 random bits, kept as their SHA-256, one per account, for an hour,
// used once.

const crypto = require('node:crypto');
const { promisify } = require('node:util');
const { makeFairGate, Busy } = require('./fair_gate');

const scrypt = promisify(crypto.scrypt);

// BOINC's error numbers (lib/error_numbers.h) that its tools show.
const ERR = {
  XML_PARSE: -112,
  DB_NOT_FOUND: -136,
  DB_NOT_UNIQUE: -137,
  RETRY: -199,
  BAD_EMAIL_ADDR: -205,
  BAD_PASSWD: -206,
  ACCT_CREATION_DISABLED: -208,
  BAD_USER_NAME: -188,
};

const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 << 20 };
const RESET_SECS = 3600;

const newKey = () => crypto.randomBytes(16).toString('hex');
const keyHash = (key) => crypto.createHash('sha256').update(key, 'utf8').digest();

function makeAccounts(db, { maxKeys = 20, scryptAtOnce = 2, cacheSecs = 60, cacheSize = 10000 } = {}) {
  const gate = makeFairGate({ running: scryptAtOnce });

  // Keys found, by their SHA-256 (hex): {account, at (ms)}, kept cacheSecs,
  // at most cacheSize of them, so that the hosts of an account with many
  // ask without a lookup each.  A key this process drops (issueKey) is
  // dropped here at once; one dropped elsewhere (an account deleted by the
  // operator) works at most cacheSecs longer.  Unknown keys are not kept.
  const known = new Map();
  const forgetAccount = (accountId) => {
    for (const [hash, k] of known) if (k.account.id === accountId) known.delete(hash);
  };

  // scrypt through the gate: kind 'new' or 'check', who {client, email}.
  const derive = (kind, who, passwdHash, salt, p) => gate.run(kind, who.client, who.email,
    () => scrypt(passwdHash, salt, 32, { ...SCRYPT, N: p.N, r: p.r, p: p.p }));

  // 'scrypt$N$r$p$salt$hash' (base64), so that the cost can be raised later.
  async function hashPassword(passwdHash, who) {
    const salt = crypto.randomBytes(16);
    const hash = await derive('new', who, passwdHash, salt, SCRYPT);
    return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
  }

  // A stored hash to check against when there is none, so that an unknown
  // email address takes as long to refuse as a wrong password.  Made once,
  // outside the gate's lines (it is the front end's own work).
  let decoy = null;

  async function passwordMatches(stored, passwdHash, who) {
    decoy ??= hashPassword(newKey(), { client: 'decoy', email: null });
    const parts = (stored ?? await decoy).split('$');
    const [N, r, p] = parts.slice(1, 4).map(Number);
    const want = Buffer.from(parts[5], 'base64');
    const have = await derive('check', who, passwdHash, Buffer.from(parts[4], 'base64'), { N, r, p });
    return stored !== null && want.length === have.length && crypto.timingSafeEqual(want, have);
  }

  // A new key for the account, the keys used longest ago beyond maxKeys
  // dropped.  Runs in the caller's transaction.
  async function issueKey(c, accountId) {
    const key = newKey();
    forgetAccount(accountId);
    await c.query('INSERT INTO boinc.account_key (key_sha256, account_id) VALUES ($1, $2)', [keyHash(key), accountId]);
    await c.query(
      `DELETE FROM boinc.account_key WHERE key_sha256 IN (
         SELECT key_sha256 FROM boinc.account_key WHERE account_id = $1
          ORDER BY coalesce(used_at, created_at) DESC, created_at DESC OFFSET $2)`, [accountId, maxKeys]);
    return key;
  }

  return {
    // The account a key names: {id, name, created, resource_share}, or null.  Notes the
    // key's use, at most once an hour (it decides which key makes way).
    async identify(authenticator) {
      if (authenticator === '') return null;
      const hash = keyHash(authenticator);
      const hex = hash.toString('hex');
      const now = Date.now();
      const kept = known.get(hex);
      if (kept !== undefined && now - kept.at <= cacheSecs * 1000) return kept.account;
      const { rows } = await db.query({
        name: 'boinc-account',
        text: `WITH used AS (
                 UPDATE boinc.account_key SET used_at = now()
                  WHERE key_sha256 = $1 AND (used_at IS NULL OR used_at < now() - interval '1 hour'))
               SELECT a.id, a.name, extract(epoch FROM a.created_at)::bigint AS created, a.resource_share
                 FROM boinc.account_key k JOIN boinc.account a ON a.id = k.account_id
                WHERE k.key_sha256 = $1`,
        values: [hash],
      });
      known.delete(hex);
      if (rows[0] === undefined) return null;
      const account = rows[0];
      if (cacheSecs > 0) {
        known.set(hex, { account, at: now });
        if (known.size > cacheSize) known.delete(known.keys().next().value);
      }
      return account;
    },

    // A new account, or a new key of the account of that email address
    // when the password is its own (BOINC's answer to a repeated sign-up).
    // Inputs are checked by the caller; the name goes through
    // allot.check_name.  client: the address it comes from (the gate's
    // line).  Returns {id, key} or {error, message}.
    async create({ email, passwdHash, name }, client) {
      const stored = await hashPassword(passwdHash, { client, email });
      const made = await db.transaction(async (c) => {
        const { rows } = await c.query(
          `INSERT INTO boinc.account (name, email_addr, passwd_scrypt)
           VALUES (allot.check_name('user name', $1), $2, $3)
           ON CONFLICT (email_addr) DO NOTHING RETURNING id`, [name, email, stored]);
        return rows[0] ? { id: rows[0].id, key: await issueKey(c, rows[0].id) } : null;
      });
      if (made !== null) return made;
      const found = await this.lookup({ email, passwdHash }, client);
      return found.error === undefined ? found
        : { error: ERR.DB_NOT_UNIQUE, message: 'An account with this email address exists' };
    },

    // The account of that email address and password: {id} (no key made),
    // or {error, message}, the same for an unknown address as for a wrong
    // password, and as slow.
    async check({ email, passwdHash }, client) {
      const { rows } = await db.query('SELECT id, passwd_scrypt FROM boinc.account WHERE email_addr = $1', [email]);
      if (!await passwordMatches(rows[0]?.passwd_scrypt ?? null, passwdHash, { client, email })) {
        return { error: ERR.BAD_PASSWD, message: 'Wrong email address or password' };
      }
      return { id: rows[0].id };
    },

    // A new key of the account of that email address and password, or
    // {error, message} as check's.
    async lookup(who, client) {
      const found = await this.check(who, client);
      if (found.error !== undefined) return found;
      return { id: found.id, key: await db.transaction((c) => issueKey(c, found.id)) };
    },

    // The account's own view of itself (web pages, am_get_info): or null.
    async get(accountId) {
      const { rows } = await db.query(
        `SELECT id, name, email_addr, resource_share, cross_project_id, passwd_scrypt IS NOT NULL AS has_password,
                extract(epoch FROM created_at)::bigint AS created
           FROM boinc.account WHERE id = $1`, [accountId]);
      return rows[0] ?? null;
    },

    // The account's settings, each only when given, in one transaction,
    // with also(c) when given (a notice of the change).  email comes with
    // the password hash made with it (BOINC's md5(password + email)): an
    // address without it would leave the account a password no client can
    // send.  Returns null, or {error, message} (an address another account
    // has).
    async update(accountId, { name, resourceShare, email, passwdHash }, client, also = async () => {}) {
      if (email !== undefined && passwdHash === undefined) {
        return { error: ERR.BAD_PASSWD, message: 'A new email address needs the password hash made with it' };
      }
      // scrypt before the transaction: no connection is held while it waits.
      const stored = passwdHash === undefined ? null : await hashPassword(passwdHash, { client, email: email ?? null });
      try {
        await db.transaction(async (c) => {
          await c.query(
            `UPDATE boinc.account
                SET name = CASE WHEN $2::text IS NULL THEN name ELSE allot.check_name('user name', $2) END,
                    resource_share = coalesce($3, resource_share),
                    email_addr = coalesce($4, email_addr),
                    passwd_scrypt = coalesce($5, passwd_scrypt)
              WHERE id = $1`, [accountId, name ?? null, resourceShare ?? null, email ?? null, stored]);
          await also(c);
        });
      } catch (err) {
        if (err.code !== '23505') throw err;
        return { error: ERR.DB_NOT_UNIQUE, message: 'Another account has this email address' };
      }
      forgetAccount(accountId);
      return null;
    },

    // A password reset token for the account of an email address, or null
    // when no account has it (the caller answers alike either way).  A new
    // token replaces the account's last one.  Returns {id, name, token}.
    async resetToken(email) {
      const token = newKey();
      const { rows } = await db.query(
        `WITH a AS (SELECT id, name FROM boinc.account WHERE email_addr = $1),
              t AS (INSERT INTO boinc.password_reset (token_sha256, account_id, expires_at)
                    SELECT $2, id, now() + make_interval(secs => $3) FROM a
                    ON CONFLICT (account_id) DO UPDATE
                       SET token_sha256 = excluded.token_sha256, expires_at = excluded.expires_at, created_at = now())
         SELECT id, name FROM a`, [email, keyHash(token), RESET_SECS]);
      return rows[0] ? { id: rows[0].id, name: rows[0].name, token } : null;
    },

    // The account a reset token is for, still valid: {id, email_addr}, or null.
    async resetTarget(token) {
      const { rows } = await db.query(
        `SELECT a.id, a.email_addr FROM boinc.password_reset r JOIN boinc.account a ON a.id = r.account_id
          WHERE r.token_sha256 = $1 AND r.expires_at > now()`, [keyHash(token)]);
      return rows[0] ?? null;
    },

    // Use a reset token: the account's new password (passwdHash, made with
    // its email address), the token gone, every web session of the account
    // ended, and also(c, id), in one transaction.  Returns the account id, or null when the
    // token is not (or no longer) valid.
    async resetPassword(token, passwdHash, client, also = async () => {}) {
      const target = await this.resetTarget(token);
      if (target === null) return null;
      const stored = await hashPassword(passwdHash, { client, email: target.email_addr });
      return db.transaction(async (c) => {
        const { rows } = await c.query(
          `DELETE FROM boinc.password_reset WHERE token_sha256 = $1 AND account_id = $2 AND expires_at > now()
           RETURNING account_id`, [keyHash(token), target.id]);
        if (rows.length === 0) return null;   // used meanwhile
        await c.query('UPDATE boinc.account SET passwd_scrypt = $2 WHERE id = $1', [target.id, stored]);
        await c.query('DELETE FROM boinc.web_session WHERE account_id = $1', [target.id]);
        await also(c, target.id);
        return target.id;
      });
    },

    // The gate's state, for the log.
    gateState: () => gate.state(),
  };
}

module.exports = { makeAccounts, newKey, keyHash, Busy, ERR, RESET_SECS };
