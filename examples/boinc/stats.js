'use strict';
// The statistics exports BOINC's statistics sites download, as BOINC's
// db_dump writes them (sched/db_dump.cpp), under /stats/:
//
//   user.gz     <users><user> id, name, create_time, total_credit,
//               expavg_credit, expavg_time, cpid (md5 of the account's
//               cross-project id and email address, as BOINC makes it)
//   host.gz     <hosts><host> id, credit, OS, and the detail BOINC gives
//               (create and last contact time, CPUs, FLOPS); never the
//               owner, the host's name or its host_cpid
//   team.gz     <teams>: none (the front end has no teams)
//   tables.xml  <tables> update_time, totals, applications
//
// Made into DATA_DIR/stats/ on the first request, and again on a request
// once they are older than maxAgeSecs: meanwhile the old ones are served.
// Accounts and hosts are read a thousand at a time, and the gzip stream is
// written with back-pressure, so a large project costs time, not memory.

const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');
const zlib = require('node:zlib');
const { finished } = require('node:stream/promises');
const crypto = require('node:crypto');
const xml = require('./xml');
const credit = require('./credit');

const FILES = { 'user.gz': 'application/gzip', 'host.gz': 'application/gzip', 'team.gz': 'application/gzip', 'tables.xml': 'text/xml' };
const BATCH = 1000;

// db_dump prints numbers with %f.
const f = (x) => Number(x ?? 0).toFixed(6);
const line = (name, value) => ` <${name}>${xml.escape(value)}</${name}>\n`;

// Write file (gzipped when gzip) as <root>...</root>: fill(write) writes
// the inside; the file appears whole or not at all.
async function writeXml(file, root, gzip, fill) {
  const tmp = `${file}.${process.pid}.tmp`;
  const out = fs.createWriteStream(tmp, { mode: 0o644 });
  const sink = gzip ? zlib.createGzip() : out;
  if (gzip) sink.pipe(out);
  const write = async (text) => {
    if (!sink.write(text)) await new Promise((resolve) => sink.once('drain', resolve));
  };
  try {
    await write(`<?xml version="1.0" encoding="utf-8"?>\n<${root}>\n`);
    await fill(write);
    await write(`</${root}>\n`);
    sink.end();
    await finished(out);
    await fsp.rename(tmp, file);
  } catch (err) {
    sink.destroy();
    out.destroy();
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}

// Rows of table in id order, BATCH at a time: batches(sql) yields arrays;
// sql takes the last id as $1 and must ORDER BY and LIMIT.
async function* batches(db, sql, idColumn) {
  let last = 0;
  for (;;) {
    const { rows } = await db.query(sql, [last]);
    if (rows.length === 0) return;
    yield rows;
    last = rows[rows.length - 1][idColumn];
  }
}

function makeStats(db, config) {
  const dir = path.join(config.dataDir, 'stats');
  let making = null;   // the export under way, if one is

  async function make() {
    await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
    const now = Date.now() / 1000;
    const totals = { users: 0, hosts: 0, credit: 0 };
    await writeXml(path.join(dir, 'user.gz'), 'users', true, async (write) => {
      for await (const users of batches(db,
        `SELECT a.id, a.name, extract(epoch FROM a.created_at)::bigint AS created, a.cross_project_id, a.email_addr,
                ARRAY(SELECT h.host_id FROM boinc.host h WHERE h.account_id = a.id ORDER BY h.host_id) AS hosts
           FROM boinc.account a WHERE a.id > $1 ORDER BY a.id LIMIT ${BATCH}`, 'id')) {
        const granted = await credit.hostCredit(db, users.flatMap((u) => u.hosts));
        for (const u of users) {
          const c = credit.sum(granted, u.hosts);
          const cpid = crypto.createHash('md5').update(u.cross_project_id + (u.email_addr ?? '')).digest('hex');
          totals.users += 1;
          totals.credit += c.total;
          await write(`<user>\n${line('id', u.id)}${line('name', u.name)}${line('create_time', u.created)}` +
            `${line('total_credit', f(c.total))}${line('expavg_credit', f(c.expavg))}${line('expavg_time', f(now))}` +
            `${line('cpid', cpid)}</user>\n`);
        }
      }
    });
    await writeXml(path.join(dir, 'host.gz'), 'hosts', true, async (write) => {
      for await (const hosts of batches(db,
        `SELECT host_id, extract(epoch FROM created_at)::bigint AS created, extract(epoch FROM last_rpc_at)::bigint AS rpc_time,
                os_name, os_version, p_ncpus, p_fpops
           FROM boinc.host WHERE host_id > $1 ORDER BY host_id LIMIT ${BATCH}`, 'host_id')) {
        const granted = await credit.hostCredit(db, hosts.map((h) => h.host_id));
        for (const h of hosts) {
          const c = credit.sum(granted, [h.host_id]);
          totals.hosts += 1;
          await write(`<host>\n${line('id', h.host_id)}${line('total_credit', f(c.total))}` +
            `${line('expavg_credit', f(c.expavg))}${line('expavg_time', f(now))}${line('p_vendor', '')}${line('p_model', '')}` +
            `${line('os_name', h.os_name ?? '')}${line('os_version', h.os_version ?? '')}` +
            `${line('create_time', h.created)}${line('rpc_time', h.rpc_time ?? 0)}${line('ncpus', h.p_ncpus ?? 0)}` +
            `${line('p_fpops', f(h.p_fpops))}</host>\n`);
        }
      }
    });
    await writeXml(path.join(dir, 'team.gz'), 'teams', true, async () => {});
    const { rows: apps } = await db.query('SELECT DISTINCT app_name FROM boinc.app_version ORDER BY app_name');
    await writeXml(path.join(dir, 'tables.xml'), 'tables', false, async (write) => {
      await write(`${line('update_time', Math.floor(now))}${line('nusers_total', totals.users)}` +
        `${line('nteams_total', 0)}${line('nhosts_total', totals.hosts)}${line('total_credit', f(totals.credit))}` +
        ` <applications>\n${apps.map((a) => `  <application>\n  ${line('name', a.app_name)}  </application>\n`).join('')}` +
        ' </applications>\n');
    });
  }

  // The exports' age in seconds, or null when there are none.
  async function age() {
    try {
      return Date.now() / 1000 - (await fsp.stat(path.join(dir, 'tables.xml'))).mtimeMs / 1000;
    } catch (err) {
      if (err.code === 'ENOENT') return null;
      throw err;
    }
  }

  function refresh() {
    making ??= make().finally(() => { making = null; });
    return making;
  }

  return {
    // GET /stats/NAME: the file, made first if there is none.
    async serve(req, res, name) {
      if (!Object.hasOwn(FILES, name)) return false;
      const old = await age();
      if (old === null) await refresh();
      else if (old > config.maxAgeSecs) refresh().catch((err) => config.log(`stats: export failed: ${err.message}`));
      const handle = await fsp.open(path.join(dir, name), 'r');
      try {
        const { size } = await handle.stat();
        res.writeHead(200, { 'Content-Type': FILES[name], 'Content-Length': size, 'Cache-Control': 'no-cache' });
        if (req.method === 'HEAD') res.end();
        else await finished(handle.createReadStream({ autoClose: false }).pipe(res));
      } finally {
        await handle.close();
      }
      return true;
    },
  };
}

module.exports = { makeStats };
