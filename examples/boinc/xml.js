'use strict';
// XML in and out.  Requests are read with fast-xml-parser, set up for input
// from strangers; replies are written by a small escaping writer, since a
// BOINC reply is a flat list of known elements.

const { XMLParser } = require('fast-xml-parser');

// Elements a client may repeat; every other element must appear once.
const REPEATED = new Set([
  'result', 'file_info', 'other_result', 'app_version', 'file_ref', 'alt_platform',
  'coproc', 'coproc_cuda', 'coproc_ati', 'coproc_intel_gpu',
]);

const parser = new XMLParser({
  ignoreAttributes: true,      // nothing we read is an attribute
  parseTagValue: false,        // every value stays a string: checked by the caller
  trimValues: true,
  // The five predefined entities only: no DOCTYPE entity is ever defined,
  // so nothing can expand (billion laughs, external entities).
  processEntities: { enabled: true, maxEntityCount: 0, maxTotalExpansions: 10000, maxExpandedLength: 1 << 20 },
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: 16,
  // Free text a client sends that we never read: kept as one string, not
  // parsed into objects.
  stopNodes: ['*.stderr_out', '*.working_global_preferences', '*.global_preferences',
              '*.time_stats_log', '*.job_log', '*.opencl_cpu_prop', '*.coproc_opencl'],
  isArray: (name) => REPEATED.has(name),
});

class XmlError extends Error {}

// parse(text): the document as nested objects and strings.  A document type
// declaration is refused outright rather than left to the parser.
function parse(text) {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new XmlError('a document type declaration is not accepted');
  try {
    return parser.parse(text);
  } catch (err) {
    throw new XmlError(`malformed XML: ${err.message}`);
  }
}

// ---------------------------------------------------------------------------
// Writing.

const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const SPECIAL = /[&<>"']/;

// Most values have nothing to escape: they are returned as they are.
function escape(value) {
  const text = String(value);
  return SPECIAL.test(text) ? text.replace(/[&<>"']/g, (c) => ENTITIES[c]) : text;
}

// A reply under construction: el() adds <name>value</name>, flag() an empty
// element, open()/close() a container, raw() text that is already XML.
class Writer {
  constructor(root) {
    this.root = root;
    this.lines = [`<${root}>`];
  }

  el(name, value) {
    this.lines.push(`<${name}>${escape(value)}</${name}>`);
    return this;
  }

  num(name, value) {
    if (!Number.isFinite(value)) throw new Error(`${name} is not a finite number: ${value}`);
    return this.el(name, Number.isInteger(value) ? String(value) : value.toFixed(6));
  }

  flag(name) {
    this.lines.push(`<${name}/>`);
    return this;
  }

  open(name) {
    this.lines.push(`<${name}>`);
    return this;
  }

  close(name) {
    this.lines.push(`</${name}>`);
    return this;
  }

  // A message for the volunteer (scheduler replies): priority "notice" or
  // "low".  Control characters are shown as "?".
  message(priority, text) {
    this.lines.push(`<message priority="${escape(priority)}">${escape(String(text).replace(/[\u0000-\u001f\u007f]/g, '?'))}</message>`);
    return this;
  }

  // Text already in BOINC's own format (a key or signature in hex lines).
  block(name, text) {
    if (/[<&]/.test(text)) throw new Error(`${name} must not contain markup`);
    this.lines.push(`<${name}>\n${text}</${name}>`);
    return this;
  }

  toString() {
    return `${this.lines.join('\n')}\n</${this.root}>\n`;
  }
}

module.exports = { parse, escape, Writer, XmlError };
