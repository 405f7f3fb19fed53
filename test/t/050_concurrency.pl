# Every public call against every other, with an operator editing the farm
# and two transitioners, under each fairness mode (issue 10, acceptance).
#
# pgbench runs the calls a web layer makes (assign_workload, heartbeat,
# release_assignment, request_work, report_job) and the read-only ones
# (explain_assignment, estimate_job, host_queue), validate_job as a
# validator would, and an operator's edits: app versions added and
# deleted; assignment and job workloads added, paused, resumed, re-weighted
# and deleted; hosts added (and given work) and deleted; coprocessors added
# to and taken from the shared hosts; jobs added; and ANALYZE of the
# assignment and host tables, as autovacuum runs it, whose invalidations
# reach every backend in the middle of its request (a write in place met
# its plan freed, and its table's triggers made anew, and crashed: a
# crash ends the run, and every check below fails).  A second pgbench runs
# run_transitioner in two sessions at once, as two pg_cron jobs would.  All
# of it on 24 shared hosts, shared workloads and shared apps, for 15 s under
# allot.fairness = current, recent and debt in turn.  Then:
#
#   - no transaction of any script ended in a deadlock (40P01), whether
#     pgbench saw it or an edit caught it;
#   - no request failed: every call of the web layer, the read-only calls,
#     validate_job and run_transitioner run bare, so that any error reaches
#     pgbench (and the server log, which names its SQLSTATE and statement).
#     None is the caller's fault by construction: every host, job and
#     argument they name exists and is valid (reports and validations take
#     their job FOR UPDATE SKIP LOCKED in the same statement);
#   - an operator's edit either succeeds or fails with one of the errors
#     listed in %edit_refusals below, never another;
#   - check_invariants() is empty and every job's row agrees with its state
#     and reports (AllotLoad::farm_problems); under debt, once a last fold
#     has run on the quiet farm, the largest debt of each resource is 0.
#
# Each client is a pgbench of its own, started again if an error aborts it,
# so that every error of the run is counted.  The summary (transactions,
# pgbench failures, aborted clients and server log errors by SQLSTATE per
# script, and the operator's outcomes per operation) is printed with
# note(), and with diag() when a check fails.
# ALLOT_CONCURRENCY_SECONDS=n runs each mode for n seconds instead of 15.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use List::Util qw(max);
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use AllotLoad qw(farm_problems debt_tops %load_script);

my $seconds = $ENV{ALLOT_CONCURRENCY_SECONDS} // 15;
# The fairness modes to run, in turn (to chase one mode's failure).
my @modes = split ' ', $ENV{ALLOT_CONCURRENCY_MODES} // 'current recent debt';
my $n_hosts = 24;    # few, so that calls for one host meet often
my $jobs_per_workload = 3000;    # of the four base job workloads

my $node = PostgreSQL::Test::Cluster->new('concurrency');
$node->init;
# Every error in the log with its SQLSTATE (%e) and the statement that
# raised it; deadlocks found in 0.1 s, not 1 s.
$node->append_conf(
	'postgresql.conf', q{
max_connections = 40
log_line_prefix = '%m [%p] %e '
log_min_error_statement = error
log_statement = none
deadlock_timeout = 100ms
});
$node->start;

# ---------------------------------------------------------------------------
# The farm.  Ids below 1000 are the base farm, which no edit deletes; what
# the operator adds is numbered from 1000, so that it knows what it may
# delete.  Estimates come from allot.default_seconds_per_app_unit = 1 s, so
# that workload 31 (a 2-second delay bound) gets jobs and the transitioner
# times them out; a sample size of 20 lets it make FLOPS estimates within
# the run; an assignment TTL of 2 s gives its expiry step work.
$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION allot;
ALTER DATABASE postgres SET allot.default_seconds_per_app_unit = 1;
ALTER DATABASE postgres SET allot.flops_sample_size = 20;
ALTER DATABASE postgres SET allot.assignment_ttl = '2s';

