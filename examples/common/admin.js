'use strict';
// What the front ends' operator commands (their admin.js) share: reading
// the command line, one connection as the operator, and errors told as
// sentences.  A command that fails says why in words that name the value:
// a mistake in the command line exits 2 (UsageError), a command the farm
// refuses exits 1 (Refused: a name already taken, a row that is not
// there), and nothing is changed by either.

const fs = require('node:fs');
const { Client, DatabaseError } = require('pg');

class UsageError extends Error {}
class Refused extends Error {}

// --name value pairs, and the flags in `flags` alone; each at most once.
function options(args, known, flags = []) {
  const out = {};
  for (let i = 0; i < args.length; i++) {
    const name = args[i].replace(/^--/, '');
    if (!args[i].startsWith('--') || !(known.includes(name) || flags.includes(name)) || name in out) {
      throw new UsageError(`unexpected argument ${JSON.stringify(args[i])}`);
    }
    if (flags.includes(name)) {
      out[name] = true;
    } else {
      if (i + 1 >= args.length) throw new UsageError(`--${name} needs a value`);
      out[name] = args[++i];
    }
  }
  return out;
}

// o[name], required, matching pattern (`what` says what it must be).
function need(o, name, pattern, what) {
  const v = o[name];
  if (v === undefined) throw new UsageError(`--${name} is required`);
  if (!pattern.test(v)) throw new UsageError(`--${name} must be ${what}, not ${JSON.stringify(v)}`);
  return v;
}

function number(v, name, min, max, { integer = false } = {}) {
  const x = Number(v);
  if (v === undefined || v === '' || !Number.isFinite(x) || x < min || x > max || (integer && !Number.isInteger(x))) {
    throw new UsageError(`--${name} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, not ${JSON.stringify(v)}`);
  }
  return x;
}

// An id (bigint), kept as its text.
function positiveInt(value, name) {
  if (!/^[1-9][0-9]{0,17}$/.test(value ?? '')) throw new UsageError(`--${name} must be a positive integer, not ${JSON.stringify(value)}`);
  return value;
}

const list = (v) => (v === undefined || v === '' ? [] : v.split(',').map((s) => s.trim()));

// The bytes of the file an option names, or a sentence saying why not.
function readOptionFile(file, name) {
  if (file === undefined) throw new UsageError(`--${name} is required`);
  try {
    return fs.readFileSync(file);
  } catch (err) {
    const why = { ENOENT: 'there is no such file', EISDIR: 'it is a directory', EACCES: 'it may not be read' }[err.code];
    throw new UsageError(`--${name} ${JSON.stringify(file)}: ${why ?? err.message}`);
  }
}

// fn(db) with one connection, made with the PG* variables.
async function withDb(applicationName, fn) {
  const db = new Client({ application_name: applicationName });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

async function transaction(db, fn) {
  await db.query('BEGIN');
  try {
    const result = await fn();
    await db.query('COMMIT');
    return result;
  } catch (err) {
    await db.query('ROLLBACK');
    throw err;
  }
}

// The message of a failure: the sentence of a refusal, or what failed and,
// for an error PostgreSQL raised, its detail (which names the value) and
// hint.
function message(command, err) {
  if (err instanceof UsageError || err instanceof Refused) return err.message;
  const more = err instanceof DatabaseError ? [err.detail, err.hint].filter(Boolean) : [];
  return `${command}: ${err.message}${more.map((m) => ` (${m})`).join('')}`;
}

// The program: node admin.js COMMAND ARGS..., one of `commands`.
function run(commands, usage) {
  const [command, ...args] = process.argv.slice(2);
  if (!Object.hasOwn(commands, command ?? '')) {
    console.error(usage);
    process.exit(2);
  }
  commands[command](args).catch((err) => {
    console.error(message(command, err));
    process.exit(err instanceof UsageError ? 2 : 1);
  });
}

module.exports = {
  UsageError, Refused, options, need, number, positiveInt, list, readOptionFile, withDb, transaction, run,
};
