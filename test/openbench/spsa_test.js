'use strict';
// examples/openbench/spsa.js, the arithmetic of OpenBench's SPSA tunes
// (spsa_utils.py at 9906bad): each parameter's c and a at creation, c and
// r after some games, the perturbation a workload is given, the check of a
// worker's report, and the parsing of a tune's parameters.  Reference
// figures computed with Python from OpenBench's formulas:
//   c_value = c_end * N^gamma, a_value = r_end * c_end^2 * (A*N + N)^alpha,
//   i = 1 + games / (2 * pairs), c = max(c_value / i^gamma, 0 | 0.5),
//   r = a_value / (A*N + i)^alpha / c^2.

const path = require('node:path');
const { check, near, done } = require('./tap');

const spsa = require(path.join(__dirname, '../../examples/openbench/spsa.js'));

const run = { alpha: 0.602, gamma: 0.101, aRatio: 0.1, iterations: 1000, pairsPer: 8, distributionType: 'SINGLE' };
const params = spsa.scale(run, spsa.parseInputs('Tempo, float, 10, 0, 50, 4, 0.002\nLmrBase, int, 100, 50, 150, 0.3, 0.002\n'));
near('c_value = c_end * N^gamma', params[0].cValue, 8.036371250434913);
near('a_value = r_end * c_end^2 * (A*N + N)^alpha', params[0].aValue, 2.1680454123350703);
check('a tune starts at its start values', params[0].value === 10 && params[1].value === 100);
const cr = spsa.schedule(run, params, 400);
near('c after 400 games (iteration 26)', cr[0].c, 5.782926641842856);
near('r after 400 games', cr[0].r, 0.003526549143616762);
check('an int parameter\'s c is at least 0.5', cr[1].c === 0.5, cr[1].c);

// SINGLE: one perturbation, copied to every runner; dev and base apart by
// 2c in the flip's direction (floats), within [min, max].
const single = spsa.perturbation(run, params, 400, 3, () => 0.25);
const t = single.Tempo;
check('SINGLE: one entry per runner, all alike',
  t.dev.length === 3 && t.flip.length === 3 && t.dev.every((x) => x === t.dev[0]) && t.flip.every((f) => f === t.flip[0]));
near('a float\'s dev - base is 2 c flip', t.dev[0] - t.base[0], 2 * cr[0].c * t.flip[0]);
const l = single.LmrBase;
check('an int\'s dev and base are floor(value +- c + u), u drawn once',
  l.dev[0] === Math.floor(100 + l.flip[0] * 0.5 + 0.25) && l.base[0] === Math.floor(100 - l.flip[0] * 0.5 + 0.25), JSON.stringify(l));
check('the worker is given c, r and the index', l.c === 0.5 && l.index === 1 && typeof l.r === 'number');
const edge = spsa.scale(run, spsa.parseInputs('Edge, float, 0, 0, 1, 4, 0.002'));
const e = spsa.perturbation(run, edge, 0, 1).Edge;
check('values are clipped to [min, max]', e.dev[0] >= 0 && e.dev[0] <= 1 && e.base[0] >= 0 && e.base[0] <= 1, JSON.stringify(e));
const multi = spsa.perturbation({ ...run, distributionType: 'MULTIPLE' }, params, 400, 64);
check('MULTIPLE: a flip drawn per runner (64 runners are not all alike)',
  multi.Tempo.flip.length === 64 && new Set(multi.Tempo.flip).size === 2);

// A report's delta against what the workload was given.
const g = spsa.perturbation(run, params, 400, 1);
const exact = [0, 1].map((i) => { const p = Object.values(g)[i]; return p.r * p.c * p.flip[0] * (7 - 3); });
check('a true report (r c flip (W - L)) passes', spsa.checkDelta(g, exact, 7, 3) === null);
check('a delta off by a little is refused', /but this workload's games give/.test(spsa.checkDelta(g, [exact[0] * 1.001, exact[1]], 7, 3) ?? ''));
check('a delta of the wrong length is refused', /must hold 2 numbers/.test(spsa.checkDelta(g, [exact[0]], 7, 3) ?? ''));
check('a delta that is not a number is refused', /is not a finite number/.test(spsa.checkDelta(g, [NaN, 0], 7, 3) ?? ''));
const gm = spsa.perturbation({ ...run, distributionType: 'MULTIPLE' }, params, 400, 64);
const bound = gm.Tempo.r * gm.Tempo.c * 10;
check('MULTIPLE: a delta within r c (W + L) passes', spsa.checkDelta(gm, [bound * 0.5, 0], 6, 4) === null);
check('MULTIPLE: a delta beyond r c (W + L) is refused', /beyond what 10 decisive games can give/.test(spsa.checkDelta(gm, [bound * 1.5, 0], 6, 4) ?? ''));
const moved = spsa.applyDelta(params, [100, -0.5]);
check('a delta moves the values, kept within [min, max]', moved[0].value === 50 && moved[1].value === 99.5);
check('outputs: ints rounded, floats as they are', spsa.outputsText(moved) === 'Tempo, 50\nLmrBase, 100');
check('digest: OpenBench\'s columns, %.4f and %d', spsa.digestText(run, params, 400).split('\n')[2] === 'LmrBase,100.0000,100,50,150,0.5000,0.3000,'
  + `${cr[1].r.toFixed(4)},0.0020`, spsa.digestText(run, params, 400));

// Hostile descriptions of a tune: each refused, naming the line and value.
for (const [text, re] of [
  ['Tempo, float, 10, 0, 50, 4', /line 1: a parameter is .* \(7 fields\), not 6/],
  ['1x, float, 10, 0, 50, 4, 0.002', /line 1: "1x" is not a UCI option name/],
  ['A, float, 10, 0, 50, 4, 0.002\nA, int, 1, 0, 2, 1, 0.1', /line 2: A is named twice/],
  ['A, double, 10, 0, 50, 4, 0.002', /the type of A must be int or float, not "double"/],
  ['A, float, 60, 0, 50, 4, 0.002', /the start of A \(60\) must be within \[0, 50\]/],
  ['A, float, 1, 5, 5, 4, 0.002', /the min of A \(5\) must be below its max \(5\)/],
  ['A, int, 1.5, 0, 5, 1, 0.002', /A is an int: its start, min and max must be whole numbers/],
  ['A, float, 1, 0, 5, 0, 0.002', /c_end of A must be above 0/],
  ['A, float, 1, 0, 5, 1, 1e999', /r_end must be a finite number/],
  ['A, float, NaN, 0, 5, 1, 0.1', /start must be a number, not "NaN"/],
  ['\n\n', /no parameters/],
]) {
  let said = '';
  try {
    spsa.parseInputs(text);
  } catch (err) {
    said = err instanceof spsa.SpsaInputError ? err.message : `${err.constructor.name}: ${err.message}`;
  }
  check(`refused: ${JSON.stringify(text.slice(0, 40))}`, re.test(said), said);
}

done();
