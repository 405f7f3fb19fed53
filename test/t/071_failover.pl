# allot through a failover (issue 25; docs/production.md "Running allot in production").
#
# A. Synchronous replication.  A primary streams to a standby named in
#    synchronous_standby_names, with synchronous_commit = remote_apply: a
#    commit returns once the standby has applied it.  Four load clients, as
#    web layers would, call request_work, report_job and assign_workload for
#    hosts of their own (each call its own transaction, printed with its
#    sequence number once it has committed: a printed send is one a host was
#    told of, "acknowledged").  Under that load every process of the primary
#    is killed with SIGKILL at once, as when its machine dies, and the
#    standby is promoted.  Then, on the new primary:
#      - every job whose send was acknowledged, and whose report was not, is
#        in progress for that very host (the one report a client may have
#        had in flight may have been applied: its job is done by that host);
#        every job whose report was acknowledged is done by its host, and the
#        report, repeated, gets its reply again;
#      - no job was acknowledged to two hosts; check_invariants() is empty
#        and every job agrees with its state and reports (AllotLoad.pm); no
#        job was lost;
#      - the load reconnects: requests and assignments of the same hosts
#        succeed (pgbench, no failed transaction) and send none of those jobs
#        to anyone else; then each host reports the jobs it holds, and every
#        report is accepted;
#      - the transitioner resumes: the pg_cron job scheduled on the old
#        primary runs on the new one (cron.job_run_details, a new row of
#        allot.status_transitioner), and times out a job sent by the old
#        primary whose deadline passed after the failover.
#    Then the old primary comes back as a standby of the new one, by the
#    steps docs/production.md gives: a CHECKPOINT on the new primary,
#    pg_rewind of the killed server (wal_log_hints is on everywhere, and
#    wal_keep_size keeps the WAL it needs), its exit checked, its own
#    postgresql.conf put back (pg_rewind copies the new primary's), and
#    standby.signal checked before it starts.  It starts in recovery,
#    replays what the new primary commits after, and its farm is the new
#    primary's.
# B. The negative control: the same check fails with asynchronous
#    replication.  A second standby follows the new primary synchronously;
#    its WAL stream is cut (a lagging standby, made certain).  A request then
#    waits for the standby and is not acknowledged; the standby is made
#    asynchronous (synchronous_standby_names emptied), which acknowledges the
#    waiting request at once, and another request is acknowledged right
#    away.  The primary is killed and this standby promoted: both
#    acknowledged sends are lost, the check of part A names exactly those
#    jobs, the jobs are unsent on the new primary, and a host's report of
#    one is refused cleanly (55000).  check_invariants() is still empty.
#
# pg_cron runs its jobs in background workers (cron.use_background_workers),
# inside whichever server is the primary: a job run through libpq would
# connect to the port stored in cron.job.nodeport, the old primary's, and
# the test's servers listen on different ports.
#
# Run time: 10 s to 80 s, most of it waiting for pg_cron's minute.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use List::Util qw(min);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use AllotLoad qw(farm_problems child_processes processes_gone create_retried);

my $n_hosts = 200;         # the load's hosts, 1 .. 200
my $n_clients = 4;         # client c serves the hosts h with h % 4 = c
my $n_statements = 4000;   # per client: far more than it runs before the kill

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
my $host = $primary->host;
$primary->append_conf(
	'postgresql.conf', qq{
max_connections = 40
shared_buffers = 32MB
log_statement = none
deadlock_timeout = 100ms
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
wal_keep_size = '256MB'
});
$primary->start;

