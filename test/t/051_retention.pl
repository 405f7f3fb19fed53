# Retention under load (issue 33): finished jobs leave the hot tables while
# hosts request and report, a validator judges, two transitioners run and
# an operator edits the farm.
#
# pgbench runs, side by side for $seconds:
#   - requests (request_work) and reports (report_job: successes, errors,
#     aborts) of 16 hosts, as a web layer makes them;
#   - a validator (validate_job, nine in ten valid) and the reads a web
#     layer and a status page make (host_credit, host_jobs, status views);
#   - two transitioners, back to back, each run purging what finished more
#     than three seconds ago (allot.retention_period 1 hour, run_transitioner
#     given now() + 1 hour - 3 s: virtual time, which only moves the
#     retention's cutoff here, as no deadline is that close), at most 100
#     jobs a run (allot.retention_batch);
#   - an operator: jobs added, job workloads added and deleted, paused and
#     resumed, error jobs requeued, a host's jobs timed out, and finished
#     jobs deleted by hand (the same rows the purge takes).
# Then:
#   - no request, report, validation, read or transitioner run failed: no
#     pgbench failure or aborted client, no error in the server log for
#     their statements, no deadlock anywhere;
#   - an operator's edit succeeds or fails only as %edit_refusals allows;
#   - retention did purge, under the load: jobs left allot.job for the
#     purged totals and the archive;
#   - check_invariants() is empty and every job agrees with its state
#     (AllotLoad::farm_problems);
#   - on the quiet farm, every host's credit (host_credit(): total and
#     recent average), every workload's and app's counts, and every app's
#     statistics are the same before and after the rest of the finished
#     jobs leave.
# ALLOT_RETENTION_SECONDS=n runs the load for n seconds instead of 15.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use AllotLoad qw(farm_problems %load_script);

my $seconds = $ENV{ALLOT_RETENTION_SECONDS} // 15;

# A block of docs/production.md: the fenced block after the line
# "<!-- $marker -->".
sub doc_block
{
	my ($marker) = @_;
	my $doc = slurp_file("$ENV{TESTDIR}/../docs/production.md");
	$doc =~ /^<!-- \Q$marker\E -->\n```\w+\n(.*?)^```$/ms
	  or die "docs/production.md has no block marked $marker";
	return $1;
}
my $n_hosts = 16;

my $node = PostgreSQL::Test::Cluster->new('retention');
$node->init;
# Errors logged with their SQLSTATE (%e) and their statement, which names
# its load; deadlocks found within 0.1 s.
$node->append_conf('postgresql.conf',
	"log_line_prefix = '%m [%p] %e '\nlog_min_error_statement = error\ndeadlock_timeout = 100ms\n");
$node->start;

# ---------------------------------------------------------------------------
# The farm.  Apps 1 and 2 have estimates, so their validated jobs are
# credited and then purged; app 3 has none, so its validated jobs wait for
# credit and stay.  Run times come from allot.default_seconds_per_app_unit.
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION allot;
ALTER DATABASE postgres SET allot.retention_period = '1h';
ALTER DATABASE postgres SET allot.retention_batch = 100;
ALTER DATABASE postgres SET allot.default_seconds_per_app_unit = 1;
ALTER DATABASE postgres SET allot.flops_sample_size = 20;
-- 16 hosts may take more than their 100 jobs a day in the load's seconds:
-- jobs must keep finishing to the end, for the purges under the load.
ALTER DATABASE postgres SET allot.daily_quota = 100000;
-- A host whose job fails is backed off for a minute by default: here its
-- next request must still be served, for jobs to keep finishing.
ALTER DATABASE postgres SET allot.error_backoff = 0;

INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'cruncher', 1e12), (2, 'folder', 2e12), (3, 'fresh', NULL);
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (11, 1, 'cpu', 1, 0), (21, 2, 'cpu', 1, 0), (31, 3, 'cpu', 1, 0);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (11, 'cruncher 1', 'cruncher', 1, 1000, '3 days'), (12, 'cruncher 2', 'cruncher', 1, 2000, '3 days'),
    (21, 'folder', 'folder', 2, 1000, '3 days'), (31, 'fresh', 'fresh', 3, 500, '3 days');
INSERT INTO allot.job (workload_id, predicted_app_units)
SELECT w, 1 + i % 3 FROM unnest('{11,12,21,31}'::bigint[]) w, generate_series(1, 3000) i;
INSERT INTO allot.host (id, name, os, threads, cpu_flops)
SELECT i, 'host-' || i, 'Linux', 4 + i % 13, 1e9 * (1 + i % 5) FROM generate_series(1, 16) i;
SELECT setval(pg_get_serial_sequence('allot.workload', 'id'), 999);
});

# ---------------------------------------------------------------------------
# The operator's edits, each in a subtransaction, its outcome recorded by
# operation: 00000, or the SQLSTATE of the error it met.  These may fail,
# and only so:
my %edit_refusals = (
	# a job workload with jobs in progress is not deleted
	'delete job workload' => ['55000'],
	# jobs added to a workload another edit deleted meanwhile
	'add jobs' => ['23503']);

