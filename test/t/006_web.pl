# examples/web, the Node web layer, against a real cluster through real HTTP.
#
# The test installs the front ends' packages from examples/package-lock.json
# (`npm ci`, into a temp dir: the source tree is not written), starts
# `node server.js` connected as a login role that is a member of allot_web,
# and sends HTTP requests (HTTP::Tiny) to every endpoint, each with the key
# the operator issued to its host (examples/web/host-key.js):
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
#   - host keys: setup.sql creates the web layer's own table, host-key.js
#     issues a key printed once and stores only its scrypt hash; every
#     endpoint refuses a missing, malformed, wrong, revoked or other host's
#     key, and an unknown host, with 401 and a WWW-Authenticate challenge, and
#     changes nothing; a host can neither take nor report another's work; a
#     re-issued or revoked key stops working at once, also when the server
#     has it cached; the cache is bounded; the web role reads the hashes and
#     cannot change them.  (That an unknown host costs what a wrong key costs
#     is a property of auth.js's structure, reviewed, not timed here.)
#   - while the database is down the server answers 503, and recovers;
#   - SIGTERM: the server stops accepting connections, finishes the request in
#     flight (held on a row lock), and exits 0.
# The server is killed at the end, also when the test dies.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib $FindBin::RealBin;
use FrontEnds qw(install_front_ends);
use HTTP::Tiny;
use IPC::Run ();
use JSON::PP;
use List::Util qw(max);
use MIME::Base64 qw(encode_base64url);
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

# The body limit the server is started with; the tests go just under, at
# and just over it.
my $MAX_BODY = 4096;
# The server remembers this many verified keys: small, so that three hosts
# take turns in it.
my $AUTH_CACHE = 2;

my $node = PostgreSQL::Test::Cluster->new('web');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION allot');
# A host whose job fails is backed off for a minute by default (allot.error_backoff);
# these hosts ask again at once and must be served.
$node->safe_psql('postgres', 'ALTER DATABASE postgres SET allot.error_backoff = 0');
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
# run the five request functions and nothing else (docs/privileges.md); the
# web layer logs in as a member of it.
$node->safe_psql('postgres', 'CREATE ROLE web LOGIN IN ROLE allot_web');
is( $node->safe_psql(
		'postgres', q{
SELECT w.rolsuper, w.rolcanlogin, a.rolcanlogin, pg_has_role('web', 'allot_web', 'MEMBER')
  FROM pg_roles w, pg_roles a WHERE w.rolname = 'web' AND a.rolname = 'allot_web'}),
	'f|t|f|t',
	"web logs in, is no superuser, and is a member of allot ${version}'s NOLOGIN role allot_web"
);

# ---------------------------------------------------------------------------
# Install the web layer as a reader does: examples/ into a temp dir, and the
# packages of its npm workspace with `npm ci` (FrontEnds.pm).
my ($examples, $installed, $npm_said) = install_front_ends(PostgreSQL::Test::Utils::tempdir('web'));
ok($installed, 'npm ci installs the packages of examples/package-lock.json') or diag($npm_said);
my $webdir = "$examples/web";

# ---------------------------------------------------------------------------
# Host keys.  The operator creates the web layer's table (twice: it may be
# run again) and issues each host a key with host-key.js, which prints it once.

for my $round (1, 2)
{
	ok( run_log([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
				'-h', $node->host, '-p', $node->port, '-d', 'postgres', '-f', "$webdir/setup.sql" ]),
		"setup.sql creates the web layer's schema (run $round)");
}

# host_key(ARGS...): run host-key.js as the node's superuser (or as
# PGUSER from %extra), returning (exit code, stdout, stderr).
sub host_key
{
	my ($args, %extra) = @_;
	my ($out, $err) = ('', '');
	local %ENV = (%ENV, PGHOST => $node->host, PGPORT => $node->port, PGDATABASE => 'postgres',
		%extra);
	IPC::Run::run([ 'node', "$webdir/host-key.js", @$args ], '<', \undef, '>', \$out, '2>', \$err);
	return ($? >> 8, $out, $err);
}