# ---------------------------------------------------------------------------
# The farm.  Estimates come from allot.default_seconds_per_app_unit = 1 s,
# so that the sieve, with its 5-second delay bound, gets jobs.  Hosts 1001
# and up are probes no load touches.
$primary->safe_psql(
	'postgres', qq{
CREATE EXTENSION pg_cron;
CREATE EXTENSION allot;
ALTER DATABASE postgres SET allot.default_seconds_per_app_unit = 1;
INSERT INTO allot.engine (name) VALUES ('Stockfish'), ('Ethereal');
INSERT INTO allot.workload (id, name, engine, throughput) VALUES
    (1, 'sf: eval', 'Stockfish', 1000), (2, 'eth: tune', 'Ethereal', 2000);
INSERT INTO allot.app (id, name) VALUES (1, 'cruncher'), (3, 'sieve');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (11, 1, 'cpu', 1, 0), (31, 3, 'cpu', 1, 0);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (11, 'cruncher 1', 'cruncher', 1, 1000, '3 days'),
    (12, 'cruncher 2', 'cruncher', 1, 2000, '3 days'),
    (31, 'sieve', 'sieve', 3, 1000, '5 seconds');
INSERT INTO allot.job (workload_id) SELECT w FROM (VALUES (11), (12)) v(w), generate_series(1, 5000) i;
INSERT INTO allot.job (workload_id) SELECT 31 FROM generate_series(1, 100);
INSERT INTO allot.host (id, name, os, threads, cpu_flops)
SELECT i, 'host-' || i, 'Linux', 4 + i % 13, 1e9 * (1 + i % 5)
  FROM generate_series(1, $n_hosts) i
UNION ALL
SELECT i, 'probe-' || i, 'Linux', 8, 2e9 FROM generate_series(1001, 1003) i
UNION ALL
SELECT i, 'probe-' || i, 'Linux', 8, 2e9 FROM generate_series(2001, 2003) i;
SELECT cron.schedule('allot-transitioner', '* * * * *', 'SELECT allot.run_transitioner()');
});
create_retried($primary, 'postgres');

my $jobs_per_workload_sql =
  q{SELECT string_agg(workload_id || ':' || n, ' ' ORDER BY workload_id)
      FROM (SELECT workload_id, count(*) AS n FROM allot.job GROUP BY 1) c};
my $jobs_per_workload = $primary->safe_psql('postgres', $jobs_per_workload_sql);
is($jobs_per_workload, '11:5000 12:5000 31:100', 'the farm holds its 10,100 jobs');

# ---------------------------------------------------------------------------
# The synchronous standby.  synchronous_standby_names is set with ALTER
# SYSTEM after the base backup, so that it stays the old primary's: the
# promoted standby must not wait for a standby of its own that it does not
# have.
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# Make $node's standby $name synchronous (remote_apply), and wait until it is.
sub make_synchronous
{
	my ($node, $name) = @_;
	$node->safe_psql(
		'postgres', qq{
ALTER SYSTEM SET synchronous_standby_names = '$name';
ALTER SYSTEM SET synchronous_commit = 'remote_apply';
SELECT pg_reload_conf();
});
	ok( $node->poll_query_until(
			'postgres', qq{
SELECT sync_state = 'sync' AND state = 'streaming'
  FROM pg_stat_replication WHERE application_name = '$name'}),
		"$name is the synchronous standby of " . $node->name);
	is($node->safe_psql('postgres', 'SHOW synchronous_commit'),
		'remote_apply', 'a commit waits until the standby has applied it');
	return;
}
make_synchronous($primary, 'standby');

# ---------------------------------------------------------------------------
# Kill every process of a node at once with SIGKILL, and wait until they are
# all gone.
sub kill_node
{
	my ($node) = @_;
	my $postmaster =
	  (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
	my @pids = ($postmaster, child_processes($postmaster));
	kill 'KILL', @pids;
	$node->kill9;    # the framework's record: this node is down
	my $gone = 0;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		last if $gone = processes_gone(@pids);
		usleep(100_000);
	}
	ok($gone, $node->name . ': SIGKILL to the postmaster and its '
		  . (@pids - 1) . ' children; all are gone');
	return;
}

# Promote $node and return the time the promotion was done, on its clock.
sub promote
{
	my ($node) = @_;
	$node->promote;
	ok($node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
		$node->name . ' is promoted: a primary now');
	return $node->safe_psql('postgres', 'SELECT clock_timestamp()');
}

