'use strict';
// Reads large scheduler requests off the event loop (intake.js): the XML in,
// what request.js reads of it (or why it is refused) out, so that only a
// small object comes back across the thread.

const { parentPort } = require('node:worker_threads');
const xml = require('./xml');
const { readRequest, BadRequest } = require('./request');

parentPort.on('message', ({ text, limits }) => {
  try {
    parentPort.postMessage({ request: readRequest(xml.parse(text), limits) });
  } catch (err) {
    parentPort.postMessage({
      error: err instanceof BadRequest || err instanceof xml.XmlError ? err.message : `malformed XML: ${err.message}`,
      kind: err instanceof BadRequest ? 'bad' : 'xml',
    });
  }
});
