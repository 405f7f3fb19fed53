'use strict';
// What a test's games say of the dev engine's strength, as OpenBench shows
// it on a test's page (the LLR that stops an SPRT is sprt.js's):
//
// - Elo with its 95% interval: the mean score per game (trinomial "L D W")
//   or per game pair (pentanomial "LL LD DD DW WW", a pair's points taken
//   on 0..1), its sample variance, and Student's t with N - 1 degrees of
//   freedom for the interval of the mean; each end turned into logistic
//   Elo, -400 log10(1/x - 1), with x kept within [0.001, 0.999].  Shown as
//   the Elo and the larger of its distances to the two ends.
// - Normalised Elo (nElo): the t-value of the score, (mean - 1/2) / sigma
//   with sigma the standard deviation of one game (for pairs, sqrt(2) times
//   that of a pair's mean), times 800 / ln(10), the scale sprt.js's
//   pentanomial bounds are on.  Its interval is the same t quantile over
//   sqrt(games): the standard error of a t-value is 1 / sqrt(games) while
//   it is small.
//
// Student's t quantile is found from its distribution function, which is
// a regularised incomplete beta function, by bisection.

const NELO_PER_T = 800 / Math.LN10;

// ln Gamma(x) for x > 0: Lanczos' approximation (g = 7, 9 terms), good to
// about 1e-15 relative.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
  1.5056327351493116e-7,
];
function lnGamma(x) {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0];
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

// The continued fraction of the incomplete beta function (modified Lentz).
function betaFraction(x, a, b) {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 1000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-16) break;
  }
  return h;
}

// The regularised incomplete beta function I_x(a, b).
function incompleteBeta(x, a, b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  // the fraction converges fast below the mean; above it, by symmetry
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(x, a, b)) / a;
  return 1 - (front * betaFraction(1 - x, b, a)) / b;
}

// P(T <= t) for Student's t with df degrees of freedom.
function studentCdf(t, df) {
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

// The p-quantile of Student's t with df > 0 degrees of freedom, 0 < p < 1:
// bisection on the distribution function, which rises strictly.
function studentQuantile(p, df) {
  if (!(p > 0 && p < 1 && df > 0)) return NaN;
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentQuantile(1 - p, df);
  let lo = 0;
  let hi = 1;
  while (studentCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-14 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

const logisticElo = (x) => {
  const s = Math.min(Math.max(x, 1e-3), 1 - 1e-3);
  return -400 * Math.log10(1 / s - 1);
};

// Mean and variance of outcomes 0, 1/(k-1), ..., 1 counted in `counts`.
function meanAndVariance(counts) {
  const n = counts.reduce((s, c) => s + c, 0);
  const div = counts.length - 1;
  let mean = 0;
  for (let i = 0; i < counts.length; i++) mean += (i / div) * counts[i];
  mean /= n;
  let variance = 0;
  for (let i = 0; i < counts.length; i++) variance += (i / div - mean) ** 2 * counts[i];
  return { n, mean, variance: variance / n };
}

// [lower, elo, upper] of counts [L, D, W] or [LL, LD, DD, DW, WW]; zeros
// below two games (or pairs), as OpenBench shows them.
function elo(counts) {
  const { n, mean, variance } = meanAndVariance(counts);
  if (!(n > 1)) return [0, 0, 0];
  const spread = Math.sqrt(variance) / Math.sqrt(n);
  return [
    logisticElo(mean + studentQuantile(0.025, n - 1) * spread),
    logisticElo(mean),
    logisticElo(mean + studentQuantile(0.975, n - 1) * spread),
  ];
}

// {nelo, margin}: normalised Elo and its 95% margin; null below two games
// (or pairs) or when every game ended alike (no spread, no t-value).
function normalisedElo(counts) {
  const { n, mean, variance } = meanAndVariance(counts);
  if (!(n > 1) || !(variance > 0)) return null;
  const gamesPer = counts.length === 5 ? 2 : 1;
  const sigmaPerGame = Math.sqrt(variance * gamesPer);
  return {
    nelo: ((mean - 0.5) / sigmaPerGame) * NELO_PER_T,
    margin: (studentQuantile(0.975, n - 1) * NELO_PER_T) / Math.sqrt(gamesPer * n),
  };
}

// "Elo: 12.34 +- 5.67 (95%)", OpenBench's line.
function eloLine(counts) {
  const [lower, e, upper] = elo(counts);
  return `${e.toFixed(2)} +- ${Math.max(upper - e, e - lower).toFixed(2)} (95%)`;
}

module.exports = { elo, eloLine, normalisedElo, studentQuantile, studentCdf, NELO_PER_T };
