'use strict';
// The status page's query string, checked before anything reads the
// database.  Whoever opens the page writes it, so it is hostile until
// checked: each parameter is known, given once, and of its form, or the
// request is refused with 400 and a sentence that says which and why.
//
//   part=main   only the part of the page that refreshes (its script asks)
//   page=N      list every host by id, STATUS_HOSTS (or limit) to a page;
//               N from 1 to MAX_PAGE
//   q=TEXT      only the hosts whose name holds TEXT (any case), or whose id
//               is TEXT; letters, digits, spaces and . _ - : @ + / # ( ) ,
//               up to MAX_SEARCH characters; empty is no search
//   limit=N     hosts to a page, 1 to MAX_LIMIT
//
// The values are passed to the database as parameters, never written into
// SQL; the characters a search may hold are those of host names people
// type, so that a quote, a semicolon or a LIKE wildcard is refused rather
// than searched for.

const MAX_QUERY_BYTES = 1024;
const MAX_PAGE = 999999;
const MAX_LIMIT = 200;
const MAX_SEARCH = 64;
const SEARCH_TEXT = /^[\p{L}\p{M}\p{N} ._:@+/#(),-]+$/u;

class BadQuery extends Error {}

function wholeNumber(name, text, max) {
  if (!/^[1-9][0-9]{0,8}$/.test(text) || Number(text) > max) {
    throw new BadQuery(`${name} must be a whole number from 1 to ${max}`);
  }
  return Number(text);
}

// parseQuery(search): { part, page, q, limit } from the query string
// ("?a=b", or "" for none); each is null when not given.  Throws BadQuery.
function parseQuery(search) {
  const out = { part: null, page: null, q: null, limit: null };
  if (Buffer.byteLength(search) > MAX_QUERY_BYTES) {
    throw new BadQuery(`the query string is longer than ${MAX_QUERY_BYTES} bytes`);
  }
  const seen = new Set();
  for (const [name, value] of new URLSearchParams(search)) {
    if (!Object.hasOwn(out, name)) {
      const shown = /^[a-z_]{1,20}$/.test(name) ? `"${name}"` : 'a parameter';
      throw new BadQuery(`${shown} is not one of part, page, q, limit`);
    }
    if (seen.has(name)) throw new BadQuery(`${name} is given more than once`);
    seen.add(name);
    if (name === 'part') {
      if (value !== 'main') throw new BadQuery('part must be main');
      out.part = value;
    } else if (name === 'page') {
      out.page = wholeNumber('page', value, MAX_PAGE);
    } else if (name === 'limit') {
      out.limit = wholeNumber('limit', value, MAX_LIMIT);
    } else if (value.trim() !== '') {
      const q = value.trim().normalize('NFC');
      if ([...q].length > MAX_SEARCH || !SEARCH_TEXT.test(q)) {
        throw new BadQuery(`q may hold letters, digits, spaces and . _ - : @ + / # ( ) , `
          + `(at most ${MAX_SEARCH} characters)`);
      }
      out.q = q;
    }
  }
  return out;
}

// The query string of the page a link leads to: the search and the page
// size carried over (null values left out).
function queryString(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) p.set(k, String(v));
  const text = p.toString();
  return text === '' ? '' : `?${text}`;
}

module.exports = { parseQuery, queryString, BadQuery, MAX_PAGE, MAX_LIMIT, MAX_SEARCH };
