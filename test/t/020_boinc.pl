# A real BOINC client gets its work from allot (examples/boinc).
#
# Debian's unmodified boinc-client attaches to a project served by the
# example front end (Node) over allot, inside a network namespace of its own
# that holds only a loopback interface: the client, the front end and the
# boinccmd calls run in it, PostgreSQL is reached through its unix socket.
# The app is a tiny C program built here against Debian's libboinc-app-dev.
#
# Three jobs of one workload, on a client limited to one CPU:
#   j1  writes 1000 lines;
#   j2  writes 1000 lines, but only once a flag file exists.  Meanwhile the
#       test puts 4 KB of junk where j2's output is uploaded: the client asks
#       the upload handler how much it has (<get_file_size>, files >= 8 KB),
#       resumes after the junk, and the stored output's MD5 differs from the
#       one the client reports.  The negative control: j2 must be an error,
#       never credited;
#   j3  writes 2000 lines.
# It passes when the client fetched the jobs over at least two scheduler
# requests, ran them, uploaded the outputs, reported them and got an ack for
# each ("got ack for task" with <sched_op_debug/>); j1 and j3 are done with
# the MD5 of the expected output, j2 is an error; the validator
# (admin.js validate) and run_transitioner credit j1 and j3; and after one
# more scheduler request `boinccmd --get_project_status` shows the host
# total credit allot granted.  Hostile requests follow: unknown accounts,
# DOCTYPE entities, malformed values, path traversal, reports of another
# host's job, uploads to names never issued.
#
# The whole cycle, from both sides (the front end's log, the client's log),
# is printed to this test's log.  Everything started is stopped by its PID,
# also when the test dies.
use strict;
use warnings;
use Digest::MD5 qw(md5_hex);
use File::Path qw(make_path);
use FindBin;
use lib $FindBin::RealBin;
use BoincTest qw(slurp show_log);
use IPC::Run ();
use JSON::PP;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $started = time;

# ---------------------------------------------------------------------------
# The database: allot, the front end's login (allot_web and its own schema,
# nothing else), an operator's login, and the app (BoincTest::database).
my $node = BoincTest::database('boinc');
sub sql { return $node->safe_psql('postgres', $_[0]); }
is( sql(q{SELECT string_agg(b.rolname, ',' ORDER BY b.rolname) FROM pg_auth_members m
            JOIN pg_roles b ON b.oid = m.roleid WHERE m.member = 'boinc_web'::regrole})
	  . ' ' . sql(q{SELECT rolsuper FROM pg_roles WHERE rolname = 'boinc_web'}),
	'allot_web f', 'the front end logs in as a member of allot_web only, no superuser');

# ---------------------------------------------------------------------------
# The front end and the app, in a work directory.
my $work = PostgreSQL::Test::Utils::tempdir('boinc');
my $bt = BoincTest->new(node => $node, work => $work);
my %tool = %{ $bt->tools };
my $fe = $bt->install;
my $data = $bt->data;
sub run_cmd { return $bt->run_cmd(@_); }
sub admin { return $bt->admin(@_); }

my ($out, $ok) = admin('setup');
ok($ok && -s "$data/keys/code_sign_private.pem", 'admin.js setup makes the code signing key');
is(sprintf('%o', (stat "$data/keys/code_sign_private.pem")[2] & 0777), '600',
	'the private key is readable by its owner only');
# What the app writes for N lines.
sub expected_output { my $n = shift; return join '', map { "line $_ of $n\n" } 1 .. $n; }

# ---------------------------------------------------------------------------
# The network namespace, and the front end in it.  Any port will do:
# nothing else listens in the namespace.
$bt->netns;
my @in_ns = $bt->in_ns;
my $url = $bt->start_server(8000 + int(rand(1000)),
	PROJECT_NAME => 'allot test project', MAX_REQUEST_DELAY => 3, MAX_REQUEST_BYTES => 16777216,
	PARSE_TIMEOUT_MS => 120000);    # a test of which path parses a request, not of how fast
my $server_log = "$work/server.log";

