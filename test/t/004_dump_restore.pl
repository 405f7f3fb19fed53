# allot through pg_dump and restore (issue 6, item 4).  A farm that has been
# used (workloads, engines, hosts, coprocessors, assignments counted and
# expired, jobs in every state, reports, app statistics and FLOPS estimates,
# credit, quotas, backoffs, a custom resource type, grants, jobs retention
# moved to the archive with their counts in the purged totals) is dumped in the
# custom format (restored by pg_restore) and in the plain format (run by
# psql), into fresh databases.  Then:
#   - every allot table holds, row for row, what the original holds; the
#     usage tables, which pg_dump leaves out, are rebuilt by the triggers;
#   - every allot sequence continues where the original's does, and a row
#     inserted with a default id gets the id the original would give it;
#   - check_invariants() is empty and every job agrees with its state;
#   - request_work, assign_workload, explain_assignment, report_job,
#     estimate_job, host_queue and run_transitioner give the same replies as
#     in the original for the same seed and now, and leave the same tables.
# A restore into a database where allot is already installed fails at
# "CREATE SCHEMA allot" and, as pg_restore documents, goes on by default:
# the rows load into the installation as they are.  With
# --single-transaction --exit-on-error it loads nothing.
# Run time: about 10 s.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use AllotLoad qw(farm_problems);

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->append_conf('postgresql.conf', 'log_statement = none');
$node->start;

