'use strict';
// HTML, written as JavaScript template literals: html`<p>${value}</p>`
// escapes every value it is given (text from the database, a form or a
// URL is never markup), unless the value is itself html`...` or an array
// of them.  No template engine, no build step.
//
// layout() is the frame of every page of the site: the menu, the
// message of the last action, and the page's own part.  Pages run no
// script: the Content-Security-Policy allows the page's one stylesheet
// (by its nonce) and inline SVG drawn by the server, nothing else.

class Html {
  constructor(text) {
    this.text = text;
  }

  toString() {
    return this.text;
  }
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (s) => String(s).replace(/[&<>"']/g, (c) => ESCAPES[c]);

function piece(v) {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(piece).join('');
  return escape(v);
}

function html(strings, ...values) {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1];
  return new Html(out);
}

// Markup made here from trusted parts (the chart's SVG numbers).
const raw = (text) => new Html(text);

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2430; background: #f6f7f9; }
nav { background: #22303f; padding: 6px 16px; display: flex; gap: 14px; align-items: center; flex-wrap: wrap; }
nav a, nav button { color: #e8edf3; text-decoration: none; font: inherit; }
nav button { background: none; border: 0; cursor: pointer; padding: 0; }
nav .me { margin-left: auto; display: flex; gap: 14px; align-items: center; }
nav form { margin: 0; }
main { padding: 12px 16px; max-width: 1200px; }
h1 { font-size: 20px; margin: 8px 0 12px; }
h2 { font-size: 16px; margin: 18px 0 8px; }
table { border-collapse: collapse; background: #fff; margin-bottom: 12px; }
th, td { border: 1px solid #d5dae1; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eef1f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { margin: 0; font: 12px/1.35 ui-monospace, monospace; white-space: pre-wrap; }
.stat { background: #fff; border: 1px solid #d5dae1; padding: 8px 10px; display: inline-block; }
.green { background: #d9f2d9; } .yellow { background: #fbf3c8; } .red { background: #f7d4d4; } .blue { background: #d6e6fa; }
.flash { padding: 6px 10px; margin: 8px 0; border: 1px solid; }
.ok { background: #e5f5e5; border-color: #8cc78c; } .error { background: #fbe3e3; border-color: #d88; }
.note { color: #5b6676; }
form.inline { display: inline; margin: 0 4px 0 0; }
label { display: block; margin: 6px 0 2px; font-weight: 600; }
input[type=text], input[type=password], input[type=email], input[type=number], select, textarea {
  font: inherit; padding: 3px 5px; width: 100%; max-width: 420px; box-sizing: border-box; }
textarea { max-width: 720px; min-height: 90px; font-family: ui-monospace, monospace; }
fieldset { border: 1px solid #d5dae1; margin: 10px 0; background: #fff; max-width: 760px; }
.columns { display: flex; gap: 16px; flex-wrap: wrap; }
.columns fieldset { flex: 1 1 320px; }
button, input[type=submit] { font: inherit; padding: 4px 12px; margin-top: 8px; }
.paging a, .paging span { margin-right: 8px; }
svg { background: #fff; border: 1px solid #d5dae1; }
`;

// Logged in: new test, the account's name, log out; otherwise log in.
function menu(ctx) {
  const me = ctx.session?.account;
  if (!me) return html`<span class="me"><a href="/login/">Log in</a><a href="/register/">Register</a></span>`;
  return html`<span class="me"><a href="/test/new/">New test</a><a href="/tune/new/">New tune</a><a href="/user/${me.name}/" id="me">${me.name}</a><a href="/profile/" id="profile">Profile</a>
<form method="post" action="/logout/"><input type="hidden" name="csrf" value="${ctx.session.csrf}"><button type="submit">Log out</button></form></span>`;
}

// The page around `body`.  ctx: the request's {session, nonce}; options: refresh
// (seconds: the browser reloads the page), message {kind, text}.  The menu
// names only the pages the site serves (pages.js).
function layout(ctx, title, body, { refresh = null, message = null } = {}) {
  const flash = message ? html`<div class="flash ${message.kind === 'error' ? 'error' : 'ok'}" id="message">${message.text}</div>` : '';
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${refresh ? html`<meta http-equiv="refresh" content="${refresh}">` : ''}
<title>${title} - OpenBench on allot</title>
<style nonce="${ctx.nonce}">${raw(STYLE)}</style></head>
<body><nav><a href="/index/"><b>OpenBench on allot</b></a><a href="/index/">Tests</a><a href="/greens/">Greens</a><a href="/search/">Search</a><a href="/users/">Users</a>
<a href="/machines/">Machines</a><a href="/events/">Events</a><a href="/errors/">Errors</a>${menu(ctx)}</nav>
<main>${flash}<h1>${title}</h1>
${body}
</main></body></html>
`;
}

// Links to the pages of a list: base is the path before the page number.
function paging(base, page, pages) {
  if (pages <= 1) return '';
  const link = (n, text) => (n === page ? html`<span>${text}</span>` : html`<a href="${base}${n}/">${text}</a>`);
  const parts = [];
  if (page > 1) parts.push(link(page - 1, 'previous'));
  for (let n = Math.max(1, page - 4); n <= Math.min(pages, page + 4); n++) parts.push(link(n, String(n)));
  if (page < pages) parts.push(link(page + 1, 'next'));
  return html`<p class="paging">${parts}</p>`;
}

const when = (d) => (d ? new Date(d).toISOString().replace('T', ' ').replace(/\.[0-9]+Z$/, ' UTC') : '');

module.exports = { html, raw, escape, layout, paging, when, Html };
