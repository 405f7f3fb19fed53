# The OpenBench front end's pure parts, unit tested in node without a
# database: test/openbench/*_test.js each print TAP (test/openbench/tap.js),
# passed on here as one subtest per file.
#   stats_test.js     Elo +- , nElo, LLR and its bounds against reference
#                     figures (stats_reference.py, OpenBench's stats.py)
#   resolver_test.js  a branch, tag or sha to its commit, bench and source
#                     zip: git daemon serving a repository on loopback, a
#                     stand-in for GitHub's API; hostile refs and repositories
use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname basename);
use Cwd qw(abs_path);
use IPC::Run;
use Test::More;

my $dir = abs_path(dirname(__FILE__) . '/../openbench');
my ($node) = grep { -x } map { "$_/node" } split(/:/, $ENV{PATH} // ''), '/usr/bin';
ok($node, 'node is installed') or BAIL_OUT('node is missing: run scripts/test.sh, which installs it');

for my $file (sort glob("$dir/*_test.js"))
{
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run([ $node, $file ], '<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(300));
	subtest basename($file) => sub {
		my $checks = 0;
		for (split /\n/, $out)
		{
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
		cmp_ok($checks, '>', 0, 'it ran checks');
		ok($ok, 'it exits 0') or diag($err);
	};
}
done_testing();
