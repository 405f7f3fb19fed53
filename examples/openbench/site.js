'use strict';
// The web site's forms: log in and out, create a test from an engine's
// branches, and stop a test.  Every POST carries the page's CSRF token
// (sessions.js) and every field is checked; a refusal is the form again
// with a sentence that names the value, and nothing changed.
//
//   GET/POST /register/         a new account, disabled until an operator
//                               enables it (admin.js enable-user)
//   GET/POST /login/            an account's name and password (as workers use)
//   POST     /logout/
//   GET/POST /profile/          one's own account: the e-mail address, or
//                               the password (the current one first;
//                               every other session of the account ends)
//   GET/POST /test/new/         engine, dev and base branches (or tags or
//                               shas), resolved by resolver.js to commits,
//                               benches and source zips; without a
//                               resolver, or to override it, the sha,
//                               bench and source typed; OpenBench's SPRT
//                               confidence, workload size, throughput and
//                               priority (above 0: an approver's)
//   GET/POST /tune/new/         an SPSA tune of one branch: its parameters,
//                               one a line (spsa.js), and OpenBench's
//                               settings (iterations, pairs per
//                               iteration, alpha, gamma, A ratio,
//                               reporting and distribution)
//   POST     /test/ID/stop/, restart/, delete/, restore/, modify/
//                               (priority, throughput): its author or an
//                               approver; approve/: an approver (a tune's
//                               at /tune/ID/...)
//
// A test made by an approver (or an operator) starts at once; a
// developer's waits, its allot workload paused, until one approves it.

const { html, layout } = require('./html');
const { BadRequest } = require('./forms');
const { Refused } = require('./machines');
const { newHashRow } = require('./secrets');
const { ResolveError, SHA } = require('./resolver');
const { CsrfError } = require('./sessions');
const spec = require('./test_spec');
const spsa = require('./spsa');

// Ends a request with a redirect (after a POST that did its work).
class Redirect {
  constructor(location) {
    this.location = location;
  }
}

// A refusal shown on the form: its status and sentence.
class FormError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const BRANCH = /^[A-Za-z0-9._\/-]{1,200}$/;
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
// as openbench.account's check
const EMAIL = /^[^\s\u0000-\u001f\u007f@<>"]+@[^\s\u0000-\u001f\u007f@<>"]+$/;

