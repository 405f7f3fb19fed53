'use strict';
// examples/openbench/resolver.js: from a repository and a branch, tag or
// sha to the commit's sha, its bench and its source zip, with no network:
// the git resolver against a repository on disk served over loopback by
// git daemon, the GitHub one against a stand-in for its API (fetchImpl).
// Hostile repositories and refs are refused before anything is fetched.

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const { check, throwsLike, done } = require('./tap');

const {
  makeResolver, githubResolver, gitResolver, ResolveError, benchOf,
} = require(path.join(__dirname, '../../examples/openbench/resolver.js'));

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'resolver-'));
const gitEnv = {
  ...process.env, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'dev', GIT_AUTHOR_EMAIL: 'dev@example.org',
  GIT_COMMITTER_NAME: 'dev', GIT_COMMITTER_EMAIL: 'dev@example.org',
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();

// The engine's repository: master with "Bench: 1234567", a branch whose
// message names its bench with commas, a tag, and one commit with no bench.
const repo = path.join(work, 'served', 'engine.git');
fs.mkdirSync(repo, { recursive: true });
git(repo, 'init', '--quiet', '-b', 'master');
fs.writeFileSync(path.join(repo, 'engine.c'), 'int main(void) { return 0; }\n');
git(repo, 'add', '.');
git(repo, 'commit', '--quiet', '-m', 'Start\n\nBench: 1234567');
const masterSha = git(repo, 'rev-parse', 'HEAD');
git(repo, 'checkout', '--quiet', '-b', 'faster-search');
fs.appendFileSync(path.join(repo, 'engine.c'), '/* faster */\n');
git(repo, 'commit', '--quiet', '-am', 'Search faster\n\nbench 7,654,321');
const branchSha = git(repo, 'rev-parse', 'HEAD');
git(repo, 'tag', 'v1.0');
git(repo, 'checkout', '--quiet', '-b', 'no-bench');
fs.appendFileSync(path.join(repo, 'engine.c'), '/* no bench */\n');
git(repo, 'commit', '--quiet', '-am', 'Forgot the bench');
git(repo, 'checkout', '--quiet', 'master');

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port) {
  for (let i = 0; i < 1200; i++) {   // up to two minutes on a busy machine
    const up = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => { c.destroy(); resolve(true); });
      c.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`git daemon did not listen on ${port}`);
}