my %key;
for my $host (1, 2, 3)
{
	my ($rc, $out, $err) = host_key([ 'issue', $host ]);
	is($rc, 0, "host-key.js issue $host succeeds") or diag($err);
	($key{$host}) = $out =~ /\A([A-Za-z0-9_-]{43})\n\z/;
	ok(defined $key{$host}, "it prints one key of 43 base64url characters (256 bits) for host $host");
	like($err, qr/^host $host: a new key, shown only this once/, 'and says it is shown only once');
}
$key{$_} //= 'missing' for 1, 2, 3;
isnt($key{1}, $key{2}, 'each host has its own key');

# What is stored: scrypt(key, salt) with the documented parameters, and not
# the key.
is( $node->safe_psql('postgres',
		q{SELECT string_agg(format('%s|%s|%s|%s|%s|%s', host_id, length(salt), length(hash),
                                   scrypt_n, scrypt_r, scrypt_p), ',' ORDER BY host_id)
            FROM web.host_key}),
	'1|16|32|32768|8|1,2|16|32|32768|8|1,3|16|32|32768|8|1',
	'web.host_key holds a 16-byte salt and a 32-byte hash per host, N = 2^15, r = 8, p = 1');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM web.host_key
          WHERE position(convert_to('$key{1}', 'UTF8') IN salt || hash) > 0
             OR encode(salt || hash, 'base64') LIKE '%$key{1}%'
             OR encode(salt || hash, 'hex') LIKE '%$key{1}%'"),
	'0', 'the key itself is stored nowhere in the row');
{
	my ($salt, $hash) = split /\|/,
	  $node->safe_psql('postgres', q{SELECT encode(salt, 'hex'), encode(hash, 'hex') FROM web.host_key WHERE host_id = 1});
	my $scrypt = q{const c = require('node:crypto'); const [key, salt] = process.argv.slice(1);
process.stdout.write(c.scryptSync(key, Buffer.from(salt, 'hex'), 32, {N: 32768, r: 8, p: 1, maxmem: 64 << 20}).toString('hex'));};
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'node', '-e', $scrypt, '--', $key{1}, $salt ], '<', \undef, '>', \$out, '2>', \$err);
	is($out, $hash, 'the stored hash is scrypt(key, salt) with those parameters') or diag($err);
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
	@ENV{qw(PORT HOST MAX_BODY_BYTES AUTH_CACHE_SIZE PGHOST PGPORT PGUSER PGDATABASE)} =
	  ($port, '127.0.0.1', $MAX_BODY, $AUTH_CACHE, $node->host, $node->port, 'web', 'postgres');
	open STDOUT, '>>', $server_log or POSIX::_exit(126);
	open STDERR, '>&', \*STDOUT or POSIX::_exit(126);
	chdir $webdir or POSIX::_exit(126);
	exec 'node', 'server.js' or POSIX::_exit(127);
}

my $http = HTTP::Tiny->new(timeout => 60);
# Requests the server answered, so logged: one line each (see how_checked).
my $answered = 0;
{
	my $deadline = time + 120;
	my $status = 599;    # HTTP::Tiny's own "could not connect"
	while ($status == 599 && time < $deadline)
	{
		if (waitpid($server_pid, POSIX::WNOHANG) == $server_pid)
		{
			$server_pid = undef;
			die "the server exited (status $?); see $server_log";
		}
		sleep 0.1;
		$status = get('/')->{status};
	}
	is($status, 404, "the server answers on port $port (GET / is no endpoint)")
	  or die "the server does not answer; see $server_log";
}

