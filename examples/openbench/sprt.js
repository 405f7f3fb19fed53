'use strict';
// When a test stops: the log-likelihood ratio of a sequential probability
// ratio test (SPRT) on the games played so far, as OpenBench computes it.
//
// - Pentanomial (OpenBench's default): the results of game pairs, 0 to 2
//   points each in half points, "LL LD DD DW WW".  Elo is normalised Elo,
//   and the LLR is the generalised SPRT of Michel Van den Bergh's note
//   "Normalized Elo" (2020, hardy.uhasselt.be/Fishtest/normalized_elo_practical.pdf):
//   under each hypothesis the distribution of a pair's score that is
//   nearest the observed one (maximum likelihood) among those whose
//   normalised t-value is the hypothesis's, then the log ratio of the two.
// - Trinomial ("L D W", single games): BayesElo, the draw Elo taken from
//   the observed frequencies.
//
// A test stops when the LLR leaves [log(beta / (1 - alpha)),
// log((1 - beta) / alpha)]: below, H0 (elo0) is accepted and the test
// fails; above, H1 (elo1) and it passes.

// Normalised Elo per unit of normalised t-value: 800 / ln(10).
const NELO_PER_T = 800 / Math.LN10;

function llrBounds(alpha, beta) {
  return { lower: Math.log(beta / (1 - alpha)), upper: Math.log((1 - beta) / alpha) };
}

// Mean and variance of a distribution given as parallel arrays of values
// and probabilities.
function moments(values, probs) {
  let mean = 0;
  for (let i = 0; i < values.length; i++) mean += probs[i] * values[i];
  let variance = 0;
  for (let i = 0; i < values.length; i++) variance += probs[i] * (values[i] - mean) ** 2;
  return { mean, variance };
}

// The x in (-1 / max(b), -1 / min(b)) where sum_i p_i b_i / (1 + x b_i) = 0.
// The sum falls strictly over that interval (its derivative is
// -sum p_i b_i^2 / (1 + x b_i)^2), from +inf to -inf, so bisection finds
// the one root; null when the b_i do not straddle 0 (no root).
function secularRoot(b, p) {
  const lo0 = Math.max(...b);
  const hi0 = Math.min(...b);
  if (!(lo0 > 0 && hi0 < 0)) return null;
  let lo = -1 / lo0;
  let hi = -1 / hi0;
  const f = (x) => {
    let s = 0;
    for (let i = 0; i < b.length; i++) s += (p[i] * b[i]) / (1 + x * b[i]);
    return s;
  };
  for (let n = 0; n < 200 && hi - lo > 1e-15 * Math.max(1, Math.abs(lo)); n++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (f(mid) > 0) lo = mid;
    else hi = mid;
  }
  return lo + (hi - lo) / 2;
}

// The distribution on the same values, nearest to the observed p in the
// sense of maximum likelihood, whose (mean - ref) / sigma is t: a fixed
// point, found by solving the secular equation with sigma and mean taken
// from the previous iterate (ten rounds are plenty: it converges fast).
function nearestWithT(values, p, ref, t) {
  let q = values.map(() => 1 / values.length);
  for (let round = 0; round < 10; round++) {
    const { mean, variance } = moments(values, q);
    const sigma = Math.sqrt(variance);
    const b = values.map((a) => a - ref - (t * sigma * (1 + ((mean - a) / sigma) ** 2)) / 2);
    const x = secularRoot(b, p);
    if (x === null) return null;
    const next = p.map((pi, i) => pi / (1 + x * b[i]));
    const change = Math.max(...next.map((qi, i) => Math.abs(qi - q[i])));
    q = next;
    if (change < 1e-9) break;
  }
  return q;
}

// LLR of pentanomial counts [LL, LD, DD, DW, WW] for H0: nelo = elo0
// against H1: nelo = elo1.  Empty buckets count as 1e-3 of a pair, so that
// no logarithm is of 0.  NaN when no distribution has the hypothesis's
// t-value (bounds far beyond any real test).
function pentanomialLLR(counts, elo0, elo1) {
  const c = counts.map((x) => Math.max(1e-3, x));
  const n = c.reduce((s, x) => s + x, 0);
  const p = c.map((x) => x / n);
  const values = [0, 0.25, 0.5, 0.75, 1];
  // a pair is two games: its t-value is sqrt(2) times a game's
  const [t0, t1] = [elo0, elo1].map((e) => (e / NELO_PER_T) * Math.SQRT2);
  const q0 = nearestWithT(values, p, 0.5, t0);
  const q1 = nearestWithT(values, p, 0.5, t1);
  if (q0 === null || q1 === null) return NaN;
  let perPair = 0;
  for (let i = 0; i < values.length; i++) perPair += p[i] * (Math.log(q1[i]) - Math.log(q0[i]));
  return n * perPair;
}

// BayesElo: win and loss probabilities of a game for an Elo and a draw Elo.
function bayesEloProbabilities(elo, drawElo) {
  const win = 1 / (1 + 10 ** ((drawElo - elo) / 400));
  const loss = 1 / (1 + 10 ** ((drawElo + elo) / 400));
  return [loss, 1 - win - loss, win];
}

// LLR of trinomial counts [L, D, W] for H0: BayesElo elo0 against H1:
// elo1, with the draw Elo the observed frequencies give.  0 until there is
// at least one loss, one draw and one win (no draw Elo before that).
function trinomialLLR(counts, elo0, elo1) {
  if (counts.some((x) => x <= 0)) return 0;
  const n = counts.reduce((s, x) => s + x, 0);
  const [loss, , win] = counts.map((x) => x / n);
  const drawElo = 200 * Math.log10(((1 - loss) / loss) * ((1 - win) / win));
  const p0 = bayesEloProbabilities(elo0, drawElo);
  const p1 = bayesEloProbabilities(elo1, drawElo);
  let llr = 0;
  for (let i = 0; i < 3; i++) llr += counts[i] * Math.log(p1[i] / p0[i]);
  return llr;
}

module.exports = { llrBounds, pentanomialLLR, trinomialLLR };
