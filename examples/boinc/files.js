'use strict';
// Files: downloads of app executables, and the upload handler of output
// files.  Every path is built from a name that matched FILE_NAME (letters,
// digits, "_.-", no leading dot) and a job id and sending from the
// database, and opened without following symbolic links: nothing a client
// sends can leave the two directories.
//
// A sending's outputs go to upload/JOB_ID/SENDING/, so that two sendings of
// a job never share a directory; a result sent before sendings were
// numbered (issue 21) has its outputs in upload/JOB_ID/.

const crypto = require('node:crypto');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');
const xml = require('./xml');

const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const MD5 = /^[0-9a-f]{32}$/;
const { O_RDONLY, O_WRONLY, O_CREAT, O_NOFOLLOW } = fs.constants;

const downloadDir = (dataDir) => path.join(dataDir, 'download');
const uploadDir = (dataDir) => path.join(dataDir, 'upload');

const ID = /^[1-9][0-9]{0,18}$/;

// The directory of a result's outputs; result is {job_id, sending}.
function resultDir(dataDir, result) {
  const { job_id: jobId, sending } = result;
  if (!ID.test(String(jobId)) || !(sending === null || ID.test(String(sending)))) {
    throw new Error(`bad upload directory for job ${jobId}, sending ${sending}`);
  }
  return path.join(uploadDir(dataDir), String(jobId), sending === null ? '' : String(sending));
}

function uploadPath(dataDir, result, name) {
  if (!FILE_NAME.test(name)) throw new Error(`bad upload file name ${JSON.stringify(name)}`);
  return path.join(resultDir(dataDir, result), name);
}

// Delete the uploads of a sending that is over without a success: its
// files, then its directory and its job's if they are left empty.
async function removeUploads(dataDir, result, names) {
  for (const name of names) await fsp.rm(uploadPath(dataDir, result, name), { force: true });
  const dirs = [resultDir(dataDir, result), path.join(uploadDir(dataDir), String(result.job_id))];
  for (const dir of result.sending === null ? dirs.slice(1) : dirs) {
    try {
      await fsp.rmdir(dir);
    } catch (err) {
      if (!['ENOENT', 'ENOTEMPTY', 'EEXIST'].includes(err.code)) throw err;
    }
  }
}

// Size and MD5 of a regular file, or null when there is none.
async function fileDigest(file) {
  let handle;
  try {
    handle = await fsp.open(file, O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ELOOP') return null;
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return null;
    const hash = crypto.createHash('md5');
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk);
    return { nbytes: st.size, md5: hash.digest('hex') };
  } finally {
    await handle.close();
  }
}

// ---------------------------------------------------------------------------
// Downloads: GET /download/NAME, with "Range: bytes=N-" so that a client
// can resume.  Only regular files directly in the download directory.

