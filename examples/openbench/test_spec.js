'use strict';
// What a test is made of, checked the same way for the operator's
// create-test (admin.js) and the site's form (workload_forms.js): time
// controls, engine options, Syzygy and adjudication settings, SPRT bounds
// and error rates.  Each check takes the label of the field it reads, for a
// message that names it, and throws a SpecError.

const { llrBounds } = require('./sprt');

class SpecError extends Error {}

const show = (v) => JSON.stringify(String(v ?? '').slice(0, 60));

// OpenBench's time controls, written its way: N=, D=, MT= (nodes, depth,
// movetime), or [moves/]base[+increment] in seconds.
function timeControl(text, label) {
  const fixed = /^(N|NODES|D|DEPTH|MT|MOVETIME)=([0-9]{1,12})$/i.exec(text ?? '');
  if (fixed) {
    const mode = { N: 'N', NODES: 'N', D: 'D', DEPTH: 'D', MT: 'MT', MOVETIME: 'MT' }[fixed[1].toUpperCase()];
    return `${mode}=${Number(fixed[2])}`;
  }
  const clock = /^(?:([0-9]{1,4})\/)?([0-9]{1,6}(?:\.[0-9]+)?)(?:\+([0-9]{1,6}(?:\.[0-9]+)?))?$/.exec(text ?? '');
  if (!clock) throw new SpecError(`${label} must be N=nodes, D=depth, MT=ms or [moves/]seconds[+increment], not ${show(text)}`);
  const [, moves, base, inc] = clock;
  const fischer = `${Number(base).toFixed(1)}+${Number(inc ?? 0).toFixed(2)}`;
  return moves === undefined ? fischer : `${Number(moves)}/${fischer}`;
}
const fixedDepthOrNodes = (tc) => /^(N|D)=/.test(tc);

// OpenBench reads an engine's threads from its options: Threads=N.
function threadsOf(options, label) {
  const m = /(?:^|\s)Threads=([0-9]{1,4})(?:\s|$)/.exec(options ?? '');
  if (!m || Number(m[1]) < 1) throw new SpecError(`${label} must set Threads=N (e.g. "Threads=1 Hash=16")`);
  return Number(m[1]);
}

// UCI options "Name=value ...": printable, at most 1024 characters.
function engineOptions(text, label) {
  if (typeof text !== 'string' || text.length > 1024 || /[\u0000-\u001f\u007f]/.test(text)) {
    throw new SpecError(`${label} must be at most 1024 printable characters`);
  }
  threadsOf(text, label);
  return text.trim();
}

function syzygy(text, label) {
  const v = (text ?? 'OPTIONAL').toUpperCase();
  if (!/^(OPTIONAL|DISABLED|[3-7]-MAN)$/.test(v)) throw new SpecError(`${label}: OPTIONAL, DISABLED or 3-MAN to 7-MAN, not ${show(text)}`);
  return v;
}

// fastchess's -resign and -draw settings, or None.
function adjudication(text, label) {
  const v = text ?? 'None';
  if (!/^[A-Za-z0-9=. ]{1,64}$/.test(v)) throw new SpecError(`${label}: fastchess's settings (such as "movecount=3 score=400"), or None, not ${show(text)}`);
  return v;
}

function oneOf(text, choices, label) {
  const v = (text ?? '').toUpperCase();
  if (!choices.includes(v)) throw new SpecError(`${label}: ${choices.join(', ')}, not ${show(text)}`);
  return v;
}

function numberIn(text, label, min, max, { integer = false } = {}) {
  const x = Number(text);
  if (text === undefined || text === null || String(text).trim() === '' || !Number.isFinite(x) || x < min || x > max
      || (integer && !Number.isInteger(x))) {
    throw new SpecError(`${label} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, not ${show(text)}`);
  }
  return x;
}

// Two numbers "a,b", in brackets or not: [a, b].
function pair(text, label, what) {
  const m = /^\s*\[?\s*(-?[0-9]+(?:\.[0-9]+)?)\s*,\s*(-?[0-9]+(?:\.[0-9]+)?)\s*\]?\s*$/.exec(text ?? '');
  if (!m) throw new SpecError(`${label} must be ${what}, not ${show(text)}`);
  return [Number(m[1]), Number(m[2])];
}

// An SPRT's bounds (normalised Elo, or BayesElo for a trinomial one) and
// error rates: {lower, upper, alpha, beta, lowerLlr, upperLlr}.
function sprt(bounds, alphaText, betaText, labels) {
  const [lower, upper] = pair(bounds, labels.bounds, 'two Elo bounds "[ELO0, ELO1]"');
  for (const e of [lower, upper]) {
    if (e < -500 || e > 500) throw new SpecError(`${labels.bounds}: each bound must be within [-500, 500], not ${e}`);
  }
  if (!(lower < upper)) throw new SpecError(`${labels.bounds}: the first bound must be below the second`);
  const alpha = numberIn(alphaText, labels.alpha, 1e-6, 0.499);
  const beta = numberIn(betaText, labels.beta, 1e-6, 0.499);
  const b = llrBounds(alpha, beta);
  return { lower, upper, alpha, beta, lowerLlr: b.lower, upperLlr: b.upper };
}

module.exports = {
  SpecError, timeControl, fixedDepthOrNodes, threadsOf, engineOptions, syzygy, adjudication, oneOf, numberIn, pair, sprt,
};
