# The benchmarks of bench/ at toy sizes, against the allot installed in the
# PostgreSQL on PATH (or PG_CONFIG): each must run to the end, and its report
# must show that it measured what it says it measures:
#  (a) bench/cluster.sh's server CPU accounting agrees with what a backend
#      reads of its own CPU time in /proc/self/stat, after the backend has
#      exited (the postmaster's cutime), in all and in user mode;
#  (b) bench/assign.sh names the installed library by its checksum; every
#      request's host last asked over a minute ago (yet a repeat writes no
#      host row, and its assignment update is HOT) and within the TTL (the
#      longest-quiet host was seen about INTERVAL before the end); hosts come
#      and go (lapsed assignments stop counting);
#      the profile lists allot's inner statements;
#  (c) bench/dispatch.sh counts about 9 jobs per request (8 CPUs + 1 GPU
#      asked) and 1 per plain dequeue, prints the fairness table, and its
#      soak ends with check_invariants() empty and no job held twice;
#  (d) bench/months.sh purges once the retention period has passed and not
#      before, keeps allot.job smaller with retention than without, fills the
#      archive, prints the purge's cost and the last day against day 1, and
#      draws its plot.
# No timing is asserted: the figures depend on the machine.
use strict;
use warnings;
use Digest::SHA;
use File::Temp qw(tempdir);
use IPC::Run;
use Test::More;

my $bench = "$ENV{TESTDIR}/../bench";
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my $tmp = tempdir(CLEANUP => 1);

# Runs a command with the benchmarks' environment; returns (ok, stdout+stderr).
sub run_bench
{
	my ($cmd, %env) = @_;
	local %ENV = (%ENV, PG_CONFIG => $pg_config, WAIT_MAX => 0, TMPDIR => $tmp, %env);
	my $out;
	my $ok = IPC::Run::run($cmd, '>', \$out, '2>&1');
	return ($ok, $out);
}

