'use strict';
// What a worker reports while it plays: heartbeats, its engines' speed,
// results, errors, and the PGN of its games.  Every report names a test
// (and most a result, the workload): it is taken only from the machine
// whose latest workload that is, and results only in amounts the workload
// could hold.  A report that fails a check gets {"error": ...} and changes
// nothing.
//
// Results are counted per test, as trinomial (L D W) and pentanomial
// (LL LD DD DW WW) totals; SPRT (or, for a GAMES test, the number of
// games) decides when the test stops.  A stopped test is finished in allot
// too (openbench.finish_test), and its workers are told {"stop": true} at
// their next heartbeat or report; a worker told to stop is released
// (allot.release_assignment).  Otherwise each report is a heartbeat.
//
// An SPSA tune's report also carries spsa_delta, the parameters' moves the
// worker computed from its games and the workload's perturbation: it is
// checked against the perturbation kept with the result (spsa.checkDelta)
// and the report's wins and losses, then added to the values, each kept
// within its bounds.  A tune stops at its iterations' games.

const fs = require('node:fs');
const path = require('node:path');
const { BadRequest } = require('./forms');
const { Refused } = require('./machines');
const { pentanomialLLR, trinomialLLR } = require('./sprt');
const spsa = require('./spsa');

const COUNT = { min: 0, max: 1e9 };
const TRINOMIAL = /^([0-9]{1,9}) ([0-9]{1,9}) ([0-9]{1,9})$/;
const PENTANOMIAL = /^([0-9]{1,9}) ([0-9]{1,9}) ([0-9]{1,9}) ([0-9]{1,9}) ([0-9]{1,9})$/;
const MAX_ERROR_CHARS = 1024;
// 128 parameters of up to 24 characters each, with room to spare
const MAX_DELTA_CHARS = 8192;

// The machine's latest workload: a report about any other is refused.
async function currentResult(c, hostId, { testId, resultId = null, lock = false }) {
  const { rows } = await c.query(
    `SELECT * FROM openbench.result WHERE host_id = $1 ORDER BY id DESC LIMIT 1${lock ? ' FOR UPDATE' : ''}`,
    [hostId]);
  const r = rows[0];
  if (!r || String(r.test_id) !== testId || (resultId !== null && String(r.id) !== resultId)) {
    throw new Refused(resultId === null
      ? `test ${testId} is not machine ${hostId}'s workload`
      : `result ${resultId} of test ${testId} is not machine ${hostId}'s workload`);
  }
  return r;
}

// A report's games, checked for being games at all: the trinomial counts
// single games, the pentanomial the same games as pairs (2 games, 0 to 4
// half points each), so both must add up alike.
function readGames(form) {
  const tri = TRINOMIAL.exec(form.text('trinomial', { max: 40 }));
  if (!tri) throw new BadRequest('trinomial must be three counts "L D W"');
  const penta = PENTANOMIAL.exec(form.text('pentanomial', { max: 60 }));
  if (!penta) throw new BadRequest('pentanomial must be five counts "LL LD DD DW WW"');
  const [losses, draws, wins] = tri.slice(1).map(Number);
  const [ll, ld, dd, dw, ww] = penta.slice(1).map(Number);
  const games = losses + draws + wins;
  if (games !== 2 * (ll + ld + dd + dw + ww)) {
    throw new BadRequest(`the trinomial counts ${games} games, the pentanomial ${2 * (ll + ld + dd + dw + ww)}`);
  }
  if (ld + 2 * dd + 3 * dw + 4 * ww !== 2 * wins + draws) {
    throw new BadRequest('the trinomial and the pentanomial give different scores');
  }
  const g = {
    games, losses, draws, wins, ll, ld, dd, dw, ww,
    crashes: form.int('crashes', COUNT),
    timelosses: form.int('timelosses', COUNT),
    illegals: form.int('illegals', COUNT),
  };
  for (const k of ['crashes', 'timelosses', 'illegals']) {
    if (g[k] > games) throw new BadRequest(`${k} (${g[k]}) exceeds the games reported (${games})`);
  }
  g.spsaDelta = form.text('spsa_delta', { max: MAX_DELTA_CHARS, optional: true }) ?? '';
  return g;
}

