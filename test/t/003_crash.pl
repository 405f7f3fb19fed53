# allot through crashes (issue 6, item 2).  A farm is under a concurrent load
# of request_work, report_job, assign_workload and run_transitioner from
# pgbench when
#   1. one backend serving the load is killed with SIGKILL: the postmaster
#      kills every backend and reinitialises (restart_after_crash);
#   2. the postmaster itself is killed with SIGKILL and started again; this
#      time the farm runs with allot.fairness = debt, so that requests also
#      write allot.workload_credit and the transitioner folds debts.
# After each recovery:
#   - check_invariants() is empty and every job's row agrees with its state
#     and its reports (AllotLoad::farm_problems);
#   - no job was lost (the job count per workload is what was created);
#   - what a request committed before the crash is still held, and what an
#     open transaction had taken is free again;
#   - a report committed before the crash, repeated, gets the same reply;
#   - under debt, the largest debt of each resource is still 0;
#   - requests and reports work again: a pgbench run without a single failed
#     transaction, a request whose reply matches the job rows it wrote;
#   - the per-backend cache of workloads, apps and versions
#     (src/workload_cache.c) follows changes: a change committed before the
#     crash is seen, and after the restart an existing session and a new one
#     both see a priority change, a throughput change, a deactivated
#     workload and a new app version at their next call.
# Run time: about 15 s.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use AllotLoad qw(farm_problems debt_tops child_processes processes_gone create_retried);

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
# The test framework turns restart_after_crash off; item 1 needs it on.
# Statement logging would only slow the load down.  Deadlocks between the
# transitioner and requests or reports do happen under this load (see the
# probes below); find them in 0.1 s rather than 1 s.
$node->append_conf(
	'postgresql.conf', q{
restart_after_crash = on
log_statement = none
max_connections = 40
deadlock_timeout = 100ms
});
$node->start;

# ---------------------------------------------------------------------------
# The farm.
#
# Hosts 1..300 are the load's.  Hosts 1001 and up are probes no load touches:
# 1001/1011 commit a request before a crash, 1002/1012 hold one in an open
# transaction when it comes, 1003 and 1013 serve the cache checks.
#
# Estimates come from allot.default_seconds_per_app_unit = 1 s, so that the
# workload "sieve" with its 2-second delay bound gets jobs and the
# transitioner times them out under the load.  A sample size of 20 lets the
# transitioner compute FLOPS estimates within the test's few seconds, and an
# assignment TTL of 1 s gives its expiry step work too.
my $n_load_hosts = 300;
$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION allot;
ALTER DATABASE postgres SET allot.default_seconds_per_app_unit = 1;
ALTER DATABASE postgres SET allot.flops_sample_size = 20;
ALTER DATABASE postgres SET allot.assignment_ttl = '1s';

INSERT INTO allot.engine (name, systems, cpu_flags) VALUES
    ('Stockfish', NULL, '{avx2}'), ('Ethereal', '{Linux}', '{}');
INSERT INTO allot.workload (id, name, engine, throughput) VALUES
    (1, 'sf: eval', 'Stockfish', 1000), (2, 'sf: lmr', 'Stockfish', 2000),
    (3, 'eth: tune', 'Ethereal', 1500), (4, 'eth: tm', 'Ethereal', 500);

-- App 4 runs only on CPUs with avx512, which no host has: it has no work
-- until the cache check gives it an AMD version.
INSERT INTO allot.app (id, name) VALUES
    (1, 'cruncher'), (2, 'folder'), (3, 'sieve'), (4, 'later');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs, cpu_flags) VALUES
    (11, 1, 'cpu', 1, 0, '{}'), (12, 1, 'nvidia', 0.2, 1, '{}'),
    (21, 2, 'cpu', 1, 0, '{}'), (22, 2, 'nvidia', 0.5, 1, '{}'),
    (31, 3, 'cpu', 1, 0, '{}'),
    (41, 4, 'cpu', 1, 0, '{avx512}');
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (11, 'cruncher 1', 'cruncher', 1, 1000, '3 days'),
    (12, 'cruncher 2', 'cruncher', 1, 2000, '3 days'),
    (21, 'folder', 'folder', 2, 1000, '3 days'),
    (31, 'sieve', 'sieve', 3, 1000, '2 seconds'),
    (41, 'later', 'later', 4, 1000, '3 days');