# Started without STATUS_PGUSER, it has no status page, and says so at
# GET /status: what to set, not a bare 404.
{
	my $res = get('/status');
	is($res->{status}, 404, 'GET /status without STATUS_PGUSER: 404');
	like($res->{headers}{'content-type'} // '', qr{^text/html; charset=utf-8$}, 'with an HTML page');
	like($res->{content}, qr/The status page is off.*STATUS_PGUSER.*IN ROLE allot_monitor/s,
		'that says how to turn the status page on: STATUS_PGUSER, a login in allot_monitor');
}

# post(PATH, BODY[, AUTHORIZATION]): BODY is a Perl structure sent as JSON,
# or raw bytes.  It is sent with `Authorization: Bearer <key>`, the key of the
# body's host (host 1's for a body without one), unless AUTHORIZATION is
# given: a header value, or undef for none.  Returns the status, the decoded
# reply (undef if not JSON) and the response.
sub post
{
	my ($path, $body, @auth) = @_;
	my $host = ref $body && defined $body->{host_id} && exists $key{ $body->{host_id} } ? $body->{host_id} : 1;
	my $authorization = @auth ? $auth[0] : "Bearer $key{$host}";
	my %headers = ('Content-Type' => 'application/json');
	$headers{Authorization} = $authorization if defined $authorization;
	my $res = $http->post("$base$path",
		{ content => ref $body ? encode_json($body) : $body, headers => \%headers });
	$answered++ if $res->{status} != 599;
	my $json = eval { decode_json($res->{content}) };
	return ($res->{status}, $json, $res);
}

# get(PATH): a GET, counted like post()'s requests.
sub get
{
	my $res = $http->get("$base$_[0]");
	$answered++ if $res->{status} != 599;
	return $res;
}

# refused(PATH, BODY, STATUS, SQLSTATE, MESSAGE_RE, NAME): the request gets
# STATUS and {"error": ~MESSAGE_RE, "sqlstate": SQLSTATE or null}.
sub refused
{
	my ($path, $body, $status, $sqlstate, $message, $name, @auth) = @_;
	my ($got, $json, $res) = post($path, $body, @auth);
	is( sprintf('%s %s', $got, $json ? $json->{sqlstate} // 'null' : 'no JSON body'),
		"$status $sqlstate", "$name: $status, sqlstate $sqlstate");
	like($json ? $json->{error} : '', $message, "$name: the message says why");
	return $res;
}

sub sql { return $node->safe_psql('postgres', $_[0]); }

# ---------------------------------------------------------------------------
# OpenBench-style assignment.

# Concurrency settings of a workload on a host (docs/concepts.md "Concurrency settings";
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
my %sending_of = map { ($_->{job_id} => $_->{sending}) } @{ $reply->{jobs} // [] };
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

is($sending_of{$job_a}, 1, 'each job comes with its sending: the first');
refused('/api/report', { host_id => 2, job_id => 0 + $job_a, outcome => 'success', sending => 2 },
	409, '55000', qr/^sending 2 of job $job_a is not the one in progress on host 2$/,
	'a report naming another sending than the host was sent');
refused('/api/report', { host_id => 2, job_id => 0 + $job_a, outcome => 'success', sending => 1.5 },
	400, '22023', qr/^sending must be a sending's number, 1 or more, not 1\.5$/,
	'a sending that is not a whole number, refused by the web layer');

my %success = (host_id => 2, job_id => 0 + $job_a, outcome => 'success',
	app_units => 1, elapsed_secs => 3000, raw_flops_per_sec => 4e9, sending => 1);
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
# (An unknown host has no key, so the web layer refuses it before allot
# could: see "Host keys" below.)
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
	my $res = get('/api/workload');
	is_deeply([ $res->{status}, $res->{headers}{allow} ], [ 405, 'POST' ],
		'GET /api/workload: 405, Allow: POST');
}

is(sql($tables), $before, 'no refused request changed a row of allot\'s tables');

# ---------------------------------------------------------------------------
# Host keys.  Every endpoint, with a body that its own host's key would get
# through, refused for every kind of bad credential: 401, a challenge, and
# nothing changed.

# Host 1 holds an assignment and host 2 a job in progress, so that a
# heartbeat, a release, a report or a request that got through would show.
post('/api/workload', { host_id => 1 });
my ($s_req, $r_req) = post('/api/request_work', { host_id => 2, request => { resources => { cpu => { req_instances => 1 } } } });
my ($held) = map { $_->{job_id} } @{ $r_req->{jobs} // [] };
ok($held, "host 2 holds job " . ($held // 'none') . ' for the tests below');
$held //= 0;
$before = sql($tables);

my %body_of = (
	'/api/workload' => { host_id => 1 },
	'/api/heartbeat' => { host_id => 1 },
	'/api/release' => { host_id => 1 },
	'/api/request_work' => { host_id => 2, request => { resources => { cpu => { req_instances => 1 } } } },
	'/api/report' => { host_id => 2, job_id => 0 + $held, outcome => 'success' });
my $someone_else = 'A' x 43;    # well-formed, issued to nobody
my $realm = 'Bearer realm="allot"';
for my $path (sort keys %body_of)
{
	my $body = $body_of{$path};
	my $host = $body->{host_id};
	my $other = 3;
	my %cases = (
		'no Authorization header' => [ undef, '28000', qr/^every endpoint needs the host's key/, $realm ],
		'a Basic credential' => [ "Basic " . encode_base64url("$host:$key{$host}"), '28000',
			qr/^every endpoint needs the host's key/, $realm ],
		'a Bearer token that is no key' => [ 'Bearer short', '28000', qr/^every endpoint needs/, $realm ],
		'a wrong key' => [ "Bearer $someone_else", '28P01', qr/^the key is not the one issued to host $host$/,
			qq{$realm, error="invalid_token"} ],
		"host ${other}'s key" => [ "Bearer $key{$other}", '28P01', qr/^the key is not the one issued to host $host$/,
			qq{$realm, error="invalid_token"} ],
		'its own key, altered' => [ 'Bearer ' . ($key{$host} =~ tr/A-Za-z/B-ZAb-za/r), '28P01',
			qr/^the key is not the one issued to host $host$/, qq{$realm, error="invalid_token"} ]);
	for my $case (sort keys %cases)
	{
		my ($auth, $sqlstate, $message, $challenge) = @{ $cases{$case} };
		my $res = refused($path, $body, 401, $sqlstate, $message, "$path, $case", $auth);
		is($res->{headers}{'www-authenticate'}, $challenge, "$path, $case: WWW-Authenticate: $challenge");
	}
	# an unknown host, with a key of the right form: the same answer as a wrong key
	my $res = refused($path, { %$body, host_id => 424242 }, 401, '28P01',
		qr/^the key is not the one issued to host 424242$/, "$path, an unknown host", "Bearer $key{$host}");
	is($res->{headers}{'www-authenticate'}, qq{$realm, error="invalid_token"},
		"$path, an unknown host: the same challenge as a wrong key");
}
refused('/api/workload', { host_id => '9223372036854775807' }, 401, '28P01',
	qr/^the key is not the one issued to host 9223372036854775807$/,
	'the largest bigint, as a string, is an id like any other', "Bearer $key{1}");
is(sql($tables), $before, 'no request with a bad credential changed a row of allot\'s tables');

# Another host's work: host 3 cannot take or report host 2's jobs, neither
# with its own key (allot refuses the report) nor with host 2's id.
refused('/api/report', { host_id => 3, job_id => 0 + $held, outcome => 'success' }, 403, '42501',
	qr/^job $held was not sent to host 3$/, 'host 3, with its own key, reporting host 2\'s job');
refused('/api/report', { host_id => 2, job_id => 0 + $held, outcome => 'aborted' }, 401, '28P01',
	qr/^the key is not the one issued to host 2$/, 'host 3 speaking for host 2', "Bearer $key{3}");
refused('/api/request_work', $body_of{'/api/request_work'}, 401, '28P01',
	qr/^the key is not the one issued to host 2$/, 'host 3 asking work for host 2', "Bearer $key{3}");
is(sql("SELECT state, host_id FROM allot.job WHERE id = $held"), 'in_progress|2',
	'host 2\'s job is still in progress on host 2');
is(sql($tables), $before, 'and nothing else changed');

# The server checks a key with scrypt once, then remembers it (its log says
# which); at most AUTH_CACHE_SIZE keys, the least recently used going first.

# how_checked(PATH, BODY[, AUTHORIZATION]): the status of the request, and
# how the server checked its key, from the request's log line: 'verified',
# 'cached' or 'refused'.  The server logs each request it answered, in order,
# just after the reply: its line is the last once there are as many lines
# as answered requests.
sub how_checked
{
	my ($path, $body, @auth) = @_;
	my ($status) = post($path, $body, @auth);
	my @requests;
	my $deadline = time + 60;
	while (time < $deadline)
	{
		@requests = grep { /^\S+ (?:GET|POST) / } split /\n/, slurp_file($server_log);
		last if @requests >= $answered;
		sleep 0.05;
	}
	my ($how) = @requests == $answered ? $requests[-1] =~ m{ POST \Q$path\E .*\(key (\w+)\)$} : ();
	return "$status " . ($how // 'not logged');
}
like(how_checked('/api/heartbeat', { host_id => 1 }), qr/^200 (verified|cached)$/, 'host 1\'s key works');
like(how_checked('/api/heartbeat', { host_id => 2 }), qr/^200 (verified|cached)$/,
	'host 2\'s key works: the cache (two keys) now holds hosts 1 and 2');
is(how_checked('/api/heartbeat', { host_id => 1 }), '200 cached', 'host 1 again: cached, no scrypt');
is(how_checked('/api/heartbeat', { host_id => 3 }), '200 verified',
	'host 3: verified with scrypt, and host 2, the least recently used, leaves the cache');
is(how_checked('/api/heartbeat', { host_id => 3 }), '200 cached', 'host 3 again: cached');
is(how_checked('/api/heartbeat', { host_id => 1 }), '200 cached', 'host 1: still cached');
is(how_checked('/api/heartbeat', { host_id => 2 }), '200 verified', 'host 2: verified again');
is(how_checked('/api/heartbeat', { host_id => 1 }, "Bearer $key{2}"), '401 refused',
	'a refused key is logged as refused');

# Re-issued or revoked: the old key stops working at once, even cached.
my $old_key = $key{3};
like(how_checked('/api/heartbeat', { host_id => 3 }), qr/^200 (verified|cached)$/, 'host 3\'s old key works');
is(how_checked('/api/heartbeat', { host_id => 3 }), '200 cached', 'and is cached');
my ($rc, $out, $err) = host_key([ 'issue', 'other' ]);    # by name
is($rc, 0, 'host-key.js issue other (a host name): a new key for host 3') or diag($err);
($key{3}) = $out =~ /\A([A-Za-z0-9_-]{43})\n\z/;
$key{3} //= 'missing';
isnt($key{3}, $old_key, 'a different key');
refused('/api/heartbeat', { host_id => 3 }, 401, '28P01', qr/^the key is not the one issued to host 3$/,
	'the old key, though cached, no longer works', "Bearer $old_key");
is(how_checked('/api/heartbeat', { host_id => 3 }), '200 verified', 'the new key works');
is(how_checked('/api/heartbeat', { host_id => 3 }), '200 cached', 'and is cached');
($rc, $out, $err) = host_key([ 'revoke', '3' ]);
is_deeply([ $rc, $out, $err ], [ 0, '', "host 3: key revoked\n" ], 'host-key.js revoke 3');
refused('/api/heartbeat', { host_id => 3 }, 401, '28P01', qr/^the key is not the one issued to host 3$/,
	'a revoked key, though cached, no longer works');
($rc, $out, $err) = host_key([ 'issue', '3' ]);
($key{3}) = $out =~ /\A([A-Za-z0-9_-]{43})\n\z/;
$key{3} //= 'missing';
post('/api/release', { host_id => 1 });    # as the tests below expect

# What host-key.js refuses.
($rc, $out, $err) = host_key([ 'issue', '424242' ]);
is_deeply([ $rc, $out ], [ 1, '' ], 'host-key.js issue of an unknown host id: exit 1, no key');
like($err, qr/^host-key\.js: no host has id "424242"$/m, 'and says why');
# (Two hosts that registered themselves: the operator's hosts have names of their own.)
sql(q{INSERT INTO allot.host (id, name, threads, registered_at) VALUES (4, 'twin', 1, now()), (5, 'twin', 1, now())});
($rc, $out, $err) = host_key([ 'issue', 'twin' ]);
is_deeply([ $rc, $out ], [ 1, '' ], 'a name that two hosts share: exit 1, no key');
like($err, qr/^host-key\.js: 2 hosts are named "twin" \(ids 4, 5\): give the id$/m, 'and says which');
($rc, $out, $err) = host_key([ 'issue' ]);
is($rc, 2, 'no host: exit 2 (usage)');
($rc, $out, $err) = host_key([ 'constructor', '1' ]);
is($rc, 2, 'an unknown command: exit 2 (usage)');
($rc) = host_key([ 'issue', '4' ]);
is(sql('SELECT count(*) FROM web.host_key WHERE host_id = 4'), '1', 'host 4 has a key');
sql('DELETE FROM allot.host WHERE id IN (4, 5)');
is(sql('SELECT count(*) FROM web.host_key WHERE host_id = 4'), '0', 'deleting a host deletes its key');

# An operator login (allot_admin) issues keys; the web role reads the hashes
# and can change none.
sql('CREATE ROLE operator LOGIN IN ROLE allot_admin');
($rc, $out, $err) = host_key([ 'issue', '2' ], PGUSER => 'operator');
is($rc, 0, 'a member of allot_admin issues a key') or diag($err);
($key{2}) = $out =~ /\A([A-Za-z0-9_-]{43})\n\z/;
$key{2} //= 'missing';
($rc, $out, $err) = host_key([ 'issue', '2' ], PGUSER => 'web');
is($rc, 1, 'the web role cannot issue one');
like($err, qr/^host-key\.js: permission denied for table/m, 'permission denied');

# If the web role cannot read the keys, that is the server's fault, not the
# host's: 500 (not 403), and the log says what to do.
sql('REVOKE SELECT ON web.host_key FROM allot_web');
refused('/api/heartbeat', { host_id => 1 }, 500, 'null', qr/^internal error$/,
	'the web role cannot read web.host_key');
sql('GRANT SELECT ON web.host_key TO allot_web');
like(slurp_file($server_log), qr/cannot read web\.host_key: permission denied.*setup\.sql grants it to allot_web/,
	'the server log names the cause and the fix');
($status) = post('/api/heartbeat', { host_id => 1 });
is($status, 200, 'granted again: 200');

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
is(as_web('SELECT count(*) FROM web.host_key'), '0 none', 'as web, reading web.host_key works');
for my $query (
	'SELECT * FROM allot.job',
	'SELECT * FROM allot.host',
	q{UPDATE allot.job SET state = 'unsent'},
	'INSERT INTO allot.host (threads) VALUES (1)',
	'DELETE FROM allot.job_report',
	'SELECT allot.run_transitioner()',
	'SELECT allot.validate_job(1, true)',
	'SELECT * FROM allot.explain_assignment(1)',
	'SELECT * FROM allot.check_invariants()',
	q{DELETE FROM web.host_key},
	q{UPDATE web.host_key SET hash = hash},
	q{INSERT INTO web.host_key SELECT 9, salt, hash, scrypt_n, scrypt_r, scrypt_p FROM web.host_key})
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
			headers => { 'Content-Type' => 'application/json', Authorization => "Bearer $key{1}" }
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
	my $deadline = time + 120;
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
	my $deadline = time + 60;
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
	my $deadline = time + 60;
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
