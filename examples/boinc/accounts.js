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
// scrypt runs in libuv's thread pool, off the event loop; at most
// scryptAtOnce run at a time, so that a flood of logins cannot take the
// threads the file uploads need, and at most 64 wait their turn.

const crypto = require('node:crypto');
const { promisify } = require('node:util');

const scrypt = promisify(crypto.scrypt);

// BOINC's error numbers (lib/error_numbers.h) that its tools show.
const ERR = {
  DB_NOT_UNIQUE: -137,
  RETRY: -199,
  BAD_EMAIL_ADDR: -205,
  BAD_PASSWD: -206,
  ACCT_CREATION_DISABLED: -208,
  BAD_USER_NAME: -188,
};

const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 << 20 };
const MAX_WAITING = 64;

const newKey = () => crypto.randomBytes(16).toString('hex');
const keyHash = (key) => crypto.createHash('sha256').update(key, 'utf8').digest();

class Busy extends Error {}

// At most n of fn at once; more than MAX_WAITING waiting: Busy.
function makeGate(n) {
  let running = 0;
  const waiting = [];
  return async (fn) => {
    if (running >= n) {
      if (waiting.length >= MAX_WAITING) throw new Busy('too many logins at once; try again in a minute');
      await new Promise((resolve) => waiting.push(resolve));
    }
    running += 1;
    try {
      return await fn();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
}

function makeAccounts(db, { maxKeys = 20, scryptAtOnce = 2, cacheSecs = 60, cacheSize = 10000 } = {}) {
  const gate = makeGate(scryptAtOnce);

  // Keys found, by their SHA-256 (hex): {account, at (ms)}, kept cacheSecs,
  // at most cacheSize of them, so that the hosts of an account with many
  // ask without a lookup each.  A key this process drops (issueKey) is
  // dropped here at once; one dropped elsewhere (an account deleted by the
  // operator) works at most cacheSecs longer.  Unknown keys are not kept.
  const known = new Map();
  const forgetAccount = (accountId) => {
    for (const [hash, k] of known) if (k.account.id === accountId) known.delete(hash);
  };

  const derive = (passwdHash, salt, p) => gate(() => scrypt(passwdHash, salt, 32, { ...SCRYPT, N: p.N, r: p.r, p: p.p }));

  // 'scrypt$N$r$p$salt$hash' (base64), so that the cost can be raised later.
  async function hashPassword(passwdHash) {
    const salt = crypto.randomBytes(16);
    const hash = await derive(passwdHash, salt, SCRYPT);
    return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
  }

  // A stored hash to check against when there is none, so that an unknown
  // email address takes as long to refuse as a wrong password.
  let decoy = null;

  async function passwordMatches(stored, passwdHash) {
    decoy ??= hashPassword(newKey());
    const parts = (stored ?? await decoy).split('$');
    const [N, r, p] = parts.slice(1, 4).map(Number);
    const want = Buffer.from(parts[5], 'base64');
    const have = await derive(passwdHash, Buffer.from(parts[4], 'base64'), { N, r, p });
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
    // The account a key names: {id, name, created}, or null.  Notes the
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
               SELECT a.id, a.name, extract(epoch FROM a.created_at)::bigint AS created
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
    // allot.check_name.  Returns {id, key} or {error, message}.
    async create({ email, passwdHash, name }) {
      const stored = await hashPassword(passwdHash);
      const made = await db.transaction(async (c) => {
        const { rows } = await c.query(
          `INSERT INTO boinc.account (name, email_addr, passwd_scrypt)
           VALUES (allot.check_name('user name', $1), $2, $3)
           ON CONFLICT (email_addr) DO NOTHING RETURNING id`, [name, email, stored]);
        return rows[0] ? { id: rows[0].id, key: await issueKey(c, rows[0].id) } : null;
      });
      if (made !== null) return made;
      const found = await this.lookup({ email, passwdHash });
      return found.error === undefined ? found
        : { error: ERR.DB_NOT_UNIQUE, message: 'An account with this email address exists' };
    },

    // A new key of the account of that email address and password, or
    // {error, message}: the same for an unknown address as for a wrong
    // password, and as slow.
    async lookup({ email, passwdHash }) {
      const { rows } = await db.query('SELECT id, passwd_scrypt FROM boinc.account WHERE email_addr = $1', [email]);
      if (!await passwordMatches(rows[0]?.passwd_scrypt ?? null, passwdHash)) {
        return { error: ERR.BAD_PASSWD, message: 'Wrong email address or password' };
      }
      return { id: rows[0].id, key: await db.transaction((c) => issueKey(c, rows[0].id)) };
    },
  };
}

module.exports = { makeAccounts, newKey, keyHash, Busy, ERR };
