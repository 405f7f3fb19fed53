# A voice is earned (issue 30), with real clients: three of Debian's
# unmodified boinc-client, two accounts, the example front end
# (examples/boinc) over allot, in a network namespace of their own
# (BoincTest.pm).
#
#   A   alice's host;  B1, B2   two of bob's
#
#   quorum    job q1 needs 2 agreeing results of 3 replicas: A and B1 run
#             it; B2, bob's too, is never sent its third replica; the
#             validator (admin.js validate) compares the outputs' MD5s and
#             both are valid; the third replica, not needed, goes; both
#             are credited; their hosts' records count a valid result each
#   invalid   job q2: A's output carries an extra line (the app's
#             --extra-from, a file only A's directory has), which the
#             validator's check refuses: A's result is invalid, gets no
#             credit, and A's consecutive valid results start over; B1's
#             waits for another account's result
#   adaptive  workload 2 replicates the jobs of hosts that are not
#             reliable (allot.reliable_after 2 here): B1's first job is
#             replicated, and A runs the replica; both valid, B1 is
#             reliable, and its next job runs alone
#
# Which client asks when is the test's to say: the clients run with "no
# more work" and are let ask one at a time.  Everything started is stopped
# by its PID, also when the test dies.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use BoincTest qw(slurp wait_for show_log);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $started = time;

# allot, the logins and the app (BoincTest::database); workload 2, of the
# same app, replicates adaptively; a host is reliable after 2 consecutive
# valid results and then runs jobs alone.  The settings are the
# database's, read by the front end's connections as they open.
my $node = BoincTest::database('boinc22');
sub sql { return $node->safe_psql('postgres', $_[0]); }
sql(q{INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound, adaptive_replication)
      VALUES (2, 'lines, checked', 'lines', 1, 1000, '1 day', true)});
sql('ALTER DATABASE postgres SET allot.reliable_after = 2');
sql('ALTER DATABASE postgres SET allot.reliable_alone_probability = 1');

my $work = PostgreSQL::Test::Utils::tempdir('boinc22');
my $bt = BoincTest->new(node => $node, work => $work);
my $fe = $bt->install;
ok(($bt->admin('setup'))[1], 'admin.js setup');
$bt->netns;
my $port = 19000 + int(rand(900));
my $url = $bt->start_server($port, PROJECT_NAME => 'allot project 22', MAX_REQUEST_DELAY => 1);
ok(($bt->admin(qw(add-app-version --app-version-id 1 --version-num 100 --file), "$fe/app/lines"))[1],
	'admin.js add-app-version');
my %key;
for my $who (qw(alice bob))
{
	my ($out, $ok) = $bt->admin('add-account', $who);
	($key{$who}) = $out =~ /^([0-9a-f]{32})$/m;
	ok($ok && $key{$who}, "admin.js add-account $who");
}

# The clients, attached; each holds no work until let.
my %dir = (A => $bt->client('A', attach => $key{alice}, gui_rpc_port => $port + 1000),
	B1 => $bt->client('B1', attach => $key{bob}, gui_rpc_port => $port + 1001),
	B2 => $bt->client('B2', attach => $key{bob}, gui_rpc_port => $port + 1002));
sub cmd { my ($c, @args) = @_; return $bt->boinccmd($dir{$c}, @args); }

# The client's host id, from its state file (0 until it has one).
sub hostid
{
	my ($c) = @_;
	return (slurp("$dir{$c}/client_state.xml") =~ m{<project>.*?<hostid>([0-9]+)</hostid>}s)[0] // 0;
}
# Whether the client has no scheduler request under way: its log's last
# "Sending scheduler request" came before its last completed or failed one.
sub between_requests
{
	my ($c) = @_;
	my @marks = slurp("$dir{$c}.log") =~ /(Sending scheduler request|Scheduler request (?:completed|failed))/g;
	return !@marks || $marks[-1] ne 'Sending scheduler request';
}
# Keep the client asking (an update whenever none is under way) until
# WHEN is true, at most 90 s; its value.
sub nudge
{
	my ($c, $when) = @_;
	return wait_for(90, sub {
		cmd($c, '--project', $url, 'update') if between_requests($c);
		return $when->();
	});
}
# Let the client ask for work until WHEN is true; then no more work.
sub let_ask
{
	my ($c, $when) = @_;
	cmd($c, '--project', $url, 'allowmorework');
	my $v = nudge($c, $when);
	cmd($c, '--project', $url, 'nomorework');
	wait_for(60, sub { between_requests($c) });
	return $v;
}

