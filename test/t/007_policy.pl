# Farm policy in fresh sessions (issue 10, items 1 and 2): settings made
# before allot's library is loaded in a session, which PostgreSQL keeps as
# placeholders and applies only when the library defines them.  Each case
# opens new sessions through real logins:
#   - the web login (a member of allot_web) SETs allot.daily_quota and
#     allot.max_jobs_per_request before its first call, or passes them as
#     connection options (-c): the values are not applied, and every one of
#     its five functions refuses with F0000, naming the setting, changing
#     nothing; it cannot RESET its way out, nor ALTER ROLE itself;
#   - the operator login (allot_admin) may do the same: applied;
#   - ALTER DATABASE farm SET allot.fairness = 'rcent' (a bad value) or
#     allot.fairnes (a misspelt name), and a bad value in postgresql.conf
#     after a reload: every new session, of every role, refuses at every
#     entry point, until the setting is fixed; then the written policy runs;
#   - a superuser's own bad SET before loading is refused until it sets the
#     setting again in its session;
#   - ALTER DATABASE ... SET by the database's owner, an operator: web
#     sessions run with it.
# "Nothing changed" compares every row of every allot table
# (test/pgtap/lib/state.sql) before and after.
use strict;
use warnings;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $state_sql = "$FindBin::RealBin/../pgtap/lib/state.sql";
-e $state_sql or die "missing $state_sql";

my $node = PostgreSQL::Test::Cluster->new('policy');
$node->init;
$node->start;
my $superuser = $node->safe_psql('postgres', 'SELECT current_user');

# The farm, in database farm, owned by the operator login.
$node->safe_psql('postgres', 'CREATE EXTENSION allot');    # creates the group roles
$node->safe_psql(
	'postgres', q{
CREATE ROLE web LOGIN IN ROLE allot_web;
CREATE ROLE operator LOGIN IN ROLE allot_admin;
CREATE DATABASE farm OWNER operator;
});
$node->safe_psql(
	'farm', q{
CREATE EXTENSION allot;
INSERT INTO allot.app (id, name) VALUES (1, 'crunch');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, engine, app_id, delay_bound) VALUES (1, 'crunch', 1, '3 days');
INSERT INTO allot.workload (id, engine, throughput) VALUES (2, 'SF', 1000);
INSERT INTO allot.job (workload_id) SELECT 1 FROM generate_series(1, 50);
INSERT INTO allot.host (id, os, threads, cpu_flops) VALUES (1, 'Linux', 8, 1e9), (2, 'Linux', 8, 1e9);
SELECT allot.request_work(2, '{"resources": {"cpu": {"req_instances": 1}}}');
});
my $held = $node->safe_psql('farm',
	"SELECT id FROM allot.job WHERE host_id = 2 AND state = 'in_progress'");

# One session of `user` (with connection `options`), running `sql` after
# \set VERBOSITY verbose, going on after errors; returns (stdout, stderr).
sub session
{
	my ($user, $sql, $options) = @_;
	my $connstr = $node->connstr('farm') . " user=$user";
	$connstr .= " options='$options'" if defined $options;
	my ($out, $err);
	$node->psql(
		'farm', "\\set VERBOSITY verbose\n$sql",
		connstr => $connstr,
		stdout => \$out,
		stderr => \$err,
		on_error_stop => 0);
	return ($out, $err);
}

# The five functions of the web role, one statement each.
my $web_calls = qq{
SELECT allot.request_work(1, '{"resources": {"cpu": {"req_instances": 100000}}}');
SELECT * FROM allot.assign_workload(1);
SELECT allot.heartbeat(1);
SELECT allot.release_assignment(1);
SELECT allot.report_job(2, $held, 'success', 1, 3600);
};

# Every allot table's rows, as text (one md5).  state.sql's snapshot and
# unchanged() are for pgTAP (not installed here): left unchecked, unused.
sub farm_state
{
	return $node->safe_psql('farm',
		"SET check_function_bodies = off;\nBEGIN;\n\\i $state_sql\nSELECT md5(pg_temp.allot_state());\nCOMMIT;");
}

sub count_matches
{
	my ($text, $re) = @_;
	my $n = () = $text =~ /$re/g;
	return $n;
}

my $before = farm_state();

# ---------------------------------------------------------------------------
# The web login's SETs before its first call (the issue's attack).
my ($out, $err) = session('web', qq{
SET allot.daily_quota = 1000000;
SET allot.max_jobs_per_request = 100000;
$web_calls
RESET allot.daily_quota;
SELECT allot.heartbeat(1);
});
is(count_matches($err, qr/ERROR:  F0000: allot's settings are not in force: allot\.daily_quota = "1000000" \(from SET in this session\) was set by a role that may not change allot's policy/),
	6,
	'web, SET before loading: all five functions refuse (F0000), naming the setting, its value and where it was set');
like($err, qr/ERROR:  42501: permission denied to set parameter "allot\.daily_quota"/,
	'web: it cannot RESET the setting either, and the next call is refused too');
is(farm_state(), $before, 'web, SET before loading: nothing changed');

# The same as connection options.
($out, $err) = session('web', $web_calls,
	'-c allot.daily_quota=1000000 -c allot.max_jobs_per_request=100000');
is(count_matches($err, qr/ERROR:  F0000: allot's settings are not in force: allot\.daily_quota = "1000000" \(from the connection's options\)/),
	5, 'web, -c connection options: all five functions refuse (F0000), naming the option');
is(farm_state(), $before, 'web, connection options: nothing changed');

($out, $err) = session('web', 'ALTER ROLE CURRENT_USER SET allot.daily_quota = 1000000;');
like($err, qr/ERROR:  42501: permission denied to set parameter "allot\.daily_quota"/,
	'web: ALTER ROLE CURRENT_USER SET allot.daily_quota is refused');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_db_role_setting'),
	'0', 'no role or database setting was stored');

