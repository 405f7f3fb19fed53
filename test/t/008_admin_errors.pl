# The operators' commands of the front ends (examples/boinc/admin.js and
# examples/openbench/admin.js) when a newcomer gets something wrong: each
# mistake is refused with a sentence that names the value, exit status 2
# for the command line and 1 for what the farm refuses, never a raw
# database error (a constraint's name, "violates foreign key"), and changes
# nothing.  Covered:
#   - BOINC: an account name already taken (add-account), an allot workload
#     that does not exist (submit), bad --app-units and --command-line, an
#     executable already published (by its allot app version, or as the
#     same version of the app), a file that is not there, a download file
#     the database does not know, no signing key yet;
#   - OpenBench: an account name already taken (add-user), an engine that
#     does not exist (add-network, create-test), a network already there by
#     name or by file, a book or network that does not exist (create-test),
#     allot.workload's identity behind ids given by hand (create-test), a
#     test that does not exist (stop-test);
#   - OpenBench's game count: a test of --games 8 that one report of 16
#     games ends is listed (admin.js tests) with the games it played and the
#     games it asked for, and games reported after the test stopped are not
#     counted as the test's.
# The front ends are installed as a reader installs them (FrontEnds.pm);
# the OpenBench part drives its server over HTTP as a worker would.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use FrontEnds qw(install_front_ends);
use OpenBenchWorker qw(worker_call worker_info);
use IPC::Run ();
use JSON::PP;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $node = PostgreSQL::Test::Cluster->new('admin');
$node->init;
$node->start;
sub sql { return $node->safe_psql('postgres', $_[0]); }
sql(q{
CREATE EXTENSION allot;
CREATE ROLE farm_admin LOGIN IN ROLE allot_admin;
CREATE ROLE boinc_web LOGIN IN ROLE allot_web;
CREATE SCHEMA boinc AUTHORIZATION boinc_web;
CREATE ROLE openbench_web LOGIN IN ROLE allot_web;
CREATE SCHEMA openbench AUTHORIZATION farm_admin;
});
my %pg = (PGHOST => $node->host, PGPORT => $node->port, PGDATABASE => 'postgres');

my $work = PostgreSQL::Test::Utils::tempdir('admin');
my ($examples, $installed, $npm_said) = install_front_ends($work);
ok($installed, 'npm ci installs the packages of examples/package-lock.json') or diag($npm_said);

