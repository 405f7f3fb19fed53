# The fleet emulator (emulator/) against a throwaway cluster:
#  (a) OpenBench balancing (seed 000): three engines, E1 with W1 W2 W3, E2
#      with W4, E3 with W5, equal throughputs, 240 hosts for 16 virtual hours;
#      the measured thread shares must be what seed 000 gives, with
#      allot.balance_engine_throughputs off (1/5 each) and on (1/9 for E1's
#      workloads, 1/3 for W4 and W5);
#  (b) job farms whose metrics have exact or near-exact expected values:
#      plenty of work (idle 0, nothing wasted, shares 1:3), scarce work
#      (idle fraction computed from the job count), and deadlines shorter
#      than the jobs (every job wasted); what allot accepted is checked
#      against its tables;
#  (c) adaptive replication (allot 0.7.0): its overhead and every host
#      reliable in the end, against a farm without replication.
# The emulator is built from $TESTDIR/../emulator into a temp dir.
# Scenarios whose shares are checked run on one connection: with two, the
# order in which the server runs a tick's calls varies from run to run, and
# so do the shares ("plenty" gave a share violation from 0.018 to 0.057 over
# a dozen runs, against its bound of 0.05); on one, every run is the same.
use strict;
use warnings FATAL => 'all';
use File::Temp qw(tempdir);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = "$ENV{TESTDIR}/../emulator";
my $tmp = tempdir(CLEANUP => 1);
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';

# Build into $tmp; the source tree is left untouched.
my ($out, $err);
my $built = IPC::Run::run [ 'make', '-s', '-C', $src, "BUILD=$tmp/build",
	"PG_CONFIG=$pg_config" ], '>', \$out, '2>', \$err;
ok($built, 'the emulator builds with -Wall -Wextra -Werror') or diag($out . $err);
my $emulate = "$tmp/build/allot-emulate";

my $node = PostgreSQL::Test::Cluster->new('emulator');
$node->init;
$node->append_conf('postgresql.conf', "fsync = off\nsynchronous_commit = off\n");
$node->start;

sub read_csv
{
	my ($path) = @_;
	open(my $fh, '<', $path) or die "$path: $!";
	chomp(my $header = <$fh>);
	my @cols = split /,/, $header;
	my @rows;
	while (my $line = <$fh>)
	{
		chomp $line;
		my %row;
		@row{@cols} = split /,/, $line;
		push @rows, \%row;
	}
	close $fh;
	return \@rows;
}

# Run a scenario (its text) in a fresh database; returns the metrics (a
# hash), the workloads (an array of hashes, in id order) and the database.
sub emulate
{
	my ($name, $scenario, @args) = @_;
	my $dir = "$tmp/$name";
	mkdir $dir or die "$dir: $!";
	open(my $fh, '>', "$dir/$name.scn") or die $!;
	print $fh $scenario;
	close $fh;
	$node->safe_psql('postgres', "CREATE DATABASE $name");
	$node->safe_psql($name, 'CREATE EXTENSION allot');
	my ($stdout, $stderr);
	my $ran = IPC::Run::run [ $emulate, '-q', '-d', $node->connstr($name),
		'-o', $dir, @args, "$dir/$name.scn" ], '>', \$stdout, '2>', \$stderr;
	ok($ran, "$name: the emulator ran, and its view agrees with allot's tables")
	  or diag($stdout . $stderr);
	note($stdout);
	my %metrics = map { $_->{metric} => $_->{value} } @{ read_csv("$dir/metrics.csv") };
	return (\%metrics, read_csv("$dir/workloads.csv"), $name);
}

