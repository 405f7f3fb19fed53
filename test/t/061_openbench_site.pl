# The OpenBench front end's pure parts, unit tested in node without a
# database: test/openbench/*_test.js each print TAP (test/openbench/tap.js),
# passed on here as one subtest per file.
#   stats_test.js     Elo +- , nElo, LLR and its bounds against reference
#                     figures (stats_reference.py, OpenBench's stats.py)
#   resolver_test.js  a branch, tag or sha to its commit, bench and source
#                     zip: git daemon serving a repository on loopback, a
#                     stand-in for GitHub's API; hostile refs and repositories
#   spsa_test.js      SPSA's c, a, r, perturbations and report checks
#                     against OpenBench's formulas; hostile tune descriptions
# Then the site's pages (examples/openbench/pages.js) served by server.js
# over a database with a test made by admin.js and results written as the
# worker's calls would leave them: the tests list and the test page with
# its figures, and hostile paths answered with sentences.
use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname basename);
use Archive::Tar;
use Cwd qw(abs_path);
use File::Path qw(make_path);
use JSON::PP;
use FindBin;
use lib $FindBin::RealBin;
use FrontEnds qw(install_front_ends);
use OpenBenchWorker qw(worker_call worker_info);
use DevToolsPage qw(evaluate_in_pages);
use HTTP::Tiny;
use IO::Socket::INET;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $dir = abs_path(dirname(__FILE__) . '/../openbench');
my ($node) = grep { -x } map { "$_/node" } split(/:/, $ENV{PATH} // ''), '/usr/bin';
ok($node, 'node is installed') or BAIL_OUT('node is missing: run scripts/test.sh, which installs it');

for my $file (sort glob("$dir/*_test.js"))
{
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run([ $node, $file ], '<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(300));
	subtest basename($file) => sub {
		my $checks = 0;
		for (split /\n/, $out)
		{
			if (/^(not )?ok \d+ - (.*)$/)
			{
				ok(!defined $1, $2);
				$checks++;
			}
			elsif (/^#/)
			{
				note($_);
			}
		}
		cmp_ok($checks, '>', 0, 'it ran checks');
		ok($ok, 'it exits 0') or diag($err);
	};
}

# The git daemon and the server this test starts: stopped at its end, even
# when a failed check or a die ends it early.
my ($daemon, $server);
END
{
	local $?;   # the test's exit status, not the kill's
	for my $h (grep { defined } $server, $daemon)
	{
		$h->kill_kill if $h->pumpable;
	}
}

# ---------------------------------------------------------------------------
# The site's pages.
my $pg = PostgreSQL::Test::Cluster->new('site');
$pg->init;
$pg->start;
sub sql { return $pg->safe_psql('postgres', $_[0]); }
sql(q{
CREATE EXTENSION allot;
CREATE ROLE farm_admin LOGIN IN ROLE allot_admin;
CREATE ROLE openbench_web LOGIN IN ROLE allot_web;
CREATE SCHEMA openbench AUTHORIZATION farm_admin;
});
my %pgenv = (PGHOST => $pg->host, PGPORT => $pg->port, PGDATABASE => 'postgres');
my $work = PostgreSQL::Test::Utils::tempdir('site');
my ($examples, $installed, $npm_said) = install_front_ends($work);
ok($installed, 'the front ends\' packages are installed') or diag($npm_said);
my $ob = "$examples/openbench";

# run(ENV, CMD...): (exit status, output).
sub run
{
	my ($env, @cmd) = @_;
	my $out = '';
	local @ENV{ keys %pgenv } = values %pgenv;
	local @ENV{ keys %$env } = values %$env;
	IPC::Run::run(\@cmd, '<', \undef, '>&', \$out, IPC::Run::timeout(120));
	note "@cmd\n$out";
	return ($? >> 8, $out);
}
my ($rc) = run({ PGUSER => 'farm_admin' }, $pg->installed_command('psql'), '-X', '-q', '-v', 'ON_ERROR_STOP=1',
	'-v', 'web=openbench_web', '-f', "$ob/setup.sql");
is($rc, 0, 'setup.sql, run by the operator');
my $data = "$work/data";
sub admin { return run({ PGUSER => 'farm_admin', DATA_DIR => $data }, $node, "$ob/admin.js", @_); }
my ($alice_rc, $alice_said) = admin(qw(add-user alice));
is($alice_rc, 0, 'add-user alice');
my ($alice_password) = $alice_said =~ /shown only now:\n(\S+)/;
my (undef, $bob_said) = admin(qw(add-user bob));
my ($bob_password) = $bob_said =~ /shown only now:\n(\S+)/;
# Roles and enabling, as admin.js sets them for the site's logins.
is((admin(qw(add-user carol --approver)))[0], 0, 'add-user carol --approver');
is((admin(qw(set-role alice operator)))[0], 0, 'set-role alice operator');
my ($role_rc, $role_said) = admin(qw(set-role alice king));
is($role_rc, 2, 'set-role of an unknown role is a mistake in the command line');
like($role_said, qr/usage: set-role NAME developer\|approver\|operator/, 'and says the roles');
($role_rc, $role_said) = admin(qw(set-role nobody approver));
like($role_said, qr/no account "nobody"/, 'set-role of an unknown account names it');
admin(qw(disable-user carol));
is(sql(q{SELECT string_agg(name || ':' || approver || ':' || operator || ':' || enabled, ',' ORDER BY name) FROM openbench.account}),
	'alice:false:true:true,bob:false:false:true,carol:true:false:false', 'alice is an operator, carol a disabled approver');
is((admin(qw(enable-user carol)))[0], 0, 'enable-user carol');
is(sql(q{SELECT enabled FROM openbench.account WHERE name = 'carol'}), 't', 'carol is enabled again');

is((admin(qw(add-engine Weiss --compilers gcc>=10)))[0], 0, 'add-engine Weiss');
is((admin(qw(add-book eight.epd --source http://127.0.0.1/eight.epd.zip --sha256), '0' x 64))[0], 0, 'add-book');
my @sides = ('--dev-source', 'http://127.0.0.1/dev.zip', '--dev-sha', 'a' x 40, '--dev-bench', 1000, '--dev-name', 'faster',
	'--base-source', 'http://127.0.0.1/base.zip', '--base-sha', 'b' x 40, '--base-bench', 2000, '--tc', '8+0.08');
my ($test_rc, $said) = admin('create-test', @sides, qw(--engine Weiss --book eight.epd --sprt), '0,5');
is($test_rc, 0, 'create-test: an SPRT test');
my ($id) = $said =~ /^test ([0-9]+)$/m;
my ($gone_rc, $gone_said) = admin('create-test', @sides, qw(--engine Weiss --book eight.epd --games 100 --name), 'Deleted one');
my ($gone) = $gone_said =~ /^test ([0-9]+)$/m;

# Results as the worker's calls leave them: a machine (its name hostile
# markup), one result, two counted reports and one not counted; the test's
# totals, pentanomial [2, 10, 30, 12, 6] with their trinomial counts.
sql(qq{
INSERT INTO openbench.machine (host_id, account_id, salt, hash, scrypt_n, scrypt_r, scrypt_p, client_ver, info)
SELECT 7, id, decode(repeat('00', 16), 'hex'), decode(repeat('00', 32), 'hex'), 16384, 8, 1, 49,
       '{"machine_name": "<script>alert(1)</script>", "os_name": "Linux"}'
  FROM openbench.account WHERE name = 'alice';
INSERT INTO openbench.result (test_id, host_id, repeated, focus_assigned, runner_count, concurrency_per,
                              rounds_per_runner, book_index, explanation, games, losses, draws, wins, ll, ld, dd, dw, ww)
VALUES ($id, 7, false, false, 1, 1, 100, 1, '{}', 120, 14, 82, 24, 2, 10, 30, 12, 6);
INSERT INTO openbench.submission (result_id, counted, losses, draws, wins, ll, ld, dd, dw, ww, crashes, timelosses, illegals)
SELECT r.id, s.counted, s.l, s.d, s.w, s.ll, s.ld, s.dd, s.dw, s.ww, 0, 0, 0
  FROM openbench.result r,
       (VALUES (true, 6, 40, 14, 1, 4, 15, 7, 3), (false, 99, 0, 0, 99, 0, 0, 0, 0), (true, 8, 42, 10, 1, 6, 15, 5, 3))
         AS s(counted, l, d, w, ll, ld, dd, dw, ww);
UPDATE openbench.test SET games = 120, losses = 14, draws = 82, wins = 24, ll = 2, ld = 10, dd = 30, dw = 12, ww = 6,
                          llr = 1.23456 WHERE id = $id;
UPDATE openbench.test SET deleted = true WHERE id = $gone;
});

# The engine's repository, served by git daemon on loopback: master and a
# branch whose messages name their benches, and one whose message names none.
my $served = "$work/served";
my $repo = "$served/weiss.git";
my %git_env = (HOME => $work, GIT_CONFIG_NOSYSTEM => 1, GIT_AUTHOR_NAME => 'dev', GIT_AUTHOR_EMAIL => 'dev@example.org',
	GIT_COMMITTER_NAME => 'dev', GIT_COMMITTER_EMAIL => 'dev@example.org');
sub git
{
	my $out = '';
	local @ENV{ keys %git_env } = values %git_env;
	IPC::Run::run([ 'git', '-C', $repo, @_ ], '<', \undef, '>', \$out, '2>&1') or die "git @_: $out";
	chomp $out;
	return $out;
}
mkdir $served;
mkdir $repo;
git(qw(init --quiet -b master));
PostgreSQL::Test::Utils::append_to_file("$repo/weiss.c", "int main(void) { return 0; }\n");
git(qw(add .));
git(qw(commit --quiet -m), "Start\n\nBench: 2000000");
my $master_sha = git(qw(rev-parse HEAD));
git(qw(checkout --quiet -b faster));
PostgreSQL::Test::Utils::append_to_file("$repo/weiss.c", "/* faster */\n");
git(qw(commit --quiet -am), "Search faster\n\nBench: 2100000");
my $faster_sha = git(qw(rev-parse HEAD));
git(qw(checkout --quiet -b nobench));
PostgreSQL::Test::Utils::append_to_file("$repo/weiss.c", "/* none */\n");
git(qw(commit --quiet -am), 'Forgot it');
git(qw(checkout --quiet master));
my $git_port = PostgreSQL::Test::Cluster::get_free_port();
# git-daemon itself (not "git daemon", whose child would outlive a kill)
my $exec_path = `git --exec-path`;
chomp $exec_path;
$daemon = IPC::Run::start([ "$exec_path/git-daemon", '--export-all', '--reuseaddr', '--listen=127.0.0.1', "--port=$git_port",
	"--base-path=$served", $served ], '<', \undef, '>', "$work/git-daemon.log", '2>&1');
for (1 .. 600)   # up to two minutes on a busy machine
{
	last if IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $git_port, Proto => 'tcp');
	sleep 0.2;
}
is((admin(qw(add-engine Weiss --compilers gcc>=10 --repo), "git://127.0.0.1:$git_port/weiss.git"))[0], 0,
	'add-engine Weiss --repo: its repository');

my ($bad_rc, $bad_said) = run({ PGUSER => 'openbench_web', DATA_DIR => $data, RESOLVER => 'git', RESOLVER_REPOS => '' },
	$node, "$ob/server.js");
is($bad_rc, 2, 'RESOLVER=git without RESOLVER_REPOS: the server does not start');
like($bad_said, qr/^RESOLVER=git needs RESOLVER_REPOS: the URL prefixes of the repositories it may fetch$/m, 'saying what is missing');
unlike($bad_said, qr/ at .*\.js:[0-9]+/, 'with no stack trace');

my $port = PostgreSQL::Test::Cluster::get_free_port();
$server = IPC::Run::start([ $node, "$ob/server.js" ], '<', \undef, '>', "$work/server.log", '2>&1',
	init => sub {
		@ENV{ keys %pgenv } = values %pgenv;
		@ENV{qw(PGUSER PORT HOST DATA_DIR RESOLVER RESOLVER_REPOS SOURCE_ZIP_URL)} = ('openbench_web', $port, '127.0.0.1',
			$data, 'git', "git://127.0.0.1:$git_port/", 'http://127.0.0.1/{name}/{sha}.zip');
	});
my $http = HTTP::Tiny->new(timeout => 120);
my $base = "http://127.0.0.1:$port";
for (1 .. 600)   # up to two minutes on a busy machine
{
	last if $http->get("$base/index/")->{status} != 599;
	sleep 0.2;
}

my $r = $http->get("$base/test/$id/");
is($r->{status}, 200, "the page of test $id");
my $page = $r->{content};
# stats_reference.py: [2, 10, 30, 12, 6] is Elo 29.02 in [-12.96, 71.87], nElo 43.84
like($page, qr/Elo   \| 29\.02 \+- 42\.85 \(95%\)/, 'its Elo +- as OpenBench computes it (pentanomial)');
like($page, qr/nElo  \| 43\.84 \+- /, 'its normalised Elo');
like($page, qr/LLR   \| 1\.23 \(-2\.94, 2\.94\) \[0\.00, 5\.00\]/, 'its LLR against its bounds and Elo bounds');
like($page, qr/Games \| N: 120 W: 24 L: 14 D: 82/, 'its W/D/L counts');
like($page, qr/Penta \| \[2, 10, 30, 12, 6\]/, 'its pentanomial counts');
like($page, qr/id="llr-chart".*id="elo-chart"/s, 'the charts of its LLR and Elo');
my @points = $page =~ /<polyline[^>]* points="([^"]*)"/g;
is(scalar(split / /, $points[0] // ''), 3, 'the LLR chart has the start and the two counted reports, not the other');
like($page, qr/<code>a{40}<\/code>.*1000.*<code>b{40}<\/code>.*2000/s, 'both sides\' commits and benches');
like($r->{headers}{'content-security-policy'} // '', qr/default-src 'none'; style-src 'nonce-/,
	'no script may run on it (Content-Security-Policy)');

$r = $http->get("$base/index/");
is($r->{status}, 200, 'the tests list');
like($r->{content}, qr{<a href="/test/$id/">$id</a>}, 'it links the test');
unlike($r->{content}, qr{/test/$gone/}, 'not the deleted test');
like($r->{content}, qr/29\.02 \+- 42\.85/, 'with its Elo');

# Hostile paths and methods: a sentence and a status, never a trace.
for my $case (
	[ '/test/abc/', 404, qr/a test number must be a whole number from 1, not &quot;abc&quot;/ ],
	[ '/test/0/', 404, qr/a test number must be a whole number from 1/ ],
	[ '/test/99999999999999999999/', 404, qr/a test number must be a whole number from 1/ ],
	[ '/test/999/', 404, qr/there is no test 999/ ],
	[ "/test/$gone/", 404, qr/test $gone was deleted/ ],
	[ '/index/7/', 404, qr/there is no page 7: the tests fill 1/ ],
	[ '/test/%3Cb%3E/', 404, qr/not &quot;&lt;b&gt;&quot;/ ],
	[ '/test/1/extra/', 404, qr/this site has no such page/ ])
{
	my ($path, $status, $re) = @$case;
	$r = $http->get("$base$path");
	is($r->{status}, $status, "GET $path: $status");
	like($r->{content}, $re, "GET $path says why");
	unlike($r->{content}, qr/ at \S+\.js:[0-9]+|"<b>"/, "GET $path shows no stack trace or markup of the path");
}
$r = $http->post_form("$base/test/$id/", { x => 1 });
is($r->{status}, 405, 'POST to a page: 405');

# ---------------------------------------------------------------------------
# Logins and forms: a browser's cookies kept by hand, the CSRF token read
# from each form.
my %jar;
my $web = HTTP::Tiny->new(timeout => 120, max_redirect => 0);
sub browse
{
	my ($method, $path, $form) = @_;
	my $cookie = join('; ', map { "$_=$jar{$_}" } sort keys %jar);
	my %opt = (headers => { ($cookie ? (Cookie => $cookie) : ()) });
	if ($form)
	{
		$opt{content} = $web->www_form_urlencode($form);
		$opt{headers}{'Content-Type'} = 'application/x-www-form-urlencoded';
	}
	my $res = $web->request($method, "$base$path", \%opt);
	my $set = $res->{headers}{'set-cookie'} // [];
	for my $c (ref $set ? @$set : ($set))
	{
		my ($name, $value) = $c =~ /^([^=]+)=([^;]*)/ or next;
		if ($value eq '') { delete $jar{$name} } else { $jar{$name} = $value }
	}
	return $res;
}
sub token { my ($page) = @_; my ($t) = $page =~ /name="csrf" value="([^"]+)"/; return $t // ''; }
sub tests { return sql('SELECT count(*) FROM openbench.test'); }
# refusals(PATH, LABEL, FORM, [WHAT, CHANGES, STATUS, RE]...): each
# change of FORM (a field undef: left out) posted to PATH is refused with
# STATUS and a sentence matching RE.
sub refusals
{
	my ($path, $label, $form, @cases) = @_;
	for my $case (@cases)
	{
		my ($what, $change, $status, $re) = @$case;
		my %fields = (%$form, %$change);
		delete $fields{$_} for grep { !defined $fields{$_} } keys %fields;
		my $res = browse('POST', $path, \%fields);
		is($res->{status}, $status, "$label with $what: $status");
		like($res->{content}, $re, "$label with $what says why");
	}
}

$r = browse('GET', '/login/');
is($r->{status}, 200, 'the login page');
my $csrf = token($r->{content});
ok($csrf ne '', 'it carries a CSRF token');
$r = browse('POST', '/login/', { username => 'alice', password => $alice_password });
is($r->{status}, 403, 'a login without the CSRF token is refused');
like($r->{content}, qr/no valid security token \(CSRF\)/, 'saying why');
$r = browse('POST', '/login/', { username => 'alice', password => 'wrong password', csrf => $csrf });
is($r->{status}, 403, 'a wrong password is refused');
like($r->{content}, qr/That name and password do not match an enabled account/, 'in a sentence');
$r = browse('POST', '/login/', { username => 'alice', password => $alice_password, csrf => $csrf });
is($r->{status}, 303, 'alice logs in');
ok(defined $jar{ob_session}, 'with a session cookie');
like(join(' ', @{ ref $r->{headers}{'set-cookie'} ? $r->{headers}{'set-cookie'} : [ $r->{headers}{'set-cookie'} ] }),
	qr/ob_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax/, 'HttpOnly and SameSite');

$r = browse('GET', '/test/new/');
is($r->{status}, 200, 'the new test form');
$csrf = token($r->{content});
my %new = (csrf => $csrf, engine => 'Weiss', dev_branch => 'faster', base_branch => 'master', book => 'eight.epd',
	tc => '8+0.08', options => 'Threads=1 Hash=16', mode => 'SPRT', bounds => '[0, 5]', games => '', info => 'from the site');
my $before = tests();
refusals('/test/new/', 'a new test', \%new,
	[ 'no CSRF token', { csrf => undef }, 403, qr/no valid security token/ ],
	[ 'an unknown branch', { dev_branch => 'no-such-branch' }, 400, qr/No-such-branch was not found in git:/ ],
	[ 'a bad sha', { dev_sha => 'xyz' }, 400, qr/Dev sha &quot;xyz&quot; is not 40 hexadecimal digits/ ],
	[ 'a hostile branch', { dev_branch => '--upload-pack=touch /tmp/x' }, 400, qr/is not a branch, tag or sha/ ],
	[ 'out-of-range bounds', { bounds => '[0, 900]' }, 400, qr/SPRT bounds: each bound must be within \[-500, 500\], not 900/ ],
	[ 'bounds the wrong way round', { bounds => '[5, 0]' }, 400, qr/the first bound must be below the second/ ],
	[ 'a commit naming no bench', { dev_branch => 'nobench' }, 400, qr/names no bench \(&quot;Bench: N&quot;\): type it/ ],
	[ 'a bad time control', { tc => '10 minutes' }, 400, qr/Time control must be N=nodes/ ],
	[ 'a confidence of one number', { confidence => '0.05' }, 400, qr/SPRT confidence must be two error rates/ ],
	[ 'a confidence out of range', { confidence => '[0.05, 0.7]' }, 400, qr/SPRT confidence: beta must be a number from 0\.000001 to 0\.499, not &quot;0\.7&quot;/ ],
	[ 'a workload size of 0', { workload_size => '0' }, 400, qr/Workload size must be a whole number from 1 to 1024, not &quot;0&quot;/ ],
	[ 'a throughput of words', { throughput => 'lots' }, 400, qr/Throughput must be a whole number from 1 to 1000000000, not &quot;lots&quot;/ ],
	[ 'an unknown engine', { engine => 'Nope' }, 400, qr/There is no engine &quot;Nope&quot;/ ]);
is(tests(), $before, 'none of them made a test');

$r = browse('POST', '/test/new/', \%new);
is($r->{status}, 303, 'a new test from branch names');
my ($made) = ($r->{headers}{location} // '') =~ m{^/test/([0-9]+)/$};
ok($made, 'it goes to the test page');
is(sql("SELECT dev_sha || ' ' || dev_bench || ' ' || base_sha || ' ' || base_bench || ' ' || dev_source || ' ' || approved
          FROM openbench.test WHERE id = $made"),
	"$faster_sha 2100000 $master_sha 2000000 http://127.0.0.1/weiss/$faster_sha.zip true",
	'its shas and benches resolved from the branches, its source zip from the template');
is(sql("SELECT state FROM allot.workload WHERE id = $made"), 'active', 'made by an operator, it runs at once');
$r = browse('GET', "/test/$made/");
like($r->{content}, qr/id="stop"/, 'its page offers alice the stop button');

# bob, a developer: his test waits for approval; he cannot stop alice's.
my %alice_jar = %jar;
%jar = ();
$csrf = token(browse('GET', '/login/')->{content});
is(browse('POST', '/login/', { username => 'bob', password => $bob_password, csrf => $csrf })->{status}, 303, 'bob logs in');
$csrf = token(browse('GET', '/test/new/')->{content});
$before = tests();
refusals('/test/new/', 'bob\'s new test', { %new, csrf => $csrf },
	[ 'a priority above 0', { priority => '5' }, 403, qr/Only an approver may set a priority above 0, not 5/ ]);
is(tests(), $before, 'it made no test');
$r = browse('POST', '/test/new/', { %new, csrf => $csrf, dev_branch => $faster_sha, base_sha => $master_sha, base_bench => '2000000',
	base_source => 'http://127.0.0.1/base.zip', base_branch => '', confidence => '[0.1, 0.2]', workload_size => '4' });
is($r->{status}, 303, 'bob makes a test from a sha, and a base typed in full');
my ($bobs) = ($r->{headers}{location} // '') =~ m{^/test/([0-9]+)/$};
is(sql("SELECT approved || ' ' || w.state || ' ' || base_source || ' ' || alpha || ' ' || beta || ' ' || t.workload_size || ' '
               || w.workload_size FROM openbench.test t JOIN allot.workload w USING (id) WHERE t.id = $bobs"),
	'false paused http://127.0.0.1/base.zip 0.1 0.2 4 4',
	'it waits for approval, its workload paused, the source, confidence and workload size as typed');
$r = browse('GET', "/test/$made/");
unlike($r->{content}, qr/id="stop"/, 'alice\'s test offers bob no stop button');
$r = browse('POST', "/test/$made/stop/", { csrf => token($r->{content}) });
is($r->{status}, 403, 'bob cannot stop alice\'s test');
like($r->{content}, qr/Test $made is not yours: its author or an approver may stop it/, 'and is told why');
is(sql("SELECT finished_at IS NULL FROM openbench.test WHERE id = $made"), 't', 'it still runs');

%jar = %alice_jar;
$r = browse('POST', "/test/$made/stop/", {});
is($r->{status}, 403, 'a stop without the CSRF token is refused');
$r = browse('POST', "/test/$made/stop/", { csrf => token(browse('GET', "/test/$made/")->{content}) });
is($r->{status}, 303, 'alice stops her test');
is(sql("SELECT t.finished_by || ' ' || w.state FROM openbench.test t JOIN allot.workload w USING (id) WHERE t.id = $made"),
	'user finished', 'it is finished, in allot too');
is(sql("SELECT string_agg(a.name || ': ' || x.summary, ', ' ORDER BY x.id) FROM openbench.action x JOIN openbench.account a ON a.id = x.account_id"),
	'alice: created the test, bob: created the test, to be approved, alice: stopped the test', 'each action is recorded');
# The other actions, each checked in the test's row, allot's workload and
# the actions recorded.
sub workload { return sql("SELECT t.finished_at IS NULL, t.approved, t.deleted, w.state, w.priority, w.throughput
                             FROM openbench.test t JOIN allot.workload w USING (id) WHERE t.id = $_[0]"); }
sub act
{
	my ($id, $action, %fields) = @_;
	return browse('POST', "/test/$id/$action/", { csrf => token(browse('GET', '/index/')->{content}), %fields });
}
is(act($made, 'restart')->{status}, 303, 'alice restarts her test');
is(workload($made), 't|t|f|active|0|1000', 'it runs again, in allot too');
$r = act($made, 'restart');
is($r->{status}, 409, 'restarting a running test is refused');
like($r->{content}, qr/Test $made cannot be restarted: it is running/, 'saying it is running');
$r = act($bobs, 'approve');
is($r->{status}, 303, 'alice, an operator, approves bob\'s test');
is(workload($bobs), 't|t|f|active|0|1000', 'it runs');
is(act($bobs, 'approve')->{status}, 409, 'approving it again is refused');
$r = act($made, 'modify', priority => 7, throughput => 2500);
is($r->{status}, 303, 'alice modifies her test');
is(workload($made), 't|t|f|active|7|2500', 'its priority and throughput in allot');

%alice_jar = %jar;
%jar = ();
$csrf = token(browse('GET', '/login/')->{content});
browse('POST', '/login/', { username => 'bob', password => $bob_password, csrf => $csrf });
for my $case (
	[ 'approve', $made, {}, 403, qr/Only an approver may approve test $made/ ],
	[ 'modify', $made, { priority => 0, throughput => 1 }, 403, qr/Test $made is not yours: its author or an approver may modify it/ ],
	[ 'delete', $made, {}, 403, qr/is not yours/ ],
	[ 'modify', $bobs, { priority => 5, throughput => 100 }, 403, qr/Only an approver may set a priority above 0, not 5/ ],
	[ 'modify', $bobs, { priority => -3, throughput => 'abc' }, 400, qr/Throughput must be a whole number, not &quot;abc&quot;/ ],
	[ 'modify', $bobs, { priority => -3, throughput => 0 }, 400, qr/Throughput must be between 1 and 1000000000, not 0/ ],
	[ 'modify', $bobs, { priority => -3 }, 400, qr/Throughput is missing/ ],
	[ 'restore', $bobs, {}, 409, qr/it is not deleted/ ],
	[ 'stop', 999, {}, 404, qr/There is no test 999/ ])
{
	my ($action, $id, $fields, $status, $re) = @$case;
	$r = act($id, $action, %$fields);
	is($r->{status}, $status, "bob: $action test $id: $status");
	like($r->{content}, $re, "bob: $action test $id says why");
}
is(workload($made), 't|t|f|active|7|2500', 'alice\'s test is as it was');
is(act($bobs, 'modify', priority => -3, throughput => 500)->{status}, 303, 'bob lowers his test\'s priority and throughput');
is(workload($bobs), 't|t|f|active|-3|500', 'in allot');
is(act($bobs, 'delete')->{status}, 303, 'bob deletes his test');
is(workload($bobs), 't|t|t|finished|-3|500', 'it is finished in allot');
unlike(browse('GET', '/index/')->{content}, qr{/test/$bobs/}, 'and not listed');
like(browse('GET', "/test/$bobs/")->{content}, qr/id="restore"/, 'its page offers bob to restore it');
is(act($bobs, 'restore')->{status}, 303, 'bob restores it');
is(workload($bobs), 't|t|f|active|-3|500', 'it runs again');

# A stranger registers; the lists of users, machines, events and errors.
%jar = ();
$csrf = token(browse('GET', '/register/')->{content});
my $users_before = sql('SELECT count(*) FROM openbench.account');
refusals('/register/', 'registering', { csrf => $csrf },
	[ 'passwords that differ', { username => 'dave', password => 'a long password', password2 => 'another one' }, 400, qr/The two passwords differ/ ],
	[ 'a short password', { username => 'dave', password => 'short', password2 => 'short' }, 400, qr/A password has 8 to 1024 characters/ ],
	[ 'markup for a name', { username => '<b>x</b>', password => 'a long password', password2 => 'a long password' }, 400, qr/not &quot;&lt;b&gt;x&lt;\/b&gt;&quot;/ ],
	[ 'a name taken', { username => 'alice', password => 'a long password', password2 => 'a long password' }, 409, qr/The name alice is taken/ ],
	[ 'no CSRF token', { username => 'dave', password => 'a long password', password2 => 'a long password', csrf => undef }, 403, qr/no valid security token/ ]);
is(sql('SELECT count(*) FROM openbench.account'), $users_before, 'none of them made an account');
$r = browse('POST', '/register/', { csrf => $csrf, username => 'dave', password => 'a long password', password2 => 'a long password' });
is($r->{status}, 200, 'dave registers');
like($r->{content}, qr/An operator enables it/, 'and is told an operator enables his account');
is(sql(q{SELECT enabled FROM openbench.account WHERE name = 'dave'}), 'f', 'it is disabled');
$r = browse('POST', '/login/', { username => 'dave', password => 'a long password', csrf => token(browse('GET', '/login/')->{content}) });
is($r->{status}, 403, 'dave cannot log in before an operator enables him');

$r = browse('GET', '/users/');
like($r->{content}, qr{<td><a href="/user/alice/">alice</a></td><td>operator</td><td>yes</td><td class="num">1</td>}, 'users: alice, an operator, with one test');
like($r->{content}, qr{<td><a href="/user/dave/">dave</a></td><td>developer</td><td>waiting for an operator</td>}, 'users: dave waits');
my $alice_hash = sql(q{SELECT encode(hash, 'hex') FROM openbench.account WHERE name = 'alice'});
unlike($r->{content}, qr/\Q$alice_hash\E/, 'no password hash is shown');
$r = browse('GET', '/machines/');
like($r->{content}, qr{<a href="/machine/7/">7</a></td><td>alice</td>\s*<td>&lt;script&gt;alert\(1\)&lt;/script&gt;</td>},
	'machines: machine 7, alice\'s, its name shown as text');
like($r->{content}, qr{<a href="/test/$id/">$id</a>}, 'with the test of its latest workload');
$r = browse('GET', '/machine/7/');
like($r->{content}, qr{<table id="workloads">.*<a href="/test/$id/">$id</a>.*<td class="num">120</td>}s, 'machine 7: its workload of 120 games');
$r = browse('GET', '/events/');
like($r->{content}, qr{<td>bob</td><td><a href="/test/$bobs/">$bobs</a></td><td>restored the test</td>}, 'events: bob restored his test');
sql(qq{INSERT INTO openbench.event (host_id, test_id, kind, message, logs)
       VALUES (7, $id, 'error', '<b>build failed</b>', 'make: *** <i>Error</i> 2')});
$r = browse('GET', '/errors/');
like($r->{content}, qr{<td>error</td><td>&lt;b&gt;build failed&lt;/b&gt;<pre>make: \*\*\* &lt;i&gt;Error&lt;/i&gt; 2</pre>}, 'errors: the report and its log, as text');
for my $case ([ '/machine/abc/', qr/a machine number must be a whole number from 1/ ], [ '/machine/999/', qr/there is no machine 999/ ],
	[ '/events/9/', qr/there is no page 9: the events fill 1/ ], [ '/errors/x/', qr/a page number must be a whole number/ ],
	[ '/users/2/', qr/this site has no such page/ ])
{
	$r = browse('GET', $case->[0]);
	is($r->{status}, 404, "GET $case->[0]: 404");
	like($r->{content}, $case->[1], "GET $case->[0] says why");
}

# The api/ calls: config, and the PGNs of a test once it has finished.
$r = $http->get("$base/api/config/");
is_deeply(decode_json($r->{content}), { engines => ['Weiss'], books => { 'eight.epd' => { source => 'http://127.0.0.1/eight.epd.zip', sha => '0' x 64 } } },
	'api/config/: the engines and books');
is_deeply(decode_json($http->get("$base/api/config/Nope/")->{content}), { error => 'Engine not found. Check /api/config/ for a full list' },
	'api/config/ of an unknown engine: OpenBench\'s error');
is(decode_json($http->get("$base/api/config/Weiss/")->{content})->{build}{compilers}[0], 'gcc>=10', 'api/config/Weiss/: its compilers');
make_path("$data/pgns");
my $result_id = sql("SELECT id FROM openbench.result WHERE test_id = $id");
my $pgn = "BZh9" . ("\x01" x 700);
PostgreSQL::Test::Utils::append_to_file("$data/pgns/$id.$result_id.1.pgn.bz2", $pgn);
sql(qq{INSERT INTO openbench.pgn (result_id, test_id, book_index, file_name, bytes)
       VALUES ($result_id, $id, 1, '$id.$result_id.1.pgn.bz2', 704)});
is_deeply(decode_json($http->get("$base/api/pgns/$id/")->{content}), { error => 'PGNs cannot be downloaded while the Workload is active' },
	'api/pgns/ of a running test: OpenBench\'s error');
is_deeply(decode_json($http->get("$base/api/pgns/$made/")->{content}), { error => "Unable to find PGN for Workload #$made" },
	'api/pgns/ of a test without PGNs: OpenBench\'s error');
is_deeply(decode_json($http->get("$base/api/pgns/99999/")->{content}), { error => 'Requested Workload Id does not exist' },
	'api/pgns/ of no test: OpenBench\'s error');
is((admin('stop-test', $id))[0], 0, "admin.js stop-test $id");
like($http->get("$base/test/$id/")->{content}, qr{<a href="/api/pgns/$id/" id="pgns">}, 'its page links its PGNs');
$r = $http->get("$base/api/pgns/$id/");
is($r->{headers}{'content-disposition'}, "attachment; filename=$id.pgn.tar", 'api/pgns/: ID.pgn.tar');
open(my $tarfh, '<', \$r->{content}) or die;
my $tar = Archive::Tar->new($tarfh);
is_deeply([ map { $_->name } $tar ? $tar->get_files : () ], ["$id.$result_id.1.pgn.bz2"], 'a tar of the one PGN file');
ok($tar && $tar->get_content("$id.$result_id.1.pgn.bz2") eq $pgn, 'holding its bytes');

is_deeply(decode_json($http->get("$base/api/buildinfo/")->{content}),
	{ Weiss => { path => '', compilers => ['gcc>=10'], cpuflags => [], systems => ['Linux'], private => JSON::PP::false } },
	'api/buildinfo/: each engine\'s build settings');

# api/workload/ID/results|summary, OpenBench's fields.
sql('UPDATE openbench.machine SET last_seen = now() - interval \'1 hour\' WHERE host_id = 7');
is_deeply(decode_json($http->get("$base/api/workload/$id/results/")->{content}),
	{ results => [ { machine__id => 7, machine__user__username => 'alice', games => 120, LL => 2, LD => 10, DD => 30, DW => 12,
	    WW => 6, timeloss => 0, crashes => 0, active => JSON::PP::false } ] },
	'api/workload/ID/results/: the workload, its machine and owner, counts, not active');
my $summary = decode_json($http->get("$base/api/workload/$id/summary/")->{content});
is_deeply($summary->{summary}{user}, [ { key => 'alice', penta => '(2, 10, 30, 12, 6)', elo => "29.02 \x{b1} 42.42", pairs => 60, percent => '100.00' } ],
	'api/workload/ID/summary/: by user, with the Elo +- half the interval');
is($summary->{summary}{cpu_name}[0]{key}, 'Unknown', 'by CPU: a machine that named none is Unknown');
is_deeply(decode_json($http->get("$base/api/workload/$id/bogus/")->{content}), { error => 'Valid /query/ endpoints are: [ results, info, summary ]' },
	'api/workload/ID/bogus/: the valid queries');
is_deeply(decode_json($http->get("$base/api/workload/abc/results/")->{content}), { error => 'Requested Workload Id does not exist' },
	'api/workload/abc/results/: OpenBench\'s error');

# The lists of one account's tests and of the tests that passed.
$r = $http->get("$base/user/bob/");
like($r->{content}, qr{/test/$bobs/}, 'bob\'s tests list his test');
unlike($r->{content}, qr{/test/$made/}, 'not alice\'s');
sql("UPDATE openbench.test SET passed = true WHERE id = $id");
$r = $http->get("$base/greens/");
like($r->{content}, qr{/test/$id/}, 'greens: the test that passed');
unlike($r->{content}, qr{/test/$made/|/test/$bobs/}, 'not the others');
for my $case ([ '/user/nobody/', qr/there is no account nobody/ ], [ '/user/%3Cx%3E/', qr/&quot;&lt;x&gt;&quot; is not an account name/ ],
	[ '/greens/2/', qr/there is no page 2: the tests fill 1/ ])
{
	$r = $http->get("$base$case->[0]");
	is($r->{status}, 404, "GET $case->[0]: 404");
	like($r->{content}, $case->[1], "GET $case->[0] says why");
}

# The search page.
my $found = sub { my ($q) = @_; my $c = $http->get("$base/search/?$q")->{content}; return join(',', sort { $a <=> $b } $c =~ m{<a href="/test/([0-9]+)/">}g); };
is($found->('author=bob'), $bobs, 'search by author: bob\'s test');
is($found->('state=passed'), $id, 'search by state: the test that passed');
is($found->('words=FAST'), join(',', sort { $a <=> $b } $id, $made), 'search by a word of the branch names, any case');
is($found->('engine=Weiss&state=pending'), '', 'search: no pending test');
for my $case ([ 'state=king', qr/State must be one of any, pending, active, finished, passed, failed, not &quot;king&quot;/ ],
	[ 'author=a&author=b', qr/Author was given more than once/ ], [ 'words=' . ('x' x 65), qr/Each field holds at most 64 characters/ ])
{
	$r = $http->get("$base/search/?$case->[0]");
	is($r->{status}, 400, "search $case->[0]: 400");
	like($r->{content}, $case->[1], "search $case->[0] says why");
}
$r = $http->get("$base/search/?words=%3Cscript%3E");
unlike($r->{content}, qr/<script>/, 'search: words given as markup are shown as text');

# ---------------------------------------------------------------------------
# An SPSA tune: made on the site, served to a machine as OpenBench's worker
# asks for it (HTTP requests with the worker's fields), its reports
# checked against the perturbation the workload was given, its parameters
# moved, its api/spsa/ calls; and the attacks on each.
%jar = %alice_jar;
$r = browse('GET', '/tune/new/');
is($r->{status}, 200, 'the new tune form');
my $inputs = "Aggression, int, 50, 0, 100, 5, 0.002\nScale, float, 1.5, 1.0, 2.0, 0.1, 0.002\n";
my %tune = (csrf => token($r->{content}), engine => 'Weiss', dev_branch => '', dev_sha => 'c' x 40, dev_bench => '3000',
	dev_source => 'http://127.0.0.1/tune.zip', book => 'eight.epd', tc => 'N=2000', options => 'Threads=1 Hash=16',
	spsa_inputs => $inputs, iterations => 2, pairs_per => 4, alpha => 0.602, gamma => 0.101, a_ratio => 0.1,
	reporting_type => 'BATCHED', distribution_type => 'SINGLE', info => '');
$before = tests();
refusals('/tune/new/', 'a new tune', \%tune,
	[ 'no CSRF token', { csrf => undef }, 403, qr/no valid security token/ ],
	[ 'a start out of range', { spsa_inputs => "Aggression, int, 500, 0, 100, 5, 0.002" }, 400,
	  qr/Line 1: the start of Aggression \(500\) must be within \[0, 100\]/ ],
	[ 'min above max', { spsa_inputs => "Scale, float, 1, 2, 0, 0.1, 0.002" }, 400, qr/the min of Scale \(2\) must be below its max \(0\)/ ],
	[ 'an int with a fraction', { spsa_inputs => "Aggression, int, 50.5, 0, 100, 5, 0.002" }, 400, qr/Aggression is an int: its start, min and max must be whole numbers/ ],
	[ 'c_end of 0', { spsa_inputs => "Aggression, int, 50, 0, 100, 0, 0.002" }, 400, qr/c_end of Aggression must be above 0, not 0/ ],
	[ 'a huge number', { spsa_inputs => "Scale, float, 1, 0, 1e300, 0.1, 0.002" }, 400, qr/max must be a finite number within \+-1e12/ ],
	[ 'markup for a name', { spsa_inputs => "<script>, int, 1, 0, 2, 1, 0.002" }, 400, qr/&quot;&lt;script&gt;&quot; is not a UCI option name/ ],
	[ 'JSON for the parameters', { spsa_inputs => '{"Aggression": [50, 0, 100]}' }, 400, qr/Line 1: a parameter is .* \(7 fields\), not 3/ ],
	[ 'a name twice', { spsa_inputs => "$inputs\nScale, float, 1, 0, 2, 0.1, 0.002" }, 400, qr/Scale is named twice/ ],
	[ 'no parameters', { spsa_inputs => "\n" }, 400, qr/No parameters/ ],
	[ 'zero iterations', { iterations => 0 }, 400, qr/Iterations must be a whole number from 1 to 100000000, not &quot;0&quot;/ ],
	[ 'an unknown distribution', { distribution_type => 'EVERYWHERE' }, 400, qr/Distribution: SINGLE, MULTIPLE, not &quot;EVERYWHERE&quot;/ ]);
is(tests(), $before, 'none of them made a tune');
$r = browse('POST', '/tune/new/', \%tune);
is($r->{status}, 303, 'alice makes a tune');
my ($tune) = ($r->{headers}{location} // '') =~ m{^/tune/([0-9]+)/$};
ok($tune, 'it goes to the tune\'s page');
is(sql("SELECT t.type || ' ' || (t.dev_sha = t.base_sha) || ' ' || w.mode || ' ' || w.state || ' ' || r.iterations || ' ' || r.pairs_per
          FROM openbench.test t JOIN allot.workload w USING (id) JOIN openbench.spsa_run r ON r.test_id = t.id WHERE t.id = $tune"),
	'SPSA true spsa_single active 2 4', 'an SPSA tune of one commit against itself; allot\'s workload is spsa_single');
$r = browse('GET', "/tune/$tune/");
like($r->{content}, qr{<table id="parameters">.*<td>Aggression</td><td class="num">50\.0000</td>.*<td>Scale</td><td class="num">1\.5000</td>}s,
	'its page lists the parameters and their values');
is(browse('GET', "/test/$tune/")->{status}, 404, 'a tune is not at a test\'s path');
is(browse('GET', "/tune/$id/")->{status}, 404, 'nor a test at a tune\'s path');

# Two machines of alice's, as the worker registers them.
sub call { return worker_call($base, @_); }
my (%login, %work);
for my $name (qw(one two))
{
	my $w = call('clientWorkerInfo', username => 'alice', password => $alice_password,
		system_info => worker_info(machine_name => $name));
	ok($w->{machine_id}, "machine $name registers") or diag(explain($w));
	$login{$name} = [ machine_id => $w->{machine_id}, secret => $w->{secret} ];
}
# one is given the tune (the other tests blacklisted, and the one deleted
# above by hand, whose allot workload was left active), two alice's SPRT test
$work{one} = call('clientGetWorkload', @{ $login{one} }, blacklist => $made, blacklist => $bobs, blacklist => $gone)->{workload};
is($work{one}{test}{id}, $tune, 'machine one is given the tune');
$work{two} = call('clientGetWorkload', @{ $login{two} }, blacklist => $tune, blacklist => $bobs, blacklist => $gone)->{workload};
is($work{two}{test}{id}, $made, "machine two is given test $made");
my $w = $work{one};
is($w->{test}{type}, 'SPSA', 'the workload is an SPSA one');
is($w->{reporting_type}, 'BATCHED', 'reported in batches');
my $runners = $w->{distribution}{'runner-count'};
my %p = %{ $w->{spsa} };
is_deeply([ sort keys %p ], [qw(Aggression Scale)], 'its perturbation names each parameter');
is_deeply([ map { $p{$_}{index} } qw(Aggression Scale) ], [ 0, 1 ], 'with its index, which orders the worker\'s delta');
for my $n (qw(Aggression Scale))
{
	my $x = $p{$n};
	ok(@{ $x->{dev} } == $runners && @{ $x->{base} } == $runners && @{ $x->{flip} } == $runners,
		"$n: a dev value, a base value and a flip per match runner");
	ok((grep { $_ == $x->{flip}[0] } @{ $x->{flip} }) == $runners, "$n: SINGLE, the same flip for every runner");
}
my $s = $p{Scale};
ok(abs($s->{dev}[0] - $s->{base}[0] - 2 * $s->{c} * $s->{flip}[0]) < 1e-12, 'Scale, a float: dev and base 2c apart, in the flip\'s direction');
my $agg = $p{Aggression};
ok($agg->{dev}[0] == int($agg->{dev}[0]) && $agg->{dev}[0] >= 0 && $agg->{dev}[0] <= 100, 'Aggression, an int: whole values within its bounds');
is_deeply(decode_json(sql("SELECT spsa FROM openbench.result WHERE id = $w->{result}{id}")), $w->{spsa},
	'the perturbation is kept with the result, to check its report against');

# A report of 8 games, L D W 1 2 5: each delta r c flip (W - L), as the worker computes it.
my @one = (@{ $login{one} }, test_id => $tune, result_id => $w->{result}{id}, trinomial => '1 2 5', pentanomial => '0 0 1 2 1',
	crashes => 0, timelosses => 0, illegals => 0);
my @delta = map { $p{$_}{r} * $p{$_}{c} * $p{$_}{flip}[0] * 4 } qw(Aggression Scale);
my $params_now = sub { sql("SELECT string_agg(name || '=' || value, ' ' ORDER BY index) FROM openbench.spsa_parameter WHERE test_id = $tune") };
is($params_now->(), 'Aggression=50 Scale=1.5', 'the tune starts at its start values');
for my $case (
	[ 'the flip reversed', encode_json([ -$delta[0], $delta[1] ]), qr/spsa_delta\[0\] is .*, but this workload's games give/ ],
	[ 'a huge move', encode_json([ $delta[0], 1e9 ]), qr/spsa_delta\[1\] is 1000000000, but this workload's games give/ ],
	[ 'one number short', encode_json([ $delta[0] ]), qr/spsa_delta must hold 2 numbers, one per parameter/ ],
	[ 'an infinity', '[1e400, 0]', qr/spsa_delta\[0\] is not a finite number/ ],
	[ 'an object', '{"Aggression": 100}', qr/spsa_delta must hold 2 numbers/ ],
	[ 'strings', '["1", "2"]', qr/spsa_delta\[0\] is not a finite number/ ],
	[ 'not JSON', '[1, 2', qr/^Bad Request: spsa_delta must be a JSON list of numbers, one per parameter, not "\[1, 2"$/ ],
	[ 'no delta', '', qr/^Bad Request: spsa_delta must be a JSON list of numbers/ ],
	[ 'a delta too long', '[' . join(',', (0) x 5000) . ']', qr/^Bad Request: spsa_delta/ ])
{
	my ($what, $text, $re) = @$case;
	my $answer = call('clientSubmitResults', @one, spsa_delta => $text);
	like($answer->{error} // '', $re, "a report with $what is refused, saying why");
}
is($params_now->() . ' ' . sql("SELECT games FROM openbench.test WHERE id = $tune"), 'Aggression=50 Scale=1.5 0',
	'none of them moved a parameter or counted a game');
# Reports for a workload the machine was not given.
like(call('clientSubmitResults', @{ $login{two} }, @one[4 .. $#one], spsa_delta => encode_json(\@delta))->{error} // '',
	qr/result $w->{result}{id} of test $tune is not machine $login{two}[1]'s workload/,
	'machine two reporting SPSA results for machine one\'s workload is refused');
like(call('clientSubmitResults', @{ $login{two} }, test_id => $made, result_id => $work{two}{result}{id}, trinomial => '1 2 5',
	pentanomial => '0 0 1 2 1', crashes => 0, timelosses => 0, illegals => 0, spsa_delta => '[0.5]')->{error} // '',
	qr/^Bad Request: test $made is not an SPSA tune: its reports carry no spsa_delta$/, 'an SPSA delta for an SPRT test is refused');
is(sql("SELECT games FROM openbench.test WHERE id = $made"), '0', 'and counts nothing');

is_deeply(call('clientSubmitResults', @one, spsa_delta => encode_json(\@delta)), {}, 'the true report is taken');
my %moved = map { split /=/ } split / /, $params_now->();
ok(abs($moved{Aggression} - (50 + $delta[0])) < 1e-9 && abs($moved{Scale} - (1.5 + $delta[1])) < 1e-9,
	'each parameter moved by its delta') or diag("$moved{Aggression} $moved{Scale} @delta");
# The next 8 games reach the tune's 2 x 4 x 2 = 16: it stops.
is_deeply(call('clientSubmitResults', @one, spsa_delta => encode_json(\@delta)), { stop => JSON::PP::true },
	'the report that completes its iterations stops the tune');
is(sql("SELECT t.games || ' ' || t.finished_by || ' ' || coalesce(t.passed::text, 'neither') || ' ' || w.state
          FROM openbench.test t JOIN allot.workload w USING (id) WHERE t.id = $tune"), '16 spsa neither finished',
	'finished by its iterations, neither passed nor failed, in allot too');
is(sql("SELECT count(*) FROM openbench.submission s JOIN openbench.result r ON r.id = s.result_id
         WHERE r.test_id = $tune AND s.counted AND cardinality(s.spsa_delta) = 2"), '2', 'both reports kept with their deltas');

# OpenBench's api/spsa/ calls.
$r = $http->get("$base/api/spsa/$tune/inputs/");
is($r->{content}, "Aggression, int, 50, 0, 100, 5, 0.002\nScale, float, 1.5, 1, 2, 0.1, 0.002", 'api/spsa/ID/inputs/: the parameters as given');
like($r->{headers}{'content-type'}, qr{^text/plain}, 'as text');
%moved = map { split /=/ } split / /, $params_now->();
like($http->get("$base/api/spsa/$tune/outputs/")->{content}, qr/^Aggression, ${\ sprintf('%.0f', $moved{Aggression}) }\nScale, 1\.[0-9]+$/,
	'api/spsa/ID/outputs/: the values now, the int rounded');
like($http->get("$base/api/spsa/$tune/digest/")->{content}, qr/^Name,Curr,Start,Min,Max,C,C_end,R,R_end\nAggression,[0-9.]+,50,0,100,/,
	'api/spsa/ID/digest/: OpenBench\'s columns');
my $pert = decode_json($http->get("$base/api/spsa/$tune/perturbation/")->{content});
is(scalar @{ $pert->{perturbation}{Scale}{flip} // [] }, 4, 'api/spsa/ID/perturbation/: one drawn for 4 runners');
is(sql("SELECT count(*) FROM openbench.result WHERE test_id = $tune"), '1', 'and kept nowhere');
for my $case ([ "/api/spsa/$id/inputs/", 'Requested Workload is not an SPSA tune' ], [ '/api/spsa/99999/inputs/', 'Requested Workload Id does not exist' ],
	[ "/api/spsa/$tune/secrets/", 'Valid /query/ endpoints are: [ inputs, outputs, digest, perturbation ]' ],
	[ '/api/spsa/-1/inputs/', 'Requested Workload Id does not exist' ])
{
	is_deeply(decode_json($http->get("$base$case->[0]")->{content}), { error => $case->[1] }, "GET $case->[0]: OpenBench's error");
}

# api/workload/ID/info/ and api/networks/ENGINE/, OpenBench's fields.
my $info = decode_json($http->get("$base/api/workload/$id/info/")->{content})->{info};
is_deeply({ map { $_ => $info->{$_} } qw(id test_mode elolower eloupper games finished book_name dev_time_control) },
	{ id => $id, test_mode => 'SPRT', elolower => 0, eloupper => 5, games => 120, finished => JSON::PP::true,
	  book_name => 'eight.epd', dev_time_control => '8.0+0.08' }, 'api/workload/ID/info/: the test with OpenBench\'s field names');
is_deeply([ $info->{dev}{sha}, $info->{dev}{bench}, $info->{penta} ], [ 'a' x 40, 1000, [ 2, 10, 30, 12, 6 ] ],
	'its engines and counts');
is(decode_json($http->get("$base/api/workload/$tune/info/")->{content})->{info}{test_mode}, 'SPSA', 'the tune\'s info: SPSA');
is_deeply(decode_json($http->get("$base/api/networks/Weiss/")->{content}), { default => undef, networks => [] }, 'api/networks/Weiss/: none');
is_deeply(decode_json($http->get("$base/api/networks/Nope/")->{content}), { error => 'Engine not found. Check /api/config/ for a full list' },
	'api/networks/ of an unknown engine: OpenBench\'s error');

# bob may not act on alice's tune.
%alice_jar = %jar;
%jar = ();
browse('POST', '/login/', { username => 'bob', password => $bob_password, csrf => token(browse('GET', '/login/')->{content}) });
$r = act($tune, 'restart');
is($r->{status}, 404, 'bob: restart through a test\'s path: there is no such test');
$r = browse('POST', "/tune/$tune/restart/", { csrf => token(browse('GET', '/index/')->{content}) });
is($r->{status}, 403, 'bob cannot restart alice\'s tune');
like($r->{content}, qr/Tune $tune is not yours: its author or an approver may restart it/, 'and is told why');
is(sql("SELECT finished_by FROM openbench.test WHERE id = $tune"), 'spsa', 'it stays finished');

# ---------------------------------------------------------------------------
# One's own account: the e-mail address and the password.
%jar = ();
is(browse('GET', '/profile/')->{status}, 303, 'the profile page wants a login');
my %other = %alice_jar;   # alice logged in elsewhere too
%jar = ();
browse('POST', '/login/', { username => 'alice', password => $alice_password, csrf => token(browse('GET', '/login/')->{content}) });
my %elsewhere = %jar;
my $elsewhere_csrf = token(browse('GET', '/index/')->{content});
%jar = %other;
$r = browse('GET', '/profile/');
is($r->{status}, 200, 'alice\'s profile page');
like($r->{content}, qr/You are alice, an operator/, 'it says who she is');
my $profile = token($r->{content});
my $hash_before = sql(q{SELECT encode(hash, 'hex') FROM openbench.account WHERE name = 'alice'});
refusals('/profile/', 'a profile change', { csrf => $profile, change => 'password', current => $alice_password,
		password => 'a new long password', password2 => 'a new long password' },
	[ 'no CSRF token', { csrf => undef }, 403, qr/no valid security token/ ],
	[ 'another session\'s CSRF token', { csrf => $elsewhere_csrf }, 403,
	  qr/no valid security token/ ],
	[ 'a wrong current password', { current => 'not her password' }, 403, qr/The current password is wrong/ ],
	[ 'new passwords that differ', { password2 => 'something else' }, 400, qr/The two new passwords differ/ ],
	[ 'a short new password', { password => 'short', password2 => 'short' }, 400, qr/A password has 8 to 1024 characters/ ],
	[ 'an e-mail address of markup', { change => 'email', email => '<b>@x' }, 400, qr/&quot;&lt;b&gt;\@x&quot; is not an e-mail address/ ],
	[ 'an unknown change', { change => 'role' }, 400, qr/Change: EMAIL, PASSWORD, not &quot;role&quot;/ ]);
is(sql(q{SELECT encode(hash, 'hex') || ' ' || coalesce(email, '-') FROM openbench.account WHERE name = 'alice'}), "$hash_before -",
	'none of them changed her account');
$r = browse('POST', '/profile/', { csrf => $profile, change => 'email', email => 'alice@example.org' });
like($r->{content}, qr/Your e-mail address is now alice\@example\.org/, 'alice sets her e-mail address');
is(sql(q{SELECT email FROM openbench.account WHERE name = 'alice'}), 'alice@example.org', 'it is kept');
unlike($http->get("$base/users/")->{content}, qr/alice\@example\.org/, 'and not shown to others');
$r = browse('POST', '/profile/', { csrf => $profile, change => 'password', current => $alice_password,
	password => 'a new long password', password2 => 'a new long password' });
like($r->{content}, qr/Your password is changed; your other sessions are logged out/, 'alice changes her password');
is(call('clientWorkerInfo', username => 'alice', password => $alice_password, system_info => worker_info())->{error}, 'Bad Credentials',
	'a worker with the old password is refused');
ok(call('clientWorkerInfo', username => 'alice', password => 'a new long password', system_info => worker_info())->{machine_id},
	'the new one works');
%alice_jar = %jar;
%jar = %elsewhere;
is(browse('GET', '/profile/')->{status}, 303, 'her other session was logged out');
%jar = %alice_jar;
is(browse('GET', '/profile/')->{status}, 200, 'this one was not');

%jar = %alice_jar;
$r = browse('POST', '/logout/', { csrf => token(browse('GET', '/index/')->{content}) });
is($r->{status}, 303, 'alice logs out');
ok(!defined $jar{ob_session}, 'her session cookie is cleared');
is(sql("SELECT count(*) FROM openbench.session s JOIN openbench.account a ON a.id = s.account_id WHERE a.name = 'alice'"),
	'0', 'and her session is gone from the database');

# ---------------------------------------------------------------------------
# The same in Chromium, headless, as a person does it (test/t/DevToolsPage.pm
# drives it through the DevTools protocol): register; once an operator
# enables the account, log in, make a test from branch names, see it on the
# index, stop it, and download a finished test's PGNs.
my $chromium_started = Time::HiRes::time();
my $click = sub { "setTimeout(() => document.querySelector('$_[0]').click(), 0)" };
my $fill = sub { my (%f) = @_; join('', map { "document.querySelector('[name=$_]').value = " . encode_json([ $f{$_} ]) . "[0]; " } sort keys %f) };
my $browser = eval {
	evaluate_in_pages("$base/register/", 1280, 900,
		$fill->(username => 'erin', password => 'erin\'s long password', password2 => 'erin\'s long password')
		  . $click->('main button[type=submit]') . "; 'registering'",
		q{document.querySelector('#message').textContent});
} // [ "error: $@" ];
like($browser->[1] // $browser->[0], qr/Account erin is registered\. An operator enables it/, 'Chromium: erin registers');
is((admin(qw(enable-user erin)))[0], 0, 'an operator enables erin');
my $downloads = "$work/downloads";
make_path($downloads);
$browser = eval {
	local $DevToolsPage::download_dir = $downloads;
	evaluate_in_pages("$base/login/", 1280, 900,
		$fill->(username => 'erin', password => 'erin\'s long password') . $click->('main button[type=submit]') . "; 'logging in'",
		q{(() => { const me = document.querySelector('#me').textContent; location.href = '/test/new/'; return me; })()},
		$fill->(dev_branch => 'faster', base_branch => 'master', tc => '8+0.08', bounds => '[0, 5]', info => 'from Chromium')
		  . $click->('main button[type=submit]') . "; 'creating'",
		q|(() => { const r = [location.pathname, document.querySelector('#status').textContent.replace(/\s+/g, ' ')]; |
		  . $click->('#stop') . q|; return r; })()|,
		q{(() => { const r = document.querySelector('#status').textContent.replace(/\s+/g, ' '); location.href = '/index/'; return r; })()},
		qq{(() => { const rows = [...document.querySelectorAll('#tests tr')].map((tr) => [...tr.cells].map((c) => c.textContent.trim()).join('|'));
		  location.href = '/test/$id/'; return rows; })()},
		q|(() => { const href = document.querySelector('#pgns').getAttribute('href'); |
		  . $click->('#pgns') . q|; return href; })()|);
} // [ "error: $@" ];
diag($browser->[0]) if ($browser->[0] // '') =~ /^error: /;
is($browser->[1], 'erin', 'Chromium: erin logs in; the menu names her');
my ($browser_test) = ($browser->[3][0] // '') =~ m{^/test/([0-9]+)/$};
ok($browser_test, 'she makes a test from branch names, and is taken to its page');
like($browser->[3][1] // '', qr/Status: pending/, 'it waits for approval (erin is a developer)');
like($browser->[4] // '', qr/Status: stopped at .* \(user\)/, 'she stops it');
ok((grep { /^$browser_test\|Weiss\|faster\|master\|8\.0\+0\.08\|.*\|stopped\|erin$/s } @{ $browser->[5] // [] }), 'the index lists it, stopped')
  or diag(explain($browser->[5]));
is($browser->[6], "/api/pgns/$id/", "test $id offers its PGNs");
my $tar_file = "$downloads/$id.pgn.tar";
ok(-s $tar_file, "Chromium downloads $id.pgn.tar");
my $downloaded = Archive::Tar->new($tar_file);
ok($downloaded && $downloaded->get_content("$id.$result_id.1.pgn.bz2") eq $pgn, 'holding the test\'s PGN');
is(sql("SELECT a.name || ' ' || t.dev_sha || ' ' || t.finished_by || ' ' || t.info FROM openbench.test t JOIN openbench.account a ON a.id = t.author_id
         WHERE t.id = " . ($browser_test // 0)), "erin $faster_sha user from Chromium", 'the test is erin\'s, resolved and stopped');
is(sql("SELECT name FROM allot.workload WHERE id = " . ($browser_test // 0)), 'Weiss faster vs master (2)',
	'alice\'s test has the same branches: allot\'s unique workload name gets a number');
note(sprintf('the Chromium part took %.1f s', Time::HiRes::time() - $chromium_started));

$daemon->signal('TERM');
$daemon->finish;
$server->signal('TERM');
$server->finish;
my $log = PostgreSQL::Test::Utils::slurp_file("$work/server.log");
unlike($log, qr/internal error/, 'the server logged no internal error') or diag($log);
done_testing();