# ---------------------------------------------------------------------------
# The farm, used through allot's own functions on a virtual clock.  Ids come
# from the identity sequences; one row of each identity table is deleted
# again, so that every sequence is ahead of its table's largest id.
$node->safe_psql('postgres', 'CREATE ROLE farm_web NOLOGIN');
$node->safe_psql('postgres', 'CREATE DATABASE farm');
$node->safe_psql(
	'farm', q{
CREATE EXTENSION allot;
SET allot.flops_sample_size = 5;   -- FLOPS estimates from a handful of reports
SET allot.fairness = debt;         -- fills allot.workload_credit

INSERT INTO allot.engine (name, systems, cpu_flags, compiler, compiler_min, private) VALUES
    ('Stockfish', NULL, '{avx2}', 'gcc', '10', false),
    ('Ethereal', '{Linux}', '{}', NULL, NULL, false),
    ('Secret', '{Linux,Darwin}', '{bmi2}', NULL, NULL, true);
INSERT INTO allot.resource (name) VALUES ('tpu');

INSERT INTO allot.workload (name, engine, base_engine, priority, throughput, state,
                            dev_threads, base_threads, syzygy, time_based, mode, workload_size)
VALUES ('sf: eval', 'Stockfish', 'Stockfish', 0, 1000, 'active', 1, 1, 0, true, 'games', 32),
       ('sf: spsa', 'Stockfish', NULL, 0, 1500, 'active', 2, 2, 5, false, 'spsa_multiple', 16),
       ('eth: odds', 'Ethereal', 'Stockfish', 0, 700, 'active', 4, 1, 0, true, 'games', 8),
       ('secret', 'Secret', NULL, 0, 300, 'paused', 1, 1, 0, true, 'spsa_single', 4),
       ('old', 'Ethereal', NULL, 0, 1000, 'finished', 1, 1, 0, true, 'games', 32),
       ('scratch', 'Ethereal', NULL, 0, 1000, 'active', 1, 1, 0, true, 'games', 32);
DELETE FROM allot.workload WHERE name = 'scratch';

INSERT INTO allot.app (name, reference_jobs) VALUES
    ('cruncher', false), ('gpuonly', false), ('refapp', true), ('scratch', false);
DELETE FROM allot.app WHERE name = 'scratch';
INSERT INTO allot.app_version (app_id, platform, resource, ncpus, ncoprocs, cpu_flags)
SELECT a.id, v.platform, v.resource, v.ncpus, v.ncoprocs, v.cpu_flags::text[]
  FROM (VALUES ('cruncher', NULL, 'cpu', 1, 0, '{}'),
               ('cruncher', NULL, 'nvidia', 0.2, 1, '{}'),
               ('gpuonly', NULL, 'nvidia', 0.5, 1, '{}'),
               ('gpuonly', 'Linux', 'tpu', 0.25, 1, '{}'),
               ('refapp', 'Linux', 'cpu', 1, 0, '{avx2}'),
               ('cruncher', NULL, 'amd', 0.5, 1, '{}'))
       v(app, platform, resource, ncpus, ncoprocs, cpu_flags)
  JOIN allot.app a ON a.name = v.app;
DELETE FROM allot.app_version WHERE resource = 'amd';

INSERT INTO allot.workload (name, engine, app_id, priority, throughput, state, delay_bound)
SELECT w.name, w.engine, a.id, 0, w.throughput, w.state, w.delay_bound::interval
  FROM (VALUES ('crunch 1', 'cruncher', 'cruncher', 1000, 'active', '1 day'),
               ('gpu 1', 'gpuonly', 'gpuonly', 2000, 'active', '1 day'),
               ('ref 1', 'refapp', 'refapp', 1000, 'active', '2 hours'),
               ('crunch old', 'cruncher', 'cruncher', 1000, 'paused', '1 day'))
       w(name, engine, app, throughput, state, delay_bound)
  JOIN allot.app a ON a.name = w.app;

INSERT INTO allot.job (workload_id, predicted_app_units, reference)
SELECT w.id, 1 + g % 3, w.name = 'ref 1' AND g % 2 = 0
  FROM allot.workload w, generate_series(1, 24) g
 WHERE w.app_id IS NOT NULL
 ORDER BY w.id, g;
DELETE FROM allot.job WHERE id = (SELECT max(id) FROM allot.job);

-- Eight hosts of every shape; host 9 is deleted again.
INSERT INTO allot.host (name, os, cpu_flags, compilers, tokens, threads, physical_cores,
                        sockets, syzygy_max, noisy, focus, cpu_flops)
VALUES ('a', 'Linux', '{avx2,bmi2}', '{"gcc": "12.2.0"}', '{Secret}', 16, 8, 2, 6, false, '{}', 4e9),
       ('b', 'Linux', '{avx2}', '{"gcc": "9.4"}', '{}', 8, NULL, 1, 0, false, '{Ethereal}', 2e9),
       ('c', 'Windows', '{avx2}', '{"gcc": "13.1", "clang": "16"}', '{}', 32, 16, 2, 7, true, '{}', 6e9),
       ('d', 'Linux', '{}', '{}', '{}', 4, 4, 1, 0, false, '{}', NULL),
       ('e', 'Linux', '{avx2}', '{"gcc": "11"}', '{}', 12, NULL, 1, 0, false, '{Stockfish}', 3e9),
       ('f', 'Darwin', '{bmi2}', '{}', '{Secret}', 10, 10, 1, 0, false, '{}', 5e9),
       ('g', 'Linux', '{avx2}', '{"gcc": "10.1"}', '{}', 64, 32, 4, 0, false, '{}', 8e9),
       ('h', 'Linux', '{avx2}', '{}', '{}', 6, NULL, 1, 0, false, '{}', 1e9),
       ('scratch', 'Linux', '{}', '{}', '{}', 1, NULL, 1, 0, false, '{}', NULL);
DELETE FROM allot.host WHERE name = 'scratch';
-- Two volunteers' hosts, each of an owner (0.7.0), and a job of crunch 1
-- with a quorum of 2: its replica goes to another owner (allot.job_voice).
SELECT allot.register_host(NULL, 'alice-pc', 'Linux', '{avx2}', 4, 2e9, owner => 'alice'),
       allot.register_host(NULL, 'bob-pc', 'Linux', '{avx2}', 4, 2e9, owner => 'bob');
INSERT INTO allot.job (workload_id, predicted_app_units, min_quorum, target_nresults)
SELECT id, 2, 2, 2 FROM allot.workload WHERE name = 'crunch 1';
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops)
SELECT h.id, c.resource, c.count, c.peak
  FROM (VALUES ('a', 'nvidia', 2, 1e13), ('c', 'nvidia', 1, 2e13),
               ('g', 'tpu', 4, 5e13), ('g', 'nvidia', 1, 1.5e13))
       c(host, resource, count, peak)
  JOIN allot.host h ON h.name = c.host;

-- 00:00: every host takes an assignment and asks for jobs.
SELECT count(*) FROM allot.host h,
       LATERAL allot.assign_workload(h.id, '2026-01-01 00:00+00', seed => h.id) a;
SELECT count(allot.request_work(h.id,
           '{"resources": {"cpu": {"req_instances": 3}, "nvidia": {"req_instances": 1},
                           "tpu": {"req_instances": 2}}}',
           '2026-01-01 00:00+00', seed => h.id))
  FROM allot.host h;