# run(ENV, CMD...): (exit status, stdout, stderr).
sub run
{
	my ($env, @cmd) = @_;
	my ($out, $err) = ('', '');
	local @ENV{ keys %pg } = values %pg;
	local @ENV{ keys %$env } = values %$env;
	IPC::Run::run(\@cmd, '<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(60));
	note "@cmd\n$out$err";
	return ($? >> 8, $out, $err);
}
sub psql_file
{
	my ($user, $file, @vars) = @_;
	my ($rc, $out, $err) = run({ PGUSER => $user }, $node->installed_command('psql'), '-X', '-q',
		'-v', 'ON_ERROR_STOP=1', @vars, '-f', $file);
	return $rc == 0 ? 1 : (diag($err), 0);
}

# refused(WHAT, [EXIT, MESSAGE], (EXIT, STDOUT, STDERR)): the command
# failed with that status and said MESSAGE (a regexp) on stderr, as a
# sentence: no constraint name, no "violates", no stack trace.
sub refused
{
	my ($what, $want, $rc, $out, $err) = @_;
	my ($exit, $message) = @$want;
	is($rc, $exit, "$what: exit $exit");
	like($err, $message, "$what: says so");
	unlike($err, qr/violates|constraint "|duplicate key|\n\s+at /, "$what: in words, not a raw database error");
}

# ---------------------------------------------------------------------------
# BOINC.
my $boinc = "$examples/boinc";
my $boinc_data = "$work/boinc-data";
ok(psql_file('boinc_web', "$boinc/schema.sql"), 'schema.sql, run by the front end\'s login, makes schema boinc');
sub boinc_admin { return run({ PGUSER => 'farm_admin', DATA_DIR => $boinc_data }, 'node', "$boinc/admin.js", @_); }
sql(q{
INSERT INTO allot.app (id, name) VALUES (1, 'lines');
INSERT INTO allot.app_version (id, app_id, platform, resource, ncpus) VALUES
    (1, 1, 'x86_64-pc-linux-gnu', 'cpu', 1), (2, 1, 'x86_64-pc-linux-gnu', 'cpu', 1),
    (3, 1, 'x86_64-pc-linux-gnu', 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id) VALUES (1, 'lines', 'lines', 1);
});
my $exe = "$work/lines";
PostgreSQL::Test::Utils::append_to_file($exe, "an executable\n");

my ($rc, $out, $err) = boinc_admin(qw(add-app-version --app-version-id 1 --version-num 100 --file), $exe);
refused('add-app-version before setup', [ 1, qr/^no code signing key in \Q$boinc_data\E\/keys: run node admin\.js setup first/m ],
	$rc, $out, $err);
($rc) = boinc_admin('setup');
is($rc, 0, 'admin.js setup');

($rc, $out) = boinc_admin('add-account', 'alice');
my ($alice) = $out =~ /^account ([0-9]+) \(alice\)/m;
ok($rc == 0 && $alice, "add-account alice: account $alice");
refused('add-account of a name taken', [ 1, qr/^an account named "alice" already exists \(account $alice\)$/m ],
	boinc_admin('add-account', 'alice'));
is(sql(q{SELECT count(*) FROM boinc.account WHERE name = 'alice'}), '1', 'and there is still one account alice');
refused('add-account of a name too long', [ 2, qr/^NAME must be at most 254 characters, not 300$/m ],
	boinc_admin('add-account', 'x' x 300));

my $jobs = sql('SELECT count(*) FROM allot.job');
refused('submit to a workload that does not exist', [ 1, qr/^allot has no workload 424242$/m ],
	boinc_admin(qw(submit --workload 424242)));
refused('submit --app-units abc', [ 2, qr/^--app-units must be a positive number, not "abc"$/m ],
	boinc_admin(qw(submit --workload 1 --app-units abc)));
refused('submit --command-line of 5000 characters', [ 2, qr/^--command-line must be at most 4096 characters, not 5000$/m ],
	boinc_admin(qw(submit --workload 1 --command-line), 'x' x 5000));
is(sql('SELECT count(*) FROM allot.job'), $jobs, 'no job was made');

($rc, $out, $err) = boinc_admin(qw(add-app-version --app-version-id 1 --version-num 100 --file), $exe);
is($rc, 0, 'add-app-version: app version 1 published') or diag($err);
refused('add-app-version of a published app version',
	[ 1, qr/^allot app version 1 is already published, as lines_100_x86_64-pc-linux-gnu: /m ],
	boinc_admin(qw(add-app-version --app-version-id 1 --version-num 101 --file), $exe));
refused('add-app-version of a version number the app has',
	[ 1, qr/^lines version 100 for x86_64-pc-linux-gnu is already published, as allot app version 1: give this one another --version-num$/m ],
	boinc_admin(qw(add-app-version --app-version-id 2 --version-num 100 --file), $exe));
refused('add-app-version of a file that is not there', [ 2, qr/^--file "\Q$work\E\/nothing": there is no such file$/m ],
	boinc_admin(qw(add-app-version --app-version-id 2 --version-num 101 --file), "$work/nothing"));
PostgreSQL::Test::Utils::append_to_file("$boinc_data/download/lines_102_x86_64-pc-linux-gnu", 'left over');
refused('add-app-version over a download file the database does not know',
	[ 1, qr/^\Q$boinc_data\E\/download\/lines_102_x86_64-pc-linux-gnu already exists, but no app version in the database is published as it/m ],
	boinc_admin(qw(add-app-version --app-version-id 2 --version-num 102 --file), $exe));
is(slurp_file("$boinc_data/download/lines_102_x86_64-pc-linux-gnu"), 'left over', 'which is left as it was');
refused('add-app-version --api-version x', [ 2, qr/^--api-version must be a version such as 7\.20\.5, not "x"$/m ],
	boinc_admin(qw(add-app-version --app-version-id 2 --version-num 103 --api-version x --file), $exe));
is(sql('SELECT string_agg(app_version_id::text, \',\') FROM boinc.app_version'), '1', 'only app version 1 is published');

# ---------------------------------------------------------------------------
# OpenBench.
my $ob = "$examples/openbench";
my $ob_data = "$work/openbench-data";
sql(q{ALTER DATABASE postgres SET allot.count_requester = on});
ok(psql_file('farm_admin', "$ob/setup.sql", '-v', 'web=openbench_web'), 'setup.sql, run by the operator');
sub ob_admin
{
	my ($stdin, @args) = @_;
	my ($out, $err) = ('', '');
	local @ENV{ keys %pg } = values %pg;
	local @ENV{qw(PGUSER DATA_DIR)} = ('farm_admin', $ob_data);
	IPC::Run::run([ 'node', "$ob/admin.js", @args ], '<', \$stdin, '>', \$out, '2>', \$err, IPC::Run::timeout(60));
	note "node admin.js @args\n$out$err";
	return ($? >> 8, $out, $err);
}

my $PASSWORD = 'a password of the test';
($rc) = ob_admin("$PASSWORD\n", qw(add-user alice --password-stdin));
is($rc, 0, 'add-user alice');
my $hash = sql(q{SELECT encode(hash, 'hex') FROM openbench.account WHERE name = 'alice'});
refused('add-user of a name taken', [ 1, qr/^an account named "alice" already exists: its password is unchanged$/m ],
	ob_admin("another password\n", qw(add-user alice --password-stdin)));
is(sql(q{SELECT encode(hash, 'hex') FROM openbench.account WHERE name = 'alice'}), $hash, 'its password is unchanged');

my $net = "$work/toy.nnue";
PostgreSQL::Test::Utils::append_to_file($net, 'the bytes of a network');
refused('add-network of an engine that does not exist', [ 2, qr/^no engine "Nope" \(add-engine first\)$/m ],
	ob_admin('', qw(add-network --engine Nope --name toy --file), $net));
($rc) = ob_admin('', qw(add-engine Weiss --compilers gcc>=10));
is($rc, 0, 'add-engine Weiss');
($rc) = ob_admin('', qw(add-network --engine Weiss --name toy --file), $net);
is($rc, 0, 'add-network toy');
my $other = "$work/other.nnue";
PostgreSQL::Test::Utils::append_to_file($other, 'the bytes of another network');
refused('add-network of a name taken', [ 1, qr/^engine Weiss already has a network named "toy" \([0-9A-F]{8}\): give this one another --name$/m ],
	ob_admin('', qw(add-network --engine Weiss --name toy --file), $other));
refused('add-network of a file already there', [ 1, qr/^engine Weiss already has this file, as network "toy" \([0-9A-F]{8}\)$/m ],
	ob_admin('', qw(add-network --engine Weiss --name toy2 --file), $net));
is(sql('SELECT count(*) FROM openbench.network'), '1', 'one network');
refused('add-book of a file that is not there', [ 2, qr/^--file "\Q$work\E\/nothing\.epd": there is no such file$/m ],
	ob_admin('', qw(add-book eight.epd --source http://127.0.0.1/eight.epd.zip --file), "$work/nothing.epd"));
($rc) = ob_admin('', qw(add-book eight.epd --source http://127.0.0.1/eight.epd.zip --sha256), '0' x 64);
is($rc, 0, 'add-book eight.epd');

my $sha = 'a' x 40;
my @sides = ('--dev-source', 'http://127.0.0.1/dev.zip', '--dev-sha', $sha, '--dev-bench', 1000,
	'--base-source', 'http://127.0.0.1/base.zip', '--base-sha', $sha, '--base-bench', 1000, '--tc', 'N=2000');
refused('create-test of an engine that does not exist', [ 2, qr/^no engine "Nope" \(add-engine first\)$/m ],
	ob_admin('', 'create-test', @sides, qw(--engine Nope --book eight.epd --games 8)));
refused('create-test of a book that does not exist', [ 2, qr/^no book "nine\.epd" \(add-book first\)$/m ],
	ob_admin('', 'create-test', @sides, qw(--engine Weiss --book nine.epd --games 8)));
refused('create-test of a network that does not exist', [ 2, qr/^engine Weiss has no network "big" \(add-network\)$/m ],
	ob_admin('', 'create-test', @sides, qw(--engine Weiss --book eight.epd --games 8 --dev-network big)));
# A workload inserted with an id of its own where the identity goes next
# (the BOINC workload above, id 1, may be one already).
my $next = sql(q{SELECT coalesce(last_value + increment_by, start_value) FROM pg_sequences
                  WHERE schemaname = 'allot' AND sequencename = 'workload_id_seq'});
sql(qq{INSERT INTO allot.workload (id, name, engine) VALUES ($next, 'in the way', 'SF') ON CONFLICT (id) DO NOTHING});
refused('create-test where allot.workload\'s next id is taken',
	[ 1, qr/^allot\.workload's next id is taken \(Key \(id\)=\($next\) already exists\.\): workloads were inserted with ids of their own/m ],
	ob_admin('', 'create-test', @sides, qw(--engine Weiss --book eight.epd --games 8)));
sql(q{DELETE FROM allot.workload WHERE name = 'in the way'});
is(sql('SELECT count(*) FROM openbench.test'), '0', 'no test was made');

# A tune: its parameters from a file, one commit against itself.
my @tune_side = ('--dev-source', 'http://127.0.0.1/dev.zip', '--dev-sha', $sha, '--dev-bench', 1000, '--tc', 'N=2000',
	qw(--engine Weiss --book eight.epd --workload-size 4));
PostgreSQL::Test::Utils::append_to_file("$work/tune.txt", "Aggression, int, 50, 0, 100, 5, 0.002\n");
PostgreSQL::Test::Utils::append_to_file("$work/bad-tune.txt", "Aggression, int, 50, 0, 100, 5, 0.002\nScale, float, 3, 0, 2, 0.1, 0.002\n");
refused('create-test --spsa with --games', [ 2, qr/^a tune \(--spsa\) has no --sprt or --games$/m ],
	ob_admin('', 'create-test', @tune_side, '--spsa', "$work/tune.txt", qw(--iterations 3 --games 8)));
refused('create-test --spsa with a base', [ 2, qr/^a tune plays one commit against itself: no --base-sha$/m ],
	ob_admin('', 'create-test', @tune_side, '--spsa', "$work/tune.txt", '--iterations', 3, '--base-sha', $sha));
refused('create-test --spsa of a parameter out of its bounds',
	[ 2, qr/^--spsa ".*bad-tune\.txt": line 2: the start of Scale \(3\) must be within \[0, 2\]$/m ],
	ob_admin('', 'create-test', @tune_side, '--spsa', "$work/bad-tune.txt", qw(--iterations 3)));
refused('create-test --spsa of no file', [ 2, qr/^--spsa "nowhere\.txt": there is no such file$/m ],
	ob_admin('', 'create-test', @tune_side, qw(--spsa nowhere.txt --iterations 3)));
refused('create-test --iterations without --spsa', [ 2, qr/^--iterations is for a tune \(--spsa FILE\)$/m ],
	ob_admin('', 'create-test', @sides, qw(--engine Weiss --book eight.epd --games 8 --iterations 3)));
is(sql('SELECT count(*) FROM openbench.test'), '0', 'no tune was made');
my ($tune_rc, $tune_out) = ob_admin('', 'create-test', @tune_side, '--spsa', "$work/tune.txt", qw(--iterations 3 --distribution MULTIPLE --name tune));
my ($tune) = $tune_out =~ /^test ([0-9]+)$/m;
ok($tune_rc == 0 && $tune, "create-test --spsa: tune $tune");
is(sql("SELECT t.type || ' ' || (t.base_sha = t.dev_sha) || ' ' || w.mode || ' ' || r.iterations || ' ' || r.pairs_per || ' ' || p.name || ' ' || p.value
          FROM openbench.test t JOIN allot.workload w USING (id) JOIN openbench.spsa_run r ON r.test_id = t.id
          JOIN openbench.spsa_parameter p ON p.test_id = t.id WHERE t.id = $tune"), 'SPSA true spsa_multiple 3 4 Aggression 50',
	'a tune of one commit, spsa_multiple in allot, 3 iterations of 4 pairs, its parameter at its start');
like((ob_admin('', 'tests'))[1], qr/^$tune\ttune\tSPSA\t.*\t0 games played, 24 for its iterations$/m, 'admin.js tests: the games of its iterations');
(undef, $tune_out) = ob_admin('', 'stop-test', $tune);
sql("DELETE FROM openbench.spsa_parameter; DELETE FROM openbench.spsa_run; DELETE FROM openbench.action;
     DELETE FROM openbench.test; DELETE FROM allot.workload WHERE id = $tune");

refused('stop-test of a test that does not exist', [ 1, qr/^no test 424242 \(node admin\.js tests lists them\)$/m ],
	ob_admin('', qw(stop-test 424242)));

# ---------------------------------------------------------------------------
# The game count, through the server, as a worker reports.
($rc, $out) = ob_admin('', 'create-test', @sides, qw(--engine Weiss --book eight.epd --games 8 --workload-size 4 --name eight));
my ($test) = $out =~ /^test ([0-9]+)$/m;
ok($rc == 0 && $test, "create-test --games 8: test $test");

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $url = "http://127.0.0.1:$port";
my $server_log = "$work/openbench-server.log";
my $server = IPC::Run::start(
	[ 'node', "$ob/server.js" ], '<', \undef, '>', $server_log, '2>&1',
	init => sub {
		@ENV{ keys %pg } = values %pg;
		@ENV{qw(PGUSER PORT DATA_DIR)} = ('openbench_web', $port, $ob_data);
	});
END { $server->kill_kill if $server; }
my $deadline = time + 120;
sleep 0.1 while time < $deadline && (!-e $server_log || slurp_file($server_log) !~ /serving/);
like(slurp_file($server_log), qr/serving OpenBench workers at \Q$url\E\//, 'the OpenBench front end serves');

sub call { return worker_call($url, @_); }
my %machine;
for my $name (qw(one two))
{
	my $r = call('clientWorkerInfo', username => 'alice', password => $PASSWORD,
		system_info => worker_info(machine_name => $name));
	my @id = (machine_id => $r->{machine_id}, secret => $r->{secret});
	$r = call('clientGetWorkload', @id);
	is($r->{workload}{test}{id}, $test, "machine $name is given test $test");
	is_deeply($r->{workload}{distribution}, { 'runner-count' => 1, 'concurrency-per' => 2, 'rounds-per-runner' => 16 },
		"machine $name: a workload of 1 runner, 2 games at a time, 16 rounds (its report may hold 32 games)");
	$machine{$name} = [ @id, test_id => $test, result_id => $r->{workload}{result}{id},
		crashes => 0, timelosses => 0, illegals => 0, spsa_delta => '' ];
}
# Machine one reports 16 games at once: the test, which asked for 8, has
# played 16 and stops.  Machine two reports 8 more after the stop: the
# report is kept, not counted.
is_deeply(call('clientSubmitResults', @{ $machine{one} }, trinomial => '4 8 4', pentanomial => '0 4 0 4 0'),
	{ stop => JSON::PP::true }, 'a report of 16 games ends the test of 8');
is_deeply(call('clientSubmitResults', @{ $machine{two} }, trinomial => '2 4 2', pentanomial => '0 2 0 2 0'),
	{ stop => JSON::PP::true }, 'a report of 8 more after it stopped: told to stop');
is(sql("SELECT games || ' ' || finished_by FROM openbench.test WHERE id = $test"), '16 games',
	'the test counts its 16 games, not the 8 reported after it stopped');
($rc, $out) = ob_admin('', 'tests');
like($out, qr/^$test\teight\tGAMES\t.*\tpassed \(games\)\tL-D-W 4-8-4\tpairs 0 4 0 4 0\t16 games played, 8 asked for$/m,
	'admin.js tests: the games the test played, against the games it asked for');

# Stopping a stopped test says so, and succeeds.
($rc, $out) = ob_admin('', 'stop-test', $test);
is($rc, 0, 'stop-test of a stopped test: exit 0');
like($out, qr/^test $test had already stopped$/m, 'and says it had already stopped');

$server->signal('TERM');
$server->finish;
$server = undef;
like(slurp_file($server_log), qr/SIGTERM: no new connections.*\n.*\bstopped\n\z/s, 'the server stops on SIGTERM');

done_testing();
