# allot on a streaming standby (issue 25; docs/production.md "Running allot in
# production").  A primary serves a small farm; a standby made from its base
# backup follows it by streaming replication (PostgreSQL::Test::Cluster's
# backup and init_from_backup with has_streaming).  On the standby:
#   - every status view answers a login in role allot_monitor, with the rows
#     the primary has, work done after the backup included: the status page
#     can be pointed at a standby;
#   - the status login may read nothing else there either;
#   - allot's read-only functions answer as on the primary;
#   - every function that writes refuses with SQLSTATE 25006
#     (read_only_sql_transaction).  The C entry points refuse before they
#     lock or read anything, naming themselves and the server's state
#     (allot_require_writable, src/entry.c); register_host and fold_debts,
#     in PL/pgSQL, refuse at their first locking read, with PostgreSQL's
#     read-only message and their own name in the context;
#   - after the refusals it still follows the primary.
# The same writers in a read-only transaction on the primary are refused
# the same way, the C ones naming the read-only transaction.
# Negative control: at the end the same calls succeed on the primary, so
# the refusals come from the standby's state, not from the calls.  Run
# time: about 10 s.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "max_connections = 20\n");
$primary->start;

# The farm: two assignment workloads, a job workload with CPU and GPU
# versions, four hosts (host 3 with a GPU), and the three kinds of login.
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION allot;
CREATE ROLE farm_web LOGIN IN ROLE allot_web;
CREATE ROLE farm_operator LOGIN IN ROLE allot_admin;
CREATE ROLE farm_status LOGIN IN ROLE allot_monitor;
INSERT INTO allot.engine (name) VALUES ('Stockfish'), ('Ethereal');
INSERT INTO allot.workload (id, name, engine, throughput) VALUES
    (1, 'sf: eval', 'Stockfish', 1000), (2, 'eth: tune', 'Ethereal', 2000);
INSERT INTO allot.app (id, name) VALUES (1, 'cruncher');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (11, 1, 'cpu', 1, 0), (12, 1, 'nvidia', 0.5, 1);
INSERT INTO allot.workload (id, name, engine, app_id, throughput) VALUES
    (11, 'cruncher', 'cruncher', 1, 1000);
-- No retries: an error is final, for the status views to show.
INSERT INTO allot.job (workload_id, max_error_results) SELECT 11, 0 FROM generate_series(1, 50);
INSERT INTO allot.host (id, name, os, threads, cpu_flops)
SELECT i, 'host-' || i, 'Linux', 4 * i, 1e9 FROM generate_series(1, 4) i;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (3, 'nvidia', 1, 1e13);
});

# Calls as each login, as a web layer and an operator make them.
sub as
{
	my ($node, $role, $sql) = @_;
	return $node->safe_psql('postgres', $sql, extra_params => [ '-U', $role ]);
}

# The lowest job a host holds, and a report of it (a web login reads no
# table: its web layer knows the job from the reply that sent it).
sub held_job
{
	my ($host) = @_;
	return $primary->safe_psql('postgres',
		"SELECT min(id) FROM allot.job WHERE host_id = $host AND state = 'in_progress'");
}

sub report_sql
{
	my ($host, $outcome) = @_;
	my $job = held_job($host);
	return "SELECT allot.report_job($host, $job, '$outcome', app_units => 1, elapsed_secs => 100)";
}

my $gpu_request =
  q{'{"resources": {"cpu": {"req_instances": 2}, "nvidia": {"req_instances": 1}}}'};
my $cpu_request = q{'{"resources": {"cpu": {"req_instances": 3}}}'};

as($primary, 'farm_web', 'SELECT allot.assign_workload(1); SELECT allot.assign_workload(2)');
as($primary, 'farm_web',
	"SELECT allot.request_work(3, $gpu_request); SELECT allot.request_work(4, $cpu_request)");
as($primary, 'farm_web', report_sql(3, 'success') . ';' . report_sql(4, 'error'));
as($primary, 'farm_operator',
	q{SELECT allot.validate_job((SELECT id FROM allot.job WHERE state = 'done'), true);
      SELECT allot.run_transitioner()});