-- 00:30: reports of three jobs in four: mostly successes, some errors and
-- aborts; the fourth stays in progress.  One success is repeated.  The jobs
-- that err allow no failure: their error is final.
UPDATE allot.job SET max_error_results = 0 WHERE id % 7 = 0;
SELECT count(allot.report_job(host_id, id,
           CASE id % 7 WHEN 0 THEN 'error' WHEN 1 THEN 'aborted' ELSE 'success' END,
           app_units => predicted_app_units * (0.9 + (id % 3) * 0.1),
           elapsed_secs => 600 + 10 * id, now => '2026-01-01 00:30+00'))
  FROM (SELECT * FROM allot.job WHERE state = 'in_progress' AND id % 4 <> 3 ORDER BY id) j;
SELECT count(allot.report_job(host_id, id, 'success',
           app_units => predicted_app_units * (0.9 + (id % 3) * 0.1),
           elapsed_secs => 600 + 10 * id, now => '2026-01-01 00:31+00'))
  FROM (SELECT j.id, r.host_id, j.predicted_app_units FROM allot.job j
          JOIN allot.job_report r ON r.job_id = j.id AND r.outcome = 'success'
         ORDER BY j.id LIMIT 1) j;

-- 00:40: a second round of requests, and its reports.
SELECT count(allot.request_work(h.id, '{"work_req_seconds": 7200}',
                                '2026-01-01 00:40+00', seed => 100 + h.id))
  FROM allot.host h;
SELECT count(allot.report_job(host_id, id, 'success',
           app_units => predicted_app_units, elapsed_secs => 300 + id,
           now => '2026-01-01 00:44+00'))
  FROM (SELECT * FROM allot.job
         WHERE state = 'in_progress' AND sent_at = '2026-01-01 00:40+00' AND id % 4 <> 3
         ORDER BY id) j;

-- 00:45: the transitioner takes samples and estimates; verdicts; at 00:50
-- it grants credit.
SELECT allot.run_transitioner('2026-01-01 00:45+00');
SELECT count(allot.validate_job(id, id % 5 <> 0))
  FROM allot.job WHERE state = 'done';
SELECT allot.run_transitioner('2026-01-01 00:50+00');

-- 00:50: hosts that can run refapp take its jobs (2-hour bound) ...
SELECT count(allot.request_work(h.id,
           jsonb_build_object('resources', '{"cpu": {"req_instances": 2}}'::jsonb,
                              'exclude', (SELECT jsonb_agg(id) FROM allot.workload
                                           WHERE name = 'crunch 1')),
           '2026-01-01 00:50+00', seed => 200 + h.id))
  FROM allot.host h WHERE h.name IN ('b', 'e', 'h');

-- ... and at 03:00 they time out; every assignment expires, and two hosts
-- check in again.
SELECT allot.run_transitioner('2026-01-01 03:00+00');
SELECT allot.heartbeat(h.id, '2026-01-01 03:00+00')
  FROM allot.host h WHERE h.name IN ('a', 'g');
-- A job state allot does not write itself, but the table allows.
UPDATE allot.job SET state = 'timed_out'
 WHERE id = (SELECT min(id) FROM allot.job WHERE state = 'unsent');

-- A month later, retention moves the six oldest finished jobs out, with
-- their reports, into the archive; their counts and credit stay, and go to
-- the purged totals (dumped: a restore adds them to the counters).
SELECT allot.purge_finished('2026-02-01 00:00+00', 6);

GRANT USAGE ON SCHEMA allot TO farm_web;
GRANT SELECT ON allot.workload TO farm_web;
GRANT EXECUTE ON FUNCTION allot.request_work(bigint, jsonb, timestamptz, bigint) TO farm_web;
});