async function main() {
  // benchOf: OpenBench's ways of writing a bench in a commit message.
  check('benchOf "Bench: 10408355"', benchOf('Tweak\n\nBench: 10408355') === 10408355);
  check('benchOf takes commas and lower case', benchOf('bench 1,234,567') === 1234567);
  check('benchOf takes the last one named', benchOf('Bench: 1\nBench: 22') === 22);
  check('benchOf "Nodes: 99"', benchOf('Nodes: 99') === 99);
  check('benchOf of a message without one is null', benchOf('Fix a typo') === null);
  check('benchOf 0 is null (not a bench)', benchOf('Bench: 0') === null);
  check('benchOf of a huge number is null', benchOf('Bench: 99999999999999999999') === null);

  const port = await freePort();
  const daemon = spawn('git', ['daemon', '--export-all', '--reuseaddr', '--informative-errors', '--listen=127.0.0.1',
    `--port=${port}`, `--base-path=${path.join(work, 'served')}`, path.join(work, 'served')],
  { env: gitEnv, stdio: 'ignore' });
  try {
    await waitForPort(port);
    const base = `git://127.0.0.1:${port}`;
    const r = makeResolver({
      kind: 'git', prefixes: [`${base}/`], dataDir: path.join(work, 'data'), sourceTemplate: 'https://forge.test/{name}/archive/{sha}.zip',
    });
    check('makeResolver git is the git resolver', r.kind === 'git');

    let got = await r.resolve(`${base}/engine.git`, 'faster-search');
    check('a branch resolves to its commit', got.sha === branchSha, JSON.stringify(got));
    check('its bench is read from the commit message', got.bench === 7654321, got.bench);
    check('its source zip fills the template', got.source === `https://forge.test/engine/archive/${branchSha}.zip`, got.source);
    got = await r.resolve(`${base}/engine.git`, 'master');
    check('another branch: master', got.sha === masterSha && got.bench === 1234567, JSON.stringify(got));
    got = await r.resolve(`${base}/engine.git`, 'v1.0');
    check('a tag resolves to its commit', got.sha === branchSha, JSON.stringify(got));
    got = await r.resolve(`${base}/engine.git`, masterSha);
    check('a full sha resolves to itself', got.sha === masterSha && got.bench === 1234567, JSON.stringify(got));
    got = await r.resolve(`${base}/engine.git`, 'no-bench');
    check('a commit without a bench: bench null, sha known', got.bench === null && /^[0-9a-f]{40}$/.test(got.sha), JSON.stringify(got));
    const both = await Promise.all([r.resolve(`${base}/engine.git`, 'master'), r.resolve(`${base}/engine.git`, 'faster-search')]);
    check('two lookups at once on one repository each get their own commit',
      both[0].sha === masterSha && both[1].sha === branchSha);

    await throwsLike('an unknown branch is refused, naming it',
      () => r.resolve(`${base}/engine.git`, 'no-such-branch'), ResolveError, /no-such-branch was not found in git:/);
    await throwsLike('an unknown repository on the forge is refused',
      () => r.resolve(`${base}/other.git`, 'master'), ResolveError, /master was not found in/);
    await throwsLike('a repository outside RESOLVER_REPOS is refused',
      () => r.resolve('git://127.0.0.2:9/engine.git', 'master'), ResolveError, /is not a repository this server may read/);
    for (const hostile of ['file:///etc', 'ext::sh -c touch% /tmp/pwned', `${base}/../etc`, `${base}/engine.git?x=1`]) {
      await throwsLike(`a hostile repository ${JSON.stringify(hostile)} is refused`,
        () => r.resolve(hostile, 'master'), ResolveError, /is not a repository this server may read/);
    }
    for (const hostile of ['--upload-pack=touch /tmp/pwned', 'master..faster-search', 'a//b', 'x@{1}', 'HEAD~1', 'bad name', '']) {
      await throwsLike(`a hostile ref ${JSON.stringify(hostile)} is refused`,
        () => r.resolve(`${base}/engine.git`, hostile), ResolveError, /is not a branch, tag or 40-digit commit sha/);
    }
    check('nothing a hostile input named was run', !fs.existsSync('/tmp/pwned'));
  } finally {
    daemon.kill('SIGTERM');
  }

  // GitHub's API, stood in for by fetchImpl: the URL asked, the token
  // sent, and each kind of answer.
  const asked = [];
  const answers = {
    'deadbeef': { status: 200, body: JSON.stringify({ sha: 'A'.repeat(40), commit: { message: 'Speedup\n\nBench: 4242' } }) },
    missing: { status: 404, body: '{"message":"No commit found"}' },
    limited: { status: 403, body: '{"message":"API rate limit exceeded"}' },
    garbled: { status: 200, body: '<html>' },
    empty: { status: 200, body: '{"sha": "nope"}' },
  };
  const fetchImpl = async (url, opts) => {
    asked.push({ url, auth: opts.headers.Authorization });
    const a = answers[decodeURIComponent(url.split('/').pop())];
    return { status: a.status, text: async () => a.body };
  };
  const gh = githubResolver({ api: 'https://api.github.test', token: 'T0KEN', prefixes: ['https://github.com/'], fetchImpl });
  const g = await gh.resolve('https://github.com/dev/weiss', 'deadbeef');
  check('GitHub: the commit, lower-cased, and its bench', g.sha === 'a'.repeat(40) && g.bench === 4242, JSON.stringify(g));
  check('GitHub: the source is the archive of the sha', g.source === `https://github.com/dev/weiss/archive/${'a'.repeat(40)}.zip`);
  check('GitHub: asked repos/OWNER/REPO/commits/REF with the token',
    asked[0].url === 'https://api.github.test/repos/dev/weiss/commits/deadbeef' && asked[0].auth === 'Bearer T0KEN', JSON.stringify(asked[0]));
  await throwsLike('GitHub 404: not found, in a sentence', () => gh.resolve('https://github.com/dev/weiss', 'missing'),
    ResolveError, /^missing was not found in https:\/\/github.com\/dev\/weiss$/);
  await throwsLike('GitHub 403: its rate limit, said so', () => gh.resolve('https://github.com/dev/weiss', 'limited'),
    ResolveError, /rate limit/);
  await throwsLike('GitHub answering HTML is refused', () => gh.resolve('https://github.com/dev/weiss', 'garbled'),
    ResolveError, /is not JSON/);
  await throwsLike('GitHub answering without a commit is refused', () => gh.resolve('https://github.com/dev/weiss', 'empty'),
    ResolveError, /has no commit/);
  await throwsLike('GitHub: a repository elsewhere is refused', () => gh.resolve('https://evil.test/dev/weiss', 'deadbeef'),
    ResolveError, /is not a repository this server may read/);
  await throwsLike('GitHub: a path that is not OWNER/REPO is refused', () => gh.resolve('https://github.com/dev/weiss/tree', 'deadbeef'),
    ResolveError, /is not https:\/\/github.com\/OWNER\/REPO/);
  check('GitHub: nothing was asked for refused inputs', asked.length === 5, asked.length);

  check('makeResolver none: no resolver (the developer types sha and bench)',
    makeResolver({ kind: 'none', prefixes: [], dataDir: work }) === null);
  let said = '';
  try {
    makeResolver({ kind: 'git', prefixes: [], dataDir: work });
  } catch (err) {
    said = err.message;
  }
  check('makeResolver git without RESOLVER_REPOS says what is missing', /needs RESOLVER_REPOS/.test(said), said);
}

main().then(done, (err) => {
  check('the resolver tests ran to the end', false, err.stack);
  done();
}).finally(() => fs.rmSync(work, { recursive: true, force: true }));