# The standby, from a base backup taken now; the work after it reaches the
# standby by streaming only.
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

as($primary, 'farm_web',
	"SELECT allot.assign_workload(3); SELECT allot.request_work(4, $cpu_request)");
as($primary, 'farm_web', report_sql(4, 'success'));
as($primary, 'farm_operator', 'SELECT allot.run_transitioner()');
$primary->wait_for_catchup($standby, 'replay');

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the standby is in recovery, following the primary');

# ---------------------------------------------------------------------------
# The status views, as the status login, on both servers.  No view depends
# on the clock under allot.fairness = current (recent credit decays with
# it, and this farm has none).
my %view_order = (
	status_farm => '1',
	status_workload => 'workload_id',
	status_host => 'host_id',
	status_app => 'app_id',
	status_transitioner => 'run',
	status_settings => '1');
for my $view (sort keys %view_order)
{
	my $sql = "SELECT * FROM allot.$view ORDER BY $view_order{$view}";
	my $on_primary = as($primary, 'farm_status', $sql);
	isnt($on_primary, '', "$view has rows on the primary");
	is(as($standby, 'farm_status', $sql),
		$on_primary, "$view answers allot_monitor on the standby, as on the primary");
}

# What came after the backup is there: host 3's assignment, the second
# transitioner run, host 4's second report.
is( as( $standby, 'farm_status', q{
SELECT (SELECT workload_id IS NOT NULL FROM allot.status_host WHERE host_id = 3),
       (SELECT count(*) FROM allot.status_transitioner),
       (SELECT jobs_done || '/' || jobs_error FROM allot.status_farm)}),
	't|2|2/1',
	'the standby shows what the primary did after the backup');