# Each table, as sorted text rows; and the grants in schema allot.
# allot.assignment_horizon and allot.assignment_watch are left out: they are
# derived, rebuilt from the assignments when a request needs them.
# allot.transitioner_run is left out: it logs this server's transitioner
# runs with wall-clock times, and is not dumped.  allot.workload_usage_signal
# and allot.assignment_watch_signal hold no rows (usage_cache.c,
# assignment_usage.c).
sub snapshot
{
	my ($db) = @_;
	my %snap;
	my @tables = split /\n/,
	  $node->safe_psql($db,
		q{SELECT relname FROM pg_class
		   WHERE relnamespace = 'allot'::regnamespace AND relkind IN ('r', 'p')
		     AND relname NOT IN ('transitioner_run', 'assignment_horizon', 'assignment_watch',
		                         'workload_usage_signal', 'assignment_watch_signal')
		   ORDER BY 1});
	for my $table (@tables)
	{
		# job_usage keeps a row per (workload, shard of the writing backend):
		# a restore rebuilds the same sums in other shards.  A resource's
		# median FLOPS are the transitioner's (the built-in types' rows are
		# not dumped): its next run computes them again.  A workload_usage
		# row of no hosts is kept by requests so that a host coming back
		# updates it; the restore's rebuild makes rows for counted
		# assignments only.  A host's decayed credit is a sum of floats: a
		# restore adds its purged total's share (allot.purged_credit) in
		# another order, which may move the last digit.
		my $rows =
		    $table eq 'workload_usage'
		  ? q{(SELECT * FROM allot.workload_usage WHERE hosts <> 0 OR threads <> 0 OR focus_threads <> 0)}
		  : $table eq 'job_usage'
		  ? q{(SELECT workload_id, sum(unsent) AS unsent, sum(in_progress) AS in_progress,
		              sum(mflops) AS mflops, sum(done) AS done, sum(error) AS error
		         FROM allot.job_usage GROUP BY workload_id)}
		  : $table eq 'host_credit'
		  ? q{(SELECT host_id, credit, jobs, round(decayed::numeric, 9) AS decayed, decayed_at
		         FROM allot.host_credit)}
		  : $table eq 'resource' ? q{(SELECT name FROM allot.resource)}
		  : "allot.$table";
		$snap{$table} = $node->safe_psql($db,
			qq{SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text COLLATE "C"), '')
			     FROM $rows t});
	}
	$snap{'(grants)'} = $node->safe_psql(
		$db, q{
SELECT string_agg(format('%s %s', o, acl), E'\n' ORDER BY o COLLATE "C")
  FROM (SELECT c.oid::regclass::text AS o, c.relacl::text AS acl FROM pg_class c
         WHERE c.relnamespace = 'allot'::regnamespace AND c.relacl IS NOT NULL
        UNION ALL
        SELECT p.oid::regprocedure::text, p.proacl::text FROM pg_proc p
         WHERE p.pronamespace = 'allot'::regnamespace AND p.proacl IS NOT NULL
        UNION ALL
        SELECT n.nspname, n.nspacl::text FROM pg_namespace n
         WHERE n.nspname = 'allot' AND n.nspacl IS NOT NULL) g});
	return \%snap;
}

# Where each allot sequence stands: what nextval() would give next (but
# the transitioner's run numbers, which go with its log).
my $sequences_sql = q{
SELECT string_agg(format('%s %s', sequencename,
                         CASE WHEN last_value IS NULL THEN start_value
                              ELSE last_value + increment_by END), ', '
                  ORDER BY sequencename)
  FROM pg_sequences WHERE schemaname = 'allot' AND sequencename <> 'transitioner_run_seq'};

my $original = snapshot('farm');

# The farm must exercise what is compared: no empty table, the job states,
# statistics, estimates, credit, expired and counted assignments.
is(join(' ', grep { $original->{$_} eq '' } sort keys %$original),
	'', 'the farm has rows in every allot table');
is( $node->safe_psql(
		'farm', q{
SELECT string_agg(DISTINCT state, ' ' ORDER BY state) FROM allot.job}),
	'done error in_progress timed_out unsent',
	'the farm has jobs in every state');
is( $node->safe_psql(
		'farm', q{
SELECT (SELECT count(*) FROM allot.app WHERE est_flops_per_au > 0 AND n_reports > 0) > 0,
       (SELECT count(*) FROM allot.job WHERE credit > 0) > 0,
       (SELECT count(*) FROM allot.job_report WHERE outcome = 'timed_out') > 0,
       (SELECT count(*) FROM allot.assignment WHERE counted) > 0,
       (SELECT count(*) FROM allot.assignment WHERE NOT counted) > 0,
       (SELECT count(*) FROM allot.host_app_version WHERE quota < 100) > 0,
       (SELECT count(*) FROM allot.host_resource WHERE backoff_secs > 0) > 0}),
	't|t|t|t|t|t|t',
	'the farm has estimates, credit, timeouts, counted and expired assignments, lowered quotas and backoffs'
);
is(farm_problems($node, 'farm'), '', 'the original farm is consistent');

