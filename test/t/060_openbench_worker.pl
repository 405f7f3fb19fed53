# OpenBench's own worker gets its workloads from allot (examples/openbench).
#
# Two unmodified OpenBench workers (client.py at a pinned commit, not in the
# repository: see examples/openbench/README.md, "Testing") play two
# tests served by the front end over allot, in a network namespace of their
# own that holds only a loopback interface: the front end, a file server
# standing in for GitHub (the fastchess and weiss zips, an opening book) and
# the workers run in it; PostgreSQL is reached through its unix socket.
# Each worker runs in a PID namespace of its own as well: after each
# workload a worker kills every process whose command line names fastchess
# or its engines, and so would kill the other's games.
#
# The tests: weiss 60c5137 (dev) against weiss 3ca09c2 (base) at 2,000
# nodes a move, workload size 2 (8 games a workload on a 1-thread worker):
#   SPRT   throughput 1500, normalised Elo [0, 200], alpha = beta = 0.25;
#   GAMES  throughput 1000, 8 games.
# The SPRT test is made as an engine developer makes one: in headless
# Chromium (DevToolsPage.pm), on the web site (a second server.js, outside
# the namespace), from branch names of a git repository holding the two
# commits' trees, which the site resolves through git daemon to their
# commits, benches and source zips; an approver approves it on its page.
# The developer then watches its page while the workers play it (the Elo
# and LLR move, it stops by the SPRT) and downloads its PGNs, which must
# be the ones uploaded.
# fastchess is built once per run (at -O0: it only referees; set
# ALLOT_OPENBENCH_CACHE=DIR to keep it between runs) and copied into both
# workers' folders; each worker builds the engines itself from the zips.
#
# It passes when, from what the server recorded:
#   - both workers registered as allot hosts with what they said of
#     themselves (threads, sockets, compilers, CPU flags, tokens for the
#     private engine, noisy, focus), their secrets stored only as hashes;
#   - every workload a worker got had a non-zero probability in the
#     explain_assignment logged beside it, and both tests were played;
#   - every report's games are the games of the uploaded PGN, pair by pair,
#     and each test's trinomial and pentanomial totals are the sum of the
#     reports counted for it; the SPRT test stopped by its LLR bounds (its
#     LLR is the front end's on its totals, and the front end's LLR is
#     OpenBench's on reference figures), the GAMES test at 8 games or more;
#     both are finished in allot;
#   - each worker was told to stop, then that nothing was left ({}), and,
#     after the operator's Ctrl-C (SIGINT: --fleet would idle 60 s first),
#     exited with status 0 and no error in its log.
# Then lies, over HTTP from inside the namespace: a machine id with another
# machine's secret, results for a test or a result the machine was not
# given, negative, inconsistent and huge game counts, a PGN for another
# result, wrong passwords, a stale client version, an oversized body: each
# gets OpenBench's {"error": ...} and changes no table of allot or the
# front end; a true report afterwards is counted (the positive control).
# Last, an SPSA tune (MultiPV and NoobBookLimit of weiss 60c5137 against
# itself): w1's worker, started again in its folder (its engines are built)
# with 2 threads, since an SPSA game takes twice the engine's threads, plays
# it until a report has W != L; then each parameter's value is its start
# moved by every counted report's spsa_delta in turn, kept within its min
# and max, and at least one moved.
use strict;
use warnings FATAL => 'all';
use Archive::Tar;
use Cwd qw(abs_path);
use Digest::SHA qw(sha256_hex);
use File::Copy qw(copy);
use File::Path qw(make_path);
use FindBin;
use lib $FindBin::RealBin;
use DevToolsPage qw(evaluate_in_pages watch_page);
use FrontEnds qw(install_front_ends);
use IO::Socket::INET;
use IO::Uncompress::Bunzip2 qw(bunzip2 $Bunzip2Error);
use IPC::Run ();
use JSON::PP;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $started = time;
my $DEV = '60c513742276cc6696e0615a06a10016bcdd0e6d';
my $BASE = '3ca09c28f533590d6bb7de67281f82ba9f6adedd';
my %BENCH = ($DEV => 10408355, $BASE => 10721483);
my $PASSWORD = 'correct horse battery';

sub slurp { my ($f) = @_; return -e $f ? PostgreSQL::Test::Utils::slurp_file($f) : ''; }
sub elapsed { return sprintf('%.0f s', time - $started); }

# ---------------------------------------------------------------------------
# The pinned third-party files.  They are not in the repository: the first
# of ALLOT_OPENBENCH_DIR, ../shared/openbench beside the checkout and the
# cache scripts/fetch_openbench.sh fills that holds them as pinned
# (scripts/openbench_fixtures.py check).  Without them the test is skipped,
# saying what is missing and how to get it; under CI=true it fails.
# (scripts/test.sh passes the checkout's root as ALLOT_REPO: it tests a copy.)
# (The checkout may sit where this test's user cannot resolve its path, say
# below root's own mktemp -d: then it is taken as given.)
my $repo = $ENV{ALLOT_REPO} // "$ENV{TESTDIR}/..";
$repo = abs_path($repo) // $repo;
# The tree this test runs from (a copy its user can read) for the scripts.
my $tree = abs_path("$ENV{TESTDIR}/..");
my $cache_root = $ENV{ALLOT_CACHE}
  // ($> == 0 ? '/var/cache/allot' : ($ENV{XDG_CACHE_HOME} // "$ENV{HOME}/.cache") . '/allot');