INSERT INTO allot.engine (name, cpu_flags) VALUES ('Stockfish', '{avx2}');
INSERT INTO allot.workload (id, name, engine, throughput) VALUES
    (1, 'sf eval', 'Stockfish', 1000), (2, 'sf lmr', 'Stockfish', 2000),
    (3, 'eth tune', 'Ethereal', 1500), (4, 'eth tm', 'Ethereal', 500);

INSERT INTO allot.app (id, name) VALUES (1, 'cruncher'), (2, 'folder'), (3, 'sieve');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (11, 1, 'cpu', 1, 0), (12, 1, 'nvidia', 0.2, 1),
    (21, 2, 'cpu', 1, 0), (22, 2, 'amd', 0.5, 1),
    (31, 3, 'cpu', 1, 0);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (11, 'cruncher 1', 'cruncher', 1, 1000, '3 days'),
    (12, 'cruncher 2', 'cruncher', 1, 2000, '3 days'),
    (21, 'folder', 'folder', 2, 1000, '3 days'),
    (31, 'sieve', 'sieve', 3, 1000, '2 seconds');
INSERT INTO allot.job (workload_id, predicted_app_units)
SELECT w, 1 + i % 3 FROM unnest('{11,12,21,31}'::bigint[]) w, generate_series(1, $jobs_per_workload) i;

-- A quarter of the hosts lack avx2; every third has an NVIDIA GPU.
INSERT INTO allot.host (id, name, os, cpu_flags, threads, cpu_flops)
SELECT i, 'host-' || i, 'Linux', CASE WHEN i % 4 = 0 THEN '{}' ELSE '{avx2}' END::text[],
       4 + i % 13, 1e9 * (1 + i % 5)
  FROM generate_series(1, $n_hosts) i;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT i, 'nvidia', 1, 1e13 FROM generate_series(3, $n_hosts, 3) i;

SELECT setval(pg_get_serial_sequence('allot.' || t, 'id'), 999)
  FROM unnest('{workload,host,app,app_version}'::text[]) t;
});

# ---------------------------------------------------------------------------
# The operator's edits, in schema stress.  Each runs one edit in a
# subtransaction and records its outcome in stress.edit_log, by operation:
# 00000, or the SQLSTATE, message, detail and context of the error it met.
# They are the only calls allowed to fail, and only these operations, with
# these SQLSTATEs:
my @in_use = ('23503', '55006', '55000', '2BP01');
my %edit_refusals = (
	# Deleting what rows still reference: an app version a job was sent
	# with, a host that holds or held jobs.  PostgreSQL's own foreign key
	# check says so (23503); a fix may say the same more clearly: object in
	# use (55006), not in a state that allows it (55000), dependent objects
	# (2BP01).
	'delete version' => \@in_use,
	'delete host' => \@in_use,
	# Deleting a job workload with jobs in progress: its hosts would report
	# jobs that no longer exist, so allot refuses (55000) until they are
	# reported or timed out.
	'delete job workload' => ['55000'],
	# Adding jobs to a workload that another edit deleted meanwhile.
	'add jobs' => ['23503']);

