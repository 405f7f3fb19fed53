# The README's walk-through, run as printed against what `scripts/demo.sh
# --keep` leaves, so that it cannot rot.
#
# The README marks each block of the walk-through with an HTML comment,
# invisible when rendered:
#   <!-- walk-through -->   before a ```sql or ```sh block to run
#   <!-- output -->         before a ``` block right after it: what it prints
# The test
#   - runs `scripts/demo.sh --keep --no-emulator --no-build` (the same code as
#     the reader's `--keep`, without the emulator's minutes and without
#     building again: scripts/test.sh has just built and installed allot);
#   - takes the `export` line and the stop command the demo printed;
#   - runs every marked block in order, as a reader at two terminals would:
#     SQL blocks in one psql session (so \gset variables carry over), shell
#     blocks in one bash session (variables and the background web server
#     carry over) in a copy of examples/, with `set -eu -o pipefail`, and with
#     the ports a reader's machine has free but a shared test machine may not
#     replaced by free ones: the web layer's 8080, the BOINC front end's 8081
#     and the BOINC client's GUI RPC port 31418;
#   - among them the BOINC quick start ("Try BOINC locally"): Debian's BOINC
#     client, started by the block in a directory of its own, fetches, runs
#     and reports three jobs of the example front end, and the block ends
#     when the client shows the credit allot granted; the test then checks
#     that the jobs were credited in allot, that the client and the front
#     end the block stopped are gone, and that both databases pass
#     check_invariants();
#   - fails if a block fails, and compares a block's output with the README's
#     where it shows one: line by line, trailing blanks ignored, `...`
#     matching any text within its line (a deadline, a timestamp);
#   - stops the cluster with the command the demo printed.
use strict;
use warnings FATAL => 'all';
use Cwd qw(abs_path);
use File::Path ();
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = abs_path("$ENV{TESTDIR}/..");

# ---------------------------------------------------------------------------
# The blocks, in README order: {lang, code, output (undef if none), line}.
sub walk_through_blocks
{
	my @lines = split /\n/, $_[0], -1;
	my @blocks;
	for (my $i = 0; $i < @lines; $i++)
	{
		my $marker = $lines[$i] =~ /^<!-- (walk-through|output) -->$/ ? $1 : next;
		my $fence = $lines[ $i + 1 ] // '';
		my ($lang) = $fence =~ /^```(\w*)$/
		  or die "README line ", $i + 1, ": <!-- $marker --> is not followed by a code block";
		my $start = $i + 2;
		my $end = $start;
		$end++ while $end < @lines && $lines[$end] ne '```';
		die "README line ", $i + 2, ": unterminated code block" if $end == @lines;
		my $text = join "\n", @lines[ $start .. $end - 1 ];
		if ($marker eq 'walk-through')
		{
			die "README line ", $i + 2, ": a walk-through block must be sql or sh, not \"$lang\""
			  unless $lang eq 'sql' || $lang eq 'sh';
			push @blocks, { lang => $lang, code => $text, output => undef, line => $i + 3 };
		}
		else
		{
			# only blank lines between a block and its output
			my $j = $i - 1;
			$j-- while $j >= 0 && $lines[$j] =~ /^\s*$/;
			die "README line ", $i + 1, ": <!-- output --> must directly follow a walk-through block"
			  unless @blocks && $lines[$j] eq '```' && !defined $blocks[-1]{output}
			  && $blocks[-1]{line} <= $j;
			$blocks[-1]{output} = $text;
		}
		$i = $end;
	}
	return @blocks;
}

my @blocks = walk_through_blocks(slurp_file("$root/README.md"));
my %langs;
$langs{ $_->{lang} }++ for @blocks;
cmp_ok(scalar @blocks, '>=', 10, 'the README marks the blocks of its walk-through (' . scalar(@blocks) . ')');
ok($langs{sql} && $langs{sh}, 'both SQL and shell blocks');

# ---------------------------------------------------------------------------
# The cluster, as `scripts/demo.sh --keep` leaves it.
my $bindir = `pg_config --bindir`;
chomp $bindir;
my ($demo_out, $demo_err) = ('', '');
my $demo_ok = IPC::Run::run(
	[ 'bash', "$root/scripts/demo.sh", '--keep', '--no-emulator', '--no-build' ],
	'<', \undef, '>', \$demo_out, '2>', \$demo_err,
	init => sub { $ENV{ALLOT_PG_BIN} = $bindir });
