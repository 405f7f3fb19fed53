'use strict';
// The share history chart: for each kind of workload, a line per workload
// of its share (solid) and its fair share (dashed) over the last hours, as
// inline SVG drawn here, on the server.  Pure functions: rows in, text out.
//
// The rows are allot.status_share_history's, summed per workload over
// buckets of whole minutes that end at the database's now() (status.js,
// shareHistory): bucket 0 is the last bucketSecs, bucket 1 the one before,
// and so on.  The transitioner samples every workload that is active or has
// a share or a fair share, once a minute; a bucket's value is the mean over
// the minutes sampled for the kind, a workload absent from one of them
// counting 0 there (it had neither).  A bucket with no such minute has no
// point; where more than GAP_SECS pass without one (the transitioner did
// not run, or no workload of the kind was there), every line breaks.

const { esc } = require('./status_escape');

const MAX_POINTS = 180;       // buckets across a chart, at most
const MAX_SERIES = 10;        // workloads drawn in one chart, the largest first
const GAP_SECS = 15 * 60;     // longer without a sample: the lines break
const COLOURS = 10;           // .c0 to .c9 in the page's style
const BOX = { width: 600, height: 230, left: 44, right: 12, top: 10, bottom: 26 };

// Seconds per bucket: whole minutes, at most MAX_POINTS of them in the window.
function bucketSecs(windowSecs) {
  return 60 * Math.max(1, Math.ceil(windowSecs / MAX_POINTS / 60));
}

// The top of the y axis: the first of these at or above the largest value.
function axisTop(max) {
  return [0.05, 0.1, 0.2, 0.25, 0.4, 0.5, 0.6, 0.8, 1].find((t) => t >= max - 1e-12) ?? 1;
}

// Hours between the x axis's ticks: at most eight ticks.
function tickHours(windowSecs) {
  return [1, 2, 3, 6, 12, 24, 48, 168].find((h) => windowSecs / (3600 * h) <= 8) ?? 168;
}

// An axis label: 25%, 12.5%.
function pct(v) {
  const tenths = Math.round(1000 * v);
  return `${tenths % 10 === 0 ? tenths / 10 : (tenths / 10).toFixed(1)}%`;
}

// The series of one kind: [{ id, name, points: [[bucket, share, fair]] }],
// oldest bucket first, and the buckets sampled for the kind.
function seriesOf(rows, kind) {
  const ofKind = rows.filter((x) => x.kind === kind);
  const minutes = new Map();
  for (const r of ofKind) minutes.set(r.bucket, Number(r.minutes));
  const sampled = [...minutes.keys()].sort((a, b) => b - a);
  const byId = new Map();
  for (const r of ofKind) {
    const id = String(r.workload_id);
    if (!byId.has(id)) byId.set(id, { id, name: r.name, sums: new Map() });
    byId.get(id).sums.set(r.bucket, [Number(r.share_sum), Number(r.fair_sum)]);
  }
  const series = [...byId.values()].map((w) => ({
    id: w.id,
    name: w.name,
    points: sampled.map((b) => {
      const [share, fair] = w.sums.get(b) ?? [0, 0];
      return [b, share / minutes.get(b), fair / minutes.get(b)];
    }),
  }));
  return { series, sampled };
}

// An SVG path through the points (oldest first), broken where more than
// GAP_SECS pass between two; round caps show a lone point as a dot.
function pathOf(points, index, x, y, step) {
  let d = '';
  let last = null;
  for (const p of points) {
    const joined = last !== null && (last - p[0]) * step <= GAP_SECS;
    d += `${joined ? 'L' : 'M'}${x(p[0]).toFixed(1)} ${y(p[index]).toFixed(1)} ${joined ? '' : 'l0 0 '}`;
    last = p[0];
  }
  return d.trim();
}

