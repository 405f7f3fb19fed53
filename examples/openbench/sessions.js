'use strict';
// Who a browser is, and that a form it posts was made by this site.
//
// A login is a session: a cookie (ob_session) holding 32 random bytes,
// HttpOnly (no script reads it) and SameSite=Lax (no other site's form
// sends it), Secure when COOKIE_SECURE is on; the database keeps only its
// sha256, the account and the session's CSRF token (openbench.session).
// A session idle for SESSION_IDLE_DAYS ends; logging in makes a new one
// (never one a stranger planted), logging out deletes it.
//
// Every form the site serves carries a CSRF token, and every POST to the
// site must return it: the session's token, or, before login (the login
// and registration forms), an HMAC under the server's key of a random
// cookie of the browser's own (ob_visitor).  Another site can make a
// browser post, but cannot read the token from this site's pages.

const crypto = require('node:crypto');

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const SEEN_EVERY_MS = 60000;   // seen_at is written at most this often

// A POST without the form's token: answered 403, nothing done.
class CsrfError extends Error {}

const newToken = () => crypto.randomBytes(32).toString('base64url');
const digest = (token) => crypto.createHash('sha256').update(token).digest();

function parseCookies(header) {
  const out = new Map();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

const sameText = (a, b) => {
  const x = Buffer.from(String(a));
  const y = Buffer.from(String(b));
  return x.length === y.length && crypto.timingSafeEqual(x, y);
};

function makeSessions(db, { idleDays, secureCookies, key = crypto.randomBytes(32) }) {
  const flags = `Path=/; HttpOnly; SameSite=Lax${secureCookies ? '; Secure' : ''}`;
  const cookie = (name, value, maxAge) => `${name}=${value}; ${flags}; Max-Age=${maxAge}`;
  const visitorCsrf = (visitor) => crypto.createHmac('sha256', key).update(`visitor\0${visitor}`).digest('base64url');

  return {
    // The browser's session: {account, csrf, cookies} (account null when
    // not logged in; cookies: Set-Cookie values the reply must carry).
    async load(req) {
      const cookies = parseCookies(req.headers.cookie);
      const out = { account: null, csrf: null, cookies: [], token: null };
      const token = cookies.get('ob_session');
      if (token && TOKEN.test(token)) {
        const { rows } = await db.query(
          `SELECT s.csrf, s.seen_at, a.id, a.name, a.enabled, a.approver, a.operator, a.email
             FROM openbench.session s JOIN openbench.account a ON a.id = s.account_id
            WHERE s.token_hash = $1 AND s.seen_at > now() - make_interval(days => $2)`, [digest(token), idleDays]);
        if (rows.length === 1) {
          const r = rows[0];
          out.account = {
            id: r.id, name: r.name, enabled: r.enabled, email: r.email,
            approver: r.approver || r.operator, operator: r.operator,
          };
          out.csrf = r.csrf;
          out.token = token;
          if (Date.now() - r.seen_at.getTime() > SEEN_EVERY_MS) {
            await db.query('UPDATE openbench.session SET seen_at = now() WHERE token_hash = $1', [digest(token)]);
          }
        } else {
          out.cookies.push(cookie('ob_session', '', 0));   // a stale or unknown session: forgotten
        }
      }
      if (out.account === null) {
        let visitor = cookies.get('ob_visitor');
        if (!visitor || !TOKEN.test(visitor)) {
          visitor = newToken();
          out.cookies.push(cookie('ob_visitor', visitor, 30 * 86400));
        }
        out.csrf = visitorCsrf(visitor);
      }
      return out;
    },

    // The form's token must be the session's (or the visitor's).
    check(session, form) {
      const given = form.fields.get('csrf');
      if (!given || given.length !== 1 || !sameText(given[0], session.csrf)) {
        throw new CsrfError('this form has no valid security token (CSRF): reload the page and send it again');
      }
    },

    // A new session for the account; returns its Set-Cookie value.  The
    // account's sessions idle too long are removed on the way.
    async login(accountId) {
      const token = newToken();
      await db.query('DELETE FROM openbench.session WHERE account_id = $1 AND seen_at <= now() - make_interval(days => $2)',
        [accountId, idleDays]);
      await db.query('INSERT INTO openbench.session (token_hash, account_id, csrf) VALUES ($1, $2, $3)',
        [digest(token), accountId, newToken()]);
      return cookie('ob_session', token, idleDays * 86400);
    },

    // Ends the session (and, with everywhere, every session of its
    // account: after a password change).  Returns the Set-Cookie value.
    async logout(session, { everywhere = false, keep = null } = {}) {
      if (everywhere && session.account) {
        await db.query('DELETE FROM openbench.session WHERE account_id = $1 AND token_hash IS DISTINCT FROM $2',
          [session.account.id, keep ? digest(keep) : null]);
      } else if (session.token) {
        await db.query('DELETE FROM openbench.session WHERE token_hash = $1', [digest(session.token)]);
      }
      return cookie('ob_session', '', 0);
    },
  };
}

module.exports = { makeSessions, CsrfError, parseCookies };