$node->safe_psql(
	'postgres', q{
CREATE SCHEMA stress;
-- Names of added workloads and hosts: they are unique (0.6.0).
CREATE SEQUENCE stress.names;
CREATE TABLE stress.edit_log (
    mode      text NOT NULL DEFAULT current_setting('allot.fairness'),
    operation text NOT NULL,
    sqlstate  text NOT NULL,
    message   text,
    detail    text,
    context   text);

-- One edit: the statement, run in a subtransaction, and its outcome.  The
-- statements are the test's own, built from numbers pgbench drew.
CREATE FUNCTION stress.edit(operation text, statement text) RETURNS text
    LANGUAGE plpgsql AS $$
DECLARE
    detail text;
    context text;
BEGIN
    EXECUTE statement;
    INSERT INTO stress.edit_log (operation, sqlstate) VALUES (operation, '00000');
    RETURN '00000';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, context = PG_EXCEPTION_CONTEXT;
    INSERT INTO stress.edit_log (operation, sqlstate, message, detail, context)
    VALUES (operation, SQLSTATE, SQLERRM, detail, context);
    RETURN SQLSTATE;
END
$$;

-- App versions: add one (a CPU version of app 1 or 2, or an NVIDIA
-- version), or delete an added one.
CREATE FUNCTION stress.edit_version(r int) RETURNS text LANGUAGE sql AS $$
    SELECT CASE WHEN r % 2 = 0 THEN stress.edit('add version', format(
               'INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs) VALUES (%s, %L, 1, %s)',
               1 + r % 4 / 2, CASE WHEN r % 3 = 0 THEN 'nvidia' ELSE 'cpu' END,
               CASE WHEN r % 3 = 0 THEN 1 ELSE 0 END))
           ELSE stress.edit('delete version',
               'DELETE FROM allot.app_version WHERE id = (SELECT id FROM allot.app_version
                                                           WHERE id >= 1000 ORDER BY random() LIMIT 1)')
           END;
$$;

-- Workloads of one kind (jobs: with an app): add one (with 50 jobs when it
-- has an app), delete an added one, pause or resume any, or change any
-- one's throughput.
CREATE FUNCTION stress.edit_workload(jobs boolean, r int) RETURNS text LANGUAGE sql AS $$
    SELECT CASE r % 4
           WHEN 0 THEN stress.edit('add ' || kind, CASE WHEN jobs THEN format(
               'WITH w AS (INSERT INTO allot.workload (name, engine, app_id, throughput, delay_bound, state)
                           VALUES (''added '' || nextval(''stress.names''), ''cruncher'', %s, %s, ''3 days'', %L)
                           RETURNING id)
                INSERT INTO allot.job (workload_id) SELECT id FROM w, generate_series(1, 50)',
               -- Every other one paused (until a resume): on a busy machine
               -- the reports fall behind, every active job workload has
               -- jobs in progress, and a delete would never be allowed.
               1 + r % 3, 500 + r % 2000, CASE WHEN r % 8 = 0 THEN 'paused' ELSE 'active' END)
               ELSE format('INSERT INTO allot.workload (name, engine, throughput)
                            VALUES (''added '' || nextval(''stress.names''), ''Ethereal'', %s)',
                           500 + r % 2000) END)
           WHEN 1 THEN stress.edit('delete ' || kind, format(
               'DELETE FROM allot.workload
                 WHERE id = (SELECT id FROM allot.workload w WHERE id >= 1000 AND app_id IS %s NULL
                              ORDER BY %s, random() LIMIT 1)', CASE WHEN jobs THEN 'NOT' END,
               -- Every other time the job workload with the fewest jobs in
               -- progress, which allot may delete (it refuses while any are).
               CASE WHEN jobs AND r % 8 = 1 THEN '(SELECT sum(u.in_progress) FROM allot.job_usage u
                                                    WHERE u.workload_id = w.id)' ELSE 'w.id * 0' END))
           WHEN 2 THEN stress.edit('pause or resume ' || kind, format(
               'UPDATE allot.workload SET state = CASE state WHEN ''active'' THEN ''paused'' ELSE ''active'' END
                 WHERE id = (SELECT id FROM allot.workload WHERE app_id IS %s NULL
                              ORDER BY random() LIMIT 1)', CASE WHEN jobs THEN 'NOT' END))
           ELSE stress.edit('weigh ' || kind, format(
               'UPDATE allot.workload SET throughput = %s
                 WHERE id = (SELECT id FROM allot.workload WHERE app_id IS %s NULL
                              ORDER BY random() LIMIT 1)', 100 + r % 3000, CASE WHEN jobs THEN 'NOT' END))
           END
      FROM (SELECT CASE WHEN jobs THEN 'job workload' ELSE 'assignment workload' END AS kind) k;
$$;

-- Hosts: add one and give it an assignment (as an operator's own test
-- machine would take one), delete an added one, or give shared host h an
-- AMD GPU or take it away.
CREATE FUNCTION stress.add_host() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    added bigint;
BEGIN
    INSERT INTO allot.host (name, os, cpu_flags, threads, cpu_flops)
    VALUES ('added ' || nextval('stress.names'), 'Linux', '{avx2}', 8, 2e9) RETURNING id INTO added;
    PERFORM allot.assign_workload(added);
END
$$;

CREATE FUNCTION stress.edit_host(h int, r int) RETURNS text LANGUAGE sql AS $$
    SELECT CASE r % 3
           WHEN 0 THEN stress.edit('add host', 'SELECT stress.add_host()')
           WHEN 1 THEN stress.edit('delete host',
               'DELETE FROM allot.host WHERE id = (SELECT id FROM allot.host WHERE id >= 1000
                                                    ORDER BY random() LIMIT 1)')
           ELSE stress.edit('add or remove coprocessor', format(
               'WITH gone AS (DELETE FROM allot.host_coproc WHERE host_id = %s AND resource = ''amd''
                              RETURNING 1)
                INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
                SELECT %s, ''amd'', 1, 5e12 WHERE NOT EXISTS (SELECT FROM gone)
                ON CONFLICT DO NOTHING', h, h))
           END;
$$;

-- Jobs: 20 more for any job workload.
CREATE FUNCTION stress.edit_jobs(r int) RETURNS text LANGUAGE sql AS $$
    SELECT stress.edit('add jobs', format(
        'INSERT INTO allot.job (workload_id, predicted_app_units)
         SELECT id, %s FROM (SELECT id FROM allot.workload WHERE app_id IS NOT NULL
                              ORDER BY random() LIMIT 1) w, generate_series(1, 20)', 1 + r % 3));
$$;
});

# ---------------------------------------------------------------------------
# The scripts, one call per transaction as a web layer makes them.  Each
# statement carries its script's name in a comment, by which the server
# log's errors are counted per script.  The first jobs are the base farm's,
# which no edit deletes.
my $h = "\\set h random(1, $n_hosts)\n";
my %scripts = (
	assign => [ 4, $h . q{SELECT /* assign */ count(*) FROM allot.assign_workload(:h);} ],
	heartbeat => [ 4, $h . q{SELECT /* heartbeat */ allot.heartbeat(:h);} ],
	release => [ 1, $h . q{SELECT /* release */ allot.release_assignment(:h);} ],
	request => [
		6, $h . q{\set n random(1, 4)
SELECT /* request */ allot.request_work(:h, jsonb_build_object('resources', jsonb_build_object(
           'cpu', jsonb_build_object('req_instances', (:n)::int),
           'nvidia', jsonb_build_object('req_instances', 1),
           'amd', jsonb_build_object('req_instances', 1))));}
	],
	report => [ 6, $h . $load_script{report} ],
	explain => [ 1, $h . q{SELECT /* explain */ count(*) FROM allot.explain_assignment(:h);} ],
	estimate => [
		1, $h . '\set j random(1, ' . 4 * $jobs_per_workload . q{)
SELECT /* estimate */ count(*) FROM allot.estimate_job(:h, :j);}
	],
	queue => [ 1, $h . q{SELECT /* queue */ count(*) FROM allot.host_queue(:h, 3600, 86400);} ],
	validate => [ 2, $load_script{validate} ],
	edit_version => [
		1, q{\set r random(0, 1000000)
SELECT /* edit_version */ stress.edit_version(:r);}
	],
	edit_assignment_workload => [
		1, q{\set r random(0, 1000000)
SELECT /* edit_assignment_workload */ stress.edit_workload(false, :r);}
	],
	edit_job_workload => [
		1, q{\set r random(0, 1000000)
SELECT /* edit_job_workload */ stress.edit_workload(true, :r);}
	],
	edit_host => [
		1, $h . q{\set r random(0, 1000000)
SELECT /* edit_host */ stress.edit_host(:h, :r);}
	],
	edit_jobs => [
		1, q{\set r random(0, 1000000)
SELECT /* edit_jobs */ stress.edit_jobs(:r);}
	],
	# What autovacuum does now and then: new statistics, which every
	# backend hears of as an invalidation of the table, in the middle of
	# whatever it is doing (a write in place once crashed on one).
	analyze => [ 1, q{ANALYZE /* analyze */ allot.assignment, allot.host;} ]);
# Two transitioners, back to back, as two overlapping pg_cron jobs.
my %transitioner = (transition => [ 1, q{SELECT /* transition */ allot.run_transitioner();} ]);

# The scripts' files, with their weights, as pgbench -f arguments, and
# their names in the order pgbench numbers them.
sub script_files
{
	my ($set) = @_;
	my (@args, @names);
	for my $name (sort keys %$set)
	{
		my $file = $node->basedir . "/$name.sql";
		open(my $fh, '>', $file) or die "cannot write $file: $!";
		print $fh $set->{$name}[1], "\n";
		close($fh);
		push @args, '-f', "$file\@$set->{$name}[0]";
		push @names, $name;
	}
	return { files => \@args, names => \@names };
}

# Run pgbench loads side by side until $seconds have passed.  Each client
# is a pgbench of its own: pgbench 15 aborts a client at any error other
# than a serialization failure or a deadlock, and a client that aborted is
# started again for the time left, so that the farm stays under the same
# load for the whole run and every error is counted.  Each load:
# {clients, scripts}; filled in: per => {script => {transactions, failed,
# deadlocks, serialization}}, aborts => {script => {error => count}},
# starts.
sub run_loads
{
	my @loads = @_;
	my $deadline = time() + $seconds;
	my @clients = map { my $load = $_; map { { load => $load, seed => $_ } } 1 .. $load->{clients} } @loads;
	my $start = sub {
		my ($client) = @_;
		my $load = $client->{load};
		@$client{qw(out err)} = ('', '');
		$load->{starts}++;
		$client->{seed} += 1000;
		$client->{harness} = IPC::Run::start(
			[
				'pgbench', '-n', '-h', $node->host, '-p', $node->port,
				'-M', 'prepared', '-c', 1, '-T', int($deadline - time()),
				'--max-tries=1', '--failures-detailed', "--random-seed=$client->{seed}",
				@{ $load->{scripts}{files} }, 'postgres'
			],
			'>', \$client->{out}, '2>', \$client->{err},
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	};
	$start->($_) for @clients;
	while (my @running = grep { $_->{harness} } @clients)
	{
		for my $client (@running)
		{
			if ($client->{harness}->pumpable)
			{
				$client->{harness}->pump_nb;
				next;
			}
			$client->{harness}->finish;
			delete $client->{harness};
			my $load = $client->{load};
			my %round = pgbench_scripts($client->{out}, $load->{scripts}{names});
			for my $name (keys %round)
			{
				$load->{per}{$name}{$_} += $round{$name}{$_} for keys %{ $round{$name} };
			}
			for my $line (split /\n/, $client->{err})
			{
				next unless $line =~ /client \d+ script (\d+) aborted in command \d+ query \d+: (.*)/;
				$load->{aborts}{ $load->{scripts}{names}[$1] }{$2}++;
			}
			$start->($client) if $deadline - time() >= 1;
		}
		usleep(50_000);
	}
	return @loads;
}

# pgbench's figures per script: name => {transactions, failed, deadlocks,
# serialization}.  With one script, pgbench gives only the totals.
sub pgbench_scripts
{
	my ($out, $names) = @_;
	my %figure = (
		transactions => qr/(\d+) transactions|transactions actually processed: (\d+)/,
		failed => qr/failed transactions: (\d+)/,
		deadlocks => qr/deadlock failures: (\d+)/,
		serialization => qr/serialization failures: (\d+)/);
	my %sections;
	while ($out =~ /^SQL script \d+: \S*\/(\w+)\.sql\n((?: - .*\n)+)/mg)
	{
		$sections{$1} = $2;
	}
	$sections{ $names->[0] } = $out if @$names == 1;
	my %per;
	for my $name (keys %sections)
	{
		for my $key (keys %figure)
		{
			my ($n) = grep { defined } $sections{$name} =~ $figure{$key};
			$per{$name}{$key} = $n // 0;
		}
	}
	return %per;
}

# Errors in the server log since $offset: script => {sqlstate => count},
# and one message per (script, sqlstate), with the innermost line of its
# context; a deadlock's with its detail, the cycle of waits.
sub logged_errors
{
	my ($offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	my (%count, %message, %pending);
	my $detail_pid;
	for my $line (split /\n/, $log)
	{
		if ($line =~ /^\t(.*)/ && defined $detail_pid)
		{
			$pending{$detail_pid} .= " | $1" if defined $pending{$detail_pid};
			next;
		}
		undef $detail_pid;
		next unless $line =~ /\[(\d+)\] (\w{5}) (ERROR|DETAIL|CONTEXT|STATEMENT):\s+(.*)/;
		my ($pid, $state, $what, $text) = ($1, $2, $3, $4);
		if ($what eq 'ERROR')
		{
			$pending{$pid} = $text;
		}
		elsif ($what eq 'DETAIL')
		{
			next unless $state eq '40P01' && defined $pending{$pid};
			$pending{$pid} .= " | $text";
			$detail_pid = $pid;
		}
		elsif ($what eq 'CONTEXT')
		{
			$pending{$pid} .= " [$text]" if defined $pending{$pid};
		}
		elsif ($text =~ m{/\* (\w+) \*/})
		{
			$count{$1}{$state}++;
			$message{"$1 $state"} //= delete($pending{$pid}) // '';
		}
	}
	return (\%count, \%message);
}

sub states_text
{
	my ($states) = @_;
	return join(' ', map { "$_ x$states->{$_}" } sort keys %{ $states || {} });
}

# ---------------------------------------------------------------------------
for my $mode (@modes)
{
	$node->safe_psql('postgres', "ALTER DATABASE postgres SET allot.fairness = $mode");
	my $log_offset = -s $node->logfile;

	my ($main, $transitioners) = run_loads(
		{ clients => 8, scripts => script_files(\%scripts) },
		{ clients => 2, scripts => script_files(\%transitioner) });
	my %per = (%{ $main->{per} || {} }, %{ $transitioners->{per} || {} });
	my %aborts = (%{ $main->{aborts} || {} }, %{ $transitioners->{aborts} || {} });
	my ($errors, $messages) = logged_errors($log_offset);
	my %edits;
	for my $row (split /\n/,
		$node->safe_psql('postgres',
			"SELECT operation, sqlstate, count(*) FROM stress.edit_log WHERE mode = '$mode' GROUP BY 1, 2"))
	{
		my ($operation, $state, $n) = split /\|/, $row;
		$edits{$operation}{$state} = $n;
	}

	# The summary, one line per script: transactions, pgbench's failures
	# (deadlocks and serialization failures; it retries neither), clients
	# aborted by other errors, and the errors in the server log by SQLSTATE
	# (all of them, whoever saw them).
	my @lines = sprintf('%-8s %-25s %7s %6s %7s  %s',
		'mode', 'script', 'xacts', 'failed', 'aborted', 'server log errors');
	for my $name (sort keys %per)
	{
		my $aborted = 0;
		$aborted += $_ for values %{ $aborts{$name} || {} };
		push @lines, sprintf('%-8s %-25s %7d %6d %7d  %s',
			$mode, $name, @{ $per{$name} }{qw(transactions failed)}, $aborted,
			states_text($errors->{$name}));
	}
	push @lines, sprintf('%-8s %-40s %s', 'mode', 'operator\'s edit', 'outcomes');
	push @lines, map { sprintf('%-8s %-40s %s', $mode, $_, states_text($edits{$_})) } sort keys %edits;
	push @lines, map { "$mode $_" } split /\n/, $node->safe_psql(
		'postgres', qq{
SELECT DISTINCT ON (operation, sqlstate)
       format('%s %s: %s [%s]%s', operation, sqlstate, message, split_part(context, E'\\n', 1),
              CASE WHEN sqlstate = '40P01' THEN ' | ' || replace(detail, E'\\n', ' | ') ELSE '' END)
  FROM stress.edit_log WHERE mode = '$mode' AND sqlstate <> '00000'
 ORDER BY operation, sqlstate});
	push @lines, map { "$mode $_: $messages->{$_}" } sort keys %$messages;
	push @lines, "$mode pgbench clients started: $main->{starts} + $transitioners->{starts}"
	  . " (8 + 2, and one more each time a client was aborted)";
	my $summary = join("\n", @lines);
	note $summary;

	my $ok = 1;
	$ok &= ok(scalar(keys %per) == scalar(keys %scripts) + scalar(keys %transitioner)
		  && !grep({ $_->{transactions} == 0 } values %per),
		"$mode: every script ran");
	$ok &= is(
		join("\n", map { my $s = $_; map { "$s: $_ (x$aborts{$s}{$_})" } sort keys %{ $aborts{$s} } }
			  sort keys %aborts),
		'', "$mode: no pgbench client was aborted by an error");

	my $logged = sub { my ($name, $state) = @_; return ($errors->{$name} || {})->{$state} // 0 };
	my @deadlocked = map { "$_ x" . max($per{$_}{deadlocks}, $logged->($_, '40P01')) }
	  grep { $per{$_}{deadlocks} > 0 || $logged->($_, '40P01') > 0 } sort keys %per;
	push @deadlocked, map { "$_ x$edits{$_}{'40P01'}" } grep { $edits{$_}{'40P01'} } sort keys %edits;
	$ok &= is(join(', ', @deadlocked), '', "$mode: no transaction ended in a deadlock");

	my @failed_calls = map { "$_: " . states_text($errors->{$_}) }
	  grep { !/^edit_/ && ($per{$_}{failed} > 0 || $aborts{$_} || $errors->{$_}) } sort keys %per;
	$ok &= is(join(', ', @failed_calls), '',
		"$mode: no request, read-only call, validation or transitioner run failed");

	my @bad_edits;
	for my $operation (sort keys %edits)
	{
		my %allowed = map { $_ => 1 } '00000', '40P01', @{ $edit_refusals{$operation} || [] };
		push @bad_edits, map { "$operation: $_" } grep { !$allowed{$_} } sort keys %{ $edits{$operation} };
	}
	push @bad_edits, map { "$_ (uncaught): " . states_text($errors->{$_}) }
	  grep { /^edit_/ && $errors->{$_} } sort keys %per;
	$ok &= is(join(', ', @bad_edits), '',
		"$mode: edits fail only as listed in %edit_refusals");
	my @operations = (
		(map { ("add $_", "delete $_") } 'version', 'host', 'assignment workload', 'job workload'),
		(map { ("pause or resume $_", "weigh $_") } 'assignment workload', 'job workload'),
		'add or remove coprocessor', 'add jobs');
	$ok &= is(join(', ', grep { !($edits{$_} || {})->{'00000'} } @operations), '',
		"$mode: every operation of the operator succeeded at least once");

	# The farm, quiet again: one more transitioner run (under debt, a fold
	# of everything handed out), then the checks.
	$node->safe_psql('postgres', 'SELECT allot.run_transitioner()');
	$ok &= is(farm_problems($node, 'postgres'), '',
		"$mode: check_invariants() is empty and every job agrees with its state");
	if ($mode eq 'debt')
	{
		$ok &= is(debt_tops($node, 'postgres'), 't|',
			"$mode: after a last fold, the largest debt of each resource is 0");
	}
	diag($summary) unless $ok;
}

$node->stop;
done_testing();
