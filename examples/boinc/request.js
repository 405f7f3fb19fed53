'use strict';
// A <scheduler_request>, read: every field the front end uses, checked
// (hostile until checked), into a plain object.  Pure: no database, so that
// a large request can be read in a worker thread (intake.js).

const files = require('./files');

// A request we will not serve: the client gets a reply with this message.
class BadRequest extends Error {}

const MAX_INT32 = 2147483647;
const NUMBER = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?$/;
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const PLATFORM = /^[A-Za-z0-9_.-]{1,64}$/;
const RESULT_NAME = files.FILE_NAME;
const CPU_FLAG = /^[A-Za-z0-9_.+-]{1,64}$/;

// BOINC's coprocessor elements, allot's resource name, and the type name an
// app version's <coproc> uses.
const COPROCS = {
  coproc_cuda: { resource: 'nvidia', boinc: 'NVIDIA' },
  coproc_ati: { resource: 'amd', boinc: 'ATI' },
  coproc_intel_gpu: { resource: 'intel', boinc: 'intel_gpu' },
};

const show = (v) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};

// ---------------------------------------------------------------------------
// Reading the request.

function isNode(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function one(node, name) {
  const v = node[name];
  if (Array.isArray(v)) throw new BadRequest(`<${name}> appears more than once`);
  return v;
}

function text(node, name, { max = 256, pattern = null, required = false } = {}) {
  const v = one(node, name);
  if (v === undefined) {
    if (required) throw new BadRequest(`<${name}> is missing`);
    return null;
  }
  if (typeof v !== 'string') throw new BadRequest(`<${name}> must hold text`);
  if (v.length > max) throw new BadRequest(`<${name}> is longer than ${max} characters`);
  if (CONTROL.test(v)) throw new BadRequest(`<${name}> holds control characters`);
  if (pattern && !pattern.test(v)) throw new BadRequest(`<${name}> is not valid: ${show(v)}`);
  return v;
}

function number(node, name, { min, max, fallback = null }) {
  const v = one(node, name);
  if (v === undefined || v === '') return fallback;
  if (typeof v !== 'string' || !NUMBER.test(v)) throw new BadRequest(`<${name}> must be a number, not ${show(v)}`);
  const x = Number(v);
  if (!(x >= min && x <= max)) throw new BadRequest(`<${name}> must be between ${min} and ${max}, not ${v}`);
  return x;
}

function integer(node, name, range) {
  const x = number(node, name, range);
  if (x !== null && !Number.isInteger(x)) throw new BadRequest(`<${name}> must be an integer, not ${x}`);
  return x;
}

function list(node, name) {
  const v = node[name];
  if (v === undefined || v === '') return [];
  if (!Array.isArray(v)) throw new BadRequest(`<${name}> is malformed`);
  return v;
}

// Amounts of work a client may ask for: beyond these it is not a client.
const SECS = { min: 0, max: 1e9 };
const INSTANCES = { min: 0, max: 1e5 };

function coprocessors(req, limits) {
  const block = one(req, 'coprocs');
  const found = [];
  if (block === undefined || block === '') return found;
  if (!isNode(block)) throw new BadRequest('<coprocs> is malformed');
  for (const [element, kind] of Object.entries(COPROCS)) {
    for (const c of list(block, element)) {
      if (!isNode(c)) throw new BadRequest(`<${element}> is malformed`);
      found.push({
        resource: kind.resource,
        count: integer(c, 'count', { min: 0, max: 1024, fallback: 0 }),
        peakFlops: number(c, 'peak_flops', { min: 0, max: 1e18, fallback: 0 }),
        reqSecs: number(c, 'req_secs', { ...SECS, fallback: 0 }),
        reqInstances: number(c, 'req_instances', { ...INSTANCES, fallback: 0 }),
        estimatedDelay: number(c, 'estimated_delay', { ...SECS, fallback: 0 }),
      });
    }
  }
  if (found.length > limits.maxCoprocs) throw new BadRequest(`more than ${limits.maxCoprocs} coprocessors`);
  return found;
}

function reports(req, limits) {
  const out = [];
  for (const r of list(req, 'result')) {
    if (!isNode(r)) throw new BadRequest('<result> is malformed');
    if (out.length === limits.maxResults) break;   // the rest come in the next request (held, below)
    const fileInfos = list(r, 'file_info').map((f) => {
      if (!isNode(f)) throw new BadRequest('<file_info> of a result is malformed');
      return {
        name: text(f, 'name', { max: 128, pattern: files.FILE_NAME, required: true }),
        nbytes: number(f, 'nbytes', { min: 0, max: 1e15, fallback: null }),
        md5: text(f, 'md5_cksum', { max: 32, pattern: files.MD5 }),
      };
    });
    out.push({
      name: text(r, 'name', { max: 128, pattern: RESULT_NAME, required: true }),
      state: integer(r, 'state', { min: 0, max: 100, fallback: null }),
      exitStatus: integer(r, 'exit_status', { min: -MAX_INT32 - 1, max: 0xffffffff, fallback: null }),
      elapsed: number(r, 'final_elapsed_time', { min: 0, max: 1e12, fallback: null }),
      fileInfos,
    });
  }
  return out;
}

// The results the client still holds: those it lists in <other_results>
// (jobs not finished) and those it reports, at most limits.maxHeld names
// in all.  {listed: whether it sent the list at all, complete: whether every
// name fitted, others: the names listed, reported: the names reported}.  A
// name that could not be one the front end gave is left out: it cannot be
// a sending of this project.
function held(req, limits) {
  const seen = new Set();
  let complete = true;
  const names = (nodes) => nodes.flatMap((node) => {
    const name = isNode(node) && typeof node.name === 'string' ? node.name : null;
    if (name === null || !RESULT_NAME.test(name) || seen.has(name)) return [];
    if (seen.size === limits.maxHeld) {
      complete = false;
      return [];
    }
    seen.add(name);
    return [name];
  });
  const reported = names(list(req, 'result'));
  const block = one(req, 'other_results');
  if (block !== undefined && block !== '' && !isNode(block)) throw new BadRequest('<other_results> is malformed');
  const others = isNode(block) ? names(list(block, 'other_result')) : [];
  return { listed: block !== undefined, complete, others, reported };
}

function readRequest(doc, limits) {
  const req = doc.scheduler_request;
  if (!isNode(req)) throw new BadRequest('no <scheduler_request>');
  const info = one(req, 'host_info');
  if (!isNode(info)) throw new BadRequest('<host_info> is missing');
  const features = text(info, 'p_features', { max: 16384 }) ?? '';
  return {
    authenticator: text(req, 'authenticator', { max: 256 }) ?? '',
    hostid: integer(req, 'hostid', { min: 0, max: MAX_INT32, fallback: 0 }),
    rpcSeqno: integer(req, 'rpc_seqno', { min: 0, max: 1e15, fallback: 0 }),
    platform: text(req, 'platform_name', { max: 64, pattern: PLATFORM, required: true }),
    dontSendWork: integer(req, 'dont_send_work', { min: 0, max: 1, fallback: 0 }) === 1,
    allowMultipleClients: integer(req, 'allow_multiple_clients', { min: 0, max: 1, fallback: 0 }) === 1,
    hasKey: one(req, 'code_sign_key') !== undefined,
    work: {
      legacySecs: number(req, 'work_req_seconds', { ...SECS, fallback: 0 }),
      resourceForm: req.cpu_req_secs !== undefined || req.cpu_req_instances !== undefined,
      cpuSecs: number(req, 'cpu_req_secs', { ...SECS, fallback: 0 }),
      cpuInstances: number(req, 'cpu_req_instances', { ...INSTANCES, fallback: 0 }),
      cpuDelay: number(req, 'estimated_delay', { ...SECS, fallback: 0 }),
    },
    host: {
      domainName: text(info, 'domain_name', { max: 255 }),
      hostCpid: text(info, 'host_cpid', { max: 64, pattern: /^[0-9a-f]*$/ }),
      osName: text(info, 'os_name', { max: 128 }),
      osVersion: text(info, 'os_version', { max: 256 }),
      ncpus: integer(info, 'p_ncpus', { min: 1, max: 4096, fallback: 1 }),
      fpops: number(info, 'p_fpops', { min: 0, max: 1e18, fallback: 0 }),
      // Flags that could never name a requirement are dropped, not refused:
      // an app version's flags are plain names.
      cpuFlags: [...new Set(features.split(/\s+/).filter((f) => CPU_FLAG.test(f)))].slice(0, 1024),
    },
    coprocs: coprocessors(req, limits),
    results: reports(req, limits),
    held: held(req, limits),
  };
}

module.exports = { readRequest, BadRequest, MAX_INT32 };
