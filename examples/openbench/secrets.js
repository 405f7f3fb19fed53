'use strict';
// Passwords and machine secrets.  Workers log in with an account's
// password (clientWorkerInfo and two more calls), and then, for the rest of
// their session, with the machine id and the secret clientWorkerInfo gave
// them.  The database keeps neither: only scrypt(value, salt) with a
// random 16-byte salt, N = 2^15, r = 8, p = 1 (32 MiB and about 0.1 s of
// a CPU per check), in openbench.account and openbench.machine.
//
// A secret is checked with scrypt once; then the server remembers that it
// was right, in a bounded cache keyed by an HMAC of (kind, id, value) under
// a key drawn when the process starts, holding the stored hash it was
// checked against.  Each call still reads the row, so a hash that changed
// (a new password) stops a cached value at once.  An unknown name or
// machine is checked against a stand-in row at the same cost as a known
// one with a wrong value.

const crypto = require('node:crypto');
const { promisify } = require('node:util');

const scrypt = promisify(crypto.scrypt);

const SCRYPT = Object.freeze({ N: 32768, r: 8, p: 1, keylen: 32, saltlen: 16 });
const maxmem = (N, r) => 128 * N * r * 2;

async function hashSecret(value, salt, { N, r, p } = SCRYPT) {
  return scrypt(value, salt, SCRYPT.keylen, { N, r, p, maxmem: maxmem(N, r) });
}

// {salt, hash, scrypt_n, scrypt_r, scrypt_p} of a new value, for a row.
async function newHashRow(value) {
  const salt = crypto.randomBytes(SCRYPT.saltlen);
  return { salt, hash: await hashSecret(value, salt), scrypt_n: SCRYPT.N, scrypt_r: SCRYPT.r, scrypt_p: SCRYPT.p };
}

// A machine's secret, as OpenBench issues it: 32 random bytes in hex.
const newMachineSecret = () => crypto.randomBytes(32).toString('hex');

// makeVerifier({cacheSize}) returns verify(kind, id, value, row), true when
// value is the one row's hash was made from.  row is the stored
// {salt, hash, scrypt_n, scrypt_r, scrypt_p}, or null for an unknown id.
function makeVerifier({ cacheSize }) {
  const key = crypto.randomBytes(32);
  const cache = new Map();   // tag -> stored hash; re-inserted on a hit (LRU)
  const standIn = {
    salt: crypto.randomBytes(SCRYPT.saltlen), hash: crypto.randomBytes(SCRYPT.keylen),
    scrypt_n: SCRYPT.N, scrypt_r: SCRYPT.r, scrypt_p: SCRYPT.p,
  };

  function remember(tag, hash) {
    if (cacheSize === 0) return;
    cache.delete(tag);
    cache.set(tag, hash);
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value);
  }

  return async function verify(kind, id, value, row) {
    const known = row !== null;
    const stored = known ? row : standIn;
    const tag = crypto.createHmac('sha256', key).update(`${kind}\0${id}\0${value}`).digest('base64');
    const cached = cache.get(tag);
    if (cached !== undefined && known && cached.length === stored.hash.length
        && crypto.timingSafeEqual(cached, stored.hash)) {
      remember(tag, stored.hash);
      return true;
    }
    if (cached !== undefined) cache.delete(tag);
    const derived = await hashSecret(value, stored.salt,
      { N: stored.scrypt_n, r: stored.scrypt_r, p: stored.scrypt_p });
    const match = derived.length === stored.hash.length && crypto.timingSafeEqual(derived, stored.hash);
    if (!(match && known)) return false;
    remember(tag, stored.hash);
    return true;
  };
}

module.exports = { SCRYPT, newHashRow, newMachineSecret, makeVerifier };
