# Unit tests of the pure C parts (no PostgreSQL): build each program in
# test/unit, run it, and pass on every check it prints (TAP) as a subtest.
use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname);
use Cwd qw(abs_path);
use Test::More;

my $unit = abs_path(dirname(__FILE__) . '/../unit');
for my $program (qw(host_queue_test estimate_test app_unit_stats_test selection_test share_history_test))
{
	system('make', '-s', '-C', $unit, $program) == 0
	  or BAIL_OUT("could not build $program in $unit");
	my @lines = `$unit/$program`;
	my $status = $?;
	subtest $program => sub {
		my $checks = 0;
		for (@lines)
		{
			chomp;
			if (/^(not )?ok \d+ - (.*)$/)
			{
				ok(!defined $1, $2);
				$checks++;
			}
			elsif (/^#/)
			{
				note($_);
			}
		}
		cmp_ok($checks, '>', 0, "$program ran checks");
		is($status, 0, "$program exits 0");
	};
}
done_testing();
