# The farm status page (examples/web/status.js) in a real browser.
#
# The test builds a farm (assignment and job workloads, hosts, reports,
# credit, three hours of transitioner runs; a host and a workload named
# like HTML attacks), starts the example web layer with its API logged in
# as a member of allot_web and its status page as a member of
# allot_monitor, its clock an hour fast, and loads GET /status in headless
# Chromium (scripts/screenshot.sh; Debian's chromium package).  It checks:
#   - every number the page shows (the exact value in data-v, and the text)
#     against allot's status views, read in SQL; quantities written with a
#     space before their unit ("0 FLOPS"), and a workload with neither a
#     share nor a fair share marked idle rather than "0.0%, 0.0%";
#   - the farm's settings (fairness, assignment TTL, REC half-life, engine
#     balancing), the TTL also beside the hosts it counts;
#   - the hosts table: the hosts at work, those with jobs in progress and
#     those on an assignment both, rather than only the hosts seen last;
#   - "last seen N s ago" on the database's clock, not the web server's
#     (an hour fast here), and a time ahead of it said to be so;
#   - a workload finished two hours ago listed and marked finished, one
#     finished three days ago not;
#   - the share history chart: for each kind, a line of share and one of
#     fair share per workload, each point the mean of the view's rows over
#     its bucket (worked out here from allot.status_share_history), a pause
#     seen in the fair share, a gap in the transitioner's runs a break;
#   - every host reachable beyond the first STATUS_HOSTS: in Chromium, a
#     search typed and submitted, then the pages followed by their links,
#     the refresh keeping the page; over HTTP, searches by name and id and
#     pages of a given size;
#   - hostile query strings (bad page numbers, huge limits, SQL-ish
#     searches, unknown or repeated parameters) refused with 400 and a
#     sentence, the value neither echoed nor logged;
#   - that the page fits a window 1,280 px wide: no horizontal scroll of
#     the page or of any of its tables (measured in the browser, over the
#     DevTools protocol: test/t/DevToolsPage.pm);
#   - that the page refreshed itself from the server while it was open;
#   - that names are shown as text: no injected element, no script run;
#   - the screenshot: a PNG of the window's size, decoded here, with many
#     colours, a good part of it not its background colour, both bar
#     colours of the share-vs-fair chart and the history's first two line
#     colours;
#   - over plain HTTP: its security headers, 405 for POST, 400 for an
#     unknown part, and a clear 500 once its login loses allot_monitor.
# The screenshot stays in the test's log dir (tmp_check/log).  The server is
# killed at the end, also when the test dies.
use strict;
use warnings;
use Compress::Zlib qw(uncompress);
use FindBin;
use lib $FindBin::RealBin;
use DevToolsPage qw(evaluate_in_page evaluate_in_pages);
use FrontEnds qw(install_front_ends);
use HTTP::Tiny;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $node = PostgreSQL::Test::Cluster->new('status');
$node->init;
$node->start;
sub sql { return $node->safe_psql('postgres', $_[0]); }

sql('CREATE EXTENSION allot');
# The farm's own assignment TTL, which the page must show.
sql(q{ALTER DATABASE postgres SET allot.assignment_ttl = '1h'});

# ---------------------------------------------------------------------------
# The farm.  Virtual time is now: the page measures ages against the
# database's clock.
my $evil_host = q{<img src=x onerror="document.title='pwned'">};
my $evil_workload = q{</td><script>document.title='pwned'</script>};
(my $evil_host_sql = $evil_host) =~ s/'/''/g;
(my $evil_workload_sql = $evil_workload) =~ s/'/''/g;
sql(qq{
INSERT INTO allot.workload (id, name, engine, throughput, priority, state) VALUES
    (1, 'Stockfish: new eval', 'Stockfish', 2000, 0, 'active'),
    (2, '$evil_workload_sql', 'Ethereal', 1000, 0, 'active'),
    (3, 'Ethereal: long shot', 'Ethereal', 1000, -1, 'active');
-- Finished three days ago, and two hours ago: only the second is listed.
INSERT INTO allot.workload (id, name, engine, throughput, priority, state, finished_at) VALUES
    (4, 'Berserk: old', 'Berserk', 1000, 0, 'finished', now() - interval '3 days'),
    (5, 'Berserk: just done', 'Berserk', 1000, 0, 'finished', now() - interval '2 hours');
INSERT INTO allot.host (id, name, os, threads)
SELECT g, 'worker-' || g, 'Linux', 4 * g FROM generate_series(1, 6) g;
SELECT count(*) FROM generate_series(1, 6) g, LATERAL allot.assign_workload(g, seed => g);
-- Host 6 checked in with a clock 5 min ahead of the database's; host 7,
-- idle, was seen 5 min ago.
UPDATE allot.assignment SET seen_at = now() + interval '5 min' WHERE host_id = 6;
INSERT INTO allot.host (id, name, os, threads, last_seen) VALUES (7, 'idle-7', 'Linux', 2, now() - interval '5 min');

INSERT INTO allot.app (id, name) VALUES (1, 'folding'), (2, 'climate');
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (1, 1, 'cpu', 1, 0), (2, 1, 'nvidia', 0, 1), (3, 2, 'cpu', 1, 0);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (11, 'folding batch', 'folding', 1, 1000, '2 days'),
    (12, 'climate run', 'climate', 2, 3000, '2 days');
INSERT INTO allot.job (workload_id) SELECT 11 FROM generate_series(1, 20);
INSERT INTO allot.job (workload_id) SELECT 12 FROM generate_series(1, 20);
INSERT INTO allot.host (id, name, os, threads, cpu_flops)
SELECT g, CASE WHEN g = 12 THEN '$evil_host_sql' ELSE 'volunteer-' || g END, 'Linux', 4, 2e9
  FROM generate_series(11, 14) g;
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (11, 'nvidia', 1, 5e12);
SELECT count(allot.request_work(g, '{"resources": {"cpu": {"req_instances": 2},
                                                  "nvidia": {"req_instances": 1}}}', seed => g))
  FROM generate_series(11, 14) g;
-- A job workload that has sent nothing yet: 0 FLOPS in use, and a fair share.
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound) VALUES
    (13, 'folding, next batch', 'folding', 1, 1000, '2 days');
INSERT INTO allot.job (workload_id) SELECT 13 FROM generate_series(1, 5);
});
# Reports: the two oldest jobs in progress succeed, one fails; the
# successes are validated and credited at 2 credits a job.
sql(q{
SELECT count(allot.report_job(host_id, id, 'success', 1, 1800))
  FROM (SELECT host_id, id FROM allot.job WHERE state = 'in_progress' ORDER BY id LIMIT 2) j;
SELECT count(allot.report_job(host_id, id, 'error'))
  FROM (SELECT host_id, id FROM allot.job WHERE state = 'in_progress' ORDER BY id LIMIT 1) j;
UPDATE allot.app SET est_flops_per_au = 2 * 4.32e11;
SELECT count(allot.validate_job(id, true)) FROM allot.job WHERE state = 'done';
SELECT allot.run_transitioner();
SELECT allot.run_transitioner();
});
is(sql(q{SELECT count(*) FROM allot.job WHERE credit > 0}), 2, 'fixture: two jobs have credit');
is(sql(q{SELECT string_agg(credited::text, ',' ORDER BY run) FROM allot.status_transitioner}), '2,0',
	'fixture: the first run credited the two jobs');