# fair_lines_hidden(SVG): how many groups of dashed fair lines share their
# points in the chart, and a line for each pair of them whose dashes
# overlap (one hiding the other).  A line's dashes start at minus its
# stroke-dashoffset, modulo its period (dash + gap).
sub fair_lines_hidden
{
	my ($svg) = @_;
	my %at;
	while ($svg =~ m{<polyline [^>]*stroke="([^"]+)"[^>]*stroke-dasharray="(\d+),(\d+)"(?: stroke-dashoffset="(\d+)")? points="([^"]*)"}g)
	{
		push @{ $at{$5} }, { colour => $1, dash => $2, period => $2 + $3, offset => $4 // 0 };
	}
	my @groups = grep { @$_ >= 2 } values %at;
	my @hidden;
	for my $lines (@groups)
	{
		for my $i (0 .. $#$lines - 1)
		{
			for my $j ($i + 1 .. $#$lines)
			{
				my ($a, $b) = @$lines[ $i, $j ];
				if ($a->{period} != $b->{period})
				{
					push @hidden, "$a->{colour}, $b->{colour}: periods $a->{period} and $b->{period}";
					next;
				}
				# from the start of a's dashes to the start of b's
				my $d = ($a->{offset} - $b->{offset}) % $a->{period};
				push @hidden, "$a->{colour} and $b->{colour} overlap"
				  if $d < $a->{dash} || $a->{period} - $d < $b->{dash};
			}
		}
	}
	return (scalar(@groups), @hidden);
}

# ---------------------------------------------------------------------------
# (a) OpenBench balancing.
my $openbench = <<'EOF';
[run]
connections = 1
length = 16h
tick = 1m
bucket = 1h
measure_from = 4h
seed = 11
assign_interval = 15m
assign_jitter = 0.5
transitioner_interval = 1m
[set]
allot.assignment_ttl = 30min
[workload W1]
engine = E1
[workload W2]
engine = E1
[workload W3]
engine = E1
[workload W4]
engine = E2
[workload W5]
engine = E3
[hosts worker]
count = 240
threads = 4 8 8 16 16 32
availability = 0.9
on_mean = 12h
EOF

# Seed 000 step 3: balancing divides a throughput by the number of
# candidates of the same engine.  All throughputs are equal, so the fair
# share of W is (1 / n_engine(W)) / sum over workloads of (1 / n_engine).
my %engine_count = (W1 => 3, W2 => 3, W3 => 3, W4 => 1, W5 => 1);
my %expected = (
	off => { map { $_ => 1 / 5 } keys %engine_count },
	on => {
		map {
			my $w = $_;
			$w => (1 / $engine_count{$w}) / (3 * (1 / 3) + 1 + 1)
		} keys %engine_count
	});

my %share;
for my $balance ('off', 'on')
{
	my ($m, $wl, $db) = emulate("openbench_$balance", $openbench,
		'-s', "allot.balance_engine_throughputs=$balance");

	# Tolerance.  Hosts never switch here (every candidate stays above 0.75
	# of fair, so the repeat rule keeps them), hence shares move only when
	# a host goes off (taking its threads away) and when one comes back (it
	# picks the lowest ratio, refilling the workload below fair).  Hosts
	# come back every few virtual minutes (240 hosts, 1.3 h off on
	# average), so a workload is short of at most a few hosts at any time:
	# allow four of the largest host, g = its threads over all threads
	# (about 1% here, so 4g is below half the smallest gap between the
	# on and off expectations, 4.4 points for W1).
	my $g = $node->safe_psql($db,
		'SELECT max(threads)::float8 / sum(threads) FROM allot.host');
	my $tolerance = 4 * $g;
	cmp_ok($tolerance, '<', 0.044, "balancing $balance: the tolerance 4g = $tolerance separates on from off");

	for my $w (@$wl)
	{
		my $want = $expected{$balance}{ $w->{workload} };
		$share{$balance}{ $w->{workload} } = $w->{share};
		cmp_ok(abs($w->{share} - $want), '<=', $tolerance,
			"balancing $balance: $w->{workload} got $w->{share} of the threads, seed 000 says $want");
		cmp_ok(abs($w->{fair} - $want), '<', 1e-6,
			"balancing $balance: the emulator's fair share of $w->{workload} is $want");
	}
	cmp_ok($m->{share_violation}, '<=', 2 * $tolerance,
		"balancing $balance: share violation $m->{share_violation} is small");
	cmp_ok($m->{idle_threads}, '<', 0.01,
		"balancing $balance: hosts that are on are working ($m->{idle_threads} idle)");
	is($m->{kind}, 'assignment', 'an assignment farm');

	# The chart: workloads of equal fair share (all five when off; W1 to W3,
	# and W4 with W5, when on) draw their dashed lines on the same points;
	# each line must show its dashes between the others', not under them.
	my ($together, @hidden) = fair_lines_hidden(slurp_file("$tmp/$db/shares.svg"));
	is($together, $balance eq 'off' ? 1 : 2,
		"balancing $balance: the chart has $together group(s) of coinciding fair lines");
	is(join('; ', @hidden), '', "balancing $balance: none of them hides another");
}
cmp_ok($share{off}{W1} - $share{on}{W1}, '>', 0.05,
	'balancing takes threads from E1\'s workloads');
cmp_ok($share{on}{W4} - $share{off}{W4}, '>', 0.08,
	'balancing gives threads to the single workloads of E2 and E3');

# ---------------------------------------------------------------------------
# (b) Job farms.  One app unit is 3.6e12 FLOPs, an hour on a 1 GFLOPS CPU;
# with noise 0 a job of fixed app units runs exactly that long, and allot's
# default estimate (3600 s per app unit) is exact too.
my $hosts = 20;
my $cpus = 2;

# Plenty of work: two CPU workloads of throughputs 1000 and 3000.  Hosts
# refill their buffers before they run dry, so no CPU is ever idle, and
# deadlines of two days are never missed.
my ($m, $wl, $db) = emulate('plenty', <<"EOF");
[run]
connections = 1
length = 12h
measure_from = 2h
bucket = 1h
seed = 5
min_buffer = 1h
max_buffer = 3h
request_interval = 10m
[app X]
flops_per_au = 3.6e12
version = cpu ncpus=1
[app Y]
flops_per_au = 3.6e12
version = cpu ncpus=1
[workload X]
app = X
throughput = 1000
delay_bound = 2d
jobs = 2000
app_units = uniform 0.8 1.2
[workload Y]
app = Y
throughput = 3000
delay_bound = 2d
jobs = 2000
app_units = uniform 0.8 1.2
[hosts box]
count = $hosts
cpus = $cpus
cpu_flops = 1e9
EOF
cmp_ok($m->{idle_cpu}, '<', 0.01, "plenty: CPUs are busy ($m->{idle_cpu} idle)");
is($m->{wasted} + 0, 0, 'plenty: nothing wasted with loose deadlines');
is($m->{jobs_late} + 0, 0, 'plenty: no job late');
cmp_ok($m->{jobs_completed}, '>', 0, "plenty: $m->{jobs_completed} jobs completed");

# Shares of FLOPs done against 1/4 and 3/4.  One CPU is 1/40 of the farm;
# allot counts a host's buffered jobs as in progress too, so allow two CPUs.
my $cpu = 1 / ($hosts * $cpus);
cmp_ok(abs($wl->[0]{share} - 0.25), '<=', 2 * $cpu, "plenty: X got $wl->[0]{share}, fair 1/4");
cmp_ok(abs($wl->[1]{share} - 0.75), '<=', 2 * $cpu, "plenty: Y got $wl->[1]{share}, fair 3/4");
cmp_ok($m->{share_violation}, '<=', 2 * $cpu, "plenty: share violation $m->{share_violation}");
cmp_ok($m->{requests_per_job}, '>', 0, 'plenty: requests per job is positive');
cmp_ok($m->{requests_per_job}, '<=', 1, 'plenty: at most one request per job');

# What the emulator counts as accepted is what allot recorded: done jobs
# and the app units reported, per workload.
for my $w (@$wl)
{
	my ($n, $units) = split /\|/, $node->safe_psql($db,
		"SELECT count(*), coalesce(sum(app_units), 0) FROM allot.job
		  WHERE state = 'done' AND workload_id = $w->{workload_id}");
	is($w->{done_jobs}, $n, "plenty: $w->{workload}: $n done jobs, as in allot.job");
	cmp_ok(abs($w->{done_app_units} - $units), '<=', 1e-9 * $units,
		"plenty: $w->{workload}: $units app units reported, as in allot.job");
}

# Scarce work: 40 jobs of exactly an hour for 40 CPUs over 4 hours.  Hosts
# ask at once and get up to 3 hours of work each (max_buffer), so every
# job runs to its end within the run: busy instance-time is 40 x 1 h out of
# 40 x 4 h available.
my $jobs = 40;
my $hours = 4;
($m, $wl, $db) = emulate('scarce', <<"EOF");
[run]
length = ${hours}h
measure_from = 0
min_buffer = 1h
max_buffer = 3h
[app X]
flops_per_au = 3.6e12
version = cpu ncpus=1
[workload X]
app = X
delay_bound = 2d
jobs = $jobs
[hosts box]
count = $hosts
cpus = $cpus
cpu_flops = 1e9
EOF
my $idle = 1 - $jobs * 1 / ($hosts * $cpus * $hours);
cmp_ok(abs($m->{idle_cpu} - $idle), '<', 1e-9, "scarce: idle fraction $m->{idle_cpu}, expected $idle");
is($m->{jobs_completed}, $jobs, "scarce: all $jobs jobs completed");
is($m->{wasted} + 0, 0, 'scarce: nothing wasted');
is($node->safe_psql($db, "SELECT count(*) FROM allot.job WHERE state = 'done'"),
	$jobs, 'scarce: allot has every job done');

# Deadlines shorter than the jobs: an hour's work due in 30 minutes.  A
# 60-second default estimate lets allot send them; every job that
# completes is late (wasted fraction exactly 1), the transitioner has
# timed it out 10 minutes after its deadline, so its report is refused.
($m, $wl, $db) = emulate('tight', <<"EOF");
[run]
length = 6h
measure_from = 0
transitioner_interval = 10m
min_buffer = 1h
max_buffer = 3h
[set]
allot.default_seconds_per_app_unit = 60
[app X]
flops_per_au = 3.6e12
version = cpu ncpus=1
[workload X]
app = X
delay_bound = 30m
jobs = 5000
app_units = uniform 1 1.5
[hosts box]
count = 10
cpus = 1
cpu_flops = 1e9
EOF
cmp_ok($m->{jobs_completed}, '>', 0, "tight: $m->{jobs_completed} jobs completed");
is($m->{wasted} + 0, 1, 'tight: every completed job missed its deadline: wasted fraction 1');
is($m->{jobs_late}, $m->{jobs_completed}, 'tight: jobs late = jobs completed');
cmp_ok($m->{reports_refused}, '>=', $m->{jobs_completed},
	'tight: allot had timed out every completed job before its report');
is($node->safe_psql($db, "SELECT count(*) FROM allot.job WHERE state = 'done'"),
	'0', 'tight: allot has no job done');
cmp_ok($node->safe_psql($db,
		"SELECT count(*) FROM allot.job_report WHERE outcome = 'timed_out'"),
	'>=', $m->{jobs_completed}, 'tight: allot recorded the timeouts');

# ---------------------------------------------------------------------------
# (c) Adaptive replication (allot 0.7.0): 20 hosts that registered
# themselves, reliable after 3 consecutive valid results and then always
# alone.  Every host starts unreliable, so the first jobs are replicated;
# every host is honest and always on, so every host becomes reliable and
# replication stops.  The overhead is the replicas among the results done;
# the same farm without replication has none.
my $adaptive = <<'EOF';
[run]
length = 1d
tick = 1m
bucket = 6h
seed = 5
connections = 1
transitioner_interval = 10m
min_buffer = 1h
max_buffer = 2h
[set]
allot.reliable_after = 3
allot.reliable_alone_probability = 1
[app X]
flops_per_au = 3.6e12
version = cpu ncpus=1
[workload X]
app = X
delay_bound = 1d
jobs = 5000
replication = REPLICATION
[hosts box]
count = 20
registered = yes
cpus = 1
cpu_flops = 1e9
EOF
($m, $wl, $db) = emulate('adaptive', $adaptive =~ s/REPLICATION/adaptive/r);
cmp_ok($m->{replication_overhead}, '>', 0, "adaptive: replicas among the results done: $m->{replication_overhead}");
cmp_ok($m->{replication_overhead}, '<', 0.5, 'adaptive: fewer than one result in two: the hosts became reliable');
is($m->{hosts_reliable} + 0, 1, 'adaptive: every host is reliable at the end');
cmp_ok($m->{time_to_reliable_median_hours}, '>', 0,
	"adaptive: a host took $m->{time_to_reliable_median_hours} h to become reliable");
is(sprintf('%.6f', $node->safe_psql($db, "SELECT count(*) FILTER (WHERE replica_of IS NOT NULL)::float8 / count(*)
                                           FROM allot.job WHERE state = 'done'")),
	sprintf('%.6f', $m->{replication_overhead}), 'adaptive: the overhead is allot\'s share of replicas done');
($m, $wl, $db) = emulate('alone', $adaptive =~ s/REPLICATION/none/r);
is($m->{replication_overhead} + 0, 0, 'without replication: no replica');

$node->stop;
done_testing();
