'use strict';
// A test's course, drawn by the server as SVG (the site runs no script):
// after each counted report, the games so far against the LLR (with the
// SPRT's two bounds) and against the Elo (with its 95% interval as a band).
// Each point is recomputed from the totals at that report, with the same
// arithmetic as the test's page (sprt.js, stats.js).

const { raw } = require('./html');
const stats = require('./stats');
const { pentanomialLLR, trinomialLLR } = require('./sprt');

const MAX_POINTS = 200;
const WIDTH = 720;
const HEIGHT = 170;
const PAD = { left: 54, right: 12, top: 16, bottom: 26 };

// The totals after each counted report, at most MAX_POINTS of them (the
// last always kept): reports is the submissions in order.
function course(test, reports) {
  const totals = [0, 0, 0, 0, 0, 0, 0, 0];   // L D W LL LD DD DW WW
  const all = [];
  for (const r of reports) {
    ['losses', 'draws', 'wins', 'll', 'ld', 'dd', 'dw', 'ww'].forEach((k, i) => { totals[i] += Number(r[k]); });
    all.push(totals.slice());
  }
  const step = Math.max(1, Math.ceil(all.length / MAX_POINTS));
  const kept = all.filter((_, i) => i % step === 0 || i === all.length - 1);
  return kept.map((t) => {
    const tri = t.slice(0, 3);
    const penta = t.slice(3);
    const counts = test.use_penta ? penta : tri;
    const [lower, elo, upper] = stats.elo(counts);
    let llr = null;
    if (test.type === 'SPRT') {
      llr = test.use_penta ? pentanomialLLR(penta, test.elo_lower, test.elo_upper)
        : trinomialLLR(tri, test.elo_lower, test.elo_upper);
      if (!Number.isFinite(llr)) llr = 0;
    }
    return { games: tri[0] + tri[1] + tri[2], llr, elo, lower, upper };
  });
}

const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));

// One panel: lines [{points: [[x, y]...], colour, width}], a band
// [[x, lo, hi]...], horizontal rules [{y, colour}], its y range and title.
function panel({ id, title, xMax, yMin, yMax, lines = [], band = [], rules = [] }) {
  const w = WIDTH - PAD.left - PAD.right;
  const h = HEIGHT - PAD.top - PAD.bottom;
  const X = (x) => PAD.left + (xMax > 0 ? (x / xMax) * w : 0);
  const Y = (y) => PAD.top + h - ((Math.min(Math.max(y, yMin), yMax) - yMin) / (yMax - yMin)) * h;
  const n = (v) => v.toFixed(1);
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" id="${id}" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title}">`;
  svg += `<text x="${PAD.left}" y="12" font-size="12" fill="#1d2430">${title}</text>`;
  for (const y of [yMin, (yMin + yMax) / 2, yMax]) {
    svg += `<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${n(Y(y))}" y2="${n(Y(y))}" stroke="#e3e7ec"/>`;
    svg += `<text x="${PAD.left - 4}" y="${n(Y(y) + 4)}" font-size="11" text-anchor="end" fill="#5b6676">${fmt(y)}</text>`;
  }
  svg += `<text x="${WIDTH - PAD.right}" y="${HEIGHT - 6}" font-size="11" text-anchor="end" fill="#5b6676">${xMax} games</text>`;
  if (band.length > 1) {
    const top = band.map(([x, , hi]) => `${n(X(x))},${n(Y(hi))}`);
    const bottom = band.slice().reverse().map(([x, lo]) => `${n(X(x))},${n(Y(lo))}`);
    svg += `<polygon points="${[...top, ...bottom].join(' ')}" fill="#cfe0f5" stroke="none"/>`;
  }
  for (const r of rules) {
    svg += `<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${n(Y(r.y))}" y2="${n(Y(r.y))}" stroke="${r.colour}" stroke-dasharray="5 4"/>`;
  }
  for (const l of lines) {
    if (l.points.length === 0) continue;
    svg += `<polyline fill="none" stroke="${l.colour}" stroke-width="${l.width ?? 2}" points="${l.points.map(([x, y]) => `${n(X(x))},${n(Y(y))}`).join(' ')}"/>`;
  }
  return `${svg}</svg>`;
}

function range(values, pad) {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const margin = Math.max((hi - lo) * 0.08, pad);
  return [lo - margin, hi + margin];
}

// The SVG of a test's course, or '' before its first counted report.
function render(test, reports) {
  const points = course(test, reports);
  if (points.length === 0) return raw('');
  const xMax = points[points.length - 1].games;
  const start = { games: 0, llr: 0, elo: 0, lower: 0, upper: 0 };
  const pts = [start, ...points];
  let svg = '';
  if (test.type === 'SPRT') {
    const [yMin, yMax] = range([...pts.map((p) => p.llr), test.lower_llr, test.upper_llr], 0.2);
    svg += panel({
      id: 'llr-chart', title: 'LLR', xMax, yMin, yMax,
      rules: [{ y: test.lower_llr, colour: '#c0392b' }, { y: test.upper_llr, colour: '#27ae60' }],
      lines: [{ points: pts.map((p) => [p.games, p.llr]), colour: '#22303f' }],
    });
  }
  const [eMin, eMax] = range(points.flatMap((p) => [p.lower, p.upper, p.elo]), 1);
  svg += panel({
    id: 'elo-chart', title: 'Elo, and its 95% interval', xMax, yMin: eMin, yMax: eMax,
    band: points.map((p) => [p.games, p.lower, p.upper]),
    rules: [{ y: 0, colour: '#8a94a3' }],
    lines: [{ points: points.map((p) => [p.games, p.elo]), colour: '#1f5fa8' }],
  });
  return raw(svg);
}

module.exports = { render, course };