// One kind's chart.  unit: what the share is a part of.
function historyChart(id, title, unit, history, kind) {
  const { series, sampled } = seriesOf(history.rows, kind);
  const hours = history.windowSecs / 3600;
  const head = `<figure class="chart history" id="${id}" data-kind="${kind}" data-window-secs="${history.windowSecs}"`
    + ` data-bucket-secs="${history.bucketSecs}"><figcaption>${esc(title)}: the last ${hours} h</figcaption>`;
  if (series.length === 0) {
    return `${head}
<p class="empty">No history yet. The transitioner (run each minute by pg_cron) samples the shares.</p></figure>`;
  }
  const peak = (s) => Math.max(...s.points.map((p) => Math.max(p[1], p[2])));
  const drawn = [...series].sort((a, b) => peak(b) - peak(a) || Number(a.id) - Number(b.id))
    .slice(0, MAX_SERIES).sort((a, b) => Number(a.id) - Number(b.id));
  const top = axisTop(Math.max(...drawn.map(peak)));
  const plotW = BOX.width - BOX.left - BOX.right;
  const plotH = BOX.height - BOX.top - BOX.bottom;
  const x = (b) => BOX.left + plotW * (1 - ((b + 0.5) * history.bucketSecs) / history.windowSecs);
  const y = (v) => BOX.top + plotH * (1 - v / top);

  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => `<line class="grid" x1="${BOX.left}" x2="${BOX.width - BOX.right}"`
    + ` y1="${y(f * top).toFixed(1)}" y2="${y(f * top).toFixed(1)}"/>`
    + `<text class="value" x="${BOX.left - 4}" y="${(y(f * top) + 4).toFixed(1)}" text-anchor="end">${pct(f * top)}</text>`);
  const step = tickHours(history.windowSecs);
  const ticks = [];
  for (let h = 0; h * 3600 <= history.windowSecs; h += step) {
    const tx = BOX.left + plotW * (1 - (h * 3600) / history.windowSecs);
    ticks.push(`<line class="axis" x1="${tx.toFixed(1)}" x2="${tx.toFixed(1)}" y1="${BOX.height - BOX.bottom}"`
      + ` y2="${BOX.height - BOX.bottom + 4}"/><text class="value" x="${tx.toFixed(1)}" y="${BOX.height - 8}"`
      + ` text-anchor="middle">${h === 0 ? 'now' : `${h} h ago`}</text>`);
  }
  const colour = new Map(drawn.map((s, i) => [s.id, `c${i % COLOURS}`]));
  const name = (s) => s.name ?? `workload ${s.id}`;
  const points = (s, i) => s.points.map((p) => `${p[0]}:${p[i]}`).join(' ');
  const lines = drawn.map((s) => `<g class="series ${colour.get(s.id)}" data-workload-id="${esc(s.id)}">
<title>${esc(name(s))}</title>
<path class="fair" d="${pathOf(s.points, 2, x, y, history.bucketSecs)}" data-points="${points(s, 2)}"/>
<path class="share" d="${pathOf(s.points, 1, x, y, history.bucketSecs)}" data-points="${points(s, 1)}"/>
</g>`);
  const legend = drawn.map((s) => `<li data-workload-id="${esc(s.id)}"><span class="swatch ${colour.get(s.id)}"></span>`
    + `${esc(name(s))}</li>`);
  const more = series.length - drawn.length;
  return `${head}
<svg viewBox="0 0 ${BOX.width} ${BOX.height}" role="img" aria-label="${esc(title)}" data-sampled="${sampled.length}">
${grid.join('\n')}
<line class="axis" x1="${BOX.left}" x2="${BOX.width - BOX.right}" y1="${BOX.height - BOX.bottom}" y2="${BOX.height - BOX.bottom}"/>
${ticks.join('\n')}
${lines.join('\n')}
</svg>
<ul class="series-legend">${legend.join('')}</ul>
<p class="legend">Solid: share of ${esc(unit)}; dashed: fair share.${more > 0
    ? ` ${more} more workload${more === 1 ? '' : 's'} with smaller shares not drawn.` : ''}</p></figure>`;
}

module.exports = { historyChart, bucketSecs, seriesOf, axisTop, MAX_SERIES };
