# Unit tests of the pure C parts (no PostgreSQL): build them, then hand
# their TAP stream to prove.
use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname);
use Cwd qw(abs_path);

my $unit = abs_path(dirname(__FILE__) . '/../unit');
system('make', '-s', '-C', $unit, 'host_queue_test') == 0
  or die "could not build the unit tests in $unit\n";
exec("$unit/host_queue_test") or die "could not run $unit/host_queue_test: $!\n";
