# The example front ends (examples/web, examples/boinc, examples/openbench
# and the package they share, examples/common) installed as a reader
# installs them, for the tests that run them: examples/ copied into a work
# directory without its node_modules (the source tree is not written), then
# `npm ci` at the copy's examples/, the root of the npm workspace, from the
# committed package-lock.json.  On a machine without the npm registry, the
# tree's examples/node_modules, when it has one, is linked in instead.
package FrontEnds;

use strict;
use warnings FATAL => 'all';
use Exporter 'import';
use IPC::Run ();

our @EXPORT_OK = qw(install_front_ends);

# install_front_ends(DIR[, NPM]): copies examples/ to DIR/examples and
# installs its packages with NPM (default: npm on the PATH).  Returns
# (DIR/examples, success, what npm said or how the packages were found).
sub install_front_ends
{
	my ($dir, $npm) = @_;
	my $src = "$ENV{TESTDIR}/../examples";
	my $dst = "$dir/examples";
	IPC::Run::run([ 'tar', '-C', "$src/..", '-cf', '-', '--exclude=node_modules', '--exclude=*.log', 'examples' ],
		'|', [ 'tar', '-C', $dir, '-xf', '-' ])
	  or die "copying $src to $dir failed";
	if (-d "$src/node_modules")
	{
		symlink("$src/node_modules", "$dst/node_modules") or die "symlink: $!";
		return ($dst, 1, "using the node_modules of $src");
	}
	my $out = '';
	my $ok = IPC::Run::run([ $npm // 'npm', 'ci', '--no-audit', '--no-fund' ],
		'<', \undef, '>&', \$out, init => sub { chdir $dst or die "chdir $dst: $!" });
	return ($dst, $ok, $out);
}

1;