# Three hours of the transitioner, a run a minute, as pg_cron runs it
# (virtual time, ending a minute ago): workload 1 paused from 120 to 60 min
# ago, and no run from 100 to 80 min ago.
sql(q{
DO $$
BEGIN
    FOR k IN REVERSE 180..1 LOOP
        IF k = 120 THEN UPDATE allot.workload SET state = 'paused' WHERE id = 1; END IF;
        IF k = 60 THEN UPDATE allot.workload SET state = 'active' WHERE id = 1; END IF;
        CONTINUE WHEN k BETWEEN 80 AND 100;
        PERFORM allot.run_transitioner(now() - make_interval(mins => k));
    END LOOP;
END
$$;
-- Six minutes when no job workload was sampled (as when none is active):
-- the job lines have no point there, rather than a 0.
DELETE FROM allot.share_history
 WHERE jobs AND sampled_at > now() - interval '171 minutes' AND sampled_at <= now() - interval '165 minutes';
});
cmp_ok(sql(q{SELECT count(DISTINCT sampled_at) FROM allot.share_history}), '>=', 159,
	'fixture: the history holds the 159 minutes of those runs');
is(sql(q{SELECT count(*) FROM allot.check_invariants()}), 0, 'fixture: check_invariants() is empty');

sql('CREATE ROLE web LOGIN IN ROLE allot_web');
sql('CREATE ROLE monitor LOGIN IN ROLE allot_monitor');

# The queries docs/status-page.md shows run as the monitor, on this farm.
{
	my @queries = grep { /^SELECT/ } slurp_file("$ENV{TESTDIR}/../docs/status-page.md") =~ /^```sql\n(.*?)^```/gms;
	ok(@queries >= 2, 'docs/status-page.md shows queries of the views (' . scalar(@queries) . ')');
	for my $query (@queries)
	{
		my ($out, $err) = ('', '');
		$node->psql('postgres', $query, stdout => \$out, stderr => \$err, extra_params => [ '-U', 'monitor' ],
			on_error_stop => 1);
		is($err, '', 'as the monitor, the docs\' query runs: ' . (split /\n/, $query)[0]);
		like($out, qr/\S/, 'and returns rows');
	}
}

# ---------------------------------------------------------------------------
# The web layer, installed as a reader installs it (FrontEnds.pm), in a temp
# dir.
my ($examples, $installed, $npm_said) = install_front_ends(PostgreSQL::Test::Utils::tempdir('web'));
ok($installed, 'npm ci installs the packages of examples/package-lock.json') or diag($npm_said);
my $webdir = "$examples/web";
# The web server's clock runs an hour fast: the page's ages must not move.
PostgreSQL::Test::Utils::append_to_file("$webdir/fast_clock.js", q{
'use strict';
const RealDate = Date;
const skewMs = 3600 * 1000;
global.Date = class extends RealDate {
  constructor(...args) { if (args.length === 0) super(RealDate.now() + skewMs); else super(...args); }
  static now() { return RealDate.now() + skewMs; }
};
});

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $base = "http://127.0.0.1:$port";
my $logdir = $PostgreSQL::Test::Utils::log_path;
my $server_log = "$logdir/030_status_page_server.log";
my $server_pid;
END
{
	if ($server_pid)
	{
		local $?;
		kill 'KILL', $server_pid;
		waitpid $server_pid, 0;
	}
}
$server_pid = fork() // die "fork: $!";
if ($server_pid == 0)
{
	delete @ENV{qw(PGHOSTADDR PGSERVICE PGSERVICEFILE PGPASSWORD PGOPTIONS PGAPPNAME)};
	@ENV{qw(PORT HOST PGHOST PGPORT PGUSER PGDATABASE STATUS_PGUSER STATUS_REFRESH_SECS STATUS_HOSTS
		  STATUS_HISTORY_HOURS NODE_OPTIONS)} =
	  ($port, '127.0.0.1', $node->host, $node->port, 'web', 'postgres', 'monitor', 1, 4, 4,
		"--require $webdir/fast_clock.js");
	open STDOUT, '>>', $server_log or POSIX::_exit(126);
	open STDERR, '>&', \*STDOUT or POSIX::_exit(126);
	chdir $webdir or POSIX::_exit(126);
	exec 'node', 'server.js' or POSIX::_exit(127);
}