INSERT INTO allot.job (workload_id, predicted_app_units)
SELECT w, CASE WHEN w = 31 THEN 1 ELSE 1 + i % 3 END
  FROM (VALUES (11), (12), (21), (31)) v(w), generate_series(1, 3000) i;
INSERT INTO allot.job (workload_id) SELECT 41 FROM generate_series(1, 100);

-- A quarter of the hosts lack avx2 (Ethereal only); every third has one or
-- two NVIDIA GPUs.
INSERT INTO allot.host (id, name, os, cpu_flags, threads, cpu_flops)
SELECT i, 'host-' || i, 'Linux', CASE WHEN i % 4 = 0 THEN '{}' ELSE '{avx2}' END::text[],
       4 + i % 29, 1e9 * (1 + i % 5)
  FROM generate_series(1, $n_load_hosts) i;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT i, 'nvidia', 1 + i % 2, 1e13 FROM generate_series(3, $n_load_hosts, 3) i;

INSERT INTO allot.host (id, name, os, cpu_flags, threads, cpu_flops)
SELECT i, 'probe-' || i, 'Linux', '{avx2}', 16, 2e9
  FROM unnest('{1001,1002,1003,1011,1012,1013}'::bigint[]) i;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT i, 'nvidia', 1, 1e13 FROM unnest('{1001,1002,1011,1012}'::bigint[]) i
UNION ALL
SELECT i, 'amd', 1, 1e13 FROM unnest('{1013}'::bigint[]) i;
});

# No job is ever created or deleted by allot: this count is the whole farm.
my $jobs_per_workload_sql =
  q{SELECT string_agg(workload_id || ':' || n, ' ' ORDER BY workload_id)
      FROM (SELECT workload_id, count(*) AS n FROM allot.job GROUP BY 1) c};
my $jobs_per_workload = $node->safe_psql('postgres', $jobs_per_workload_sql);
is($jobs_per_workload, '11:3000 12:3000 21:3000 31:3000 41:100',
	'the farm holds its 12,100 jobs');

# ---------------------------------------------------------------------------
# The load: pgbench scripts, as a web layer would call allot (one call per
# transaction).  A report takes one job the host holds, locked SKIP LOCKED so
# that two clients that drew the same host never report the same job; its
# outcome is mostly success, sometimes error or aborted.
my %load_scripts = (
	'request.sql' => q{
\set h random(1, } . $n_load_hosts . q{)
\set n random(1, 4)
SELECT allot.request_work(:h, jsonb_build_object('resources', jsonb_build_object(
           'cpu', jsonb_build_object('req_instances', :n),
           'nvidia', jsonb_build_object('req_instances', 1))));
},
	'report.sql' => q{
\set h random(1, } . $n_load_hosts . q{)
\set o random(1, 20)
SELECT allot.report_job(:h, j.id,
                        CASE WHEN :o <= 17 THEN 'success' WHEN :o <= 19 THEN 'error'
                             ELSE 'aborted' END,
                        app_units => j.predicted_app_units * (0.8 + 0.4 * random()),
                        elapsed_secs => j.est_secs * (0.5 + 0.5 * random()))
  FROM (SELECT id, predicted_app_units, est_secs FROM allot.job
         WHERE host_id = :h AND state = 'in_progress'
         ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) j;
},
	'assign.sql' => q{
\set h random(1, } . $n_load_hosts . q{)
SELECT * FROM allot.assign_workload(:h);
},
	'transition.sql' => q{
SELECT allot.run_transitioner();
});
# Weights: mostly requests and reports, as a farm sees them.
my %load_weights =
  ('request.sql' => 6, 'report.sql' => 6, 'assign.sql' => 3, 'transition.sql' => 1);

my @load_files;
for my $name (sort keys %load_scripts)
{
	my $file = $node->basedir . "/load_$name";
	append_to_file($file, $load_scripts{$name});
	push @load_files, '-f', "$file\@$load_weights{$name}";
}