// The parameters' moves a report carries (null for a test that is not a
// tune), checked against the perturbation its workload was given.
function readDelta(t, r, g) {
  if (t.type !== 'SPSA') {
    if (g.spsaDelta !== '' && g.spsaDelta !== '[]') {
      throw new BadRequest(`test ${t.id} is not an SPSA tune: its reports carry no spsa_delta`);
    }
    return null;
  }
  let delta;
  try {
    delta = JSON.parse(g.spsaDelta);
  } catch {
    throw new BadRequest(`spsa_delta must be a JSON list of numbers, one per parameter, not ${JSON.stringify(g.spsaDelta.slice(0, 40))}`);
  }
  if (r.spsa === null) throw new Refused(`result ${r.id} of tune ${t.id} was given no perturbation`);
  const why = spsa.checkDelta(r.spsa, delta, g.wins, g.losses);
  if (why) throw new Refused(`result ${r.id} of tune ${t.id}: ${why}`);
  return delta;
}

// Does the test stop with these totals?  {llr, finishedBy, passed}.
// tuneGames: the games of a tune's iterations (2 x pairs per iteration x
// iterations), after which it stops, neither passed nor failed.
function verdict(t, tuneGames) {
  if (t.type === 'SPSA') {
    return { llr: 0, finishedBy: t.games >= tuneGames ? 'spsa' : null, passed: null };
  }
  if (t.type === 'GAMES') {
    const done = t.games >= Number(t.max_games);
    return { llr: 0, finishedBy: done ? 'games' : null, passed: done ? t.wins >= t.losses : null };
  }
  const llr = t.use_penta
    ? pentanomialLLR([t.ll, t.ld, t.dd, t.dw, t.ww], t.elo_lower, t.elo_upper)
    : trinomialLLR([t.losses, t.draws, t.wins], t.elo_lower, t.elo_upper);
  if (!Number.isFinite(llr)) return { llr: 0, finishedBy: null, passed: null };
  // strictly beyond a bound, as OpenBench decides
  if (llr > t.upper_llr) return { llr, finishedBy: 'sprt', passed: true };
  if (llr < t.lower_llr) return { llr, finishedBy: 'sprt', passed: false };
  return { llr, finishedBy: null, passed: null };
}

const FIELDS = ['games', 'losses', 'draws', 'wins', 'll', 'ld', 'dd', 'dw', 'ww', 'crashes', 'timelosses', 'illegals'];

