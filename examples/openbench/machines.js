'use strict';
// Who is asking.  Workers start with an account's name and password
// (clientMatchRunnerVersionRef, clientWorkerInfo, network downloads);
// clientWorkerInfo registers the machine as an allot host and gives it a
// machine id and a secret, which every later call carries.  The replies and
// error strings are OpenBench's: an error that says "Bad Client Version"
// makes the worker update itself, or exit when it may not.

const { BadRequest, show } = require('./forms');
const { newHashRow, newMachineSecret } = require('./secrets');

// A refusal in OpenBench's words: the worker gets {"error": message}.
class Refused extends Error {}

const WORD = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$/;
const VERSION = /^[0-9]{1,9}(\.[0-9]{1,9}){0,3}$/;
const SECRET = /^[0-9a-f]{64}$/;
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const MAX_SYSTEM_INFO = 65536;

// ---------------------------------------------------------------------------
// system_info, as clientWorkerInfo sends it (JSON in a form field).

function intIn(info, name, min, max) {
  const v = info[name];
  if (!Number.isSafeInteger(v) || v < min || v > max) {
    throw new BadRequest(`system_info.${name} must be a whole number between ${min} and ${max}, not ${show(v)}`);
  }
  return v;
}

function textIn(info, name, max, fallback = '') {
  const v = info[name];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string' || v.length > max || /[\u0000-\u001f\u007f]/.test(v)) {
    throw new BadRequest(`system_info.${name} must be text of at most ${max} printable characters`);
  }
  return v;
}

function names(info, name, max) {
  const v = info[name] ?? [];
  if (!Array.isArray(v) || v.length > max || !v.every((x) => typeof x === 'string' && WORD.test(x))) {
    throw new BadRequest(`system_info.${name} must be a list of at most ${max} names of letters, digits and "_.+-"`);
  }
  return [...new Set(v)];
}

// The figures allot's selection reads, and what the operator may want to
// see, from what the worker says of itself.  Engines the front end does not
// know are left out of compilers and tokens.
function readSystemInfo(text, engines) {
  if (text.length > MAX_SYSTEM_INFO) throw new BadRequest(`system_info is longer than ${MAX_SYSTEM_INFO} characters`);
  let info;
  try {
    info = JSON.parse(text);
  } catch (err) {
    throw new BadRequest(`system_info is not JSON: ${err.message}`);
  }
  if (!isObject(info)) throw new BadRequest('system_info must be a JSON object');

  const threads = intIn(info, 'concurrency', 1, 4096);
  const sockets = intIn(info, 'sockets', 1, threads);
  // psutil may not know the physical cores (null): then no hyperthreads
  const physical = info.physical_cores === null ? null : intIn(info, 'physical_cores', 1, 65536);
  const os = textIn(info, 'os_name', 64);
  if (!WORD.test(os)) throw new BadRequest(`system_info.os_name is not a system name: ${show(os)}`);

  const compilers = {};
  const byEngine = {};
  if (!isObject(info.compilers ?? {})) throw new BadRequest('system_info.compilers must be an object');
  for (const [engine, found] of Object.entries(info.compilers ?? {})) {
    if (!engines.has(engine)) continue;
    if (!Array.isArray(found) || found.length !== 2 || typeof found[0] !== 'string' || !WORD.test(found[0])
        || typeof found[1] !== 'string' || !VERSION.test(found[1])) {
      throw new BadRequest(`system_info.compilers.${engine} must be [compiler, version], not ${show(found)}`);
    }
    const [compiler, version] = found;
    if (compiler in compilers && compilers[compiler] !== version) {
      throw new BadRequest(`system_info.compilers gives ${compiler} two versions`);
    }
    compilers[compiler] = version;
    byEngine[engine] = found;
  }
  if (!isObject(info.tokens ?? {})) throw new BadRequest('system_info.tokens must be an object');
  const tokens = Object.keys(info.tokens ?? {}).filter((e) => engines.has(e) && info.tokens[e] === true);
  const noisy = info.noisy ?? false;
  if (typeof noisy !== 'boolean') throw new BadRequest('system_info.noisy must be true or false');

  const host = {
    os,
    cpuFlags: names(info, 'cpu_flags', 256),
    compilers,
    tokens,
    threads,
    // OpenBench: hyperthreaded when the physical cores are fewer than the
    // threads it plays with; allot reads the same from physical_cores
    physicalCores: physical !== null && physical < threads ? physical : null,
    sockets,
    syzygyMax: intIn(info, 'syzygy_max', 0, 7),
    noisy,
    focus: names(info, 'focus', 64),
  };
  const kept = {
    machine_name: textIn(info, 'machine_name', 64, 'None'),
    cpu_name: textIn(info, 'cpu_name', 128),
    isa_name: textIn(info, 'isa_name', 64),
    os_name: os,
    os_ver: textIn(info, 'os_ver', 128),
    python_ver: textIn(info, 'python_ver', 32),
    mac_address: textIn(info, 'mac_address', 32),
    cxx_comp: textIn(info, 'cxx_comp', 64),
    fastchess_ver: textIn(info, 'fastchess_ver', 32),
    logical_cores: info.logical_cores === undefined || info.logical_cores === null ? null : intIn(info, 'logical_cores', 1, 65536),
    physical_cores: physical,
    ram_total_mb: info.ram_total_mb === undefined ? null : intIn(info, 'ram_total_mb', 0, 1e9),
    concurrency: threads,
    sockets,
    syzygy_max: host.syzygyMax,
    noisy,
    focus: host.focus,
    cpu_flags: host.cpuFlags,
    compilers: byEngine,
    tokens,
  };
  return { clientVer: info.client_ver, host, kept };
}

