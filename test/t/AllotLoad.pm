# Shared by the Perl TAP tests of allot that put a farm through a crash, a
# failover or a dump and restore: what a consistent farm looks like, how to
# call allot under a load as a web layer would, and how to tell that a
# killed server's processes are really gone.
package AllotLoad;

use strict;
use warnings FATAL => 'all';
use Exporter 'import';

our @EXPORT_OK =
  qw(farm_problems debt_tops child_processes processes_gone create_retried %load_script);

# pgbench scripts of the calls the load tests share, after a \set of :h
# (the host): a host reporting one of its jobs in progress (17 successes in
# 20, 2 errors, 1 abort), and a validator's verdict on a done job (9 valid
# in 10).  Each takes its job FOR UPDATE SKIP LOCKED in the same statement,
# so that no call is the caller's fault; each names itself in a comment, by
# which the server log's errors are counted.
our %load_script = (
	report => q{\set o random(1, 20)
SELECT /* report */ allot.report_job(:h, j.id,
           CASE WHEN :o <= 17 THEN 'success' WHEN :o <= 19 THEN 'error' ELSE 'aborted' END,
           app_units => j.predicted_app_units * (0.8 + 0.4 * random()),
           elapsed_secs => j.predicted_app_units * (0.8 + 0.4 * random()))
  FROM (SELECT id, predicted_app_units FROM allot.job
         WHERE host_id = :h AND state = 'in_progress'
         ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) j;},
	validate => q{\set v random(1, 10)
SELECT /* validate */ allot.validate_job(j.id, :v > 1)
  FROM (SELECT id FROM allot.job WHERE state = 'done' AND validated IS NULL
         ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) j;});

# One line per job whose row contradicts its state or its reports.  Every
# rule follows from what request_work, report_job and run_transitioner
# write (docs/concepts.md, "Job workloads" and "Reports"):
#   - a job in progress knows its host, version, sending time, deadline,
#     estimate and peak FLOPS, and has not been reported for that sending;
#   - an unsent job is held by nobody;
#   - a done or errored job keeps its host and has the report that finished
#     it, for that very sending (or, for a job that gave up at a timeout,
#     the timeout's row: its outcome stays that of its last report, none);
#   - a job was sent with a version of its own workload's app;
#   - a job succeeds at most once on a host (a host is never sent a job it
#     had; a job succeeds again elsewhere only when the validator found the
#     first result invalid), and every report's reply names its job and
#     outcome.
my $job_problems = q{
SELECT pg_catalog.format('job %s (%s): %s', id, state, problem)
  FROM (SELECT j.id, j.state,
               CASE
               WHEN j.state = 'in_progress'
                    AND (j.host_id IS NULL OR j.app_version_id IS NULL OR j.sent_at IS NULL
                         OR j.deadline IS NULL OR j.est_secs IS NULL
                         OR j.peak_flops_per_sec IS NULL)
                 THEN 'in progress without its host, version, deadline or estimate'
               WHEN j.state = 'in_progress'
                    AND EXISTS (SELECT FROM allot.job_report r
                                 WHERE r.job_id = j.id AND r.host_id = j.host_id
                                   AND r.sent_at = j.sent_at)
                 THEN 'in progress although this sending was already reported'
               WHEN j.state = 'unsent'
                    AND (j.host_id IS NOT NULL OR j.app_version_id IS NOT NULL
                         OR j.sent_at IS NOT NULL OR j.deadline IS NOT NULL)
                 THEN 'unsent but still held'
               WHEN j.state IN ('done', 'error')
                    AND NOT EXISTS (SELECT FROM allot.job_report r
                                     WHERE r.job_id = j.id AND r.host_id = j.host_id
                                       AND r.sent_at = j.sent_at
                                       AND (r.outcome = j.outcome
                                            OR (j.state = 'error' AND j.outcome IS NULL
                                                AND r.outcome = 'timed_out')))
                 THEN 'finished without the report that finished it'
               WHEN j.app_version_id IS NOT NULL
                    AND NOT EXISTS (SELECT FROM allot.app_version v
                                      JOIN allot.workload w ON w.app_id = v.app_id
                                     WHERE v.id = j.app_version_id AND w.id = j.workload_id)
                 THEN 'sent with a version of another app'
               END AS problem
          FROM allot.job j) p
 WHERE problem IS NOT NULL
UNION ALL
SELECT pg_catalog.format('job %s: %s success reports by host %s', job_id, count(*), host_id)
  FROM allot.job_report WHERE outcome = 'success'
 GROUP BY job_id, host_id HAVING count(*) > 1
UNION ALL
SELECT pg_catalog.format('report of job %s by host %s: outcome %s, reply %s',
                         job_id, host_id, outcome, reply)
  FROM allot.job_report
 WHERE reply ->> 'outcome' IS DISTINCT FROM outcome
    OR (reply ->> 'job_id')::bigint IS DISTINCT FROM job_id
};