function makeResults(db, { dataDir, limits, log }) {
  const pgnDir = path.join(dataDir, 'pgns');
  fs.mkdirSync(pgnDir, { recursive: true });

  // After a report: the machine goes on counting for its workload, or,
  // told to stop, stops counting.  One allot call, in its own transaction.
  async function keepOrRelease(hostId, stop) {
    await db.transaction(async (c) => {
      await c.query(stop ? 'SELECT allot.release_assignment($1)' : 'SELECT allot.heartbeat($1)', [hostId]);
    }, { lock: 'count' });
  }

  // The test stops: in the front end's row, then in allot.
  async function finish(c, t, finishedBy, passed) {
    await c.query(
      `UPDATE openbench.test SET finished_at = now(), finished_by = $2, passed = $3 WHERE id = $1`,
      [t.id, finishedBy, passed]);
    await c.query('SELECT openbench.finish_test($1)', [t.id]);
    log(`test ${t.id} finished by ${finishedBy}: ${passed === null ? 'ended' : passed ? 'passed' : 'failed'}, ${t.games} games, ` +
        `trinomial ${t.losses} ${t.draws} ${t.wins}, pentanomial ${t.ll} ${t.ld} ${t.dd} ${t.dw} ${t.ww}` +
        (t.type === 'SPRT' ? `, LLR ${t.llr.toFixed(3)} in [${t.lower_llr.toFixed(3)}, ${t.upper_llr.toFixed(3)}]` : ''));
  }

  async function isFinished(c, testId) {
    const { rows } = await c.query('SELECT finished_at IS NOT NULL AS finished FROM openbench.test WHERE id = $1', [testId]);
    return rows[0].finished;
  }

  // An error while building or playing: kept for the operator.  A bench
  // that does not match stops the test, as in OpenBench: the test was
  // most likely made with the wrong bench, and every machine would fail.
  async function submitError(form, machine, bench) {
    const testId = form.id('test_id');
    const message = form.text('error', { max: MAX_ERROR_CHARS });
    const logs = form.text('logs', { max: limits.maxLogChars, multiline: true, optional: true }) ?? '';
    await db.transaction(async (c) => {
      await currentResult(c, machine.hostId, { testId });
      await c.query(
        'INSERT INTO openbench.event (host_id, test_id, kind, message, logs) VALUES ($1, $2, $3, $4, $5)',
        [machine.hostId, testId, bench ? 'bench' : 'error', message, logs]);
      await c.query('UPDATE openbench.machine SET last_seen = now() WHERE host_id = $1', [machine.hostId]);
      if (!bench) return;
      const { rows: [t] } = await c.query('SELECT * FROM openbench.test WHERE id = $1 FOR UPDATE', [testId]);
      if (t.finished_at === null) await finish(c, t, 'bench', false);
    }, { lock: bench ? 'count' : null });
    if (bench) await keepOrRelease(machine.hostId, true);
    return { reply: {}, note: `machine ${machine.hostId}: test ${testId}: ${message.slice(0, 100)}` };
  }

  return {
    async clientHeartbeat(form, machine) {
      const testId = form.id('test_id');
      const stop = await db.transaction(async (c) => {
        const r = await currentResult(c, machine.hostId, { testId });
        await c.query('UPDATE openbench.machine SET last_seen = now() WHERE host_id = $1', [machine.hostId]);
        const finished = await isFinished(c, testId);
        if (finished) await c.query('UPDATE openbench.result SET stop_sent_at = coalesce(stop_sent_at, now()) WHERE id = $1', [r.id]);
        await c.query(finished ? 'SELECT allot.release_assignment($1)' : 'SELECT allot.heartbeat($1)', [machine.hostId]);
        return finished;
      }, { lock: 'count' });
      return { reply: stop ? { stop: true } : {}, note: `machine ${machine.hostId}: test ${testId}${stop ? ', stop' : ''}` };
    },

    async clientSubmitResults(form, machine) {
      const testId = form.id('test_id');
      const resultId = form.id('result_id');
      const g = readGames(form);
      const { stop, counted } = await db.transaction(async (c) => {
        const r = await currentResult(c, machine.hostId, { testId, resultId, lock: true });
        const capacity = 2 * r.runner_count * r.rounds_per_runner;
        if (Number(r.games) + g.games > capacity) {
          throw new Refused(`result ${resultId} holds at most ${capacity} games: ${r.games} were reported, ` +
                            `${g.games} more is too many`);
        }
        const { rows: [t] } = await c.query('SELECT * FROM openbench.test WHERE id = $1 FOR UPDATE', [testId]);
        const delta = readDelta(t, r, g);
        await c.query('UPDATE openbench.machine SET last_seen = now() WHERE host_id = $1', [machine.hostId]);
        const submit = (isCounted) => c.query(
          `INSERT INTO openbench.submission (result_id, counted, losses, draws, wins, ll, ld, dd, dw, ww,
                                             crashes, timelosses, illegals, spsa_delta)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
          [r.id, isCounted, g.losses, g.draws, g.wins, g.ll, g.ld, g.dd, g.dw, g.ww, g.crashes, g.timelosses, g.illegals, delta]);
        const stopSent = () => c.query('UPDATE openbench.result SET stop_sent_at = coalesce(stop_sent_at, now()) WHERE id = $1', [r.id]);

        // Games of a stopped test are not counted (OpenBench drops them).
        if (t.finished_at !== null) {
          await submit(false);
          await stopSent();
          return { stop: true, counted: false };
        }
        const sets = FIELDS.map((f, i) => `${f} = ${f} + $${i + 2}`).join(', ');
        const values = FIELDS.map((f) => g[f]);
        await c.query(`UPDATE openbench.result SET ${sets} WHERE id = $1`, [r.id, ...values]);
        const totals = { ...t };
        for (const f of FIELDS) totals[f] = Number(t[f]) + g[f];
        let tuneGames = null;
        if (delta !== null) {
          await c.query(
            `UPDATE openbench.spsa_parameter p SET value = least(p.max_value, greatest(p.min_value, p.value + d.delta))
               FROM unnest($2::double precision[]) WITH ORDINALITY AS d(delta, n)
              WHERE p.test_id = $1 AND p.index = d.n - 1`, [t.id, delta]);
          const { rows: [run] } = await c.query(
            'SELECT 2 * iterations * pairs_per AS games FROM openbench.spsa_run WHERE test_id = $1', [t.id]);
          tuneGames = Number(run.games);
        }
        const v = verdict(totals, tuneGames);
        totals.llr = v.llr;
        await c.query(`UPDATE openbench.test SET ${sets}, llr = $${FIELDS.length + 2} WHERE id = $1`,
          [t.id, ...values, v.llr]);
        await submit(true);
        if (v.finishedBy) {
          await finish(c, totals, v.finishedBy, v.passed);
          await stopSent();
        }
        return { stop: v.finishedBy !== null, counted: true };
      }, { lock: 'count' });
      await keepOrRelease(machine.hostId, stop);
      return {
        reply: stop ? { stop: true } : {},
        note: `machine ${machine.hostId}: test ${testId} result ${resultId}: ${g.games} games` +
              `${counted ? '' : ' not counted (the test had stopped)'}${stop ? ', stop' : ''}`,
      };
    },

    async clientSubmitNPS(form, machine) {
      const speed = { min: 0, max: 1e12 };
      const nps = [form.int('nps', speed), form.int('dev_nps', speed), form.int('base_nps', speed)];
      await db.transaction(async (c) => {
        await c.query('UPDATE openbench.machine SET nps = $2, dev_nps = $3, base_nps = $4, last_seen = now() WHERE host_id = $1',
          [machine.hostId, ...nps]);
        await c.query('SELECT allot.heartbeat($1)', [machine.hostId]);
      }, { lock: 'count' });
      return { reply: {}, note: `machine ${machine.hostId}: ${nps[0]} nps` };
    },

    clientSubmitError: (form, machine) => submitError(form, machine, false),
    clientBenchError: (form, machine) => submitError(form, machine, true),

    // The games of a workload, bzip2-compressed, once per workload.
    async clientSubmitPGN(form, machine) {
      const testId = form.id('test_id');
      const resultId = form.id('result_id');
      const bookIndex = form.id('book_index');
      const file = form.file('file', { max: limits.maxPgnBytes });
      if (file.data.length < 4 || file.data.subarray(0, 3).toString('latin1') !== 'BZh') {
        throw new BadRequest('the PGN must be bzip2-compressed');
      }
      const name = `${testId}.${resultId}.${bookIndex}.pgn.bz2`;
      const target = path.join(pgnDir, name);
      let wrote = false;
      await db.transaction(async (c) => {
        const r = await currentResult(c, machine.hostId, { testId, resultId });
        if (String(r.book_index) !== bookIndex) {
          throw new Refused(`result ${resultId} started at book index ${r.book_index}, not ${bookIndex}`);
        }
        const { rowCount } = await c.query(
          `INSERT INTO openbench.pgn (result_id, test_id, book_index, file_name, bytes) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (result_id) DO NOTHING`, [resultId, testId, bookIndex, name, file.data.length]);
        if (rowCount === 0) throw new Refused(`the PGN of result ${resultId} was already received`);
        await c.query('UPDATE openbench.machine SET last_seen = now() WHERE host_id = $1', [machine.hostId]);
        // written before the commit; 'wx' never replaces a file
        await fs.promises.writeFile(target, file.data, { flag: 'wx', mode: 0o644 });
        wrote = true;
      }).catch(async (err) => {
        // a commit that failed after the file was written leaves no file
        if (wrote) await fs.promises.rm(target, { force: true }).catch(() => {});
        throw err;
      });
      return { reply: {}, note: `machine ${machine.hostId}: ${name}, ${file.data.length} bytes` };
    },
  };
}

module.exports = { makeResults };
