'use strict';
// The figures a test's page shows (examples/openbench/stats.js, sprt.js)
// against reference figures computed another way: stats_reference.py
// (Python's standard library; run it to see them), and OpenBench's own
// stats.py at commit 9906bad for the LLRs it prints.

const path = require('node:path');
const { check, near, done } = require('./tap');

const fe = path.join(__dirname, '../../examples/openbench');
const stats = require(path.join(fe, 'stats.js'));
const sprt = require(path.join(fe, 'sprt.js'));

// Student's t quantiles (stats_reference.py integrates the density).
const T975 = {
  1: 12.706204736172548, 2: 4.302652729749205, 5: 2.570581835636167,
  10: 2.228138851986314, 29: 2.045229642132803, 100: 1.983971518523759,
};
for (const [df, q] of Object.entries(T975)) near(`t(0.975, ${df})`, stats.studentQuantile(0.975, Number(df)), q, 1e-9);
near('t(0.025, 10) is -t(0.975, 10)', stats.studentQuantile(0.025, 10), -T975[10], 1e-9);
check('t quantile of p outside (0, 1) is NaN', Number.isNaN(stats.studentQuantile(1, 5)) && Number.isNaN(stats.studentQuantile(0, 5)));

// Elo [lower, elo, upper] and nElo: trinomial L D W and pentanomial
// LL LD DD DW WW counts, from a handful of games to a long test.
const ELO = [
  [[3, 2, 5], [-157.0798688375155, 70.43650362227247, 405.8087938331938], 79.70718982541591],
  [[120, 300, 160], [4.371406169234669, 23.99917187011412, 43.781248267848625], 34.65702402548165],
  [[2, 10, 30, 12, 6], [-12.964078082754119, 29.02026685944467, 71.87194544677432], 43.8424157839689],
  [[39, 8843, 26675, 9240, 44], [0.5464349543195793, 1.5767629413996245, 2.607118662241338], 3.479956126885529],
];
for (const [counts, want, nelo] of ELO) {
  const got = stats.elo(counts);
  ['lower', 'Elo', 'upper'].forEach((what, i) => near(`${what} of [${counts}]`, got[i], want[i], 1e-8));
  near(`nElo of [${counts}]`, stats.normalisedElo(counts).nelo, nelo, 1e-9);
}
check('Elo line: the larger distance to an end, two decimals',
  stats.eloLine([3, 2, 5]) === '70.44 +- 335.37 (95%)', stats.eloLine([3, 2, 5]));
check('Elo of no games or one game is 0 +- 0, as OpenBench shows it',
  JSON.stringify([stats.elo([0, 0, 0]), stats.elo([0, 1, 0])]) === '[[0,0,0],[0,0,0]]');
check('Elo of all wins is capped, not infinite', stats.elo([0, 0, 50]).every(Number.isFinite), stats.elo([0, 0, 50]));
check('nElo is unknown when every game ended alike', stats.normalisedElo([0, 40, 0]) === null);
const m = stats.normalisedElo([120, 300, 160]);
near('nElo margin: t(0.975, N-1) * 800/ln10 / sqrt(games)', m.margin, (1.9640 * 800) / Math.LN10 / Math.sqrt(580), 1e-3);
check('pentanomial nElo margin counts two games per pair',
  stats.normalisedElo([2, 10, 30, 12, 6]).margin < stats.normalisedElo([20, 20, 20]).margin);

// LLR: OpenBench's stats.py prints these (the figures 060 checks too),
// and the trinomial one in closed form (stats_reference.py).
near('pentanomial LLR, OpenBench\'s R5', sprt.pentanomialLLR([39, 8843, 26675, 9240, 44], 0.5, 2.5), 2.9416752079894044);
near('pentanomial LLR, empty buckets', sprt.pentanomialLLR([0, 0, 2, 4, 2], 0, 50), 0.9972159086606192);
near('trinomial LLR, OpenBench\'s R3', sprt.trinomialLLR([22569, 44137, 22976], 0.5, 2.5), 0.9757721682721865);
near('trinomial LLR, closed form', sprt.trinomialLLR([120, 300, 160], -1, 3), 0.6790164318129897);
check('trinomial LLR is 0 until a loss, a draw and a win', sprt.trinomialLLR([0, 5, 9], 0, 5) === 0);
const b = sprt.llrBounds(0.05, 0.05);
near('LLR bounds for alpha = beta = 0.05: upper ln(19)', b.upper, Math.log(19));
near('LLR bounds: lower -ln(19)', b.lower, -Math.log(19));

done();
