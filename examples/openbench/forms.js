'use strict';
// Reading what a worker sends.  OpenBench's worker posts HTML forms: its
// calls are application/x-www-form-urlencoded, and the PGN upload is
// multipart/form-data.  Every field is hostile until checked: a Form hands
// out only values that passed a check, and a failed check is a BadRequest
// the worker gets as {"error": ...}.

const MAX_FIELDS = 256;
const MAX_PARTS = 32;
const MAX_PART_HEADER_BYTES = 8192;

// A request we will not serve.  The message goes back to the worker.
class BadRequest extends Error {}

// A rejected value, shortened for a message.
const show = (v) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes, what) {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new BadRequest(`${what} is not UTF-8`);
  }
}

const BIGINT_MAX = 9223372036854775807n;
// Control characters: none in a line of text; tabs and line ends pass in
// a log.
const ANY_CONTROL = /[\u0000-\u001f\u007f]/;
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

class Form {
  constructor(fields, files = new Map()) {
    this.fields = fields;   // name -> [string, ...]
    this.files = files;     // name -> {filename, data}
  }

  // The one value of a field, or undefined; a field sent twice is refused
  // (which of the two a check would see is not for the sender to choose).
  one(name) {
    const values = this.fields.get(name);
    if (values === undefined) return undefined;
    if (values.length > 1) throw new BadRequest(`${name} was sent more than once`);
    return values[0];
  }

  required(name) {
    const v = this.one(name);
    if (v === undefined) throw new BadRequest(`${name} is missing`);
    return v;
  }

  // Text of at most max characters, no control characters unless
  // multiline (then tabs and line ends pass), optionally of a pattern.
  text(name, { max, pattern = null, multiline = false, optional = false }) {
    const v = optional ? this.one(name) : this.required(name);
    if (v === undefined) return null;
    if (v.length > max) throw new BadRequest(`${name} is longer than ${max} characters`);
    if ((multiline ? CONTROL : ANY_CONTROL).test(v)) throw new BadRequest(`${name} holds control characters`);
    if (pattern && !pattern.test(v)) throw new BadRequest(`${name} is not valid: ${show(v)}`);
    return v;
  }

  // A whole number within [min, max] (both safe integers).
  int(name, { min, max }) {
    const v = this.required(name);
    if (!/^-?[0-9]{1,16}$/.test(v)) throw new BadRequest(`${name} must be a whole number, not ${show(v)}`);
    const x = Number(v);
    if (!(x >= min && x <= max)) throw new BadRequest(`${name} must be between ${min} and ${max}, not ${v}`);
    return x;
  }

  // A positive bigint id, kept as a string of digits for PostgreSQL.
  id(name) {
    return positiveId(this.required(name), name);
  }

  // A field that may be repeated (OpenBench's blacklist), at most max times.
  list(name, max) {
    const values = this.fields.get(name) ?? [];
    if (values.length > max) throw new BadRequest(`${name} holds more than ${max} values`);
    return values;
  }

  file(name, { max }) {
    const f = this.files.get(name);
    if (f === undefined) throw new BadRequest(`the file ${name} is missing`);
    if (f.data.length > max) throw new BadRequest(`the file ${name} is larger than ${max} bytes`);
    return f;
  }
}

function positiveId(v, name) {
  if (typeof v !== 'string' || !/^[1-9][0-9]{0,18}$/.test(v) || BigInt(v) > BIGINT_MAX) {
    throw new BadRequest(`${name} must be a positive integer, not ${show(v)}`);
  }
  return v;
}

function addField(fields, name, value) {
  const values = fields.get(name);
  if (values) values.push(value);
  else fields.set(name, [value]);
}

function parseUrlencoded(body) {
  const fields = new Map();
  let n = 0;
  for (const [name, value] of new URLSearchParams(decodeUtf8(body, 'the form'))) {
    if (++n > MAX_FIELDS) throw new BadRequest(`the form has more than ${MAX_FIELDS} fields`);
    addField(fields, name, value);
  }
  return new Form(fields);
}

// A header parameter of Content-Disposition (name="...", filename="...").
function dispositionParam(header, param) {
  const m = new RegExp(`;\\s*${param}="([^"\\\\\\r\\n]*)"`, 'i').exec(header);
  return m ? m[1] : null;
}

// RFC 7578: parts between "--boundary" lines, each with its headers, a
// blank line and its content; the last delimiter is "--boundary--".
function parseMultipart(body, contentType) {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([0-9A-Za-z'()+_,.\/:=?-]{1,70}))\s*(;|$)/i.exec(contentType);
  if (!m) throw new BadRequest('multipart/form-data without a valid boundary');
  const delimiter = Buffer.from(`--${m[1] ?? m[2]}`);
  const next = Buffer.concat([Buffer.from('\r\n'), delimiter]);
  const fields = new Map();
  const files = new Map();

  if (body.indexOf(delimiter) !== 0) throw new BadRequest('the multipart body does not start with its boundary');
  let pos = delimiter.length;
  for (let parts = 0; ; parts++) {
    if (body.subarray(pos, pos + 2).toString('latin1') === '--') break;    // the closing delimiter
    if (body.subarray(pos, pos + 2).toString('latin1') !== '\r\n') throw new BadRequest('malformed multipart boundary line');
    if (parts === MAX_PARTS) throw new BadRequest(`the form has more than ${MAX_PARTS} parts`);
    const headerEnd = body.indexOf('\r\n\r\n', pos + 2);
    if (headerEnd < 0 || headerEnd - pos > MAX_PART_HEADER_BYTES) throw new BadRequest('malformed multipart part headers');
    const headers = decodeUtf8(body.subarray(pos + 2, headerEnd), 'a part header');
    const end = body.indexOf(next, headerEnd + 4);
    if (end < 0) throw new BadRequest('the multipart body was cut off');
    const data = body.subarray(headerEnd + 4, end);
    pos = end + next.length;

    const disposition = headers.split('\r\n').find((h) => /^content-disposition:\s*form-data\s*(;|$)/i.test(h));
    const name = disposition && dispositionParam(disposition, 'name');
    if (!name) throw new BadRequest('a multipart part has no form-data name');
    const filename = dispositionParam(disposition, 'filename');
    if (filename !== null) {
      if (files.has(name)) throw new BadRequest(`the file ${name} was sent more than once`);
      files.set(name, { filename, data });
    } else {
      addField(fields, name, decodeUtf8(data, `field ${name}`));
    }
  }
  return new Form(fields, files);
}

// The form of a request, from its body and Content-Type.  A body-less GET
// is an empty form.
function parseForm(body, contentType) {
  const type = (contentType ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type === 'multipart/form-data') return parseMultipart(body, contentType);
  if (type === 'application/x-www-form-urlencoded' || body.length === 0) return parseUrlencoded(body);
  throw new BadRequest(`a form is application/x-www-form-urlencoded or multipart/form-data, not ${show(type)}`);
}

module.exports = { BadRequest, Form, parseForm, positiveId, show };