my ($shared, @why_not);
for my $dir (grep { defined } $ENV{ALLOT_OPENBENCH_DIR}, (abs_path("$repo/..") // "$repo/..") . '/shared/openbench',
	"$cache_root/openbench")
{
	if (!-d $dir)
	{
		push @why_not, "$dir: no such directory";
		next;
	}
	my $problems = '';
	if (IPC::Run::run([ '/usr/bin/python3', "$tree/scripts/openbench_fixtures.py", 'check', $dir ],
			'<', \undef, '>', \$problems, '2>&1'))
	{
		$shared = $dir;
		last;
	}
	chomp $problems;
	$problems =~ s/\n/; /g;
	push @why_not, "$dir: $problems";
}
if (!defined $shared)
{
	my $why = "OpenBench's worker, fastchess and weiss (third-party, not in the repository) are not here ("
	  . join('; ', @why_not) . '): scripts/fetch_openbench.sh fetches them (needs github.com), '
	  . 'or set ALLOT_OPENBENCH_DIR';
	BAIL_OUT($why) if ($ENV{CI} // '') eq 'true';
	plan skip_all => $why;
}
my ($fastchess_zip) = glob("$shared/fastchess-*.zip");
my %engine_zip = map { $_ => "$shared/weiss-$_.zip" } ($DEV, $BASE);

# Whatever way this test ends (a failure, a time limit's SIGTERM, Ctrl-C),
# END below stops what it started; and each long-lived process it starts is
# tied to it (@tied below), so that not even a SIGKILL of this script leaves
# one behind: a worker is PID 1 of its own PID namespace, which ignores
# SIGTERM, and it would retry a vanished server for ever.
# (exit, not die: an eval the signal lands in would swallow a die.)
$SIG{$_} = sub { diag("killed by SIG$_[0]"); exit 1 } for qw(TERM INT HUP);

# Tools: installed by scripts/common.sh (APT_PACKAGES, ensure_node).
sub tool
{
	my ($name) = @_;
	for my $dir (split(/:/, $ENV{PATH} // ''), '/usr/sbin', '/sbin', '/usr/bin')
	{
		return "$dir/$name" if -x "$dir/$name";
	}
	return undef;
}
my %tool;
for my $name (qw(node npm make gcc g++ unshare nsenter ip setpriv))
{
	$tool{$name} = tool($name);
	ok($tool{$name}, "$name is installed") or BAIL_OUT("$name is missing: run scripts/test.sh, which installs it");
}
# Debian's python3 and modules: OpenBench's worker needs requests, psutil
# and cpuinfo (py-cpuinfo).
$tool{python} = '/usr/bin/python3';
my $pyout = '';
ok(IPC::Run::run([ $tool{python}, '-c', 'import requests, psutil, cpuinfo' ], '>', \$pyout, '2>&1'),
	'/usr/bin/python3 has requests, psutil and cpuinfo')
  or BAIL_OUT("OpenBench's worker cannot run: $pyout (scripts/test.sh installs python3-requests, "
	  . 'python3-psutil and python3-cpuinfo)');

# run_cmd(ENV, CMD...): output (stdout and stderr) and success of CMD.
sub run_cmd
{
	my ($env, @cmd) = @_;
	my ($out, $err) = ('', '');
	local @ENV{ keys %$env } = values %$env;
	my $ok = IPC::Run::run(\@cmd, '<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(600));
	return ($out . $err, $ok);
}

my $work = PostgreSQL::Test::Utils::tempdir('openbench');

# ---------------------------------------------------------------------------
# fastchess, built once (scripts/build_fastchess.sh): scripts/test.sh builds
# it into the cache before the TAP files start; without a build of this zip
# there, in the background while the rest is set up.
my $cache = $ENV{ALLOT_OPENBENCH_CACHE};
my $fastchess_key = substr(sha256_hex(slurp($fastchess_zip)), 0, 16);
my $fastchess = defined $cache ? "$cache/fastchess-$fastchess_key-O0" : "$work/fastchess";
my %pid;
my $fastchess_log = "$work/fastchess-build.log";
my $fastchess_build;
if (-x $fastchess)
{
	note "fastchess from the cache: $fastchess";
}
else
{
	$fastchess_build = IPC::Run::start([ 'bash', "$tree/scripts/build_fastchess.sh", $fastchess_zip, $fastchess ],
		'<', \undef, '>', $fastchess_log, '2>&1', init => sub { $ENV{TMPDIR} = $work });
}

# ---------------------------------------------------------------------------
# The database: allot with OpenBench's 2024 profile, the front end's login
# (allot_web, nothing else), the operator who owns schema openbench.
my $node = PostgreSQL::Test::Cluster->new('openbench');
$node->init;
$node->start;
sub sql { return $node->safe_psql('postgres', $_[0]); }
sql(q{
CREATE EXTENSION allot;
CREATE ROLE openbench_web LOGIN IN ROLE allot_web;
CREATE ROLE farm_admin LOGIN IN ROLE allot_admin;
CREATE SCHEMA openbench AUTHORIZATION farm_admin;
ALTER DATABASE postgres SET allot.count_requester = on;
ALTER DATABASE postgres SET allot.repeat_upper = 1.25;
});
my %pg = (PGHOST => $node->host, PGPORT => $node->port, PGDATABASE => 'postgres');
my $src = "$ENV{TESTDIR}/../examples/openbench";
my ($out, $ok) = run_cmd({ %pg, PGUSER => 'farm_admin' }, $node->installed_command('psql'), '-X', '-q',
	'-v', 'web=openbench_web', '-f', "$src/setup.sql");
ok($ok, 'setup.sql, run by the operator, creates the front end\'s schema') or diag($out);
($out, $ok) = run_cmd({ %pg, PGUSER => 'postgres' }, $node->installed_command('psql'), '-X', '-q',
	'-v', 'web=openbench_web', '-f', "$src/setup.sql");
ok(!$ok && $out =~ /run setup\.sql as the operator, not as the superuser/,
	'setup.sql refuses a superuser: its functions would run as one');

# The front end, installed as a reader installs it (FrontEnds.pm), in the
# work directory.
my ($examples, $installed, $npm_said) = install_front_ends($work, $tool{npm});
ok($installed, 'npm ci installs the front ends\' packages from examples/package-lock.json') or diag($npm_said);
my $fe = "$examples/openbench";

# The SPRT arithmetic against OpenBench's (OpenBench/stats.py, the
# figures it gives for these counts).
($out) = run_cmd({}, $tool{node}, '-e', qq{
	const s = require('$fe/sprt.js');
	console.log(JSON.stringify([
		s.pentanomialLLR([39, 8843, 26675, 9240, 44], 0.5, 2.5),
		s.pentanomialLLR([0, 0, 2, 4, 2], 0, 50),
		s.pentanomialLLR([2, 3, 5, 7, 1], 0, 100),
		s.trinomialLLR([22569, 44137, 22976], 0.5, 2.5),
		s.trinomialLLR([2, 4, 10], 0, 10),
		s.llrBounds(0.05, 0.05).upper]));});
my @llr = @{ decode_json($out) };
my @reference = (2.9416752079894044, 0.9972159086606192, -0.6528316726949874, 0.9757721682721865,
	0.3021758541826178, log(0.95 / 0.05));
for my $i (0 .. $#reference)
{
	ok(abs($llr[$i] - $reference[$i]) < 1e-9, "LLR $i: $llr[$i], OpenBench's $reference[$i]");
}

# ---------------------------------------------------------------------------
# The network namespace: a holder process owns it; the front end, the file
# server and the workers enter it.
END
{
	local $?;
	$fastchess_build->kill_kill if $fastchess_build;
	for my $name (qw(w1 w2 w3 server site git files holder))
	{
		my $p = $pid{$name} or next;
		kill 'TERM', $p;
		my $deadline = time + 10;
		sleep 0.1 while time < $deadline && waitpid($p, POSIX::WNOHANG) == 0;
		if (waitpid($p, POSIX::WNOHANG) == 0)
		{
			kill 'KILL', $p;
			waitpid $p, 0;
		}
	}
}

sub spawn
{
	my ($name, $log, $env, $dir, @cmd) = @_;
	my $p = fork() // die "fork: $!";
	if ($p == 0)
	{
		@ENV{ keys %$env } = values %$env;
		chdir $dir or POSIX::_exit(125);
		open STDOUT, '>>', $log or POSIX::_exit(126);
		open STDERR, '>&', \*STDOUT or POSIX::_exit(126);
		open STDIN, '<', '/dev/null' or POSIX::_exit(126);
		exec @cmd or POSIX::_exit(127);
	}
	$pid{$name} = $p;
	return $p;
}

# A process started as spawn(..., @tied, CMD) gets SIGKILL when this script
# ends, however it ends.  Set after unshare or nsenter has changed the
# process's credentials, which clears a parent-death signal.
my @tied = ($tool{setpriv}, '--pdeathsig', 'KILL', '--');
my $ready = "$work/netns-ready";
spawn('holder', "$work/holder.log", {}, $work, $tool{unshare}, '--user', '--map-root-user', '--net', '--',
	@tied, '/bin/sh', '-c', qq{"$tool{ip}" link set lo up && touch "$ready" && exec sleep 900});
{
	my $deadline = time + 120;
	sleep 0.05 while !-e $ready && time < $deadline;
	ok(-e $ready, 'a network namespace with only loopback is up') or BAIL_OUT(slurp("$work/holder.log"));
}
my @in_ns = ($tool{nsenter}, '--target', $pid{holder}, '--user', '--net', '--preserve-credentials', '--', @tied);

# The file server: GitHub's part, on loopback.  The worker ends the URL of
# fastchess's zip with a slash, as it does every URL it builds.
my $files = "$work/files";
make_path("$files/fastchess/archive");
copy($fastchess_zip, "$files/fastchess/archive/1525c4b.zip") or die "copy: $!";
# A small book: the position after each of eight first moves.
my $book = join '', map { "$_ - 0 1\n" } (
	'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq', 'rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq',
	'rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq', 'rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq',
	'rnbqkbnr/pppppppp/8/8/8/6P1/PPPPPP1P/RNBQKBNR b KQkq', 'rnbqkbnr/pppppppp/8/8/8/1P6/P1PPPPPP/RNBQKBNR b KQkq',
	'rnbqkbnr/pppppppp/8/8/5P2/8/PPPPP1PP/RNBQKBNR b KQkq', 'rnbqkbnr/pppppppp/8/8/8/4P3/PPPP1PPP/RNBQKBNR b KQkq');
PostgreSQL::Test::Utils::append_to_file("$work/eight.epd", $book);
($out, $ok) = run_cmd({}, $tool{python}, '-m', 'zipfile', '-c', "$files/eight.epd.zip", "$work/eight.epd");
ok($ok, 'the book is zipped') or diag($out);
my $fs_port = 9000 + int(rand(1000));
my $fs = "http://127.0.0.1:$fs_port";
my $file_server = q{
import http.server, os, sys
os.chdir(sys.argv[1])
class Files(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, p):
        return super().translate_path(p.split('?', 1)[0].rstrip('/') or '/')
    def log_message(self, fmt, *args):
        sys.stdout.write('%s\n' % (fmt % args)); sys.stdout.flush()
http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[2])), Files).serve_forever()
};
spawn('files', "$work/files.log", {}, $work, @in_ns, $tool{python}, '-c', $file_server, $files, $fs_port);

# The engine's repository, as a developer's forge holds it: master is
# weiss 3ca09c2's tree and branch "faster" weiss 60c5137's, each commit's
# message naming its bench.  git daemon serves it on loopback (outside the
# namespace: only the web site's server resolves branches); the file server
# serves each commit's source zip, as GitHub's archive/SHA.zip.
my $served = "$work/served";
my $weiss_git = "$served/weiss.git";
my %git_env = (HOME => $work, GIT_CONFIG_NOSYSTEM => 1, GIT_AUTHOR_NAME => 'dev', GIT_AUTHOR_EMAIL => 'dev@example.org',
	GIT_COMMITTER_NAME => 'dev', GIT_COMMITTER_EMAIL => 'dev@example.org');
sub git
{
	my $gout = '';
	local @ENV{ keys %git_env } = values %git_env;
	IPC::Run::run([ 'git', "--git-dir=$weiss_git", @_ ], '<', \undef, '>', \$gout, '2>&1') or die "git @_: $gout";
	chomp $gout;
	return $gout;
}
make_path($served);
git(qw(init --quiet --bare -b master));
my %branch_sha;
for ([ master => $BASE, "Base\n\nBench: $BENCH{$BASE}" ], [ faster => $DEV, "Search faster\n\nBench: $BENCH{$DEV}" ])
{
	my ($branch, $from, $message) = @$_;
	my $tree = "$work/tree-$branch";
	($out, $ok) = run_cmd({}, $tool{python}, '-m', 'zipfile', '-e', $engine_zip{$from}, $tree);
	ok($ok, "weiss $from unzipped") or diag($out);
	my ($top) = glob("$tree/*");
	git('symbolic-ref', 'HEAD', "refs/heads/$branch");
	git('branch', $branch, 'master') if $branch ne 'master';
	git("--work-tree=$top", qw(add --all .));
	git("--work-tree=$top", qw(commit --quiet -m), $message);
	$branch_sha{$branch} = git(qw(rev-parse HEAD));
	git(qw(archive --format=zip), "--prefix=weiss-$branch_sha{$branch}/", '-o', "$files/weiss-$branch_sha{$branch}.zip",
		$branch_sha{$branch});
}
git(qw(symbolic-ref HEAD refs/heads/master));
my $git_port = PostgreSQL::Test::Cluster::get_free_port();
my $exec_path = `git --exec-path`;
chomp $exec_path;
# git-daemon itself (not "git daemon", whose child would outlive a kill)
spawn('git', "$work/git-daemon.log", {}, $work, @tied, "$exec_path/git-daemon", '--export-all', '--reuseaddr',
	'--listen=127.0.0.1', "--port=$git_port", "--base-path=$served", $served);
{
	my $deadline = time + 120;
	sleep 0.2 while time < $deadline && !IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $git_port, Proto => 'tcp');
}

# The front end.  Any port will do: nothing else listens in the namespace.
my $port = 8000 + int(rand(1000));
my $url = "http://127.0.0.1:$port";
my $data = "$work/data";
my $server_log = "$work/server.log";
spawn('server', $server_log,
	{ %pg, PGUSER => 'openbench_web', PORT => $port, HOST => '127.0.0.1', DATA_DIR => $data,
	  FASTCHESS_REPO_URL => "$fs/fastchess", FASTCHESS_REPO_REF => '1525c4b', MAX_FORM_BYTES => 262144 },
	$work, @in_ns, $tool{node}, "$fe/server.js");
{
	my $deadline = time + 120;
	sleep 0.1 while slurp($server_log) !~ /serving/ && time < $deadline
	  && waitpid($pid{server}, POSIX::WNOHANG) == 0;
	like(slurp($server_log), qr/serving OpenBench workers at \Q$url\E\//, "the front end serves $url")
	  or BAIL_OUT(slurp($server_log));
}
like(slurp($server_log), qr/selection: OpenBench's 2024 profile \(allot\.count_requester = on, allot\.repeat_upper = 1\.25\)/,
	'with OpenBench\'s 2024 selection profile');

# The web site, as people reach it: a second server.js over the same
# database and files, outside the namespace, whose resolver reads the
# engine's repository with git; the zips it names are the file server's.
my $site_port = PostgreSQL::Test::Cluster::get_free_port();
my $site = "http://127.0.0.1:$site_port";
my $site_log = "$work/site.log";
spawn('site', $site_log,
	{ %pg, PGUSER => 'openbench_web', PORT => $site_port, HOST => '127.0.0.1', DATA_DIR => $data,
	  RESOLVER => 'git', RESOLVER_REPOS => "git://127.0.0.1:$git_port/", SOURCE_ZIP_URL => "$fs/{name}-{sha}.zip" },
	$work, @tied, $tool{node}, "$fe/server.js");
{
	my $deadline = time + 120;
	sleep 0.1 while slurp($site_log) !~ /serving/ && time < $deadline && waitpid($pid{site}, POSIX::WNOHANG) == 0;
	like(slurp($site_log), qr/serving OpenBench workers at \Q$site\E\//, "the web site is at $site") or BAIL_OUT(slurp($site_log));
}

# The operator's part.
sub admin
{
	my ($stdin, @args) = @_;
	my ($aout, $aerr) = ('', '');
	local @ENV{ keys %pg } = values %pg;
	local $ENV{PGUSER} = 'farm_admin';
	local $ENV{DATA_DIR} = $data;
	my $aok = IPC::Run::run([ $tool{node}, "$fe/admin.js", @args ], '<', \$stdin, '>', \$aout, '2>', \$aerr,
		IPC::Run::timeout(60));
	note "node admin.js @args\n$aout$aerr";
	return ("$aout$aerr", $aok);
}
($out, $ok) = admin("$PASSWORD\n", qw(add-user alice --password-stdin --approver));
ok($ok, 'admin.js add-user: an account for the workers, an approver\'s');
($out, $ok) = admin("$PASSWORD\n", qw(add-user dave --password-stdin));
ok($ok, 'admin.js add-user: dave, an engine developer');
($out, $ok) = admin('', qw(add-engine Weiss --compilers gcc>=10 --path src --nps 2000000 --repo),
	"git://127.0.0.1:$git_port/weiss.git");
ok($ok, 'admin.js add-engine Weiss, with its repository');
($out, $ok) = admin('', qw(add-engine Secret --compilers gcc>=10 --private));
ok($ok, 'admin.js add-engine Secret: a private engine');
($out, $ok) = admin('', 'add-book', 'eight.epd', '--source', "$fs/eight.epd.zip", '--file', "$work/eight.epd");
ok($ok, 'admin.js add-book');
PostgreSQL::Test::Utils::append_to_file("$work/weiss.nnue", 'not really a network, but bytes with a sha256');
($out, $ok) = admin('', 'add-network', '--engine', 'Weiss', '--name', 'toy', '--file', "$work/weiss.nnue");
ok($ok, 'admin.js add-network');
# (the commits of the repository below: the workers build each once)
sub sides { return ('--engine', $_[0], '--dev-source', "$fs/weiss-$branch_sha{faster}.zip", '--dev-sha', $branch_sha{faster},
	'--dev-bench', $BENCH{$DEV}, '--base-source', "$fs/weiss-$branch_sha{master}.zip", '--base-sha', $branch_sha{master},
	'--base-bench', $BENCH{$BASE},
	'--book', 'eight.epd', '--tc', 'N=2000', '--workload-size', '2'); }
my @sides = sides('Weiss');

# The SPRT test, made in a browser (headless Chromium, DevToolsPage.pm) as
# an engine developer makes one: dave logs in and names the branches; the
# site resolves them to commits, benches and source zips.  His test waits
# for an approver: alice approves it on its page.
my $click = sub { "setTimeout(() => document.querySelector('$_[0]').click(), 0)" };
my $fill = sub {
	my (%f) = @_;
	return join('', map { "document.querySelector('[name=$_]').value = " . encode_json([ $f{$_} ]) . '[0]; ' } sort keys %f);
};
my $log_in = sub { $fill->(username => $_[0], password => $PASSWORD) . $click->('main button[type=submit]') . "; 'logging in'" };
my $browser = eval {
	evaluate_in_pages("$site/login/", 1280, 900, $log_in->('dave'),
		q{location.href = '/test/new/'; document.querySelector('#me').textContent},
		$fill->(engine => 'Weiss', dev_branch => 'faster', base_branch => 'master', book => 'eight.epd', tc => 'N=2000',
			options => 'Threads=1 Hash=16', mode => 'SPRT', bounds => '[0, 200]', confidence => '[0.25, 0.25]',
			workload_size => '2', throughput => '1500', info => 'from Chromium')
		  . $click->('main button[type=submit]') . "; 'creating'",
		q{[location.pathname, document.querySelector('#status').textContent.replace(/\s+/g, ' ')]});
} // [ "error: $@" ];
diag($browser->[0]) if ($browser->[0] // '') =~ /^error: /;
is($browser->[1], 'dave', 'Chromium: dave logs in');
my ($sprt) = ($browser->[3][0] // '') =~ m{^/test/([0-9]+)/$};
ok($sprt, 'he makes a test from branch names, and is taken to its page') or BAIL_OUT(slurp($site_log));
like($browser->[3][1], qr/Status: pending/, 'it waits for approval');
is(sql("SELECT dev_sha || ' ' || dev_bench || ' ' || dev_source || ' ' || base_sha || ' ' || base_bench || ' ' || base_source
          FROM openbench.test WHERE id = $sprt"),
	"$branch_sha{faster} $BENCH{$DEV} $fs/weiss-$branch_sha{faster}.zip $branch_sha{master} $BENCH{$BASE} $fs/weiss-$branch_sha{master}.zip",
	'its branches resolved to their commits, the benches their messages name, and their source zips');
$browser = eval {
	evaluate_in_pages("$site/login/", 1280, 900, $log_in->('alice'), "location.href = '/test/$sprt/'; 'to the test'",
		$click->('#approve') . "; 'approving'", q{document.querySelector('#status').textContent.replace(/\s+/g, ' ')});
} // [ "error: $@" ];
diag($browser->[0]) if ($browser->[0] // '') =~ /^error: /;
unlike($browser->[3] // '', qr/pending/, "Chromium: alice approves it ($browser->[3])");
($out, $ok) = admin('', 'create-test', @sides, qw(--name games --games 8 --throughput 1000));
my ($games) = $out =~ /^test ([0-9]+)$/m;
ok($ok && $games, 'admin.js create-test: a test of 8 games');
is(sql("SELECT string_agg(id || ' ' || name || ' ' || engine || ' ' || base_engine || ' ' || throughput || ' '
                          || dev_threads || ' ' || time_based || ' ' || workload_size || ' ' || state, ', ' ORDER BY id)
          FROM allot.workload"),
	"$sprt Weiss faster vs master Weiss Weiss 1500 1 false 2 active, $games games Weiss Weiss 1000 1 false 2 active",
	'each test is an active allot workload: engines, throughput, threads, fixed nodes (not time-based)');
($out, $ok) = admin('', 'create-test', @sides, '--games', '8', '--sprt', '0,5');
ok(!$ok && $out =~ /give one of --sprt ELO0,ELO1 and --games N/, 'create-test refuses a test both SPRT and GAMES');

# ---------------------------------------------------------------------------
# The workers: each a copy of OpenBench's Client folder with fastchess, in
# the namespace and a PID namespace of its own.
if ($fastchess_build)
{
	my $built = $fastchess_build->finish;
	ok($built && -x $fastchess, 'fastchess builds (' . elapsed() . ' since the start)')
	  or BAIL_OUT(slurp($fastchess_log));
	undef $fastchess_build;
}
my %worker = (w1 => "$work/w1", w2 => "$work/w2");
for my $w (sort keys %worker)
{
	my $dir = $worker{$w};
	make_path($dir);
	opendir(my $dh, "$shared/Client") or die "$shared/Client: $!";
	for my $f (grep { -f "$shared/Client/$_" } readdir $dh)
	{
		copy("$shared/Client/$f", "$dir/$f") or die "copy $f: $!";
	}
	closedir $dh;
	copy($fastchess, "$dir/fastchess-ob") or die "copy fastchess: $!";
	chmod 0755, "$dir/fastchess-ob";
}
# w1 holds a token for the private engine; w2 says it is noisy, focuses on
# an engine with no test, and has a name.
PostgreSQL::Test::Utils::append_to_file("$worker{w1}/credentials.secret", "token-of-w1\n");
my @worker_args = (w1 => [], w2 => [ '-I', 'box-two', '--noisy', '--focus', 'Stockfish' ]);
my %args = @worker_args;
for my $w (qw(w1 w2))
{
	spawn($w, "$work/$w.log", { PYTHONDONTWRITEBYTECODE => 1, PYTHONUNBUFFERED => 1 }, $worker{$w}, @in_ns,
		$tool{unshare}, '--pid', '--fork', '--mount-proc', '--kill-child', '--',
		$tool{python}, 'client.py', '-U', 'alice', '-P', $PASSWORD, '-S', $url, '-T', '1', '-N', '1',
		'--no-client-downloads', '--fleet', @{ $args{$w} });
}
note 'workers started at ' . elapsed();

# dave watches his test's page in Chromium while the workers play it,
# reloading it every few seconds, until it has stopped.  (The page reloads
# itself every 30 s: a person's F5 is quicker.)
my @seen;
{
	my $deadline = time + 600;    # a hang guard, as below
	my $watched = eval {
		watch_page("$site/test/$sprt/", 1280, 900,
			q|(() => {
				const text = (sel) => (document.querySelector(sel)?.textContent ?? '').replace(/[ \t]+/g, ' ');
				const done = document.querySelector('#pgns') !== null;
				if (!done) setTimeout(() => location.reload(), 3000);
				return { done, stats: text('#stats'), status: text('#status'), charts: document.querySelectorAll('#llr-chart polyline, #elo-chart polyline').length };
			})()|,
			sub { return $_[0]{done} || time > $deadline; });
	} // [ { error => "$@" } ];
	@seen = @$watched;
}
diag($seen[-1]{error}) if $seen[-1]{error};
{
	my @changes = grep { $_ == 0 || $seen[$_]{stats} ne $seen[ $_ - 1 ]{stats} } 0 .. $#seen;
	note 'the test page, as dave saw it change:' . join('', map { "\n  load $_: " . ($seen[$_]{stats} // '') =~ s/\s*\n\s*/; /gr } @changes);
}
ok($seen[-1]{done}, 'Chromium: the test page says the test has stopped (' . scalar(@seen) . ' loads of it)')
  or BAIL_OUT('the test never stopped');
my %llr_seen = map { ($_->{stats} =~ /LLR +\| (-?[0-9.]+) /)[0] // 'none' => 1 } @seen;
my %elo_seen = map { ($_->{stats} =~ /Elo +\| (-?[0-9.]+ \+- [0-9.]+)/)[0] // 'none' => 1 } @seen;
ok(keys %llr_seen >= 2, 'the LLR moved as the reports came: ' . join(', ', sort keys %llr_seen));
ok(keys %elo_seen >= 2, 'so did the Elo +-: ' . join(', ', sort keys %elo_seen));
like($seen[-1]{status}, qr/Status: (passed|failed) at .* \(sprt, (passed|failed)\)/, "stopped by the SPRT: $seen[-1]{status}");
ok($seen[-1]{charts} >= 2, 'beside the charts of its LLR and Elo');

# Wait for both tests to stop, and for each worker to be told that nothing
# is left ({} to its request).  --fleet would have it idle 60 s before it
# leaves; the operator's Ctrl-C (SIGINT, which client.py takes as the
# signal to stop) ends that wait instead.
sub machine_of
{
	my ($w) = @_;
	my $name = $w eq 'w2' ? 'alice/box-two' : 'alice';
	return sql(qq{SELECT max(m.host_id) FROM openbench.machine m JOIN allot.host h ON h.id = m.host_id
	               WHERE h.name = '$name'});
}
my %idle;
{
	my $deadline = time + 600;    # a hang guard: the games take 1-3 minutes
	my $stopped = 0;
	while (time < $deadline && keys %idle < 2)
	{
		if (!$stopped && sql('SELECT count(*) FROM openbench.test WHERE finished_at IS NULL') eq '0')
		{
			$stopped = 1;
			note 'both tests stopped at ' . elapsed();
		}
		for my $w (qw(w1 w2))
		{
			if (waitpid($pid{$w}, POSIX::WNOHANG) != 0)
			{
				fail("$w exited before it was told that nothing is left");
				BAIL_OUT(slurp("$work/$w.log"));
			}
			next if !$stopped || $idle{$w};
			my $m = machine_of($w);
			$idle{$w} = 1 if $m && slurp($server_log) =~ /machine $m: nothing to do/;
		}
		sleep 0.2;
	}
	ok($stopped && keys %idle == 2, 'both tests stopped, and then each worker was told that nothing is left');
}
# The worker is the child of unshare, in the parent namespace's numbering.
sub child_of
{
	my ($parent) = @_;
	for my $stat (glob('/proc/[0-9]*/stat'))
	{
		open(my $fh, '<', $stat) or next;    # a process that just ended
		my ($pid, $ppid) = (scalar(<$fh>) // '') =~ /^([0-9]+) \(.*\) \S+ ([0-9]+) /s or next;
		return $pid if $ppid == $parent;
	}
	return undef;
}
my %status;
for my $w (qw(w1 w2))
{
	my $python = child_of($pid{$w});
	ok($python && kill('INT', $python), "Ctrl-C to worker $w");
}
{
	my $deadline = time + 300;
	while (time < $deadline && keys %status < 2)
	{
		for my $w (qw(w1 w2))
		{
			next if exists $status{$w};
			$status{$w} = $? if waitpid($pid{$w}, POSIX::WNOHANG) == $pid{$w};
		}
		sleep 0.1;
	}
}
note 'workers exited at ' . elapsed();
for my $w (qw(w1 w2))
{
	is($status{$w}, 0, "worker $w exited, with status 0");
	unlike(slurp("$work/$w.log"), qr/Traceback/, "worker $w met no error");
	delete $pid{$w} if exists $status{$w};
	note "----- $w -----\n" . join "\n",
	  grep { /Requesting|Workload \[|Bench for|Finished game|Traceback|Error|error|Exception/ }
	  split /\n/, slurp("$work/$w.log");
}
note "----- front end -----\n" . slurp($server_log);

# ---------------------------------------------------------------------------
# What the server recorded.
my %host;
for (split /\n/, sql(q{SELECT m.host_id, h.name FROM openbench.machine m JOIN allot.host h ON h.id = m.host_id ORDER BY m.host_id}))
{
	my ($id, $name) = split /\|/;
	$host{ $name eq 'alice/box-two' ? 'w2' : 'w1' } = $id;
}
is(scalar(keys %host), 2, 'two machines registered, one per worker (no worker had to start over)');
my $gcc = sql(q{SELECT string_agg(DISTINCT compilers ->> 'gcc', ',') FROM allot.host});
like($gcc, qr/^[0-9]+\.[0-9]+(\.[0-9]+)?$/, "both hosts have gcc $gcc, as their workers found it");
is( sql(qq{SELECT string_agg(concat_ws(' ', name, os, threads, sockets, coalesce(physical_cores::text, '-'), syzygy_max,
                                        noisy, tokens::text, focus::text, registered_at IS NOT NULL,
                                        cardinality(cpu_flags) > 0), ', ' ORDER BY name)
              FROM allot.host WHERE id IN ($host{w1}, $host{w2})}),
	'alice Linux 1 1 - 0 f {Secret} {} t t, alice/box-two Linux 1 1 - 0 t {} {Stockfish} t t',
	'allot.host: name, os, threads, sockets, no hyperthreads, no Syzygy, noisy, tokens, focus, CPU flags, self-registered');
is(sql(q{SELECT count(*) FROM openbench.machine WHERE length(hash) = 32 AND length(salt) = 16 AND scrypt_n = 32768
            AND info::text !~ '[0-9a-f]{64}'}),
	'2', 'each machine\'s secret is kept only as a salted scrypt hash');

# Every workload, with the explanation logged beside it.
my @results = map { [ split /\|/ ] } split /\n/, sql(q{
	SELECT r.id, r.test_id, r.host_id, r.repeated, r.book_index, r.runner_count, r.concurrency_per,
	       r.rounds_per_runner, r.stop_sent_at IS NOT NULL,
	       (SELECT w ->> 'probability' FROM jsonb_array_elements(r.explanation -> 'workloads') w
	         WHERE (w ->> 'id')::bigint = r.test_id),
	       r.explanation -> 'exclude'
	  FROM openbench.result r ORDER BY r.id});
ok(@results >= 3, scalar(@results) . ' workloads were handed out');
my %played;
for my $r (@results)
{
	my ($id, $test, $h, $repeated, $bi, $runners, $conc, $rounds, $stop, $p, $exclude) = @$r;
	ok(defined $p && $p > 0, "result $id: test $test went to machine $h with probability $p > 0 in its explanation");
	is("$runners $conc $rounds $exclude", '1 1 4 []',
		"result $id: 1 runner, 1 game at a time, 4 rounds (workload size 2, 1 thread); nothing excluded");
	$played{$test}{$h}++;
}
ok($played{$sprt} && $played{$games}, 'both tests were played');
like(slurp($server_log), qr/machine \d+ gets test \d+ \(result \d+(, repeated)?\), p=[0-9.e-]+; explain_assignment: \d+:/,
	'the log shows each assignment with its explanation');

# The games: each report against the uploaded PGN, pair by pair.
sub pgn_pairs
{
	my ($file) = @_;
	my $text;
	bunzip2($file => \$text) or die "bunzip2 $file: $Bunzip2Error";
	my %round;
	for my $game (split /\n(?=\[Event )/, $text)
	{
		my ($round) = $game =~ /^\[Round "([0-9]+)"\]/m;
		my ($white) = $game =~ /^\[White "([^"]*)"\]/m;
		my ($result) = $game =~ /^\[Result "([^"]*)"\]/m;
		next unless defined $round && defined $result;
		# points of dev in half points: 2 a win, 1 a draw
		my $dev_white = $white eq 'Weiss-dev';
		my %points = ('1-0' => 2, '1/2-1/2' => 1, '0-1' => 0);
		die "$file: result $result" unless exists $points{$result};
		push @{ $round{$round} }, $dev_white ? $points{$result} : 2 - $points{$result};
	}
	return [ map { $round{$_} } grep { @{ $round{$_} } == 2 } sort { $a <=> $b } keys %round ];
}
sub tally
{
	my @pairs = @_;
	my @t = (0, 0, 0);
	my @p = (0, 0, 0, 0, 0);
	for my $pair (@pairs)
	{
		$t[ $_ ]++ for @$pair;
		$p[ $pair->[0] + $pair->[1] ]++;
	}
	return join(' ', @t) . ' / ' . join(' ', @p);
}
my %counted;
for my $r (@results)
{
	my ($id, $test, $h, undef, $bi, undef, undef, undef, $stop) = @$r;
	my $file = "$data/pgns/$test.$id.$bi.pgn.bz2";
	ok(-s $file, "result $id: its PGN was uploaded") or next;
	my @pairs = @{ pgn_pairs($file) };
	my @subs = map { [ split /\|/ ] } split /\n/, sql(qq{
		SELECT counted, losses, draws, wins, ll, ld, dd, dw, ww FROM openbench.submission WHERE result_id = $id ORDER BY id});
	my $at = 0;
	for my $s (@subs)
	{
		my ($is_counted, @n) = @$s;
		my $npairs = ($n[0] + $n[1] + $n[2]) / 2;
		my @mine = @pairs[ $at .. $at + $npairs - 1 ];
		is(tally(grep { defined } @mine), "$n[0] $n[1] $n[2] / @n[3..7]",
			"result $id: a report of $npairs pair(s) is pairs " . ($at + 1) . ' on of its PGN');
		$at += $npairs;
		push @{ $counted{$test} }, @mine if $is_counted eq 't';
	}
	if ($stop eq 't')
	{
		ok($at <= @pairs, "result $id: told to stop, it reported $at of its " . scalar(@pairs) . ' pairs');
	}
	else
	{
		is($at, scalar(@pairs), "result $id: every pair of its PGN was reported");
	}
}
# dave downloads the SPRT test's PGNs from its page: each workload's, as
# uploaded (the last come once the workers have stopped).
{
	my $downloads = "$work/downloads";
	make_path($downloads);
	my $got = eval {
		local $DevToolsPage::download_dir = $downloads;
		evaluate_in_pages("$site/test/$sprt/", 1280, 900, $click->('#pgns') . "; 'downloading'");
	} // [ "error: $@" ];
	diag($got->[0]) if ($got->[0] // '') =~ /^error: /;
	my $tar = Archive::Tar->new("$downloads/$sprt.pgn.tar");
	my @want = sort map { "$sprt.$_->[0].$_->[4].pgn.bz2" } grep { $_->[1] == $sprt && -s "$data/pgns/$sprt.$_->[0].$_->[4].pgn.bz2" } @results;
	is(join(' ', sort map { $_->name } ($tar ? $tar->get_files : ())), join(' ', @want),
		"Chromium downloaded $sprt.pgn.tar: the PGN of each of the test's workloads");
	is(scalar(grep { $tar && $tar->get_content($_) eq slurp("$data/pgns/$_") } @want), scalar(@want), 'each as uploaded');
}
for my $t ($sprt, $games)
{
	is(sql("SELECT losses || ' ' || draws || ' ' || wins || ' / ' || ll || ' ' || ld || ' ' || dd || ' ' || dw || ' ' || ww
	          FROM openbench.test WHERE id = $t"),
		tally(@{ $counted{$t} // [] }),
		"test $t: its trinomial and pentanomial totals are the games of its counted reports, as the PGNs show them");
}
my ($llr, $lower, $upper, $finished_by, $counts) = split /\|/, sql(qq{
	SELECT llr, lower_llr, upper_llr, finished_by, ll || ',' || ld || ',' || dd || ',' || dw || ',' || ww
	  FROM openbench.test WHERE id = $sprt});
ok($finished_by eq 'sprt' && ($llr > $upper || $llr < $lower),
	"the SPRT test stopped by its bounds: LLR $llr outside ($lower, $upper)");
($out) = run_cmd({}, $tool{node}, '-e', "console.log(require('$fe/sprt.js').pentanomialLLR([$counts], 0, 200))");
ok(abs($out - $llr) < 1e-9, "and its LLR is the pentanomial LLR of its totals ($counts)");
is(sql("SELECT finished_by || ' ' || (games >= 8) FROM openbench.test WHERE id = $games"), 'games true',
	'the GAMES test stopped at 8 games or more');
is(sql(q{SELECT string_agg(state, ',') FROM allot.workload}), 'finished,finished', 'both are finished in allot');
for my $w (qw(w1 w2))
{
	ok(sql("SELECT count(*) FROM openbench.result WHERE host_id = $host{$w} AND stop_sent_at IS NOT NULL") > 0,
		"worker $w was told to stop");
}
is(sql('SELECT count(*) FROM openbench.event'), '0', 'no worker reported an error');

# ---------------------------------------------------------------------------
# Lies, from inside the namespace.  http(PATH, FIELDS or [TYPE, BODY]):
# [status, decoded reply or text].
my $http_client = q{
use HTTP::Tiny;
local $/; my $body = <STDIN>;
my ($url, $type) = @ARGV;
my $r = HTTP::Tiny->new(timeout => 30)->request('POST', $url,
	{ content => $body, headers => { 'Content-Type' => $type } });
print "$r->{status}\n$r->{content}";
};
sub form_body
{
	my @fields = @_;
	my @parts;
	while (my ($k, $v) = splice(@fields, 0, 2))
	{
		push @parts, join '=', map { my $s = $_; $s =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge; $s } $k, $v;
	}
	return join '&', @parts;
}
sub http
{
	my ($path, $fields, $type, $body) = @_;
	$type //= 'application/x-www-form-urlencoded';
	$body //= form_body(@$fields);
	my ($hout, $herr) = ('', '');
	IPC::Run::run([ @in_ns, $^X, '-e', $http_client, "$url/$path/", $type ],
		'<', \$body, '>', \$hout, '2>', \$herr, IPC::Run::timeout(60));
	my ($status, $content) = split /\n/, $hout, 2;
	my $reply = eval { decode_json($content // '') } // ($content // $herr);
	return [ $status, $reply ];
}
sub error_of { my $r = shift; return ref $r->[1] eq 'HASH' ? $r->[1]{error} // '' : ''; }

# A machine of the liar's own, and a test of its own to be given.
my %info = (client_ver => 49, concurrency => 2, sockets => 1, physical_cores => 2, os_name => 'Linux',
	cpu_flags => ['POPCNT'], compilers => { Weiss => [ 'gcc', '12.2.0' ] }, tokens => {}, syzygy_max => 0,
	noisy => JSON::PP::false, focus => [], machine_name => 'liar');
my $r = http('clientWorkerInfo', [ username => 'alice', password => $PASSWORD, system_info => encode_json(\%info) ]);
my ($liar, $secret) = ($r->[1]{machine_id}, $r->[1]{secret});
ok($liar && $secret =~ /^[0-9a-f]{64}$/, "clientWorkerInfo over plain HTTP: machine $liar and a 64-digit secret");
($out, $ok) = admin('', 'create-test', @sides, qw(--name third --games 100 --throughput 1000));
my ($third) = $out =~ /^test ([0-9]+)$/m;
$r = http('clientGetWorkload', [ machine_id => $liar, secret => $secret, blacklist => $third ]);
is_deeply($r->[1], {}, 'with its only test blacklisted, nothing: {}');
$r = http('clientGetWorkload', [ machine_id => $liar, secret => $secret ]);
is($r->[1]{workload}{test}{id}, $third, "without the blacklist: test $third");
my $result = $r->[1]{workload}{result}{id};
is_deeply($r->[1]{workload}{distribution}, { 'runner-count' => 1, 'concurrency-per' => 2, 'rounds-per-runner' => 8 },
	'its distribution for 2 threads: 1 runner, 2 games at a time, 8 rounds');
is($r->[1]{workload}{test}{dev}{bench}, $BENCH{$DEV}, 'and the dev engine\'s bench');

my $snapshot = sub {
	return sql(q{SELECT md5(string_agg(t, ';' ORDER BY t)) FROM (
		SELECT 'host ' || h::text AS t FROM allot.host h
		UNION ALL SELECT 'assignment ' || a::text FROM allot.assignment a
		UNION ALL SELECT 'usage ' || u::text FROM allot.workload_usage u
		UNION ALL SELECT 'workload ' || w::text FROM allot.workload w
		UNION ALL SELECT 'test ' || t::text FROM openbench.test t
		UNION ALL SELECT 'machine ' || (m.host_id, m.hash, m.nps)::text FROM openbench.machine m
		UNION ALL SELECT 'result ' || r::text FROM openbench.result r
		UNION ALL SELECT 'submission ' || s::text FROM openbench.submission s
		UNION ALL SELECT 'pgn ' || p::text FROM openbench.pgn p
		UNION ALL SELECT 'event ' || e::text FROM openbench.event e) s});
};
my $before = $snapshot->();
my @good = (machine_id => $liar, secret => $secret, test_id => $third, result_id => $result,
	crashes => 0, timelosses => 0, illegals => 0, spsa_delta => '');
my @lies = (
	[ 'someone else\'s secret', 'clientGetWorkload', [ machine_id => $host{w1}, secret => $secret ],
	  qr/^Bad Client Version: Invalid Secret Token$/ ],
	[ 'a results report with someone else\'s secret', 'clientSubmitResults',
	  [ @good, machine_id => $host{w2}, trinomial => '0 0 2', pentanomial => '0 0 0 0 1' ], qr/^Bad Client Version: (Invalid Secret Token|Bad Machine Id)$/ ],
	[ 'a machine id that does not exist', 'clientHeartbeat', [ machine_id => 999999, secret => $secret, test_id => $third ],
	  qr/^Bad Client Version: Bad Machine Id$/ ],
	[ 'a results report for a test it was not given', 'clientSubmitResults',
	  [ @good, test_id => $games, trinomial => '0 0 2', pentanomial => '0 0 0 0 1' ], qr/is not machine ${liar}'s workload/ ],
	[ 'a results report for another machine\'s result', 'clientSubmitResults',
	  [ @good, result_id => $results[0][0], trinomial => '0 0 2', pentanomial => '0 0 0 0 1' ],
	  qr/is not machine ${liar}'s workload/ ],
	[ 'a heartbeat for a test it was not given', 'clientHeartbeat', [ @good, test_id => $sprt ], qr/is not machine ${liar}'s workload/ ],
	[ 'negative game counts', 'clientSubmitResults', [ @good, trinomial => '-2 0 4', pentanomial => '0 0 1 0 0' ],
	  qr/^Bad Request: trinomial must be three counts/ ],
	[ 'a trinomial and pentanomial that disagree', 'clientSubmitResults',
	  [ @good, trinomial => '0 0 4', pentanomial => '1 0 0 0 1' ], qr/give different scores/ ],
	[ 'more games than pairs', 'clientSubmitResults', [ @good, trinomial => '0 0 4', pentanomial => '0 0 0 0 1' ],
	  qr/the trinomial counts 4 games, the pentanomial 2/ ],
	[ 'a huge game count', 'clientSubmitResults', [ @good, trinomial => '0 0 200000000', pentanomial => '0 0 0 0 100000000' ],
	  qr/holds at most 16 games/ ],
	[ 'more crashes than games', 'clientSubmitResults', [ @good, trinomial => '0 0 2', pentanomial => '0 0 0 0 1', crashes => 3 ],
	  qr/crashes \(3\) exceeds the games reported/ ],
	[ 'a count as a float', 'clientSubmitNPS', [ @good, nps => '1e9', dev_nps => 1, base_nps => 1 ], qr/nps must be a whole number/ ],
	[ 'a field sent twice', 'clientHeartbeat', [ @good, test_id => $third ], qr/test_id was sent more than once/ ],
	[ 'a wrong password', 'clientWorkerInfo', [ username => 'alice', password => 'guess', system_info => encode_json(\%info) ],
	  qr/^Bad Credentials$/ ],
	[ 'an unknown user', 'clientMatchRunnerVersionRef', [ username => 'mallory', password => $PASSWORD ], qr/^Bad Credentials$/ ],
	[ 'an old client', 'clientWorkerInfo',
	  [ username => 'alice', password => $PASSWORD, system_info => encode_json({ %info, client_ver => 48 }) ],
	  qr/^Bad Client Version: Expected 49$/ ],
	[ 'a malformed system_info', 'clientWorkerInfo',
	  [ username => 'alice', password => $PASSWORD, system_info => encode_json({ %info, concurrency => -4 }) ],
	  qr/system_info\.concurrency must be a whole number between 1 and 4096/ ],
	[ 'an SPSA delta for a test that is not SPSA', 'clientSubmitResults',
	  [ @good, trinomial => '0 0 2', pentanomial => '0 0 0 0 1', spsa_delta => '[1e9]' ], qr/is not an SPSA tune: its reports carry no spsa_delta/ ],
);
for my $lie (@lies)
{
	my ($what, $path, $fields, $expect) = @$lie;
	my @f = @$fields;
	my %f;
	# later pairs override earlier ones, except a deliberate repeat
	my @ordered;
	while (my ($k, $v) = splice(@f, 0, 2))
	{
		if (exists $f{$k} && $what ne 'a field sent twice') { $ordered[ $f{$k} ][1] = $v; next; }
		$f{$k} = @ordered;
		push @ordered, [ $k, $v ];
	}
	$r = http($path, [ map { @$_ } @ordered ]);
	like(error_of($r), $expect, "$what: {\"error\": \"" . error_of($r) . '"}');
}
my $pgn = "[Event \"?\"]\n[Round \"1\"]\n\n1. e4 *\n";
my $bz;
{
	require IO::Compress::Bzip2;
	IO::Compress::Bzip2::bzip2(\$pgn => \$bz) or die 'bzip2';
}
sub multipart
{
	my (%f) = @_;
	my $b = 'xYzZy' . int(rand(1e9));
	my $body = join '', map { "--$b\r\nContent-Disposition: form-data; name=\"$_\"\r\n\r\n$f{$_}\r\n" }
	  grep { $_ ne 'file' } sort keys %f;
	$body .= "--$b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"games.pgn\"\r\n"
	  . "Content-Type: application/octet-stream\r\n\r\n$f{file}\r\n--$b--\r\n";
	return ("multipart/form-data; boundary=$b", $body);
}
$r = http('clientSubmitPGN', undef, multipart(machine_id => $liar, secret => $secret, test_id => $games,
	result_id => $results[0][0], book_index => 1, file => $bz));
like(error_of($r), qr/is not machine ${liar}'s workload/, 'a PGN for another machine\'s result: refused');
$r = http('clientSubmitPGN', undef, multipart(machine_id => $liar, secret => $secret, test_id => $third,
	result_id => $result, book_index => 1, file => 'not bzip2'));
like(error_of($r), qr/bzip2-compressed/, 'a PGN that is not bzip2: refused');
$r = http('clientHeartbeat', [ machine_id => $liar, secret => $secret, test_id => $third, pad => 'x' x 300000 ]);
is($r->[0], 413, 'a body over MAX_FORM_BYTES: 413');
is($snapshot->(), $before, 'no lie changed anything in allot or the front end');

# The positive control: the same machine telling the truth.
$r = http('clientSubmitResults', [ @good, trinomial => '1 1 2', pentanomial => '0 0 1 1 0' ]);
is_deeply($r->[1], {}, 'a true report is answered {}');
is(sql("SELECT games || ' ' || losses || ' ' || draws || ' ' || wins || ' ' || dd || ' ' || dw FROM openbench.test WHERE id = $third"),
	'4 1 1 2 1 1', 'and counted');
$r = http('clientSubmitPGN', undef, multipart(machine_id => $liar, secret => $secret, test_id => $third,
	result_id => $result, book_index => 1, file => $bz));
is_deeply($r->[1], {}, 'its PGN is taken');
$r = http('clientSubmitPGN', undef, multipart(machine_id => $liar, secret => $secret, test_id => $third,
	result_id => $result, book_index => 1, file => $bz));
like(error_of($r), qr/already received/, 'once');

# Networks: the file, with the right login only.
$r = http('api/networks/Weiss/' . uc(substr(sha256_hex(slurp("$work/weiss.nnue")), 0, 8)),
	[ username => 'alice', password => $PASSWORD ]);
is($r->[1], slurp("$work/weiss.nnue"), 'api/networks/Weiss/SHA gives the network to an account');
$r = http('api/networks/Weiss/toy', [ username => 'alice', password => 'guess' ]);
is($r->[1], 'Bad Credentials', 'and "Bad Credentials" without its password');

# The private engine: only the machine with its token may play it.
($out, $ok) = admin('', 'create-test', sides('Secret'), qw(--name private --games 8));
my ($private) = $out =~ /^test ([0-9]+)$/m;
ok($ok && $private, "a test of the private engine: test $private");
my %private = map {
	$_ => sql(qq{SELECT candidate || ' ' || reason FROM allot.explain_assignment($host{$_}) WHERE workload_id = $private})
} qw(w1 w2);
like($private{w1}, qr/^true candidate/, "a test of the private engine is a candidate for w1, which has its token: $private{w1}");
like($private{w2}, qr/^false .*token/, "and not for w2, which has none: $private{w2}");

# Machines long gone leave allot; a worker still on one is told what
# OpenBench tells a worker whose machine it deleted.
($out, $ok) = admin('', qw(prune-hosts --days 0));
like($out, qr/^3 host\(s\) of machines not seen for 0 days removed from allot$/m, 'admin.js prune-hosts: the three machines\' hosts');
$r = http('clientHeartbeat', [ machine_id => $liar, secret => $secret, test_id => $third ]);
is(error_of($r), 'Bad Client Version: Bad Machine Id', 'the pruned machine\'s next call: Bad Machine Id');
is(sql('SELECT count(*) FROM openbench.result'), scalar(@results) + 1, 'its results stay');

# ---------------------------------------------------------------------------
# An SPSA tune, played by the unmodified worker.  allot gives an SPSA
# workload to a host with twice the engine's threads (dev and base each
# play with the perturbed values at once), so w1's worker starts again in
# its folder, where its engines and fastchess already are, with -T 2.
# At a fixed number of nodes weiss plays the same moves whatever its Hash
# (tried: a tune of Hash split every pair, W = L, and never moved); MultiPV
# changes its search, so dev and base play differently.  MultiPV starts at
# 2: each side plays it moved c = 1 its way (1 or 3), and with one line
# the search goes deeper at a fixed number of nodes, so a decisive report
# moves it (and a large W - L is clipped at its min, 1).  NoobBookLimit
# (unused while NoobBook is off) starts at its max: moved up, it is clipped.
# The tests still open (third, private) are stopped first: the tune is
# the only work left.
admin('', 'stop-test', $_) for ($third, $private);
PostgreSQL::Test::Utils::append_to_file("$work/tune.txt",
	"MultiPV, int, 2, 1, 4, 1, 0.5\nNoobBookLimit, int, 3, 0, 3, 1, 0.5\n");
($out, $ok) = admin('', 'create-test', '--engine', 'Weiss', '--dev-source', "$fs/weiss-$branch_sha{faster}.zip",
	'--dev-sha', $branch_sha{faster}, '--dev-bench', $BENCH{$DEV}, '--book', 'eight.epd', '--tc', 'N=2000',
	'--workload-size', '2', '--options', 'Threads=1', '--spsa', "$work/tune.txt", '--iterations', '50');
my ($tune) = $out =~ /^test ([0-9]+)$/m;
ok($ok && $tune, "admin.js create-test --spsa: tune $tune");
my $params = sub {
	return { map { my ($n, @v) = split /\|/; ($n => \@v) } split /\n/,
		sql("SELECT name, value, start, min_value, max_value FROM openbench.spsa_parameter WHERE test_id = $tune") };
};
my $start = $params->();
spawn('w3', "$work/w3.log", { PYTHONDONTWRITEBYTECODE => 1, PYTHONUNBUFFERED => 1 }, $worker{w1}, @in_ns,
	$tool{unshare}, '--pid', '--fork', '--mount-proc', '--kill-child', '--',
	$tool{python}, 'client.py', '-U', 'alice', '-P', $PASSWORD, '-S', $url, '-T', '2', '-N', '1',
	'--no-client-downloads', '--fleet');
note 'the tune\'s worker started at ' . elapsed();
# Play until a counted report holds more wins than losses or fewer (its
# delta, r c flip (W - L), is then not zero), then stop the tune and wait
# for the worker to be told that nothing is left.  Whether the parameters
# moved is checked below, from the values stored.
my $decisive = sub {
	return sql(qq{SELECT count(*) FROM openbench.submission s JOIN openbench.result r ON r.id = s.result_id
	               WHERE r.test_id = $tune AND s.counted AND s.wins <> s.losses}) > 0;
};
my ($tune_stopped, $tune_idle);
{
	my $deadline = time + 600;    # a hang guard: a report comes every minute or so
	while (time < $deadline && !$tune_idle)
	{
		if (waitpid($pid{w3}, POSIX::WNOHANG) != 0)
		{
			fail('the tune\'s worker exited before it was told that nothing is left');
			BAIL_OUT(slurp("$work/w3.log"));
		}
		if (!$tune_stopped && ($decisive->() || sql("SELECT finished_at IS NOT NULL FROM openbench.test WHERE id = $tune") eq 't'))
		{
			$tune_stopped = 1;
			note 'a report of the tune with W != L (or its end) at ' . elapsed();
			admin('', 'stop-test', $tune);
		}
		my $m = $tune_stopped && sql(q{SELECT max(m.host_id) FROM openbench.machine m JOIN allot.host h ON h.id = m.host_id
		                              WHERE h.name = 'alice' AND h.threads = 2});
		$tune_idle = 1 if $m && slurp($server_log) =~ /machine $m: nothing to do/;
		sleep 0.5;
	}
}
ok($tune_idle, 'the tune stopped, and then its worker was told that nothing is left');
{
	my $python = child_of($pid{w3});
	ok($python && kill('INT', $python), 'Ctrl-C to the tune\'s worker');
	my ($deadline, $status) = (time + 120, undef);
	while (time < $deadline && !defined $status)
	{
		$status = $? if waitpid($pid{w3}, POSIX::WNOHANG) == $pid{w3};
		sleep 0.1;
	}
	is($status, 0, 'the tune\'s worker exited, with status 0');
	delete $pid{w3};
	unlike(slurp("$work/w3.log"), qr/Traceback/, 'and met no error');
	note "----- w3 -----\n" . join "\n", grep { /Requesting|Workload \[|Bench for|Finished game|Traceback|Error|error|Exception/ }
	  split /\n/, slurp("$work/w3.log");
}
is(sql("SELECT string_agg(DISTINCT h.threads::text, ',') FROM openbench.result r JOIN allot.host h ON h.id = r.host_id
         WHERE r.test_id = $tune"), '2', 'the tune was played by the 2-thread machine');
my @deltas = map { [ split /,/, substr($_, 1, -1) ] } split /\n/, sql(qq{
	SELECT s.spsa_delta FROM openbench.submission s JOIN openbench.result r ON r.id = s.result_id
	 WHERE r.test_id = $tune AND s.counted ORDER BY s.id});
ok(@deltas > 0, scalar(@deltas) . ' report(s) of the tune were counted');
my $end = $params->();
my @order = split /\n/, sql("SELECT name FROM openbench.spsa_parameter WHERE test_id = $tune ORDER BY index");
for my $i (0 .. $#order)
{
	my $n = $order[$i];
	my ($value, $begin, $min, $max) = @{ $end->{$n} };
	my $replay = $begin;
	for my $d (@deltas)
	{
		$replay += $d->[$i];
		$replay = $min if $replay < $min;
		$replay = $max if $replay > $max;
	}
	ok(abs($value - $replay) < 1e-9, "$n: $begin moved to $value, its start moved by each counted report's delta ($replay)");
	ok($value >= $min && $value <= $max, "$n: $value within [$min, $max]");
}
ok($decisive->(), 'a counted report of the tune has more wins than losses or fewer');
my @changed = sort grep { $end->{$_}[0] != $start->{$_}[0] } keys %$end;
ok(@changed > 0, 'the worker\'s reports moved the tune\'s parameters: ' . join(', ', map { "$_ $start->{$_}[0] -> $end->{$_}[0]" } @changed));

note 'done at ' . elapsed();
done_testing();