# The status login reads the views and nothing else, on the standby too.
my ($rc, $out, $err) = $standby->psql(
	'postgres', 'SELECT count(*) FROM allot.job',
	extra_params => [ '-U', 'farm_status', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  42501: permission denied for table job/,
	'the status login may not read allot.job on the standby');

# ---------------------------------------------------------------------------
# Read-only functions: the same answers on both servers.  Time is given
# (operators may), so that both compute at the same instant.
my $at = q{(SELECT max(sent_at) FROM allot.job)};
my @readers = (
	[ farm_web => 'SELECT * FROM allot.host_credit(ARRAY[1, 2, 3, 4]::bigint[])' ],
	[ farm_operator => "SELECT * FROM allot.explain_assignment(4, now => $at)" ],
	[
		farm_operator =>
		  q{SELECT * FROM allot.estimate_job(3, (SELECT min(id) FROM allot.job WHERE state = 'unsent'))}
	],
	[ farm_operator => "SELECT * FROM allot.host_queue(4, 3600, 7200, now => $at)" ],
	[ farm_operator => "SELECT * FROM allot.fairness_state($at) ORDER BY 1, 2" ],
	[ farm_operator => 'SELECT * FROM allot.check_invariants()' ],
	[ farm_operator => q{SELECT allot.check_name('host', 'box-2')} ],
	[ farm_web => 'SELECT * FROM allot.host_jobs(4)' ]);
for my $r (@readers)
{
	my ($role, $sql) = @$r;
	my ($name) = $sql =~ /allot\.(\w+)/;
	is(as($standby, $role, $sql), as($primary, $role, $sql),
		"$name answers on the standby as on the primary");
}

# ---------------------------------------------------------------------------
# Writers.  Each call is one a login may make and would succeed on the
# primary: hosts, jobs and arguments exist and are valid.
my $held = held_job(4);
my $unsent = $primary->safe_psql('postgres', "SELECT min(id) FROM allot.job WHERE state = 'unsent'");
# A host to merge into host 1, made on the primary.
my $spare = $primary->safe_psql('postgres',
	q{INSERT INTO allot.host (id, os, threads) VALUES (5, 'Linux', 1) RETURNING id});
$primary->wait_for_catchup($standby, 'replay');
my $done = $primary->safe_psql('postgres',
	"SELECT min(id) FROM allot.job WHERE state = 'done' AND validated IS NULL");
my @writers = (
	[ farm_web => 'assign_workload', 'SELECT * FROM allot.assign_workload(4)' ],
	[ farm_web => 'heartbeat', 'SELECT allot.heartbeat(1)' ],
	[ farm_web => 'release_assignment', 'SELECT allot.release_assignment(2)' ],
	[ farm_web => 'request_work', "SELECT allot.request_work(2, $cpu_request)" ],
	[ farm_web => 'report_job', "SELECT allot.report_job(4, $held, 'success')" ],
	[
		farm_web => 'register_host',
		q{SELECT allot.register_host(NULL, 'newcomer', 'Linux', '{}', 8, 1e9)}
	],
	[ farm_operator => 'expire_assignments', 'SELECT allot.expire_assignments()' ],
	[ farm_operator => 'run_transitioner', 'SELECT allot.run_transitioner()' ],
	[ farm_operator => 'validate_job', "SELECT allot.validate_job($done, true)" ],
	[ farm_operator => 'fold_debts', 'SELECT allot.fold_debts(now())' ],
	[ farm_operator => 'requeue_job', "SELECT allot.requeue_job($unsent)" ],
	[ farm_operator => 'time_out_host', 'SELECT allot.time_out_host(1)' ],
	[ farm_operator => 'merge_host', "SELECT allot.merge_host(1, $spare)" ]);
my %plpgsql = map { $_ => 1 } qw(register_host fold_debts);

# The error a writer gets on $node, with SQLSTATE, detail, hint, context.
sub refusal
{
	my ($node, $role, $sql, $prefix) = @_;
	my ($rc, $out, $err) = $node->psql(
		'postgres', ($prefix // '') . $sql,
		extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
	return "succeeded: $out" if $rc == 0;
	$err =~ s/^psql:<stdin>:\d+: //;
	return $err;
}

for my $w (@writers)
{
	my ($role, $name, $sql) = @$w;
	my $err = refusal($standby, $role, $sql);
	if ($plpgsql{$name})
	{
		like(
			$err,
			qr/ERROR:  25006: cannot execute [A-Z ]+ in a read-only transaction\n(?s:.*)CONTEXT: (?s:.*)PL\/pgSQL function allot\.$name\(/,
			"$name is refused on the standby: 25006, read-only, in allot.$name");
	}
	else
	{
		like(
			$err,
			qr/^ERROR:  25006: allot\.$name cannot run on a standby: the server is in recovery, and read-only\nDETAIL:  allot\.$name writes allot's tables\.\nHINT:  Call it on the primary\./,
			"$name is refused on the standby: 25006, naming allot.$name and the recovery");
	}

	# On the primary, in a read-only transaction.
	$err = refusal($primary, $role, $sql, 'SET default_transaction_read_only = on; ');
	if ($plpgsql{$name})
	{
		like($err, qr/ERROR:  25006: cannot execute [A-Z ]+ in a read-only transaction/,
			"$name is refused in a read-only transaction on the primary: 25006");
	}
	else
	{
		like(
			$err,
			qr/^ERROR:  25006: allot\.$name cannot run in a read-only transaction\n/,
			"$name is refused in a read-only transaction on the primary: 25006, naming allot.$name"
		);
	}
}

# The standby still follows: a request on the primary shows on its status.
my $before = as($standby, 'farm_status', 'SELECT jobs_in_progress FROM allot.status_farm');
my $sent = as($primary, 'farm_web',
	"SELECT jsonb_array_length(allot.request_work(2, $cpu_request) -> 'jobs')");
is($sent, '3', 'the primary sends host 2 three jobs');
$primary->wait_for_catchup($standby, 'replay');
is(as($standby, 'farm_status', 'SELECT jobs_in_progress FROM allot.status_farm'),
	$before + 3, 'the standby shows them in progress');

# Negative control: the very same calls succeed on the primary.
for my $w (@writers)
{
	my ($role, $name, $sql) = @$w;
	is(refusal($primary, $role, $sql) =~ /^succeeded: /, 1,
		"$name succeeds on the primary");
}

$standby->stop;
$primary->stop;
done_testing();