# A fresh web session without any of that works, with the operator's quota.
my $unsent = $node->safe_psql('farm', "SELECT count(*) FROM allot.job WHERE state = 'unsent'");
($out, $err) = session('web', q{
SELECT jsonb_array_length(allot.request_work(1, '{"resources": {"cpu": {"req_secs": 1e9}}}') -> 'jobs');
});
is($out, $unsent, "web, a clean session: request_work works (all $unsent unsent jobs, within the daily quota)");
is($node->safe_psql('farm', 'SELECT quota FROM allot.host_app_version WHERE host_id = 1'),
	'100', 'web: the quota stored is the default 100');
$node->safe_psql('farm',
	"UPDATE allot.job SET state = 'unsent', host_id = NULL, app_version_id = NULL, sent_at = NULL,"
	  . " deadline = NULL, est_secs = NULL, peak_flops_per_sec = NULL WHERE host_id = 1;"
	  . " DELETE FROM allot.host_app_version WHERE host_id = 1;"
	  . " DELETE FROM allot.host_resource WHERE host_id = 1;");
$before = farm_state();

# ---------------------------------------------------------------------------
# The operator login may set policy before loading: applied.
($out, $err) = session('operator', q{
SET allot.fairness = recent;
SELECT allot.heartbeat(1);
SHOW allot.fairness;
});
is($out, "f\nrecent", 'operator, SET before loading: applied, and the functions work');
is($err, '', 'operator: no warning, no error');

# ---------------------------------------------------------------------------
# A bad value, then a misspelt name, written for the whole database.
$before = farm_state();
for my $case (
	[ q{allot.fairness = 'rcent'}, qr/allot\.fairness = "rcent" \(from ALTER DATABASE \.\.\. SET\) is not a valid value/ ],
	[ q{allot.fairnes = 'recent'}, qr/allot\.fairnes = "recent" \(from ALTER DATABASE \.\.\. SET\) is not a setting of allot/ ])
{
	my ($setting, $problem) = @$case;
	$node->safe_psql('postgres', "ALTER DATABASE farm SET $setting");
	($out, $err) = session('web', $web_calls);
	is(count_matches($err, qr/ERROR:  F0000: allot's settings are not in force: $problem/),
		5, "ALTER DATABASE farm SET $setting: the web login's five functions refuse (F0000), naming it");
	($out, $err) = session('operator', q{
SELECT allot.run_transitioner();
SELECT * FROM allot.assign_workload(1, '2030-01-01');
SELECT * FROM allot.host_queue(1, 0, 3600);
SELECT * FROM allot.estimate_job(1, 1);
});
	is(count_matches($err, qr/ERROR:  F0000: allot's settings are not in force: $problem/),
		4, "ALTER DATABASE farm SET $setting: so do the operator's");
	($out, $err) = session($superuser, q{SELECT allot.request_work(1, '{"resources": {"cpu": {"req_instances": 1}}}');});
	like($err, qr/ERROR:  F0000: allot's settings are not in force: $problem/,
		"ALTER DATABASE farm SET $setting: and a superuser's");
	is(farm_state(), $before, "ALTER DATABASE farm SET $setting: nothing changed");
	$node->safe_psql('postgres', 'ALTER DATABASE farm RESET ALL');
}

# The operator, who owns the database, writes the policy down: web
# sessions run with it.
($out, $err) = session('operator', 'ALTER DATABASE farm SET allot.fairness = recent;');
is($err, '', 'operator: ALTER DATABASE farm SET allot.fairness = recent');
($out, $err) = session('web', q{
SELECT (allot.assign_workload(1)).workload_id;
SHOW allot.fairness;
});
is($out, "2\nrecent", 'web: its sessions run with the operator\'s fairness = recent');
is($node->safe_psql('farm', "SELECT count(*) FROM allot.workload_credit WHERE workload_id = 2"),
	'1', 'web: its assignment was credited, as under recent');
$node->safe_psql('postgres', 'ALTER DATABASE farm RESET ALL');
$node->safe_psql('farm', 'DELETE FROM allot.assignment; DELETE FROM allot.workload_credit');

# ---------------------------------------------------------------------------
# A superuser's own bad SET before loading refuses until set again.
($out, $err) = session($superuser, q{
SET allot.fairness = 'rcent';
SELECT allot.heartbeat(1);
SET allot.fairness = recent;
SELECT allot.heartbeat(1);
});
like($err, qr/ERROR:  F0000: allot's settings are not in force: allot\.fairness = "rcent" \(from SET in this session\) is not a valid value/,
	'superuser, a bad SET before loading: refused (F0000)');
is($out, 'f', '... until the session sets it again');

# ---------------------------------------------------------------------------
# postgresql.conf: a bad value, then the fix, each with a reload.
$before = farm_state();
$node->append_conf('postgresql.conf', "allot.fairness = 'rcent'");
$node->reload;
($out, $err) = session('web', $web_calls);
is(count_matches($err, qr/ERROR:  F0000: allot's settings are not in force: allot\.fairness = "rcent" \(from postgresql\.conf\) is not a valid value/),
	5, 'postgresql.conf allot.fairness = \'rcent\': every new web session refuses (F0000), naming it');
is(farm_state(), $before, 'postgresql.conf: nothing changed');
$node->adjust_conf('postgresql.conf', 'allot.fairness', "'recent'");
$node->reload;
($out, $err) = session('web', q{
SELECT allot.heartbeat(1);
SHOW allot.fairness;
});
is("$out|$err", "f\nrecent|", 'postgresql.conf fixed and reloaded: the written policy runs');

$node->stop;
done_testing();