// ---------------------------------------------------------------------------

function makeMachines(db, { verify, config }) {
  // The account a username and password name, or Refused('Bad Credentials').
  async function account(form) {
    const name = form.text('username', { max: 150 });
    const password = form.text('password', { max: 1024, optional: true }) ?? '';
    return accountOf(name, password);
  }

  async function accountOf(name, password) {
    const valid = USERNAME.test(name);
    const { rows } = valid ? await db.query(
      'SELECT id, name, enabled, salt, hash, scrypt_n, scrypt_r, scrypt_p FROM openbench.account WHERE name = $1',
      [name]) : { rows: [] };
    const row = rows[0] ?? null;
    // an unknown name costs what a wrong password does
    const right = await verify('account', name, password, row);
    if (!right || !row.enabled) throw new Refused('Bad Credentials');
    return { id: row.id, name: row.name };
  }

  // The machine a call names, once its secret is checked: OpenBench's
  // verify_worker, error strings included.
  async function machine(form) {
    const id = form.one('machine_id');
    if (typeof id !== 'string' || !/^[1-9][0-9]{0,17}$/.test(id)) throw new Refused('Bad Client Version: Bad Machine Id');
    const { rows } = await db.query(
      `SELECT m.host_id, m.client_ver, m.salt, m.hash, m.scrypt_n, m.scrypt_r, m.scrypt_p, a.enabled
         FROM openbench.machine m JOIN openbench.account a ON a.id = m.account_id WHERE m.host_id = $1`, [id]);
    if (rows.length === 0) throw new Refused('Bad Client Version: Bad Machine Id');
    const row = rows[0];
    if (row.client_ver !== config.clientVersion) throw new Refused(`Bad Client Version: Expected ${config.clientVersion}`);
    const secret = form.one('secret');
    if (typeof secret !== 'string' || !SECRET.test(secret) || !(await verify('machine', id, secret, row))) {
      throw new Refused('Bad Client Version: Invalid Secret Token');
    }
    if (!row.enabled) throw new Refused('Bad Credentials');
    return { hostId: row.host_id };
  }

  return {
    machine,

    async clientVersionRef(form) {
      await account(form);
      return { reply: { client_version: config.clientVersion, client_repo_url: config.clientRepoUrl, client_repo_ref: config.clientRepoRef } };
    },

    async clientMatchRunnerVersionRef(form) {
      await account(form);
      return {
        reply: {
          fastchess_min_version: config.fastchessMinVersion,
          fastchess_repo_url: config.fastchessRepoUrl,
          fastchess_repo_ref: config.fastchessRepoRef,
        },
      };
    },

    // How to build each engine; the worker finds its compilers, tokens and
    // CPU flags for these.  No login, as in OpenBench.
    async clientGetBuildInfo() {
      const { rows } = await db.query(
        'SELECT name, build_path, compilers, cpuflags, systems, private FROM openbench.engine ORDER BY name');
      const out = {};
      for (const e of rows) {
        out[e.name] = { path: e.build_path, compilers: e.compilers, cpuflags: e.cpuflags, systems: e.systems, private: e.private };
      }
      return { reply: out };
    },

    // A new machine for this session, as OpenBench does, and its secret.
    async clientWorkerInfo(form) {
      const who = await account(form);
      const { rows: engineRows } = await db.query('SELECT name FROM openbench.engine');
      const { clientVer, host, kept } = readSystemInfo(
        form.text('system_info', { max: MAX_SYSTEM_INFO }), new Set(engineRows.map((r) => r.name)));
      if (clientVer !== config.clientVersion) throw new Refused(`Bad Client Version: Expected ${config.clientVersion}`);

      const secret = newMachineSecret();
      const hashed = await newHashRow(secret);
      const name = kept.machine_name === 'None' ? who.name : `${who.name}/${kept.machine_name}`;
      const hostId = await db.transaction(async (c) => {
        const { rows } = await c.query(
          `SELECT openbench.register_host($1, $2, $3::text[], $4::jsonb, $5::text[], $6, $7, $8, $9, $10, $11::text[]) AS id`,
          [name, host.os, host.cpuFlags, JSON.stringify(host.compilers), host.tokens, host.threads,
           host.physicalCores, host.sockets, host.syzygyMax, host.noisy, host.focus]);
        await c.query(
          `INSERT INTO openbench.machine (host_id, account_id, salt, hash, scrypt_n, scrypt_r, scrypt_p, client_ver, info)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)`,
          [rows[0].id, who.id, hashed.salt, hashed.hash, hashed.scrypt_n, hashed.scrypt_r, hashed.scrypt_p,
           clientVer, JSON.stringify(kept)]);
        return rows[0].id;
      });
      return { reply: { machine_id: Number(hostId), secret }, note: `account ${who.name}: machine ${hostId}` };
    },

    account,
    accountOf,
  };
}

module.exports = { makeMachines, Refused };
