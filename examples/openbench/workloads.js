'use strict';
// clientGetWorkload: allot chooses, the front end describes.
//
//   1. the worker's blacklist: the tests it failed to build;
//   2. in one transaction, under the assignment lock (db.js):
//      openbench.explain_assignment (allot's explanation for this machine,
//      and the exclude list: the blacklist plus workloads that are not
//      OpenBench tests), then allot.assign_workload with that list and the
//      database's settings (OpenBench's 2024 profile: count_requester on,
//      repeat_upper 1.25);
//   3. the test's openings advance, and a result row records the
//      assignment with the explanation beside it;
//   4. the reply: OpenBench's workload, with allot's concurrency settings
//      as its distribution.
// Nothing fits: {}; allot released the machine's assignment.
//
// An SPSA tune is a test like any other to allot (its workload's mode,
// spsa_single or spsa_multiple, doubles the threads a game needs); the
// front end adds the workload's perturbation (spsa.js), drawn from the
// tune's values now, kept with the result row: the worker's report is
// checked against it (results.js).

const { positiveId } = require('./forms');
const spsa = require('./spsa');

const MAX_BLACKLIST = 1000;

// The engine half of a workload's test: what the worker builds and runs.
function side(t, which, engine) {
  const col = (name) => t[`${which}_${name}`];
  return {
    name: col('name'),
    source: col('source'),
    sha: col('sha'),
    bench: Number(col('bench')),
    engine: col('engine'),
    options: col('options'),
    // '' without one, as OpenBench sends (the worker reads None as a path)
    network: col('network') ?? '',
    netname: col('netname') ?? '',
    time_control: col('time_control'),
    build: { path: engine.build_path, compilers: engine.compilers, cpuflags: engine.cpuflags, systems: engine.systems },
    private: engine.private,
  };
}

function describe(t, engines, book, result, a, startIndex, tune) {
  return {
    result: { id: Number(result) },
    test: {
      id: Number(t.id),
      type: t.type,
      syzygy_wdl: t.syzygy_wdl,
      syzygy_adj: t.syzygy_adj,
      win_adj: t.win_adj,
      draw_adj: t.draw_adj,
      workload_size: t.workload_size,
      upload_pgns: t.upload_pgns,
      genfens_args: '',
      play_reverses: false,
      scale_method: t.scale_method,
      scale_nps: Number(t.scale_nps),
      book: { name: book.name, sha: book.sha256, source: book.source },
      dev: side(t, 'dev', engines.get(t.dev_engine)),
      base: side(t, 'base', engines.get(t.base_engine)),
      book_seed: Number(t.id),
      book_index: startIndex,
    },
    distribution: {
      'runner-count': a.cutechess_count,
      'concurrency-per': a.concurrency_per,
      'rounds-per-runner': a.games_per_cutechess,
    },
    spsa: tune ? tune.perturbation : {},
    reporting_type: tune ? tune.run.reportingType : '',
  };
}

// A line for the log: the chosen test and its probability, then every
// test's.
function explanationLine(explanation, chosen) {
  const parts = explanation.workloads.map((w) =>
    `${w.id}:${w.candidate ? `p=${Number(w.probability).toPrecision(3)}` : 'no'}${w.reason ? ` (${w.reason})` : ''}`);
  const mine = explanation.workloads.find((w) => String(w.id) === String(chosen));
  return `p=${mine ? Number(mine.probability).toPrecision(3) : '?'}; explain_assignment: ${parts.join(', ') || 'no tests'}`;
}

// A tune's perturbation for a workload of `runners` match runners, from
// its parameters' values now and the games it has played.
async function perturb(c, t, runners) {
  const { rows: [runRow] } = await c.query('SELECT * FROM openbench.spsa_run WHERE test_id = $1', [t.id]);
  const { rows } = await c.query('SELECT * FROM openbench.spsa_parameter WHERE test_id = $1 ORDER BY index', [t.id]);
  const run = spsa.runFromRow(runRow);
  return { run, perturbation: spsa.perturbation(run, rows.map(spsa.fromRow), Number(t.games), runners) };
}

function makeWorkloads(db, { log }) {
  return async function clientGetWorkload(form, machine) {
    const blacklist = form.list('blacklist', MAX_BLACKLIST).map((v) => positiveId(v, 'blacklist'));
    return db.transaction(async (c) => {
      const host = machine.hostId;
      const { rows: [{ e: explanation }] } = await c.query(
        'SELECT openbench.explain_assignment($1, $2::bigint[]) AS e', [host, blacklist]);
      const { rows: assigned } = await c.query(
        'SELECT * FROM allot.assign_workload($1, exclude => $2::bigint[])', [host, explanation.exclude]);
      await c.query('UPDATE openbench.machine SET last_seen = now() WHERE host_id = $1', [host]);
      if (assigned.length === 0) return { reply: {}, note: `machine ${host}: nothing to do` };
      const a = assigned[0];

      // OpenBench's book index: each runner starts its pairs where the
      // previous workload's left off.
      const advance = a.cutechess_count * Math.floor(a.games_per_cutechess / 2);
      const { rows: tests } = await c.query(
        `UPDATE openbench.test SET book_index = book_index + $2 WHERE id = $1 AND finished_at IS NULL
         RETURNING *, book_index - $2 AS start_index`, [a.workload_id, advance]);
      if (tests.length === 0) {
        throw new Error(`allot assigned workload ${a.workload_id}, which is not an unfinished test ` +
                        '(was a finished test set active again in allot.workload?)');
      }
      const t = tests[0];
      const { rows: engineRows } = await c.query(
        'SELECT * FROM openbench.engine WHERE name = ANY ($1::text[])', [[t.dev_engine, t.base_engine]]);
      const { rows: [book] } = await c.query('SELECT * FROM openbench.book WHERE name = $1', [t.book_name]);
      const tune = t.type === 'SPSA' ? await perturb(c, t, a.cutechess_count) : null;
      const { rows: [result] } = await c.query(
        `INSERT INTO openbench.result (test_id, host_id, repeated, focus_assigned, runner_count, concurrency_per,
                                       rounds_per_runner, book_index, explanation, spsa)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb) RETURNING id`,
        [t.id, host, a.repeated, a.focus_assigned, a.cutechess_count, a.concurrency_per, a.games_per_cutechess,
         t.start_index, JSON.stringify(explanation), tune ? JSON.stringify(tune.perturbation) : null]);
      log(`machine ${host} gets test ${t.id} (result ${result.id}${a.repeated ? ', repeated' : ''}), ` +
          explanationLine(explanation, t.id));
      const engines = new Map(engineRows.map((e) => [e.name, e]));
      return {
        reply: { workload: describe(t, engines, book, result.id, a, Number(t.start_index), tune) },
        note: `machine ${host}: test ${t.id}, result ${result.id}`,
      };
    }, { lock: 'assign' });
  };
}

module.exports = { makeWorkloads };
