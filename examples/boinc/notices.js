'use strict';
// Notices, as the BOINC client reads them: every scheduler reply names the
// account's feed in <rss_feeds>, and the client fetches it (RSS 2.0) every
// POLL_SECS, showing each <item> of the last 30 days in its Notices
// (client/cs_notice.cpp; boinccmd --get_notices); NOTICE_POLL_SECS sets
// how often (an hour by default).  The feed holds the
// project's news (posted by the operator, `node admin.js notice`) and the
// account's own notices (its password reset or changed, its email address
// changed).
//
//   GET /notices.php?userid=N&auth=TOKEN
//
// TOKEN is an HMAC of the account id under a secret of the front end's
// (DATA_DIR/keys/notices.key, made at the first start): only the account's
// clients are told it, it reads nothing but the account's notices, and a
// copy of the database alone does not give it.  A wrong one gets BOINC's
// <error>, and no notice.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const xml = require('./xml');

const POLL_SECS = 3600;
const WINDOW_DAYS = 30;
const MAX_ITEMS = 50;
const ID = /^[1-9][0-9]{0,17}$/;
const TOKEN = /^[0-9a-f]{32}$/;

// The secret the feed tokens are made with; made once, readable by its
// owner only.
function loadSecret(dataDir) {
  const file = path.join(dataDir, 'keys', 'notices.key');
  try {
    fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
  }
  const secret = fs.readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(secret)) throw new Error(`${file} does not hold a secret of 64 hex digits`);
  return Buffer.from(secret, 'hex');
}

// RFC 822 dates, as RSS has them and the client reads them (in GMT).
const rssDate = (secs) => new Date(Number(secs) * 1000).toUTCString();

// Post a notice: the project's news (accountId null) or an account's own;
// in the caller's transaction c (or the pool).
async function post(c, accountId, title, body) {
  const { rows } = await c.query('INSERT INTO boinc.notice (account_id, title, body) VALUES ($1, $2, $3) RETURNING id',
    [accountId, title, body]);
  return rows[0].id;
}

function makeNotices(db, config) {
  const secret = loadSecret(config.dataDir);
  const token = (accountId) => crypto.createHmac('sha256', secret).update(`notices ${accountId}`).digest('hex').slice(0, 32);
  const feedBase = new URL('notices.php', config.baseUrl).href;

  return {
    // The account's feed, for the scheduler reply's <rss_feeds>.
    feedUrl: (accountId) => `${feedBase}?userid=${accountId}&auth=${token(accountId)}`,
    pollSecs: Math.max(1, config.noticePollSecs ?? POLL_SECS),

    // GET /notices.php: the feed, or BOINC's <error> (-155, its number for
    // a bad authenticator; -136 for a bad request).
    async feed(params) {
      const userid = params.getAll('userid');
      const auth = params.getAll('auth');
      const error = (num, msg) => `<?xml version="1.0" encoding="UTF-8" ?>\n<error>\n<error_num>${num}</error_num>\n<error_msg>${xml.escape(msg)}</error_msg>\n</error>\n`;
      if (userid.length !== 1 || auth.length !== 1 || !ID.test(userid[0]) || !TOKEN.test(auth[0])) {
        return error(-136, 'userid and auth are needed, once each');
      }
      const want = Buffer.from(token(userid[0]), 'hex');
      if (!crypto.timingSafeEqual(want, Buffer.from(auth[0], 'hex'))) return error(-155, 'Invalid authenticator');
      const { rows } = await db.query(
        `SELECT id, account_id, title, body, extract(epoch FROM created_at)::bigint AS created
           FROM boinc.notice
          WHERE (account_id IS NULL OR account_id = $1) AND created_at > now() - make_interval(days => $2)
          ORDER BY created_at DESC, id DESC LIMIT $3`, [userid[0], WINDOW_DAYS, MAX_ITEMS]);
      const now = rssDate(Date.now() / 1000);
      const items = rows.map((n) => `<item>
<title>${xml.escape(n.title)}</title>
<link>${xml.escape(config.baseUrl)}</link>
<guid>${xml.escape(`${config.baseUrl}notice/${n.id}`)}</guid>
<description>${xml.escape(n.body)}</description>
<pubDate>${rssDate(n.created)}</pubDate>
</item>`).join('\n');
      return `<?xml version="1.0" encoding="UTF-8" ?>
<rss version="2.0">
<channel>
<title>${xml.escape(config.projectName)} notices</title>
<link>${xml.escape(config.baseUrl)}</link>
<description>Notices</description>
<lastBuildDate>${now}</lastBuildDate>
${items}
</channel>
</rss>
`;
    },
  };
}

module.exports = { makeNotices, post, POLL_SECS };