my $http = HTTP::Tiny->new(timeout => 60);
{
	my $deadline = time + 120;
	my $status = 599;
	while ($status == 599 && time < $deadline)
	{
		if (waitpid($server_pid, POSIX::WNOHANG) == $server_pid)
		{
			$server_pid = undef;
			die "the server exited (status $?); see $server_log";
		}
		sleep 0.1;
		$status = $http->get("$base/status")->{status};
	}
	is($status, 200, "GET /status answers 200 on port $port") or die "see $server_log";
}

# ---------------------------------------------------------------------------
# Plain HTTP.
my $res = $http->get("$base/status");
like($res->{headers}{'content-type'}, qr{^text/html; charset=utf-8$}, 'the page is HTML');
like($res->{headers}{'content-security-policy'}, qr/default-src 'none'.*script-src 'nonce-/,
	'a Content-Security-Policy lets only the page\'s own script and style run');
is($http->request('POST', "$base/status", { content => '{}' })->{status}, 405, 'POST /status: 405');
is($http->get("$base/status?part=%3Cx%3E")->{status}, 400, 'an unknown part: 400');
$res = $http->get("$base/status?part=main");
ok($res->{status} == 200 && $res->{content} !~ /<html/ && $res->{content} =~ /id="workloads"/,
	'?part=main is the part that refreshes, without the page around it');
is(sql(q{SELECT string_agg(DISTINCT usename, ',') FROM pg_stat_activity
          WHERE application_name = 'allot-status'}),
	'monitor', 'the page reads the database as monitor');

# ---------------------------------------------------------------------------
# The browser.  Timers run for 3.5 s of virtual time before the screenshot
# and the DOM are taken: the page refreshes itself every second meanwhile.
my $png = "$logdir/030_status_page.png";
my $dom_file = "$logdir/030_status_page.html";
my ($width, $height) = (900, 1600);
ok( run_log(
		[
			"$ENV{TESTDIR}/../scripts/screenshot.sh", '--size', "${width}x$height",
			'--wait', 3500, '--dom', $dom_file, "$base/status", $png
		]),
	'headless Chromium loads the page, takes a screenshot and dumps the DOM');
my $dom = -e $dom_file ? slurp_file($dom_file) : '';

like($dom, qr/<main data-refresh="1" data-refreshed="[1-9][0-9]*">/,
	'the page refreshed itself while it was open');
like(slurp_file($server_log), qr{GET /status\?part=main 200}, 'from the server, through ?part=main');

# Names are text.
unlike($dom, qr/<img/, 'no element injected through a host name');
like($dom, qr{<title>allot farm status</title>}, 'and no injected script ran (it would set the title)');
like($dom, qr/&lt;img src=x onerror="document.title='pwned'"&gt;/, 'the host name is shown as text');
like($dom, qr{&lt;/td&gt;&lt;script&gt;}, 'the workload name is shown as text');
is(scalar(() = $dom =~ /<script\b/g), 1, 'the page has its one script and no other');

# cells(DOM, ROW_ATTR): { id => { key => [data-v, text] } } for the rows of
# a table; the page writes each cell as <td class=".." data-k="KEY"
# data-v="VALUE">TEXT</td> (data-v left out for NULL; an idle workload's
# share cell spans two columns and carries data-fair too).
sub unescape
{
	my ($s) = @_;
	$s =~ s/&lt;/</g;
	$s =~ s/&gt;/>/g;
	$s =~ s/&quot;/"/g;
	$s =~ s/&#(\d+);/chr($1)/ge;
	$s =~ s/&amp;/&/g;
	return $s;
}

sub cells
{
	my ($html, $attr) = @_;
	my %rows;
	while ($html =~ m{<tr $attr="(\d+)"[^>]*>(.*?)</tr>}gs)
	{
		my ($id, $row) = ($1, $2);
		while ($row =~ m{<td class="[\w ]+"(?: colspan="\d+")? data-k="(\w+)"(?: data-v="([^"]*)")?(?: data-ago="([^"]*)")?[^>]*>(.*?)</td>}gs)
		{
			$rows{$id}{$1} = [ defined $2 ? unescape($2) : undef, unescape($4), $3 ];
		}
	}
	return \%rows;
}

# The views, read as the page reads them: "id|column|value" lines.
sub view_rows
{
	my ($query, $id, @columns) = @_;
	my %rows;
	for my $line (split /\n/, sql($query))
	{
		my @f = split /\|/, $line, -1;
		my %r;
		@r{ $id, @columns } = @f;
		$rows{ $r{$id} } = \%r;
	}
	return \%rows;
}

sub same_number
{
	my ($a, $b) = @_;
	return 0 if !defined $a || !defined $b || $a eq '' || $b eq '';
	return abs($a - $b) <= 1e-9 * (abs($a) + abs($b)) + 1e-12;
}

sub with_commas
{
	my $n = reverse shift;
	$n =~ s/(\d{3})(?=\d)/$1,/g;
	return scalar reverse $n;
}