# (a) The CPU accounting.
{
	my $script = "$tmp/cpu.sh";
	open(my $fh, '>', $script) or die "$script: $!";
	print $fh <<"EOF";
set -euo pipefail
BENCH_DIR=$bench
source "\$BENCH_DIR/cluster.sh"
c0=\$(cluster_ticks) u0=\$(cluster_ticks user)
psql_q -At <<'SQL'
CREATE TEMP TABLE t0 AS SELECT string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ') AS f;
SELECT sum(x) FROM generate_series(1, 10000000) AS x \\g /dev/null
SELECT 'backend ' || ((f1[12]::int + f1[13]::int) - (f[12]::int + f[13]::int)) || ' ' || (f1[12]::int - f[12]::int)
  FROM t0, (SELECT string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ') AS f1) AS s;
SQL
wait_backends_gone postgres
echo "cluster \$((\$(cluster_ticks) - c0)) \$((\$(cluster_ticks user) - u0))"
EOF
	close $fh;
	my ($ok, $out) = run_bench([ 'bash', $script ]);
	ok($ok, 'the CPU accounting check runs') or diag($out);
	my ($backend, $backend_user) = $out =~ /^backend (\d+) (\d+)$/m;
	my ($cluster, $cluster_user) = $out =~ /^cluster (\d+) (\d+)$/m;
	ok(defined $backend && $backend >= 10, 'the query used CPU that the backend can see')
	  or diag($out);
	ok(defined $cluster && $cluster >= $backend && $cluster <= $backend * 1.1 + 10,
		'the cluster\'s CPU, the exited backend included, is the backend\'s own and a little more')
	  or diag("backend $backend ticks, cluster $cluster ticks");
	# A sum over generate_series runs in user mode, and the cluster's user
	# ticks are a part of its ticks.
	ok(defined $cluster_user && $backend_user >= $backend / 2
		  && $cluster_user >= $backend_user && $cluster_user <= $backend_user * 1.1 + 10
		  && $cluster_user <= $cluster,
		'the cluster\'s CPU in user mode is the backend\'s own and a little more, and part of the whole')
	  or diag("backend $backend ticks ($backend_user user), cluster $cluster ticks ($cluster_user user)");
}

my $so = `$pg_config --pkglibdir`;
chomp $so;
my $sha = substr(Digest::SHA->new(256)->addfile("$so/allot.so")->hexdigest, 0, 16);

# (b) assign_workload: 2,000 hosts and 40 workloads, 8 clients, hosts asking
# every 90 s of virtual time, one position in 10 alternating; two rounds of
# the bare pair.
{
	# (BARE_WARMUP 0: runs of 3 s leave no room for a warm-up on a loaded
	# machine, where taking the counters after it took over 3 s)
	my ($ok, $out) = run_bench([ 'bash', "$bench/assign.sh" ],
		CONFIGS => '2000x40', CLIENTS => 8, DURATION => 3, WARMUP => 0, BARE_WARMUP => 0,
		ROUNDS => 2, CHURN => 10, INTERVAL => 90, PROFILE => 1);
	ok($ok, 'bench/assign.sh runs') or diag($out);
	like($out, qr/sha256 \Q$sha\E\.\.\./, 'the report names the installed allot.so by its checksum');
	my (%at, %ratio);
	for my $run (qw(bare-upd/1 bare-asg/1 bare-upd/2 bare-asg/2 walk-upd/1 walk-asg/1))
	{
		my ($name, $round) = split m{/}, $run;
		my ($tps, $p50, $p99, $cpu, $user, $xtps, $xcpu, $tx_sync) =
		  $out =~ /^\s*2000\s+40\s+\d+\s+8\s+\Q$name\E\s+$round\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s+(\S+)\s+(?:\S+\s+){7}(\S+)\s+\d+$/m;
		$at{$run} = defined $cpu ? $-[0] : -1;
		ok(defined $cpu && $tps > 0 && $p50 <= $p99 && $cpu > 0 && $user > 0 && $user <= $cpu,
			"$name, round $round: tps, p50 <= p99 and server CPU per transaction (some of it in user mode) are reported")
		  or diag($out);
		# (fsync is on in the bench's cluster: every commit waits for one)
		ok(defined $tx_sync && $tx_sync =~ /^[\d.]+$/ && $tx_sync > 0,
			"$name, round $round: transactions per WAL fsync are reported")
		  or diag($out);
		# (the table's x CPU is assign's over the UPDATE's; the verdict's
		# CPU ratio is the UPDATE's over assign's, as for tps)
		$ratio{$run} = [ $xtps, 1 / $xcpu ] if $name eq 'bare-asg' && defined $cpu && $xcpu > 0;
	}
	# The second round runs assign first, so that neither side always
	# follows the other.
	ok((grep { $_ >= 0 } values %at) == 6
		  && $at{'bare-upd/1'} < $at{'bare-asg/1'} && $at{'bare-asg/2'} < $at{'bare-upd/2'},
		'the bare pairs alternate: UPDATE first in round 1, assign first in round 2')
	  or diag($out);
	my ($host_upd, $hot, $sweeps, $uncounted, $quiet) =
	  $out =~ /^\s*2000\s+40\s+\d+\s+8\s+walk-asg\s+1\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+(\d+)\s+[\d.]+\s+[\d.]+\s+(\d+)\s+\d+\s+(\d+)\s+(\d+)$/m;
	# Every host was last seen over a minute ago; a repeat still leaves its
	# host row alone (only a switch writes it) and updates its assignment
	# in place.
	ok(defined $host_upd && $host_upd < 0.5,
		"a repeat writes no host row: $host_upd host rows a request")
	  or diag($out);
	ok(defined $hot && $hot >= 90, "assignment updates are HOT: $hot%") or diag($out);
	ok(defined $quiet && $quiet >= 60 && $quiet <= 120,
		"the longest-quiet host asked 60..120 virtual seconds before the end (over a minute, within the TTL): $quiet")
	  or diag($out);
	# Lapsed assignments stop counting, whether a request or a sweep found
	# them first.
	ok(defined $sweeps && $sweeps >= 1 && $uncounted >= 1,
		"hosts come and go: $uncounted assignments of gone hosts no longer count")
	  or diag($out);
	like($out, qr/inner \| UPDATE allot\.assignment SET workload_id/,
		'the profile lists allot\'s inner statements');
	# The verdict's ratios are the rounds' median (of two: their mean), and
	# the range is theirs.
	my @line = $out =~
	  /^\s+2000 hosts,\s+40 workloads \(\s*\d+ at the top\),\s+8 clients: bare ([\d.]+) \(([\d.]+)-([\d.]+)\) tps, ([\d.]+) \(([\d.]+)-([\d.]+)\) CPU$/m;
	my $agrees = @line == 6 && $ratio{'bare-asg/1'} && $ratio{'bare-asg/2'};
	for my $k (0, 1)
	{
		last unless $agrees;
		my ($x, $y) = ($ratio{'bare-asg/1'}[$k], $ratio{'bare-asg/2'}[$k]);
		my ($med, $lo, $hi) = @line[ 3 * $k .. 3 * $k + 2 ];
		$agrees = abs($med - ($x + $y) / 2) <= 0.011
		  && abs($lo - ($x < $y ? $x : $y)) <= 0.011
		  && abs($hi - ($x > $y ? $x : $y)) <= 0.011;
	}
	ok($agrees, 'the ratios to the bare one-row UPDATE, in tps and in CPU: the median of the rounds and their range')
	  or diag($out);
}

# (c) request_work: 2,000 hosts, 60,000 jobs, a 20 s soak in 10 s windows.
{
	my ($ok, $out) = run_bench([ 'bash', "$bench/dispatch.sh" ],
		NHOSTS => 2000, NJOBS => 60000, NQUEUE => 200000, SOAK_HOSTS => 800,
		CLIENTS => 4, DURATION => 2, WARMUP => 0, SOAK => 20, WINDOW => 10, PROFILE => 0);
	ok($ok, 'bench/dispatch.sh runs') or diag($out);
	like($out, qr/sha256 \Q$sha\E\.\.\./, 'the report names the installed allot.so by its checksum');
	my ($dequeue) = $out =~ /^dequeue\s+\d+\s+([\d.]+)\s/m;
	my ($dispatch, $us_job) = $out =~ /^dispatch\s+\d+\s+([\d.]+)\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s/m;
	is($dequeue, '1.00', 'the plain dequeue takes one job per transaction') or diag($out);
	ok(defined $dispatch && $dispatch > 5 && $dispatch <= 9,
		'a request for 8 CPUs and 1 GPU is sent up to 9 jobs, counted')
	  or diag($out);
	ok(defined $us_job && $us_job > 0, 'server CPU per job is reported') or diag($out);
	like($out, qr/mean \|use\/tp - 1\|/, 'the fairness table is printed');
	my @windows = $out =~ /^\s+\d+s\s+\d+\s+(\d+)\s+[\d.]+\s+\d+\s+[\d.]+$/mg;
	ok(@windows == 2 && $windows[0] > 0 && $windows[1] > 0, 'the soak sends jobs in each of its two windows')
	  or diag($out);
	like($out, qr/^check_invariants\(\): empty \(ok\)$/m, 'check_invariants() is empty after the soak');
	my ($rows, $ids) = $out =~ /^jobs in progress: (\d+) rows, (\d+) distinct ids$/m;
	ok(defined $rows && $rows == $ids, 'no job is in progress twice') or diag($out);
}

# (d) A farm's months: 8 days of 400 finished jobs, retention 3 days.
{
	my $out_dir = "$bench/out";
	my %before = map { $_ => 1 } glob("$out_dir/months-*.svg");
	my ($ok, $out) = run_bench([ 'bash', "$bench/months.sh" ],
		DAYS => 8, JOBS_PER_DAY => 400, NHOSTS => 200, NQUEUE => 5000, RETENTION => '3d',
		MODES => 'keep archive', CHECK_EVERY => 4, REQ_SECS => 1, ROUNDS => 1, CLIENTS => 2);
	ok($ok, 'bench/months.sh runs, and check_invariants() is empty after each mode') or diag($out);
	like($out, qr/sha256 \Q$sha\E\.\.\./, 'the report names the installed allot.so by its checksum');
	# mode day jobs job MB report MB archive purged calls ...
	# the sizes table only: the request tables' rows have as many columns
	my ($sizes) = $out =~ /^Sizes \(MB(.*?)^Bounds/ms;
	$sizes //= '';
	my %day;
	while ($sizes =~ /^(keep|archive)\s+(\d+)\s+(\d+)\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+(\d+)\s/mg)
	{
		$day{$1}{$2} = { jobs => $3, archive => $4, purged => $5 };
	}
	ok(defined $day{archive}{4} && $day{archive}{4}{purged} > 0 && $day{archive}{1}{purged} == 0,
		'nothing is purged on day 1; on day 4 a day of jobs is (retention 3 days)')
	  or diag($out);
	ok(defined $day{keep}{8} && $day{keep}{8}{purged} == 0 && $day{archive}{8}{jobs} < $day{keep}{8}{jobs},
		'on day 8 allot.job holds fewer rows with retention than without')
	  or diag($out);
	ok($day{archive}{8}{archive} > 0 && $day{keep}{8}{archive} == 0, 'the archive fills only with retention')
	  or diag($out);
	like($out, qr/^\s+archive\s+\d+ days, \d+ jobs and [\d.]+ calls a day: purge \d+ ms wall, \d+ ms server CPU a day \([\d.]+ us CPU a job\)/m,
		'the purge\'s cost per day is reported');
	like($out, qr/^\s+archive\s+last day \/ day 1, median of 1 rounds: tps [\d.]+, server CPU a request [\d.]+, shared buffers a request [\d.]+$/m,
		'the last day is compared with day 1');
	my ($svg) = grep { !$before{$_} } glob("$out_dir/months-*.svg");
	ok(defined $svg && -s $svg, 'the plot is written') or diag($out);
	if (defined $svg)
	{
		open(my $fh, '<', $svg) or die "$svg: $!";
		my $text = do { local $/; <$fh> };
		close $fh;
		is(scalar(() = $text =~ /<polyline /g), 3, 'it draws three lines: without retention, with, and the archive');
		unlink $svg, $svg =~ s/\.svg$/.txt/r;
	}
}

done_testing();