ok(wait_for(90, sub { hostid('A') && hostid('B1') && hostid('B2') }), 'the three clients have host ids');
my %h = map { ($_ => hostid($_)) } qw(A B1 B2);
for my $c (qw(A B1 B2))
{
	cmd($c, '--project', $url, 'nomorework');
}
ok(wait_for(60, sub { !grep { !between_requests($_) } qw(A B1 B2) }), 'and none asks for work until let');
is(sql("SELECT string_agg(h.id || '=' || o.key, ' ' ORDER BY h.id) FROM allot.host h JOIN allot.owner o ON o.id = h.owner_id"),
	join(' ', map { "$h{$_}=boinc:" . sql("SELECT id FROM boinc.account WHERE name = '" . ($_ eq 'A' ? 'alice' : 'bob') . "'") }
		sort { $h{$a} <=> $h{$b} } qw(A B1 B2)),
	'each host belongs to its account in allot');

# Job q's rows (the job and its replicas): "host:state:validated" by id.
sub group_rows
{
	my ($q) = @_;
	return sql("SELECT string_agg(coalesce(host_id::text, '-') || ':' || state || ':' || coalesce(validated::text, '-'), ' ' ORDER BY id)
                  FROM allot.job WHERE id = $q OR replica_of = $q");
}
# Whether host H has a result of job q reported with this outcome.
sub reported
{
	my ($q, $c, $outcome) = @_;
	return sql("SELECT count(*) FROM boinc.result r JOIN allot.job j ON j.id = r.job_id
                 WHERE (j.id = $q OR j.replica_of = $q) AND r.host_id = $h{$c} AND r.outcome = '$outcome'") > 0;
}
sub submit
{
	my (@args) = @_;
	my ($out) = $bt->admin('submit', @args);
	return ($out =~ /^jobs ([0-9]+)$/m)[0] // die "submit: $out";
}

# ---------------------------------------------------------------------------
# A quorum of 2 among 3 replicas.
my $q1 = submit(qw(--workload 1 --quorum 2 --command-line), '--lines 10');
sql("UPDATE allot.job SET target_nresults = 3 WHERE id = $q1");
ok(let_ask('A', sub { group_rows($q1) =~ /^$h{A}:in_progress/ }), 'A is sent q1');
like(group_rows($q1), qr/^$h{A}:in_progress:- -:unsent:- -:unsent:-$/, 'its first sending made its two replicas');
ok(let_ask('B1', sub { group_rows($q1) =~ /$h{B1}:in_progress/ }), 'B1, bob\'s, is sent a replica');
ok(nudge('A', sub { reported($q1, 'A', 'success') }) && nudge('B1', sub { reported($q1, 'B1', 'success') }),
	'A and B1 run it and report it');
my $mark = length($bt->server_log);
ok(let_ask('B2', sub { substr($bt->server_log, $mark) =~ /\[HOST#$h{B2}\] scheduler request.*asked \{"resources".*sent nothing/ }),
	'B2 asks for work');
like(group_rows($q1), qr/^$h{A}:done:- $h{B1}:done:- -:unsent:-$/,
	'B2, bob\'s too, asks for work and is not sent the third replica');
is(sql("SELECT count(*) FROM allot.job_voice WHERE group_id = $q1"), '2', 'allot.job_voice: two accounts had q1');
my ($out) = $bt->admin('validate');
like($out, qr/valid, digest [0-9a-f]{32}.*valid, digest [0-9a-f]{32}/s, 'admin.js validate finds both valid');
like(group_rows($q1), qr/^$h{A}:done:true $h{B1}:done:true$/, 'the same output, two accounts: q1 is decided; the unneeded replica is gone');
sql("SELECT allot.run_transitioner()");
is(sql("SELECT count(*) FROM allot.job WHERE (id = $q1 OR replica_of = $q1) AND credit > 0"), '2', 'both results are credited');
is(sql("SELECT string_agg(valid_results || '/' || consecutive_valid, ' ' ORDER BY host_id)
          FROM allot.host_reliability WHERE host_id IN ($h{A}, $h{B1})"), '1/1 1/1',
	'each host\'s record counts a valid result');

# ---------------------------------------------------------------------------
# An invalid replica.  A's output of q2 starts with a line of A's own.
PostgreSQL::Test::Utils::append_to_file("$dir{A}/extra.txt", "made up\n");
my $check = "$work/check.sh";
PostgreSQL::Test::Utils::append_to_file($check, "#!/bin/sh\n! grep -q 'made up' \"\$@\" || { echo 'an extra line' >&2; exit 1; }\n");
chmod 0755, $check;
my $q2 = submit(qw(--workload 1 --quorum 2 --command-line), '--lines 10 --extra-from ../../extra.txt');
ok(let_ask('A', sub { group_rows($q2) =~ /^$h{A}:in_progress/ }) && let_ask('B1', sub { group_rows($q2) =~ /$h{B1}:in_progress/ }),
	'A and B1 are sent q2');
ok(nudge('A', sub { reported($q2, 'A', 'success') }) && nudge('B1', sub { reported($q2, 'B1', 'success') }),
	'both report it');
($out) = $bt->admin('validate', '--check', $check);
like($out, qr/invalid: \Q$check\E says no: an extra line/, 'the validator\'s check refuses A\'s output');
is(sql("SELECT outcome FROM boinc.result WHERE job_id IN (SELECT id FROM allot.job WHERE id = $q2 OR replica_of = $q2)
          AND host_id = $h{A}"), 'invalid', 'A\'s result is invalid in the front end');
sql("SELECT allot.run_transitioner()");
is(sql("SELECT count(*) FROM allot.job WHERE (id = $q2 OR replica_of = $q2) AND credit > 0"), '0',
	'no credit: the invalid result gets none, and B1\'s waits for another account');
is(sql("SELECT invalid_results || '/' || consecutive_valid || '/' || (reliable_at IS NULL)
          FROM allot.host_reliability WHERE host_id = $h{A}"), '1/0/true',
	'A loses its consecutive valid results');
is(sql("SELECT verdict::text || '/' || coalesce(validated::text, 'undecided') FROM allot.job
         WHERE (id = $q2 OR replica_of = $q2) AND host_id = $h{B1}"), 'true/undecided',
	'B1\'s result is valid by the validator, the job undecided');
unlink "$dir{A}/extra.txt";

# ---------------------------------------------------------------------------
# Adaptive replication.  B1 has one consecutive valid result: not reliable.
my $a1 = submit(qw(--workload 2 --command-line), '--lines 20');
ok(let_ask('B1', sub { group_rows($a1) =~ /^$h{B1}:in_progress/ }), 'B1 is sent a1, of the adaptive workload');
like(group_rows($a1), qr/^$h{B1}:in_progress:- -:unsent:-$/, 'B1 is not reliable: a1 is replicated');
ok(let_ask('A', sub { group_rows($a1) =~ /$h{A}:in_progress/ }), 'A is sent the replica');
ok(nudge('B1', sub { reported($a1, 'B1', 'success') }) && nudge('A', sub { reported($a1, 'A', 'success') }),
	'both report it');
($out) = $bt->admin('validate');
like(group_rows($a1), qr/^$h{B1}:done:true $h{A}:done:true$/, 'they agree: valid');
is(sql("SELECT consecutive_valid || '/' || (reliable_at IS NOT NULL) FROM allot.host_reliability WHERE host_id = $h{B1}"),
	'2/true', 'B1 has 2 consecutive valid results: reliable');
my $a2 = submit(qw(--workload 2 --command-line), '--lines 30');
ok(let_ask('B1', sub { group_rows($a2) =~ /^$h{B1}:in_progress/ }), 'B1 is sent a2');
like(group_rows($a2), qr/^$h{B1}:in_progress:-$/, 'a reliable host runs it alone: no replica');
is(sql("SELECT min_quorum FROM allot.job WHERE id = $a2"), '1', 'its quorum stays 1');
ok(nudge('B1', sub { reported($a2, 'B1', 'success') }), 'B1 reports it');
$bt->admin('validate');
sql("SELECT allot.run_transitioner()");
is(sql("SELECT credit > 0 FROM allot.job WHERE id = $a2"), 't', 'and is credited on its own word');
is(sql('SELECT count(*) FROM allot.check_invariants()'), '0', 'check_invariants() is empty');

show_log('the front end', "$work/server.log", qr/scheduler request|validate|reported/);
for my $c (qw(A B1 B2)) { is($bt->stop($c), 0, "client $c stops cleanly"); }
note sprintf('%.0f s', time - $started);
done_testing();