# farm_problems($node, $db): check_invariants() (usage tables against the
# assignments and jobs they summarise) and the job rules above, as one
# string, one problem a line; empty when the farm is consistent.
sub farm_problems
{
	my ($node, $db) = @_;
	return $node->safe_psql($db,
		"SELECT * FROM allot.check_invariants() UNION ALL $job_problems ORDER BY 1"
	);
}

# debt_tops($node, $db): 't|' when there are credit rows and the largest
# debt of each resource (per kind of workload) is 0, as every fold leaves
# it; otherwise the resources whose largest debt is not, with it.
sub debt_tops
{
	my ($node, $db) = @_;
	return $node->safe_psql(
		$db, q{
SELECT count(*) > 0,
       coalesce(string_agg(format('%s/%s: %s', resource, jobs, top), ', ')
                    FILTER (WHERE top <> 0), '')
  FROM (SELECT c.resource, w.app_id IS NOT NULL AS jobs, max(c.debt) AS top
          FROM allot.workload_credit c JOIN allot.workload w ON w.id = c.workload_id
         GROUP BY 1, 2) t});
}

# create_retried($node, $db): the function retried(query text), which runs
# a query returning one text value and retries it when it is chosen as the
# victim of a deadlock (40P01), as the README asks a web layer to ("Calling
# allot from a web layer"): within the caller's transaction, a plpgsql
# exception block rolls back only the failed attempt.  Calls under a load
# of transitioner runs meet such deadlocks now and then.
sub create_retried
{
	my ($node, $db) = @_;
	$node->safe_psql(
		$db, q{
CREATE FUNCTION retried(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
BEGIN
    FOR attempt IN 1 .. 20 LOOP
        BEGIN
            EXECUTE query INTO result;
            RETURN result;
        EXCEPTION WHEN deadlock_detected THEN
            NULL;    -- try again
        END;
    END LOOP;
    RAISE EXCEPTION 'still deadlocked after 20 attempts: %', query;
END
$$;
});
	return;
}

# child_processes($pid): the processes whose parent is $pid (Linux /proc).
# Taken before a postmaster is killed, it lists every process that may still
# hold its shared memory afterwards.
sub child_processes
{
	my ($parent) = @_;
	my @children;
	opendir(my $proc, '/proc') or die "cannot read /proc: $!";
	for my $pid (grep { /^\d+$/ } readdir($proc))
	{
		open(my $fh, '<', "/proc/$pid/stat") or next;    # gone meanwhile
		my $stat = <$fh>;
		close($fh);
		# field 4, after the parenthesised command name, is the parent
		push @children, $pid
		  if defined $stat && $stat =~ /\)\s+\S+\s+(\d+)\s/ && $1 == $parent;
	}
	closedir($proc);
	return @children;
}

# processes_gone(@pids): true once none of these processes exists, not even
# as a zombie.  A new postmaster refuses to start while the pid in
# postmaster.pid answers kill(pid, 0), which a killed postmaster does until
# init reaps it.
sub processes_gone
{
	return !grep { kill(0, $_) } @_;
}

1;
