# Load a page in headless Chromium and evaluate JavaScript in it, for what
# a screenshot or a DOM dump cannot tell, such as layout (does the page fit
# a window without scrolling sideways?), or what a reader's clicks lead to
# (a search submitted, a link followed, a file downloaded).  Used by
# test/t/030_status_page.pl and test/t/061_openbench_site.pl.
#
# It speaks Chromium's DevTools protocol over a pipe
# (--remote-debugging-pipe): the browser reads commands on its file
# descriptor 3 and writes replies and events on its descriptor 4, each a
# JSON text ended by a NUL byte.  A command is {id, method, params} (with
# the sessionId of the page it is for); its reply carries the same id.
# The browser runs as scripts/screenshot.sh runs it: a fresh profile in a
# temp dir, no GPU, no sandbox, no network of its own.
package DevToolsPage;

use strict;
use warnings FATAL => 'all';
use Exporter 'import';
use File::Temp ();
use IPC::Run ();
use JSON::PP ();

our @EXPORT_OK = qw(evaluate_in_page evaluate_in_pages watch_page);

# Set (with local) to a directory: the browser saves downloads there, and
# evaluate_in_pages returns only once the download its last expression
# started has completed (it dies if it was cancelled).
our $download_dir;

# The longest wait, in seconds, for the browser to start and load the
# first page, then for each page to load and its expression's value (and
# the download after the last); set it with local for an expression that
# waits longer.
our $timeout = 60;

# evaluate_in_page(URL, WIDTH, HEIGHT, EXPRESSION): the value of the
# JavaScript EXPRESSION (returned as JSON, so a plain object, array, string
# or number; a promise is awaited), evaluated once the page at URL has
# loaded in a window of WIDTH x HEIGHT CSS pixels.  Dies, with the browser's
# log, on any failure; the browser is gone when it returns or dies.
sub evaluate_in_page
{
	my ($url, $width, $height, $expression) = @_;
	return evaluate_in_pages($url, $width, $height, $expression)->[0];
}

# evaluate_in_pages(URL, WIDTH, HEIGHT, EXPRESSION...): as evaluate_in_page,
# for several expressions in turn, each on the page the one before led to:
# every expression but the last must start a navigation (follow a link,
# submit a form), and the next is evaluated once that page has loaded.
# Returns the values in an array ref.
sub evaluate_in_pages
{
	my ($url, $width, $height, @expressions) = @_;
	return browse($url, $width, $height, sub { return $expressions[ scalar @{ $_[0] } ]; });
}

# watch_page(URL, WIDTH, HEIGHT, EXPRESSION, DONE): EXPRESSION evaluated at
# each load of the page (the page's own refresh, or a reload EXPRESSION
# starts), until DONE (a Perl sub given its value) is true.  Returns the
# values in an array ref, DONE's last.  As a person watching a page.
sub watch_page
{
	my ($url, $width, $height, $expression, $done) = @_;
	return browse($url, $width, $height, sub { my ($v) = @_; return @$v && $done->($v->[-1]) ? undef : $expression; });
}

# browse(URL, WIDTH, HEIGHT, NEXT): NEXT, given the values so far, returns
# the expression to evaluate once the next page has loaded, or undef when
# there is none left.
sub browse
{
	my ($url, $width, $height, $next) = @_;
	my $profile = File::Temp::tempdir('allot-devtools-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my ($commands, $replies, $log) = ('', '', '');
	# a timeout ends a pump that waits longer (it dies, and the eval below stops the browser)
	my $timer = IPC::Run::timeout($timeout);
	my $browser = IPC::Run::start(
		[
			'chromium', '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe',
			'--disable-background-networking', '--disable-component-update', '--disable-sync',
			'--no-first-run', '--disable-quic', '--disable-extensions', '--no-default-browser-check',
			'--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
			"--user-data-dir=$profile/data", '--hide-scrollbars', '--force-device-scale-factor=1',
			"--window-size=$width,$height", 'about:blank'
		],
		init => sub {
			# Chromium writes caches and crash reports there
			@ENV{qw(HOME XDG_CONFIG_HOME XDG_CACHE_HOME)} = ($profile, "$profile/config", "$profile/cache");
		},
		'<', \undef, '>', \$log, '2>', \$log, '3<', \$commands, '4>', \$replies, $timer);

	my $json = JSON::PP->new->canonical;
	my ($last_id, @events) = (0);
	# the messages the browser has sent so far, in order
	my $take = sub {
		push @events, $json->decode($1) while $replies =~ s/\A([^\0]*)\0//;
	};
	my $pump = sub {
		die "the browser exited\n" unless $browser->pumpable;
		$browser->pump;
	};
	my $call = sub {
		my ($method, $params, $session) = @_;
		my $id = ++$last_id;
		$commands .= $json->encode({ id => $id, method => $method, params => $params // {},
				$session ? (sessionId => $session) : () }) . "\0";
		while (1)
		{
			$take->();
			for my $i (0 .. $#events)
			{
				next unless ($events[$i]{id} // 0) == $id;
				my $reply = splice @events, $i, 1;
				die "$method: " . $json->encode($reply->{error}) . "\n" if $reply->{error};
				return $reply->{result};
			}
			$pump->();
		}
	};
	my $await = sub {
		my ($method, $session) = @_;
		while (1)
		{
			$take->();
			for my $i (0 .. $#events)
			{
				my $e = $events[$i];
				return splice @events, $i, 1
				  if ($e->{method} // '') eq $method && ($e->{sessionId} // '') eq $session;
			}
			$pump->();
		}
	};

	my @values;
	my $ok = eval {
		my ($page) = grep { $_->{type} eq 'page' } @{ $call->('Target.getTargets')->{targetInfos} };
		die "no page in the browser\n" unless $page;
		my $session = $call->('Target.attachToTarget',
			{ targetId => $page->{targetId}, flatten => JSON::PP::true })->{sessionId};
		# exactly WIDTH x HEIGHT of layout viewport, whatever the window's frame
		$call->('Emulation.setDeviceMetricsOverride',
			{ width => 0 + $width, height => 0 + $height, deviceScaleFactor => 1, mobile => JSON::PP::false },
			$session);
		$call->('Page.enable', {}, $session);
		$call->('Browser.setDownloadBehavior',
			{ behavior => 'allow', downloadPath => $download_dir, eventsEnabled => JSON::PP::true })
		  if defined $download_dir;
		my $nav = $call->('Page.navigate', { url => $url }, $session);
		die "cannot load $url: $nav->{errorText}\n" if $nav->{errorText};
		while (defined(my $expression = $next->(\@values)))
		{
			$timer->start;    # each page's load and value in $timeout
			$await->('Page.loadEventFired', $session);
			my $result = $call->('Runtime.evaluate',
				{ expression => $expression, returnByValue => JSON::PP::true, awaitPromise => JSON::PP::true },
				$session);
			die 'the expression threw: ' . $json->encode($result->{exceptionDetails}) . "\n"
			  if $result->{exceptionDetails};
			push @values, $result->{result}{value};
		}
		$timer->start;
		while (defined $download_dir)
		{
			my $state = $await->('Browser.downloadProgress', '')->{params}{state};
			last if $state eq 'completed';
			die "the download was cancelled\n" if $state eq 'canceled';
		}
		$call->('Browser.close');
		$browser->finish;
		1;
	};
	my $error = $@;
	if (!$ok)
	{
		$browser->kill_kill;
		die "headless Chromium: $error" . "its log:\n" . substr($log, -4000);
	}
	return \@values;
}

1;
