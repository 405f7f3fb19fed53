/*
 * job_retry.h: what becomes of a job whose sending failed (0.6.0), as BOINC's
 * transitioner decides with max_error_results and max_total_results.
 *
 * A sending fails when its host reports an error, aborts it, loses it, lets
 * it time out, or when the validator finds its result invalid.  The job then
 * goes back to unsent, for another host (a host is never sent a job it has
 * had: dispatch_pick.c), unless the job's limits say to give up: more
 * failed sendings than its max_error_results, or its max_total_results
 * sendings made.  Then its state is 'error', for the operator (requeue_job starts it
 * over), and from 0.7.0 its reason says which ('too many errors', 'too many
 * sendings'; the transitioner ends a job no host will take as
 * 'unsendable': transitioner.c).  Both counts start again when the operator requeues the job.
 *
 * Pure logic, and the same rule in SQL for the statements that apply it to
 * many jobs at once (the transitioner's timeouts, time_out_host, the
 * validator's verdicts), over a job j.
 */
#ifndef ALLOT_JOB_RETRY_H
#define ALLOT_JOB_RETRY_H

#include <stdbool.h>

/* failures counts this failure; tries the sendings made so far. */
static inline bool
allot_job_gives_up(int failures, int tries, int max_error_results, int max_total_results)
{
	return failures > max_error_results || tries >= max_total_results;
}

/* The state of job j after one more failure, in SQL. */
#define ALLOT_STATE_AFTER_FAILURE_SQL \
	"CASE WHEN j.failures + 1 > j.max_error_results OR j.tries >= j.max_total_results" \
	" THEN 'error' ELSE 'unsent' END"

/*
 * Why job j ends in error after one more failure (0.7.0's job.reason; NULL
 * while it does not), in SQL, given its next state.
 */
#define ALLOT_REASON_AFTER_FAILURE_SQL(next) \
	"CASE WHEN " next " <> 'error' THEN NULL" \
	" WHEN j.failures + 1 > j.max_error_results THEN 'too many errors'" \
	" ELSE 'too many sendings' END"

#endif							/* ALLOT_JOB_RETRY_H */
