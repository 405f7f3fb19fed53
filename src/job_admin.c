/*
 * job_admin.c: what an operator does to jobs (0.6.0).  merge_host, which
 * moves a re-attached host's jobs and credit, is PL/pgSQL in the script.
 *
 *   requeue_job(job, now)      start a job over: unsent, its tries and
 *                              failures forgotten; a host that has it in
 *                              progress is told no more (its report is
 *                              refused), and, like every host that had the
 *                              job, is not sent it again
 *   time_out_host(host, now)   every job in progress on the host times out
 *                              now, as at its deadline (the transitioner's
 *                              plan): without moving the farm's clock
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "entry.h"
#include "transitioner.h"
#include "workload_cache.h"

static SPIPlanPtr read_plan = NULL;
static SPIPlanPtr requeue_plan[2] = {NULL, NULL};	/* before 0.7.0; with reason */
static SPIPlanPtr host_plan = NULL;

PG_FUNCTION_INFO_V1(allot_requeue_job);

/* requeue_job(job_id, now): returns {job_id, state, was, host_id}. */
Datum
allot_requeue_job(PG_FUNCTION_ARGS)
{
	int64		job_id;
	TimestampTz now;
	Datum		args[2];
	bool		isnull;
	char	   *was;
	Datum		host;
	bool		no_host;
	char	   *host_text;
	char	   *reply;
	bool		voices;

	allot_check_settings();
	allot_require_writable("allot.requeue_job");
	allot_require_arg(fcinfo, 0, "job_id");
	job_id = PG_GETARG_INT64(0);
	now = allot_now_arg(fcinfo, 1);

	SPI_connect();
	allot_lock_for_write("job");	/* before any row: entry.h */
	voices = allot_workload_cache()->voices;
	if (requeue_plan[voices] == NULL)
	{
		Oid			types[2] = {INT8OID, TIMESTAMPTZOID};

		read_plan = allot_prepare("SELECT state, host_id FROM allot.job WHERE id = $1 FOR UPDATE",
								  1, types);

		/*
		 * A sending in progress ends with a report of its own, 'requeued',
		 * so that the host's report of it is refused, and the host is not
		 * sent the job again.  The job forgets its host, estimate, verdict
		 * and counts; it keeps its sending number, which only grows.
		 */
		requeue_plan[voices] = allot_prepare(psprintf(
									 "WITH ended AS ("
									 "  INSERT INTO allot.job_report"
									 "         (job_id, host_id, sent_at, outcome, reported_at, reply, sending)"
									 "  SELECT id, host_id, sent_at, 'requeued', $2,"
									 "         jsonb_build_object('job_id', id, 'outcome', 'requeued',"
									 "                            'state', 'unsent'), sending"
									 "    FROM allot.job WHERE id = $1 AND state = 'in_progress'"
									 "  ON CONFLICT DO NOTHING)"
									 "UPDATE allot.job"
									 "   SET state = 'unsent', host_id = NULL, app_version_id = NULL,"
									 "       sent_at = NULL, deadline = NULL, est_secs = NULL,"
									 "       peak_flops_per_sec = NULL, app_units = NULL, elapsed_secs = NULL,"
									 "       raw_flops_per_sec = NULL, validated = NULL, credit = NULL,"
									 "       sampled = false, tries = 0, failures = 0%s"
									 " WHERE id = $1",
									 voices ? ", reason = NULL, resend_to_failed = false" : ""),
									 2, types);
	}
	args[0] = Int64GetDatum(job_id);
	args[1] = TimestampTzGetDatum(now);
	if (SPI_execute_plan(read_plan, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.job");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("job %lld does not exist", (long long) job_id),
				 errhint("Jobs are the rows of allot.job.")));
	was = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	host = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &no_host);
	if (strcmp(was, "done") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("job %lld is done: it is not requeued", (long long) job_id),
				 errhint("A done job goes back to unsent when the validator finds it invalid: validate_job(%lld, false).",
						 (long long) job_id)));
	if (SPI_execute_plan(requeue_plan[voices], args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not requeue job %lld", (long long) job_id);
	SPI_finish();

	host_text = no_host ? "null" : psprintf("%lld", (long long) DatumGetInt64(host));
	reply = psprintf("{\"job_id\": %lld, \"state\": \"unsent\", \"was\": \"%s\", \"host_id\": %s}",
					 (long long) job_id, was, host_text);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(reply)));
}

PG_FUNCTION_INFO_V1(allot_time_out_host);

/* time_out_host(host_id, now): how many jobs timed out. */
Datum
allot_time_out_host(PG_FUNCTION_ARGS)
{
	int64		host_id;
	TimestampTz now;
	Datum		arg;
	int64		n;

	allot_check_settings();
	allot_require_writable("allot.time_out_host");
	allot_require_arg(fcinfo, 0, "host_id");
	host_id = PG_GETARG_INT64(0);
	now = allot_now_arg(fcinfo, 1);

	SPI_connect();
	allot_begin_host_request(host_id, "job");	/* the order of every writer: entry.h */
	if (host_plan == NULL)
	{
		Oid			types[1] = {INT8OID};

		host_plan = allot_prepare("SELECT FROM allot.host WHERE id = $1", 1, types);
	}
	arg = Int64GetDatum(host_id);
	if (SPI_execute_plan(host_plan, &arg, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.host");
	if (SPI_processed == 0)
		allot_host_not_found(host_id);
	n = allot_time_out_jobs(now, &host_id, PG_INT32_MAX);
	SPI_finish();
	PG_RETURN_INT64(n);
}