$node->safe_psql(
	'postgres', q{
CREATE SCHEMA stress;
CREATE SEQUENCE stress.names;
CREATE TABLE stress.edit_log (operation text NOT NULL, sqlstate text NOT NULL, message text);

CREATE FUNCTION stress.edit(operation text, statement text) RETURNS text
    LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    INSERT INTO stress.edit_log VALUES (operation, '00000');
    RETURN '00000';
EXCEPTION WHEN OTHERS THEN
    INSERT INTO stress.edit_log VALUES (operation, SQLSTATE, SQLERRM);
    RETURN SQLSTATE;
END
$$;

-- One edit, by r: add 20 jobs to a job workload; add a job workload of 30
-- jobs, or delete an added one (the one with the fewest jobs in
-- progress); pause or resume a base workload; requeue a job in error; time
-- out host h's jobs; delete a finished job.
CREATE FUNCTION stress.one_edit(h int, r int) RETURNS text LANGUAGE sql AS $$
    SELECT CASE r % 7
    WHEN 0 THEN stress.edit('add jobs', format(
        'INSERT INTO allot.job (workload_id, predicted_app_units)
         SELECT id, %s FROM (SELECT id FROM allot.workload WHERE app_id IS NOT NULL
                              ORDER BY random() LIMIT 1) w, generate_series(1, 20)', 1 + r % 3))
    WHEN 1 THEN stress.edit('add job workload', format(
        'WITH w AS (INSERT INTO allot.workload (name, engine, app_id, throughput, delay_bound)
                    VALUES (''added '' || nextval(''stress.names''), ''cruncher'', %s, %s, ''3 days'')
                    RETURNING id)
         INSERT INTO allot.job (workload_id) SELECT id FROM w, generate_series(1, 30)',
        1 + r % 2, 500 + r % 2000))
    WHEN 2 THEN stress.edit('delete job workload',
        'DELETE FROM allot.workload
          WHERE id = (SELECT w.id FROM allot.workload w WHERE w.id >= 1000
                       ORDER BY (SELECT sum(u.in_progress) FROM allot.job_usage u WHERE u.workload_id = w.id)
                       LIMIT 1)')
    WHEN 3 THEN stress.edit('pause or resume', format(
        'UPDATE allot.workload SET state = CASE state WHEN ''active'' THEN ''paused'' ELSE ''active'' END
          WHERE id = %s', (ARRAY[11, 12, 21, 31])[1 + r % 4]))
    WHEN 4 THEN stress.edit('requeue an error job',
        'SELECT allot.requeue_job(j.id)
           FROM (SELECT id FROM allot.job WHERE state = ''error''
                  ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) j')
    WHEN 5 THEN stress.edit('time out a host', format('SELECT allot.time_out_host(%s)', h))
    ELSE stress.edit('delete a finished job',
        'DELETE FROM allot.job
          WHERE id = (SELECT id FROM allot.job WHERE state IN (''done'', ''error'')
                       ORDER BY random() LIMIT 1 FOR UPDATE SKIP LOCKED)')
    END;
$$;
});

# ---------------------------------------------------------------------------
# The loads, each a pgbench of its own (its output is then its script's),
# one call per transaction; each statement names its script in a comment,
# by which the server log's errors are counted.  Reports and validations
# take their job FOR UPDATE SKIP LOCKED in the same statement, so that none
# is the caller's fault.
my $h = "\\set h random(1, $n_hosts)\n";
my %loads = (
	request => [
		3, $h . q{\set n random(1, 4)
SELECT /* request */ allot.request_work(:h, jsonb_build_object('resources', jsonb_build_object(
           'cpu', jsonb_build_object('req_instances', (:n)::int))));}
	],
	report => [ 3, $h . $load_script{report} ],
	validate => [ 1, $load_script{validate} ],
	reads => [
		1, $h . qq{SELECT /* reads */ count(*) FROM allot.host_credit(ARRAY(SELECT generate_series(1, $n_hosts))::bigint[]);
SELECT /* reads */ count(*) FROM allot.host_jobs(:h);
SELECT /* reads */ count(*) FROM allot.status_workload;
SELECT /* reads */ count(*) FROM allot.status_app;}
	],
	transition => [ 2, q{SELECT /* transition */ allot.run_transitioner(now() + interval '3597 seconds');} ],
	edit => [
		1, $h . q{\set r random(0, 1000000)
SELECT /* edit */ stress.one_edit(:h, :r);}
	]);

my $log_offset = -s $node->logfile;
my @runs;
for my $name (sort keys %loads)
{
	my $file = $node->basedir . "/$name.sql";
	open(my $fh, '>', $file) or die "cannot write $file: $!";
	print $fh $loads{$name}[1], "\n";
	close($fh);
	my %run = (name => $name, out => '', err => '');
	$run{harness} = IPC::Run::start(
		[
			'pgbench', '-n', '-h', $node->host, '-p', $node->port, '-M', 'prepared',
			'-c', $loads{$name}[0], '-j', $loads{$name}[0], '-T', $seconds,
			'--max-tries=1', '--failures-detailed', '-f', $file, 'postgres'
		],
		'>', \$run{out}, '2>', \$run{err},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	push @runs, \%run;
}
$_->{harness}->finish for @runs;

# What each load did, and what went wrong.
my (@summary, @failed);
for my $run (@runs)
{
	my ($n) = $run->{out} =~ /number of transactions actually processed: (\d+)/;
	my ($f) = $run->{out} =~ /number of failed transactions: (\d+)/;
	my $aborted = () = $run->{err} =~ /aborted/g;
	$n //= 0;
	$f //= 0;
	push @summary, sprintf('%-10s %7d transactions, %d failed, %d clients aborted', $run->{name}, $n, $f, $aborted);
	push @failed, "$run->{name}: no transaction" if $n == 0;
	push @failed, "$run->{name}: $f failed, $aborted aborted: $run->{err}" if $f || $aborted;
}

# Errors in the server log, per script (the comment in its statement), by
# SQLSTATE, with the first message of each.
my (%logged, %first_message, %pending);
for my $line (split /\n/, slurp_file($node->logfile, $log_offset))
{
	next unless $line =~ /\[(\d+)\] (\w{5}) (ERROR|STATEMENT):\s+(.*)/;
	my ($pid, $state, $what, $text) = ($1, $2, $3, $4);
	if ($what eq 'ERROR')
	{
		$pending{$pid} = "$state $text";
	}
	elsif ($text =~ m{/\* (\w+) \*/} && defined $pending{$pid})
	{
		$logged{$1}{$state}++;
		$first_message{"$1 $state"} //= delete $pending{$pid};
	}
}
my %edits;
for my $row (split /\n/,
	$node->safe_psql('postgres', 'SELECT operation, sqlstate, count(*) FROM stress.edit_log GROUP BY 1, 2'))
{
	my ($operation, $state, $n) = split /\|/, $row;
	$edits{$operation}{$state} = $n;
}
push @summary, map {
	my $o = $_;
	sprintf('edit %-22s %s', $o, join(' ', map { "$_ x$edits{$o}{$_}" } sort keys %{ $edits{$o} }))
} sort keys %edits;
push @summary, map { "log: $_: $first_message{$_}" } sort keys %first_message;
my $summary = join("\n", @summary);
note $summary;

my $ok = 1;
$ok &= is(join("\n", @failed), '', 'no request, report, validation, read, edit or transitioner run failed in pgbench');
$ok &= is(join(', ', map { my $s = $_; map { "$s $_ x$logged{$s}{$_}" } sort keys %{ $logged{$s} } }
		  grep { $_ ne 'edit' } sort keys %logged),
	'', "no error in the server log for any statement but the operator's edits");
my @bad_edits;
for my $operation (sort keys %edits)
{
	my %allowed = map { $_ => 1 } '00000', @{ $edit_refusals{$operation} || [] };
	push @bad_edits, map { "$operation: $_" } grep { !$allowed{$_} } sort keys %{ $edits{$operation} };
}
$ok &= is(join(', ', @bad_edits), '', 'edits fail only as %edit_refusals allows');
$ok &= is(join(', ', grep { !($edits{$_} || {})->{'00000'} } 'add jobs', 'add job workload', 'pause or resume',
		  'time out a host', 'delete a finished job'),
	'', 'every kind of edit succeeded at least once');

# Retention worked under the load.
my ($purged_runs, $purged_jobs, $archived) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT count(*) FROM allot.status_transitioner WHERE purged > 0),
       (SELECT coalesce(sum(done + error), 0) FROM allot.purged_jobs),
       (SELECT coalesce(sum(job_count), 0) FROM allot.job_archive)});
note "transitioner runs that purged (of the last 100): $purged_runs; jobs purged: $purged_jobs; archived: $archived";
$ok &= ok($purged_jobs > 0 && $purged_runs > 0, 'the transitioners purged finished jobs under the load');
$ok &= is($archived, $purged_jobs, 'every purged job is in the archive');

# ---------------------------------------------------------------------------
# The quiet farm.
$node->safe_psql('postgres', 'SELECT allot.run_transitioner()');
$ok &= is(farm_problems($node, 'postgres'), '',
	'check_invariants() is empty and every job agrees with its state');

# What the farm knows, before and after the rest of the finished jobs leave
# (all of them but the ones waiting for credit).
my $known = q{
SELECT string_agg(x, E'\n' ORDER BY x) FROM (
    -- host_credit() decays to now(): the row it reads, and its total
    SELECT format('host %s: %s %s %s %s', host_id, credit, jobs, decayed, decayed_at) AS x
      FROM allot.host_credit
    UNION ALL
    SELECT format('host %s: total %s', host_id, total_credit)
      FROM allot.host_credit(ARRAY(SELECT id FROM allot.host)::bigint[])
    UNION ALL
    SELECT format('workload %s: %s done, %s error', workload_id, jobs_done, jobs_error)
      FROM allot.status_workload
    UNION ALL
    SELECT format('app %s: %s %s %s %s %s %s %s', app_id, n_reports, est_flops_per_au, actual_au_mean,
                  credit_per_job, jobs_done, jobs_error, voices)
      FROM allot.status_app
    UNION ALL
    SELECT format('app %s: %s %s %s %s', id, au_ratio_mean, au_ratio_m2, au_ratio_bound, cpu_samples)
      FROM allot.app) k};
my $before = $node->safe_psql('postgres', $known);
my $left_before = $node->safe_psql('postgres', q{SELECT count(*) FROM allot.job WHERE state IN ('done', 'error')});
# The last purge is docs/production.md's catch-up loop, as printed there
# but for the clock: these jobs are minutes old, the period an hour.
my $catch_up = doc_block('retention: catch up');
$catch_up =~ s/allot\.purge_finished\(\)/allot.purge_finished(now() + interval '1 day')/
  or die 'the catch-up block no longer calls allot.purge_finished()';
$node->safe_psql('postgres', $catch_up);
my $left_after = $node->safe_psql('postgres',
	q{SELECT count(*) FROM allot.job
	   WHERE state IN ('done', 'error') AND NOT (validated AND (NOT sampled OR credit IS NULL))});
note "finished jobs in allot.job before the last purge: $left_before";
$ok &= cmp_ok($left_before, '>', 0, 'the quiet farm had finished jobs left to purge');
$ok &= is($left_after, '0', 'the last purge took every finished job but those waiting for credit');
$ok &= is($node->safe_psql('postgres', $known), $before,
	"every host's credit, and every workload's and app's counts and statistics, are as before");
$ok &= is(farm_problems($node, 'postgres'), '',
	'check_invariants() is empty and every job agrees with its state, afterwards');

# A job that left, looked up by docs/production.md's query as printed
# there but for the job's id.
my $lookup = doc_block('retention: look up a job');
my $gone = $node->safe_psql('postgres',
	q{SELECT (json_array_elements(jobs) -> 'job' ->> 'id') FROM allot.job_archive ORDER BY 1 DESC LIMIT 1});
$lookup =~ s/\b123\b/$gone/g == 2 or die 'the look-up block no longer names job 123 twice';
(my $lookup_query = $lookup) =~ s/;\s*$//;
$ok &= is($node->safe_psql('postgres', "SELECT count(*) FROM ($lookup_query) found"), '1',
	"the look-up finds archived job $gone, once");
$ok &= like($node->safe_psql('postgres', $lookup), qr/^\{"job" : \{"id":$gone,/,
	'as its row and its reports');

# The archive, a compressed file per day and then deleted, by
# docs/production.md's export block as printed there but for its first line.
my $export = doc_block('retention: export a day');
my $dir = PostgreSQL::Test::Utils::tempdir;
my @days = split /\n/,
  $node->safe_psql('postgres', 'SELECT DISTINCT archived_at::date FROM allot.job_archive ORDER BY 1');
my $archived_jobs = $node->safe_psql('postgres', 'SELECT sum(job_count) FROM allot.job_archive');
my ($lines, $ids) = (0, 0);
for my $day (@days)
{
	my $script = $export;
	$script =~ s/^db=farm day=\S+ dir=\S+$/db=postgres day=$day dir=$dir/m
	  or die 'the export block no longer starts with db=, day= and dir=';
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	my ($out, $err);
	my $ran = IPC::Run::run([ 'bash', '-e', '-c', $script ], '>', \$out, '2>', \$err);
	$ok &= ok($ran && $err eq '', "the export of $day runs") or diag($err);
	my @rows = split /\n/, `gzip -dc $dir/$day.jsonl.gz`;
	$lines += @rows;
	$ids += grep { /^\{"job" : \{"id":\d+,/ } @rows;
}
$ok &= cmp_ok(scalar(@days), '>=', 1, 'the archive holds a day or more');
$ok &= is($lines, $archived_jobs, 'the files hold every archived job, one a line');
$ok &= is($ids, $lines, 'each line is a job: its row and its reports');
$ok &= is($node->safe_psql('postgres', 'SELECT count(*) FROM allot.job_archive'), '0',
	'the exported days are deleted from the archive');

diag($summary) unless $ok;
$node->stop;
done_testing();
