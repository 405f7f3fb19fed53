# Shared by the Perl TAP tests that run Debian's unmodified BOINC client
# against the example front end (examples/boinc): the tools they need, a
# network namespace of its own that holds only a loopback interface (the
# clients, the front end and boinccmd run in it; PostgreSQL is reached
# through its unix socket), the front end installed in a work directory,
# clients set up to start at once and log what the tests read, and
# boinccmd and plain HTTP from inside the namespace.
#
# Every process started is stopped by its PID, the clients and the front
# end before the namespace's holder, also when the test dies or is stopped
# by a signal (a time limit's SIGTERM, Ctrl-C).  And each is tied to the
# test (setpriv --pdeathsig KILL): not even a SIGKILL of the test leaves one
# running.
package BoincTest;

use strict;
use warnings FATAL => 'all';
use Digest::MD5 ();
use Exporter 'import';
use File::Path qw(make_path);
use FrontEnds qw(install_front_ends);
use IPC::Run ();
use JSON::PP;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

our @EXPORT_OK = qw(slurp wait_for show_log);

# A file's contents, or '' while it does not exist.
sub slurp { my ($f) = @_; return -e $f ? PostgreSQL::Test::Utils::slurp_file($f) : ''; }

# The processes started, in order; each {name, pid}.
my @started;

sub stop_all
{
	# everything but the namespace's holder first, newest first; the holder last
	for my $p (sort { ($a->{name} eq 'holder') <=> ($b->{name} eq 'holder') } reverse @started)
	{
		stop_pid($p->{pid}, 10);
	}
	@started = ();
	return;
}
END { local $?; stop_all(); }
# (exit, not die: an eval the signal lands in would swallow a die.)
$SIG{$_} = sub { diag("killed by SIG$_[0]"); exit 1 } for qw(TERM INT HUP);

# SIGTERM, then SIGKILL after secs; returns the exit status, or undef if
# it had to be killed.
sub stop_pid
{
	my ($pid, $secs) = @_;
	kill 'TERM', $pid;
	my $deadline = time + $secs;
	my $reaped = 0;
	sleep 0.1 while time < $deadline && ($reaped = waitpid($pid, POSIX::WNOHANG)) == 0;
	return $? >> 8 if $reaped == $pid;
	kill 'KILL', $pid;
	waitpid $pid, 0;
	return undef;
}

# database(NAME): a started cluster with allot, the front end's login
# (boinc_web: a member of allot_web that owns schema boinc, nothing more),
# an operator's (farm_admin, allot_admin), and the tests' app: "lines",
# 2.5e11 FLOPs per app unit, so a job is worth 2.5e11 / 4.32e11 = 0.578704
# credits and takes 250 s by estimate on a client's 1 GFLOPS (it skips its
# benchmarks); one CPU version; workload 1, a delay bound of a day.
sub database
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->start;
	$node->safe_psql('postgres', q{
CREATE EXTENSION allot;
CREATE ROLE boinc_web LOGIN IN ROLE allot_web;
CREATE SCHEMA boinc AUTHORIZATION boinc_web;
CREATE ROLE farm_admin LOGIN IN ROLE allot_admin;
INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'lines', 2.5e11);
INSERT INTO allot.app_version (id, app_id, platform, resource, ncpus) VALUES (1, 1, 'x86_64-pc-linux-gnu', 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, throughput, delay_bound)
VALUES (1, 'lines', 'lines', 1, 1000, '1 day');
});
	# A host whose task fails is backed off (allot.error_backoff, a minute,
	# doubling): the tests fail tasks on purpose and then want the same
	# client served within seconds.  A second keeps the backoff and its
	# request_delay in play at the clients' pace.
	$node->safe_psql('postgres', q{ALTER DATABASE postgres SET allot.error_backoff = '1s'});
	return $node;
}

