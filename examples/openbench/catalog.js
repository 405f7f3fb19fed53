'use strict';
// Reading tests for the site and the API: one test with allot's side of it
// (name, priority, throughput, state, the hosts on it) and its author, and
// lists of them.  A test is, in OpenBench's words:
//   pending    made, not yet approved (its allot workload is paused)
//   active     approved and not finished
//   finished   stopped by its rule (SPRT, games, iterations), a wrong
//              bench, or a person; passed, failed, or neither
//   deleted    hidden from the lists until restored (finished in allot)

const SELECT = `
SELECT t.*, w.name, w.priority, w.throughput, w.state, w.mode, w.hosts, a.name AS author
  FROM openbench.test t
  JOIN openbench.test_workload w ON w.id = t.id
  LEFT JOIN openbench.account a ON a.id = t.author_id`;

const PAGE_SIZE = 25;

// OpenBench's words for a test's state, and the colour of its row.
function status(t) {
  if (t.deleted) return { word: 'deleted', colour: '' };
  if (t.finished_at === null) return t.approved ? { word: 'active', colour: '' } : { word: 'pending', colour: '' };
  if (t.passed === true) {
    const blue = t.type === 'SPRT' && t.elo_lower + t.elo_upper < 0;
    return { word: 'passed', colour: blue ? 'blue' : 'green' };
  }
  if (t.passed === false) return { word: 'failed', colour: Number(t.wins) >= Number(t.losses) ? 'yellow' : 'red' };
  return { word: 'stopped', colour: '' };
}

// OpenBench's URL kind: tune for SPSA, test otherwise.
const kind = (t) => (t.type === 'SPSA' ? 'tune' : 'test');

function makeCatalog(db) {
  async function one(id) {
    const { rows } = await db.query(`${SELECT} WHERE t.id = $1`, [id]);
    return rows[0] ?? null;
  }

  // The tests matching `where` (SQL on t and a, with params), newest
  // first; page counts from 1.  Returns {rows, pages}.
  async function list(where, params, page = 1, size = PAGE_SIZE) {
    const { rows: [{ n }] } = await db.query(
      `SELECT count(*) AS n FROM openbench.test t LEFT JOIN openbench.account a ON a.id = t.author_id WHERE ${where}`, params);
    const pages = Math.max(1, Math.ceil(Number(n) / size));
    const { rows } = await db.query(
      `${SELECT} WHERE ${where} ORDER BY t.id DESC LIMIT ${size} OFFSET $${params.length + 1}`,
      [...params, (page - 1) * size]);
    return { rows, pages };
  }

  // An SPSA tune's settings and parameters (null for a test).
  async function spsa(testId) {
    const { rows: runs } = await db.query('SELECT * FROM openbench.spsa_run WHERE test_id = $1', [testId]);
    if (runs.length === 0) return null;
    const { rows: params } = await db.query(
      'SELECT * FROM openbench.spsa_parameter WHERE test_id = $1 ORDER BY index', [testId]);
    return { run: runs[0], params };
  }

  return { one, list, spsa };
}

module.exports = { makeCatalog, status, kind, PAGE_SIZE };
