'use strict';
// Pages for people and for the tools that read them, by BOINC's names:
//
//   GET /server_status.php[?xml=1]          the project's counts (HTML, or BOINC's XML)
//   GET /show_user.php?userid=N[&format=xml] an account: name, since when, credit
//   GET /show_host_detail.php?hostid=N       a host: its platform, CPUs, speed, credit
//
// Only what BOINC shows anyone: never an email address, a host's name or
// host_cpid, or which account a host belongs to.  The counts are the front
// end's own (its login may read nothing of allot's tables): how many jobs
// wait to be sent is on the farm's status page, /status.  Every value is
// escaped; the pages load nothing and run nothing.

const crypto = require('node:crypto');
const xml = require('./xml');
const credit = require('./credit');

const ID = /^[1-9][0-9]{0,17}$/;
const STATUS_CACHE_MS = 60000;

class PageError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const e = xml.escape;
const date = (secs) => (secs === null ? 'never' : new Date(Number(secs) * 1000).toISOString().replace(/\.000Z$/, 'Z'));

function html(projectName, title, body) {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${e(title)} - ${e(projectName)}</title></head>
<body>
<h1>${e(title)}</h1>
${body}
<p><a href="./">${e(projectName)}</a></p>
</body></html>
`;
}

const table = (rows) => `<table>\n${rows.map(([k, v]) => `<tr><th>${e(k)}</th><td>${e(v)}</td></tr>`).join('\n')}\n</table>`;

function id(params, name) {
  const value = params.get(name) ?? '';
  if (!ID.test(value)) throw new PageError(400, `${name} must be a positive integer`);
  return value;
}

function makePages(db, config) {
  let status = null;   // {at, counts}

  async function counts() {
    if (status !== null && Date.now() - status.at < STATUS_CACHE_MS) return status.counts;
    const { rows: [c] } = await db.query(`SELECT
        (SELECT count(*) FROM boinc.account) AS users,
        (SELECT count(*) FROM boinc.account WHERE created_at > now() - interval '1 day') AS users_new,
        (SELECT count(*) FROM boinc.host) AS hosts,
        (SELECT count(*) FROM boinc.host WHERE created_at > now() - interval '1 day') AS hosts_new,
        (SELECT count(*) FROM boinc.host WHERE last_rpc_at > now() - interval '1 day') AS hosts_active,
        (SELECT count(*) FROM boinc.result WHERE outcome IS NULL) AS in_progress`);
    const { rows: apps } = await db.query(
      `SELECT v.app_name AS name, count(r.name) AS in_progress
         FROM boinc.app_version v
         LEFT JOIN boinc.result r ON r.app_version_id = v.app_version_id AND r.outcome IS NULL
        GROUP BY v.app_name ORDER BY v.app_name`);
    status = { at: Date.now(), counts: { ...c, apps } };
    return status.counts;
  }

  return {
    async serverStatus(params) {
      const c = await counts();
      if (params.get('xml') === '1') {
        const w = new xml.Writer('server_status');
        w.open('daemon_status').open('daemon').el('host', new URL(config.baseUrl).hostname)
          .el('command', 'scheduler (examples/boinc)').el('status', 'running').close('daemon').close('daemon_status');
        w.open('database_file_states')
          .el('results_in_progress', c.in_progress)
          .el('users_total', c.users).el('users_registered_in_past_24_hours', c.users_new)
          .el('hosts_total', c.hosts).el('hosts_registered_in_past_24_hours', c.hosts_new)
          .el('hosts_active_in_past_24_hours', c.hosts_active)
          .close('database_file_states');
        w.open('tasks_by_app');
        for (const a of c.apps) w.open('app').el('name', a.name).el('in_progress', a.in_progress).close('app');
        w.close('tasks_by_app');
        return { type: 'text/xml', body: `<?xml version="1.0" encoding="UTF-8" ?>\n${w}` };
      }
      const apps = c.apps.map((a) => [`tasks of ${a.name} in progress`, a.in_progress]);
      return {
        type: 'text/html; charset=utf-8',
        body: html(config.projectName, 'Server status', table([
          ['scheduler', 'running'], ['tasks in progress', c.in_progress], ...apps,
          ['users', c.users], ['users registered in the past 24 hours', c.users_new],
          ['computers', c.hosts], ['computers registered in the past 24 hours', c.hosts_new],
          ['computers active in the past 24 hours', c.hosts_active],
        ]) + '\n<p>Jobs waiting to be sent: see <a href="status">the farm\'s status page</a>.</p>'),
      };
    },

    async showUser(params) {
      const userId = id(params, 'userid');
      const { rows: [u] } = await db.query(
        `SELECT a.id, a.name, extract(epoch FROM a.created_at)::bigint AS created, a.cross_project_id, a.email_addr,
                ARRAY(SELECT h.host_id FROM boinc.host h WHERE h.account_id = a.id ORDER BY h.host_id) AS hosts
           FROM boinc.account a WHERE a.id = $1`, [userId]);
      if (!u) throw new PageError(404, `no user ${userId}`);
      const total = credit.sum(await credit.hostCredit(db, u.hosts), u.hosts);
      if (params.get('format') === 'xml') {
        const w = new xml.Writer('user');
        w.el('id', u.id).el('cpid', crypto.createHash('md5').update(u.cross_project_id + (u.email_addr ?? '')).digest('hex'))
          .el('create_time', u.created).el('name', u.name)
          .num('total_credit', total.total).num('expavg_credit', total.expavg)
          .el('expavg_time', Math.floor(Date.now() / 1000)).el('teamid', 0).el('has_profile', 0);
        return { type: 'text/xml', body: `<?xml version="1.0" encoding="UTF-8" ?>\n${w}` };
      }
      return {
        type: 'text/html; charset=utf-8',
        body: html(config.projectName, `User ${u.name}`, table([
          ['id', u.id], ['name', u.name], ['member since', date(u.created)],
          ['total credit', total.total.toFixed(2)], ['recent average credit', total.expavg.toFixed(2)],
          ['computers', u.hosts.length],
        ])),
      };
    },

    async showHost(params) {
      const hostId = id(params, 'hostid');
      const { rows: [h] } = await db.query(
        `SELECT host_id, extract(epoch FROM created_at)::bigint AS created, extract(epoch FROM last_rpc_at)::bigint AS last_rpc,
                os_name, os_version, platform, p_ncpus, p_fpops
           FROM boinc.host WHERE host_id = $1`, [hostId]);
      if (!h) throw new PageError(404, `no computer ${hostId}`);
      const c = credit.sum(await credit.hostCredit(db, [h.host_id]), [h.host_id]);
      return {
        type: 'text/html; charset=utf-8',
        body: html(config.projectName, `Computer ${h.host_id}`, table([
          ['id', h.host_id], ['created', date(h.created)], ['last contact', date(h.last_rpc)],
          ['operating system', `${h.os_name ?? ''} ${h.os_version ?? ''}`.trim()], ['platform', h.platform ?? ''],
          ['CPUs', h.p_ncpus ?? ''], ['floating point speed', h.p_fpops === null ? 'unknown' : `${(h.p_fpops / 1e9).toFixed(2)} GFLOPS`],
          ['total credit', c.total.toFixed(2)], ['recent average credit', c.expavg.toFixed(2)],
        ])),
      };
    },
  };
}

module.exports = { makePages, PageError, html };