function makeSite(db, { machines, resolver }) {
  const csrf = (ctx) => html`<input type="hidden" name="csrf" value="${ctx.session.csrf}">`;
  const value = (form, name) => (form ? form.fields.get(name)?.[0] ?? '' : '');

  function loginPage(ctx, form = null, message = null) {
    return layout(ctx, 'Log in', html`<form method="post" action="/login/">${csrf(ctx)}
<label for="username">Name</label><input type="text" id="username" name="username" value="${value(form, 'username')}">
<label for="password">Password</label><input type="password" id="password" name="password">
<button type="submit">Log in</button></form>`, { message });
  }

  function registerPage(ctx, form = null, message = null) {
    return layout(ctx, 'Register', html`<form method="post" action="/register/">${csrf(ctx)}
<label for="username">Name (letters, digits and "_.-")</label><input type="text" id="username" name="username" value="${value(form, 'username')}">
<label for="password">Password (8 to 1024 characters)</label><input type="password" id="password" name="password">
<label for="password2">The password again</label><input type="password" id="password2" name="password2">
<button type="submit">Register</button></form>`, { message });
  }

  async function register(ctx, form) {
    const name = form.text('username', { max: 64 }).trim();
    if (!USERNAME.test(name)) throw new FormError(400, `a name has letters, digits and "_.-" (up to 64, starting with a letter or digit), not ${JSON.stringify(name.slice(0, 40))}`);
    const password = form.text('password', { max: 1024, optional: true }) ?? '';
    if (password.length < 8) throw new FormError(400, 'a password has 8 to 1024 characters');
    if (password !== (form.text('password2', { max: 1024, optional: true }) ?? '')) throw new FormError(400, 'the two passwords differ');
    const h = await newHashRow(password);
    const { rowCount } = await db.query(
      `INSERT INTO openbench.account (name, salt, hash, scrypt_n, scrypt_r, scrypt_p, enabled)
       VALUES ($1, $2, $3, $4, $5, $6, false) ON CONFLICT (name) DO NOTHING`,
      [name, h.salt, h.hash, h.scrypt_n, h.scrypt_r, h.scrypt_p]);
    if (rowCount === 0) throw new FormError(409, `the name ${name} is taken`);
    return layout(ctx, 'Registered', html`<p id="message">Account ${name} is registered. An operator enables it
(<code>admin.js enable-user ${name}</code>); then log in, and run workers with it.</p>`);
  }

  function profilePage(ctx, form = null, message = null) {
    const me = ctx.session.account;
    const role = me.operator ? 'operator' : me.approver ? 'approver' : 'developer';
    return layout(ctx, `Account ${me.name}`, html`<p>You are ${me.name}, ${role === 'operator' ? 'an' : 'a'} ${role}.
<a href="/user/${me.name}/">Your tests</a>.</p>
<h2>E-mail address</h2>
<form method="post" action="/profile/">${csrf(ctx)}<input type="hidden" name="change" value="email">
<label for="email">E-mail address (shown to you only; blank: none)</label><input type="text" id="email" name="email" value="${form ? value(form, 'email') : me.email ?? ''}">
<button type="submit" id="save-email">Save</button></form>
<h2>Password</h2>
<form method="post" action="/profile/">${csrf(ctx)}<input type="hidden" name="change" value="password">
<label for="current">Current password</label><input type="password" id="current" name="current">
<label for="password">New password (8 to 1024 characters)</label><input type="password" id="password" name="password">
<label for="password2">The new password again</label><input type="password" id="password2" name="password2">
<button type="submit" id="save-password">Change it</button></form>`, { message });
  }

  // A change to one's own account; the page again, saying what changed.
  async function changeProfile(ctx, form, res) {
    const me = ctx.session.account;
    const change = spec.oneOf(form.text('change', { max: 16 }), ['EMAIL', 'PASSWORD'], 'Change');
    if (change === 'EMAIL') {
      const email = form.text('email', { max: 254, optional: true })?.trim() ?? '';
      if (email !== '' && !EMAIL.test(email)) throw new FormError(400, `${JSON.stringify(email.slice(0, 60))} is not an e-mail address`);
      await db.query('UPDATE openbench.account SET email = $2 WHERE id = $1', [me.id, email || null]);
      await db.query('INSERT INTO openbench.action (account_id, summary) VALUES ($1, $2)', [me.id, 'changed the e-mail address']);
      me.email = email || null;
      return profilePage(ctx, null, { kind: 'ok', text: email ? `Your e-mail address is now ${email}.` : 'You have no e-mail address now.' });
    }
    const current = form.text('current', { max: 1024, optional: true }) ?? '';
    const password = form.text('password', { max: 1024, optional: true }) ?? '';
    if (password.length < 8) throw new FormError(400, 'a password has 8 to 1024 characters');
    if (password !== (form.text('password2', { max: 1024, optional: true }) ?? '')) throw new FormError(400, 'the two new passwords differ');
    try {
      await machines.accountOf(me.name, current);
    } catch (err) {
      if (err instanceof Refused) throw new FormError(403, 'the current password is wrong');
      throw err;
    }
    const h = await newHashRow(password);
    await db.query('UPDATE openbench.account SET salt = $2, hash = $3, scrypt_n = $4, scrypt_r = $5, scrypt_p = $6 WHERE id = $1',
      [me.id, h.salt, h.hash, h.scrypt_n, h.scrypt_r, h.scrypt_p]);
    // every other browser logged in as this account is logged out
    await ctx.sessions.logout(ctx.session, { everywhere: true, keep: ctx.session.token });
    await db.query('INSERT INTO openbench.action (account_id, summary) VALUES ($1, $2)', [me.id, 'changed the password']);
    return profilePage(ctx, null, { kind: 'ok', text: 'Your password is changed; your other sessions are logged out. Workers use the new one from their next start.' });
  }

  async function login(ctx, form, res) {
    let who;
    try {
      who = await machines.account(form);
    } catch (err) {
      if (err instanceof Refused || err instanceof BadRequest) throw new FormError(403, 'That name and password do not match an enabled account.');
      throw err;
    }
    res.cookies.push(await ctx.sessions.login(who.id));
    return new Redirect('/index/');
  }

  async function choices() {
    const { rows: engines } = await db.query('SELECT name, repository, scale_nps FROM openbench.engine ORDER BY name');
    const { rows: books } = await db.query('SELECT name FROM openbench.book ORDER BY name');
    return { engines, books };
  }

  async function newTestPage(ctx, form = null, message = null) {
    const { engines, books } = await choices();
    const v = (name, fallback) => (form ? value(form, name) : fallback);
    const side = (which, title) => html`<fieldset><legend>${title}</legend>
<label for="${which}_branch">Branch, tag or commit</label><input type="text" id="${which}_branch" name="${which}_branch" value="${v(`${which}_branch`, '')}">
<label for="${which}_repo">Repository (blank: the engine's)</label><input type="text" id="${which}_repo" name="${which}_repo" value="${v(`${which}_repo`, '')}">
<label for="${which}_sha">Commit sha (blank: resolved)</label><input type="text" id="${which}_sha" name="${which}_sha" value="${v(`${which}_sha`, '')}">
<label for="${which}_bench">Bench (blank: from the commit message)</label><input type="text" id="${which}_bench" name="${which}_bench" value="${v(`${which}_bench`, '')}">
<label for="${which}_source">Source zip URL (blank: resolved)</label><input type="text" id="${which}_source" name="${which}_source" value="${v(`${which}_source`, '')}">
</fieldset>`;
    return layout(ctx, 'New test', html`<p class="note">${resolver
      ? html`Branches are looked up with the ${resolver.kind} resolver; a sha, bench or source typed is used as given.`
      : html`This server has no resolver: type each side's sha, bench and source zip URL.`}</p>
<form method="post" action="/test/new/">${csrf(ctx)}
<label for="engine">Engine</label><select id="engine" name="engine">${engines.map((e) => html`<option${v('engine', '') === e.name ? html` selected` : ''}>${e.name}</option>`)}</select>
<div class="columns">${side('dev', 'Dev')}${side('base', 'Base')}</div>
<label for="book">Book</label><select id="book" name="book">${books.map((b) => html`<option${v('book', '') === b.name ? html` selected` : ''}>${b.name}</option>`)}</select>
<label for="tc">Time control</label><input type="text" id="tc" name="tc" value="${v('tc', '10+0.1')}">
<label for="options">Options</label><input type="text" id="options" name="options" value="${v('options', 'Threads=1 Hash=16')}">
<label for="mode">Mode</label><select id="mode" name="mode"><option${v('mode', 'SPRT') === 'SPRT' ? html` selected` : ''}>SPRT</option><option${v('mode', '') === 'GAMES' ? html` selected` : ''}>GAMES</option></select>
<label for="bounds">SPRT bounds (normalised Elo)</label><input type="text" id="bounds" name="bounds" value="${v('bounds', '[0.00, 3.00]')}">
<label for="confidence">SPRT confidence [alpha, beta]</label><input type="text" id="confidence" name="confidence" value="${v('confidence', '[0.05, 0.05]')}">
<label for="games">Games (GAMES)</label><input type="text" id="games" name="games" value="${v('games', '20000')}">
<label for="workload_size">Workload size (game pairs per thread)</label><input type="text" id="workload_size" name="workload_size" value="${v('workload_size', '32')}">
<label for="throughput">Throughput</label><input type="text" id="throughput" name="throughput" value="${v('throughput', '1000')}">
<label for="priority">Priority (above 0: approvers only)</label><input type="text" id="priority" name="priority" value="${v('priority', '0')}">
<label for="info">Notes</label><textarea id="info" name="info">${v('info', '')}</textarea>
<button type="submit">Create</button></form>`, { message });
  }

  // The tune form: one branch (dev and base play the same commit, each
  // with the parameters moved its way), the parameters, and the settings.
  async function newTunePage(ctx, form = null, message = null) {
    const { engines, books } = await choices();
    const v = (name, fallback) => (form ? value(form, name) : fallback);
    const select = (name, options, fallback) => html`<select id="${name}" name="${name}">${options.map((o) =>
      html`<option${v(name, fallback) === o ? html` selected` : ''}>${o}</option>`)}</select>`;
    const field = (name, label, fallback) => html`<label for="${name}">${label}</label><input type="text" id="${name}" name="${name}" value="${v(name, fallback)}">`;
    return layout(ctx, 'New tune', html`<form method="post" action="/tune/new/">${csrf(ctx)}
<label for="engine">Engine</label>${select('engine', engines.map((e) => e.name), '')}
<fieldset><legend>Dev (and base)</legend>
${field('dev_branch', 'Branch, tag or commit', '')}${field('dev_repo', "Repository (blank: the engine's)", '')}
${field('dev_sha', 'Commit sha (blank: resolved)', '')}${field('dev_bench', 'Bench (blank: from the commit message)', '')}
${field('dev_source', 'Source zip URL (blank: resolved)', '')}</fieldset>
<label for="book">Book</label>${select('book', books.map((b) => b.name), '')}
${field('tc', 'Time control', '10+0.1')}${field('options', 'Options', 'Threads=1 Hash=16')}
<label for="spsa_inputs">Parameters, one a line: name, int|float, start, min, max, c_end, r_end</label>
<textarea id="spsa_inputs" name="spsa_inputs">${v('spsa_inputs', '')}</textarea>
${field('iterations', 'Iterations', '10000')}${field('pairs_per', 'Game pairs per iteration', '8')}
${field('alpha', 'Alpha', '0.602')}${field('gamma', 'Gamma', '0.101')}${field('a_ratio', 'A ratio', '0.1')}
<label for="reporting_type">Reporting</label>${select('reporting_type', ['BATCHED', 'BULK'], 'BATCHED')}
<label for="distribution_type">Distribution</label>${select('distribution_type', ['SINGLE', 'MULTIPLE'], 'SINGLE')}
<label for="info">Notes</label><textarea id="info" name="info">${v('info', '')}</textarea>
<button type="submit">Create</button></form>`, { message });
  }

  // One side of a test from the form: {name, sha, bench, source, repo}.
  async function sideOf(form, which, engine) {
    const label = which === 'dev' ? 'Dev' : 'Base';
    const branch = form.text(`${which}_branch`, { max: 200, optional: true })?.trim() ?? '';
    const repoTyped = form.text(`${which}_repo`, { max: 2000, optional: true })?.trim() ?? '';
    const shaTyped = form.text(`${which}_sha`, { max: 64, optional: true })?.trim().toLowerCase() ?? '';
    const benchTyped = form.text(`${which}_bench`, { max: 32, optional: true })?.trim() ?? '';
    const sourceTyped = form.text(`${which}_source`, { max: 2000, optional: true })?.trim() ?? '';
    if (branch && !BRANCH.test(branch)) throw new FormError(400, `${label} branch ${JSON.stringify(branch.slice(0, 60))} is not a branch, tag or sha`);
    if (shaTyped && !SHA.test(shaTyped)) throw new FormError(400, `${label} sha ${JSON.stringify(shaTyped.slice(0, 60))} is not 40 hexadecimal digits`);
    const bench = benchTyped ? spec.numberIn(benchTyped.replace(/,/g, ''), `${label} bench`, 1, 1e15, { integer: true }) : null;
    if (sourceTyped && !/^https?:\/\/[^\s]{1,2000}$/.test(sourceTyped)) {
      throw new FormError(400, `${label} source ${JSON.stringify(sourceTyped.slice(0, 60))} is not an http(s) URL`);
    }
    const repo = repoTyped || engine.repository || '';
    let found = null;
    if (resolver && (branch || shaTyped) && !(shaTyped && bench !== null && sourceTyped)) {
      if (!repo) throw new FormError(400, `engine ${engine.name} has no repository: name one for ${label}`);
      found = await resolver.resolve(repo, shaTyped || branch);
    } else if (!shaTyped || bench === null || !sourceTyped) {
      throw new FormError(400, resolver
        ? `${label}: give a branch, tag or sha`
        : `${label}: this server has no resolver, so type the sha, the bench and the source zip URL`);
    }
    const s = {
      sha: shaTyped || found.sha,
      bench: bench ?? found.bench,
      source: sourceTyped || found.source,
      repo: repo || null,
    };
    if (s.bench === null) {
      throw new FormError(400, `${label}: the message of commit ${s.sha.slice(0, 8)} names no bench ("Bench: N"): type it`);
    }
    s.name = branch && !SHA.test(branch) ? branch : s.sha.slice(0, 8);
    return s;
  }

  // A tune's settings and parameters from the form, as
  // openbench.create_test takes them; pairs per iteration is its workload
  // size.
  function tuneOf(form) {
    const number = (name, label, min, max, opts) => spec.numberIn(form.text(name, { max: 32 }).trim(), label, min, max, opts);
    const run = {
      iterations: number('iterations', 'Iterations', 1, 1e8, { integer: true }),
      pairsPer: number('pairs_per', 'Game pairs per iteration', 1, 1024, { integer: true }),
      alpha: number('alpha', 'Alpha', 0.001, 10),
      gamma: number('gamma', 'Gamma', 0.001, 10),
      aRatio: number('a_ratio', 'A ratio', 0.001, 1000),
      reportingType: spec.oneOf(form.text('reporting_type', { max: 16 }), ['BATCHED', 'BULK'], 'Reporting'),
      distributionType: spec.oneOf(form.text('distribution_type', { max: 16 }), ['SINGLE', 'MULTIPLE'], 'Distribution'),
    };
    const params = spsa.parseInputs(form.text('spsa_inputs', { max: 65536, multiline: true }));
    return { workloadSize: run.pairsPer, settings: spsa.createSettings(run, params) };
  }

  // The test's allot workload and row; its id.  allot's workload names are
  // unique, OpenBench's tests need not be: a second test of the same
  // branches is named "NAME (2)", a third "NAME (3)", and so on.
  async function createNamed(t, settings, name, priority, throughput, approved) {
    for (let k = 1; ; k++) {
      try {
        const { rows: [row] } = await db.query('SELECT openbench.create_test($1::jsonb, $2::jsonb, $3, $4, $5, $6) AS id',
          [JSON.stringify(t), settings === null ? null : JSON.stringify(settings), k === 1 ? name : `${name} (${k})`,
            priority, throughput, approved]);
        return row.id;
      } catch (err) {
        if (err.code !== '23505' || err.constraint !== 'workload_name_key' || k >= 1000) throw err;
      }
    }
  }

  // A test (path 'test': SPRT or GAMES, dev against base) or a tune (path
  // 'tune': SPSA, one branch against itself).
  async function createTest(ctx, form, path = 'test') {
    const me = ctx.session.account;
    if (!me) throw new FormError(403, `Log in to create a ${path}.`);
    if (!me.enabled) throw new FormError(403, `account ${me.name} waits for an operator to enable it`);
    const { engines, books } = await choices();
    const engineName = form.text('engine', { max: 64 });
    const engine = engines.find((e) => e.name === engineName);
    if (!engine) throw new FormError(400, `there is no engine ${JSON.stringify(engineName.slice(0, 60))}`);
    const book = form.text('book', { max: 200 });
    if (!books.some((b) => b.name === book)) throw new FormError(400, `there is no book ${JSON.stringify(book.slice(0, 60))}`);
    const tc = spec.timeControl(form.text('tc', { max: 64 }).trim(), 'Time control');
    const options = spec.engineOptions(form.text('options', { max: 1024 }), 'Options');
    const mode = path === 'tune' ? 'SPSA' : spec.oneOf(form.text('mode', { max: 8 }), ['SPRT', 'GAMES'], 'Mode');
    const tune = mode === 'SPSA' ? tuneOf(form) : null;
    // a field left out of the form takes OpenBench's default
    const given = (name, max, fallback) => form.text(name, { max, optional: true }) ?? fallback;
    const sprt = mode === 'SPRT' ? spec.sprt(form.text('bounds', { max: 64 }),
      ...spec.pair(given('confidence', 64, '[0.05, 0.05]'), 'SPRT confidence', 'two error rates "[ALPHA, BETA]"').map(String),
      { bounds: 'SPRT bounds', alpha: 'SPRT confidence: alpha', beta: 'SPRT confidence: beta' }) : null;
    const maxGames = mode === 'GAMES' ? spec.numberIn(form.text('games', { max: 16 }), 'Games', 2, 1e9, { integer: true }) : null;
    // a tune's pairs per iteration are its workload size; its form has no such field
    const workloadSize = tune ? tune.workloadSize
      : spec.numberIn(given('workload_size', 8, '32'), 'Workload size', 1, 1024, { integer: true });
    const throughput = spec.numberIn(given('throughput', 16, '1000'), 'Throughput', 1, 1e9, { integer: true });
    const priority = spec.numberIn(given('priority', 8, '0'), 'Priority', -1000, 1000, { integer: true });
    if (priority > 0 && me.approver !== true) throw new FormError(403, `only an approver may set a priority above 0, not ${priority}`);
    const info = form.text('info', { max: 4096, multiline: true, optional: true }) ?? '';
    const dev = await sideOf(form, 'dev', engine);
    const base = tune ? dev : await sideOf(form, 'base', engine);
    const t = {
      type: mode, dev_engine: engine.name, base_engine: engine.name, book_name: book,
      upload_pgns: 'COMPACT', scale_method: 'BOTH', scale_nps: Number(engine.scale_nps), syzygy_adj: 'OPTIONAL',
      syzygy_wdl: 'OPTIONAL', win_adj: 'None', draw_adj: 'None', workload_size: workloadSize, use_penta: true,
      elo_lower: sprt?.lower ?? null, elo_upper: sprt?.upper ?? null, alpha: sprt?.alpha ?? null, beta: sprt?.beta ?? null,
      lower_llr: sprt?.lowerLlr ?? null, upper_llr: sprt?.upperLlr ?? null, max_games: maxGames,
      author_id: me.id, info,
    };
    for (const [which, s] of [['dev', dev], ['base', base]]) {
      Object.assign(t, {
        [`${which}_name`]: s.name, [`${which}_source`]: s.source, [`${which}_sha`]: s.sha, [`${which}_bench`]: s.bench,
        [`${which}_options`]: options, [`${which}_time_control`]: tc, [`${which}_repo`]: s.repo,
      });
    }
    const approved = me.approver === true;
    const name = tune ? `${engine.name} ${dev.name} tune` : `${engine.name} ${dev.name} vs ${base.name}`;
    const row = { id: await createNamed(t, tune?.settings ?? null, name, priority, throughput, approved) };
    await db.query('INSERT INTO openbench.action (account_id, test_id, summary) VALUES ($1, $2, $3)',
      [me.id, row.id, `created the ${path}${approved ? '' : ', to be approved'}`]);
    return new Redirect(`/${path}/${row.id}/`);
  }

  // What people may do to a test, and what each does to its row; allot's
  // workload then follows the row (openbench.sync_workload).  who:
  // 'owner' (its author or an approver) or 'approver'.  when(t): whether
  // the action applies now, else the sentence why not.
  const ACTIONS = {
    stop: {
      who: 'owner', when: (t) => (t.finished_at === null ? null : 'it has already stopped'),
      sql: `UPDATE openbench.test SET finished_at = now(), finished_by = 'user' WHERE id = $1 AND finished_at IS NULL`,
      summary: 'stopped the test',
    },
    restart: {
      who: 'owner', when: (t) => (t.finished_at !== null ? null : 'it is running'),
      sql: 'UPDATE openbench.test SET finished_at = NULL, finished_by = NULL, passed = NULL WHERE id = $1',
      summary: 'restarted the test',
    },
    approve: {
      who: 'approver', when: (t) => (t.approved ? 'it is already approved' : null),
      sql: 'UPDATE openbench.test SET approved = true WHERE id = $1', summary: 'approved the test',
    },
    delete: {
      who: 'owner', when: () => null,
      sql: 'UPDATE openbench.test SET deleted = true WHERE id = $1', summary: 'deleted the test',
    },
    restore: {
      who: 'owner', when: (t) => (t.deleted ? null : 'it is not deleted'),
      sql: 'UPDATE openbench.test SET deleted = false WHERE id = $1', summary: 'restored the test',
    },
    modify: { who: 'owner', when: () => null, sql: null, summary: 'modified the test' },
  };

  // An action on a test (path 'test') or a tune (path 'tune'), each at
  // its own path.
  async function act(ctx, idText, action, form, path = 'test') {
    const me = ctx.session.account;
    const a = ACTIONS[action];
    if (!me) throw new FormError(403, `Log in to ${action} a ${path}.`);
    const { rows } = await db.query(
      'SELECT author_id, finished_at, approved, deleted FROM openbench.test WHERE id = $1 AND (type = $2) = $3',
      [idText, 'SPSA', path === 'tune']);
    if (rows.length === 0 || (rows[0].deleted && action !== 'restore')) throw new FormError(404, `there is no ${path} ${idText}`);
    const t = rows[0];
    const mine = String(t.author_id) === String(me.id);
    if (a.who === 'approver' ? !me.approver : !(mine || me.approver)) {
      throw new FormError(403, a.who === 'approver' ? `only an approver may ${action} ${path} ${idText}`
        : `${path} ${idText} is not yours: its author or an approver may ${action} it`);
    }
    const why = a.when(t);
    const done = { stop: 'stopped', restart: 'restarted' }[action] ?? `${action}d`;
    if (why) throw new FormError(409, `${path} ${idText} cannot be ${done}: ${why}`);
    let priority = null;
    let throughput = null;
    if (action === 'modify') {
      priority = form.int('priority', { min: -1000, max: 1000 });
      throughput = form.int('throughput', { min: 1, max: 1000000000 });
      // a developer may lower a test's share, not raise it above others'
      if (!me.approver && priority > 0) throw new FormError(403, `only an approver may set a priority above 0, not ${priority}`);
    }
    if (a.sql) await db.query(a.sql, [idText]);
    await db.query('SELECT openbench.sync_workload($1, $2, $3)', [idText, priority, throughput]);
    await db.query('INSERT INTO openbench.action (account_id, test_id, summary) VALUES ($1, $2, $3)',
      [me.id, idText, action === 'modify' ? `set priority ${priority}, throughput ${throughput}` : a.summary]);
    return new Redirect(action === 'delete' ? '/index/' : `/${path}/${idText}/`);
  }

  // The answer to a site request, or null when the path is not one of
  // these forms': an Html page (with status) or a Redirect.
  async function handle(ctx, method, parts, readForm, res) {
    const path = parts.join('/');
    let page = null;
    let retry = null;
    let form = null;
    try {
      if (path === 'login') {
        retry = (f, m) => loginPage(ctx, f, m);
        if (method === 'GET') return { page: loginPage(ctx) };
        form = await readForm();
        ctx.sessions.check(ctx.session, form);
        return { redirect: await login(ctx, form, res) };
      }
      if (path === 'register') {
        retry = (f, m) => registerPage(ctx, f, m);
        if (method === 'GET') return { page: registerPage(ctx) };
        form = await readForm();
        ctx.sessions.check(ctx.session, form);
        return { page: await register(ctx, form) };
      }
      if (path === 'profile') {
        if (!ctx.session.account) return { redirect: new Redirect('/login/') };
        retry = (f, m) => profilePage(ctx, f, m);
        if (method === 'GET') return { page: profilePage(ctx) };
        form = await readForm();
        ctx.sessions.check(ctx.session, form);
        return { page: await changeProfile(ctx, form, res) };
      }
      if (path === 'logout' && method === 'POST') {
        form = await readForm();
        ctx.sessions.check(ctx.session, form);
        res.cookies.push(await ctx.sessions.logout(ctx.session));
        return { redirect: new Redirect('/index/') };
      }
      if (path === 'test/new' || path === 'tune/new') {
        const pageOf = parts[0] === 'tune' ? newTunePage : newTestPage;
        retry = (f, m) => pageOf(ctx, f, m);
        if (!ctx.session.account) return { redirect: new Redirect('/login/') };
        if (method === 'GET') return { page: await pageOf(ctx) };
        form = await readForm();
        ctx.sessions.check(ctx.session, form);
        return { redirect: await createTest(ctx, form, parts[0]) };
      }
      if (parts.length === 3 && (parts[0] === 'test' || parts[0] === 'tune') && Object.hasOwn(ACTIONS, parts[2]) && method === 'POST') {
        if (!/^[1-9][0-9]{0,17}$/.test(parts[1])) throw new FormError(404, `there is no ${parts[0]} ${JSON.stringify(parts[1].slice(0, 40))}`);
        form = await readForm();
        ctx.sessions.check(ctx.session, form);
        return { redirect: await act(ctx, parts[1], parts[2], form, parts[0]) };
      }
      return null;
    } catch (err) {
      let status;
      let message;
      if (err instanceof FormError) ({ status, message } = err);
      else if (err instanceof spec.SpecError || err instanceof ResolveError || err instanceof BadRequest
               || err instanceof spsa.SpsaInputError) {
        status = 400;
        message = err.message;
      } else if (err instanceof CsrfError) {
        status = 403;
        message = err.message;
      } else throw err;
      const text = message.charAt(0).toUpperCase() + message.slice(1);
      page = retry ? await retry(form, { kind: 'error', text }) : layout(ctx, 'Refused', html`<p id="message">${text}</p>`);
      return { page, status };
    }
  }

  return { handle };
}

module.exports = { makeSite };