# A load in the background until the crash ends it.  -R keeps it to a rate
# this shared machine can give; -T is only a backstop.
sub start_load
{
	my ($out, $err) = ('', '');
	# the name by which the crash finds a backend of the load
	local $ENV{PGAPPNAME} = 'allot_load';
	my $harness = IPC::Run::start(
		[
			'pgbench', '-n', '-h', $node->host, '-p', $node->port,
			'-c', '4', '-j', '2', '-R', '400', '-T', '120', '--max-tries=10',
			@load_files, 'postgres'
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return { harness => $harness, out => \$out, err => \$err };
}

# Wait for the killed load to end; every client must have stopped because
# its connection went, never because allot raised an error.
sub finish_load
{
	my ($load, $label) = @_;
	$load->{harness}->finish;
	my @aborts = grep { /client \d+ .*aborted/ } split /\n/, ${ $load->{err} };
	my $lost = join '|', map { quotemeta } (
		'server closed the connection', 'terminating connection',
		'perhaps the backend died', 'could not receive data from server',
		'could not send data to server', 'no connection to the server');
	my @not_crash = grep { !/$lost/ } @aborts;
	ok(@aborts > 0, "$label: the crash ended the load's sessions");
	is(join("\n", @not_crash), '',
		"$label: no load session failed for any other reason");
	note "pgbench stderr:\n" . ${ $load->{err} } if @not_crash;
	like(${ $load->{out} }, qr/number of failed transactions: 0 /,
		"$label: before the crash, no transaction of the load failed");
	note "pgbench stdout:\n" . ${ $load->{out} };
}

# A second, short load after recovery, with pgbench's own checks: exit 0 and
# not one failed transaction.
my $reload_count = 0;
sub load_after_recovery
{
	my ($label) = @_;
	my %files;
	$reload_count++;
	for my $name (sort keys %load_scripts)
	{
		$files{"again${reload_count}_$name\@$load_weights{$name}"} =
		  $load_scripts{$name};
	}
	$node->pgbench(
		'-n -c 3 -j 1 -t 60 --max-tries=10',
		0,
		[
			qr/number of transactions actually processed: 180/,
			qr/number of failed transactions: 0 /
		],
		[qr/^$/],
		"$label: requests, reports, assignments and the transitioner all succeed again",
		\%files);
}

# ---------------------------------------------------------------------------
# Probes: a committed request and report, and a request left uncommitted.
#
# They run while the load does, and a call of allot may be chosen as the
# victim of a deadlock (40P01): they go through retried() (AllotLoad.pm).
create_retried($node, 'postgres');

# request_work for a probe host, outside the sieve (its jobs time out in 2
# seconds), as SQL that returns the reply's job ids, in order.
sub probe_request_sql
{
	my ($host, $cpus, $gpus) = @_;
	return qq{
SELECT retried(\$\$
SELECT string_agg(j ->> 'job_id', ',' ORDER BY o)
  FROM jsonb_array_elements(allot.request_work($host,
           '{"resources": {"cpu": {"req_instances": $cpus}, "nvidia": {"req_instances": $gpus}},
             "exclude": [31]}') -> 'jobs') WITH ORDINALITY AS x(j, o)\$\$)};
}

# The jobs a host holds, with when they were sent and their deadlines.
sub held_by
{
	my ($host) = @_;
	return $node->safe_psql(
		'postgres', qq{
SELECT coalesce(string_agg(id || '\@' || sent_at || '/' || deadline, ' ' ORDER BY id), '')
  FROM allot.job WHERE state = 'in_progress' AND host_id = $host});
}

# ---------------------------------------------------------------------------
# Cache checks.  Host 1003 can run every assignment workload, so the truth
# is plain SQL: each active assignment workload, a candidate when it has the
# top priority, with its throughput as the effective throughput (no engine
# balancing).  explain_assignment must say the same.
my $explain_sql = q{
SELECT string_agg(format('%s:%s:%s', workload_id, candidate, effective_throughput), ' '
                  ORDER BY workload_id)
  FROM allot.explain_assignment(1003)};
my $truth_sql = q{
SELECT string_agg(format('%s:%s:%s', id, priority = top,
                         CASE WHEN priority = top THEN throughput END), ' ' ORDER BY id)
  FROM (SELECT id, priority, throughput, max(priority) OVER () AS top
          FROM allot.workload WHERE app_id IS NULL AND state = 'active') w};

# Host 1013 has an AMD GPU and asks for it: the status of the reply and the
# versions of its jobs, rolled back so that nothing stays.
my $amd_sql = q{
BEGIN;
SELECT (r -> 'resources' -> 'amd' ->> 'status') || ':'
       || coalesce((SELECT string_agg(j ->> 'app_version_id', ',')
                      FROM jsonb_array_elements(r -> 'jobs') j), '')
  FROM (SELECT allot.request_work(1013, '{"resources": {"amd": {"req_instances": 1}}}') AS r) x;
ROLLBACK;
};

sub check_caches
{
	my ($label) = @_;
	my $session = $node->background_psql('postgres');

	# The session builds its cache now; the changes below come later.
	is($session->query_safe($explain_sql),
		$node->safe_psql('postgres', $truth_sql),
		"$label: an existing session's explain_assignment matches the table");
	is($session->query_safe($amd_sql), 'unsupported:',
		"$label: no app has an AMD version yet");

	my @changes = (
		[ 'a priority change' => 'UPDATE allot.workload SET priority = 1 WHERE id = 2' ],
		[ 'a throughput change' => 'UPDATE allot.workload SET throughput = 777 WHERE id = 2' ],
		[ 'a deactivated workload' => q{UPDATE allot.workload SET state = 'paused' WHERE id = 2} ],
		[
			'the changes undone' => q{
UPDATE allot.workload SET priority = 0, throughput = 2000, state = 'active' WHERE id = 2}
		]);
	for my $change (@changes)
	{
		my ($what, $sql) = @$change;
		my $before = $node->safe_psql('postgres', $truth_sql);
		$node->safe_psql('postgres', $sql);
		my $truth = $node->safe_psql('postgres', $truth_sql);
		isnt($truth, $before, "$label: $what changes what a host may run");
		is($session->query_safe($explain_sql), $truth,
			"$label: an existing session sees $what");
		is($node->safe_psql('postgres', $explain_sql), $truth,
			"$label: a new session sees $what");
	}

	$node->safe_psql('postgres',
		q{INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs)
		  VALUES (42, 4, 'amd', 0.5, 1)});
	is($session->query_safe($amd_sql), 'work:42',
		"$label: an existing session sends a job with a new app version");
	is($node->safe_psql('postgres', $amd_sql), 'work:42',
		"$label: so does a new session");
	$node->safe_psql('postgres', 'DELETE FROM allot.app_version WHERE id = 42');
	is($session->query_safe($amd_sql), 'unsupported:',
		"$label: an existing session sees the version removed");

	# Negative control: the session does cache.  A change made while the
	# invalidation trigger is off is not seen by it, only by a new session,
	# until the trigger's ALTER TABLE invalidates the cache again.  (ALTER
	# TABLE invalidates too: the session reads once after disabling.)
	$node->safe_psql('postgres',
		'ALTER TABLE allot.workload DISABLE TRIGGER workload_cache_invalidate');
	my $cached = $session->query_safe($explain_sql);
	$node->safe_psql('postgres', 'UPDATE allot.workload SET throughput = 999 WHERE id = 2');
	my $truth = $node->safe_psql('postgres', $truth_sql);
	isnt($truth, $cached, "$label: the change is visible in the table");
	is($session->query_safe($explain_sql), $cached,
		"$label: without the trigger, an existing session keeps its cache");
	is($node->safe_psql('postgres', $explain_sql), $truth,
		"$label: while a new session reads the change");
	$node->safe_psql(
		'postgres', q{
ALTER TABLE allot.workload ENABLE TRIGGER workload_cache_invalidate;
UPDATE allot.workload SET throughput = 2000 WHERE id = 2});
	is($session->query_safe($explain_sql), $node->safe_psql('postgres', $truth_sql),
		"$label: with the trigger back, the session follows again");

	$session->quit;
}

# ---------------------------------------------------------------------------
# One crash under load, and every check after it.  $debt: the load runs with
# allot.fairness = debt.  $crash kills what it kills and returns once the
# server accepts connections again.
sub crash_cycle
{
	my ($label, $committed_host, $open_host, $debt, $crash) = @_;

	# Under debt, requests and assignments also write allot.workload_credit
	# and the transitioner folds it into debts (0.4.0).  Sessions opened from
	# now on, the load's among them, take the database's setting.
	$node->safe_psql('postgres',
		'ALTER DATABASE postgres SET allot.fairness = ' . ($debt ? 'debt' : 'current'));

	my $load = start_load();
	ok( $node->poll_query_until(
			'postgres', q{
SELECT (SELECT count(*) FROM allot.job_report) >= 150
   AND (SELECT count(*) FROM allot.job WHERE state = 'in_progress') >= 150
   AND (SELECT count(*) FROM allot.assignment) >= 50}),
		"$label: the load is running: jobs sent and reported, hosts assigned");

	# check_invariants() reads one snapshot: it holds under the load too.
	is(farm_problems($node, 'postgres'), '',
		"$label: the farm is consistent while the load runs");

	# A request and a report committed just before the crash ...
	my @committed = split /,/,
	  $node->safe_psql('postgres', probe_request_sql($committed_host, 3, 1));
	is(scalar(@committed), 4,
		"$label: probe host $committed_host takes 3 CPU jobs and 1 GPU job");
	my $report_call = "allot.report_job($committed_host, $committed[0], 'success', "
	  . "app_units => 1.5, elapsed_secs => 0.7)";
	my $report_reply =
	  $node->safe_psql('postgres', "SELECT retried(\$\$SELECT $report_call\$\$)");
	like($report_reply, qr/"state": "done"/,
		"$label: the probe's first job is reported done");
	my $held = held_by($committed_host);

	# ... a request still open when it comes ...
	my $open = $node->background_psql('postgres', on_error_stop => 0);
	$open->query_safe('BEGIN');
	my @open_taken = split /,/, $open->query_safe(probe_request_sql($open_host, 2, 0));
	is(scalar(@open_taken), 2,
		"$label: probe host $open_host holds 2 jobs in an open transaction");

	# ... and a workload change, committed while the load's sessions have
	# their caches built.
	$node->safe_psql('postgres',
		'UPDATE allot.workload SET throughput = throughput + 100 WHERE id = 4');
	my $truth_before = $node->safe_psql('postgres', $truth_sql);

	$crash->($load);
	finish_load($load, $label);
	$open->quit;

	# Nothing lost, nothing held twice, nothing half done.
	is(farm_problems($node, 'postgres'), '',
		"$label: check_invariants() is empty and every job agrees with its state");
	is($node->safe_psql('postgres', $jobs_per_workload_sql),
		$jobs_per_workload, "$label: no job was lost");
	is(held_by($committed_host), $held,
		"$label: the committed request's jobs are still held by host $committed_host");
	is( $node->safe_psql(
			'postgres',
			"SELECT state FROM allot.job WHERE id = $committed[0]"),
		'done',
		"$label: the committed report is still there");
	is($node->safe_psql('postgres', "SELECT $report_call"),
		$report_reply,
		"$label: the report, repeated, gets the same reply");
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*) FILTER (WHERE state = 'unsent'),
       count(*) FILTER (WHERE host_id = $open_host)
  FROM allot.job WHERE id IN (@{[ join(',', @open_taken) ]})}),
		'2|0',
		"$label: the jobs taken by the open transaction are unsent again")
	  or diag($node->safe_psql(
			'postgres', qq{
SELECT string_agg(format('job %s: %s on host %s since %s', j.id, j.state, j.host_id, j.sent_at), '; ')
  FROM allot.job j WHERE j.id IN (@{[ join(',', @open_taken) ]})}));
	is( $node->safe_psql(
			'postgres', qq{
SELECT (SELECT count(*) FROM allot.job WHERE host_id = $open_host)
     + (SELECT count(*) FROM allot.host_app_version WHERE host_id = $open_host)
     + (SELECT count(*) FROM allot.host_resource WHERE host_id = $open_host)}),
		'0',
		"$label: the open transaction left no trace of host $open_host");
	# docs/concepts.md, "Fairness over time": each fold shifts the debts of a resource
	# (per kind of workload) so that the largest is 0; a crash in the middle
	# of a fold must not leave it half done.
	if ($debt)
	{
		is(debt_tops($node, 'postgres'), 't|',
			"$label: debts were kept, and the largest of each resource is 0");
	}
	is($node->safe_psql('postgres', $truth_sql),
		$truth_before, "$label: the workload change committed before the crash is kept");
	is($node->safe_psql('postgres', $explain_sql),
		$truth_before, "$label: and explain_assignment shows it");

	# Requests and reports work again, and agree with the rows they wrote.
	my $reply = $node->safe_psql(
		'postgres', qq{
SELECT string_agg(format('%s\@%s', j ->> 'job_id', (j ->> 'deadline')::timestamptz), ' '
                  ORDER BY (j ->> 'job_id')::bigint)
  FROM jsonb_array_elements(allot.request_work($open_host,
           '{"resources": {"cpu": {"req_instances": 2}}, "exclude": [31]}') -> 'jobs') j});
	is( $reply,
		$node->safe_psql(
			'postgres', qq{
SELECT string_agg(id || '\@' || deadline, ' ' ORDER BY id)
  FROM allot.job WHERE state = 'in_progress' AND host_id = $open_host}),
		"$label: a new request's reply lists exactly the jobs now in progress on its host"
	);
	load_after_recovery($label);
	is(farm_problems($node, 'postgres'), '',
		"$label: check_invariants() is empty after the new load");
	is($node->safe_psql('postgres', $jobs_per_workload_sql),
		$jobs_per_workload, "$label: and no job was lost");

	check_caches($label);
}

