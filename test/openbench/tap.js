'use strict';
// A few lines of TAP for the front end's unit tests in node, read by
// test/t/061_openbench_site.pl: check(name, ok, detail) prints "ok N - name"
// or "not ok N - name" with the detail as a comment; near() compares
// numbers to a relative tolerance.

let count = 0;
let failed = 0;

function check(name, ok, detail = '') {
  count += 1;
  if (!ok) failed += 1;
  console.log(`${ok ? '' : 'not '}ok ${count} - ${name}`);
  if (!ok && detail) console.log(`# ${String(detail).replace(/\n/g, '\n# ')}`);
}

function near(name, got, want, tolerance = 1e-9) {
  const ok = typeof got === 'number' && Math.abs(got - want) <= tolerance * Math.max(1, Math.abs(want));
  check(name, ok, `got ${got}, want ${want}`);
}

// Runs fn, which must throw an error of class cls whose message matches re.
async function throwsLike(name, fn, cls, re) {
  try {
    await fn();
    check(name, false, 'nothing was thrown');
  } catch (err) {
    check(name, err instanceof cls && re.test(err.message), `threw ${err.constructor.name}: ${err.message}`);
  }
}

function done() {
  console.log(`1..${count}`);
  process.exitCode = failed || count === 0 ? 1 : 0;
}

module.exports = { check, near, throwsLike, done };