async function download(req, res, dataDir, name) {
  if (!FILE_NAME.test(name)) return send(res, 404, 'text/plain', 'no such file\n');
  let handle;
  try {
    handle = await fsp.open(path.join(downloadDir(dataDir), name), O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ELOOP') return send(res, 404, 'text/plain', 'no such file\n');
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return send(res, 404, 'text/plain', 'no such file\n');
    let start = 0;
    let status = 200;
    const range = /^bytes=([0-9]{1,15})-$/.exec(req.headers.range ?? '');
    if (range) {
      start = Number(range[1]);
      if (start > st.size) {
        res.writeHead(416, { 'Content-Range': `bytes */${st.size}` });
        return res.end();
      }
      status = 206;
    }
    const headers = {
      'Content-Type': 'application/octet-stream',
      'Content-Length': st.size - start,
      'Accept-Ranges': 'bytes',
    };
    if (status === 206) headers['Content-Range'] = `bytes ${start}-${st.size - 1}/${st.size}`;
    res.writeHead(status, headers);
    if (req.method === 'HEAD' || st.size === start) return res.end();
    await new Promise((resolve, reject) => {
      const stream = handle.createReadStream({ start, autoClose: false });
      stream.on('error', reject);
      res.on('close', resolve);
      stream.pipe(res);
    });
  } finally {
    await handle.close();
  }
}

function send(res, status, type, body, headers = {}) {
  const bytes = Buffer.from(body);
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': bytes.length, ...headers });
  res.end(bytes);
}

// ---------------------------------------------------------------------------
// Uploads (BOINC's file upload handler protocol).  The body is an XML
// header, then for an upload "<data>\n" and the file's bytes from <offset>
// on.  Files of 8 KB or more are first asked for with <get_file_size>; the
// client then sends the rest from the size we have.  Replies:
// <status>0</status> done, 1 try again later, -1 never (with a message).

const HEADER_MAX = 16 * 1024;
const DATA_TAG = Buffer.from('<data>\n');

function uploadReply(res, status, extra = {}) {
  const w = new xml.Writer('data_server_reply');
  w.el('status', status);
  if (extra.fileSize !== undefined) w.el('file_size', extra.fileSize);
  if (extra.message !== undefined) w.el('message', extra.message);
  send(res, 200, 'text/xml', w.toString());
}

class UploadRefused extends Error {}

// The header's fields, checked.  The header is the start of a document
// whose end (the data) is not XML: close its open elements for the parser.
function parseUploadHeader(text, hasData) {
  const doc = xml.parse(hasData ? `${text}</file_upload></data_server_request>` : text);
  const root = doc.data_server_request;
  if (root === null || typeof root !== 'object') throw new UploadRefused('no <data_server_request>');
  if (typeof root.get_file_size === 'string') {
    if (!FILE_NAME.test(root.get_file_size)) throw new UploadRefused('bad file name');
    return { probe: root.get_file_size };
  }
  const up = root.file_upload;
  if (!hasData || up === null || typeof up !== 'object' || Array.isArray(up) ||
      up.file_info === undefined || up.file_info.length !== 1) {
    throw new UploadRefused('no <file_upload> with one <file_info>');
  }
  const name = up.file_info[0].name;
  const integer = (v) => (typeof v === 'string' && /^[0-9]{1,15}$/.test(v) ? Number(v) : NaN);
  const nbytes = integer(up.nbytes);
  const offset = integer(up.offset);
  if (typeof name !== 'string' || !FILE_NAME.test(name)) throw new UploadRefused('bad file name');
  if (!Number.isSafeInteger(nbytes)) throw new UploadRefused('bad <nbytes>');
  if (!Number.isSafeInteger(offset) || offset > nbytes) throw new UploadRefused('bad <offset>');
  if (typeof up.md5_cksum !== 'string' || !MD5.test(up.md5_cksum)) throw new UploadRefused('bad <md5_cksum>');
  return { name, nbytes, offset };
}

// Where an output file may be uploaded: a file of a sending that allot
// still has in progress on its host, and that is not reported yet.
// lookup(name) answers {result: {job_id, sending}, maxNbytes, reported,
// alive} or null.
async function upload(req, res, { dataDir, lookup, log }) {
  // Read until "<data>\n" or the end of the body, at most HEADER_MAX bytes.
  let head = Buffer.alloc(0);
  let dataAt = -1;
  const it = req[Symbol.asyncIterator]();
  let ended = false;
  while (dataAt < 0) {
    const { value, done } = await it.next();
    if (done) { ended = true; break; }
    head = Buffer.concat([head, value]);
    dataAt = head.indexOf(DATA_TAG);
    if (dataAt < 0 && head.length > HEADER_MAX) {
      req.resume();
      return uploadReply(res, -1, { message: 'upload header too long' });
    }
  }
  let header;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(dataAt < 0 ? head : head.subarray(0, dataAt));
    header = parseUploadHeader(text, dataAt >= 0);
  } catch (err) {
    if (!ended) req.resume();
    if (err instanceof UploadRefused || err instanceof xml.XmlError || err instanceof TypeError) {
      return uploadReply(res, -1, { message: `bad upload request: ${err.message}` });
    }
    throw err;
  }

  const name = header.probe ?? header.name;
  const target = await lookup(name);
  if (target === null) {
    if (!ended) req.resume();
    return uploadReply(res, -1, { message: `no upload of ${name} is expected` });
  }
  if (target.reported) {
    if (!ended) req.resume();
    return uploadReply(res, -1, { message: `${name} was already reported` });
  }
  const file = uploadPath(dataDir, target.result, name);
  if (!target.alive) {
    // A sending allot has moved on from: its report will be refused, so its
    // outputs are not wanted (and what came of them goes).
    if (!ended) req.resume();
    await fsp.rm(file, { force: true });
    const { job_id: job, sending } = target.result;
    log(`upload: ${name} refused: sending ${sending ?? '?'} of job ${job} is no longer in progress on its host`);
    return uploadReply(res, -1, { message: `${name} is no longer wanted: its sending is over (timed out or taken back)` });
  }

  if (header.probe !== undefined) {
    let size = 0;
    try {
      const st = await fsp.lstat(file);
      size = st.isFile() ? st.size : 0;
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
    log(`upload: size of ${name} asked: ${size}`);
    return uploadReply(res, 0, { fileSize: size });
  }

  const { nbytes, offset } = header;
  if (nbytes > target.maxNbytes) {
    req.resume();
    return uploadReply(res, -1, { message: `${name} is larger than ${target.maxNbytes} bytes` });
  }
  await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  let handle;
  try {
    handle = await fsp.open(file, O_WRONLY | O_CREAT | O_NOFOLLOW, 0o600);
  } catch (err) {
    req.resume();
    if (err.code === 'ELOOP') return uploadReply(res, -1, { message: `${name} is not a regular file` });
    throw err;
  }
  let written = 0;
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size < offset) {
      req.resume();
      return uploadReply(res, 1, { message: `have ${st.size} bytes of ${name}, not ${offset}: ask again` });
    }
    await handle.truncate(offset);
    const write = async (chunk) => {
      if (offset + written + chunk.length > nbytes) throw new UploadRefused(`more than ${nbytes} bytes of ${name}`);
      await handle.write(chunk, 0, chunk.length, offset + written);
      written += chunk.length;
    };
    await write(head.subarray(dataAt + DATA_TAG.length));
    for (;;) {
      const { value, done } = await it.next();
      if (done) break;
      await write(value);
    }
  } catch (err) {
    if (!(err instanceof UploadRefused)) throw err;
    req.resume();
    await handle.truncate(0);
    return uploadReply(res, -1, { message: err.message });
  } finally {
    await handle.close();
  }
  if (offset + written < nbytes) {
    log(`upload: ${name}: ${offset + written} of ${nbytes} bytes, the rest later`);
    return uploadReply(res, 1, { message: 'upload incomplete' });
  }
  log(`upload: ${name}: ${written} bytes from offset ${offset}, ${nbytes} in all`);
  return uploadReply(res, 0);
}

module.exports = { download, upload, uploadPath, removeUploads, fileDigest, downloadDir, uploadDir, FILE_NAME, MD5 };
