'use strict';
// A scheduler request from a stranger, read so that what it costs before
// its sender is known stays small, and so that no request, however large
// or odd, holds up the event loop that serves every other host:
//
//   preamble  at most PREAMBLE_BYTES are read before the sender is known.
//             The client writes <authenticator> and <hostid> first; the
//             account is looked up from them, and an unknown or missing one
//             is answered at once, the rest of the body read and dropped
//             (up to the size limit), never parsed
//   body      a known account's request is read to its end, up to the limit
//   parse     a request of up to INLINE_PARSE_BYTES is parsed at once (the
//             client's usual request is a few KB); a larger one in a worker
//             thread, one at a time, with a time limit (xml_worker.js),
//             which sends back only what request.js reads of it
//   per host  one request at a time per (account, host id): a second one
//             meanwhile is answered "busy" without being read
//
// Only the parse of a large request leaves the event loop: the rest is a
// few regular expressions over at most PREAMBLE_BYTES.

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const xml = require('./xml');
const { readRequest, BadRequest } = require('./request');

const PREAMBLE_BYTES = 65536;
const INLINE_PARSE_BYTES = 262144;

class TooLarge extends Error {}

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

// Who says it sends the request: {authenticator, hostid}, or null when the
// preamble holds no authenticator.
function sender(pre) {
  const head = Buffer.concat(pre.chunks, Math.min(pre.size, PREAMBLE_BYTES)).toString('latin1');
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
// Parsing a large request in a worker thread, one at a time, each within
// parseMs; at most maxWaiting wait their turn, others are refused.

function makeParser({ parseMs = 5000, maxWaiting = 4 } = {}) {
  let worker = null;
  let busy = false;
  const waiting = [];

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
    const { text, limits, resolve, reject } = waiting.shift();
    const w = worker ?? startWorker();
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
    const onMessage = (m) => finish(() => (m.error === undefined ? resolve(m.request) : reject(refusal(m))));
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
    w.postMessage({ text, limits });
  }

  return {
    // The request, read and checked (request.js): at once when small, else
    // in the worker; rejects with BadRequest or xml.XmlError.
    read(text, limits) {
      if (text.length <= INLINE_PARSE_BYTES) return Promise.resolve().then(() => readRequest(xml.parse(text), limits));
      if (waiting.length >= maxWaiting) {
        return Promise.reject(new xml.XmlError('too many large requests at once; try again later'));
      }
      return new Promise((resolve, reject) => {
        waiting.push({ text, limits, resolve, reject });
        next();
      });
    },
    close() {
      if (worker !== null) worker.terminate();
    },
  };
}

module.exports = { PREAMBLE_BYTES, INLINE_PARSE_BYTES, TooLarge, readPreamble, sender, readRest, discard, makeParser };
