'use strict';
// A front end's HTTP server from its start to its stop: the log (a line per
// request: method, path, status, time, and what the front end adds), and
// the graceful stop on SIGTERM or SIGINT: no new connections, the requests
// in flight finished with Connection: close, the front end's pools closed,
// "stopped", exit 0; exit 1 if requests are still running after the grace
// period.  A listening port that cannot be had ends the process with 1.

const http = require('node:http');

// One line per event, timestamped; control characters a client slipped
// into a value are shown escaped, never written raw into the log.
const log = (line) => console.log(`${new Date().toISOString()} ${line.replace(/[\u0000-\u001f\u007f]/g,
  (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}`);

// A request body the front end does not take: too large (413, and the
// connection closed after the reply), or cut off (400).
class BodyError extends Error {
  constructor(status, message, headers = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

// The body, at most limit bytes.  A larger one is read to its end and
// thrown away before the 413 is sent: closing a socket with unread data
// makes the kernel reset it, and the client, still sending, would lose the
// reply.  Node's requestTimeout bounds how long that may take; nothing over
// the limit is kept in memory.
function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    let size = 0;
    let chunks = [];
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > limit) chunks = null;
      else chunks.push(chunk);
    });
    req.on('end', () => (chunks === null
      ? reject(new BodyError(413, `request body is larger than ${limit} bytes`, { Connection: 'close' }))
      : resolve(Buffer.concat(chunks))));
    // the client went away before the end of its body
    req.on('error', () => reject(new BodyError(400, 'the request body was cut off')));
  });
}

// serve(handle, settings) listens on settings.host and settings.port and
// runs handle(req, res) for each request.  handle answers, and may resolve
// to { note, path }: text for the end of the request's log line, and the
// path to log instead of the URL's (which is logged without its query: a
// query may hold a password's hash).  What handle throws is answered 500
// and logged whole.
//
//   requestTimeout, headersTimeout   node:http's, in ms
//   graceMs                          how long a stop waits for requests
//   announce(address)                the line logged once listening
//   release()                        closes the front end's pools, at the stop
function serve(handle, { host, port, requestTimeout, headersTimeout, graceMs, announce, release = async () => {} }) {
  let closing = false;
  const inFlight = new Set();

  async function respond(req, res) {
    const started = process.hrtime.bigint();
    if (closing) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.on('close', () => inFlight.delete(res));
    let shown = {};
    try {
      shown = (await handle(req, res)) ?? {};
    } catch (err) {
      log(`internal error on ${req.method} ${req.url.split('?', 1)[0]}: ${err.stack ?? err}`);
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(500, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' });
        res.end(`${http.STATUS_CODES[500]}\n`);
      }
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const path = shown.path ?? req.url.split('?', 1)[0];
    log(`${req.method} ${path.slice(0, 200)} ${res.statusCode} ${ms.toFixed(1)} ms${shown.note ? ` ${shown.note}` : ''}`);
  }

  const server = http.createServer({ requestTimeout, headersTimeout }, respond);
  server.on('error', (err) => {
    console.error(`cannot serve on ${host}:${port}: ${err.message}`);
    process.exit(1);
  });
  server.listen(port, host, () => log(announce(server.address())));

  let stopping = false;
  const shutdown = (signal) => {
    if (stopping) return;
    stopping = true;
    closing = true;
    // Replies not yet begun close their connection: no client keeps one
    // open past the stop.
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    log(`${signal}: no new connections; finishing requests in flight`);
    server.close(async () => {
      try {
        await release();
      } catch (err) {
        log(`could not close the database connections: ${err.message}`);
        process.exit(1);
      }
      log('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
    setTimeout(() => {
      log(`requests still running after ${graceMs} ms; exiting`);
      process.exit(1);
    }, graceMs).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  return server;
}

module.exports = { log, serve, readBody, BodyError };