sub tool
{
	my ($name) = @_;
	for my $dir (split(/:/, $ENV{PATH} // ''), '/usr/sbin', '/sbin', '/usr/bin')
	{
		return "$dir/$name" if -x "$dir/$name";
	}
	return undef;
}

# new(node => PostgreSQL::Test::Cluster, work => DIR): checks the tools
# (installed by scripts/common.sh: APT_PACKAGES, ensure_node).
sub new
{
	my ($class, %args) = @_;
	my $self = bless { %args, tool => {} }, $class;
	for my $name (qw(boinc boinccmd unshare nsenter ip node npm make cc setpriv))
	{
		$self->{tool}{$name} = tool($name);
		ok($self->{tool}{$name}, "$name is installed")
		  or BAIL_OUT("$name is missing: run scripts/test.sh, which installs it");
	}
	$self->{data} = "$args{work}/data";
	$self->{pg} = { PGHOST => $args{node}->host, PGPORT => $args{node}->port, PGDATABASE => 'postgres' };
	return $self;
}

sub tools { return $_[0]{tool}; }
sub data { return $_[0]{data}; }

# run_cmd(ENV, CMD...): output (stdout and stderr) and success of CMD.
sub run_cmd
{
	my ($self, $env, @cmd) = @_;
	my ($out, $err) = ('', '');
	local @ENV{ keys %$env } = values %$env;
	my $ok = IPC::Run::run(\@cmd, '<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(120));
	return ($out . $err, $ok);
}

# spawn(NAME, LOG, ENV, CMD...): CMD in the background, its output to LOG.
sub spawn
{
	my ($self, $name, $log, $env, @cmd) = @_;
	my $p = fork() // die "fork: $!";
	if ($p == 0)
	{
		@ENV{ keys %$env } = values %$env;
		open STDOUT, '>>', $log or POSIX::_exit(126);
		open STDERR, '>&', \*STDOUT or POSIX::_exit(126);
		open STDIN, '<', '/dev/null' or POSIX::_exit(126);
		exec @cmd or POSIX::_exit(127);
	}
	push @started, { name => $name, pid => $p };
	$self->{pid}{$name} = $p;
	return $p;
}

sub pid { return $_[0]{pid}{ $_[1] }; }

# stop(NAME): SIGTERM and wait (up to 20 s); the exit status, or
# 'still running' when it had to be killed.
sub stop
{
	my ($self, $name) = @_;
	my $pid = delete $self->{pid}{$name} or die "$name was not started";
	@started = grep { $_->{pid} != $pid } @started;
	return stop_pid($pid, 20) // 'still running';
}

# wait_for(SECS, SUB): SUB until it returns true, at most SECS; its last
# value.
sub wait_for
{
	my ($secs, $sub) = @_;
	my $deadline = time + $secs;
	my $v;
	until (($v = $sub->()) || time > $deadline) { sleep 0.25; }
	return $v;
}

# The network namespace: a holder process owns it; the front end, the
# clients and boinccmd enter it.  (A user namespace comes with it, so that
# this works as the cluster's user; as root the same commands work too.)
sub netns
{
	my ($self) = @_;
	my $t = $self->{tool};
	my $ready = "$self->{work}/netns-ready";
	# setpriv after unshare and nsenter: a change of credentials clears a
	# parent-death signal
	my @tied = ($t->{setpriv}, '--pdeathsig', 'KILL', '--');
	$self->spawn('holder', "$self->{work}/holder.log", {}, $t->{unshare}, '--user', '--map-root-user', '--net', '--',
		@tied, '/bin/sh', '-c', qq{"$t->{ip}" link set lo up && touch "$ready" && exec sleep 900});
	ok(wait_for(20, sub { -e $ready }), 'a network namespace with only loopback is up')
	  or BAIL_OUT(slurp("$self->{work}/holder.log"));
	$self->{in_ns} = [ $t->{nsenter}, '--target', $self->pid('holder'), '--user', '--net', '--preserve-credentials', '--',
		@tied ];
	my ($out) = $self->run_cmd({}, $self->in_ns, $t->{ip}, '-brief', 'link');
	like($out, qr/^lo\s+UNKNOWN/m, 'inside it: the loopback interface, up');
	unlike($out, qr/^(?!lo\s)\S/m, 'and no other interface');
	return;
}

sub in_ns { return @{ $_[0]{in_ns} }; }

# The front ends (examples/, FrontEnds.pm) copied into WORK and their
# packages installed, and the app built; returns the BOINC front end's
# directory.
sub install
{
	my ($self) = @_;
	my $t = $self->{tool};
	my ($examples, $installed, $npm_said) = install_front_ends($self->{work}, $t->{npm});
	ok($installed, 'npm ci installs the packages of examples/package-lock.json') or diag($npm_said);
	$self->{fe} = "$examples/boinc";
	ok(run_log([ $t->{make}, '-C', "$self->{fe}/app" ]), 'the app builds against libboinc-app-dev');
	return $self->{fe};
}

# admin(ARGS...): node admin.js ARGS as the operator; (output, success).
sub admin
{
	my ($self, @args) = @_;
	my ($out, $ok) = $self->run_cmd({ %{ $self->{pg} }, PGUSER => 'farm_admin', DATA_DIR => $self->{data} },
		$self->{tool}{node}, "$self->{fe}/admin.js", @args);
	note "node admin.js @args\n$out";
	return ($out, $ok);
}

# start_server(PORT, ENV): the front end in the namespace, logging to
# WORK/server.log; returns its master URL.
sub start_server
{
	my ($self, $port, %env) = @_;
	my $url = "http://127.0.0.1:$port/";
	$self->{url} = $url;
	$self->{server_log} = "$self->{work}/server.log";
	$self->spawn('server', $self->{server_log},
		{ %{ $self->{pg} }, PGUSER => 'boinc_web', PORT => $port, HOST => '127.0.0.1', DATA_DIR => $self->{data}, %env },
		$self->in_ns, $self->{tool}{node}, "$self->{fe}/server.js");
	wait_for(30, sub { slurp($self->{server_log}) =~ /serving/ || waitpid($self->pid('server'), POSIX::WNOHANG) != 0 });
	like(slurp($self->{server_log}), qr/serving \Q$env{PROJECT_NAME}\E at \Q$url\E/, "the front end serves $url")
	  or BAIL_OUT(slurp($self->{server_log}));
	return $url;
}

sub server_log { return slurp($_[0]{server_log}); }

# client(NAME, ncpus => N, attach => KEY, gui_rpc_port => PORT, notices => 1):
# a client's directory, set up: no benchmarks, small buffers, logging every
# scheduler operation, file transfer and task; started in the namespace
# (attached to the front end with KEY when given; answering boinccmd on
# PORT, so that clients can share the namespace).  Without notices it
# fetches no notices feeds (<no_info_fetch>); with it, it fetches the
# project's (and tries BOINC's project list, which the namespace does not
# reach).  Returns its directory; its log is DIR.log.
sub client
{
	my ($self, $name, %opt) = @_;
	my $dir = "$self->{work}/$name";
	make_path($dir);
	my $ncpus = $opt{ncpus} // 1;
	my $info = $opt{notices} ? '' : '<no_info_fetch/>';
	PostgreSQL::Test::Utils::append_to_file("$dir/cc_config.xml", qq{<cc_config>
<log_flags><sched_op_debug/><file_xfer_debug/><task_debug/></log_flags>
<options><skip_cpu_benchmarks/>$info<dont_contact_ref_site/><no_gpus/><ncpus>$ncpus</ncpus></options>
</cc_config>
});
	PostgreSQL::Test::Utils::append_to_file("$dir/global_prefs_override.xml", q{<global_preferences>
<suspend_cpu_usage>0</suspend_cpu_usage><run_if_user_active>1</run_if_user_active>
<run_on_batteries>1</run_on_batteries><work_buf_min_days>0.001</work_buf_min_days>
<work_buf_additional_days>0</work_buf_additional_days>
</global_preferences>
});
	my @attach = $opt{attach} ? ('--attach_project', $self->{url}, $opt{attach}) : ();
	my @port = $opt{gui_rpc_port} ? ('--gui_rpc_port', $opt{gui_rpc_port}) : ();
	$self->{boinccmd_host}{$dir} = [ '--host', "127.0.0.1:$opt{gui_rpc_port}" ] if $opt{gui_rpc_port};
	$self->spawn($name, "$dir.log", {}, $self->in_ns, $self->{tool}{boinc}, '--dir', $dir, @port, @attach);
	return $dir;
}

# boinccmd(DIR, ARGS...): boinccmd against the client of DIR; its output.
sub boinccmd
{
	my ($self, $dir, @args) = @_;
	wait_for(20, sub { -s "$dir/gui_rpc_auth.cfg" });
	my ($out) = $self->run_cmd({}, $self->in_ns, $self->{tool}{boinccmd}, @{ $self->{boinccmd_host}{$dir} // [] }, '--passwd',
		slurp("$dir/gui_rpc_auth.cfg") =~ s/\s+$//r, @args);
	return $out;
}

# http(METHOD, PATH, BODY): [status, content], from inside the namespace.
my $http_client = q{
use HTTP::Tiny; use JSON::PP;
local $/; my $body = <STDIN>;
my ($method, $url) = @ARGV;
my $r = HTTP::Tiny->new(timeout => 120)->request($method, $url, { content => $body });
print encode_json([$r->{status}, $r->{content}]);
};
sub http
{
	my ($self, $method, $path, $body) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ $self->in_ns, $^X, '-e', $http_client, $method, "$self->{url}$path" ],
		'<', \($body // ''), '>', \$out, '2>', \$err, IPC::Run::timeout(150));
	return eval { decode_json($out) } // [ 0, "$out$err" ];
}

# web(METHOD, PATH, form => {FIELD => VALUE}, cookie => C): a browser's
# request from inside the namespace (a form is posted as
# application/x-www-form-urlencoded; redirects are not followed);
# {status, content, location, cookie}: cookie is the value of the
# boinc_session cookie the answer sets, if any.
my $web_client = q{
use HTTP::Tiny; use JSON::PP;
local $/; my $in = decode_json(<STDIN>);
my $h = HTTP::Tiny->new(timeout => 60, max_redirect => 0);
my %headers = $in->{cookie} ? (Cookie => "boinc_session=$in->{cookie}") : ();
my $r = $in->{form}
  ? $h->request($in->{method}, $in->{url}, { headers => { %headers, 'Content-Type' => 'application/x-www-form-urlencoded' },
      content => $h->www_form_urlencode($in->{form}) })
  : $h->request($in->{method}, $in->{url}, { headers => \%headers });
my ($cookie) = join(';', ref $r->{headers}{'set-cookie'} ? @{ $r->{headers}{'set-cookie'} } : ($r->{headers}{'set-cookie'} // ''))
  =~ /boinc_session=([0-9a-f]*)/;
print encode_json({ status => $r->{status}, content => $r->{content}, location => $r->{headers}{location}, cookie => $cookie });
};
sub web
{
	my ($self, $method, $path, %opt) = @_;
	my ($out, $err) = ('', '');
	my $in = encode_json({ method => $method, url => "$self->{url}$path", form => $opt{form}, cookie => $opt{cookie} });
	IPC::Run::run([ $self->in_ns, $^X, '-e', $web_client ], '<', \$in, '>', \$out, '2>', \$err, IPC::Run::timeout(90));
	return eval { decode_json($out) } // { status => 0, content => "$out$err" };
}

# http_many(REQUESTS): requests sent at once from inside the namespace, one
# process each, each {method, path, local (the address it comes from, any
# of 127/8), delay (seconds to wait first)}; their [status, content] in the
# same order.
my $many_client = q{
use HTTP::Tiny; use JSON::PP; use Time::HiRes qw(sleep);
local $/; my $in = decode_json(<STDIN>);
my $dir = shift @ARGV;
my @pids;
for my $i (0 .. $#{ $in->{requests} })
{
	my $q = $in->{requests}[$i];
	my $pid = fork // die "fork: $!";
	if (!$pid)
	{
		sleep($q->{delay} // 0);
		my $r = HTTP::Tiny->new(timeout => 120, local_address => $q->{local})->request($q->{method}, "$in->{base}$q->{path}");
		open my $f, '>', "$dir/$i" or die "$dir/$i: $!";
		print $f encode_json([ $r->{status}, $r->{content} ]);
		close $f;
		exit 0;
	}
	push @pids, $pid;
}
waitpid($_, 0) for @pids;
print encode_json([ map { open my $f, '<', "$dir/$_" or die "$dir/$_: $!"; decode_json(<$f>) } 0 .. $#{ $in->{requests} } ]);
};
sub http_many
{
	my ($self, @requests) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir('many');
	my ($out, $err) = ('', '');
	my $in = encode_json({ base => $self->{url}, requests => \@requests });
	IPC::Run::run([ $self->in_ns, $^X, '-e', $many_client, $dir ], '<', \$in, '>', \$out, '2>', \$err, IPC::Run::timeout(300));
	return eval { decode_json($out) } // die "http_many: $out$err";
}

# upload(NAME, BYTES): an upload of file NAME, all of it, as a client
# sends it; [status, content].
sub upload
{
	my ($self, $name, $bytes) = @_;
	return $self->http('POST', 'file_upload_handler',
		"<data_server_request>\n<core_client_major_version>7</core_client_major_version>\n"
		  . "<file_upload>\n<file_info>\n<name>$name</name>\n</file_info>\n<nbytes>" . length($bytes)
		  . "</nbytes>\n<md5_cksum>" . Digest::MD5::md5_hex($bytes) . "</md5_cksum>\n<offset>0</offset>\n<data>\n$bytes");
}

# show_log(TITLE, FILE, FILTER): the lines of FILE that match, for the log.
sub show_log
{
	my ($title, $file, $filter) = @_;
	my @lines = grep { $_ =~ $filter } split /\n/, slurp($file);
	note "----- $title -----\n" . join("\n", @lines);
	return;
}

1;
