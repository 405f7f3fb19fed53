# The README's quick starts, run as printed, each in a fresh shell, so that
# they cannot rot.
#
# The README marks the blocks a reader runs with HTML comments, invisible
# when rendered:
#   <!-- walk-through -->   before a ```sql or ```sh block to run
#   <!-- output -->         before a ``` block right after it: what it prints
# and each marked block belongs to the quick start ("## Quick start: ...")
# it stands under.  The test
#   - copies the repository (as a fresh clone would be: no node_modules, no
#     demo.env) and runs every quick start there, in the reverse of the
#     README's order, each in new sessions, as a reader who opens a new
#     terminal for it would: shell blocks in one bash session (variables and
#     background servers carry over within the quick start, never to the
#     next) with `set -eu -o pipefail`, SQL blocks in one psql session
#     opened with the environment the quick start's demo.env gives;
#   - sets ALLOT_NO_BUILD=1, so that `scripts/demo.sh --keep` uses the allot
#     scripts/test.sh has just built and installed, and replaces the ports
#     a reader's machine has free but a shared test machine may not (the
#     web layer's 8080, the BOINC front end's 8081, the OpenBench front
#     end's 8082, the BOINC client's GUI RPC port 31418) with free ones;
#   - fails if a block fails, and compares a block's output with the
#     README's where it shows one: line by line, trailing blanks ignored,
#     `...` matching any text within its line (a deadline, an id);
#   - checks that each quick start left nothing behind: its shell ends by
#     itself (no background job still running), its cluster is stopped
#     (`scripts/demo.sh --stop`) and gone, and the servers and the BOINC
#     client it started stopped cleanly, as their logs say.
use strict;
use warnings FATAL => 'all';
use Cwd qw(abs_path);
use File::Path ();
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = abs_path("$ENV{TESTDIR}/..");
my ($tree, @sessions);    # the reader's copy of the repository; the sessions started

# ---------------------------------------------------------------------------
# The quick starts, in README order: {title, blocks}; a block is {lang,
# code, output (undef if none), line}.
sub quick_starts
{
	my @lines = split /\n/, $_[0], -1;
	my (@qs, $in_code);
	for (my $i = 0; $i < @lines; $i++)
	{
		$in_code = !$in_code if $lines[$i] =~ /^```/;
		if (!$in_code && $lines[$i] =~ /^## (.*)$/)
		{
			my $title = $1;
			push @qs, { title => $title, blocks => [] } if $title =~ /^Quick start/;
			next;
		}
		my $marker = $lines[$i] =~ /^<!-- (walk-through|output) -->$/ ? $1 : next;
		die "README line ", $i + 1, ": <!-- $marker --> outside a quick start" unless @qs;
		my $blocks = $qs[-1]{blocks};
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
			push @$blocks, { lang => $lang, code => $text, output => undef, line => $i + 3 };
		}
		else
		{
			# only blank lines between a block and its output
			my $j = $i - 1;
			$j-- while $j >= 0 && $lines[$j] =~ /^\s*$/;
			die "README line ", $i + 1, ": <!-- output --> must directly follow a walk-through block"
			  unless @$blocks && $lines[$j] eq '```' && !defined $blocks->[-1]{output}
			  && $blocks->[-1]{line} <= $j;
			$blocks->[-1]{output} = $text;
		}
		$i = $end;
	}
	return @qs;
}

my @quick_starts = quick_starts(slurp_file("$root/README.md"));
is(scalar @quick_starts, 3, 'the README has three quick starts: '
	  . join(', ', map { "\"$_->{title}\"" } @quick_starts));
for my $qs (@quick_starts)
{
	my %langs;
	$langs{ $_->{lang} }++ for @{ $qs->{blocks} };
	ok(@{ $qs->{blocks} } >= 3 && $langs{sh}, "\"$qs->{title}\" marks its blocks ("
		  . scalar(@{ $qs->{blocks} }) . ')');
	like($qs->{blocks}[0]{code}, qr/\Ascripts\/demo\.sh --keep\b.*\n\. \.\/demo\.env\b/,
		"\"$qs->{title}\" starts its own cluster in its first block");
	like($qs->{blocks}[-1]{code}, qr/^scripts\/demo\.sh --stop$/m, "and stops it in its last");
}

# ---------------------------------------------------------------------------
# The repository as a reader's fresh clone has it.
my $work = PostgreSQL::Test::Utils::tempdir('readme');
$tree = "$work/repo";
mkdir $tree or die "mkdir $tree: $!";
system('bash', '-c', 'tar -C "$0" -cf - --exclude=./.git --exclude=node_modules --exclude=./demo.env '
	  . '--exclude=./tmp_check --exclude=./tmp_check_iso --exclude=./results --exclude=./output_iso '
	  . '--exclude=./log --exclude=./test/tmp_check . | tar -C "$1" -xf -', $root, $tree) == 0
  or die "copying the repository: $?";

# A fresh shell: the test's environment without a cluster's.
my %fresh = %ENV;
delete @fresh{qw(PGHOST PGPORT PGUSER PGDATABASE PGHOSTADDR PGSERVICE DATA_DIR)};
$fresh{ALLOT_NO_BUILD} = 1;
# The ports the README's shell blocks use, and free ones to use instead.
my %port_for = map { $_ => PostgreSQL::Test::Cluster::get_free_port() } qw(8080 8081 8082 31418);

