# pg_cron runs the transitioner (docs/production.md "Scheduling the transitioner with pg_cron"): on a throwaway cluster with
# pg_cron preloaded, a host takes a job whose deadline passes within seconds;
# the job stays in progress until the cron job
#     SELECT cron.schedule('allot-transitioner', '* * * * *',
#                          'SELECT allot.run_transitioner()')
# is scheduled, and is then timed out by pg_cron itself: back to 'unsent',
# with a 'timed_out' row in allot.job_report.
#
# pg_cron 1.4 runs jobs at the start of each minute, so the test takes from a
# few seconds to about 65 s, depending on when in the minute it schedules the
# job; it gives up after 150 s.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('cron');
$node->init;

# pg_cron 1.4 runs each job in a new session through libpq, connecting to
# cron.host and the server's own port.  The test cluster may listen on a unix
# socket only (TCP off), so point cron.host at whatever the node listens on:
# its socket directory, or 127.0.0.1 where sockets are not used.  (The other
# way, cron.use_background_workers = on, needs worker slots to spare.)
my $host = $node->host;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.host = '$host'
cron.log_run = on
cron.log_statement = on
});
$node->start;

$node->safe_psql('postgres',
	'CREATE EXTENSION pg_cron; CREATE EXTENSION allot;');
# The version allot.control names: CREATE EXTENSION installs it.
my ($version) = slurp_file("$ENV{TESTDIR}/../allot.control") =~ /default_version = '([^']+)'/;
is( $node->safe_psql(
		'postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'allot'"),
	$version,
	"allot $version is installed next to pg_cron");

# A farm: one app with a CPU version, a job workload with a 2-second delay
# bound, one job and one host.  The default estimate is lowered to 0.5 s per
# app unit so the job passes the deadline check (estimate <= delay bound).
$node->safe_psql(
	'postgres', q{
INSERT INTO allot.app (id, name) VALUES (1, 'a');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, engine, app_id, delay_bound) VALUES (1, 'E', 1, '2 seconds');
INSERT INTO allot.job (id, workload_id) VALUES (1, 1);
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (1, 'Linux', 1, 1e9);
});

# The host takes the job on the real clock (request_work's default now()).
my $sent = $node->safe_psql(
	'postgres', q{
SET allot.default_seconds_per_app_unit = 0.5;
SELECT jsonb_array_length(allot.request_work(1, '{"resources": {"cpu": {"req_instances": 1}}}'::jsonb) -> 'jobs');
});
is($sent, '1', 'the host takes one job');

is( $node->safe_psql(
		'postgres', q{
SELECT state, host_id, deadline > sent_at, deadline - sent_at <= '2 seconds'
  FROM allot.job WHERE id = 1}),
	'in_progress|1|t|t',
	'the job is in progress on host 1, due within 2 seconds');

# Wait for the deadline to pass.
ok( $node->poll_query_until(
		'postgres',
		'SELECT deadline < clock_timestamp() FROM allot.job WHERE id = 1'),
	'the deadline has passed');

# Negative control: past its deadline, but with nothing scheduled, the job is
# still in progress and no report was written; pg_cron has run nothing.
is( $node->safe_psql(
		'postgres', q{
SELECT j.state,
       (SELECT count(*) FROM allot.job_report),
       (SELECT count(*) FROM cron.job),
       (SELECT count(*) FROM cron.job_run_details)
  FROM allot.job j WHERE j.id = 1}),
	'in_progress|0|0|0',
	'before scheduling: the late job is still in progress, no report, no cron run'
);

# Schedule exactly what the README documents.
my $scheduled_at = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
my $jobid = $node->safe_psql('postgres',
	q{SELECT cron.schedule('allot-transitioner', '* * * * *', 'SELECT allot.run_transitioner()')}
);
like($jobid, qr/^\d+$/, 'cron.schedule returns a job id');

# pg_cron fires at the next minute boundary: wait (up to 150 s) for the job
# to be timed out by it.
{
	local $PostgreSQL::Test::Utils::timeout_default = 150;
	ok( $node->poll_query_until(
			'postgres', q{
SELECT j.state = 'unsent' AND j.host_id IS NULL AND j.deadline IS NULL
       AND EXISTS (SELECT FROM allot.job_report r
                    WHERE r.job_id = 1 AND r.outcome = 'timed_out')
  FROM allot.job j WHERE j.id = 1}),
		'pg_cron timed the job out: back to unsent, with a timed_out report');
}

# The run that did it: a succeeded run of exactly the transitioner call,
# started after the job was scheduled.
is( $node->safe_psql(
		'postgres', qq{
SELECT count(*) > 0
  FROM cron.job_run_details d
 WHERE d.jobid = $jobid AND d.status = 'succeeded'
   AND d.command = 'SELECT allot.run_transitioner()'
   AND d.start_time >= '$scheduled_at'}),
	't',
	'cron.job_run_details shows a succeeded run of SELECT allot.run_transitioner()'
);

is( $node->safe_psql(
		'postgres', qq{
SELECT count(*), min(r.host_id), min(r.reported_at) >= '$scheduled_at'
  FROM allot.job_report r WHERE r.job_id = 1 AND r.outcome = 'timed_out'}),
	'1|1|t',
	'one timed_out report for host 1, written after the cron job was scheduled'
);

# The report was written during such a run (reported_at is the run's now()).
# pg_cron 1.4 stamps start_time just after it has sent the command, so the
# run's now() may precede it by a hair: allow a second of slack.
is( $node->safe_psql(
		'postgres', qq{
SELECT count(*) FROM allot.job_report r
 WHERE r.job_id = 1 AND r.outcome = 'timed_out'
   AND EXISTS (SELECT FROM cron.job_run_details d
                WHERE d.jobid = $jobid AND d.status = 'succeeded'
                  AND r.reported_at BETWEEN d.start_time - interval '1 second'
                                        AND d.end_time)}),
	'1',
	'the timed_out report was written during a succeeded pg_cron run');

is( $node->safe_psql(
		'postgres',
		'SELECT quota, n_error FROM allot.host_app_version WHERE host_id = 1 AND app_version_id = 1'
	),
	'50|1',
	'the late host has one error on the version; its quota halved from the default 100'
);

is($node->safe_psql('postgres', 'SELECT * FROM allot.check_invariants()'),
	'', 'check_invariants() is empty');

$node->stop;
done_testing();
