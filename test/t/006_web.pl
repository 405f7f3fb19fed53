# examples/web, the Node web layer, against a real cluster through real HTTP.
#
# The test installs the web layer's packages from its package-lock.json
# (`npm ci`, into a temp dir: the source tree is not written), starts
# `node server.js` connected as a login role that is a member of allot_web,
# and sends HTTP requests (HTTP::Tiny) to every endpoint:
#   - a workload is assigned, with its concurrency settings; `exclude` steers
#     it; excluding everything answers {"workload": null} and releases it;
#     heartbeat and release say whether the host held an assignment;
#   - jobs are requested, reported (success, repeat, conflicting repeat,
#     abort) and every reply matches what allot wrote;
#   - bad input is refused with the right HTTP status and SQLSTATE, both what
#     the web layer checks (host ids, JSON, body size) and what allot checks
#     (unknown host or job, job of another host, unknown resource...), and a
#     refused request leaves every allot table as it was;
#   - the web role can run the dispatch functions but cannot read or write
#     allot's tables or run the operator's functions (42501);
#   - while the database is down the server answers 503, and recovers;
#   - SIGTERM: the server stops accepting connections, finishes the request in
#     flight (held on a row lock), and exits 0.
# The server is killed at the end, also when the test dies.
use strict;
use warnings;
use File::Copy qw(copy);
use HTTP::Tiny;
use JSON::PP;
use List::Util qw(max);
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

# The body limit the server is started with; the tests go just under, at
# and just over it.
my $MAX_BODY = 4096;

my $node = PostgreSQL::Test::Cluster->new('web');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION allot');
my $version = $node->safe_psql('postgres',
	"SELECT extversion FROM pg_extension WHERE extname = 'allot'");

# ---------------------------------------------------------------------------
# The farm.  Two assignment workloads with different concurrency shapes (so a
# reply's settings show which workload they belong to), one job workload of
# ten jobs with a one-CPU version, and three hosts.
$node->safe_psql(
	'postgres', q{
INSERT INTO allot.workload (id, name, engine, throughput, dev_threads, base_threads, workload_size)
VALUES (1, 'SF: two threads', 'Stockfish', 1000, 2, 2, 16),
       (2, 'SF: one thread', 'Stockfish', 1000, 1, 1, 32);
INSERT INTO allot.app (id, name) VALUES (1, 'folding');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound)
VALUES (3, 'folding', 'folding', 1, 1000, '3 days');
INSERT INTO allot.job (id, workload_id) SELECT g, 3 FROM generate_series(1, 10) g;
INSERT INTO allot.host (id, name, os, threads, sockets, cpu_flops)
VALUES (1, 'tester', 'Linux', 16, 2, NULL),
       (2, 'cruncher', 'Linux', 4, 1, 4e9),
       (3, 'other', 'Linux', 4, 1, 4e9);
});

# ---------------------------------------------------------------------------
# The web role.  The extension creates the NOLOGIN role allot_web, which may
# run the five request functions and nothing else (README "Privileges"); the
# web layer logs in as a member of it.
$node->safe_psql('postgres', 'CREATE ROLE web LOGIN IN ROLE allot_web');
is( $node->safe_psql(
		'postgres', q{
SELECT w.rolsuper, w.rolcanlogin, a.rolcanlogin, pg_has_role('web', 'allot_web', 'MEMBER')
  FROM pg_roles w, pg_roles a WHERE w.rolname = 'web' AND a.rolname = 'allot_web'}),
	'f|t|f|t',
	"web logs in, is no superuser, and is a member of allot $version's NOLOGIN role allot_web"
);

# ---------------------------------------------------------------------------
# Install the web layer: its files into a temp dir, and its packages with
# `npm ci` from the committed lock file, or, when the tree already has a
# node_modules (a machine without the npm registry), that one.
my $src = "$ENV{TESTDIR}/../examples/web";
my $webdir = PostgreSQL::Test::Utils::tempdir('web');
for my $f ('package.json', 'package-lock.json', 'server.js', 'app.js', 'status.js', 'status_render.js')
{
	copy("$src/$f", "$webdir/$f") or die "copy $src/$f: $!";
}
if (-d "$src/node_modules")
{
	symlink("$src/node_modules", "$webdir/node_modules") or die "symlink: $!";
	note "using the node_modules of $src";
}
else
{
	ok( run_log(
			[ 'npm', 'ci', '--no-audit', '--no-fund' ],
			init => sub { chdir $webdir or die "chdir $webdir: $!" }),
		'npm ci installs the packages of package-lock.json');
}

