'use strict';
// The web site's pages that anyone may read, server-rendered (html.js),
// as OpenBench's index and test pages show a test:
//
//   GET /, /index/, /index/N/   the tests, newest first, 25 a page:
//                               pending and active ones, then finished
//   GET /greens/, /greens/N/    the tests that passed
//   GET /user/NAME/, /user/NAME/N/   an account's tests
//   GET /search/?engine=&author=&state=&words=   tests matching them
//   GET /test/ID/               one test: Elo +- (trinomial or pentanomial,
//                               as the test counts), nElo, the LLR against
//                               its bounds, W/D/L and pentanomial counts,
//                               its settings, the machines allot counts on
//                               it, and a chart of LLR and Elo over time
//
// Deleted tests are not listed and their pages say so.  Every input (the
// path) is checked; a bad one is answered with a sentence and status 404.

const { html, raw, layout, paging, when } = require('./html');
const { makeCatalog, status, kind } = require('./catalog');
const chart = require('./chart');
const stats = require('./stats');
const spsa = require('./spsa');
const { makeLists } = require('./lists');

// A page the path does not name, or names badly: 404 with its sentence.
class NotFound extends Error {}

// A query a page cannot answer: 400 with its sentence.
class BadInput extends Error {}

const ID = /^[1-9][0-9]{0,17}$/;

function number(text, what) {
  if (!ID.test(text ?? '')) throw new NotFound(`${what} must be a whole number from 1, not ${JSON.stringify(String(text).slice(0, 40))}`);
  return Number(text);
}

const fixed = (x) => Number(x).toFixed(2);

// The counts the test's statistics are of: pentanomial for a test that
// uses it (OpenBench's default), trinomial otherwise.
function counts(t) {
  const tri = [t.losses, t.draws, t.wins].map(Number);
  const penta = [t.ll, t.ld, t.dd, t.dw, t.ww].map(Number);
  return { tri, penta, used: t.use_penta ? penta : tri };
}

// The lines of a test's statistics, as OpenBench's test page prints them
// (with nElo added): Elo, nElo, LLR for an SPRT, games, penta.
function statLines(t) {
  const c = counts(t);
  const lines = [`Elo   | ${stats.eloLine(c.used)}`];
  const n = stats.normalisedElo(c.used);
  lines.push(`nElo  | ${n ? `${fixed(n.nelo)} +- ${fixed(n.margin)} (95%)` : 'unknown until the games differ'}`);
  if (t.type === 'SPRT') {
    lines.push(`LLR   | ${fixed(t.llr ?? 0)} (${fixed(t.lower_llr)}, ${fixed(t.upper_llr)}) [${fixed(t.elo_lower)}, ${fixed(t.elo_upper)}]`);
  } else if (t.type === 'GAMES') {
    lines.push(`Games | ${Number(t.games)} of ${Number(t.max_games)}`);
  }
  lines.push(`Games | N: ${Number(t.games)} W: ${c.tri[2]} L: ${c.tri[0]} D: ${c.tri[1]}`);
  if (t.use_penta) lines.push(`Penta | [${c.penta.join(', ')}]`);
  return lines;
}

function statusCell(t) {
  const s = status(t);
  return { word: s.word, cls: s.colour };
}

// The buttons of what the account may do to the test now (site.js's
// actions): stop or restart, approve, modify, delete, for its author or an
// approver (approve: an approver only).
function actionForms(ctx, t) {
  const me = ctx.session.account;
  if (!me || !(me.approver || String(me.id) === String(t.author_id))) return '';
  const csrf = html`<input type="hidden" name="csrf" value="${ctx.session.csrf}">`;
  const button = (action, text) => html`<form class="inline" method="post" action="/${kind(t)}/${t.id}/${action}/">${csrf}
<button type="submit" id="${action}">${text}</button></form>`;
  return html`<div id="actions">${t.finished_at === null ? button('stop', 'Stop this test') : button('restart', 'Restart')}
${!t.approved && me.approver ? button('approve', 'Approve') : ''}${button('delete', 'Delete')}
<form class="inline" method="post" action="/${kind(t)}/${t.id}/modify/">${csrf}
Priority <input type="number" name="priority" value="${t.priority}"> Throughput <input type="number" name="throughput" value="${Number(t.throughput)}">
<button type="submit" id="modify">Modify</button></form></div>`;
}

