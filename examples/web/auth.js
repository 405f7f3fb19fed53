'use strict';
// Host credentials.  The operator issues each host a key (host-key.js); the
// database keeps only a slow salted hash of it, in the web layer's own table
// web.host_key (setup.sql).  Every host endpoint requires
//
//   Authorization: Bearer <key>
//
// and the key must be the one issued to the host named by the body's host_id.
//
// Why it is built this way:
// - scrypt, salted, at a cost of about 0.1 s of one CPU and 32 MiB: a stolen
//   table is no shortcut to a key.  Keys are 256 random bits, so the cost
//   guards against mistakes (a reused or short key), not against guessing.
// - Checking scrypt on every request would cap the server at a few dozen
//   requests a second.  So a key is checked once, and the server remembers
//   that it was right in a bounded cache.  The cache is keyed by an HMAC of
//   (host id, key) under a secret drawn when the process starts: neither the
//   key nor anything computable without the secret is kept in memory.
// - The cache entry holds the stored hash it was checked against, and every
//   request reads the host's current row: a key re-issued or revoked by the
//   operator stops working at the next request, cached or not.
// - No timing leak: a known host with a wrong key, and an unknown host, take
//   the same path (one row lookup, one scrypt with the same parameters, one
//   constant-time comparison); the answer is decided only after all of it.
//   Only a right key can hit the cache, so a hit tells nothing new.

const crypto = require('node:crypto');
const { promisify } = require('node:util');

const scrypt = promisify(crypto.scrypt);

// The parameters of new keys (host-key.js) and of the stand-in hash that an
// unknown host is checked against.  N = 2^15 and r = 8 take 32 MiB; maxmem
// leaves room above that.
const SCRYPT = Object.freeze({ N: 32768, r: 8, p: 1, keylen: 32, saltlen: 16 });
const maxmem = (N, r) => 128 * N * r * 2;

// A key as host-key.js issues it: 32 random bytes in base64url.
const KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function newKey() {
  return crypto.randomBytes(32).toString('base64url');
}

// hashKey(key, salt, {N, r, p}): the slow hash of a key.
async function hashKey(key, salt, { N, r, p } = SCRYPT) {
  return scrypt(key, salt, SCRYPT.keylen, { N, r, p, maxmem: maxmem(N, r) });
}

// The Bearer token of a request, or null when there is none or it cannot be
// a key (the format of keys is no secret, so refusing it early tells nothing).
function bearerKey(req) {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  const m = /^Bearer ([^\s]+)$/i.exec(header.trim());
  return m && KEY_PATTERN.test(m[1]) ? m[1] : null;
}

// makeAuthenticator(db, {cacheSize}) returns verify(hostId, key), which
// resolves to 'cached' or 'verified' when the key is the host's, and to
// null otherwise.  db(sql, params) runs one query.
function makeAuthenticator(db, { cacheSize }) {
  const secret = crypto.randomBytes(32);
  // tag -> the stored hash the key was verified against; a Map keeps
  // insertion order, so re-inserting on a hit makes it a small LRU.
  const cache = new Map();
  // What an unknown host's key is checked against: a row like any other,
  // with the current parameters, that no key matches.
  const standIn = {
    salt: crypto.randomBytes(SCRYPT.saltlen), hash: crypto.randomBytes(SCRYPT.keylen),
    scrypt_n: SCRYPT.N, scrypt_r: SCRYPT.r, scrypt_p: SCRYPT.p,
  };

  const tagOf = (hostId, key) =>
    crypto.createHmac('sha256', secret).update(`${hostId}\0${key}`).digest('base64');

  function remember(tag, hash) {
    if (cacheSize === 0) return;
    cache.delete(tag);
    cache.set(tag, hash);
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value);
  }

  async function verify(hostId, key) {
    const { rows } = await db(
      'SELECT salt, hash, scrypt_n, scrypt_r, scrypt_p FROM web.host_key WHERE host_id = $1', [hostId])
      .catch((err) => {
        // the operator's set-up step is missing: a fault of the server, not
        // of the host (a 403 from 42501 would blame the host)
        if (err.code === '42P01') throw new Error('web.host_key is missing: run examples/web/setup.sql');
        if (err.code === '42501') throw new Error(`cannot read web.host_key: ${err.message} (setup.sql grants it to allot_web)`);
        throw err;
      });
    const known = rows.length === 1;
    const row = known ? rows[0] : standIn;
    const tag = tagOf(hostId, key);

    const cached = cache.get(tag);
    if (cached !== undefined && known && crypto.timingSafeEqual(cached, row.hash)) {
      remember(tag, row.hash);
      return 'cached';
    }
    if (cached !== undefined) cache.delete(tag);   // re-issued or revoked since

    const derived = await hashKey(key, row.salt, { N: row.scrypt_n, r: row.scrypt_r, p: row.scrypt_p });
    // compared whatever `known` is, and combined without a branch before it
    const match = derived.length === row.hash.length && crypto.timingSafeEqual(derived, row.hash);
    if (!(match && known)) return null;
    remember(tag, row.hash);
    return 'verified';
  }

  return verify;
}

module.exports = { SCRYPT, KEY_PATTERN, newKey, hashKey, bearerKey, makeAuthenticator };