# ---------------------------------------------------------------------------
# Start the server, connected through the node's socket as role web.
my $port = $ENV{ALLOT_WEB_TEST_PORT} // PostgreSQL::Test::Cluster::get_free_port();
my $base = "http://127.0.0.1:$port";
my $server_log = "$PostgreSQL::Test::Utils::log_path/006_web_server.log";
my $server_pid;

END
{
	# also when the test dies: never leave the server running
	if ($server_pid)
	{
		local $?;    # keep the test's exit status
		kill 'KILL', $server_pid;
		waitpid $server_pid, 0;
	}
}

$server_pid = fork() // die "fork: $!";
if ($server_pid == 0)
{
	delete @ENV{qw(PGHOSTADDR PGSERVICE PGSERVICEFILE PGPASSWORD PGOPTIONS PGAPPNAME)};
	@ENV{qw(PORT HOST MAX_BODY_BYTES PGHOST PGPORT PGUSER PGDATABASE)} =
	  ($port, '127.0.0.1', $MAX_BODY, $node->host, $node->port, 'web', 'postgres');
	open STDOUT, '>>', $server_log or POSIX::_exit(126);
	open STDERR, '>&', \*STDOUT or POSIX::_exit(126);
	chdir $webdir or POSIX::_exit(126);
	exec 'node', 'server.js' or POSIX::_exit(127);
}

my $http = HTTP::Tiny->new(timeout => 20);
{
	my $deadline = time + 30;
	my $status = 599;    # HTTP::Tiny's own "could not connect"
	while ($status == 599 && time < $deadline)
	{
		if (waitpid($server_pid, POSIX::WNOHANG) == $server_pid)
		{
			$server_pid = undef;
			die "the server exited (status $?); see $server_log";
		}
		sleep 0.1;
		$status = $http->get("$base/")->{status};
	}
	is($status, 404, "the server answers on port $port (GET / is no endpoint)")
	  or die "the server does not answer; see $server_log";
}

# post(PATH, BODY): BODY is a Perl structure sent as JSON, or raw bytes.
# Returns the status, the decoded reply (undef if not JSON) and the response.
sub post
{
	my ($path, $body) = @_;
	my $res = $http->post(
		"$base$path",
		{
			content => ref $body ? encode_json($body) : $body,
			headers => { 'Content-Type' => 'application/json' }
		});
	my $json = eval { decode_json($res->{content}) };
	return ($res->{status}, $json, $res);
}