# ---------------------------------------------------------------------------
# Sessions, fed block by block.  Each block is followed by a command that
# prints a marker; what comes before the marker is the block's output.

sub session
{
	my ($cmd, $marker_cmd, $env) = @_;
	my $s = { in => '', out => '', err => '', marker_cmd => $marker_cmd, n => 0 };
	$s->{timer} = IPC::Run::timeout(600);
	$s->{h} = IPC::Run::start(
		$cmd,
		init => sub {
			setpgrp(0, 0);    # its own process group, so END can stop its servers too
			%ENV = %$env;
			chdir $tree or die "chdir $tree: $!";
		},
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err}, $s->{timer});
	push @sessions, $s;
	return $s;
}
END
{
	# each session leads its own process group: this also stops a server or
	# client a failed block left running in the background, and the cluster
	local $?;
	for my $s (@sessions)
	{
		kill 'KILL', -$_->{PID} for grep { $_->{PID} } @{ $s->{h}{KIDS} // [] };
	}
	if (defined $tree && -e "$tree/demo.env")
	{
		system('bash', '-c', 'cd "$0" && scripts/demo.sh --stop >/dev/null', $tree);
	}
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
		# a hang guard (a BOINC client's cycle takes a minute, more on a busy
		# machine); a background
		# command holding the session's pipes after it died would otherwise
		# keep us here
		$s->{timer}->start(600);
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

# The environment demo.env gives a shell (its one export line).
sub demo_env
{
	my %env = %fresh;
	my ($export) = slurp_file("$tree/demo.env") =~ /^export (.*)$/m
	  or die "demo.env holds no export line";
	for my $assignment (split / /, $export)
	{
		my ($name, $value) = $assignment =~ /^([A-Z_]+)=(.*)$/
		  or die "cannot read \"$assignment\" in demo.env";
		$value =~ s/\$PATH\b/$fresh{PATH}/;
		$env{$name} = $value;
	}
	return \%env;
}

sub stopped_cleanly
{
	my ($log) = @_;
	return -e $log && slurp_file($log) =~ /SIGTERM: .*\n.*\bstopped\n\z/s;
}

# ---------------------------------------------------------------------------
for my $qs (reverse @quick_starts)
{
	my $title = $qs->{title};
	note "---- $title";
	my $bash = session([ 'bash', '--noprofile', '--norc' ], 'echo %s', \%fresh);
	$bash->{in} .= "set -eu -o pipefail\n";
	my $psql;
	my ($all_ran, $cluster) = (1, undef);
	for my $b (@{ $qs->{blocks} })
	{
		my $where = "\"$title\", README line $b->{line} ($b->{lang})";
		my $code = $b->{code};
		my $s = $bash;
		if ($b->{lang} eq 'sh')
		{
			$code =~ s/\b(8080|8081|8082|31418)\b/$port_for{$1}/g;
		}
		else
		{
			$psql //= session([ 'psql', '-X', '-v', 'ON_ERROR_STOP=1' ], '\echo %s', demo_env());
			$s = $psql;
		}
		my $got = run_block($s, $code);
		if (!ok(defined $got, "$where runs as printed"))
		{
			diag("the block:\n$b->{code}\nits output:\n$s->{out}\nstderr:\n$s->{err}");
			$all_ran = 0;
			last;
		}
		$cluster //= demo_env()->{PGHOST} if -e "$tree/demo.env";
		next unless defined $b->{output};
		ok(output_matches($got, $b->{output}), "$where prints what the README shows")
		  or diag("the README shows:\n$b->{output}\nthe block printed:\n$got");
	}
	# (a session whose block failed may still be running it: ask only after success)
	my $try = $all_ran ? run_block($bash, 'echo "${TRY:-}"') // '' : '';
	chomp $try;
	stop_session($psql, '\q') if $psql;
	ok(stop_session($bash, 'wait; exit'),
		"\"$title\": its shell ends by itself: nothing it started in the background still runs");
	ok(!-e "$tree/demo.env" && defined $cluster && !-e $cluster,
		"\"$title\": its cluster is stopped and gone (scripts/demo.sh --stop)");

	if ($title =~ /in SQL/)
	{
		ok(stopped_cleanly("$tree/examples/web/server.log"),
			'the walk-through stopped its web layer (kill %1), which finished cleanly');
	}
	elsif ($title =~ /BOINC/)
	{
		ok(stopped_cleanly("$try/server.log"), 'the BOINC front end was stopped (kill $SERVER) and finished cleanly');
		like(-e "$try/client.log" ? slurp_file("$try/client.log") : '', qr/\[---\] Exiting\n\z/,
			'and its BOINC client (boinccmd --quit), which exited');
	}
	elsif ($title =~ /OpenBench/)
	{
		ok(stopped_cleanly("$try/server.log"), 'the OpenBench front end was stopped (kill $SERVER) and finished cleanly');
	}
	File::Path::remove_tree($try) if $try =~ m{^/.+};
}

done_testing();