ok($demo_ok, 'scripts/demo.sh --keep --no-emulator --no-build succeeds')
  or diag("stdout:\n$demo_out\nstderr:\n$demo_err");

my ($export) = $demo_out =~ /^  export (.*)$/m;
my ($stop) = $demo_out =~ /^To stop it:\n  (.*)$/m;
ok(defined $export && defined $stop, 'the demo prints an export line and a stop command')
  or BAIL_OUT("no export line or stop command in:\n$demo_out");

my $cluster_up = 1;
END
{
	# also when the test dies: never leave the demo's cluster running
	if ($cluster_up && defined $stop)
	{
		local $?;
		system('bash', '-c', $stop);
	}
}

# The reader's shell after the export line.
my %env = %ENV;
for my $assignment (split / /, $export)
{
	my ($name, $value) = $assignment =~ /^([A-Z_]+)=(.*)$/
	  or BAIL_OUT("cannot read \"$assignment\" in the export line");
	$value =~ s/\$PATH\b/$ENV{PATH}/;
	$env{$name} = $value;
}
is($env{PGDATABASE}, 'farm', 'the export line opens database farm');
like($env{PGHOST} // '', qr{^/}, 'over the demo cluster\'s unix socket');

# The shell blocks run in a copy of examples/, as in a fresh clone (no
# node_modules): `npm ci` and the web layer's log write there, not in the tree.
my $work = PostgreSQL::Test::Utils::tempdir('readme');
system('cp', '-a', "$root/examples", "$work/examples") == 0 or die "cp examples: $?";
system('rm', '-rf', glob("$work/examples/node_modules $work/examples/*/node_modules")) == 0 or die "rm node_modules: $?";
# The ports the README's shell blocks use, and free ones to use instead.
my %port_for = map { $_ => PostgreSQL::Test::Cluster::get_free_port() } qw(8080 8081 31418);

# ---------------------------------------------------------------------------
# Two sessions, fed block by block.  Each block is followed by a command that
# prints a marker; what comes before the marker is the block's output.

sub session
{
	my ($cmd, $marker_cmd, $dir) = @_;
	my $s = { in => '', out => '', err => '', marker_cmd => $marker_cmd, n => 0 };
	$s->{timer} = IPC::Run::timeout(180);
	$s->{h} = IPC::Run::start(
		$cmd,
		init => sub {
			setpgrp(0, 0);    # its own process group, so END can stop the web server too
			%ENV = %env;
			chdir $dir or die "chdir $dir: $!";
		},
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err}, $s->{timer});
	return $s;
}

# run_block(SESSION, CODE): the block's output, or undef if the session died
# (a failing command ends it: ON_ERROR_STOP, set -e) or timed out.
sub run_block
{
	my ($s, $code) = @_;
	my $marker = sprintf '__readme_block_%d_done__', ++$s->{n};
	$s->{out} = '';
	$s->{in} .= "$code\n" . sprintf($s->{marker_cmd}, $marker) . "\n";
	my $ok = eval {
		# a block waits for npm at most; a background command holding the
		# session's pipes after it died would otherwise keep us here
		$s->{timer}->start(180);
		while ($s->{out} !~ /^\Q$marker\E$/m)
		{
			return 0 unless $s->{h}->pumpable;
			$s->{h}->pump;
		}
		1;
	};
	return undef unless $ok;
	my ($output) = $s->{out} =~ /\A(.*?)^\Q$marker\E$/ms;
	return $output;
}

# stop_session(SESSION, LAST_WORDS): true if the session ended by itself
# within a minute, false if it had to be killed.
sub stop_session
{
	my ($s, $last_words) = @_;
	$s->{in} .= "$last_words\n";
	return 1 if eval { $s->{timer}->start(60); $s->{h}->finish; 1 };
	$s->{h}->kill_kill;
	return 0;
}

