'use strict';
// Settings from the environment.  A server reads its own once, as it
// starts: a bad one stops it with status 2 and a sentence naming it
// (envInt), never a default quietly used instead.  Parts that read theirs
// later (the status page) get the same check as an error (intSetting).

class SettingError extends Error {}

// The integer env[name], at least min; fallback when unset or empty.
function intSetting(env, name, fallback, min = 0) {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^[0-9]{1,12}$/.test(text) || Number(text) < min) {
    const what = min === 0 ? 'a non-negative integer' : `an integer of at least ${min}`;
    throw new SettingError(`${name} must be ${what}, not ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function orExit(read) {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof SettingError)) throw err;
    console.error(err.message);
    return process.exit(2);
  }
}

// The server's own settings: process.env, and exit 2 on a bad value.
const envInt = (name, fallback) => orExit(() => intSetting(process.env, name, fallback));

// process.env[name] or fallback, which must match pattern.
const envText = (name, fallback, pattern) => orExit(() => {
  const text = process.env[name] || fallback;
  if (!pattern.test(text)) throw new SettingError(`${name} is not valid: ${JSON.stringify(text)}`);
  return text;
});

module.exports = { intSetting, envInt, envText, SettingError, orExit };