# The acknowledged sends that the new primary $node does not have: one line
# per job that is not in progress for the host it was acknowledged to (or,
# for a job whose report may have been in flight, done by that host).
# %$held: job => host; %$maybe_done: job => 1.  Empty when none is lost.
sub lost_sends
{
	my ($node, $held, $maybe_done) = @_;
	return '' unless %$held;
	my $values = join ', ',
	  map { "($_, $held->{$_}, " . ($maybe_done->{$_} ? 'true' : 'false') . ')' }
	  sort { $a <=> $b } keys %$held;
	return $node->safe_psql(
		'postgres', qq{
SELECT string_agg(format('job %s, acknowledged to host %s, is %s', v.job, v.host,
                         CASE WHEN j.id IS NULL THEN 'missing'
                              WHEN j.host_id IS NULL THEN j.state
                              ELSE format('%s on host %s', j.state, j.host_id) END),
                  E'\\n' ORDER BY v.job)
  FROM (VALUES $values) v(job, host, maybe_done)
  LEFT JOIN allot.job j ON j.id = v.job
 WHERE NOT (j.state = 'in_progress' AND j.host_id = v.host)
   AND NOT (v.maybe_done AND j.state = 'done' AND j.host_id = v.host)});
}

# A request of one CPU job for a probe host, as SQL returning the job's id.
sub one_job_sql
{
	my ($host, $exclude) = @_;
	return qq{
SELECT string_agg(j ->> 'job_id', ',')
  FROM jsonb_array_elements(allot.request_work($host,
           '{"resources": {"cpu": {"req_instances": 1}}, "exclude": [$exclude]}') -> 'jobs') j};
}

# ---------------------------------------------------------------------------
# A. The load.  Each client runs a psql script of prepared calls, one per
# line, each printing "kind|sequence|host|result" once committed:
#   S: request_work for 1 to 3 CPU jobs (outside the sieve): the job ids;
#   R: report_job of the lowest job the host holds, success: "job:state";
#   A: assign_workload: the workload id.
# A client stops at its first error (ON_ERROR_STOP); deadlocks with the
# transitioner are retried (retried(), AllotLoad.pm).
my $prepare = q{
\set ON_ERROR_STOP 1
PREPARE s(int, bigint) AS
SELECT format('S|%s|%s|', $1, $2) || retried(format($q$
SELECT coalesce(string_agg(j ->> 'job_id', ',' ORDER BY (j ->> 'job_id')::bigint), '')
  FROM jsonb_array_elements(allot.request_work(%s,
           '{"resources": {"cpu": {"req_instances": %s}}, "exclude": [31]}') -> 'jobs') j$q$,
    $2, 1 + $1 % 3));
PREPARE r(int, bigint) AS
SELECT format('R|%s|%s|', $1, $2) || retried(format($q$
SELECT coalesce((SELECT j.id || ':' || (allot.report_job(%s, j.id, 'success') ->> 'state')
                   FROM (SELECT id FROM allot.job WHERE host_id = %s AND state = 'in_progress'
                          ORDER BY id LIMIT 1) j), '')$q$, $2, $2));
PREPARE a(int, bigint) AS
SELECT format('A|%s|%s|', $1, $2) || retried(format($q$
SELECT coalesce((SELECT workload_id::text FROM allot.assign_workload(%s)), '')$q$, $2));
};

my $dir = $primary->basedir;
my (@plans, @clients);
srand(25);
for my $c (0 .. $n_clients - 1)
{
	my @hosts = grep { $_ % $n_clients == $c } 1 .. $n_hosts;
	my (@plan, @lines);
	for my $seq (1 .. $n_statements)
	{
		my $h = $hosts[ int(rand(@hosts)) ];
		my $r = rand();
		my $kind = $r < 0.5 ? 's' : $r < 0.85 ? 'r' : 'a';
		push @plan, [ $kind, $h ];
		push @lines, "EXECUTE $kind($seq, $h);";
	}
	$plans[$c] = \@plan;
	my $script = "$dir/client$c.sql";
	append_to_file($script, $prepare . join("\n", @lines) . "\n");
	$clients[$c] = {
		out => "$dir/client$c.out",
		err => "$dir/client$c.err",
		harness => IPC::Run::start(
			[
				'psql', '-X', '-q', '-A', '-t', '-h', $host,
				'-p', $primary->port, '-d', 'postgres', '-f', $script
			],
			'<', \undef, '>', "$dir/client$c.out", '2>', "$dir/client$c.err",
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default))
	};
}

ok( $primary->poll_query_until(
		'postgres', q{
SELECT (SELECT count(*) FROM allot.job WHERE state = 'in_progress') >= 400
   AND (SELECT count(*) FROM allot.job WHERE state = 'done') >= 100
   AND (SELECT count(*) FROM allot.assignment) >= 50}),
	'the load is running: jobs sent and reported, hosts assigned');