my $psql = session([ 'psql', '-X', '-v', 'ON_ERROR_STOP=1' ], '\echo %s', $root);
my $bash = session([ 'bash', '--noprofile', '--norc' ], 'echo %s', $work);
my @sessions = ($psql, $bash);
END
{
	# each session leads its own process group: this also stops a web server
	# a failed shell block left running in the background
	local $?;
	for my $s (@sessions)
	{
		kill 'KILL', -$_->{PID} for grep { $_->{PID} } @{ $s->{h}{KIDS} // [] };
	}
}
$bash->{in} .= "set -eu -o pipefail\n";

# expected(OUTPUT) as a regex: each line exact but for trailing blanks, and
# `...` matching any text within its line.
sub lines_of
{
	my @l = map { s/\s+$//r } split /\n/, $_[0], -1;
	pop @l while @l && $l[-1] eq '';
	return @l;
}

sub output_matches
{
	my ($got, $expected) = @_;
	my @got = lines_of($got);
	my @want = lines_of($expected);
	return 0 unless @got == @want;
	for my $i (0 .. $#want)
	{
		my $re = join '.*?', map { quotemeta } split /\.\.\./, $want[$i], -1;
		return 0 unless $got[$i] =~ /^$re$/;
	}
	return 1;
}

my $all_ran = 1;
for my $b (@blocks)
{
	my $where = "README line $b->{line} ($b->{lang})";
	my $code = $b->{code};
	$code =~ s/\b(8080|8081|31418)\b/$port_for{$1}/g if $b->{lang} eq 'sh';
	my $s = $b->{lang} eq 'sql' ? $psql : $bash;
	my $got = run_block($s, $code);
	if (!ok(defined $got, "$where runs as printed"))
	{
		diag("the block:\n$b->{code}\nits output:\n$s->{out}\nstderr:\n$s->{err}");
		$all_ran = 0;
		last;
	}
	next unless defined $b->{output};
	ok(output_matches($got, $b->{output}), "$where prints what the README shows")
	  or diag("the README shows:\n$b->{output}\nthe block printed:\n$got");
}

# What the reader leaves behind: consistent farms, credit where the BOINC
# quick start said, and no web server, front end or client still running.
ok( output_matches(
		run_block($psql, 'SELECT * FROM allot.check_invariants();') // 'no output',
		" check_invariants\n------------------\n(0 rows)"),
	'check_invariants() is empty afterwards');

# psql in the reader's environment, in database DB: its output (-At).
sub reader_psql
{
	my ($db, $sql) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'psql', '-X', '-At', '-d', $db, '-c', $sql ],
		'<', \undef, '>', \$out, '2>', \$err, init => sub { %ENV = %env; });
	return $out . $err;
}
is( reader_psql('volunteer',
		q{SELECT string_agg(j.state || ' ' || j.validated || ' ' || round(j.credit::numeric, 6), ', ')
		    FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id WHERE w.name = 'lines'}),
	"done true 0.578704, done true 0.578704, done true 0.578704\n",
	'the BOINC quick start: allot has its three jobs done, validated and credited');
is(reader_psql('volunteer', 'SELECT count(*) FROM allot.check_invariants()'), "0\n",
	'and check_invariants() is empty in its database');
# (a session whose block failed may still be running it: ask only after success)
my $try = $all_ran ? run_block($bash, 'echo "$TRY"') // '' : '';
chomp $try;

stop_session($psql, '\q');
ok(stop_session($bash, 'wait; exit'),
	'the shell session ends by itself: nothing the blocks started in the background still runs');
like(slurp_file("$work/examples/web/server.log"), qr/SIGTERM: .*\n.*\bstopped\n\z/s,
	'the walk-through stopped its web server (kill %1), which finished cleanly');
like(-e "$try/server.log" ? slurp_file("$try/server.log") : '', qr/SIGTERM: .*\n.*\bstopped\n\z/s,
	'the BOINC quick start stopped its front end (kill $SERVER), which finished cleanly');
like(-e "$try/client.log" ? slurp_file("$try/client.log") : '', qr/\[---\] Exiting\n\z/,
	'and its BOINC client (boinccmd --quit), which exited');
File::Path::remove_tree($try) if $try =~ m{^/.+};

is(system('bash', '-c', $stop), 0, 'the stop command the demo printed stops the cluster');
$cluster_up = 0;
ok(!-e $env{PGHOST}, 'and removes its directory');

done_testing();