# The operator's part, now that the front end has made its tables.
($out, $ok) = admin('add-account', 'alice');
my ($auth) = $out =~ /^([0-9a-f]{32})$/m;
ok($ok && $auth, 'admin.js add-account prints an authenticator');
($out, $ok) = admin('add-account', 'mallory');
my ($mallory) = $out =~ /^([0-9a-f]{32})$/m;
($out, $ok) = admin(qw(add-app-version --app-version-id 1 --version-num 100 --file), "$fe/app/lines");
ok($ok, 'admin.js add-app-version signs and publishes the app');

my $flag = "$work/j2-may-finish";
my %job;
for ([ j1 => '--lines 1000' ], [ j2 => "--lines 1000 --wait-for $flag" ], [ j3 => '--lines 2000' ])
{
	my ($name, $cmdline) = @$_;
	($out, $ok) = admin(qw(submit --workload 1 --command-line), $cmdline);
	($job{$name}) = $out =~ /^jobs ([0-9]+)$/m;
	ok($ok && $job{$name}, "admin.js submit: job $name is allot job " . ($job{$name} // '?'));
}
# j2's output is spoilt on its way (below): it may fail once, for good, so
# that the client's one host (which is never sent a job it had) is done.
sql("UPDATE allot.job SET max_error_results = 0 WHERE id = $job{j2}");
# The client, in the namespace: one CPU, no benchmarks, small buffers,
# logging every scheduler operation and file transfer.
my $client = $bt->client('client', ncpus => 1, attach => $auth);
my $client_log = "$client.log";

# ---------------------------------------------------------------------------
# Wait for the cycle.  When j2 is sent, put junk where its output will be
# uploaded, then let the app finish.
my $acked = sub {
	my $log = slurp($client_log);
	my @names = split /\n/, sql('SELECT name FROM boinc.result ORDER BY job_id');
	return (3 == grep { $log =~ /got ack for task \Q$_\E\b/ } @names);
};
my $junk = 'J' x 4096;
my ($j2_output, $j2_deadline);
{
	my $deadline = time + 150;
	while (time < $deadline && !$acked->())
	{
		die 'the client exited: ' . slurp($client_log) if waitpid($bt->pid('client'), POSIX::WNOHANG) != 0;
		if (!$j2_output)
		{
			$j2_output = sql("SELECT name FROM boinc.output_file WHERE job_id = $job{j2}");
			if ($j2_output)
			{
				# The client holds j2 until the flag exists: read the deadline
				# it keeps for it, once its state file has it.
				(my $j2_name = $j2_output) =~ s/_0$//;
				my $until = time + 120;
				while (!$j2_deadline && time < $until)
				{
					($j2_deadline) = slurp("$client/client_state.xml")
					  =~ m{<result>\s*<name>\Q$j2_name\E</name>.*?<report_deadline>([0-9.]+)</report_deadline>}s;
					sleep 0.2 unless $j2_deadline;
				}
				make_path("$data/upload/$job{j2}/1");
				PostgreSQL::Test::Utils::append_to_file("$data/upload/$job{j2}/1/$j2_output", $junk);
				PostgreSQL::Test::Utils::append_to_file($flag, '');
				note sprintf('%.1f s: j2 was sent; 4096 bytes of junk put at its upload, then the flag', time - $started);
			}
		}
		sleep 0.5;
	}
}
ok($acked->(), sprintf('the client got an ack for each of the three jobs (%.0f s after the start)', time - $started));

my $clog = slurp($client_log);
my @got = $clog =~ /Scheduler request completed: got ([0-9]+) new tasks/g;
my $with_jobs = grep { $_ > 0 } @got;
my $fetched = 0;
$fetched += $_ for @got;
ok($with_jobs >= 2 && $fetched == 3,
	"the client fetched 3 jobs over $with_jobs scheduler requests (at least 2): @got");
like($clog, qr/Finished download of lines_100_x86_64-pc-linux-gnu/, 'it downloaded the signed app');
unlike($clog, qr/signature|Signature/, 'and found nothing wrong with its signature');

my %result = map { split /\|/ } split /\n/, sql('SELECT job_id, name FROM boinc.result');
for my $j (qw(j1 j2 j3))
{
	my $name = $result{ $job{$j} };
	like($clog, qr/Computation for task \Q$name\E finished/, "$j ran on the client ($name)");
	like($clog, qr/Finished upload of \Q${name}_0\E/, "${j}'s output was uploaded");
	like($clog, qr/got ack for task \Q$name\E\b/, "${j}'s report was acknowledged");
}
like($clog, qr/\[fxd\] starting upload, upload_offset 4096/,
	'the client resumed j2\'s upload after the 4096 bytes the handler said it had');

my $host_id = sql('SELECT host_id FROM boinc.host');

# What the client was told, as it kept it (client_state.xml).
my $state = slurp("$client/client_state.xml");
my ($client_hostid) = $state =~ m{<hostid>([0-9]+)</hostid>};
is($client_hostid, $host_id, 'the client keeps the <hostid> it got on first contact: its allot host id');
ok(sql("SELECT rpc_seqno >= 3 AND last_rpc_at > created_at FROM boinc.host WHERE host_id = $host_id") eq 't',
	'later contacts updated the host');
is(int($j2_deadline // 0), sql("SELECT floor(extract(epoch FROM deadline))::bigint FROM allot.job WHERE id = $job{j2}"),
	'the client held j2 with allot\'s deadline for it as its report deadline');
my ($first_estimate) = $clog =~ /estimated total CPU task duration: ([0-9]+) seconds/;
is($first_estimate, sql("SELECT round(est_secs) FROM allot.job WHERE id = $job{j1}"),
	"the client's estimate of j1 ($first_estimate s) is allot's est_secs: rsc_fpops_est / flops");
my ($keytext) = run_cmd({}, $tool{node}, '-e',
	"process.stdout.write(require('$fe/signing.js').loadPublicKeyText('$data'))");
my ($client_key) = slurp((glob("$client/sched_request_*.xml"))[0]) =~ m{<code_sign_key>\n(.*?)\n</code_sign_key>}s;
is("$client_key\n", $keytext, 'the client trusts the code signing key it was sent on first contact');
# The client was answered no_work (backoff 600 s) at least once: the
# front end capped request_delay at this test's 3 s.  (Whether a request of
# the client's catches allot's error backoff after j2 depends on when the
# client asks: the backoff here lasts a second.  A host backing off is
# checked below, with a request made for it.)
like(slurp($server_log),
	qr/\[HOST#[0-9]+\] scheduler request: [^\n]*allot: \{"cpu":\{(?:"reason":"[^"]*",)?"status":"no_work","backoff_secs":600\}\}; sent nothing; request_delay 3, next_rpc_delay 600;/,
	'allot\'s first empty answer (backoff 600 s): next_rpc_delay 600, request_delay capped at 3');
like($clog, qr/Project requested delay of 3 seconds/, 'and the client defers its next request by it');

# allot and the front end agree on every job.
is( sql(qq{SELECT string_agg(j.id || ' ' || j.state || ' ' || r.outcome, ', ' ORDER BY j.id)
              FROM allot.job j JOIN boinc.result r ON r.job_id = j.id}),
	"$job{j1} done success, $job{j2} error error, $job{j3} done success",
	'allot: j1 and j3 done, j2 an error (the front end reported it so)');
like(sql("SELECT detail FROM boinc.result WHERE job_id = $job{j2}"),
	qr/^output ${j2_output} differs: 16893 bytes md5 [0-9a-f]{32}, the client has 16893 bytes md5 \Q${\ md5_hex(expected_output(1000))}\E$/,
	'why j2 is an error: the stored output\'s MD5 is not the one the client reported');
ok(!-e "$data/upload/$job{j2}", 'and its output is deleted: only a success\'s outputs are kept');
for ([ j1 => 1000 ], [ j3 => 2000 ])
{
	my ($j, $n) = @$_;
	my $expect = expected_output($n);
	is( sql("SELECT nbytes || ' ' || md5 FROM boinc.output_file WHERE job_id = $job{$j}"),
		length($expect) . ' ' . md5_hex($expect),
		"${j}'s output was checked at its report: the size and MD5 of $n lines, as the app writes them");
	is(slurp("$data/upload/$job{$j}/1/$result{$job{$j}}_0"), $expect, "${j}'s output is in its sending's directory");
}
is(sql('SELECT count(*) FROM allot.job_report'), '3', 'allot kept one report per job');
is( sql("SELECT os || ' ' || threads || ' ' || cpu_flops || ' ' || (registered_at IS NOT NULL)
              || ' ' || ('sse2' = ANY (cpu_flags)) FROM allot.host WHERE id = $host_id"),
	'x86_64-pc-linux-gnu 1 1000000000 true true',
	'the client registered itself: its platform, CPUs, FLOPS and CPU flags');

# ---------------------------------------------------------------------------
# Validation and credit.
($out, $ok) = admin('validate');
ok($ok && $out =~ /^2 result\(s\) judged$/m && (() = $out =~ /: valid, digest /g) == 2, 'admin.js validate marks the two successful jobs');
is(sql('SELECT string_agg(id || \' \' || validated, \', \' ORDER BY id) FROM allot.job WHERE validated IS NOT NULL'),
	"$job{j1} true, $job{j3} true", 'j1 and j3 are valid; j2 is not even a candidate');
is(sql(q{SELECT allot.run_transitioner() ->> 'credited'}), '2', 'run_transitioner credits them');
my $credit = sql("SELECT total_credit FROM allot.host_credit(ARRAY[$host_id]::bigint[])");
is(sprintf('%.6f', $credit), sprintf('%.6f', 2 * 2.5e11 / 4.32e11), "allot: the host earned $credit credits");
is(sql("SELECT count(*) FROM allot.job WHERE id = $job{j2} AND credit IS NOT NULL"), '0',
	'negative control: the corrupted j2 earned nothing');

# One more scheduler request (as a volunteer's "Update" button does) brings
# the credit to the client.
sub boinccmd { return $bt->boinccmd($client, @_); }
boinccmd('--project', $url, 'update');
my $status = '';
{
	my $deadline = time + 180;
	while (time < $deadline)
	{
		$status = boinccmd('--get_project_status');
		last if $status =~ /host_total_credit: ([0-9.]+)/ && $1 > 0;
		sleep 1;
	}
}
# The whole cycle, for the log: the front end's side and the client's.
show_log('front end (examples/boinc/server.js)', $server_log, qr/./);
show_log('client (boinc --dir ... --attach_project)', $client_log,
	qr/Scheduler request|Sending scheduler|Reporting|Requesting new tasks|got ack|Started download|Finished download|Starting task|Computation for task|Started upload|Finished upload|parsing upload response|upload_offset|file_size|requested delay|Deferring|Project requested|work request|estimated total|signature|md5|error|Error/i);

note "----- boinccmd --get_project_status -----\n$status";
my ($client_host_credit) = $status =~ /host_total_credit: ([0-9.]+)/;
my ($client_user_credit) = $status =~ /user_total_credit: ([0-9.]+)/;
is($client_host_credit, sprintf('%.6f', $credit),
	"the client shows host_total_credit $client_host_credit, allot's credit of the host");
is($client_user_credit, sprintf('%.6f', $credit), 'and the same user_total_credit (one host)');
my ($client_avg) = $status =~ /host_expavg_credit: ([0-9.]+)/;
my $allot_avg = sql("SELECT expavg_credit FROM allot.host_credit(ARRAY[$host_id]::bigint[])");
ok(abs($client_avg - $allot_avg) < 1e-3 * $allot_avg && $allot_avg > 0,
	"and host_expavg_credit $client_avg, allot's recent average ($allot_avg)");

# ---------------------------------------------------------------------------
# Hostile requests, through the same HTTP server, from inside the namespace.
sub http { return $bt->http(@_); }

sub unescape { return $_[0] =~ s/&lt;/</gr =~ s/&gt;/>/gr =~ s/&quot;/"/gr =~ s/&amp;/&/gr; }

my $before = sql(q{SELECT md5(string_agg(t, ';' ORDER BY t)) FROM (
    SELECT 'job ' || j::text AS t FROM allot.job j
    UNION ALL SELECT 'report ' || r::text FROM allot.job_report r
    UNION ALL SELECT 'host ' || h::text FROM allot.host h
    UNION ALL SELECT 'coproc ' || c::text FROM allot.host_coproc c) s});
my $hosts_before = sql('SELECT count(*) FROM boinc.host');

my $request = slurp((glob("$client/sched_request_*.xml"))[0]);
my $r = http('GET', '', undef);
like($r->[1], qr{<link rel="boinc_scheduler" href="\Q${url}\Escheduler">}, 'the master page names the scheduler');

(my $unknown = $request) =~ s{<authenticator>[^<]*</authenticator>}{<authenticator>00000000000000000000000000000000</authenticator>};
$r = http('POST', 'scheduler', $unknown);
like($r->[1], qr{<request_delay>3600</request_delay>\n<message priority="notice">Invalid or missing account key\.  To fix, remove and add this project\.</message>},
	'an unknown authenticator gets BOINC\'s own error reply, and a delay');
unlike($r->[1], qr/<result_ack>|<workunit>|<hostid>/, 'and nothing else');

my $lol = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
  . '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
  . "<scheduler_request><authenticator>$auth</authenticator><domain_name>&lol3;</domain_name></scheduler_request>";
$r = http('POST', 'scheduler', $lol);
like($r->[1], qr/Bad scheduler request: a document type declaration is not accepted/,
	'billion laughs: a DOCTYPE is refused before parsing');
$r = http('POST', 'scheduler', '<scheduler_request><authenticator>' . "\x00\xff<<");
like($r->[1], qr/Bad scheduler request: /, 'garbage: refused with a message');
for my $bad (
	[ '<p_ncpus>1</p_ncpus>', '<p_ncpus>-5</p_ncpus>', qr/<p_ncpus> must be between 1 and 4096, not -5/ ],
	[ '<p_fpops>', '<p_fpops>1e999', qr/<p_fpops> must be/ ],
	[ '<platform_name>x86_64-pc-linux-gnu', '<platform_name>../../etc', qr/<platform_name> is not valid/ ],
	[ '<cpu_req_secs>', '<cpu_req_secs>NaN', qr/<cpu_req_secs> must be a number, not "NaN/ ],
	[ '<hostid>', '<hostid>9999999999', qr/<hostid> must be between 0 and 2147483647/ ],
	[ '<host_info>', '<host_info><__proto__>1</__proto__>', qr/Bad scheduler request: malformed XML/ ],
	[ '<rpc_seqno>', '<rpc_seqno>1</rpc_seqno><rpc_seqno>', qr/<rpc_seqno> appears more than once/ ])
{
	my ($from, $to, $why) = @$bad;
	(my $req = $request) =~ s/\Q$from\E/$to/;
	$r = http('POST', 'scheduler', $req);
	like(unescape($r->[1]), $why, "a request with $to is refused: $why");
}
$r = http('POST', 'scheduler', $request . (' ' x 16777216));
is($r->[0], 413, 'a request over MAX_REQUEST_BYTES (16 MiB here): 413');

# A stranger's multi-megabyte request does not hold up a real client's
# (issue 20, item 7: 0.5.2 parsed 8 MiB of junk on the event loop before it
# looked at the authenticator, 7-10 s during which no host was answered).
# What the front end does with each, from its log: a stranger's 8 MiB
# request is answered from its first bytes, no more than PREAMBLE_BYTES
# (16 KiB) of it examined; a member's request over INLINE_PARSE_BYTES
# (16 KiB) is parsed in the worker thread, one under it inline.  (How long
# a real request takes beside them is measured by bench/boinc_intake.js,
# not asserted here.)
my $stranger = "<scheduler_request>\n<authenticator>" . ('0' x 32) . "</authenticator>\n" . ('x' x (8 << 20));
$r = http('POST', 'scheduler', $stranger);
# The answer is sent from the preamble and the connection closed: the
# sender reads it, or finds the connection closed while it still writes.
like($r->[1], qr/Invalid or missing account key|Broken pipe|Connection reset/,
	'a stranger\'s 8 MiB request is refused as an unknown account');
my ($seen) = slurp($server_log) =~ /refused a scheduler request: unknown authenticator \(hostid 0\); examined ([0-9]+) of its bytes, the rest dropped unread/;
ok(defined $seen && $seen > 0 && $seen <= 16384, 'the front end examined at most 16 KiB of it: ' . ($seen // 'no log line'));
# Mallory's requests (a member's), asking for no work, with N names in
# <other_results>, sent with <hostid> 0: the first makes her a host, the
# others attach to it again.
sub member
{
	my ($n) = @_;
	(my $m = $request) =~ s{<authenticator>[^<]*</authenticator>}{<authenticator>$mallory</authenticator>};
	$m =~ s{<hostid>[0-9]+</hostid>}{<hostid>0</hostid>};
	$m =~ s{<(cpu_req_secs|cpu_req_instances|work_req_seconds)>[^<]*</}{<$1>0</}g;
	$m =~ s{<other_results>.*?</other_results>}{}s;
	return $m =~ s{</scheduler_request>}{"<other_results>\n" . ("<other_result><name>r</name></other_result>\n" x $n) . "</other_results>\n</scheduler_request>"}er;
}
# The size of a member's request with n names (44 bytes each).
my $base = length(member(0));
for my $case ([ 'a member\'s request of 2.2 MB', 50000, 'in the worker thread' ],
	[ 'one just over 16 KiB', int((16384 - $base) / 44) + 2, 'in the worker thread' ],
	[ 'one just under 16 KiB', int((16384 - $base) / 44) - 2, 'inline' ])
{
	my ($what, $n, $where) = @$case;
	my $body = member($n);
	$r = http('POST', 'scheduler', $body);
	my ($hid) = $r->[1] =~ m{<hostid>([0-9]+)</hostid>};
	ok($hid, "$what (" . length($body) . " bytes) is served: host $hid");
	like(slurp($server_log), qr/\[HOST#$hid\] scheduler request[^:\n]*: ${\ length($body)} bytes parsed \Q$where\E /,
		"and parsed $where, as the front end logs");
}

# Mallory reports Alice's jobs (by their names) as her own host's.
(my $theft = $request) =~ s{<authenticator>[^<]*</authenticator>}{<authenticator>$mallory</authenticator>};
$theft =~ s{<hostid>[0-9]+</hostid>}{<hostid>$host_id</hostid>};
my $fake = join '', map { "<result><name>$result{$job{$_}}</name><state>5</state><exit_status>0</exit_status>"
	  . "<final_elapsed_time>1</final_elapsed_time></result>\n" } qw(j1 j2 j3);
$theft =~ s{</scheduler_request>}{$fake</scheduler_request>};
$r = http('POST', 'scheduler', $theft);
like($r->[1], qr/<hostid>(?!\Q$host_id\E<)[0-9]+<\/hostid>/,
	'Mallory naming Alice\'s host id gets a new host of her own');
is(sql("SELECT count(*) FROM boinc.host WHERE host_id = $host_id AND account_id = (SELECT id FROM boinc.account WHERE name = 'alice')"),
	'1', 'Alice\'s host stays Alice\'s');

my ($mallory_host) = $r->[1] =~ m{<hostid>([0-9]+)</hostid>};
like(sql("SELECT string_agg(outcome, ',') FROM boinc.result WHERE host_id = $mallory_host") // '', qr/^$/,
	'Alice\'s results reported by Mallory\'s host were acknowledged and ignored');

is( sql(q{SELECT md5(string_agg(t, ';' ORDER BY t)) FROM (
    SELECT 'job ' || j::text AS t FROM allot.job j
    UNION ALL SELECT 'report ' || r::text FROM allot.job_report r
    UNION ALL SELECT 'host ' || h::text FROM allot.host h WHERE h.id <= } . $host_id . q{
    UNION ALL SELECT 'coproc ' || c::text FROM allot.host_coproc c) s}),
	$before, 'no hostile request changed a job, a report or Alice\'s host in allot');

# A host with a GPU, as the client describes it (<coprocs>, BOINC 7): its
# coprocessor is registered and its GPU request reaches allot, which has no
# GPU version of the app.
(my $gpu = $request) =~ s{<hostid>[0-9]+</hostid>}{<hostid>0</hostid>};
$gpu =~ s{<host_cpid>[0-9a-f]*</host_cpid>}{<host_cpid>0123456789abcdef0123456789abcdef</host_cpid>};    # another machine
$gpu =~ s{</scheduler_request>}{<coprocs>
<coproc_cuda><count>2</count><name>GeForce</name><available_ram>8e9</available_ram><have_cuda>1</have_cuda>
<have_opencl>0</have_opencl><req_secs>3600</req_secs><req_instances>2</req_instances>
<estimated_delay>0</estimated_delay><peak_flops>5000000000000.000000</peak_flops></coproc_cuda>
</coprocs>
</scheduler_request>};
$r = http('POST', 'scheduler', $gpu);
my ($gpu_host) = $r->[1] =~ m{<hostid>([0-9]+)</hostid>};
is(sql("SELECT resource || ' ' || count || ' ' || peak_flops FROM allot.host_coproc WHERE host_id = " . ($gpu_host // 0)),
	'nvidia 2 5000000000000', 'a client with two NVIDIA GPUs registers them as coprocessors');
like(slurp($server_log), qr/\[HOST#$gpu_host\] scheduler request \(new host\).*"nvidia":\{"req_secs":3600,"req_instances":2,"estimated_delay":0\}.*"nvidia":\{"status":"unsupported"/,
	'its GPU request is passed to allot, which answers that no version runs there');

# An old client (before BOINC 6) asks with work_req_seconds alone.
(my $old = $request) =~ s{<hostid>[0-9]+</hostid>}{<hostid>$gpu_host</hostid>};
$old =~ s{<cpu_req_secs>[^<]*</cpu_req_secs>|<cpu_req_instances>[^<]*</cpu_req_instances>}{}g;
$old =~ s{<work_req_seconds>[^<]*</work_req_seconds>}{<work_req_seconds>100.000000</work_req_seconds>};
$r = http('POST', 'scheduler', $old);
like(slurp($server_log), qr/\[HOST#$gpu_host\] scheduler request: .*asked \{"work_req_seconds":100\}; allot: \{"cpu":\{"status":"no_work"/,
	'an old client\'s work_req_seconds is passed to allot as such');

# Mallory's host takes a job and reports it without uploading its output:
# an error for allot, like the corrupted one.
($out, $ok) = admin(qw(submit --workload 1 --command-line), '--lines 10');
($job{j4}) = $out =~ /^jobs ([0-9]+)$/m;
(my $ask = $request) =~ s{<authenticator>[^<]*</authenticator>}{<authenticator>$mallory</authenticator>};
$ask =~ s{<hostid>[0-9]+</hostid>}{<hostid>$mallory_host</hostid>};
$ask =~ s{<cpu_req_secs>[^<]*</cpu_req_secs>}{<cpu_req_secs>10</cpu_req_secs>};
$r = http('POST', 'scheduler', $ask);
my ($j4_name) = $r->[1] =~ m{<result>\n<name>([^<]+)</name>};
ok($j4_name && $j4_name =~ /^job$job{j4}_/, 'Mallory\'s host is sent j4 through the protocol');
my ($flops) = $r->[1] =~ m{<flops>([0-9.]+)</flops>};
my ($fpops_est) = $r->[1] =~ m{<rsc_fpops_est>([0-9.]+)</rsc_fpops_est>};
my ($deadline) = $r->[1] =~ m{<report_deadline>([0-9]+)</report_deadline>};
is( sprintf('%.0f %.0f %d', $flops, $fpops_est, $deadline),
	sql("SELECT format('%s %s %s', round(peak_flops_per_sec), round(est_secs * peak_flops_per_sec), floor(extract(epoch FROM deadline)))
           FROM allot.job WHERE id = $job{j4}"),
	'its reply: the version\'s FLOPS, rsc_fpops_est = est_secs x FLOPS, and the deadline, all as allot sent the job');
like($r->[1], qr{<file_signature>\n(?:[0-9a-f]{64}\n){4}\.\n</file_signature>}, 'and the app\'s signature, in BOINC\'s hex lines');
(my $report = $ask) =~ s{</scheduler_request>}{<result><name>$j4_name</name><final_elapsed_time>2.5</final_elapsed_time>
<exit_status>0</exit_status><state>5</state><file_info><name>${j4_name}_0</name><nbytes>130.000000</nbytes>
<md5_cksum>0123456789abcdef0123456789abcdef</md5_cksum></file_info></result>
</scheduler_request>};
$r = http('POST', 'scheduler', $report);
like($r->[1], qr{<result_ack>\n<name>\Q$j4_name\E</name>\n</result_ack>}, 'its report is acknowledged');
# What allot answered then (its reply, kept with the report): the job may
# since have gone to the real client, which asks meanwhile.
is(sql("SELECT rep.outcome || ' ' || (rep.reply ->> 'state') || ' ' || r.detail
          FROM allot.job_report rep JOIN boinc.result r ON r.job_id = rep.job_id AND r.host_id = rep.host_id
         WHERE rep.job_id = $job{j4} AND rep.host_id = $mallory_host"),
	"error unsent output ${j4_name}_0 missing",
	'and reported to allot as an error, a failed sending (back to unsent): the output never arrived');
$r = http('POST', 'scheduler', $report);
like($r->[1], qr{<result_ack>\n<name>\Q$j4_name\E</name>}, 'the same report again: acknowledged again');
is(sql("SELECT count(*) FROM allot.job_report WHERE job_id = $job{j4}"), '1', 'and reported to allot once');

# A host backing off after failures in a row (allot.error_backoff, a second
# in these tests: too short to catch on the wire at the clients' pace) is
# told by allot how long to wait and why; the front end passes the wait on
# beyond its cap on request_delay.  Mallory's host backs off for an hour,
# as after a longer streak, and asks for work again.
is(sql("UPDATE allot.host_reliability SET backoff_until = now() + interval '1 hour', error_streak = 2
         WHERE host_id = $mallory_host RETURNING error_streak"), '2',
	'Mallory\'s host, whose j4 failed, is made to back off for an hour');
$r = http('POST', 'scheduler', $ask);
my ($held_delay) = $r->[1] =~ m{<request_delay>([0-9.]+)</request_delay>};
ok(defined $held_delay && $held_delay > 3000 && $held_delay <= 3600 && $r->[1] !~ m{<result>},
	'it is sent nothing and told to wait out its backoff: request_delay ' . ($held_delay // 'none'));
like(slurp($server_log),
	qr/\[HOST#$mallory_host\] scheduler request: [^\n]*allot: \{"cpu":\{"reason":"its last 2 tasks failed","status":"no_work","backoff_secs":[0-9]+\}\}; sent nothing; request_delay 3[0-9]{3}, next_rpc_delay 3[0-9]{3};/,
	'allot gave the reason, its last 2 tasks failed, and the front end logged it');

# Files: traversal and symbolic links never reach the keys.
symlink("$data/keys/code_sign_private.pem", "$data/download/key.pem") or die "symlink: $!";
for my $path ('download/../keys/code_sign_private.pem', 'download/%2e%2e%2fkeys%2fcode_sign_private.pem',
	'download/..%2Fkeys%2Fcode_sign_private.pem', 'download/key.pem', 'download/.', 'download/')
{
	$r = http('GET', $path, undef);
	ok($r->[0] == 404 && $r->[1] !~ /PRIVATE KEY/, "GET /$path: 404") or diag "got $r->[0]";
}
$r = http('GET', 'download/lines_100_x86_64-pc-linux-gnu', undef);
is(md5_hex($r->[1]), md5_hex(slurp("$fe/app/lines")), 'GET of the app: its bytes');

for my $name ('../../keys/code_sign_private.pem', 'nothing_issued_0', $result{ $job{j1} } . '_0')
{
	$r = $bt->upload($name, 'x' x 100);
	like($r->[1], qr{<status>-1</status>}, "an upload to $name is refused for good");
}
is(md5_hex(slurp("$data/upload/$job{j1}/1/$result{$job{j1}}_0")), md5_hex(expected_output(1000)),
	'and j1\'s reported output is untouched');
$r = http('POST', 'file_upload_handler', "<data_server_request>\n<get_file_size>../../keys/code_sign_private.pem</get_file_size>\n</data_server_request>\n");
like($r->[1], qr{<status>-1</status>}, 'a size probe of a path is refused');

# ---------------------------------------------------------------------------
# Stop: the client and the front end by PID (SIGTERM: both finish cleanly).
for my $name (qw(client server))
{
	is($bt->stop($name), 0, "the $name exits with status 0 on SIGTERM");
}
like(slurp($server_log), qr/SIGTERM: no new connections.*\bstopped\n\z/s, 'the front end finished and stopped');
is(sql('SELECT count(*) FROM allot.check_invariants()'), '0', 'check_invariants() is empty');
note sprintf('the whole test took %.0f s', time - $started);

$node->stop;
done_testing();
