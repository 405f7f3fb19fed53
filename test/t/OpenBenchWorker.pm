# Calls of OpenBench's worker protocol as the worker makes them (form
# posts to URL/CALL/, JSON answers), for the tests that play a worker's
# part without running one: test/t/008_admin_errors.pl and
# test/t/061_openbench_site.pl.
package OpenBenchWorker;

use strict;
use warnings FATAL => 'all';
use Exporter 'import';
use HTTP::Tiny ();
use JSON::PP ();

our @EXPORT_OK = qw(worker_call worker_info);

my $ua = HTTP::Tiny->new(timeout => 30);

# worker_call(URL, CALL, FIELD => VALUE...): the answer decoded, or, when
# it is not JSON, {status, content}.  A field may be repeated (blacklist).
sub worker_call
{
	my ($url, $call, @fields) = @_;
	my $r = $ua->post_form("$url/$call/", \@fields);
	return eval { JSON::PP::decode_json($r->{content}) } // { status => $r->{status}, content => $r->{content} };
}

# worker_info(KEY => VALUE...): a system_info as client version 49 sends
# it, for a 2-thread Linux machine with gcc 12 for engine Weiss, with the
# fields given replaced.
sub worker_info
{
	my %change = @_;
	return JSON::PP::encode_json({ client_ver => 49, concurrency => 2, sockets => 1, physical_cores => 2, os_name => 'Linux',
		cpu_flags => [], compilers => { Weiss => [ 'gcc', '12.2.0' ] }, tokens => {}, syzygy_max => 0,
		noisy => JSON::PP::false, focus => [], machine_name => 'box', %change });
}

1;