function makePages(db) {
  const catalog = makeCatalog(db);
  const lists = makeLists(db, NotFound);

  // The tests table of a list page.
  function testsTable(rows) {
    if (rows.length === 0) return html`<p class="note">No tests yet.</p>`;
    return html`<table id="tests"><tr><th>Test</th><th>Engine</th><th>Dev</th><th>Base</th><th>Time control</th>
<th>Statistics</th><th>Status</th><th>Author</th></tr>
${rows.map((t) => {
    const s = statusCell(t);
    return html`<tr class="${s.cls}"><td><a href="/${kind(t)}/${t.id}/">${t.id}</a></td><td>${t.dev_engine}</td>
<td>${t.dev_name}</td><td>${t.base_name}</td><td>${t.dev_time_control}</td>
<td><pre>${statLines(t).filter((l) => !l.startsWith('nElo')).join('\n')}</pre></td><td>${s.word}</td><td>${t.author ?? 'operator'}</td></tr>`;
  })}</table>`;
  }

  // A list of tests: where (SQL on t and a, with params), its title and
  // the path its pages hang from.
  async function testList(ctx, pageText, { where, params, title, base }) {
    const page = pageText === undefined ? 1 : number(pageText, 'a page number');
    if (page > 1000000) throw new NotFound(`there is no page ${page}`);
    const { rows, pages } = await catalog.list(`NOT t.deleted AND ${where}`, params, page);
    if (page > pages) throw new NotFound(`there is no page ${page}: the tests fill ${pages}`);
    const open = rows.filter((t) => t.finished_at === null);
    const done = rows.filter((t) => t.finished_at !== null);
    return layout(ctx, title, html`
<h2>Pending and active</h2>${testsTable(open)}
<h2>Finished</h2>${testsTable(done)}
${paging(base, page, pages)}`, { refresh: 60 });
  }

  const index = (ctx, pageText) => testList(ctx, pageText, { where: 'true', params: [], title: 'Tests', base: '/index/' });

  // OpenBench's greens: the tests that passed.
  const greens = (ctx, pageText) => testList(ctx, pageText, { where: 't.passed', params: [], title: 'Passed tests', base: '/greens/' });

  // The search page: tests by engine, author, state and a word of their
  // branch names, the first 100 matches, newest first.  A value that is
  // not one of the choices is answered with a sentence (400).
  const STATES = {
    any: 'true', pending: 't.finished_at IS NULL AND NOT t.approved', active: 't.finished_at IS NULL AND t.approved',
    finished: 't.finished_at IS NOT NULL', passed: 't.passed', failed: 'NOT t.passed',
  };
  async function search(ctx, query) {
    const get = (name) => {
      const v = query.getAll(name);
      if (v.length > 1) throw new BadInput(`${name} was given more than once`);
      return (v[0] ?? '').trim();
    };
    const engine = get('engine');
    const author = get('author');
    const state = get('state') || 'any';
    const words = get('words');
    if (!Object.hasOwn(STATES, state)) throw new BadInput(`state must be one of ${Object.keys(STATES).join(', ')}, not ${JSON.stringify(state.slice(0, 40))}`);
    if (engine.length > 64 || author.length > 64 || words.length > 64) throw new BadInput('each field holds at most 64 characters');
    const where = [STATES[state]];
    const params = [];
    if (engine) where.push(`t.dev_engine = $${params.push(engine)}`);
    if (author) where.push(`a.name = $${params.push(author)}`);
    if (words) where.push(`position(lower($${params.push(words)}) IN lower(t.dev_name || ' ' || t.base_name)) > 0`);
    const asked = engine || author || words || state !== 'any';
    const { rows } = asked ? await catalog.list(`NOT t.deleted AND ${where.join(' AND ')}`, params, 1, 100) : { rows: [] };
    const { rows: engines } = await db.query('SELECT name FROM openbench.engine ORDER BY name');
    const option = (value, chosen) => html`<option${value === chosen ? html` selected` : ''}>${value}</option>`;
    return layout(ctx, 'Search', html`<form method="get" action="/search/">
<label for="engine">Engine</label><select id="engine" name="engine"><option></option>${engines.map((e) => option(e.name, engine))}</select>
<label for="author">Author</label><input type="text" id="author" name="author" value="${author}">
<label for="state">State</label><select id="state" name="state">${Object.keys(STATES).map((k) => option(k, state))}</select>
<label for="words">Words of the branch names</label><input type="text" id="words" name="words" value="${words}">
<button type="submit">Search</button></form>
${asked ? html`<h2>The first 100 matches</h2>${testsTable(rows)}` : ''}`);
  }

  // One account's tests.
  async function userTests(ctx, name, pageText) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) throw new NotFound(`${JSON.stringify(name.slice(0, 40))} is not an account name`);
    const { rows } = await db.query('SELECT name FROM openbench.account WHERE name = $1', [name]);
    if (rows.length === 0) throw new NotFound(`there is no account ${name}`);
    return testList(ctx, pageText, { where: 'a.name = $1', params: [name], title: `Tests by ${name}`, base: `/user/${name}/` });
  }

  // An SPSA tune's settings and parameters: each one's value now, and the
  // c and r the next workload would get (OpenBench's digest).
  async function tuneSection(t) {
    const tune = await catalog.spsa(t.id);
    const run = spsa.runFromRow(tune.run);
    const rows = spsa.digestRows(run, tune.params.map(spsa.fromRow), Number(t.games));
    return html`<h2>Parameters</h2>
<table id="parameters"><tr>${rows[0].map((h) => html`<th>${h}</th>`)}</tr>
${rows.slice(1).map((r) => html`<tr><td>${r[0]}</td>${r.slice(1).map((x) => html`<td class="num">${x}</td>`)}</tr>`)}</table>
<p>SPSA: ${run.iterations} iterations of ${run.pairsPer} game pairs (${2 * run.iterations * run.pairsPer} games), alpha ${run.alpha},
gamma ${run.gamma}, A ratio ${run.aRatio}, ${run.reportingType} reports, ${run.distributionType} perturbation.
<a href="/api/spsa/${t.id}/inputs/">Inputs</a>, <a href="/api/spsa/${t.id}/outputs/" id="outputs">outputs</a>,
<a href="/api/spsa/${t.id}/digest/">digest</a>.</p>`;
  }

  // A test's page (/test/ID/), or a tune's (/tune/ID/): each at its own path.
  async function testPage(ctx, idText, path = 'test') {
    const id = number(idText, `a ${path} number`);
    const t = await catalog.one(id);
    if (!t || kind(t) !== path) throw new NotFound(`there is no ${path} ${id}`);
    if (t.deleted) {
      const me = ctx.session.account;
      if (!me || !(me.approver || String(me.id) === String(t.author_id))) throw new NotFound(`${path} ${id} was deleted`);
      return layout(ctx, `Test ${id}: ${t.name}`, html`<p id="message">This test was deleted.</p>
<form method="post" action="/${path}/${id}/restore/"><input type="hidden" name="csrf" value="${ctx.session.csrf}">
<button type="submit" id="restore">Restore it</button></form>`);
    }
    const s = statusCell(t);
    const { rows: machines } = await db.query(
      `SELECT m.host_id, a.name AS owner, m.info ->> 'machine_name' AS machine_name, m.info ->> 'os_name' AS os_name,
              m.last_seen
         FROM openbench.machine m JOIN openbench.account a ON a.id = m.account_id
        WHERE m.host_id = ANY ($1::bigint[]) ORDER BY m.host_id`, [t.hosts]);
    const { rows: reports } = await db.query(
      `SELECT s.losses, s.draws, s.wins, s.ll, s.ld, s.dd, s.dw, s.ww
         FROM openbench.submission s JOIN openbench.result r ON r.id = s.result_id
        WHERE r.test_id = $1 AND s.counted ORDER BY s.id`, [id]);
    const side = (which) => html`<td>${t[`${which}_engine`]}</td><td>${t[`${which}_name`]}</td>
<td><code>${t[`${which}_sha`]}</code></td><td class="num">${Number(t[`${which}_bench`])}</td>
<td>${t[`${which}_options`]}</td><td>${t[`${which}_time_control`]}</td><td>${t[`${which}_netname`] ?? ''}</td>`;
    return layout(ctx, `Test ${id}: ${t.name}`, html`
<div class="stat ${s.cls}" id="stats"><pre>${statLines(t).join('\n')}</pre></div>
<p id="status">Status: <b>${s.word}</b>${t.finished_at ? html` at ${when(t.finished_at)} (${t.finished_by}${
  t.passed === true ? ', passed' : t.passed === false ? ', failed' : ''})` : ''}.
Priority ${t.priority}, throughput ${Number(t.throughput)}, by ${t.author ?? 'the operator'}.
${t.finished_at ? html`<a href="/api/pgns/${t.id}/" id="pgns">Download its PGNs</a>` : ''}</p>
${actionForms(ctx, t)}
${chart.render(t, reports)}
<h2>Engines</h2>
<table><tr><th></th><th>Engine</th><th>Name</th><th>Commit</th><th>Bench</th><th>Options</th><th>Time control</th><th>Network</th></tr>
<tr><th>Dev</th>${side('dev')}</tr><tr><th>Base</th>${side('base')}</tr></table>
<p>Book ${t.book_name}; ${t.type === 'SPRT' ? html`SPRT [${t.elo_lower}, ${t.elo_upper}], alpha ${t.alpha}, beta ${t.beta}, ${t.use_penta ? 'pentanomial' : 'trinomial'}`
  : t.type === 'SPSA' ? 'an SPSA tune' : html`${Number(t.max_games)} games`}; workloads of ${t.workload_size} game pairs.</p>
${t.type === 'SPSA' ? await tuneSection(t) : ''}
${t.info ? html`<pre class="note">${t.info}</pre>` : ''}
<h2>Machines on it</h2>
${machines.length === 0 ? html`<p class="note">None now.</p>` : html`<table id="machines"><tr><th>Machine</th><th>Owner</th><th>Name</th><th>System</th><th>Last seen</th></tr>
${machines.map((m) => html`<tr><td>${m.host_id}</td><td>${m.owner}</td><td>${m.machine_name}</td><td>${m.os_name}</td><td>${when(m.last_seen)}</td></tr>`)}</table>`}
`, { refresh: t.finished_at === null ? 30 : null });
  }

  // The page for a GET of `parts` (the path's parts) in ctx (the
  // request's {session, nonce}), or null when the path is not a page's.
  async function render(parts, ctx, query = new URLSearchParams()) {
    let body = null;
    if (parts.length === 0 || (parts[0] === 'index' && parts.length <= 2)) body = await index(ctx, parts[1]);
    else if (parts[0] === 'greens' && parts.length <= 2) body = await greens(ctx, parts[1]);
    else if (parts[0] === 'user' && (parts.length === 2 || parts.length === 3)) body = await userTests(ctx, parts[1], parts[2]);
    else if ((parts[0] === 'test' || parts[0] === 'tune') && parts.length === 2) body = await testPage(ctx, parts[1], parts[0]);
    else if (parts[0] === 'search' && parts.length === 1) body = await search(ctx, query);
    else body = await lists.render(parts, ctx);
    return body === null ? null : String(body);
  }

  return { render };
}

// The headers of every page: its one stylesheet by nonce, nothing else runs.
function pageHeaders(nonce) {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
  };
}

module.exports = { makePages, pageHeaders, NotFound, BadInput, statLines };