# ---------------------------------------------------------------------------
# 1. SIGKILL to one backend of the load.
crash_cycle(
	'backend killed', 1001, 1002, 0,
	sub {
		my $pid;
		# a backend of the load, busy with a call if we can catch one
		for (1 .. 200)
		{
			$pid = $node->safe_psql(
				'postgres', q{
SELECT pid FROM pg_stat_activity
 WHERE application_name = 'allot_load' AND backend_type = 'client backend'
 ORDER BY state = 'active' DESC LIMIT 1});
			last if $pid ne '';
			usleep(50_000);
		}
		isnt($pid, '', 'backend killed: a backend serves the load');
		my $log_offset = -s $node->logfile;
		ok(kill('KILL', $pid), "backend killed: SIGKILL sent to backend $pid");

		# The postmaster sees a backend die and restarts them all.
		$node->wait_for_log(
			qr/server process \(PID $pid\) was terminated by signal 9/,
			$log_offset);
		$node->wait_for_log(qr/all server processes terminated; reinitializing/,
			$log_offset);
		$node->wait_for_log(qr/database system is ready to accept connections/,
			$log_offset);
		pass('backend killed: the server reinitialised and accepts connections');
	});

# 2. SIGKILL to the postmaster, under allot.fairness = debt.
crash_cycle(
	'postmaster killed', 1011, 1012, 1,
	sub {
		# The postmaster and its children: they notice its death and exit.
		my $postmaster =
		  (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
		my @pids = ($postmaster, child_processes($postmaster));
		my $log_offset = -s $node->logfile;
		$node->kill9;

		# A new postmaster refuses to start while the old one's pid is alive
		# or a child still holds the old shared memory.
		my $gone = 0;
		for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
		{
			last if $gone = processes_gone(@pids);
			usleep(100_000);
		}
		ok($gone,
			'postmaster killed: the postmaster and its ' . (@pids - 1) . ' children are gone');
		$node->start;
		pass('postmaster killed: the server starts again');
		ok( $node->log_contains(
				qr/database system was interrupted|not properly shut down/,
				$log_offset),
			'postmaster killed: the new server ran crash recovery');
	});

$node->stop;
done_testing();
