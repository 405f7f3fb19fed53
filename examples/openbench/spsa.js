'use strict';
// SPSA tunes, as OpenBench runs them (simultaneous perturbation stochastic
// approximation): the engine plays itself, dev with every parameter moved
// one way by c and base moved the other way, and after each report every
// parameter moves by r * c * (wins - losses) * flip, where flip is the
// direction dev was moved in.  c and r shrink as the tune goes on.
//
// A tune's parameters are written one a line, as OpenBench's form takes them:
//
//     name, int|float, start, min, max, c_end, r_end
//
// At creation each parameter gets
//     c_value = c_end * iterations^gamma
//     a_value = r_end * c_end^2 * (a_ratio * iterations + iterations)^alpha
// and when a workload is handed out, at iteration i = 1 + games / (2 *
// pairs_per) (fractions included),
//     c = max(c_value / i^gamma, 0 for a float or 0.5 for an int)
//     r = a_value / (a_ratio * iterations + i)^alpha / c^2
// so that c reaches c_end and r reaches r_end at the last iteration.
//
// A workload gets one perturbation (SINGLE: every match runner plays the
// same one) or one per match runner (MULTIPLE), each parameter's flip drawn
// at random; an int's dev and base values are rounded down after adding the
// same uniform draw in [0, 1) to both (rounding that is right on average),
// and both are kept within [min, max].
//
// The worker reports the sum over its batches of r * c * (wins - losses) *
// flip[runner] per parameter (its spsa_delta).  A report is checked
// against the perturbation the workload was given: with one flip for all
// runners (SINGLE) the delta must be exactly r * c * flip * (wins - losses)
// of the report's trinomial; with a flip per runner it can be at most
// r * c * (wins + losses) away from zero either way.

const crypto = require('node:crypto');

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_PARAMETERS = 128;
const NUMBER = /^\s*-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?\s*$/;

// A mistake in a tune's description; the message names the line and value.
class SpsaInputError extends Error {}

function number(text, what, line) {
  if (!NUMBER.test(text)) throw new SpsaInputError(`line ${line}: ${what} must be a number, not ${JSON.stringify(text.trim().slice(0, 40))}`);
  const x = Number(text);
  if (!Number.isFinite(x) || Math.abs(x) > 1e12) throw new SpsaInputError(`line ${line}: ${what} must be a finite number within +-1e12`);
  return x;
}

// The parameters of a tune from its text, one a line; blank lines skipped.
function parseInputs(text) {
  const params = [];
  const seen = new Set();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    if (raw.trim() === '') continue;
    const line = i + 1;
    const fields = raw.split(',');
    if (fields.length !== 7) {
      throw new SpsaInputError(`line ${line}: a parameter is "name, int|float, start, min, max, c_end, r_end" (7 fields), not ${fields.length}`);
    }
    const name = fields[0].trim();
    if (!NAME.test(name)) throw new SpsaInputError(`line ${line}: ${JSON.stringify(name.slice(0, 40))} is not a UCI option name (letters, digits and _)`);
    if (seen.has(name)) throw new SpsaInputError(`line ${line}: ${name} is named twice`);
    seen.add(name);
    const type = fields[1].trim();
    if (type !== 'int' && type !== 'float') throw new SpsaInputError(`line ${line}: the type of ${name} must be int or float, not ${JSON.stringify(type.slice(0, 20))}`);
    const [start, min, max, cEnd, rEnd] = fields.slice(2).map((f, k) => number(f, ['start', 'min', 'max', 'c_end', 'r_end'][k], line));
    if (!(min < max)) throw new SpsaInputError(`line ${line}: the min of ${name} (${min}) must be below its max (${max})`);
    if (!(start >= min && start <= max)) throw new SpsaInputError(`line ${line}: the start of ${name} (${start}) must be within [${min}, ${max}]`);
    if (type === 'int' && ![start, min, max].every(Number.isInteger)) {
      throw new SpsaInputError(`line ${line}: ${name} is an int: its start, min and max must be whole numbers`);
    }
    if (!(cEnd > 0)) throw new SpsaInputError(`line ${line}: c_end of ${name} must be above 0, not ${cEnd}`);
    if (!(rEnd > 0)) throw new SpsaInputError(`line ${line}: r_end of ${name} must be above 0, not ${rEnd}`);
    if (params.length === MAX_PARAMETERS) throw new SpsaInputError(`a tune has at most ${MAX_PARAMETERS} parameters`);
    params.push({ index: params.length, name, isFloat: type === 'float', start, min, max, cEnd, rEnd });
  }
  if (params.length === 0) throw new SpsaInputError('no parameters: give one a line, "name, int|float, start, min, max, c_end, r_end"');
  return params;
}

// Each parameter's c_value and a_value for a run's settings.
function scale(run, params) {
  const { alpha, gamma, aRatio, iterations } = run;
  return params.map((p) => ({
    ...p,
    value: p.start,
    cValue: p.cEnd * iterations ** gamma,
    aValue: p.rEnd * p.cEnd ** 2 * (aRatio * iterations + iterations) ** alpha,
  }));
}

// c and r of each parameter after `games` games.
function schedule(run, params, games) {
  const iteration = 1 + games / (2 * run.pairsPer);
  const cCompression = iteration ** run.gamma;
  const rCompression = (run.aRatio * run.iterations + iteration) ** run.alpha;
  return params.map((p) => {
    const c = Math.max(p.cValue / cCompression, p.isFloat ? 0 : 0.5);
    return { c, r: p.aValue / rCompression / c ** 2 };
  });
}

