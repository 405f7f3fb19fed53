'use strict';
// From an engine's repository and a branch (or tag, or commit sha) to what
// a worker needs: the commit's sha, the zip of its source, and the bench
// its commit message gives ("Bench: 10408355", as OpenBench reads it).
// Which forge answers is the operator's choice (RESOLVER):
//
//   github   GitHub's REST API (GITHUB_API, https://api.github.com; with
//            GITHUB_TOKEN when set): GET repos/OWNER/REPO/commits/REF.
//            Repositories are https://github.com/OWNER/REPO; the source is
//            https://github.com/OWNER/REPO/archive/SHA.zip.
//   git      any git server, through the git program: a shallow fetch of
//            the one commit into a cache under DATA_DIR/git, whose message
//            is then read.  The source is SOURCE_ZIP_URL with {repo},
//            {name} (the repository's last path part, without .git) and
//            {sha} filled in (default {repo}/archive/{sha}.zip, as GitHub,
//            Gitea and Forgejo serve them).  Tests serve a repository on
//            disk over loopback with git daemon.
//   none     no forge: the developer types the sha, the bench and the
//            source zip's URL.
//
// A repository must start with one of RESOLVER_REPOS (URL prefixes, comma
// separated; github: https://github.com/): the server fetches only from
// forges the operator named, never from an address a stranger typed.  git
// runs with no shell, its transports limited to git, http and https, no
// prompts, and a time limit.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFile } = require('node:child_process');

const SHA = /^[0-9a-f]{40}$/;
// a branch or tag name git would take, never an option or a range
const REF = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[A-Za-z0-9._\/-]{1,200}(?<![./])$/;
// (no path part of dots only: "/../" would leave the prefix the operator named)
const REPO = /^(https?|git):\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?(\/(?!\.+(\/|$))[A-Za-z0-9._~-]+){1,8}\/?$/;
const GITHUB_REPO = /^https:\/\/github\.com\/([A-Za-z0-9-]{1,39})\/([A-Za-z0-9_.-]{1,100})\/?$/;
const MAX_MESSAGE = 65536;

// A branch, repository or commit the forge could not give: the message
// says which and why, for the developer.
class ResolveError extends Error {}

// The last bench a commit message names, OpenBench's way: "Bench: N",
// "bench N", "Nodes: N" (commas allowed in N); null when it names none.
function benchOf(message) {
  const found = [...message.matchAll(/(?:BENCH|NODES)[ :=]+([0-9,]+)/gi)];
  if (found.length === 0) return null;
  const n = Number(found[found.length - 1][1].replace(/,/g, ''));
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

const repoName = (repo) => repo.replace(/\/$/, '').split('/').pop().replace(/\.git$/, '');

function checkRef(ref) {
  if (SHA.test(ref) || REF.test(ref)) return ref;
  throw new ResolveError(`${JSON.stringify(ref.slice(0, 60))} is not a branch, tag or 40-digit commit sha`);
}

function allowedRepo(repo, prefixes) {
  const r = repo.replace(/\/$/, '');
  if (!REPO.test(repo) || !prefixes.some((p) => `${r}/`.startsWith(p.endsWith('/') ? p : `${p}/`))) {
    throw new ResolveError(`${JSON.stringify(repo.slice(0, 100))} is not a repository this server may read: ` +
                           `it must start with ${prefixes.map((p) => JSON.stringify(p)).join(' or ')}`);
  }
  return r;
}

// GitHub's REST API.
function githubResolver({ api, token, prefixes, fetchImpl = fetch }) {
  return {
    kind: 'github',
    sourceUrl: (repo, sha) => `${repo.replace(/\/$/, '')}/archive/${sha}.zip`,
    async resolve(repo, ref) {
      const r = allowedRepo(repo, prefixes);
      const m = GITHUB_REPO.exec(`${r}/`.replace(/\/\/$/, '/'));
      if (!m) throw new ResolveError(`${JSON.stringify(repo)} is not https://github.com/OWNER/REPO`);
      checkRef(ref);
      const url = `${api.replace(/\/$/, '')}/repos/${m[1]}/${m[2]}/commits/${encodeURIComponent(ref)}`;
      let res;
      try {
        res = await fetchImpl(url, {
          headers: {
            Accept: 'application/vnd.github+json', 'User-Agent': 'allot-openbench',
            ...(token ? { Authorization: `Bearer ${token}` } : {}),
          },
          signal: AbortSignal.timeout(15000),
          redirect: 'error',
        });
      } catch (err) {
        throw new ResolveError(`GitHub could not be reached (${err.name === 'TimeoutError' ? 'no answer in 15 s' : err.message})`);
      }
      const text = await res.text();
      if (res.status === 404 || res.status === 422) throw new ResolveError(`${ref} was not found in ${r}`);
      if (res.status !== 200) {
        throw new ResolveError(`GitHub answered ${res.status} for ${ref} of ${r}` +
                               (res.status === 403 || res.status === 429 ? ' (its rate limit: try later, or set GITHUB_TOKEN)' : ''));
      }
      let data;
      try {
        data = JSON.parse(text.slice(0, 4 * 1024 * 1024));
      } catch {
        throw new ResolveError(`GitHub's answer for ${ref} of ${r} is not JSON`);
      }
      const sha = typeof data?.sha === 'string' ? data.sha.toLowerCase() : '';
      const message = data?.commit?.message;
      if (!SHA.test(sha) || typeof message !== 'string') throw new ResolveError(`GitHub's answer for ${ref} of ${r} has no commit`);
      return { sha, message: message.slice(0, MAX_MESSAGE), bench: benchOf(message), source: this.sourceUrl(r, sha) };
    },
  };
}

// Runs git with args (no shell), in cwd, for at most ms.  Resolves to its
// standard output; rejects with its last line of standard error.
function git(args, { cwd, ms = 60000 }) {
  return new Promise((resolve, reject) => {
    execFile('git', args, {
      cwd, timeout: ms, killSignal: 'SIGKILL', maxBuffer: 4 * 1024 * 1024,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_TERMINAL_PROMPT: '0',
        GIT_ALLOW_PROTOCOL: 'git:http:https', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C',
      },
    }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      const last = String(stderr).trim().split('\n').pop() || (err.killed ? `no answer in ${ms / 1000} s` : err.message);
      return reject(new Error(last));
    });
  });
}

