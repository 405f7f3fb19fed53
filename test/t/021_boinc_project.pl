# A BOINC project that volunteers and operators can live with (issue 21):
# two real clients at once, Debian's unmodified boinc-client, against the
# example front end (examples/boinc) over allot, in a network namespace of
# their own (BoincTest.pm).
#
#   A  3 CPUs, alice's;  B  2 CPUs, bob's: accounts made by
#      `boinccmd --create_account` after `--get_project_config`, as the
#      BOINC Manager's wizard does
#
# Which client gets a job is the test's to say: both run with "no more
# work" and are let ask (allowmorework, then update) one at a time; allot
# sends the lowest unsent job id first.  Jobs that must stay running wait
# for a flag file (app/lines.c --wait-for).  While one client works, the
# other goes on.
#
#   names      each result is named after its job and sending; its outputs
#              go to a directory of their own (upload/JOB/SENDING)
#   abort      A aborts a job (boinccmd --task ... abort) and asks for
#              work in the same request: it is not sent the job again, B is
#   error      a job that fails on A is sent to B, and gives up there
#              (its max_error_results is 1)
#   timeout    A holds two jobs, network off; the operator times A out
#              (allot.time_out_host); one of A's copies finishes; B is sent
#              both; A's network back: its finished copy's upload is
#              refused and its report refused, its running copy gets
#              <result_abort> and is aborted; nothing of A's is left in
#              upload/; B's copies are done
#   reset      A holds two jobs and resets the project: its next request
#              lists neither, both are reported lost at once and B gets
#              them, long before their deadline
#   re-attach  meanwhile B detaches, looks its account up (boinccmd
#              --lookup_account, BOINC's password hash) and attaches with
#              the new key: the same host id, its credit kept, no new host
#   pages      server_status.php (HTML and XML), show_user.php,
#              show_host_detail.php, the stats exports (user.gz, host.gz,
#              team.gz, tables.xml) with allot's credit, and the farm's
#              status page
#   attacks    wrong passwords (limited per address and per email address),
#              bad sign-ups, another account's host_cpid, another host's
#              result names in <other_results>, a requeued sending, a host
#              that never comes back (admin.js sweep), merge-hosts
#   no file    a workload whose app version has no executable in the front
#              end: hosts are sent other work, never its job
#
# What the volunteer sees and does (issue 32):
#   messages   A is told, in the replies, why its tasks were aborted,
#              refused or lost and why no task was sent: boinccmd
#              --get_messages shows it, and --get_notices the notices;
#              B is told why no task was sent
#   notices    the operator's news (admin.js notice) reaches A and C
#              through the project's feed (notices.php, RSS); bob's
#              password reset is in his account's feed, the one B's
#              replies name
#   web        bob logs in with his password in a browser's way, sets his
#              resource share: B takes it at its next request
#   reset      bob forgets his password: get_passwd.php mails a link
#              (MAIL_COMMAND, a file here); the new password works with
#              boinccmd --lookup_account, the old one no longer
#   manager    C, a bare client, joins a stand-in account manager
#              (boinc_account_manager.js): the manager makes carol's
#              account, sets her resource share (am_set_info.php), reads it
#              back (am_get_info.php) and tells C to attach: C attaches, with
#              that resource share
#   limits     200 lookups from 100 addresses at once do not keep a
#              sign-up out of the scrypt gate; an account may make only so
#              many hosts a day, and have only so many
#
# Everything started is stopped by its PID, also when the test dies.
use strict;
use warnings;
use Compress::Zlib qw(memGunzip);
use Digest::MD5 qw(md5_hex);
use File::Path qw(make_path);
use FindBin;
use JSON::PP qw(encode_json);
use lib $FindBin::RealBin;
use BoincTest qw(slurp wait_for show_log);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $started = time;

# allot, the logins and the app (BoincTest::database), and a login for the
# farm's status page.
my $node = BoincTest::database('boinc21');
sub sql { return $node->safe_psql('postgres', $_[0]); }
sql('CREATE ROLE farm_status LOGIN IN ROLE allot_monitor');

my $work = PostgreSQL::Test::Utils::tempdir('boinc21');
my $bt = BoincTest->new(node => $node, work => $work);
my $fe = $bt->install;
my $data = $bt->data;
ok(($bt->admin('setup'))[1], 'admin.js setup');
$bt->netns;
my $port = 18000 + int(rand(900));
my $mail = "$work/mail.txt";
my $url = $bt->start_server($port,
	PROJECT_NAME => 'allot project 21', MAX_REQUEST_DELAY => 1, ACCOUNT_CREATION => 'open',
	PASSWORD_TRIES_PER_MINUTE => 30, STATUS_PGUSER => 'farm_status',
	MAIL_COMMAND => qq{cat >> "$mail"}, NOTICE_POLL_SECS => 5, NEW_HOSTS_PER_DAY => 8, MAX_HOSTS_PER_ACCOUNT => 9);
ok(($bt->admin(qw(add-app-version --app-version-id 1 --version-num 100 --file), "$fe/app/lines"))[1],
	'admin.js add-app-version');

# A job of workload 1 with this command line; its allot id.
sub submit
{
	my ($cmdline) = @_;
	my ($o) = $bt->admin(qw(submit --workload 1 --command-line), $cmdline);
	my ($id) = $o =~ /^jobs ([0-9]+)$/m or die "submit: $o";
	return $id;
}

# The project's news, for every volunteer's client (notices.php).
my $news = 'Welcome to allot project 21: this is news for every volunteer.';
like(($bt->admin('notice', '--title', 'Welcome', '--text', $news))[0], qr/^notice [0-9]+ for everyone: Welcome$/m,
	'admin.js notice posts the project\'s news');

# ---------------------------------------------------------------------------
# The clients, started bare as a volunteer's machine is: the Manager's
# wizard reads the project's config and makes the account.
my $A = $bt->client('A', ncpus => 3, gui_rpc_port => $port + 1000, notices => 1);
# A and C fetch notices feeds; B does not (<no_info_fetch>): a client that
# detaches while it fetches a feed can lose track of its next web RPC
# (boinccmd --lookup_account never ended, once in three runs), and B
# detaches.
my $B = $bt->client('B', ncpus => 2, gui_rpc_port => $port + 1001);
sub cmd { my ($c, @args) = @_; return $bt->boinccmd($c, @args); }

my $config = cmd($A, '--get_project_config', $url);
like($config, qr/^name: allot project 21$/m, 'boinccmd --get_project_config: the project\'s name')
  or diag $config;
like($config, qr/^min_passwd_length: 6$/m, 'and its minimum password length');
my $created = cmd($A, '--create_account', $url, 'Alice@Example.org', 'correct horse', 'alice');
my ($alice_key) = $created =~ /^account key: ([0-9a-f]{32})$/m;
ok($alice_key, 'boinccmd --create_account: an account key') or diag $created;
my $alice = sql(q{SELECT id || ' ' || name || ' ' || email_addr || ' ' || (passwd_scrypt LIKE 'scrypt$32768$8$1$%')
                    FROM boinc.account WHERE email_addr IS NOT NULL});
