'use strict';
// The site's pages of people, machines and what happened, for anyone to
// read (OpenBench's users, machines, events and errors pages):
//
//   GET /users/               accounts: role, enabled, tests made (never a
//                             password hash, a secret or an e-mail address)
//   GET /machines/            machines seen in the last 24 hours: owner,
//                             name, system, CPU, threads, speed, the test
//                             of their latest workload
//   GET /machine/ID/          one machine, and its last 25 workloads
//   GET /events/, /events/N/  what accounts did on the site, newest first
//   GET /errors/, /errors/N/  what workers reported: build errors, crashes,
//                             wrong benches (their logs cut to 2,000
//                             characters)

const { html, layout, paging, when } = require('./html');

const PAGE_SIZE = 50;
const ID = /^[1-9][0-9]{0,17}$/;

function makeLists(db, NotFound) {
  const pageOf = (text) => {
    if (text === undefined) return 1;
    if (!ID.test(text) || Number(text) > 1000000) throw new NotFound(`a page number must be a whole number from 1, not ${JSON.stringify(String(text).slice(0, 40))}`);
    return Number(text);
  };

  // The page asked for of a table's rows, PAGE_SIZE a page: {page, pages}.
  async function pageIn(table, what, pageText) {
    const page = pageOf(pageText);
    const { rows: [{ n }] } = await db.query(`SELECT count(*) AS n FROM ${table}`);
    const pages = Math.max(1, Math.ceil(Number(n) / PAGE_SIZE));
    if (page > pages) throw new NotFound(`there is no page ${page}: the ${what} fill ${pages}`);
    return { page, pages };
  }

  async function users(ctx) {
    const { rows } = await db.query(
      `SELECT a.name, a.enabled, a.approver, a.operator, count(t.id) AS tests
         FROM openbench.account a LEFT JOIN openbench.test t ON t.author_id = a.id AND NOT t.deleted
        GROUP BY a.id ORDER BY a.name`);
    const role = (a) => (a.operator ? 'operator' : a.approver ? 'approver' : 'developer');
    return layout(ctx, 'Users', html`<table id="users"><tr><th>Name</th><th>Role</th><th>Enabled</th><th>Tests</th></tr>
${rows.map((a) => html`<tr><td><a href="/user/${a.name}/">${a.name}</a></td><td>${role(a)}</td><td>${a.enabled ? 'yes' : 'waiting for an operator'}</td><td class="num">${Number(a.tests)}</td></tr>`)}</table>`);
  }

  const MACHINE = `
SELECT m.host_id, a.name AS owner, m.info ->> 'machine_name' AS machine_name, m.info ->> 'os_name' AS os_name,
       m.info ->> 'cpu_name' AS cpu_name, m.info ->> 'concurrency' AS threads, m.nps, m.last_seen, m.registered_at,
       (SELECT r.test_id FROM openbench.result r WHERE r.host_id = m.host_id ORDER BY r.id DESC LIMIT 1) AS test_id
  FROM openbench.machine m JOIN openbench.account a ON a.id = m.account_id`;
  const machineRow = (m) => html`<tr><td><a href="/machine/${m.host_id}/">${m.host_id}</a></td><td>${m.owner}</td>
<td>${m.machine_name}</td><td>${m.os_name}</td><td>${m.cpu_name}</td><td class="num">${m.threads ?? ''}</td>
<td class="num">${m.nps === null ? '' : Number(m.nps)}</td><td>${m.test_id ? html`<a href="/test/${m.test_id}/">${m.test_id}</a>` : ''}</td>
<td>${when(m.last_seen)}</td></tr>`;
  const machineHead = html`<tr><th>Machine</th><th>Owner</th><th>Name</th><th>System</th><th>CPU</th><th>Threads</th><th>NPS</th><th>Test</th><th>Last seen</th></tr>`;

  async function machines(ctx) {
    const { rows } = await db.query(`${MACHINE} WHERE m.last_seen > now() - interval '24 hours' ORDER BY m.last_seen DESC LIMIT 500`);
    return layout(ctx, 'Machines', rows.length === 0 ? html`<p class="note">No machine was seen in the last 24 hours.</p>`
      : html`<table id="machines">${machineHead}${rows.map(machineRow)}</table>`, { refresh: 60 });
  }

  async function machine(ctx, idText) {
    if (!ID.test(idText ?? '')) throw new NotFound(`a machine number must be a whole number from 1, not ${JSON.stringify(String(idText).slice(0, 40))}`);
    const { rows } = await db.query(`${MACHINE} WHERE m.host_id = $1`, [idText]);
    if (rows.length === 0) throw new NotFound(`there is no machine ${idText}`);
    const { rows: results } = await db.query(
      `SELECT r.test_id, r.assigned_at, r.games, r.losses, r.draws, r.wins FROM openbench.result r
        WHERE r.host_id = $1 ORDER BY r.id DESC LIMIT 25`, [idText]);
    return layout(ctx, `Machine ${idText}`, html`<table id="machine">${machineHead}${machineRow(rows[0])}</table>
<p>Registered ${when(rows[0].registered_at)}.</p>
<h2>Its last workloads</h2>
${results.length === 0 ? html`<p class="note">None.</p>` : html`<table id="workloads"><tr><th>Test</th><th>Assigned</th><th>Games</th><th>W</th><th>L</th><th>D</th></tr>
${results.map((r) => html`<tr><td><a href="/test/${r.test_id}/">${r.test_id}</a></td><td>${when(r.assigned_at)}</td><td class="num">${Number(r.games)}</td>
<td class="num">${Number(r.wins)}</td><td class="num">${Number(r.losses)}</td><td class="num">${Number(r.draws)}</td></tr>`)}</table>`}`);
  }

  async function events(ctx, pageText) {
    const { page, pages } = await pageIn('openbench.action', 'events', pageText);
    const { rows } = await db.query(
      `SELECT x.at, a.name, x.test_id, x.summary FROM openbench.action x JOIN openbench.account a ON a.id = x.account_id
        ORDER BY x.id DESC LIMIT ${PAGE_SIZE} OFFSET $1`, [(page - 1) * PAGE_SIZE]);
    return layout(ctx, 'Events', html`<table id="events"><tr><th>When</th><th>Who</th><th>Test</th><th>What</th></tr>
${rows.map((e) => html`<tr><td>${when(e.at)}</td><td>${e.name}</td><td>${e.test_id ? html`<a href="/test/${e.test_id}/">${e.test_id}</a>` : ''}</td><td>${e.summary}</td></tr>`)}</table>
${paging('/events/', page, pages)}`);
  }

  async function errors(ctx, pageText) {
    const { page, pages } = await pageIn('openbench.event', 'errors', pageText);
    const { rows } = await db.query(
      `SELECT e.at, e.host_id, e.test_id, e.kind, e.message, left(e.logs, 2000) AS logs
         FROM openbench.event e ORDER BY e.id DESC LIMIT ${PAGE_SIZE} OFFSET $1`, [(page - 1) * PAGE_SIZE]);
    return layout(ctx, 'Errors', html`<table id="errors"><tr><th>When</th><th>Machine</th><th>Test</th><th>Kind</th><th>Message</th></tr>
${rows.map((e) => html`<tr><td>${when(e.at)}</td><td><a href="/machine/${e.host_id}/">${e.host_id}</a></td>
<td><a href="/test/${e.test_id}/">${e.test_id}</a></td><td>${e.kind}</td><td>${e.message}${e.logs ? html`<pre>${e.logs}</pre>` : ''}</td></tr>`)}</table>
${paging('/errors/', page, pages)}`);
  }

  // The page of parts, or null when the path is not one of these.
  async function render(parts, ctx) {
    const [root, arg, extra] = parts;
    if (extra !== undefined) return null;
    if (root === 'users' && arg === undefined) return users(ctx);
    if (root === 'machines' && arg === undefined) return machines(ctx);
    if (root === 'machine' && arg !== undefined) return machine(ctx, arg);
    if (root === 'events') return events(ctx, arg);
    if (root === 'errors') return errors(ctx, arg);
    return null;
  }

  return { render };
}

module.exports = { makeLists };
