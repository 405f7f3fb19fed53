'use strict';
// A scheduler request from a stranger, read so that what it costs before
// its sender is known stays small, and so that no request, however large
// or odd, holds up the event loop that serves every other host:
//
//   preamble  at most PREAMBLE_BYTES are examined before the sender is
//             known.  The client writes <authenticator> and <hostid>
//             first; the account is looked up from them, and an unknown or
//             missing one is answered at once, the rest of the body dropped
//             unread (up to the size limit), never parsed
//   body      a known account's request is read to its end, up to the limit
//   parse     a request of up to INLINE_PARSE_BYTES (a setting, 16 KiB by
//             default) is parsed at once: the client's usual request is 5
//             to 10 KB, and one at the limit costs the requests behind it
//             about a millisecond.  A larger
//             one goes, as bytes, to a worker thread (xml_worker.js), which
//             decodes and parses it within a time limit and sends back only
//             what request.js reads of it; one at a time, at most one per
//             account waiting, so that one account's large requests never
//             keep out another's
//   per host  one request at a time per (account, host id): a second one
//             meanwhile is answered "busy" without being read
//
// Only the parse of a large request leaves the event loop: the rest is a
// few regular expressions over at most PREAMBLE_BYTES.  How each request
// was read is returned with it (parsedBy, bytes, ms), so that the
// scheduler's log line says which path parsed it.

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const xml = require('./xml');
const { readRequest, BadRequest } = require('./request');

// What a request may cost before its sender is known, and what it may cost
// the event loop: a real client's <authenticator> is in its first 100 bytes,
// and its whole request in 5 to 10 KB (more with many tasks held).
const PREAMBLE_BYTES = 16384;
const INLINE_PARSE_BYTES = 16384;

class TooLarge extends Error {}

// A large request that must wait for another of its account, or for a
// full queue: the client is told to come back soon, not that it is wrong.
class Busy extends Error {}

// The first PREAMBLE_BYTES of the body (all of it, if shorter).  Resolves
// {chunks, size, ended}; the stream is left paused.
function readPreamble(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    let settled = false;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= PREAMBLE_BYTES) {
        settled = true;
        stop();
        req.pause();
        resolve({ chunks, size, ended: false });
      }
    };
    const onEnd = () => {
      if (settled) return;
      settled = true;
      stop();
      resolve({ chunks, size, ended: true });
    };
    const onError = (err) => {
      if (settled) return;
      settled = true;
      stop();
      reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

// How many of the body's bytes sender() looks at: the rest of a stranger's
// request is never examined.
const examined = (pre) => Math.min(pre.size, PREAMBLE_BYTES);

// Who says it sends the request: {authenticator, hostid}, or null when the
// preamble holds no authenticator.
function sender(pre) {
  const head = Buffer.concat(pre.chunks, examined(pre)).toString('latin1');
  const auth = /<authenticator>([^<]{0,256})<\/authenticator>/.exec(head);
  if (auth === null) return null;
  const host = /<hostid>\s*([0-9]{1,10})\s*<\/hostid>/.exec(head);
  return { authenticator: auth[1].trim(), hostid: host ? Number(host[1]) : 0 };
}

// The rest of the body after the preamble: the whole of it as one Buffer,
// or TooLarge past limit bytes (read to its end and dropped, so that the
// client reads the answer rather than a reset connection).
function readRest(req, pre, limit) {
  return new Promise((resolve, reject) => {
    let chunks = pre.size > limit ? null : pre.chunks;
    let size = pre.size;
    if (pre.ended) {
      if (chunks === null) reject(new TooLarge(`request body is larger than ${limit} bytes`));
      else resolve(Buffer.concat(chunks));
      return;
    }
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > limit) chunks = null;
      else chunks.push(chunk);
    });
    req.on('end', () => (chunks === null
      ? reject(new TooLarge(`request body is larger than ${limit} bytes`))
      : resolve(Buffer.concat(chunks))));
    req.on('error', reject);
    req.resume();
  });
}

// Drop the rest of a body we will not read; a sender that goes on past
// limit bytes is cut off.
function discard(req, pre, limit) {
  if (pre.ended) return;
  let size = pre.size;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > limit) req.destroy();
  });
  req.on('error', () => {});
  req.resume();
}

// ---------------------------------------------------------------------------
// Parsing: a small request at once, a large one in a worker thread, one at
// a time, each within parseMs.  At most maxWaiting wait their turn, and at
// most one of each account (running or waiting); others are told to come
// back soon (Busy).

const decoder = new TextDecoder('utf-8');

function makeParser({ parseMs = 5000, maxWaiting = 8, inlineBytes = INLINE_PARSE_BYTES } = {}) {
  let worker = null;
  let busy = false;
  const waiting = [];
  const accounts = new Set();   // accounts with a large request waiting or being read

  function startWorker() {
    worker = new Worker(path.join(__dirname, 'xml_worker.js'));
    worker.unref();
    return worker;
  }

  // A refusal the worker sent back, as the error it stands for.
  const refusal = (m) => (m.kind === 'bad' ? new BadRequest(m.error) : new xml.XmlError(m.error));

  function next() {
    if (busy || waiting.length === 0) return;
    busy = true;
    const { bytes, limits, resolve, reject } = waiting.shift();
    const w = worker ?? startWorker();
    const started = process.hrtime.bigint();
    let done = false;
    const finish = (fn) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      w.off('message', onMessage);
      w.off('error', onError);
      busy = false;
      fn();
      next();
    };
    const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
    const onMessage = (m) => finish(() => (m.error === undefined ? resolve({ request: m.request, ms: ms() }) : reject(refusal(m))));
    const onError = (err) => {
      worker = null;
      finish(() => reject(err));
    };
    const timer = setTimeout(() => {
      // A read that runs away is stopped with its thread.
      worker = null;
      w.terminate();
      finish(() => reject(new xml.XmlError(`the request took longer than ${parseMs} ms to read`)));
    }, parseMs);
    w.on('message', onMessage);
    w.on('error', onError);
    // The bytes are handed over, not copied, when they fill their buffer.
    const own = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length;
    w.postMessage({ bytes, limits }, own ? [bytes.buffer] : []);
  }

  return {
    // The request, read and checked (request.js), from its bytes: at once
    // when small, else in the worker.  Resolves {request, parsedBy
    // ('inline' or 'worker'), bytes, ms}; rejects with BadRequest or
    // xml.XmlError (the request is wrong), or Busy (come back soon).
    // accountId: whose request it is (one large request per account).
    async read(bytes, limits, accountId) {
      const size = bytes.length;
      if (size <= inlineBytes) {
        const started = process.hrtime.bigint();
        const request = readRequest(xml.parse(decoder.decode(bytes)), limits);
        return { request, parsedBy: 'inline', bytes: size, ms: Number(process.hrtime.bigint() - started) / 1e6 };
      }
      if (accounts.has(accountId)) throw new Busy('another large request of this account is being read');
      if (waiting.length >= maxWaiting) throw new Busy('too many large requests at once');
      accounts.add(accountId);
      try {
        const { request, ms } = await new Promise((resolve, reject) => {
          waiting.push({ bytes, limits, resolve, reject });
          next();
        });
        return { request, parsedBy: 'worker', bytes: size, ms };
      } finally {
        accounts.delete(accountId);
      }
    },
    close() {
      if (worker !== null) worker.terminate();
    },
  };
}

module.exports = {
  PREAMBLE_BYTES, INLINE_PARSE_BYTES, TooLarge, Busy, readPreamble, examined, sender, readRest, discard, makeParser,
};
