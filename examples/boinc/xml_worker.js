'use strict';
// Reads large scheduler requests off the event loop (intake.js): the bytes
// in (decoded here, not on the event loop), what request.js reads of them
// (or why they are refused) out, so that only a small object comes back
// across the thread.

const { parentPort } = require('node:worker_threads');
const xml = require('./xml');
const { readRequest, BadRequest } = require('./request');

const decoder = new TextDecoder('utf-8');

parentPort.on('message', ({ bytes, limits }) => {
  try {
    parentPort.postMessage({ request: readRequest(xml.parse(decoder.decode(bytes)), limits) });
  } catch (err) {
    parentPort.postMessage({
      error: err instanceof BadRequest || err instanceof xml.XmlError ? err.message : `malformed XML: ${err.message}`,
      kind: err instanceof BadRequest ? 'bad' : 'xml',
    });
  }
});