like($alice, qr/^[0-9]+ alice alice\@example\.org true$/,
	'the account: its name, its email address lowercased, only scrypt of the password hash');
($alice) = $alice =~ /^([0-9]+)/;
is(sql("SELECT count(*) FROM boinc.account_key WHERE account_id = $alice"), '1', 'and one key, kept as its hash');
like(cmd($A, '--project_attach', $url, $alice_key), qr/^$/, 'A attaches with it');
my ($bob_key) = cmd($B, '--create_account', $url, 'bob@example.org', 'battery staple', 'bob') =~ /^account key: ([0-9a-f]{32})$/m;
like(cmd($B, '--project_attach', $url, $bob_key // ''), qr/^$/, 'B, bob\'s, likewise');
my $bob = sql("SELECT id FROM boinc.account WHERE name = 'bob'");

# ---------------------------------------------------------------------------
# Attacks on the password pages, while the clients make their first
# requests.
my $md5 = sub { return md5_hex($_[0] . lc $_[1]); };
my $r;
for my $bad ([ 'email_addr=x&passwd_hash=' . ('0' x 32) . '&user_name=x', qr/-205/, 'an address that is not one' ],
	[ 'email_addr=c%40example.org&passwd_hash=zz&user_name=c', qr/-206/, 'a passwd_hash that is not 32 hex digits' ],
	[ 'email_addr=c%40example.org&passwd_hash=' . ('0' x 32) . '&user_name=mallory%E2%80%AE', qr/-188.*right-to-left override \(U\+202E\) at character 8/s,
		'a name with a hidden character, named by allot.check_name' ],
	[ 'email_addr=alice%40example.org&passwd_hash=' . ('0' x 32) . '&user_name=eve', qr/-137/, 'another password for a taken address' ],
	[ 'email_addr=c%40example.org&email_addr=d%40example.org&passwd_hash=' . ('0' x 32) . '&user_name=c', qr/email_addr is given 2 times/,
		'a parameter given twice' ])
{
	$r = $bt->http('GET', "create_account.php?$bad->[0]");
	like($r->[1], $bad->[1], "create_account.php refuses $bad->[2]");
}
is(sql('SELECT count(*) FROM boinc.account'), '2', 'no account was made');
$r = $bt->http('GET', "lookup_account.php?email_addr=alice%40example.org&passwd_hash=" . $md5->('wrong', 'alice@example.org'));
like($r->[1], qr{<error_num>-206</error_num>}, 'lookup_account.php with a wrong password: ERR_BAD_PASSWD');
$r = $bt->http('GET', "lookup_account.php?email_addr=nobody%40example.org&passwd_hash=" . $md5->('x', 'nobody@example.org'));
like($r->[1], qr{<error_num>-206</error_num>}, 'an unknown address gets the same answer');
for (2 .. 10)
{
	$bt->http('GET', "lookup_account.php?email_addr=alice%40example.org&passwd_hash=" . $md5->("guess$_", 'alice@example.org'));
}
$r = $bt->http('GET', "lookup_account.php?email_addr=alice%40example.org&passwd_hash=" . $md5->('correct horse', 'alice@example.org'));
like($r->[1], qr{<error_num>-199</error_num>.*Too many wrong passwords for this address}s,
	'after ten wrong passwords for an address, even the right one must wait');
is(sql("SELECT count(*) FROM boinc.account_key WHERE account_id = $alice"), '1', 'and no key was made');
# The tries from one client, one after the other on one connection (a
# process per try took over a minute on a busy machine, and the window is
# a minute).
my ($limited, $tries_err) = ('', '');
IPC::Run::run(
	[
		$bt->in_ns, $^X, '-e', q{
use HTTP::Tiny;
my ($url, $n) = @ARGV;
my $ua = HTTP::Tiny->new(timeout => 120);
for my $i (1 .. $n)
{
	my $r = $ua->get("${url}lookup_account.php?email_addr=n$i%40example.org&passwd_hash=" . ('0' x 32));
	if ($r->{content} =~ /Too many attempts; try again in [0-9]+ s/) { print $i; exit 0; }
}
print 0;
}, $url, 40
	],
	'<', \undef, '>', \$limited, '2>', \$tries_err, IPC::Run::timeout(600));
$limited = 0 unless $limited =~ /^[0-9]+$/;
ok($limited > 0, "one address is refused after PASSWORD_TRIES_PER_MINUTE tries (here at try $limited)")
  or diag $tries_err;

# 200 lookups of addresses no account has, from 100 client addresses at
# once (each costs scrypt of a decoy), and a sign-up a second later: the
# gate in front of scrypt lets setting a password take turns with checking
# one, so the crowd of lookups does not keep the sign-up out (before, 64
# waiting lookups refused every sign-up).
my $log_before_flood = length($bt->server_log);
my $flood = $bt->http_many(
	(map { { method => 'GET', local => '127.0.1.' . (1 + $_ % 100),
		path => "lookup_account.php?email_addr=flood$_%40example.org&passwd_hash=" . ('0' x 32) } } 1 .. 200),
	{ method => 'GET', local => '127.0.2.1', delay => 1,
	  path => "create_account.php?email_addr=dave%40example.org&passwd_hash=" . $md5->('dave is here', 'dave@example.org') . '&user_name=dave' });
my $signup = pop @$flood;
like($signup->[1], qr{<authenticator>[0-9a-f]{32}</authenticator>}, 'a sign-up among 200 lookups from 100 addresses gets its account key')
  or diag $signup->[1];
my %answers;
$answers{ $_->[1] =~ /<error_num>(-[0-9]+)<\/error_num>/ ? $1 : 'other' }++ for @$flood;
note 'the 200 lookups were answered: ' . join(', ', map { "$_ x $answers{$_}" } sort keys %answers);
is(($answers{-206} // 0) + ($answers{-199} // 0), 200, 'each lookup was answered "wrong address or password" or "try again later"');
# The order the front end answered them in: the sign-up took its turn
# among the lookups waiting when it came (a second after them, when at most
# twenty of the sixty-four let in could have been checked), not after all of
# them (with checks always served first, none is answered after it).
my ($after_signup) = substr($bt->server_log, $log_before_flood) =~ /create_account: account [0-9]+, a key\n(.*)\z/s;
my $lookups_after = () = ($after_signup // '') =~ /GET \/lookup_account\.php /g;
ok($lookups_after >= 10, "the sign-up took its turn: $lookups_after lookups were answered after it");

# host(DIR): the host id the client keeps for the project (0 until it has one).
sub host
{
	my ($dir) = @_;
	my ($id) = slurp("$dir/client_state.xml") =~ m{<project>.*?<hostid>([0-9]+)</hostid>}s;
	return $id // 0;
}
# Whether DIR has no scheduler request under way, from its log: none was
# sent after the last one ended (or a detach or reset cut it short).
sub rpc_idle
{
	my ($dir) = @_;
	my $log = slurp("$dir.log");
	my ($sent, $ended) = (-1, -1);
	$sent = $-[0] while $log =~ /Sending scheduler request/g;
	$ended = $-[0] while $log =~ /Scheduler request (?:completed|failed)|Detaching from project|Resetting project/g;
	return $sent < $ended || $sent < 0;
}
# No more work for DIR, and no request under way or waiting to go that
# asked for some.  An `update` give() sent just as its jobs came is still
# pending (the client sends it within a second or two): were the network
# cut before it went, it would go first thing when the network is back.
sub hold
{
	my ($dir) = @_;
	cmd($dir, '--project', $url, 'nomorework');
	return wait_for(60, sub { rpc_idle($dir) && cmd($dir, '--get_project_status') =~ /scheduler RPC pending: no/ });
}
# Where job J's sendings went: "host:sending:outcome ..." in sending order.
sub sendings
{
	my ($job) = @_;
	return sql("SELECT string_agg(host_id || ':' || sending || ':' || coalesce(outcome, 'open'), ' ' ORDER BY sending)
                  FROM boinc.result WHERE job_id = $job");
}
# The name of job J's result on host H.
sub result_name
{
	my ($job, $h) = @_;
	return sql("SELECT name FROM boinc.result WHERE job_id = $job AND host_id = $h");
}
# Let DIR ask for work until jobs @jobs were sent to it (or 90 s pass);
# then no more work for it.
sub give
{
	my ($dir, @jobs) = @_;
	my $h = host($dir);
	cmd($dir, '--project', $url, 'allowmorework');
	my $got = wait_for(90, sub {
		cmd($dir, '--project', $url, 'update') if rpc_idle($dir);
		return @jobs == grep { sendings($_) =~ /(?:^| )$h:/ } @jobs;
	});
	hold($dir);
	return $got;
}
# Wait (90 s at most) until SUB is true, making DIR send a scheduler
# request whenever it has none under way: a client that had a task fail
# defers its reports (BOINC's backoff after an unrecoverable error).
sub reported
{
	my ($dir, $sub) = @_;
	return wait_for(90, sub {
		cmd($dir, '--project', $url, 'update') if rpc_idle($dir);
		return $sub->();
	});
}
# The first scheduler request of host H logged after the line that matches
# AFTER.
sub request_after
{
	my ($h, $after) = @_;
	my ($rest) = $bt->server_log =~ /$after[^\n]*\n(.*)/s;
	my ($line) = ($rest // '') =~ /^(.*\[HOST#$h\] scheduler request.*)$/m;
	return $line // '';
}

ok(wait_for(60, sub { host($A) && host($B) }), 'both clients have a host id');
my ($hA, $hB) = (host($A), host($B));
isnt($hA, $hB, "A is host $hA, B host $hB");
ok(hold($A) && hold($B), 'and neither asks for work until let');

# ---------------------------------------------------------------------------
# One request to A, three jobs: s1 succeeds, e fails at once, w waits for
# its flag until A aborts it.  The request that reports them asks for work:
# neither e nor w comes back to A.  B then gets both: e fails there too
# and gives up (its max_error_results is 1); w is done there.
my %job;
my $flag_w = "$work/flag-w";
$job{s1} = submit('--lines 10');
$job{e} = submit('--lines -1');
$job{w} = submit("--lines 5 --wait-for $flag_w");
sql("UPDATE allot.job SET max_error_results = 1 WHERE id = $job{e}");
ok(give($A, $job{s1}, $job{e}, $job{w}), 'A is sent s1, e and w in one request');
my %name = map { ($_ => result_name($job{$_}, $hA)) } qw(s1 e w);
like($name{s1}, qr/^job$job{s1}_1_[0-9a-f]{24}$/, "results are named after their job and sending: $name{s1}");
ok(wait_for(60, sub { slurp("$A.log") =~ /Starting task \Q$name{w}\E/ }), 'A runs w');
cmd($A, '--project', $url, 'allowmorework');
like(cmd($A, '--task', $url, $name{w}, 'abort'), qr/^$/, 'boinccmd --task ... abort: A aborts w');
ok(reported($A, sub { join(' ', map { sendings($job{$_}) } qw(s1 e w)) eq "$hA:1:success $hA:1:error $hA:1:aborted" }),
	'A reports s1 done, e an error and w aborted') or diag join(' / ', map { sendings($job{$_}) } qw(s1 e w));
hold($A);
like(request_after($hA, qr/\[HOST#$hA\] reported \Q$name{w}\E \(job $job{w}, sending 1\): aborted/),
	qr/asked \{"resources".*sent nothing/, 'the request that reported the abort asked for work, and got nothing: not w again');
is(slurp("$data/upload/$job{s1}/1/$name{s1}_0"), join('', map { "line $_ of 10\n" } 1 .. 10),
	"s1's output is in upload/$job{s1}/1/, its sending's directory");
ok(give($B, $job{e}, $job{w}), 'B is sent e and w');
PostgreSQL::Test::Utils::append_to_file($flag_w, '');
# B runs them while A goes on: they are checked before B is sent more.
# ---------------------------------------------------------------------------
# A timeout: A holds t1 and t2, its network off, and the operator times it
# out.  A's t2 finishes meanwhile; B is sent both.  A's network back: its
# t2 is refused (upload and report), its t1, still running, aborted.
my ($flag_t1, $flag_t2) = ("$work/flag-t1", "$work/flag-t2");
$job{t1} = submit("--lines 7 --wait-for $flag_t1");
$job{t2} = submit("--lines 8 --wait-for $flag_t2");
ok(give($A, $job{t1}, $job{t2}), 'A is sent t1 and t2, which wait for their flags');
$name{$_} = result_name($job{$_}, $hA) for qw(t1 t2);
ok(wait_for(60, sub { my $l = slurp("$A.log"); $l =~ /Starting task \Q$name{t1}\E/ && $l =~ /Starting task \Q$name{t2}\E/ }),
	'A runs both');
# Nothing must make A call when its network is back but its upload: no
# request waiting to go, and no callback (next_rpc_delay) from its last
# reply; a request asking for nothing clears one.
ok(wait_for(60, sub {
	return 0 unless rpc_idle($A) && cmd($A, '--get_project_status') =~ /scheduler RPC pending: no/;
	my @asked = $bt->server_log =~ /^.*\[HOST#$hA\] scheduler request.*$/mg;
	return 1 if ($asked[-1] // '') =~ /next_rpc_delay -;/;
	cmd($A, '--project', $url, 'update');
	return 0;
}), 'A has no scheduler request to make');
cmd($A, '--set_network_mode', 'never', '0');
is(sql("SELECT allot.time_out_host($hA)"), '2', 'the operator times A out: allot.time_out_host');
PostgreSQL::Test::Utils::append_to_file($flag_t2, '');
ok(wait_for(60, sub { slurp("$A.log") =~ /Computation for task \Q$name{t2}\E finished/ }),
	'A\'s copy of t2 finishes, its upload held (no network)');
# B's copy of t2 waits until A's late report has been refused: were B to
# finish first, A's copy would be superseded instead (on a busy machine A's
# retry can come late).
unlink $flag_t2 or die "$flag_t2: $!";
ok(reported($B, sub { sendings($job{e}) eq "$hA:1:error $hB:2:error" }), 'e fails on B too, as sending 2')
  or diag sendings($job{e});
is(sql("SELECT state || ' ' || tries || ' ' || failures FROM allot.job WHERE id = $job{e}"), 'error 2 2',
	'e gives up after more failures than its max_error_results');
ok(reported($B, sub { sendings($job{w}) eq "$hA:1:aborted $hB:2:success" }), 'w is done on B, sending 2')
  or diag sendings($job{w});
ok(give($B, $job{t1}, $job{t2}), 'B is sent t1 and t2');
# What A would have sent of each before (an upload cut short), to be deleted.
for my $j (qw(t1 t2))
{
	make_path("$data/upload/$job{$j}/1");
	PostgreSQL::Test::Utils::append_to_file("$data/upload/$job{$j}/1/$name{$j}_0", 'partial');
}
cmd($A, '--set_network_mode', 'always', '0');
ok(wait_for(90, sub {
	cmd($A, '--project', $url, 'update') if rpc_idle($A) && slurp("$A.log") =~ /Giving up on upload of \Q$name{t2}\E_0/;
	return sendings($job{t1}) =~ /^$hA:1:superseded $hB:2:/ && sendings($job{t2}) =~ /^$hA:1:refused $hB:2:/;
}), 'A\'s network back: its t2 refused, its t1 superseded')
  or diag sendings($job{t1}) . ' / ' . sendings($job{t2}) . "\nA's log since its network came back:\n"
  . (slurp("$A.log") =~ /(Resuming network activity.*)\z/s)[0];
like(slurp("$A.log"), qr/Giving up on upload of \Q$name{t2}\E_0: permanent upload error/,
	'the upload of A\'s late t2 was refused for good');
like($bt->server_log, qr/upload: \Q$name{t2}\E_0 refused: sending 1 of job $job{t2} is no longer in progress on its host/,
	'by the upload handler: allot had moved on from that sending');
like(sql("SELECT detail FROM boinc.result WHERE name = '$name{t2}'"), qr/^55000: job $job{t2} timed out on host $hA: its report comes too late$/,
	'and its report by allot');
like($bt->server_log, qr/\[HOST#$hA\] scheduler request: .*aborts \Q$name{t1}\E[ ;]/, 'A\'s copy of t1 is sent <result_abort>');
ok(wait_for(60, sub { slurp("$A.log") =~ /result state=ABORTED for \Q$name{t1}\E from abort_task/ }),
	'and A aborts it');
# What A's volunteer is told of it, in the replies' messages: the event log
# (boinccmd --get_messages) and, as notices, the Manager's Notices tab
# (--get_notices; A asks for no work meanwhile, which would clear them).
my $said = cmd($A, '--get_messages', '0');
like($said, qr/\[allot project 21\] Message from server: The project aborts task \Q$name{t1}\E: it is no longer this computer's/,
	'boinccmd --get_messages: A is told why the project aborted its t1');
like($said, qr/\[allot project 21\] Message from server: Task \Q$name{t2}\E was not accepted: job $job{t2} timed out on host $hA: its report comes too late\. It earns no credit\./,
	'and why its late t2 earns nothing');
like($said, qr/\[allot project 21\] No tasks sent for CPU: no task for this computer's CPU is available now; asking again in [0-9]+ (?:s|min)\./,
	'and, earlier, why a request for work got none');
my $noticed = cmd($A, '--get_notices', '0');
like($noticed, qr/The project aborts task \Q$name{t1}\E/, 'boinccmd --get_notices: the abort is a notice too');
like($noticed, qr/Task \Q$name{t2}\E was not accepted/, 'and so is the refused report');
unlike($noticed, qr/No tasks sent/, 'not why no task was sent: that is in the event log only');
ok(!-e "$data/upload/$job{t1}/1" && !-e "$data/upload/$job{t2}/1", 'nothing of A\'s sendings of t1 and t2 is left in upload/');
PostgreSQL::Test::Utils::append_to_file($flag_t1, '');
PostgreSQL::Test::Utils::append_to_file($flag_t2, '');

# ---------------------------------------------------------------------------
# A reset: what A held is lost, and goes to B at once.
my $flag_r = "$work/flag-r";
$job{r1} = submit("--lines 3 --wait-for $flag_r");
$job{r2} = submit("--lines 4 --wait-for $flag_r");
ok(give($A, $job{r1}, $job{r2}), 'A is sent r1 and r2');
$name{$_} = result_name($job{$_}, $hA) for qw(r1 r2);

ok(reported($B, sub { sendings($job{t1}) eq "$hA:1:superseded $hB:2:success" && sendings($job{t2}) eq "$hA:1:refused $hB:2:success" }),
	't1 and t2 are done on B, sending 2') or diag sendings($job{t1}) . ' / ' . sendings($job{t2});
like(($bt->admin('validate'))[0], qr/^4 result\(s\) judged$/m, 'admin.js validate: s1 on A; w, t1 and t2 on B');
is(sql(q{SELECT allot.run_transitioner() ->> 'credited'}), '4', 'run_transitioner credits them');
my ($credit_A, $credit_B) = map { sql("SELECT total_credit FROM allot.host_credit(ARRAY[$_]::bigint[])") } $hA, $hB;
ok($credit_A > 0 && $credit_B > 0, "A earned $credit_A credits, B $credit_B");

# Bob's client, holding nothing, lists A's results as its own: nothing of
# A's changes.
my $request = slurp((glob("$B/sched_request_*.xml"))[0]);
(my $spoof = $request) =~ s{<other_results>.*?</other_results>}{<other_results>
<other_result><name>$name{r1}</name></other_result><other_result><name>$name{r2}</name></other_result>
</other_results>}s;
$spoof =~ s{<result>.*</result>}{}s;
$r = $bt->http('POST', 'scheduler', $spoof);
like($r->[1], qr{<result_abort>\n<name>\Q$name{r1}\E</name>}, 'a host listing another\'s result is told to abort its "copy"');
is(sendings($job{r1}) . ' / ' . sendings($job{r2}), "$hA:1:open / $hA:1:open", 'and A\'s results stay A\'s, open');
is(sql("SELECT string_agg(state || ':' || host_id, ' ' ORDER BY id) FROM allot.job WHERE id IN ($job{r1}, $job{r2})"),
	"in_progress:$hA in_progress:$hA", 'in progress on A in allot');

# Meanwhile B, holding nothing, detaches, looks bob's account up, and
# attaches with the new key.
like(cmd($B, '--project', $url, 'detach'), qr/^$/, 'boinccmd --project ... detach: B leaves the project');
ok(wait_for(30, sub { slurp("$B/client_state.xml") !~ /<project>/ }), 'B has no project');
my $lookup = cmd($B, '--lookup_account', $url, 'bob@example.org', 'battery staple');
my ($key2) = $lookup =~ /^account key: ([0-9a-f]{32})$/m;
ok($key2 && $key2 ne $bob_key, 'boinccmd --lookup_account: a new key of bob\'s account') or diag $lookup;
is(sql("SELECT count(*) FROM boinc.account_key WHERE account_id = $bob"), '2', 'his account has two keys now');
like(cmd($B, '--project_attach', $url, $key2), qr/^$/, 'B attaches with it');

like(cmd($A, '--project', $url, 'reset'), qr/^$/, 'boinccmd --project ... reset: A drops r1 and r2');
# (B, attached again and asking for work, may take them at once.)
ok(reported($A, sub { sendings($job{r1}) =~ /^$hA:1:lost(?: |$)/ && sendings($job{r2}) =~ /^$hA:1:lost(?: |$)/ }),
	'A\'s next request lists neither: both reported lost') or diag sendings($job{r1});
like($bt->server_log, qr/\[HOST#$hA\] lost \Q$name{r1}\E \(job $job{r1}, sending 1\): neither reported nor listed by the client; allot: \{[^}]*"state": "unsent"/,
	'allot takes them back at once');
is(sql("SELECT string_agg(outcome, ' ') FROM allot.job_report WHERE host_id = $hA AND job_id IN ($job{r1}, $job{r2})"),
	'lost lost', 'allot keeps the losses');
# (The client shows a reply's messages once it has handled the reply.)
ok(wait_for(30, sub { cmd($A, '--get_messages', '0') =~ /Message from server: Task \Q$name{r1}\E is no longer on this computer; the project sends it to another one\./ }),
	'A is told that the project took its lost r1 back');

ok(wait_for(60, sub { host($B) }), 'B is attached again');
is(host($B), $hB, "and is host $hB again: the front end knew it by its account and host_cpid");
like($bt->server_log, qr/\[HOST#$hB\] scheduler request \(host attached again\)/, 'as the front end logs');
is(sql('SELECT count(*) FROM boinc.host'), '2', 'no new host');
my $status = '';
ok(reported($B, sub { ($status = cmd($B, '--get_project_status')) =~ /host_total_credit: (?!0\.000000)[0-9]/ }),
	'the client shows its host credit');
my ($shown) = $status =~ /host_total_credit: ([0-9.]+)/;
is($shown, sprintf('%.6f', $credit_B), "B kept its credit: $shown");

ok(give($B, $job{r1}, $job{r2}), 'B is sent r1 and r2');
is(sql("SELECT bool_and(deadline - now() > interval '23 hours') FROM allot.job WHERE id IN ($job{r1}, $job{r2})"), 't',
	'long before A\'s deadline for them would have passed');
PostgreSQL::Test::Utils::append_to_file($flag_r, '');
ok(reported($B, sub { sendings($job{r1}) =~ / $hB:2:success$/ && sendings($job{r2}) =~ / $hB:2:success$/ }),
	'B does r1 and r2') or diag sendings($job{r1}) . ' / ' . sendings($job{r2});
# B, idle, asks for work when there is none: its volunteer is told why.
cmd($B, '--project', $url, 'allowmorework');
ok(wait_for(90, sub {
	cmd($B, '--project', $url, 'update') if rpc_idle($B);
	return cmd($B, '--get_messages', '0') =~ /\[allot project 21\] No tasks sent for CPU: no task for this computer's CPU is available now; asking again in [0-9]+ (?:s|min)\./;
}), 'boinccmd --get_messages: B is told why it got no task');
hold($B);

# The project's news, on A's Notices (notices.php, fetched every
# NOTICE_POLL_SECS once a reply named the feed; C shows it too, below).
ok(wait_for(60, sub { cmd($A, '--get_notices', '0') =~ /\Q$news\E/ }), "boinccmd --get_notices: A shows the project's news");

# ---------------------------------------------------------------------------
# Bob in a browser: he logs in with his password and sets his resource
# share; B takes it at its next request.
my $w = $bt->web('GET', 'login_form.php');
like($w->{content}, qr{<form method="post" action="login_action.php">}, 'login_form.php: the login form');
$w = $bt->web('POST', 'login_action.php', form => { email_addr => 'bob@example.org', passwd => 'wrong password' });
ok($w->{status} == 200 && !$w->{cookie} && $w->{content} =~ /Wrong email address or password/,
	'login_action.php with a wrong password: no session');
$w = $bt->web('POST', 'login_action.php', form => { email_addr => 'Bob@Example.org', passwd => 'battery staple' });
my $session = $w->{cookie};
ok($w->{status} == 303 && $w->{location} =~ /home\.php$/ && $session, 'with his password: a session cookie, and home.php');
$w = $bt->web('GET', 'home.php', cookie => $session);
my ($form_token) = $w->{content} =~ /name="form_token" value="([0-9a-f]{32})"/;
ok($w->{content} =~ m{<h1>Your account, bob</h1>} && $form_token, 'home.php: his account, and forms with their token');
$w = $bt->web('POST', 'edit_prefs.php', cookie => $session, form => { resource_share => 5, form_token => '0' x 32 });
like($w->{content}, qr/This form is not one this project gave you/, 'a form without its session\'s token is refused');
$w = $bt->web('POST', 'edit_prefs.php', form => { resource_share => 5, form_token => $form_token });
like($w->{content}, qr/Log in first/, 'and one without the session');
$w = $bt->web('POST', 'edit_prefs.php', cookie => $session, form => { resource_share => 50, form_token => $form_token });
is($w->{status}, 303, 'edit_prefs.php: resource share 50');
is(sql("SELECT resource_share FROM boinc.account WHERE id = $bob"), '50', 'kept with his account');
cmd($B, '--project', $url, 'update');
ok(wait_for(60, sub { cmd($B, '--get_project_status') =~ /resource share: 50\.000000/ }),
	'B takes it from its next reply: boinccmd --get_project_status shows resource share 50');

# Bob forgets his password: a link by mail (MAIL_COMMAND), a new password.
$w = $bt->web('GET', 'get_passwd.php');
like($w->{content}, qr{<form method="post" action="get_passwd.php">}, 'get_passwd.php: the form');
$w = $bt->web('POST', 'get_passwd.php', form => { email_addr => 'nobody@example.org' });
my $answer = $w->{content};
$w = $bt->web('POST', 'get_passwd.php', form => { email_addr => 'bob@example.org' });
is($w->{content}, $answer, 'the same answer whether or not an account has the address');
my $link;
ok(wait_for(30, sub { ($link) = slurp($mail) =~ m{(reset_password\.php\?token=[0-9a-f]{32})}; $link }), 'a link is mailed');
like(slurp($mail), qr/^To: bob\@example\.org\nSubject: allot project 21: your password\n/m, 'to bob, by MAIL_COMMAND');
unlike(slurp($mail), qr/nobody/, 'and none to the address no account has');
$w = $bt->web('GET', $link);
like($w->{content}, qr{<form method="post" action="reset_password.php">}, 'the link: a form for the new password');
my ($token) = $link =~ /token=([0-9a-f]+)/;
$w = $bt->web('POST', 'reset_password.php', form => { token => $token, passwd => 'staple battery' });
like($w->{content}, qr/Your password is set/, 'reset_password.php: the new password is set');
$w = $bt->web('POST', 'reset_password.php', form => { token => $token, passwd => 'another one' });
like($w->{content}, qr/This link is not valid, or no longer/, 'the link works once');
is($bt->web('GET', 'home.php', cookie => $session)->{status}, 303, 'his session ended with the reset');
like(cmd($B, '--lookup_account', $url, 'bob@example.org', 'staple battery'), qr/^account key: [0-9a-f]{32}$/m,
	'boinccmd --lookup_account takes the new password');
unlike(cmd($B, '--lookup_account', $url, 'bob@example.org', 'battery staple'), qr/account key/, 'and no longer the old one');
# The feed B's replies name (his account's): the reset is in it.
my ($feed) = slurp((glob("$B/sched_reply_*.xml"))[0]) =~ m{<rss_feed>\s*<url>\Q$url\E([^<]+)</url>};
$feed = ($feed // '') =~ s/&amp;/&/gr;
like($bt->http('GET', $feed)->[1], qr{<item>\n<title>[^<]*</title>.*<description>[^<]*The password of your account was reset through a link mailed to you}s,
	"the feed B's replies name ($feed) holds a notice of the reset (his account's own)");

# ---------------------------------------------------------------------------
# The pages volunteers' tools read.
$r = $bt->http('GET', 'server_status.php?xml=1');
like($r->[1], qr{<server_status>.*<results_in_progress>[0-9]+</results_in_progress>.*<users_total>3</users_total>.*<hosts_total>2</hosts_total>}s,
	'server_status.php?xml=1: BOINC\'s XML with the counts');
$r = $bt->http('GET', 'server_status.php');
like($r->[1], qr{<h1>Server status</h1>}, 'server_status.php: the page');
$r = $bt->http('GET', "show_user.php?userid=$alice&format=xml");
my $user_credit = sql("SELECT sum(total_credit) FROM allot.host_credit(ARRAY[$hA]::bigint[])");
like($r->[1], qr{<name>alice</name>\n<total_credit>\Q${\ sprintf('%.6f', $user_credit)}\E</total_credit>},
	'show_user.php?format=xml: her name and allot\'s credit');
unlike($r->[1], qr/example\.org/, 'and not her email address');
$r = $bt->http('GET', "show_host_detail.php?hostid=$hA");
like($r->[1], qr{<th>total credit</th><td>\Q${\ sprintf('%.2f', $credit_A)}\E</td>}, 'show_host_detail.php: the host\'s credit');
my %stats;
for my $f (qw(user.gz host.gz team.gz tables.xml))
{
	$r = $bt->http('GET', "stats/$f");
	is($r->[0], 200, "stats/$f");
	$stats{$f} = $f =~ /\.gz$/ ? memGunzip($r->[1]) // '' : $r->[1];
}
my $cpid = md5_hex(sql("SELECT cross_project_id FROM boinc.account WHERE id = $alice") . 'alice@example.org');
like($stats{'user.gz'}, qr{<user>\n <id>$alice</id>\n <name>alice</name>\n <create_time>[0-9]+</create_time>\n <total_credit>\Q${\ sprintf('%.6f', $user_credit)}\E</total_credit>\n.*<cpid>$cpid</cpid>}s,
	'user.gz: BOINC\'s <users>, her credit, the cross-project id md5(cpid + email)');
like($stats{'host.gz'}, qr{<host>\n <id>$hA</id>\n <total_credit>\Q${\ sprintf('%.6f', $credit_A)}\E</total_credit>},
	'host.gz: the hosts and their credit');
unlike($stats{'host.gz'}, qr/host_cpid|userid|domain_name/, 'and nothing that names a machine or its owner');
like($stats{'team.gz'}, qr{^<\?xml version="1.0" encoding="utf-8"\?>\n<teams>\n</teams>\n$}, 'team.gz: no teams');
like($stats{'tables.xml'}, qr{<nusers_total>3</nusers_total>.*<nhosts_total>2</nhosts_total>.*<name>lines</name>}s,
	'tables.xml: the totals and the app');
$r = $bt->http('GET', 'status');
like($r->[1], qr/farm status/, 'the farm\'s status page is served by this front end too');

for my $path ('show_user.php?userid=1%27--', 'show_host_detail.php?hostid=-1', 'stats/..%2Fkeys%2Fcode_sign_private.pem', 'stats/user.gz.tmp')
{
	$r = $bt->http('GET', $path);
	ok($r->[0] >= 400 && $r->[0] < 500 && $r->[1] !~ /PRIVATE/, "GET /$path: $r->[0]");
}

# ---------------------------------------------------------------------------
# Attacks on the scheduler, and the operator's levers.
# Bob's request naming A's host_cpid, as after a re-attach: a host of his own.
my ($cpid_A) = slurp((glob("$A/sched_request_*.xml"))[0]) =~ m{<host_cpid>([0-9a-f]+)</host_cpid>};
(my $claim = $request) =~ s{<hostid>[0-9]+</hostid>}{<hostid>0</hostid>};
$claim =~ s{<host_cpid>[0-9a-f]*</host_cpid>}{<host_cpid>$cpid_A</host_cpid>};
$r = $bt->http('POST', 'scheduler', $claim);
my ($claimed) = $r->[1] =~ m{<hostid>([0-9]+)</hostid>};
ok($claimed && $claimed != $hA && $claimed != $hB, "bob's client naming A's host_cpid gets a new host ($claimed)");
is(sql("SELECT account_id FROM boinc.host WHERE host_id = $hA"), $alice, 'A stays alice\'s');

# Hosts the test speaks for, over HTTP: bob's, each its own host_cpid.
# ask(CPID, HOST, LISTED, EXTRA): a request of that host (0: a new one),
# asking for 10 s of work, listing LISTED (result names) in
# <other_results>, with EXTRA (reports) before its end; the reply.
sub ask
{
	my ($cpid, $host, $listed, $extra) = @_;
	(my $req = $claim) =~ s{<host_cpid>[0-9a-f]*</host_cpid>}{<host_cpid>$cpid</host_cpid>};
	$req =~ s{<hostid>[0-9]+</hostid>}{<hostid>$host</hostid>};
	$req =~ s{<dont_send_work>1</dont_send_work>}{<dont_send_work>0</dont_send_work>};
	$req =~ s{<cpu_req_secs>[^<]*</cpu_req_secs>}{<cpu_req_secs>10</cpu_req_secs>};
	my $others = join '', map { "<other_result><name>$_</name></other_result>" } @$listed;
	$req =~ s{<other_results>.*?</other_results>}{<other_results>$others</other_results>}s;
	$req =~ s{<result>.*</result>}{}s;    # bob's client's own reports
	$req =~ s{</scheduler_request>}{${\ ($extra // '')}</scheduler_request>};
	return $bt->http('POST', 'scheduler', $req)->[1];
}
# A new host of CPID, sent job J as sending S: (host id, result name).
sub new_host
{
	my ($cpid, $job, $sending) = @_;
	my $reply = ask($cpid, 0, []);
	my ($id) = $reply =~ m{<hostid>([0-9]+)</hostid>};
	my ($name) = $reply =~ m{<result>\n<name>(job${job}_${sending}_[0-9a-f]+)</name>};
	return ($id, $name);
}

# A host that takes a job and uploads its output, then is taken back by
# the operator: aborted at its next request, its upload deleted.
$job{q} = submit('--lines 2');
my ($hC, $q_name) = new_host('feedfacefeedfacefeedfacefeedface', $job{q}, 1);
ok($hC && $q_name, "a host C ($hC) of bob's is sent q as $q_name");
$bt->upload("${q_name}_0", "output of q\n");
ok(-e "$data/upload/$job{q}/1/${q_name}_0", 'C uploads its output');
is(sql("SELECT allot.requeue_job($job{q}) ->> 'was'"), 'in_progress', 'the operator requeues q');
like(ask('feedfacefeedfacefeedfacefeedface', $hC, [$q_name]), qr{<result_abort>\n<name>\Q$q_name\E</name>\n</result_abort>},
	'C, listing q, is told to abort it');
is(sendings($job{q}), "$hC:1:superseded", 'its sending is closed as superseded');
ok(!-e "$data/upload/$job{q}/1", 'and its upload deleted');

# A host that vanishes: q, requeued, goes to D, which uploads part of its
# output and is never heard of again; admin.js sweep closes its sending.
my ($hD, $q2_name) = new_host('deadbeefdeadbeefdeadbeefdeadbeef', $job{q}, 2);
ok($hD && $q2_name, "a host D ($hD) is sent q as sending 2: $q2_name");
make_path("$data/upload/$job{q}/2");
PostgreSQL::Test::Utils::append_to_file("$data/upload/$job{q}/2/${q2_name}_0", 'partial');
# Past its deadline, not yet timed out: a copy that runs may still count.
sql("UPDATE allot.job SET deadline = now() - interval '1 minute' WHERE id = $job{q}");
my $reply = ask('deadbeefdeadbeefdeadbeefdeadbeef', $hD, [$q2_name]);
like($reply, qr{<result_abort_if_not_started>\n<name>\Q$q2_name\E</name>\n</result_abort_if_not_started>},
	'D, listing q past its deadline, is told to abort it if it has not started');
unlike($reply, qr{<result_abort>}, 'not outright');
is(sendings($job{q}), "$hC:1:superseded $hD:2:open", 'its sending stays open');
sql("UPDATE allot.job SET max_total_results = 1 WHERE id = $job{q}");
is(sql("SELECT allot.time_out_host($hD)"), '1', 'D times out, and is never heard of again');
is(sql("SELECT state FROM allot.job WHERE id = $job{q}"), 'error', 'q gives up: one sending since its requeue is its max_total_results');
like(($bt->admin('sweep'))[0], qr/^\Q$q2_name\E: superseded, its uploads deleted\n1 sending\(s\) swept$/m, 'admin.js sweep closes its sending');
ok(!-e "$data/upload/$job{q}", 'and deletes its partial upload');

# merge-hosts: C is B come back under a new id.
like(($bt->admin('merge-hosts', $hA, $hC))[0], qr/host $hA is account ${alice}'s and host $hC account [0-9]+'s: not merged/,
	'merge-hosts refuses hosts of two accounts');
like(($bt->admin('merge-hosts', $hB, $hC))[0], qr/host $hC merged into host $hB: [0-9]+ job\(s\) and 1 report\(s\) in allot, 1 result\(s\) in the front end/,
	'merge-hosts B C: allot.merge_host and the front end\'s rows');
is(sql("SELECT (SELECT count(*) FROM allot.host WHERE id = $hC) || ' ' || (SELECT count(*) FROM boinc.host WHERE host_id = $hC)
          || ' ' || (SELECT host_id FROM boinc.result WHERE name = '$q_name')"), "0 0 $hB", 'C is gone; its result is B\'s');

# A forged output, reported as a success and found invalid: deleted.
$job{f} = submit('--lines 1');
my ($hE, $f_name) = new_host('0badc0de0badc0de0badc0de0badc0de', $job{f}, 1);
ok($hE && $f_name, "a host E ($hE) is sent f");
my $forged = "forged\n";
$bt->upload("${f_name}_0", $forged);
ask('0badc0de0badc0de0badc0de0badc0de', $hE, [], "<result><name>$f_name</name><final_elapsed_time>1</final_elapsed_time>
<exit_status>0</exit_status><state>5</state><file_info><name>${f_name}_0</name><nbytes>7</nbytes>
<md5_cksum>${\ md5_hex($forged)}</md5_cksum></file_info></result>");
is(sendings($job{f}), "$hE:1:success", 'E reports it as a success');
my $check = "$work/no-forgeries";
PostgreSQL::Test::Utils::append_to_file($check, "#!/bin/sh\n! grep -q forged \"\$@\"\n");
chmod 0755, $check;
like(($bt->admin('validate', '--check', $check))[0], qr/^job $job{f} \(\Q$f_name\E\): invalid: /m, 'admin.js validate --check finds it invalid');
is(sendings($job{f}), "$hE:1:invalid", 'the front end records it');
ok(!-e "$data/upload/$job{f}", 'and its output is deleted');

# A workload whose app version has no executable in the front end (say, an
# app the farm runs on hosts of its own): allot may choose its jobs for a
# BOINC host, and the front end must send what it can rather than nothing.
# Workload 2 is far behind its share, so allot picks it first.
sql(q{INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (2, 'elsewhere', 2.5e11);
INSERT INTO allot.app_version (id, app_id, platform, resource, ncpus) VALUES (2, 2, 'x86_64-pc-linux-gnu', 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES (2, 'elsewhere', 'elsewhere', 2, 1e6, '1 day');
INSERT INTO allot.job (workload_id) VALUES (2)});
$job{x} = sql('SELECT max(id) FROM allot.job WHERE workload_id = 2');
$job{g} = submit('--lines 1');
# What a host of the front end holds: its jobs' workloads.
sub workloads_of
{
	my ($host) = @_;
	return sql("SELECT string_agg(j.workload_id::text, ' ' ORDER BY j.id) FROM boinc.result r JOIN allot.job j ON j.id = r.job_id
	            WHERE r.host_id = $host");
}
$reply = ask('0ddba110ddba110ddba110ddba110dd0', 0, []);
my ($hG) = $reply =~ m{<hostid>([0-9]+)</hostid>};
ok($hG && $reply =~ m{<result>}, "a host G ($hG) is sent a job, though allot chose workload 2's job for it first");
is(workloads_of($hG), '1', 'a job of workload 1');
like($bt->server_log, qr/\[HOST#$hG\] allot app version\(s\) 2 have no executable .*workload\(s\) 2 not sent to hosts of x86_64-pc-linux-gnu for 60 s/,
	'the front end says why it left workload 2 out');
is(sql("SELECT state || ' ' || (SELECT count(*) FROM boinc.result WHERE job_id = $job{x}) FROM allot.job WHERE id = $job{x}"), 'unsent 0',
	'workload 2\'s job was never sent: allot\'s choice was undone, no result was made');
$reply = ask('ca11ab1eca11ab1eca11ab1eca11ab1e', 0, []);
my ($hH) = $reply =~ m{<hostid>([0-9]+)</hostid>};
ok($hH && $reply =~ m{<result>} && workloads_of($hH) eq '1', "a host H ($hH) asking then is sent a job of workload 1 too");
unlike(join("\n", grep { /\[HOST#$hH\]/ } split /\n/, $bt->server_log), qr/no executable/,
	'and is not offered workload 2\'s: the front end leaves it out of the request');
is(sql("SELECT state FROM allot.job WHERE id = $job{x}"), 'unsent', 'workload 2\'s job is still unsent');

# ---------------------------------------------------------------------------
# An account may make NEW_HOSTS_PER_DAY (8) hosts a day, and have
# MAX_HOSTS_PER_ACCOUNT (9).  Bob has made 6 today that are still his.
is(sql("SELECT count(*) FROM boinc.host WHERE account_id = $bob"), '6', 'bob has 6 hosts, all made today');
my @more = map { (ask(sprintf('%032x', 0xb0b0 + $_), 0, []) =~ m{<hostid>([0-9]+)</hostid>})[0] } 1 .. 2;
ok(@more == 2 && !grep({ !defined } @more), "two more are made (@{[ map { $_ // '-' } @more ]})");
$reply = ask(sprintf('%032x', 0xb0b0 + 3), 0, []);
like($reply, qr{<message priority="notice">No new computer for this account: This account added 8 computers in the last 24 hours, the most it may \(8\)\.</message>},
	'the ninth of the day is refused, and the volunteer told why');
ok($reply !~ /<hostid>/ && $reply =~ m{<request_delay>([0-9]+)</request_delay>} && $1 > 80000,
	'no host, and a delay until the first of the day is a day old');
sql("UPDATE boinc.host SET created_at = created_at - interval '2 days' WHERE account_id = $bob");
like(ask(sprintf('%032x', 0xb0b0 + 4), 0, []), qr{<hostid>[0-9]+</hostid>}, 'two days later a ninth is made');
like(ask(sprintf('%032x', 0xb0b0 + 5), 0, []),
	qr{<message priority="notice">No new computer for this account: This account has 9 computers, the most it may have \(9\); ask the project to allow more\.</message>},
	'and a tenth is refused: the most an account may have');
is(sql("SELECT count(*) FROM boinc.host WHERE account_id = $bob"), '9', 'bob has 9 hosts');
unlike(ask('deadbeefdeadbeefdeadbeefdeadbeef', $hD, []), qr/No new computer/, 'a host bob has is still served');

# ---------------------------------------------------------------------------
# An account manager attaches C, a bare client: it makes carol's account on
# the project, sets her resource share, reads it back, and tells C to
# attach (boinc_account_manager.js).
my $am_port = $port + 1500;
my $am_log = "$work/account_manager.log";
$bt->spawn('manager', "$work/account_manager.out", {}, $bt->in_ns, $bt->tools->{node}, "$FindBin::RealBin/boinc_account_manager.js",
	$am_port, $url, encode_json({ 'carol@example.org' => { password => 'carol sings', name => 'carol', resource_share => 40 } }), $am_log);
ok(wait_for(30, sub { slurp($am_log) =~ /listening/ }), 'the account manager is up') or diag slurp("$work/account_manager.out");
my $C = $bt->client('C', ncpus => 1, gui_rpc_port => $port + 1002, notices => 1);
my $joined = cmd($C, '--join_acct_mgr', "http://127.0.0.1:$am_port/", 'carol@example.org', 'carol sings');
unlike($joined, qr/poll status: (?!operation in progress)/, 'boinccmd --join_acct_mgr: C joins the account manager') or diag $joined;
ok(wait_for(60, sub { host($C) }), 'C is attached to the project, and has a host id: ' . host($C));
my $carol = sql("SELECT id || ' ' || name || ' ' || resource_share FROM boinc.account WHERE email_addr = 'carol\@example.org'");
like($carol, qr/^[0-9]+ carol 40$/, 'carol\'s account, made by the manager, with the resource share it set');
($carol) = $carol =~ /^([0-9]+)/;
like(slurp($am_log), qr/create_account\.php: a key for carol\@example\.org\nam_set_info\.php: success\nam_get_info\.php: id $carol, resource_share 40\n/,
	'the manager\'s calls: create_account.php, am_set_info.php, am_get_info.php');
is(sql('SELECT account_id FROM boinc.host WHERE host_id = ' . host($C)), $carol, 'C is carol\'s host');
ok(wait_for(60, sub { cmd($C, '--get_project_status') =~ /resource share: 40\.000000/ }),
	'C shows the resource share the manager set on the project');
ok(wait_for(60, sub { cmd($C, '--get_notices', '0') =~ /\Q$news\E/ }), 'and the project\'s news');
is($bt->stop('manager'), 0, 'the account manager exits with status 0');

# ---------------------------------------------------------------------------
# A long task of the tail (issue 32).  The app reports no app units, so they
# cannot say how long its tasks may run; l is estimated at 2 s and runs
# three times that.  Before 0.7.0 the bound (rsc_fpops_bound) was the
# estimate, past which the client aborts a task ("exceeded elapsed time
# limit"); now it is allot.default_bound_factor times the estimate, and l
# finishes.  A's failures above halved its daily quota down to 1: the
# operator gives it back; C, idle, takes no work meanwhile.
my $flag_l = "$work/flag-l";
hold($C);
sql("UPDATE allot.host_app_version SET quota = 100 WHERE host_id = $hA");
$job{l} = submit("--lines 2 --wait-for $flag_l");
my $l_one = sql("SELECT est_secs FROM allot.estimate_job($hA, $job{l})");
sql("UPDATE allot.job SET predicted_app_units = 2.0 / $l_one WHERE id = $job{l}");
ok(give($A, $job{l}), 'A is sent l') or diag sendings($job{l});
$name{l} = result_name($job{l}, $hA);
my $l_est = sql("SELECT est_secs FROM allot.job WHERE id = $job{l}");
ok($l_est > 0 && $l_est < 5, "l is estimated at $l_est s");
ok(wait_for(60, sub { slurp("$A.log") =~ /Starting task \Q$name{l}\E/ }), 'A runs l');
sleep(3 * ($l_est < 5 ? $l_est : 5));
PostgreSQL::Test::Utils::append_to_file($flag_l, '');
ok(reported($A, sub { sendings($job{l}) eq "$hA:1:success" }), 'l runs three times its estimate and succeeds')
  or diag sendings($job{l});
unlike(slurp("$A.log"), qr/Aborting task \Q$name{l}\E/, 'the client never aborted it');

# ---------------------------------------------------------------------------
show_log('front end', "$work/server.log", qr/HOST#|upload|lookup|create|refused|lost/);
show_log("client A (host $hA)", "$A.log", qr/Scheduler request|got ack|Starting task|Computation for task|Giving up|Aborting|Resetting|attach|detach|upload|abort/i);
show_log("client B (host $hB)", "$B.log", qr/Scheduler request|got ack|Starting task|Computation for task|Giving up|Aborting/i);
for my $name (qw(A B C server))
{
	is($bt->stop($name), 0, "$name exits with status 0 on SIGTERM");
}
is(sql('SELECT count(*) FROM allot.check_invariants()'), '0', 'check_invariants() is empty');
note sprintf('the whole test took %.0f s', time - $started);
$node->stop;
done_testing();
