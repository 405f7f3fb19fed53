'use strict';
// The status page's HTML, drawn from the rows of allot's status views
// (status.js reads them).  Pure functions: rows in, text out.  Every value
// that comes from the database is escaped, since workload, app and host
// names are typed by operators and, on a farm where hosts register
// themselves, by strangers.  Each number is shown formatted and kept exact
// in a data-v attribute, so that a program (and the browser test) can read
// what the page shows.

const { esc } = require('./status_escape');
const { historyChart } = require('./status_chart');
const { queryString } = require('./status_query');

// ----------------------------------------------------------------------------
// Numbers.  node-postgres gives bigint and numeric as strings, float8 as
// numbers, timestamptz as Date.

const num = (v) => (v === null || v === undefined ? null : Number(v));

function count(v) {
  return v === null || v === undefined ? '' : Number(v).toLocaleString('en-US');
}

function percent(v) {
  return v === null || v === undefined ? '' : `${(100 * Number(v)).toFixed(1)}%`;
}

// 1.002e12 -> "1.00 T", and with a unit "1.00 TFLOPS"; 0 -> "0 FLOPS":
// three significant digits, an SI prefix, and a space before prefix and
// unit, as SI writes quantities.
const PREFIXES = ['', 'k', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
function si(v, unit = '') {
  if (v === null || v === undefined) return '';
  let x = Number(v);
  let i = 0;
  while (Math.abs(x) >= 999.5 && i < PREFIXES.length - 1) {
    x /= 1000;
    i += 1;
  }
  const number = x === 0 ? '0' : x.toPrecision(3);
  const suffix = `${PREFIXES[i]}${unit}`;
  return suffix ? `${number} ${suffix}` : number;
}

// A duration as people write it: 3600 -> "1 h", 120 -> "2 min", 864000 -> "10 d".
function duration(secs) {
  if (secs === null || secs === undefined) return '';
  const x = Number(secs);
  for (const [unit, n] of [['d', 86400], ['h', 3600], ['min', 60]]) {
    if (x >= n && x % n === 0) return `${x / n} ${unit}`;
  }
  return `${x} s`;
}

function decimal(v, digits) {
  return v === null || v === undefined ? '' : Number(v).toFixed(digits);
}

const iso = (d) => (d instanceof Date ? d.toISOString() : d);

// "3 min ago", from seconds the query worked out against the database
// server's now() (status.js): not this server's clock, which may be off.
// A time ahead of the database's clock (a caller's now, up to a minute off)
// says so.
function age(secsAgo) {
  if (secsAgo === null || secsAgo === undefined) return 'never';
  const secs = Math.round(Number(secsAgo));
  if (secs < 0) return `${-secs} s ahead of the server's clock`;
  if (secs < 90) return `${secs} s ago`;
  if (secs < 90 * 60) return `${Math.round(secs / 60)} min ago`;
  if (secs < 36 * 3600) return `${Math.round(secs / 3600)} h ago`;
  return `${Math.round(secs / 86400)} d ago`;
}

// A table cell: the text shown, and the exact value behind it; for a time,
// also its age in seconds on the database's clock (data-ago).
function cell(key, value, text, cls = 'n', ago = null) {
  const v = value === null || value === undefined ? '' : ` data-v="${esc(iso(value))}"`;
  const a = ago === null || ago === undefined ? '' : ` data-ago="${esc(ago)}"`;
  return `<td class="${cls}" data-k="${key}"${v}${a}>${esc(text)}</td>`;
}
const textCell = (key, value) => cell(key, value, value ?? '', 't');

function table(id, caption, head, rows, empty) {
  if (rows.length === 0) return `<p class="empty" id="${id}">${esc(empty)}</p>`;
  return `<div class="scroll"><table id="${id}"><caption>${esc(caption)}</caption>
<thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table></div>`;
}

// ----------------------------------------------------------------------------
// The share-vs-fair chart: one pair of horizontal bars per workload, its
// share (solid) over its fair share (light), scaled to the largest value.

const BAR = { label: 170, width: 480, row: 42, bar: 14 };

function chart(id, title, unit, workloads) {
  const shown = workloads.filter((w) => num(w.share) > 0 || num(w.fair_share) > 0);
  if (shown.length === 0) {
    return `<figure class="chart" id="${id}"><figcaption>${esc(title)}</figcaption>
<p class="empty">Nothing in use and nothing in contention.</p></figure>`;
  }
  const max = Math.max(0.05, ...shown.map((w) => Math.max(num(w.share), num(w.fair_share))));
  const span = BAR.width - BAR.label - 52;
  const height = shown.length * BAR.row + 24;
  const x = (v) => (span * v) / max;
  const bars = shown.map((w, i) => {
    const y = 8 + i * BAR.row;
    const name = w.name ?? `workload ${w.workload_id}`;
    const label = name.length > 22 ? `${name.slice(0, 21)}…` : name;
    const share = num(w.share);
    const fair = num(w.fair_share);
    return `<g data-workload-id="${esc(w.workload_id)}">
<title>${esc(name)}: ${percent(share)} of ${esc(unit)}, fair ${percent(fair)}</title>
<text x="${BAR.label - 8}" y="${y + BAR.bar + 4}" text-anchor="end" class="label">${esc(label)}</text>
<rect class="share" x="${BAR.label}" y="${y}" width="${x(share).toFixed(1)}" height="${BAR.bar}" data-v="${share}"/>
<text x="${BAR.label + x(share) + 4}" y="${y + BAR.bar - 2}" class="value">${percent(share)}</text>
<rect class="fair" x="${BAR.label}" y="${y + BAR.bar + 2}" width="${x(fair).toFixed(1)}" height="${BAR.bar}" data-v="${fair}"/>
<text x="${BAR.label + x(fair) + 4}" y="${y + 2 * BAR.bar}" class="value fairtext">${percent(fair)}</text>
</g>`;
  });
  return `<figure class="chart" id="${id}"><figcaption>${esc(title)}</figcaption>
<svg viewBox="0 0 ${BAR.width} ${height}" role="img" aria-label="${esc(title)}">
<line x1="${BAR.label}" y1="0" x2="${BAR.label}" y2="${height - 16}" class="axis"/>
${bars.join('\n')}
<text x="${BAR.label}" y="${height - 2}" class="value">0</text>
<text x="${BAR.label + span}" y="${height - 2}" text-anchor="middle" class="value">${percent(max)}</text>
</svg>
<p class="legend"><span class="key share"></span> share of ${esc(unit)}
<span class="key fair"></span> fair share</p></figure>`;
}

// ----------------------------------------------------------------------------
// The sections.

// The settings the farm runs with, as the views see them: what share
// measures, and how long an assigned host counts without checking in (so
// that "1,000 hosts assigned" beside a host seen 6 min ago reads right).
function settings(farm) {
  const items = [
    ['fairness', 'fairness', farm.fairness, farm.fairness],
    ['assignment_ttl', 'assignment TTL', farm.assignment_ttl_secs, duration(farm.assignment_ttl_secs)],
    ['rec_half_life', 'REC half-life', farm.rec_half_life_secs, duration(farm.rec_half_life_secs)],
    ['balance_engine_throughputs', 'engine balancing', farm.balance_engine_throughputs,
      farm.balance_engine_throughputs ? 'on' : 'off'],
    ['share_history_retention', 'share history kept', farm.share_history_retention_secs,
      duration(farm.share_history_retention_secs)],
  ];
  return `<dl class="settings" id="settings"><div><dt>Settings</dt></div>
${items.map(([k, label, v, text]) => `<div><dt>${label}</dt><dd data-k="${k}" data-v="${esc(v)}">${esc(text)}</dd></div>`).join('\n')}
</dl>`;
}

function summary(farm) {
  const items = [
    ['hosts', farm.hosts, count(farm.hosts)],
    ['assigned_hosts', farm.assigned_hosts, count(farm.assigned_hosts)],
    ['threads_in_use', farm.threads_in_use, count(farm.threads_in_use)],
    ['peak_flops_in_use', farm.peak_flops_in_use, si(farm.peak_flops_in_use, 'FLOPS')],
    ['jobs_unsent', farm.jobs_unsent, count(farm.jobs_unsent)],
    ['jobs_in_progress', farm.jobs_in_progress, count(farm.jobs_in_progress)],
    ['jobs_done', farm.jobs_done, count(farm.jobs_done)],
    ['jobs_error', farm.jobs_error, count(farm.jobs_error)],
    ['transitioner_last_run', farm.transitioner_last_run, age(farm.transitioner_last_run_secs_ago)],
  ];
  const labels = {
    hosts: 'hosts',
    assigned_hosts: `hosts assigned (seen within ${duration(farm.assignment_ttl_secs)})`,
    threads_in_use: 'threads in use',
    peak_flops_in_use: 'peak FLOPS in use', jobs_unsent: 'jobs unsent',
    jobs_in_progress: 'jobs in progress', jobs_done: 'jobs done', jobs_error: 'jobs in error',
    transitioner_last_run: 'last transitioner run',
  };
  return `<dl class="cards" id="farm">
${items.map(([k, v, text]) => `<div><dt>${labels[k]}</dt><dd data-k="${k}" data-v="${esc(iso(v))}">${esc(text)}</dd></div>`).join('\n')}
</dl>`;
}

// Why a workload with neither a share nor a fair share is idle: it is not
// in contention (docs/status-page.md, fair_share).
function idleReason(w) {
  if (w.state !== 'active') return `${w.state}`;
  if (w.kind === 'jobs' && !(Number(w.jobs_unsent) > 0)) return 'no unsent jobs';
  return 'waiting: a higher priority has work';
}

// Share and fair share, or one cell "idle" for a workload that has neither
// (rather than "0.0%, 0.0%"); it keeps both exact values.
function shareCells(w) {
  if (num(w.share) === 0 && num(w.fair_share) === 0) {
    return `<td class="t idle" colspan="2" data-k="share" data-v="0" data-fair="0" title="${esc(idleReason(w))}">idle</td>`;
  }
  return cell('share', w.share, percent(w.share)) + cell('fair_share', w.fair_share, percent(w.fair_share));
}

// A finished workload's state says when it finished (finished_at, from
// allot 0.7.0 on), as the database's clock has it.
function stateCell(w) {
  if (w.state !== 'finished') return textCell('state', w.state);
  const when = w.finished_secs_ago === null ? 'finished' : `finished ${age(w.finished_secs_ago)}`;
  const ago = w.finished_secs_ago === null ? '' : ` data-ago="${esc(w.finished_secs_ago)}"`;
  return `<td class="t" data-k="state" data-v="finished"${ago}>${esc(when)}</td>`;
}

function workloadRow(w) {
  const jobs = w.kind === 'jobs';
  const finished = w.state === 'finished' ? ' class="finished"' : '';
  return `<tr data-workload-id="${esc(w.workload_id)}"${finished}>${[
    cell('workload_id', w.workload_id, w.workload_id),
    cell('name', w.name, w.name ?? '', 't name'),
    textCell('kind', w.kind),
    cell('priority', w.priority, w.priority),
    stateCell(w),
    cell('hosts', w.hosts, count(w.hosts)),
    jobs ? cell('peak_flops', w.peak_flops, si(w.peak_flops, 'FLOPS'))
      : cell('threads', w.threads, count(w.threads)),
    shareCells(w),
    cell('jobs_unsent', w.jobs_unsent, count(w.jobs_unsent)),
    cell('jobs_in_progress', w.jobs_in_progress, count(w.jobs_in_progress)),
    cell('jobs_done', w.jobs_done, count(w.jobs_done)),
    cell('jobs_error', w.jobs_error, count(w.jobs_error)),
    cell('est_flops_per_au', w.est_flops_per_au, si(w.est_flops_per_au, 'FLOPs')),
  ].join('')}</tr>`;
}

function hostRow(h, names) {
  const gpus = h.coprocessors
    ? Object.entries(h.coprocessors).map(([r, n]) => `${n} ${r}`).join(', ') : '';
  const holds = h.workload_id === null ? ''
    : `${names.get(String(h.workload_id)) ?? `workload ${h.workload_id}`}${h.assignment_counted ? '' : ' (expired)'}`;
  return `<tr data-host-id="${esc(h.host_id)}">${[
    cell('host_id', h.host_id, h.host_id),
    cell('name', h.name, h.name ?? '', 't name'),
    cell('last_seen', h.last_seen, age(h.seen_secs_ago), 'n', h.seen_secs_ago),
    cell('threads', h.threads, count(h.threads)),
    cell('coprocessors', h.coprocessors && JSON.stringify(h.coprocessors), gpus, 't'),
    cell('workload_id', h.workload_id, holds, 't name'),
    cell('jobs_in_progress', h.jobs_in_progress, count(h.jobs_in_progress)),
    cell('peak_flops_in_progress', h.peak_flops_in_progress,
      Number(h.jobs_in_progress) > 0 ? si(h.peak_flops_in_progress, 'FLOPS') : ''),
    cell('credit', h.credit, decimal(h.credit, 2)),
  ].join('')}</tr>`;
}

function appRow(a) {
  return `<tr data-app-id="${esc(a.app_id)}">${[
    cell('app_id', a.app_id, a.app_id),
    textCell('name', a.name),
    cell('resources', (a.resources ?? []).join(','), (a.resources ?? []).join(', '), 't'),
    cell('n_reports', a.n_reports, count(a.n_reports)),
    cell('est_flops_per_au', a.est_flops_per_au, si(a.est_flops_per_au, 'FLOPs')),
    cell('credit_per_job', a.credit_per_job, decimal(a.credit_per_job, 3)),
    cell('samples_pending', a.samples_pending, count(a.samples_pending)),
    cell('jobs_unsent', a.jobs_unsent, count(a.jobs_unsent)),
    cell('jobs_in_progress', a.jobs_in_progress, count(a.jobs_in_progress)),
    cell('jobs_done', a.jobs_done, count(a.jobs_done)),
    cell('jobs_error', a.jobs_error, count(a.jobs_error)),
  ].join('')}</tr>`;
}

function runRow(r) {
  return `<tr data-run="${esc(r.run)}">${[
    cell('run', r.run, r.run),
    cell('finished_at', r.finished_at, age(r.finished_secs_ago), 'n', r.finished_secs_ago),
    cell('duration_ms', r.duration_ms, decimal(r.duration_ms, 1)),
    textCell('fairness', r.fairness),
    cell('timed_out', r.timed_out, count(r.timed_out)),
    cell('expired_assignments', r.expired_assignments, count(r.expired_assignments)),
    cell('reports_read', r.reports_read, count(r.reports_read)),
    cell('flops_estimates', r.flops_estimates, count(r.flops_estimates)),
    cell('credited', r.credited, count(r.credited)),
  ].join('')}</tr>`;
}

// The host list's search form: a search by name or id over every host,
// links to every host by id and to the hosts at work.
function hostSearch(h) {
  const limit = h.limitGiven === null ? '' : `<input type="hidden" name="limit" value="${esc(h.limitGiven)}">`;
  return `<form class="find" id="host-search" method="get" action="status" role="search">
<label>Find a host <input type="search" name="q" value="${esc(h.search ?? '')}" maxlength="64" placeholder="name or id"></label>${limit}
<button type="submit">Find</button>
<a href="status${esc(queryString({ page: 1, limit: h.limitGiven }))}">every host, by id</a>
<a href="status${esc(queryString({ limit: h.limitGiven }))}">the hosts at work</a>
</form>`;
}

// Pages of the hosts by id (or of those a search found): first, previous,
// where we are, next, last.  Links keep the search and the page size.
function hostPager(h) {
  const pages = Math.max(1, Math.ceil(h.total / h.limit));
  const link = (page, text, rel) => `<a href="status${esc(queryString({ page, q: h.search, limit: h.limitGiven }))}"`
    + ` data-page="${page}"${rel ? ` rel="${rel}"` : ''}>${text}</a>`;
  const items = [];
  if (h.page > 1) items.push(link(1, '« first'), link(Math.min(h.page - 1, pages), '‹ previous', 'prev'));
  items.push(`<span data-page="${h.page}" data-pages="${pages}">page ${count(h.page)} of ${count(pages)}</span>`);
  if (h.page < pages) items.push(link(h.page + 1, 'next ›', 'next'), link(pages, 'last »'));
  return `<nav class="pager" id="hosts-pager" aria-label="pages of hosts">${items.join('\n')}</nav>`;
}

function hostsSection(s, names) {
  const h = s.hosts;
  const rows = h.rows.map((row) => hostRow(row, names));
  if (!h.browse) {
    return `${hostSearch(h)}
${table('hosts', 'The hosts at work first: with jobs in progress (the most peak FLOPS first) and on an '
      + `assignment (the most threads first); then the hosts seen last. ${count(h.rows.length)} of ${count(s.farm.hosts)}`,
    ['id', 'name', 'last seen', 'threads', 'coprocessors', 'assignment', 'jobs', 'peak', 'credit'],
    rows, 'No host.')}`;
  }
  const first = (h.page - 1) * h.limit + 1;
  const which = h.search === null ? 'Every host, by id'
    : `The hosts whose name holds “${h.search}”${/^[0-9]+$/.test(h.search) ? ` or whose id is ${h.search}` : ''}, by id`;
  const empty = h.total === 0 ? (h.search === null ? 'No host.' : `No host's name holds “${h.search}”.`)
    : `No host on page ${count(h.page)}: there are ${count(h.total)} hosts, ${count(Math.ceil(h.total / h.limit))} pages of ${count(h.limit)}.`;
  return `${hostSearch(h)}
${table('hosts', `${which}: ${count(first)} to ${count(first + h.rows.length - 1)} of ${count(h.total)}`,
    ['id', 'name', 'last seen', 'threads', 'coprocessors', 'assignment', 'jobs', 'peak', 'credit'],
    rows, empty)}
${hostPager(h)}`;
}

// The part of the page that refreshes: everything below the title.
function renderMain(s) {
  const names = new Map(s.workloads.map((w) => [String(w.workload_id), w.name ?? '']));
  const assignment = s.workloads.filter((w) => w.kind === 'assignment');
  const jobs = s.workloads.filter((w) => w.kind === 'jobs');
  const measure = s.farm.fairness === 'recent' ? 'recent credit' : null;
  const finished = duration(s.finishedSecs);
  return `<p class="meta">Database <b>${esc(s.database)}</b> at <time data-v="${esc(iso(s.now))}" data-now="${esc(s.now_text)}">${esc(iso(s.now))}</time>;
refreshed every ${esc(s.refreshSecs)} s.</p>
${settings(s.farm)}
${summary(s.farm)}
<section><h2>Share against fair share</h2>
<div class="charts">
${chart('chart-assignment', 'Assignment workloads', measure ?? 'threads in use', assignment)}
${chart('chart-jobs', 'Job workloads', measure ?? 'peak FLOPS in use', jobs)}
</div></section>
<section><h2>Share against fair share over time</h2>
<div class="charts">
${historyChart('history-assignment', 'Assignment workloads', measure ?? 'threads in use', s.history, 'assignment')}
${historyChart('history-jobs', 'Job workloads', measure ?? 'peak FLOPS in use', s.history, 'jobs')}
</div></section>
<section><h2>Workloads</h2>
${table('workloads', `Workloads that are not finished, finished within ${finished}, or still hold hosts or jobs; `
      + 'idle: neither a share nor a fair share',
    ['id', 'name', 'kind', 'prio', 'state', 'hosts', 'threads / peak', 'share', 'fair',
      'unsent', 'running', 'done', 'error', 'per app unit'],
    s.workloads.map(workloadRow), 'No workload.')}
</section>
<section><h2>Hosts</h2>
${hostsSection(s, names)}
</section>
<section><h2>Apps</h2>
${table('apps', 'Apps, their FLOPs per app unit and the credit a job earns',
    ['id', 'name', 'resources', 'reports', 'per app unit', 'credit / job', 'samples',
      'unsent', 'in progress', 'done', 'error'],
    s.apps.map(appRow), 'No app.')}
</section>
<section><h2>Transitioner</h2>
${table('runs', 'Its last runs, newest first',
    ['run', 'finished', 'ms', 'fairness', 'timed out', 'expired', 'reports', 'estimates', 'credited'],
    s.runs.map(runRow), 'No run recorded yet.')}
</section>`;
}

const STYLE = `
:root { --share: #2563eb; --fair: #f59e0b; --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: var(--ink); background: #f9fafb; }
header { background: #111827; color: #fff; padding: .7rem 1rem; }
header h1 { margin: 0; font-size: 1.2rem; }
main { max-width: 1240px; margin: 0 auto; padding: .5rem .8rem 2rem; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
.meta { color: var(--muted); margin: .4rem 0; }
.meta.stale { color: #b91c1c; }
.settings { display: flex; flex-wrap: wrap; gap: .2rem 1.2rem; margin: .4rem 0; color: var(--muted); }
.settings div { display: flex; gap: .4rem; }
.settings dt::after { content: ":"; } .settings div:first-child dt { font-weight: 600; }
.settings div:first-child dt::after { content: ""; }
.settings dd { margin: 0; color: var(--ink); font-weight: 600; }
pre { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .5rem; overflow-x: auto; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(165px, 1fr)); gap: .5rem; margin: .5rem 0; }
.cards div { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .4rem .6rem; }
.cards dt { color: var(--muted); font-size: .8rem; }
.cards dd { margin: 0; font-size: 1.25rem; font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: .8rem; }
.chart { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .5rem; }
.chart figcaption { font-weight: 600; }
.chart svg { width: 100%; height: auto; display: block; }
.chart .label { font-size: 15px; fill: var(--ink); }
.chart .value { font-size: 12px; fill: var(--muted); }
.chart rect.share { fill: var(--share); }
.chart rect.fair { fill: var(--fair); }
.chart .axis { stroke: #9ca3af; }
.legend { margin: .2rem 0 0; color: var(--muted); font-size: .85rem; }
.key { display: inline-block; width: .9em; height: .9em; vertical-align: -.1em; margin-left: .6em; }
.key.share { background: var(--share); } .key.fair { background: var(--fair); }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; background: #fff;
          border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
caption { text-align: left; padding: .4rem .6rem; color: var(--muted); }
th, td { padding: .3rem .5rem; border-top: 1px solid var(--line); white-space: nowrap; }
th { text-align: left; background: #f3f4f6; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.name { white-space: normal; overflow-wrap: anywhere; min-width: 8em; max-width: 16em; }
td.idle { text-align: center; color: var(--muted); font-style: italic; }
.empty { color: var(--muted); }
.chart.history .grid { stroke: var(--line); }
.series path { fill: none; stroke: var(--c); stroke-linecap: round; stroke-linejoin: round; }
.series path.share { stroke-width: 2.2; }
.series path.fair { stroke-width: 1.4; stroke-dasharray: 5 4; }
.c0 { --c: #2563eb; } .c1 { --c: #dc2626; } .c2 { --c: #16a34a; } .c3 { --c: #9333ea; }
.c4 { --c: #ea580c; } .c5 { --c: #0891b2; } .c6 { --c: #a16207; } .c7 { --c: #db2777; }
.c8 { --c: #4b5563; } .c9 { --c: #65a30d; }
.series-legend { list-style: none; display: flex; flex-wrap: wrap; gap: .2rem .9rem; margin: .3rem 0 0;
                 padding: 0; font-size: .85rem; overflow-wrap: anywhere; }
.swatch { display: inline-block; width: 1.2em; height: .75em; margin-right: .35em; background: var(--c);
          border-radius: 2px; }
tr.finished td { color: var(--muted); }
a { color: #1d4ed8; }
.find { display: flex; flex-wrap: wrap; gap: .4rem .9rem; align-items: center; margin: .3rem 0 .6rem; }
.find input { font: inherit; padding: .2rem .4rem; border: 1px solid #d1d5db; border-radius: 4px; width: 16em;
              max-width: 100%; }
.find button { font: inherit; padding: .15rem .8rem; }
.pager { display: flex; flex-wrap: wrap; gap: .4rem 1rem; margin: .5rem 0; }
@media (max-width: 600px) { body { font-size: 14px; } main { padding: .4rem; } .cards dd { font-size: 1.05rem; } }
`;

// The refresh: fetch the main part again, for the same page of hosts and
// the same search, and swap it in; on failure keep what is shown and say it
// is stale.  Without JavaScript, a meta refresh.
const SCRIPT = `
(function () {
  var main = document.querySelector('main');
  var secs = Number(main.getAttribute('data-refresh')) || 10;
  var refreshed = 0;
  function again() { setTimeout(refresh, secs * 1000); }
  var params = new URLSearchParams(location.search);
  params.set('part', 'main');
  function refresh() {
    fetch('status?' + params.toString(), { cache: 'no-store' })
      .then(function (res) { if (!res.ok) throw new Error(res.status); return res.text(); })
      .then(function (html) {
        main.innerHTML = html;
        main.setAttribute('data-refreshed', String(++refreshed));
      })
      .catch(function () {
        var meta = main.querySelector('.meta');
        if (meta) { meta.classList.add('stale'); meta.setAttribute('title', 'could not refresh'); }
      })
      .then(again);
  }
  again();
})();
`;

function renderPage(s, nonce) {
  return `<!doctype html>
<html lang="en"><head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>allot farm status</title>
<noscript><meta http-equiv="refresh" content="${esc(s.refreshSecs)}"></noscript>
<style nonce="${nonce}">${STYLE}</style>
</head><body>
<header><h1>allot farm status</h1></header>
<main data-refresh="${esc(s.refreshSecs)}">
${renderMain(s)}
</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>
`;
}

// GET /status of a web layer started without STATUS_PGUSER (status.js, off).
function renderOff(nonce) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>allot farm status: off</title><style nonce="${nonce}">${STYLE}</style></head>
<body><header><h1>allot farm status</h1></header>
<main><p class="meta stale">The status page is off: this web layer was started without <code>STATUS_PGUSER</code>.</p>
<p>To turn it on, give the page a login in the role <code>allot_monitor</code>, which may read allot's
status views and nothing else, and start the web layer with <code>STATUS_PGUSER</code> set to it:</p>
<pre>CREATE ROLE farm_status LOGIN PASSWORD 'change me' IN ROLE allot_monitor;

STATUS_PGUSER=farm_status STATUS_PGPASSWORD='change me' PGUSER=farm_web node server.js</pre>
<p><code>STATUS_PGHOST</code>, <code>STATUS_PGPORT</code> and <code>STATUS_PGDATABASE</code> say where the
farm is (by default the web layer's own <code>PGHOST</code>, <code>PGPORT</code> and
<code>PGDATABASE</code>). allot's <code>docs/status-page.md</code> has every setting.</p></main></body></html>
`;
}

function renderError(message, nonce) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>allot farm status</title><style nonce="${nonce}">${STYLE}</style></head>
<body><header><h1>allot farm status</h1></header>
<main><p class="meta stale">${esc(message)}</p></main></body></html>
`;
}

module.exports = { renderPage, renderMain, renderError, renderOff, si, percent, duration, age };