# A probe sends one sieve job: due 5 s later, when the primary is gone.
my $probe_job = $primary->safe_psql('postgres', one_job_sql(1001, '1, 2, 11, 12'));
like($probe_job, qr/^\d+$/, 'probe host 1001 takes a sieve job, due in 5 seconds');

kill_node($primary);

# The clients end with their connections; read what each was told.
my (%held, %maybe_done, %reported, @duplicates, @model);
my ($sends, $reports) = (0, 0);
$held{$probe_job} = 1001;
for my $c (0 .. $n_clients - 1)
{
	$clients[$c]{harness}->finish;
	my $err = slurp_file($clients[$c]{err});
	my @not_lost = grep {
		!/server closed the connection|terminated abnormally|connection to server was lost|no connection to the server|could not send data|could not receive data|before or while processing the request|terminating connection due to unexpected postmaster exit/
	} split /\n/, $err;
	is(join("\n", @not_lost), '', "load client $c failed only for the lost connection");

	my @acked = map { [ split /\|/, $_, -1 ] } split /\n/, slurp_file($clients[$c]{out});
	my $last = @acked ? $acked[-1][1] : 0;
	is(join(',', map { $_->[1] } @acked), join(',', 1 .. $last),
		"load client $c: calls 1 to $last acknowledged, in order, none failed");
	cmp_ok($last, '<', $n_statements, "load client $c was still running at the kill");

	# What each host holds, as its client was told.
	my %holds;    # host => { job => 1 }
	for my $a (@acked)
	{
		my ($kind, $seq, $h, $result) = @$a;
		if ($kind eq 'S')
		{
			for my $job (split /,/, $result)
			{
				push @duplicates, "job $job to host $h, held by host $held{$job}"
				  if exists $held{$job};
				$held{$job} = $h;
				$holds{$h}{$job} = 1;
				$sends++;
			}
		}
		elsif ($kind eq 'R')
		{
			my $lowest = min(keys %{ $holds{$h} // {} });
			my ($job, $state) = split /:/, $result;
			push @model, "call $seq of client $c: host $h reported "
			  . ($job // 'nothing') . ' (' . ($state // '') . '), expected '
			  . ($lowest // 'nothing')
			  if ($job // '') ne ($lowest // '')
			  || (defined $job && $state ne 'done');
			next unless defined $job;
			delete $held{$job};
			$reported{$job} = $h;
			delete $holds{$h}{$job};
			$reports++;
		}
	}

	# The call in flight at the kill: a report may have been applied.
	my $next = $plans[$c][$last];    # call $last + 1
	if (defined $next && $next->[0] eq 'r' && %{ $holds{ $next->[1] } // {} })
	{
		$maybe_done{ min(keys %{ $holds{ $next->[1] } }) } = 1;
	}
}
is(join("\n", @duplicates), '', 'no job was acknowledged to two hosts at once');
is(join("\n", @model), '',
	'every acknowledged report took the lowest job its host had been acknowledged');
cmp_ok($sends, '>=', 400, "the hosts were acknowledged $sends jobs");
cmp_ok($reports, '>=', 100, "and $reports reports");
note(scalar(keys %held) . ' jobs held at the kill, '
	  . scalar(keys %maybe_done) . ' of them with a report in flight');

my $promoted_at = promote($standby);
my $new = $standby;

is(lost_sends($new, \%held, \%maybe_done), '',
	'every acknowledged send is in progress for its host on the new primary');
is( $new->safe_psql(
		'postgres', qq{
SELECT count(*) FROM allot.job j
  JOIN (VALUES @{[ join ', ', map { "($_, $reported{$_})" } sort { $a <=> $b } keys %reported ]}) v(job, host)
    ON j.id = v.job AND j.state = 'done' AND j.host_id = v.host}),
	scalar(keys %reported),
	'every acknowledged report is there: its job is done by its host');
is(farm_problems($new, 'postgres'), '',
	'check_invariants() is empty and every job agrees with its state and reports');
is($new->safe_psql('postgres', $jobs_per_workload_sql),
	$jobs_per_workload, 'no job was lost');

# The load reconnects: the same hosts ask for work and assignments.
$new->pgbench(
	'-n -c 4 -j 2 -t 50',
	0,
	[
		qr/number of transactions actually processed: 200/,
		qr/number of failed transactions: 0 /
	],
	[qr/^$/],
	'the hosts reconnect: requests and assignments succeed on the new primary',
	{
		'reconnect_request.sql@3' => qq{
\\set h random(1, $n_hosts)
SELECT allot.request_work(:h, '{"resources": {"cpu": {"req_instances": 2}}, "exclude": [31]}');
},
		'reconnect_assign.sql@1' => qq{
\\set h random(1, $n_hosts)
SELECT * FROM allot.assign_workload(:h);
}
	});
my %still_held = map { $_ => $held{$_} } grep { $_ != $probe_job } keys %held;
is(lost_sends($new, \%still_held, \%maybe_done), '',
	'no held job was sent again: each is still in progress for its host');

# Each host reports what it holds (the in-flight report, applied or not,
# gets the same reply), and repeats the reports it was acknowledged.
sub reports_done
{
	my ($jobs) = @_;
	my $values = join ', ', map { "($jobs->{$_}, $_)" } sort { $a <=> $b } keys %$jobs;
	return $new->safe_psql(
		'postgres', qq{
SELECT count(*) FILTER (WHERE allot.report_job(v.host, v.job, 'success') ->> 'state' = 'done')
  FROM (VALUES $values) v(host, job)});
}
is(reports_done(\%reported), scalar(keys %reported),
	'every acknowledged report, repeated on the new primary, gets its reply again');
is(reports_done(\%still_held), scalar(keys %still_held),
	'every host reports the jobs it was acknowledged, and every report is accepted');
is(farm_problems($new, 'postgres'), '',
	'check_invariants() is empty after the reconnected load');

# ---------------------------------------------------------------------------
# The transitioner resumes.  pg_cron fires at the start of a minute; wait for
# a run on the new primary that starts after the probe's deadline.
# (On a busy machine the transitioner may have timed it out already: its
# deadline is then NULL.)
ok( $new->poll_query_until(
		'postgres',
		"SELECT deadline IS NULL OR deadline < clock_timestamp() FROM allot.job WHERE id = $probe_job"),
	'the probe job is past its deadline');
ok( $new->poll_query_until(
		'postgres', qq{
SELECT j.state = 'unsent'
       AND EXISTS (SELECT FROM allot.job_report r
                    WHERE r.job_id = $probe_job AND r.host_id = 1001
                      AND r.outcome = 'timed_out' AND r.reported_at > '$promoted_at')
  FROM allot.job j WHERE j.id = $probe_job}),
	'the new primary timed the probe job out: unsent, with a timed_out report');
is( $new->safe_psql(
		'postgres', qq{
SELECT (SELECT count(*) > 0 FROM cron.job_run_details d JOIN cron.job c USING (jobid)
         WHERE c.jobname = 'allot-transitioner' AND d.status = 'succeeded'
           AND d.start_time > '$promoted_at'),
       (SELECT count(*) > 0 FROM allot.status_transitioner
         WHERE started_at > '$promoted_at' AND timed_out >= 1)}),
	't|t',
	'the cron job scheduled on the old primary ran the transitioner on the new one');

# ---------------------------------------------------------------------------
# The old primary, rewound into a standby of the new one.  (The framework's
# init(allows_streaming) sets wal_log_hints = on, which pg_rewind needs, or
# data checksums.)
$new->safe_psql('postgres', 'CHECKPOINT');    # the new timeline, on disk for pg_rewind
my $old_conf = slurp_file($primary->data_dir . '/postgresql.conf');
my ($rewind_out, $rewind_err) = ('', '');
my $rewound = IPC::Run::run(
	[
		$primary->installed_command('pg_rewind'), '--target-pgdata', $primary->data_dir,
		'--source-server', $new->connstr('postgres'), '--write-recovery-conf'
	],
	'<', \undef, '>', \$rewind_out, '2>', \$rewind_err);
ok($rewound, 'pg_rewind makes the killed primary follow the new one (exit status 0)')
  or diag("$rewind_out$rewind_err");
like("$rewind_out$rewind_err", qr/Done!/, 'and says it is done');
# pg_rewind copies the source's configuration files: the old server's own
# postgresql.conf (its port, among others) goes back before it starts.
open(my $conf_fh, '>', $primary->data_dir . '/postgresql.conf') or die "postgresql.conf: $!";
print $conf_fh $old_conf;
close $conf_fh;
ok(-e $primary->data_dir . '/standby.signal', 'standby.signal is there: it will start as a standby');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the old primary is a standby now');
my $probe_count = $new->safe_psql('postgres',
	q{INSERT INTO allot.host (id, name, os, threads) VALUES (3001, 'after-rewind', 'Linux', 4);
	  SELECT count(*) FROM allot.host});
my $caught_up_lsn = $new->lsn('insert');
ok( $primary->poll_query_until(
		'postgres', "SELECT pg_last_wal_replay_lsn() >= '$caught_up_lsn'::pg_lsn"),
	'it replays what the new primary commits after the rewind');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM allot.host'), $probe_count,
	"and its farm is the new primary's");
is( $primary->safe_psql('postgres', $jobs_per_workload_sql),
	$new->safe_psql('postgres', $jobs_per_workload_sql), 'job for job');
$primary->stop;

# ---------------------------------------------------------------------------
# B. The negative control.  A second standby follows the new primary,
# synchronously.
$new->backup('second');
my $standby2 = PostgreSQL::Test::Cluster->new('standby2');
$standby2->init_from_backup($new, 'second', has_streaming => 1);
$standby2->start;
make_synchronous($new, 'standby2');

# Cut its WAL stream: the standby keeps what it has applied, and receives
# nothing more.
$standby2->safe_psql('postgres',
	q{ALTER SYSTEM SET primary_conninfo = ''; SELECT pg_reload_conf()});
ok( $new->poll_query_until(
		'postgres',
		q{SELECT count(*) = 0 FROM pg_stat_replication WHERE application_name = 'standby2'}),
	"standby2's WAL stream is cut");

# A request (host 2001) commits on the primary and waits for the standby:
# its host is told nothing.
my $waiting_out = '';
my $waiting = IPC::Run::start(
	[
		'psql', '-X', '-q', '-A', '-t', '-h', $host, '-p', $new->port,
		'-d', 'postgres', '-c', one_job_sql(2001, 31)
	],
	'<', \undef, '>', \$waiting_out, '2>', \my $waiting_err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
ok( $new->poll_query_until(
		'postgres', q{
SELECT count(*) = 1 FROM pg_stat_activity
 WHERE wait_event = 'SyncRep' AND query LIKE '%request_work(2001%'}),
	'synchronous: the request for host 2001 has committed and waits for the standby');
$waiting->pump_nb;
is($waiting_out, '', 'synchronous: host 2001 has been told nothing');

# The standby made asynchronous: the waiting request returns at once.
$new->safe_psql('postgres',
	q{ALTER SYSTEM SET synchronous_standby_names = ''; SELECT pg_reload_conf()});
$waiting->finish;
is($waiting_err, '', 'asynchronous: the waiting request ends without an error');
my ($job_2001) = $waiting_out =~ /^(\d+)$/m;
ok(defined $job_2001, 'asynchronous: host 2001 is acknowledged a job at once');

# And a request right before the kill is acknowledged without waiting.
my $job_2002 = $new->safe_psql('postgres', one_job_sql(2002, 31));
like($job_2002, qr/^\d+$/, 'asynchronous: host 2002 is acknowledged a job');
kill_node($new);
promote($standby2);

my %acked = (($job_2001 // 0) => 2001, $job_2002 => 2002);
is( lost_sends($standby2, \%acked, {}),
	join("\n",
		map { "job $_, acknowledged to host $acked{$_}, is unsent" }
		  sort { $a <=> $b } keys %acked),
	'asynchronous: both acknowledged sends are lost, and the check of part A says so');
is(farm_problems($standby2, 'postgres'), '',
	'check_invariants() is empty on the promoted standby: an older farm, consistent');

# The host that was told of the job reports it: refused cleanly.
my ($rc, $out, $err) = $standby2->psql(
	'postgres', "SELECT allot.report_job(2002, $job_2002, 'success')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like(
	$err,
	qr/ERROR:  55000: job $job_2002 is not in progress on host 2002/,
	'a report of a lost job is refused: 55000, naming the job and the host');

$standby2->stop;
done_testing();
