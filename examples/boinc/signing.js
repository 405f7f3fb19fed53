'use strict';
// Code signing as BOINC clients check it (BOINC's lib/crypt.cpp): the key
// is RSA of 1024 bits; a file's signature is the PKCS#1 v1.5 type-1 private
// key "encryption" of the 32 hex characters of the file's MD5; keys and
// signatures travel as hex, 32 bytes a line, closed by a line ".".
//
// The private key is made once by `node admin.js setup` and kept on disk,
// readable by its owner only.  The server reads only the public half.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const MODULUS_BYTES = 128;   // BOINC's fixed-size key fields: 1024 bits

// Bytes as BOINC prints them: lowercase hex, 32 bytes a line, then ".".
function hexLines(bytes) {
  const hex = bytes.toString('hex');
  const lines = [];
  for (let i = 0; i < hex.length; i += 64) lines.push(hex.slice(i, i + 64));
  return `${lines.join('\n')}\n.\n`;
}

function padded(bytes) {
  if (bytes.length > MODULUS_BYTES) throw new Error(`key field of ${bytes.length} bytes is over ${MODULUS_BYTES}`);
  return Buffer.concat([Buffer.alloc(MODULUS_BYTES - bytes.length), bytes]);
}

// The public key in BOINC's text form, as <code_sign_key> carries it:
// the bit count, then modulus and exponent, each 128 bytes big-endian.
function boincKeyText(publicKey) {
  const jwk = publicKey.export({ format: 'jwk' });
  const n = Buffer.from(jwk.n, 'base64url');
  const e = Buffer.from(jwk.e, 'base64url');
  return `${n.length * 8}\n${hexLines(Buffer.concat([padded(n), padded(e)]))}`;
}

function keyPaths(dataDir) {
  const dir = path.join(dataDir, 'keys');
  return { dir, privateKey: path.join(dir, 'code_sign_private.pem'), publicKey: path.join(dir, 'code_sign_public.pem') };
}

// Make the key pair unless it exists; returns whether it made one.
function ensureKeys(dataDir) {
  const paths = keyPaths(dataDir);
  if (fs.existsSync(paths.privateKey)) return false;
  fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 1024, publicExponent: 65537 });
  // 'wx': never overwrite a key that appeared meanwhile
  fs.writeFileSync(paths.privateKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  fs.writeFileSync(paths.publicKey, publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o644, flag: 'wx' });
  return true;
}

function loadPublicKeyText(dataDir) {
  return boincKeyText(crypto.createPublicKey(fs.readFileSync(keyPaths(dataDir).publicKey)));
}

// The <file_signature> text of a file whose MD5 (hex) is md5.
function signMd5(dataDir, md5) {
  if (!/^[0-9a-f]{32}$/.test(md5)) throw new Error(`not an MD5 in hex: ${md5}`);
  const key = crypto.createPrivateKey(fs.readFileSync(keyPaths(dataDir).privateKey));
  const signature = crypto.privateEncrypt({ key, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.from(md5, 'ascii'));
  return hexLines(signature);
}

// What a client does with a signature: decrypt it with the public key and
// compare with the MD5.  For tests and the operator's checks.
function verifyMd5(dataDir, md5, signatureText) {
  const key = crypto.createPublicKey(fs.readFileSync(keyPaths(dataDir).publicKey));
  const bytes = Buffer.from(signatureText.replace(/\.\s*$/, '').replace(/\s+/g, ''), 'hex');
  return crypto.publicDecrypt({ key, padding: crypto.constants.RSA_PKCS1_PADDING }, bytes).toString('ascii') === md5;
}

module.exports = { ensureKeys, loadPublicKeyText, signMd5, verifyMd5, boincKeyText, keyPaths };