# refused(PATH, BODY, STATUS, SQLSTATE, MESSAGE_RE, NAME): the request gets
# STATUS and {"error": ~MESSAGE_RE, "sqlstate": SQLSTATE or null}.
sub refused
{
	my ($path, $body, $status, $sqlstate, $message, $name) = @_;
	my ($got, $json) = post($path, $body);
	is( sprintf('%s %s', $got, $json ? $json->{sqlstate} // 'null' : 'no JSON body'),
		"$status $sqlstate", "$name: $status, sqlstate $sqlstate");
	like($json ? $json->{error} : '', $message, "$name: the message says why");
	return;
}

sub sql { return $node->safe_psql('postgres', $_[0]); }

# ---------------------------------------------------------------------------
# OpenBench-style assignment.

# Concurrency settings of a workload on a host (README "Concurrency settings";
# no SPSA and no core odds in this farm): T threads, S sockets (1 when M > 1),
# M the larger of the thread counts.
sub expected_settings
{
	my ($workload_id, $host_id) = @_;
	my ($dev, $base_t, $size) = split /\|/,
	  sql("SELECT dev_threads, base_threads, workload_size FROM allot.workload WHERE id = $workload_id");
	my ($t, $sockets) = split /\|/, sql("SELECT threads, sockets FROM allot.host WHERE id = $host_id");
	my $m = max($dev, $base_t);
	my $s = $m > 1 ? 1 : $sockets;
	my $per = int(int($t / $s) / $m);
	return {
		workload_id => $workload_id,
		cutechess_count => $s,
		concurrency_per => $per,
		games_per_cutechess => 2 * $size * $per
	};
}

# The reply's workload without its two flags, and the flags as
# "focus_assigned|repeated" in t/f.
sub settings_of
{
	my %w = %{ $_[0] };
	my $flags = join '|', map { $w{$_} ? 't' : 'f' } qw(focus_assigned repeated);
	delete @w{qw(focus_assigned repeated)};
	return (\%w, $flags);
}

my ($status, $reply) = post('/api/workload', { host_id => 1 });
is($status, 200, 'POST /api/workload: 200');
my $first = $reply->{workload}{workload_id} // 0;
ok($first == 1 || $first == 2, "host 1 is assigned workload 1 or 2 (a throughput-weighted draw), got $first");
my ($settings, $flags) = settings_of($reply->{workload});
is_deeply($settings, expected_settings($first, 1), 'the reply carries that workload\'s concurrency settings');
is($flags, 'f|f', 'a first assignment is neither focus-assigned nor a repeat');
is(sql('SELECT workload_id FROM allot.assignment WHERE host_id = 1'),
	$first, 'allot.assignment records the workload the reply names');

my $other = 3 - $first;
($status, $reply) = post('/api/workload', { host_id => 1, exclude => [$first] });
is($status, 200, 'POST /api/workload with exclude: 200');
($settings) = settings_of($reply->{workload} // {});
is_deeply($settings, expected_settings($other, 1),
	"excluding workload $first gives workload $other, with its own settings");
is(sql('SELECT workload_id FROM allot.assignment WHERE host_id = 1'), $other, 'and the assignment moved');

($status, $reply) = post('/api/heartbeat', { host_id => 1 });
is_deeply([ $status, $reply ], [ 200, { assigned => JSON::PP::true } ],
	'POST /api/heartbeat of an assigned host: {"assigned": true}');

# Ids may also come as strings of digits (for ids beyond 2^53).
($status, $reply) = post('/api/workload', { host_id => 1, exclude => [ 1, '2' ] });
is_deeply([ $status, $reply ], [ 200, { workload => undef } ],
	'excluding both workloads: 200 {"workload": null}');
is(sql('SELECT count(*) FROM allot.assignment WHERE host_id = 1'),
	'0', 'and the host holds no assignment any more');
($status, $reply) = post('/api/heartbeat', { host_id => 1 });
is_deeply([ $status, $reply ], [ 200, { assigned => JSON::PP::false } ],
	'POST /api/heartbeat of a host without assignment: {"assigned": false}');

($status, $reply) = post('/api/workload', { host_id => 1 });
is_deeply([ $status, sql('SELECT count(*) FROM allot.assignment WHERE host_id = 1') ],
	[ 200, 1 ], 'host 1 asks again and is assigned');
($status, $reply) = post('/api/release', { host_id => 1 });
is_deeply([ $status, $reply ], [ 200, { released => JSON::PP::true } ],
	'POST /api/release: {"released": true}');
is(sql('SELECT count(*) FROM allot.assignment WHERE host_id = 1'), '0', 'and its assignment is gone');
($status, $reply) = post('/api/release', { host_id => 1 });
is_deeply([ $status, $reply ], [ 200, { released => JSON::PP::false } ],
	'releasing again: {"released": false}');

# ---------------------------------------------------------------------------
# BOINC-style dispatch and reports.

($status, $reply) =
  post('/api/request_work', { host_id => 2, request => { resources => { cpu => { req_instances => 2 } } } });
is($status, 200, 'POST /api/request_work: 200');
my @jobs = sort { $a <=> $b } map { $_->{job_id} } @{ $reply->{jobs} // [] };
# two instances asked for, one CPU per job, ten unsent jobs: exactly two jobs
is(scalar @jobs, 2, 'two CPU instances asked for: two one-CPU jobs sent');
is(join(',', @jobs),
	sql("SELECT string_agg(id::text, ',' ORDER BY id) FROM allot.job WHERE state = 'in_progress' AND host_id = 2"),
	'the jobs sent are the ones allot.job has in progress on host 2');
is_deeply(
	[ map { "$_->{workload_id}|$_->{resource}|$_->{ncpus}" } @{ $reply->{jobs} } ],
	[ '3|cpu|1', '3|cpu|1' ],
	'each job names its workload, resource and CPUs');
is($reply->{resources}{cpu}{status}, 'work', 'the reply says the CPU got work');
my ($job_a, $job_b) = @jobs;

# A report by a host the job was not sent to; checked before the real
# reports, while the job is still in progress on host 2.
refused('/api/report', { host_id => 3, job_id => 0 + $job_a, outcome => 'success' },
	403, '42501', qr/^job $job_a was not sent to host 3$/, 'a report of another host\'s job');

my %success = (host_id => 2, job_id => 0 + $job_a, outcome => 'success',
	app_units => 1, elapsed_secs => 3000, raw_flops_per_sec => 4e9);
($status, $reply) = post('/api/report', \%success);
is($status, 200, 'POST /api/report (success): 200');
is_deeply(
	[ @{$reply}{qw(job_id outcome state)} ],
	[ $job_a, 'success', 'done' ],
	'the reply says the job is done');
is_deeply($reply,
	decode_json(sql("SELECT reply FROM allot.job_report WHERE job_id = $job_a")),
	'the reply is the one allot.job_report keeps');
is( sql("SELECT j.state, r.outcome, r.app_units, r.elapsed_secs, r.raw_flops_per_sec
           FROM allot.job j JOIN allot.job_report r ON r.job_id = j.id WHERE j.id = $job_a"),
	'done|success|1|3000|4000000000',
	'allot.job and allot.job_report hold the reported figures');

my ($again_status, $again) = post('/api/report', \%success);
is_deeply([ $again_status, $again ], [ 200, $reply ], 'the same report again: 200 and the same reply');

($status, $reply) = post('/api/report', { host_id => 2, job_id => "$job_b", outcome => 'aborted' });
is_deeply(
	[ $status, @{$reply}{qw(job_id state)} ],
	[ 200, $job_b, 'unsent' ],
	'an abort with no figures (report_job\'s defaults): the job goes back to unsent');
is(sql("SELECT state, host_id IS NULL FROM allot.job WHERE id = $job_b"), 'unsent|t',
	'allot.job agrees');

# ---------------------------------------------------------------------------
# Refusals.  None of them may change anything.
my $tables = q{
SELECT md5(string_agg(t, ';' ORDER BY t)) FROM (
    SELECT 'job ' || j::text AS t FROM allot.job j
    UNION ALL SELECT 'report ' || r::text FROM allot.job_report r
    UNION ALL SELECT 'assignment ' || a::text FROM allot.assignment a
    UNION ALL SELECT 'host ' || h::text FROM allot.host h
    UNION ALL SELECT 'quota ' || q::text FROM allot.host_app_version q) s};
my $before = sql($tables);

# What allot refuses, mapped by SQLSTATE.
refused('/api/heartbeat', { host_id => 424242 }, 404, 'P0002', qr/^host 424242 does not exist$/,
	'an unknown host');
refused('/api/workload', { host_id => '9223372036854775807' }, 404, 'P0002',
	qr/^host 9223372036854775807 does not exist$/, 'the largest bigint, as a string, reaches allot');
refused('/api/request_work', { host_id => 424242, request => {} }, 404, 'P0002',
	qr/^host 424242 does not exist$/, 'request_work for an unknown host');
refused('/api/report', { host_id => 2, job_id => 424242, outcome => 'success' }, 404, 'P0002',
	qr/^job 424242 does not exist$/, 'a report of an unknown job');
refused('/api/report', { %success, elapsed_secs => 3001 }, 409, '55000',
	qr/^job $job_a was already reported by host 2 with a different result$/,
	'a repeated report with different figures');
refused('/api/report', { host_id => 2, job_id => 0 + $job_b, outcome => 'success' }, 409, '55000',
	qr/^job $job_b was already reported by host 2 with a different result$/,
	'a success after the host\'s own abort of the job');
my $never_sent = sql(q{SELECT min(id) FROM allot.job j
                        WHERE NOT EXISTS (SELECT FROM allot.job_report r WHERE r.job_id = j.id)
                          AND state = 'unsent'});
refused('/api/report', { host_id => 2, job_id => 0 + $never_sent, outcome => 'success' }, 409, '55000',
	qr/^job $never_sent is not in progress on host 2$/, 'a report of a job never sent');
refused('/api/report', { host_id => 2, job_id => 0 + $job_a, outcome => 'won' }, 400, '22023',
	qr/^unknown outcome "won"$/, 'an unknown outcome');
refused('/api/request_work', { host_id => 2, request => { resources => { gpu => { req_instances => 1 } } } },
	400, '22023', qr/^unknown resource "gpu" in request\.resources$/, 'an unknown resource');

# What the web layer refuses before calling allot.
for my $bad ([ 0, '0' ], [ -1, '-1' ], [ 1.5, '1.5' ], [ 'abc', '"abc"' ], [ '01', '"01"' ],
	[ '9223372036854775808', '"9223372036854775808"' ], [ undef, 'null' ])
{
	my ($value, $shown) = @$bad;
	refused('/api/workload', { host_id => $value }, 400, '22023',
		qr/^host_id must be a positive integer, not \Q$shown\E$/, "host_id $shown");
}
refused('/api/heartbeat', '{"host_id": 9007199254740993}', 400, '22023',
	qr/^host_id must be a positive integer/, 'a host_id beyond 2^53 as a JSON number (JSON.parse rounds it)');
refused('/api/heartbeat', '{}', 400, '22023', qr/^host_id must be a positive integer, not missing$/,
	'no host_id');
refused('/api/workload', { host_id => 1, exclude => [ 1, 'x' ] }, 400, '22023',
	qr/^exclude\[1\] must be a positive integer, not "x"$/, 'an exclude list with a non-id');
refused('/api/workload', { host_id => 1, exclude => 7 }, 400, '22023',
	qr/^exclude must be an array of workload ids, not 7$/, 'an exclude that is no list');
refused('/api/request_work', { host_id => 2, request => [] }, 400, '22023',
	qr/^request must be a JSON object, not \[\]$/, 'a request that is no object');
refused('/api/report', { host_id => 2, job_id => 0 + $job_a, outcome => 'success', app_units => '1' },
	400, '22023', qr/^app_units must be a number, not "1"$/, 'app_units as a string');
refused('/api/report', '{"host_id": 2, "job_id": 1', 400, '22P02', qr/^malformed JSON/, 'truncated JSON');
refused('/api/report', '', 400, '22P02', qr/^malformed JSON/, 'an empty body');
refused('/api/heartbeat', qq({"host_id": 1, "x": "\xff"}), 400, '22P02', qr/^malformed JSON/,
	'a body that is not UTF-8');
refused('/api/heartbeat', '[1]', 400, '22023', qr/^the request body must be a JSON object$/,
	'a JSON array as the body');
refused('/api/heartbeat', '{"host_id": 1}' . (' ' x ($MAX_BODY - 13)), 413, '54000',
	qr/^request body is larger than $MAX_BODY bytes$/, "a body of $MAX_BODY + 1 bytes");
refused('/api/heartbeat', ' ' x (1 << 20), 413, '54000', qr/larger than $MAX_BODY bytes/,
	'a body of 1 MiB (read to its end, then refused)');
refused('/api/nothing', {}, 404, 'null', qr{^no endpoint "/api/nothing"$}, 'an unknown path');

{
	my $res = $http->get("$base/api/workload");
	is_deeply([ $res->{status}, $res->{headers}{allow} ], [ 405, 'POST' ],
		'GET /api/workload: 405, Allow: POST');
}

is(sql($tables), $before, 'no refused request changed a row of allot\'s tables');

# A body of exactly the limit is taken.
($status, $reply) = post('/api/heartbeat', '{"host_id": 1}' . (' ' x ($MAX_BODY - 14)));
is($status, 200, "a body of exactly $MAX_BODY bytes is accepted");

# ---------------------------------------------------------------------------
# The web role: it dispatches through allot's request functions and nothing
# else (the operator's functions belong to allot_admin).

is(sql(q{SELECT string_agg(DISTINCT usename, ',') FROM pg_stat_activity WHERE application_name = 'allot-web'}),
	'web', 'the server\'s connections are logged in as web');

# as_web(SQL): the psql exit code and the SQLSTATE of its error, if any
sub as_web
{
	my ($query) = @_;
	my ($out, $err) = ('', '');
	my $rc = $node->psql('postgres', $query, stdout => \$out, stderr => \$err,
		extra_params => [ '-U', 'web', '-v', 'VERBOSITY=verbose' ]);
	my ($sqlstate) = $err =~ /ERROR:  ([0-9A-Z]{5}):/;
	return "$rc " . ($sqlstate // 'none');
}

is(as_web('SELECT allot.heartbeat(2)'), '0 none', 'as web, SELECT allot.heartbeat(2) works');
for my $query (
	'SELECT * FROM allot.job',
	'SELECT * FROM allot.host',
	q{UPDATE allot.job SET state = 'unsent'},
	'INSERT INTO allot.host (threads) VALUES (1)',
	'DELETE FROM allot.job_report',
	'SELECT allot.run_transitioner()',
	'SELECT allot.validate_job(1, true)',
	'SELECT * FROM allot.explain_assignment(1)',
	'SELECT * FROM allot.check_invariants()')
{
	is(as_web($query), '3 42501', "as web, $query fails with 42501");
}

# ---------------------------------------------------------------------------
# The database goes away and comes back: 503 meanwhile, and the server keeps
# running and recovers without a restart.
$node->stop('fast');
refused('/api/heartbeat', { host_id => 1 }, 503, 'null', qr/^the database is unavailable$/,
	'the database is down');
$node->start;
($status, $reply) = post('/api/heartbeat', { host_id => 1 });
is($status, 200, 'the database is back: the same request gets 200');

# ---------------------------------------------------------------------------
# Graceful shutdown.  A heartbeat of host 1 waits for host 1's lock, held by
# another session's open heartbeat; SIGTERM arrives while it is in flight.

my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN; SELECT allot.heartbeat(1);');

my $inflight_file = "$webdir/inflight";
my $child = fork() // die "fork: $!";
if ($child == 0)
{
	my $res = HTTP::Tiny->new(timeout => 60)->post(
		"$base/api/heartbeat",
		{
			content => '{"host_id": 1}',
			headers => { 'Content-Type' => 'application/json' }
		});
	if (open my $fh, '>', $inflight_file)
	{
		print $fh join ' ', $res->{status}, $res->{headers}{connection} // 'none', $res->{content};
		close $fh;
	}
	POSIX::_exit(0);    # no END blocks: they belong to the parent
}
{
	# until the request waits, or its process has ended (then it never will)
	my $deadline = time + 30;
	my $waiting = 0;
	while (!$waiting && time < $deadline && waitpid($child, POSIX::WNOHANG) == 0)
	{
		$waiting = sql(q{SELECT count(*) > 0 FROM pg_stat_activity
                          WHERE usename = 'web' AND wait_event_type = 'Lock'}) eq 't';
		sleep 0.05 unless $waiting;
	}
	ok($waiting, 'the heartbeat waits for the host\'s lock') or die 'no request in flight';
}

kill 'TERM', $server_pid;
{
	# HTTP::Tiny says 599 when it cannot connect
	my $fresh = HTTP::Tiny->new(timeout => 5, keep_alive => 0);
	my $deadline = time + 10;
	my $status = 0;
	while (time < $deadline && ($status = $fresh->get("$base/")->{status}) != 599)
	{
		sleep 0.1;
	}
	is($status, 599, 'after SIGTERM the server accepts no new connection');
}
is(waitpid($server_pid, POSIX::WNOHANG), 0, 'but it keeps running while a request is in flight');

$locker->query_safe('COMMIT');
$locker->quit;
waitpid $child, 0;
is(slurp_file_or_empty($inflight_file), qq(200 close {"assigned":false}\n),
	'the request in flight is answered: 200 {"assigned": false}, with Connection: close');

{
	my $deadline = time + 15;
	my $reaped = 0;
	while (time < $deadline && ($reaped = waitpid($server_pid, POSIX::WNOHANG)) == 0)
	{
		sleep 0.1;
	}
	is($reaped == $server_pid ? $? >> 8 : 'still running', 0, 'then the server exits with status 0');
	$server_pid = undef if $reaped == $server_pid;
}
like(slurp_file($server_log), qr/SIGTERM: no new connections[^\n]*\n.*\bstopped\n\z/s,
	'its log says it finished and stopped');

is(sql('SELECT * FROM allot.check_invariants()'), '', 'check_invariants() is empty');

sub slurp_file_or_empty { return -e $_[0] ? slurp_file($_[0]) : ''; }

$node->stop;
done_testing();