# ---------------------------------------------------------------------------
# Dump in both formats, restore into fresh databases.
my $dir = $node->basedir;
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/farm.dump", '-d', 'farm' ],
	'pg_dump, custom format');
$node->command_ok([ 'pg_dump', '-Fp', '-f', "$dir/farm.sql", '-d', 'farm' ],
	'pg_dump, plain format');

$node->safe_psql('postgres', 'CREATE DATABASE from_custom');
$node->command_checks_all(
	[ 'pg_restore', '--exit-on-error', '-d', 'from_custom', "$dir/farm.dump" ],
	0, [qr/^$/], [qr/^$/], 'pg_restore of the custom dump, without an error');
$node->safe_psql('postgres', 'CREATE DATABASE from_plain');
$node->command_checks_all(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'from_plain', '-f', "$dir/farm.sql" ],
	0, [qr/^/], [qr/^$/], 'psql runs the plain dump, without an error');

my @restored = ('from_custom', 'from_plain');

# compare($label, $db, $expected): every table and the grants.
sub compare
{
	my ($label, $db, $expected) = @_;
	my $got = snapshot($db);
	is(join(' ', sort keys %$got), join(' ', sort keys %$expected),
		"$label: the same allot tables");
	for my $what (sort keys %$expected)
	{
		my $name = $what =~ /^\(/ ? $what : "allot.$what";
		is($got->{$what}, $expected->{$what}, "$label: $name as in the original");
	}
}

my $original_sequences = $node->safe_psql('farm', $sequences_sql);
for my $db (@restored)
{
	compare($db, $db, $original);
	is(farm_problems($node, $db), '',
		"$db: check_invariants() is empty and every job agrees with its state");
	is($node->safe_psql($db, $sequences_sql),
		$original_sequences, "$db: every allot sequence is where the original's is");
}

# ---------------------------------------------------------------------------
# The same calls, with the same seeds and clock, in the original and in each
# restored database give the same replies and leave the same tables.
my $first_in_progress =
  q{(SELECT id FROM allot.job WHERE state = 'in_progress' ORDER BY id LIMIT 1)};
my @calls = (
	q{SELECT allot.request_work(h.id, '{"resources": {"cpu": {"req_instances": 2},
	                                                  "nvidia": {"req_instances": 1}}}',
	                            '2026-01-01 04:00+00', seed => 7)
	    FROM allot.host h WHERE h.name = 'a'},
	q{SELECT allot.request_work(h.id, '{"buffer": {"min_secs": 3600, "max_secs": 86400}}',
	                            '2026-01-01 04:00+00', seed => 8)
	    FROM allot.host h WHERE h.name = 'g'},
	q{SELECT a.* FROM allot.host h,
	         LATERAL allot.assign_workload(h.id, '2026-01-01 04:00+00', seed => 9) a
	   WHERE h.name IN ('b', 'c', 'e') ORDER BY h.id},
	q{SELECT e.* FROM allot.host h, LATERAL allot.explain_assignment(h.id, '2026-01-01 04:00+00') e
	   WHERE h.name = 'a'},
	qq{SELECT allot.report_job(j.host_id, j.id, 'success', app_units => 2, elapsed_secs => 900,
	                           now => '2026-01-01 04:10+00')
	     FROM allot.job j WHERE j.id = $first_in_progress},
	q{SELECT e.* FROM allot.host h, LATERAL allot.estimate_job(h.id, 1) e WHERE h.name = 'a'},
	q{SELECT q.* FROM allot.host h,
	         LATERAL allot.host_queue(h.id, 3600, 86400, '2026-01-01 04:20+00') q
	   WHERE h.name = 'g'},
	q{SELECT allot.run_transitioner('2026-01-02 06:00+00')},
	q{SELECT * FROM allot.check_invariants()});