const clip = (x, p) => Math.min(p.max, Math.max(p.min, x));

// The perturbations of a workload with `runners` match runners, as the
// worker reads them: {name: {index, dev: [...], base: [...], flip: [...], c, r}},
// one entry per runner in each list.  random() gives [0, 1); flips come
// from crypto.randomInt.
function perturbation(run, params, games, runners, random = Math.random) {
  const single = run.distributionType === 'SINGLE';
  const draws = single ? 1 : runners;
  const cr = schedule(run, params, games);
  const out = {};
  params.forEach((p, i) => {
    const { c, r } = cr[i];
    const dev = [];
    const base = [];
    const flip = [];
    for (let k = 0; k < draws; k++) {
      const f = crypto.randomInt(2) === 0 ? -1 : 1;
      let d = p.value + f * c;
      let b = p.value - f * c;
      if (!p.isFloat) {
        const u = random();
        d = Math.floor(d + u);
        b = Math.floor(b + u);
      }
      dev.push(clip(d, p));
      base.push(clip(b, p));
      flip.push(f);
    }
    const copies = single ? runners : 1;
    const repeat = (xs) => xs.flatMap((x) => Array(copies).fill(x));
    out[p.name] = { index: p.index, dev: repeat(dev), base: repeat(base), flip: repeat(flip), c, r };
  });
  return out;
}

// Why a reported delta cannot be what the workload's perturbation gives,
// or null when it can.  given: the perturbation handed out; delta: the
// numbers reported, in parameter order; wins and losses of the report.
function checkDelta(given, delta, wins, losses) {
  const entries = Object.values(given).sort((a, b) => a.index - b.index);
  if (!Array.isArray(delta) || delta.length !== entries.length) {
    return `spsa_delta must hold ${entries.length} numbers, one per parameter`;
  }
  for (let i = 0; i < entries.length; i++) {
    const g = entries[i];
    const d = delta[i];
    if (typeof d !== 'number' || !Number.isFinite(d)) return `spsa_delta[${i}] is not a finite number`;
    const oneFlip = g.flip.every((f) => f === g.flip[0]);
    const slack = 1e-9 * Math.max(1, g.r * g.c * (wins + losses));
    if (oneFlip) {
      const expected = g.r * g.c * g.flip[0] * (wins - losses);
      if (Math.abs(d - expected) > slack) return `spsa_delta[${i}] is ${d}, but this workload's games give ${expected}`;
    } else if (Math.abs(d) > g.r * g.c * (wins + losses) + slack) {
      return `spsa_delta[${i}] is ${d}, beyond what ${wins + losses} decisive games can give`;
    }
  }
  return null;
}

// The parameters after a report's delta, kept within [min, max].
const applyDelta = (params, delta) => params.map((p, i) => ({ ...p, value: clip(p.value + delta[i], p) }));

const shown = (p, x) => (p.isFloat ? String(x) : String(Math.round(x)));

// OpenBench's api/spsa/ID/inputs: the tune's description as it was given.
const inputsText = (params) => params.map((p) =>
  [p.name, p.isFloat ? 'float' : 'int', p.start, p.min, p.max, p.cEnd, p.rEnd].join(', ')).join('\n');

// api/spsa/ID/outputs: the values now, ints rounded.
const outputsText = (params) => params.map((p) => `${p.name}, ${shown(p, p.value)}`).join('\n');

// api/spsa/ID/digest: a CSV of each parameter now and what the next
// workload's c and r would be.
function digestRows(run, params, games) {
  const cr = schedule(run, params, games);
  const fixed = (p, x) => (p.isFloat ? x.toFixed(4) : String(Math.round(x)));
  return [['Name', 'Curr', 'Start', 'Min', 'Max', 'C', 'C_end', 'R', 'R_end'],
    ...params.map((p, i) => [p.name, p.value.toFixed(4), fixed(p, p.start), fixed(p, p.min), fixed(p, p.max),
      cr[i].c.toFixed(4), p.cEnd.toFixed(4), cr[i].r.toFixed(4), p.rEnd.toFixed(4)])];
}
const digestText = (run, params, games) => digestRows(run, params, games).map((r) => r.join(',')).join('\n');

// A tune's settings and parameters as openbench.create_test takes them
// (its spsa argument), from a run's settings and parseInputs' parameters.
function createSettings(run, params) {
  return {
    reporting_type: run.reportingType, distribution_type: run.distributionType, alpha: run.alpha, gamma: run.gamma,
    a_ratio: run.aRatio, iterations: run.iterations,
    parameters: scale(run, params).map((p) => ({
      name: p.name, is_float: p.isFloat, start: p.start, min_value: p.min, max_value: p.max,
      c_end: p.cEnd, r_end: p.rEnd, c_value: p.cValue, a_value: p.aValue,
    })),
  };
}

// A parameter row from the database, in the shape above.
const fromRow = (r) => ({
  index: r.index, name: r.name, isFloat: r.is_float, value: r.value, start: r.start, min: r.min_value,
  max: r.max_value, cEnd: r.c_end, rEnd: r.r_end, cValue: r.c_value, aValue: r.a_value,
});
const runFromRow = (r) => ({
  reportingType: r.reporting_type, distributionType: r.distribution_type, alpha: r.alpha, gamma: r.gamma,
  aRatio: r.a_ratio, iterations: Number(r.iterations), pairsPer: Number(r.pairs_per),
});

module.exports = {
  SpsaInputError, parseInputs, scale, createSettings, schedule, perturbation, checkDelta, applyDelta,
  inputsText, outputsText, digestRows, digestText, fromRow, runFromRow,
};