# The instant the page was read at: the database's now(), as text.
my ($page_now) = $dom =~ m{<time data-v="[^"]*" data-now="([^"]+)">};
ok(defined $page_now, 'the page says when the database read it: ' . ($page_now // 'not'));
$page_now //= 'now';

# age_text(SECONDS): the page's words for an age (status_render.js, age).
sub age_text
{
	my ($secs) = @_;
	my $r = sprintf('%.0f', $secs);
	return "@{[-$r]} s ahead of the server's clock" if $r < 0;
	return "$r s ago" if $r < 90;
	return sprintf('%.0f min ago', $r / 60) if $r < 90 * 60;
	return sprintf('%.0f h ago', $r / 3600) if $r < 36 * 3600;
	return sprintf('%.0f d ago', $r / 86400);
}

# Workloads: those not finished, finished within a day, or holding hosts
# or jobs.
my @wcols = qw(hosts threads peak_flops share fair_share jobs_unsent jobs_in_progress jobs_done jobs_error);
my $want = view_rows(
	q{SELECT workload_id, hosts, threads, peak_flops, share, fair_share, jobs_unsent,
	         jobs_in_progress, jobs_done, jobs_error
	    FROM allot.status_workload
	   WHERE state <> 'finished' OR hosts > 0 OR jobs_in_progress > 0
	      OR finished_at > now() - interval '1 day'},
	'workload_id', @wcols);
my $shown = cells($dom, 'data-workload-id');
is(join(',', sort { $a <=> $b } keys %$shown), join(',', sort { $a <=> $b } keys %$want),
	'the workloads table lists the workloads the view has (not the one finished 3 days ago)');
ok(exists $want->{5} && !exists $want->{4}, 'fixture: workload 5 finished within the day, 4 before');
{
	my ($row) = $dom =~ m{(<tr data-workload-id="5"[^>]*>.*?</tr>)}s;
	my $ago = sql(qq{SELECT extract(epoch FROM '$page_now'::timestamptz - finished_at) FROM allot.workload WHERE id = 5});
	like($row // '', qr{^<tr data-workload-id="5" class="finished">.*<td class="t" data-k="state" data-v="finished" data-ago="([^"]+)">finished 2 h ago</td>}s,
		'workload 5 is marked finished, "finished 2 h ago"');
	my ($shown_ago) = ($row // '') =~ /data-ago="([^"]+)"/;
	ok(same_number($shown_ago, $ago), "its age is the database's: $ago s");
}
# A workload with neither a share nor a fair share: one cell, "idle", that
# keeps both values (data-v and data-fair).
my @idle = grep { $want->{$_}{share} == 0 && $want->{$_}{fair_share} == 0 } sort keys %$want;
ok(@idle >= 1, 'fixture: a workload is idle (' . join(',', @idle) . ')');
my @bad;
for my $id (sort keys %$want)
{
	my ($idle_cell) = $dom =~ m{<tr data-workload-id="$id"[^>]*>.*?(<td [^>]*data-k="share"[^>]*>[^<]*</td>)}s;
	my $marked = ($idle_cell // '') =~ /class="t idle" colspan="2" data-k="share" data-v="0" data-fair="0"[^>]*>idle</;
	push @bad, "$id: " . ($marked ? 'marked idle, but it is not' : 'not marked idle')
	  if $marked != scalar(grep { $_ eq $id } @idle);
	push @bad, "$id: an idle workload still shows a fair share" if $marked && exists $shown->{$id}{fair_share};
	for my $k (@wcols)
	{
		my $v = $want->{$id}{$k};
		next if $v eq '' && ($k eq 'threads' || $k eq 'peak_flops') && !exists $shown->{$id}{$k};
		next if $marked && $k =~ /share/;
		my ($got, $text) = @{ $shown->{$id}{$k} // [] };
		if ($v eq '')
		{
			push @bad, "$id.$k: shown $got" if defined $got;
			next;
		}
		push @bad, "$id.$k: view $v, page " . ($got // 'nothing') unless same_number($got, $v);
		my $expect =
		    $k =~ /share/ ? sprintf('%.1f%%', 100 * $v)
		  : $k eq 'peak_flops' ? undef
		  :                      with_commas($v);
		push @bad, "$id.$k: text '$text', not '$expect'" if defined $expect && $text ne $expect;
		push @bad, "$id.$k: text '$text', not a number, a space and [prefix]FLOPS"
		  if $k eq 'peak_flops' && $text !~ /^(0|[0-9][0-9.]*) [kMGTPEZY]?FLOPS$/;
	}
}
is(join('; ', @bad), '', 'each workload\'s hosts, threads or FLOPS, shares and job counts are the view\'s; '
	  . 'idle workloads (' . join(',', @idle) . ') marked idle');
ok(grep({ $_ > 0 } map { $want->{$_}{share} } keys %$want) >= 3, 'three workloads or more have a share');
is($shown->{13}{peak_flops}[1], '0 FLOPS', 'a job workload with nothing in progress: 0 FLOPS');
unlike($dom =~ s/<[^>]*>/ /gr, qr/[0-9][kMGTPEZY]?FLOPs?\b/, 'no quantity without a space before its unit');

# The chart: one pair of bars per workload with a share or a fair share.
my %bars;
while ($dom =~ m{<g data-workload-id="(\d+)">.*?<rect class="share"[^>]* data-v="([^"]*)"}gs)
{
	$bars{$1} = $2;
}
my @charted = grep { $want->{$_}{share} > 0 || $want->{$_}{fair_share} > 0 } keys %$want;
is(join(',', sort { $a <=> $b } keys %bars), join(',', sort { $a <=> $b } @charted),
	'the chart has a bar for each workload with a share or a fair share');
is(scalar(grep { !same_number($bars{$_}, $want->{$_}{share}) } keys %bars), 0,
	'and each bar is the view\'s share');

# Hosts: four (STATUS_HOSTS=4), the hosts at work first: up to half of
# them with jobs in progress (the most peak FLOPS first), the rest on a
# counted assignment (the most threads first), either kind taking the
# other's places when it has fewer; then the hosts seen last.
my $limit = 4;
my %kind = (
	jobs => [ split /\n/, sql(qq{SELECT host_id FROM allot.status_host WHERE jobs_in_progress > 0
	                             ORDER BY peak_flops_in_progress DESC, credit DESC, host_id LIMIT $limit}) ],
	assigned => [ split /\n/, sql(qq{SELECT host_id FROM allot.status_host WHERE assignment_counted
	                                 ORDER BY threads DESC, last_seen DESC NULLS LAST, host_id LIMIT $limit}) ],
	seen => [ split /\n/, sql(qq{SELECT host_id FROM allot.status_host
	                             ORDER BY last_seen DESC NULLS LAST, host_id LIMIT $limit}) ]);
my $half = int(($limit + 1) / 2);
my $room = $limit - @{ $kind{assigned} };
my $n_jobs = @{ $kind{jobs} };
$n_jobs = ($half > $room ? $half : $room) if $n_jobs > ($half > $room ? $half : $room);
my @listed = @{ $kind{jobs} }[ 0 .. $n_jobs - 1 ];
for my $id (@{ $kind{assigned} }, @{ $kind{seen} })
{
	push @listed, $id if @listed < $limit && !grep { $_ eq $id } @listed;
}
ok($n_jobs >= 1 && @listed > $n_jobs, "fixture: hosts at work of both kinds ($n_jobs with jobs)");
is(join(',', $dom =~ /<tr data-host-id="(\d+)">/g), join(',', @listed),
	'the hosts table lists the hosts at work: with jobs (most peak FLOPS first), then on an assignment');
my @hcols = qw(last_seen workload_id jobs_in_progress credit);
$want = view_rows(
	q{SELECT host_id, extract(epoch FROM last_seen), workload_id, jobs_in_progress, credit
	    FROM allot.status_host WHERE host_id IN (} . join(',', @listed) . ')',
	'host_id', @hcols);
$shown = cells($dom, 'data-host-id');
@bad = ();
for my $id (keys %$want)
{
	my $w = $want->{$id};
	my $s = $shown->{$id};
	# the page keeps milliseconds of an ISO 8601 UTC instant
	my $seen = $s->{last_seen}[0] // '';
	my $epoch = $seen =~ /^[0-9T:.Z-]+$/ ? sql("SELECT extract(epoch FROM '$seen'::timestamptz)") : -1;
	push @bad, "$id.last_seen: $seen" unless abs($epoch - $w->{last_seen}) < 0.001;
	# its age, on the database's clock at the page's now (not the web
	# server's, an hour fast), and in words
	my $ago = sql(qq{SELECT extract(epoch FROM '$page_now'::timestamptz - last_seen)
	                   FROM allot.status_host WHERE host_id = $id});
	push @bad, "$id.last_seen: $ago s ago, shown " . ($s->{last_seen}[2] // 'nothing')
	  unless same_number($s->{last_seen}[2], $ago);
	push @bad, "$id.last_seen: '$s->{last_seen}[1]', not '" . age_text($ago) . "'"
	  unless $s->{last_seen}[1] eq age_text($ago);
	push @bad, "$id.workload_id" unless ($s->{workload_id}[0] // '') eq $w->{workload_id};
	push @bad, "$id.jobs_in_progress" unless ($s->{jobs_in_progress}[1] // '') eq $w->{jobs_in_progress};
	push @bad, "$id.credit: " . ($s->{credit}[1] // '') unless ($s->{credit}[1] // '') eq sprintf('%.2f', $w->{credit});
}
is(join('; ', @bad), '', 'each host\'s last seen (its age too), assignment, jobs and credit are the view\'s');
like($dom, qr{<tr data-host-id="6"><td [^>]*>6</td><td [^>]*>worker-6</td><td class="n" data-k="last_seen" [^>]*>[0-9]+ s ahead of the server's clock</td>},
	'host 6, which checked in with a clock 5 min ahead, is said to be ahead of the server\'s clock');

# Apps.
my @acols = qw(n_reports est_flops_per_au credit_per_job jobs_unsent jobs_in_progress jobs_done jobs_error);
$want = view_rows(q{SELECT app_id, } . join(', ', @acols) . q{ FROM allot.status_app}, 'app_id', @acols);
$shown = cells($dom, 'data-app-id');
is(join(',', sort keys %$shown), join(',', sort keys %$want), 'the apps table lists every app');
@bad = ();
for my $id (keys %$want)
{
	for my $k (@acols)
	{
		my $v = $want->{$id}{$k};
		my ($got, $text) = @{ $shown->{$id}{$k} // [] };
		next if $v eq '' && !defined $got;
		push @bad, "$id.$k: view $v, page " . ($got // 'nothing') unless same_number($got, $v);
		push @bad, "$id.$k: text $text" if $k eq 'credit_per_job' && $text ne sprintf('%.3f', $v);
	}
}
is(join('; ', @bad), '', 'each app\'s reports, estimate, credit per job and jobs are the view\'s');
is($shown->{1}{credit_per_job}[1], '2.000', 'folding\'s credit per job is shown as 2.000');

# Transitioner runs: the last ten, newest first.
$shown = cells($dom, 'data-run');
is(join(',', sort { $b <=> $a } keys %$shown),
	sql(q{SELECT string_agg(run::text, ',' ORDER BY run DESC) FROM (SELECT run FROM allot.status_transitioner LIMIT 10) r}),
	'the runs table lists the transitioner\'s last ten runs');
is(join(',', map { $shown->{$_}{credited}[1] } sort keys %$shown),
	sql(q{SELECT string_agg(credited::text, ',' ORDER BY run::text) FROM (SELECT run, credited FROM allot.status_transitioner LIMIT 10) r}),
	'with what each credited');

# ---------------------------------------------------------------------------
# The share history chart.  For each kind, the page's lines against the
# view's rows, bucketed here: bucket b holds the minutes sampled (for the
# kind) between (b + 1) and b bucket lengths before the page's now; a point
# is the mean over a bucket's sampled minutes, a workload absent from one
# counting 0.
my @history_bad;
my %history_points;
for my $kind ('assignment', 'jobs')
{
	my ($figure) = $dom =~ m{(<figure class="chart history" id="history-$kind".*?</figure>)}s;
	ok(defined $figure, "the history chart of $kind workloads is there");
	$figure //= '';
	my ($window, $step) = $figure =~ /data-window-secs="(\d+)" data-bucket-secs="(\d+)"/;
	is("$window/$step", '14400/120', "$kind: four hours (STATUS_HISTORY_HOURS) in buckets of 2 min");
	my (%minutes, %sum, %ids);
	for my $line (split /\n/, sql(qq{
		SELECT workload_id, floor(extract(epoch FROM '$page_now'::timestamptz - sampled_at) / $step),
		       sampled_at, share, fair_share
		  FROM allot.status_share_history
		 WHERE kind = '$kind' AND sampled_at > '$page_now'::timestamptz - interval '$window s'
		   AND sampled_at <= '$page_now'::timestamptz}))
	{
		my ($id, $b, $at, $share, $fair) = split /\|/, $line;
		$ids{$id} = 1;
		$sum{$id}{$b}[0] += $share;
		$sum{$id}{$b}[1] += $fair;
	}
	# the minutes of each bucket sampled for the kind
	for my $line (split /\n/, sql(qq{
		SELECT floor(extract(epoch FROM '$page_now'::timestamptz - sampled_at) / $step), count(DISTINCT sampled_at)
		  FROM allot.status_share_history
		 WHERE kind = '$kind' AND sampled_at > '$page_now'::timestamptz - interval '$window s'
		   AND sampled_at <= '$page_now'::timestamptz
		 GROUP BY 1}))
	{
		my ($b, $n) = split /\|/, $line;
		$minutes{$b} = $n;
	}
	my %drawn;
	# (the DOM is written back as HTML: an SVG path ends in </path>)
	while ($figure =~ m{<g class="series c\d" data-workload-id="(\d+)">.*?<path class="fair" d="([^"]*)" data-points="([^"]*)"(?:/>|></path>)\s*<path class="share" d="([^"]*)" data-points="([^"]*)"(?:/>|></path>)}gs)
	{
		$drawn{$1} = { fair_d => $2, fair => $3, share_d => $4, share => $5 };
	}
	is(join(',', sort { $a <=> $b } keys %drawn), join(',', sort { $a <=> $b } keys %ids),
		"$kind: a pair of lines for each workload the history has");
	for my $id (sort keys %ids)
	{
		for my $series ('share', 'fair')
		{
			my $want = join ' ', map {
				my $b = $_;
				my $v = ($sum{$id}{$b} // [ 0, 0 ])->[ $series eq 'share' ? 0 : 1 ] / $minutes{$b};
				"$b:$v";
			} sort { $b <=> $a } keys %minutes;
			my @got = split / /, $drawn{$id}{$series} // '';
			my @exp = split / /, $want;
			my $same = @got == @exp;
			for my $i (0 .. $#exp)
			{
				my ($gb, $gv) = split /:/, $got[$i] // '';
				my ($eb, $ev) = split /:/, $exp[$i];
				$same &&= defined $gb && $gb == $eb && same_number($gv + 1, $ev + 1);
			}
			push @history_bad, "$kind $id $series: page '" . ($drawn{$id}{$series} // '') . "', view '$want'"
			  unless $same;
		}
	}
	$history_points{$kind} = \%drawn;
}
is(join("\n", @history_bad), '', 'each point of each line is the mean of the view\'s rows over its bucket');
{
	my @fair1 = map { (split /:/)[1] } split / /, $history_points{assignment}{1}{fair} // '';
	ok((grep { $_ == 0 } @fair1) >= 15 && (grep { $_ > 0 } @fair1) >= 15,
		'workload 1\'s fair share is 0 while it was paused, and more than 0 before and after');
	my $moves = () = ($history_points{assignment}{1}{share_d} // '') =~ /M/g;
	is($moves, 2, 'its line breaks once: at the 20 minutes without a transitioner run');
}
like($dom, qr{<ul class="series-legend">.*<li data-workload-id="2"><span class="swatch c1"></span>&lt;/td&gt;&lt;script&gt;}s,
	'the legend names each line, its names escaped');

# ---------------------------------------------------------------------------
# Every host, page by page, and a search; over HTTP.  STATUS_HOSTS (4) to
# a page: 11 hosts by id are 1-4, 5-7 and 11, 12-14.
sub host_ids
{
	my ($content) = @_;
	return join ',', $content =~ /<tr data-host-id="(\d+)"/g;
}
my %pages = (1 => '1,2,3,4', 2 => '5,6,7,11', 3 => '12,13,14', 4 => '');
for my $page (sort keys %pages)
{
	$res = $http->get("$base/status?page=$page");
	is($res->{status} . ' ' . host_ids($res->{content}), "200 $pages{$page}", "?page=$page lists hosts $pages{$page}");
}
like($http->get("$base/status?page=4")->{content}, qr{No host on page 4: there are 11 hosts, 3 pages of 4\.},
	'a page past the last says how many there are');
like($http->get("$base/status?page=2")->{content},
	qr{<nav class="pager" id="hosts-pager"[^>]*><a href="status\?page=1" data-page="1">« first</a>\s*<a href="status\?page=1" data-page="1" rel="prev">‹ previous</a>\s*<span data-page="2" data-pages="3">page 2 of 3</span>\s*<a href="status\?page=3" data-page="3" rel="next">next ›</a>\s*<a href="status\?page=3" data-page="3">last »</a></nav>},
	'page 2 links to the first, previous, next and last pages');
my %searches = (
	'q=volunteer' => '11,13,14',
	'q=WORKER' => '1,2,3,4',
	'q=worker&page=2' => '5,6',
	'q=worker&limit=2&page=3' => '5,6',
	'q=12' => '12',
	'q=onerror' => '12',
	'q=nobody' => '',
	'page=1&limit=200' => '1,2,3,4,5,6,7,11,12,13,14',
	'q=' => host_ids($http->get("$base/status")->{content}));
for my $query (sort keys %searches)
{
	$res = $http->get("$base/status?$query");
	is($res->{status} . ' ' . host_ids($res->{content}), "200 $searches{$query}", "?$query finds hosts $searches{$query}");
}
is(scalar(() = $http->get("$base/status?limit=200")->{content} =~ /<tr data-host-id=/g), 11,
	'?limit=200 lists the hosts at work, all 11 of them');
like($http->get("$base/status?q=worker&limit=2&page=2")->{content},
	qr{<a href="status\?page=3&#38;q=worker&#38;limit=2" data-page="3" rel="next">},
	'a page\'s links keep the search and the page size');
like($http->get("$base/status?q=12")->{content}, qr{<caption>The hosts whose name holds “12” or whose id is 12, by id: 1 to 1 of 1</caption>},
	'a search says what it looked for and what it found');

# Hostile query strings: 400 and a sentence, before the database is asked
# anything; nothing of them echoed or logged.
my %hostile = (
	'page=0' => 'page must be a whole number from 1 to 999999',
	'page=-1' => 'page must be',
	'page=1e3' => 'page must be',
	'page=99999999999999999999' => 'page must be',
	'page=1.5' => 'page must be',
	'page=%20%31' => 'page must be',
	'limit=100000' => 'limit must be a whole number from 1 to 200',
	'limit=0' => 'limit must be',
	"q=%27%20OR%201%3D1%20--" => 'q may hold letters, digits',
	'q=1%3B%20DROP%20TABLE%20allot.host' => 'q may hold',
	'q=%25' => 'q may hold',
	'q=a%5C' => 'q may hold',
	'q=%3Cscript%3Ealert(1)%3C%2Fscript%3E' => 'q may hold',
	'q=%00' => 'q may hold',
	'q=%E2%80%AEevil' => 'q may hold',
	'q=%ff%fe' => 'q may hold',
	'q=' . ('x' x 65) => 'at most 64 characters',
	'page=1&page=2' => 'page is given more than once',
	'sort=name' => '&#34;sort&#34; is not one of part, page, q, limit',
	'%3Cb%3E=1' => 'a parameter is not one of',
	'q=' . ('a' x 1100) => 'the query string is longer than 1024 bytes');
for my $query (sort keys %hostile)
{
	$res = $http->get("$base/status?$query");
	my $ok = $res->{status} == 400 && index($res->{content}, $hostile{$query}) >= 0
	  && $res->{content} !~ /<script|DROP TABLE|OR 1=1|\bat [\w.]+ \(/;
	ok($ok, "?$query: 400, $hostile{$query}") or diag("$res->{status}: $res->{content}");
}
my $log_text = slurp_file($server_log);
like($log_text, qr{GET /status\?\(refused\) 400 [0-9.]+ ms \(page must be a whole number from 1 to 999999\)},
	'the log says what was refused and why');
unlike($log_text, qr/DROP TABLE|OR 1=1|<script|onerror/, 'and never what the client wrote');
like($log_text, qr{GET /status\?page=2&limit=2&q=\(6 characters\) 200}, 'a search is logged by its length');

# The same in Chromium, as a reader does it: type a search and submit it,
# follow "every host, by id", then "next" and "last"; there, the page
# refreshes itself and stays on its page.
{
	my $rows = q{[...document.querySelectorAll('#hosts tr[data-host-id]')].map((r) => r.dataset.hostId).join(',')};
	my $then = sub { "setTimeout(() => document.querySelector('$_[0]').click(), 0)" };
	my $walk = eval {
		evaluate_in_pages(
			"$base/status", 1280, 900,
			q{document.querySelector('#host-search input[name=q]').value = 'volunteer';
			  setTimeout(() => document.querySelector('#host-search').requestSubmit(), 0); 'submitted'},
			"(() => { const r = [location.search, $rows]; " . $then->('#host-search a[href="status?page=1"]') . "; return r; })()",
			"(() => { const r = [location.search, $rows, document.querySelector('#hosts-pager span').textContent]; "
			  . $then->('#hosts-pager a[rel=next]') . "; return r; })()",
			"(() => { const r = [location.search, $rows]; " . $then->('#hosts-pager a[data-page="3"]:not([rel])') . "; return r; })()",
			qq{new Promise((resolve) => {
				const check = () => document.querySelector('main').dataset.refreshed
				  ? resolve([location.search, $rows, document.querySelector('main').dataset.refreshed])
				  : setTimeout(check, 100);
				check();
			})});
	} // [ "error: $@" ];
	is($walk->[0], 'submitted', 'Chromium: a search for "volunteer" is typed and submitted');
	is(join(' ', @{ $walk->[1] // [] }), '?q=volunteer 11,13,14', 'it finds the three volunteers');
	is(join(' ', @{ $walk->[2] // [] }), '?page=1 1,2,3,4 page 1 of 3', '"every host, by id": page 1 of 3');
	is(join(' ', @{ $walk->[3] // [] }), '?page=2 5,6,7,11', '"next": page 2');
	like(join(' ', @{ $walk->[4] // [] }), qr/^\?page=3 12,13,14 [1-9][0-9]*$/,
		'"last": page 3, which refreshes itself and stays page 3');
}

# The farm cards.
my %cards = $dom =~ m{<dd data-k="(\w+)" data-v="([^"]*)">}g;
my %card_text = $dom =~ m{<dd data-k="(\w+)" data-v="[^"]*">([^<]*)</dd>}g;
my %farm;
@farm{qw(hosts threads_in_use jobs_in_progress jobs_done)} = split /\|/,
  sql('SELECT hosts, threads_in_use, jobs_in_progress, jobs_done FROM allot.status_farm');
is(join(' ', map { $cards{$_} } sort keys %farm), join(' ', map { $farm{$_} } sort keys %farm),
	'the summary shows the farm\'s hosts, threads in use, jobs in progress and done');
ok(same_number($cards{peak_flops_in_use}, sql('SELECT peak_flops_in_use FROM allot.status_farm'))
	  && $card_text{peak_flops_in_use} =~ /^[0-9][0-9.]* [kMGTPEZY]?FLOPS$/,
	"and its peak FLOPS in use, with a space before the unit: $card_text{peak_flops_in_use}");

# The settings, as the views see them (the database's TTL of 1 h).
is( join(' | ', map { "$_ $cards{$_} $card_text{$_}" }
		qw(fairness assignment_ttl rec_half_life balance_engine_throughputs)),
	'fairness current current | assignment_ttl 3600 1 h | rec_half_life 864000 10 d'
	  . ' | balance_engine_throughputs false off',
	'the settings: fairness, assignment TTL, REC half-life, engine balancing');
like($dom, qr{<dt>hosts assigned \(seen within 1 h\)</dt><dd data-k="assigned_hosts"},
	'the TTL also stands beside the hosts assigned');
is(sql('SELECT extract(epoch FROM assignment_ttl)::int || \' \' || fairness FROM allot.status_farm'),
	'3600 current', 'as status_farm has them');

# The layout: at 1,280 px the page and each of its tables fit the window.
{
	my $fit = eval {
		evaluate_in_page("$base/status", 1280, 900, q{({
			page: [document.documentElement.scrollWidth, window.innerWidth],
			tables: [...document.querySelectorAll('.scroll')].map(
				(s) => [s.querySelector('table').id, s.scrollWidth, s.clientWidth])
		})});
	} // { error => $@ };
	ok(!$fit->{error}, 'Chromium measures the page over the DevTools protocol') or diag($fit->{error});
	my @tables = @{ $fit->{tables} // [] };
	is(join(',', sort map { $_->[0] } @tables), 'apps,hosts,runs,workloads', 'at 1,280 px: the four tables');
	ok(($fit->{page}[0] // 1e9) <= ($fit->{page}[1] // 0),
		'the page scrolls not sideways (' . join(' px wide in ', @{ $fit->{page} // [] }) . ')');
	is(join('; ', map { "$_->[0]: $_->[1] px in $_->[2]" } grep { $_->[1] > $_->[2] } @tables), '',
		'nor does any table: each fits its box');
}

# ---------------------------------------------------------------------------
# The screenshot.
my ($w, $h, $pixels) = png_rgb($png);
is("${w}x$h", "${width}x$height", 'the screenshot is a PNG of the window\'s size');
my %colours;
$colours{ substr($pixels, $_ * 3, 3) }++ for 0 .. $w * $h - 1;
# The background is the most common colour; the rest is what the page drew.
my ($background) = sort { $colours{$b} <=> $colours{$a} } keys %colours;
my $drawn = 1 - $colours{$background} / ($w * $h);
cmp_ok(scalar(keys %colours), '>', 100, 'it has more than 100 colours (text, bars, tables)');
cmp_ok($drawn, '>', 0.2, sprintf('%.0f%% of it is not the background', 100 * $drawn));
ok($colours{ pack('C3', 0x25, 0x63, 0xeb) } && $colours{ pack('C3', 0xf5, 0x9e, 0x0b) },
	'it shows both bar colours: share and fair share');
ok($colours{ pack('C3', 0xdc, 0x26, 0x26) } && $colours{ pack('C3', 0x16, 0xa3, 0x4a) },
	'and the colours of the history\'s second and third lines (their legend)');

# ---------------------------------------------------------------------------
# A login that is not in allot_monitor gets a clear error, not the farm.
sql('REVOKE allot_monitor FROM monitor');
$res = $http->get("$base/status");
is($res->{status}, 500, 'without allot_monitor, the page answers 500');
like($res->{content}, qr/may not read the status views/, 'and says why');
sql('GRANT allot_monitor TO monitor');
is($http->get("$base/status")->{status}, 200, 'with it again, 200');

kill 'TERM', $server_pid;
waitpid $server_pid, 0;
is($? >> 8, 0, 'the server stops on SIGTERM, closing both pools');
$server_pid = undef;

$node->stop;
done_testing();

# png_rgb(FILE): width, height and the pixels as RGB bytes, for the 8-bit
# RGB and RGBA PNGs Chromium writes (non-interlaced; PNG spec section 9
# for the filters).
sub png_rgb
{
	my ($file) = @_;
	open my $fh, '<:raw', $file or die "open $file: $!";
	local $/;
	my $data = <$fh>;
	close $fh;
	die "$file is not a PNG" unless substr($data, 0, 8) eq "\x89PNG\r\n\x1a\n";
	my ($pos, $idat, $width, $height, $depth, $type, $interlace) = (8, '');
	while ($pos < length $data)
	{
		my ($len, $kind) = unpack 'Na4', substr($data, $pos, 8);
		my $chunk = substr($data, $pos + 8, $len);
		$pos += 12 + $len;
		if ($kind eq 'IHDR')
		{
			($width, $height, $depth, $type, undef, undef, $interlace) = unpack 'NNCCCCC', $chunk;
		}
		$idat .= $chunk if $kind eq 'IDAT';
		last if $kind eq 'IEND';
	}
	die "unsupported PNG: depth $depth, colour type $type, interlace $interlace"
	  unless $depth == 8 && ($type == 2 || $type == 6) && !$interlace;
	my $bpp = $type == 6 ? 4 : 3;
	my $raw = uncompress($idat) // die "$file: bad image data";
	my $stride = $width * $bpp;
	my @prev = (0) x $stride;
	my $rgb = '';
	for my $y (0 .. $height - 1)
	{
		my $off = $y * ($stride + 1);
		my $filter = ord substr($raw, $off, 1);
		my @cur = unpack 'C*', substr($raw, $off + 1, $stride);
		for my $i (0 .. $stride - 1)
		{
			my $left = $i >= $bpp ? $cur[ $i - $bpp ] : 0;
			my $up = $prev[$i];
			my $ul = $i >= $bpp ? $prev[ $i - $bpp ] : 0;
			my $add =
			    $filter == 0 ? 0
			  : $filter == 1 ? $left
			  : $filter == 2 ? $up
			  : $filter == 3 ? ($left + $up) >> 1
			  :                paeth($left, $up, $ul);
			$cur[$i] = ($cur[$i] + $add) & 0xff;
		}
		if ($bpp == 4)
		{
			$rgb .= pack 'C*', @cur[ grep { $_ % 4 != 3 } 0 .. $stride - 1 ];
		}
		else
		{
			$rgb .= pack 'C*', @cur;
		}
		@prev = @cur;
	}
	return ($width, $height, $rgb);
}

sub paeth
{
	my ($a, $b, $c) = @_;
	my $p = $a + $b - $c;
	my ($pa, $pb, $pc) = (abs($p - $a), abs($p - $b), abs($p - $c));
	return $pa <= $pb && $pa <= $pc ? $a : $pb <= $pc ? $b : $c;
}