my %replies;
for my $db ('farm', @restored)
{
	# in the mode the farm ran in, so that its debts decide
	$replies{$db} =
	  [ map { $node->safe_psql($db, "SET allot.fairness = debt; $_") } @calls ];
}
like($replies{farm}[0], qr/"job_id"/, 'the first request gets jobs in the original');
like($replies{farm}[4], qr/"state": "done"/, 'the report is accepted in the original');
for my $db (@restored)
{
	for my $i (0 .. $#calls)
	{
		my ($call) = $calls[$i] =~ /(allot\.\w+)\s*\(/;
		is($replies{$db}[$i], $replies{farm}[$i],
			"$db: call " . ($i + 1) . ", $call, replies as in the original");
	}
}
my $after_calls = snapshot('farm');
for my $db (@restored)
{
	compare("$db after the calls", $db, $after_calls);
}

# A new row with a default id gets the id the original gives it, in every
# table with an identity column.
my $insert_sql = q{
INSERT INTO allot.workload (engine) VALUES ('New');
INSERT INTO allot.host (os) VALUES ('Linux');
INSERT INTO allot.app (name) VALUES ('new');
INSERT INTO allot.app_version (app_id, resource) SELECT min(id), 'cpu' FROM allot.app;
INSERT INTO allot.job (workload_id) SELECT min(id) FROM allot.workload WHERE app_id IS NOT NULL;
SELECT format('workload %s, host %s, app %s, app_version %s, job %s',
              (SELECT max(id) FROM allot.workload), (SELECT max(id) FROM allot.host),
              (SELECT max(id) FROM allot.app), (SELECT max(id) FROM allot.app_version),
              (SELECT max(id) FROM allot.job));
};
my $new_ids = $node->safe_psql('farm', $insert_sql);
for my $db (@restored)
{
	my ($ret, $stdout, $stderr) = $node->psql($db, $insert_sql);
	is("$stdout$stderr", $new_ids, "$db: new rows get the next ids, $new_ids");
}

# ---------------------------------------------------------------------------
# Restoring where allot is already installed.  The schema allot is created by
# CREATE EXTENSION from allot.control, so it is not a member of the extension
# and pg_dump writes "CREATE SCHEMA allot" before
# "CREATE EXTENSION IF NOT EXISTS allot".  Into a database that has allot,
# the first fails and the second keeps the installation as it is.

# pg_restore of the custom dump into a new database where allot is installed
# and empty: whether it worked, and what it said.
sub restore_over_allot
{
	my ($db, @options) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION allot');
	my ($stdout, $stderr) = ('', '');
	my $ok = IPC::Run::run(
		[
			'pg_restore', @options, '-h', $node->host, '-p', $node->port,
			'-d', $db, "$dir/farm.dump"
		],
		'>', \$stdout, '2>', \$stderr);
	return ($ok, $stderr);
}

# By default pg_restore goes on after an error and counts them: the one
# error is the schema, and the rows are loaded into the installation.
my ($ok, $stderr) = restore_over_allot('preinstalled');
ok(!$ok, 'a restore into a database with allot installed reports an error');
like($stderr, qr/schema "allot" already exists/, 'the schema already exists');
like($stderr, qr/errors ignored on restore: 1$/m, 'and that is the only error');
compare('preinstalled', 'preinstalled', $original);

# In one transaction, stopping at the first error: nothing is loaded.
($ok, $stderr) =
  restore_over_allot('preinstalled_strict', '--single-transaction', '--exit-on-error');
ok(!$ok, 'with --single-transaction --exit-on-error the restore fails');
like($stderr, qr/schema "allot" already exists/, 'at the schema');
is( $node->safe_psql(
		'preinstalled_strict', q{
SELECT (SELECT count(*) FROM allot.engine) + (SELECT count(*) FROM allot.workload)
     + (SELECT count(*) FROM allot.host) + (SELECT count(*) FROM allot.job)}),
	'0',
	'and the installation is left empty');

# ---------------------------------------------------------------------------
# The built-in coprocessor types are left out of the dump (the extension
# script creates them), so one a farm removed comes back after a restore.
$node->safe_psql('postgres', 'CREATE DATABASE types');
$node->safe_psql(
	'types', q{
CREATE EXTENSION allot;
DELETE FROM allot.resource WHERE name = 'intel';
INSERT INTO allot.resource (name) VALUES ('tpu');
});
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/types.dump", '-d', 'types' ],
	'pg_dump of a farm without the intel type');
$node->safe_psql('postgres', 'CREATE DATABASE types_restored');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'types_restored', "$dir/types.dump" ],
	'pg_restore of it');
my $types_sql = q{SELECT string_agg(name, ',' ORDER BY name) FROM allot.resource};
TODO:
{
	local $TODO =
	  'the dump leaves the built-in types out, and CREATE EXTENSION creates them all again';
	is($node->safe_psql('types_restored', $types_sql),
		$node->safe_psql('types', $types_sql),
		'a removed built-in resource type stays removed');
}

$node->stop;
done_testing();