// Any git server, through the git program.
function gitResolver({ cacheDir, prefixes, sourceTemplate }) {
  const queues = new Map();   // cache repository -> the fetch in progress (one at a time each)
  return {
    kind: 'git',
    sourceUrl: (repo, sha) => sourceTemplate.replaceAll('{repo}', repo.replace(/\/$/, ''))
      .replaceAll('{name}', repoName(repo)).replaceAll('{sha}', sha),
    async resolve(repo, ref) {
      const r = allowedRepo(repo, prefixes);
      checkRef(ref);
      const dir = path.join(cacheDir, `${crypto.createHash('sha256').update(r).digest('hex').slice(0, 16)}.git`);
      const run = async () => {
        if (!fs.existsSync(path.join(dir, 'HEAD'))) {
          fs.mkdirSync(dir, { recursive: true });
          await git(['init', '--quiet', '--bare'], { cwd: dir });
        }
        try {
          await git(['fetch', '--quiet', '--depth=1', '--no-tags', '--no-write-fetch-head', r,
            `+${ref}:refs/allot/want`], { cwd: dir });
        } catch (err) {
          throw new ResolveError(`${ref} was not found in ${r} (git: ${err.message.replace(/^fatal: /, '').slice(0, 200)})`);
        }
        const out = await git(['log', '-1', '--format=%H%n%B', 'refs/allot/want'], { cwd: dir });
        const [sha, ...lines] = out.split('\n');
        const message = lines.join('\n').trim().slice(0, MAX_MESSAGE);
        return { sha, message, bench: benchOf(message), source: this.sourceUrl(r, sha) };
      };
      const previous = queues.get(dir) ?? Promise.resolve();
      const mine = previous.catch(() => {}).then(run);
      queues.set(dir, mine);
      try {
        return await mine;
      } finally {
        if (queues.get(dir) === mine) queues.delete(dir);
      }
    },
  };
}

// The resolver the settings name, or null for none.
function makeResolver({ kind, prefixes, dataDir, githubApi, githubToken, sourceTemplate }) {
  if (kind === 'none') return null;
  if (kind === 'github') {
    return githubResolver({ api: githubApi, token: githubToken, prefixes: prefixes.length ? prefixes : ['https://github.com/'] });
  }
  if (kind === 'git') {
    if (prefixes.length === 0) throw new Error('RESOLVER=git needs RESOLVER_REPOS: the URL prefixes of the repositories it may fetch');
    return gitResolver({ cacheDir: path.join(dataDir, 'git'), prefixes, sourceTemplate });
  }
  throw new Error(`RESOLVER must be github, git or none, not ${JSON.stringify(kind)}`);
}

module.exports = { makeResolver, githubResolver, gitResolver, ResolveError, benchOf, SHA, REF, REPO };
