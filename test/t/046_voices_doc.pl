# docs/voices.md's SQL blocks run as printed, in order, on a fresh farm with
# a job workload 7 and an owner named 'operator' (the page says so), and do
# what the page says they do.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $page = PostgreSQL::Test::Utils::slurp_file("$ENV{TESTDIR}/../docs/voices.md");
my @blocks = $page =~ /^```sql\n(.*?)^```$/msg;
cmp_ok(scalar(@blocks), '>=', 4, 'docs/voices.md has its SQL blocks');

my $node = PostgreSQL::Test::Cluster->new('voices_doc');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION allot;
INSERT INTO allot.app (id, name) VALUES (1, 'crunch');
INSERT INTO allot.app_version (id, app_id, resource, ncpus) VALUES (1, 1, 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id) VALUES (7, 'crunch', 'crunch', 1);
INSERT INTO allot.owner (key) VALUES ('operator');
});
for my $i (0 .. $#blocks)
{
	my ($rc, $out, $err) = $node->psql('postgres', $blocks[$i], on_error_stop => 1);
	is($rc, 0, "block " . ($i + 1) . " runs: " . ($blocks[$i] =~ s/\n.*//sr)) or diag $err;
}
is($node->safe_psql('postgres', q{SELECT o.key FROM allot.host h JOIN allot.owner o ON o.id = h.owner_id
                                   WHERE h.name = 'box-1'}), 'boinc:42', 'the host belongs to boinc:42');
is($node->safe_psql('postgres', q{SELECT trusted FROM allot.owner WHERE key = 'operator'}), 't',
	"the operator's owner is trusted");
is($node->safe_psql('postgres', q{SELECT min_quorum || '/' || target_nresults FROM allot.job WHERE workload_id = 7}),
	'2/2', 'the job needs 2 owners');
is($node->safe_psql('postgres', q{SELECT adaptive_replication FROM allot.workload WHERE id = 7}), 't',
	'workload 7 replicates adaptively');
$node->stop;
done_testing();
