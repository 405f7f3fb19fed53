/*
 * report.c: report_job (a host returns a job) and estimate_job.
 *
 * A report is accepted only from the host the job is in progress on, and
 * from 0.6.0, when it names a sending, only for the job's current sending:
 * a report of a sending the job has moved on from (timed out and sent to
 * another host, taken back by the operator) is refused.  The outcome
 * decides the job's next state:
 *
 *   success   done; the host's quota for the version doubles (up to
 *             allot.daily_quota), its seconds per app unit learns from the
 *             report (seed 004); the app's statistics learn from it once it
 *             is validated (the transitioner)
 *   error,    a failed sending: the quota halves (not below 1: error_backoff.h), the
 *   aborted,  host backs off, and the job goes back to unsent for another host,
 *   lost      unless its own limits say to give up (job_retry.h): then it is
 *             an error, with its reason (0.7.0).
 *             Before 0.6.0: error stays an error, aborted goes back
 *
 * Every accepted report is kept in allot.job_report with its reply, so that
 * a repeated identical report gets the same reply and changes nothing.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "entry.h"
#include "dispatch_host.h"
#include "error_backoff.h"
#include "job_retry.h"
#include "reliability.h"
#include "workload_cache.h"

/* Weight of a new report in a host's seconds per app unit (seed 004). */
#define SECONDS_PER_APP_UNIT_WEIGHT 0.1

/* Plans per schema: [0] before 0.6.0, [1] with sendings, [2] with hosts'
 * reliability (0.7.0; only the accepting plan differs). */
static SPIPlanPtr job_plan[2] = {NULL, NULL};
static SPIPlanPtr previous_plan[2] = {NULL, NULL};
static SPIPlanPtr accept_plan[3] = {NULL, NULL, NULL};
static SPIPlanPtr estimate_job_plan[2] = {NULL, NULL};	/* before 0.7.0; with bound_factor */

/* The job's row as read under its lock, by column. */
enum
{
	JOB_STATE = 1, JOB_HOST, JOB_SENT_AT, JOB_VERSION, JOB_PEAK, JOB_PREDICTED,
	JOB_HOST_EXISTS, JOB_SENDING, JOB_TRIES, JOB_FAILURES, JOB_MAX_ERRORS, JOB_MAX_TOTAL
};

static void
prepare_plans(int version)
{
	bool		sendings = version > 0;
	Oid			job_args[2] = {INT8OID, INT8OID};
	Oid			previous_args[3] = {INT8OID, INT8OID, INT4OID};
	Oid			accept_args[19] = {
		INT8OID, INT8OID, TEXTOID, FLOAT8OID, FLOAT8OID, FLOAT8OID,
		TIMESTAMPTZOID, FLOAT8OID, TEXTOID, INT4OID, INT4OID,
		TIMESTAMPTZOID, INT8OID, FLOAT8OID, FLOAT8OID, INT4OID, INT4OID,
		INT4OID, INT4OID
	};

	if (accept_plan[version] != NULL)
		return;

	job_plan[sendings] = allot_prepare(sendings ?
									   "SELECT j.state, j.host_id, j.sent_at, j.app_version_id,"
									   "       j.peak_flops_per_sec, j.predicted_app_units,"
									   "       EXISTS (SELECT FROM allot.host WHERE id = $2),"
									   "       j.sending, j.tries, j.failures,"
									   "       j.max_error_results, j.max_total_results"
									   "  FROM allot.job j"
									   " WHERE j.id = $1 FOR UPDATE" :
									   "SELECT j.state, j.host_id, j.sent_at, j.app_version_id,"
									   "       j.peak_flops_per_sec, j.predicted_app_units,"
									   "       EXISTS (SELECT FROM allot.host WHERE id = $2)"
									   "  FROM allot.job j"
									   " WHERE j.id = $1 FOR UPDATE",
									   2, job_args);
	/* The host's latest report of the job ($3: of that sending, if named). */
	previous_plan[sendings] = sendings ?
		allot_prepare("SELECT outcome, app_units, elapsed_secs, raw_flops_per_sec, reply, sending"
					  "  FROM allot.job_report WHERE job_id = $1 AND host_id = $2"
					  "   AND ($3::int IS NULL OR sending = $3)"
					  " ORDER BY sent_at DESC LIMIT 1",
					  3, previous_args) :
		allot_prepare("SELECT outcome, app_units, elapsed_secs, raw_flops_per_sec, reply,"
					  "       $3::int AS sending"
					  "  FROM allot.job_report WHERE job_id = $1 AND host_id = $2"
					  " ORDER BY sent_at DESC LIMIT 1",
					  3, previous_args);

	/*
	 * $1 job, $2 host, $3 outcome, $4 app units as claimed, $5 elapsed as
	 * claimed, $6 raw FLOPS as claimed (the job keeps them at most its peak:
	 * seed 004's raw FLOPS are the peak or less), $7 now, $8 a new seconds
	 * per app unit (NULL: unchanged), $9 next state, $10 quota change (+1
	 * doubles, -1 lowers), $11 the quota ceiling; $12..$14 the job's
	 * sent_at, app version and predicted app units as read under its row
	 * lock; $15 the elapsed time counted (the claim, at most the time since
	 * the job was sent), which the job keeps; $16 failures to add (0 or 1),
	 * $17 the sending reported (0.6.0).  A job that goes back to unsent
	 * forgets its host, estimate and verdict; one that gives up keeps its
	 * last host.  The app's statistics are not touched: the transitioner
	 * learns from validated successes only.  From 0.7.0 a failed sending
	 * also counts against its host's reliability (reliability.h): its
	 * consecutive valid results start again from 0.  And (issue 32,
	 * error_backoff.h) a failure halves the quota, lengthens the host's
	 * streak of failures and its backoff ($18 the first backoff, $19 the
	 * longest), and says why a job that gives up ended; a success ends
	 * the streak.
	 */
	accept_plan[version] = allot_prepare(psprintf(
												   "WITH j AS ("
												   "  UPDATE allot.job"
												   "     SET state = $9, returned_at = $7, outcome = $3,"
												   "         app_units = CASE WHEN $3 = 'success' THEN $4 END,"
												   "         elapsed_secs = $15,"
												   "         raw_flops_per_sec = CASE WHEN $3 = 'success'"
												   "                                  THEN least($6, peak_flops_per_sec) END,"
												   "         host_id = CASE WHEN $9 = 'unsent' THEN NULL ELSE host_id END,"
												   "         app_version_id = CASE WHEN $9 = 'unsent' THEN NULL ELSE app_version_id END,"
												   "         sent_at = CASE WHEN $9 = 'unsent' THEN NULL ELSE sent_at END,"
												   "         deadline = CASE WHEN $9 = 'unsent' THEN NULL ELSE deadline END,"
												   "         est_secs = CASE WHEN $9 = 'unsent' THEN NULL ELSE est_secs END,"
												   "         peak_flops_per_sec = CASE WHEN $9 = 'unsent' THEN NULL"
												   "                                   ELSE peak_flops_per_sec END%s"
												   "   WHERE id = $1"
												   "  RETURNING $12::timestamptz AS sent_at, $13::bigint AS app_version_id,"
												   "            $14::float8 AS predicted_app_units),"
												   " hv AS ("
												   "  INSERT INTO allot.host_app_version AS hv"
												   "         (host_id, app_version_id, quota, seconds_per_app_unit, n_success, n_error)"
												   "  SELECT $2, j.app_version_id,"
												   "         CASE WHEN $10 > 0 THEN $11 ELSE " ALLOT_QUOTA_AFTER_FAILURES_SQL("$11", "1") " END, $8,"
												   "         ($3 = 'success')::int, ($3 <> 'success')::int FROM j"
												   "  ON CONFLICT (host_id, app_version_id) DO UPDATE"
												   "     SET quota = CASE WHEN $10 > 0 THEN least(hv.quota * 2, $11)"
												   "                      ELSE " ALLOT_QUOTA_AFTER_FAILURES_SQL("hv.quota", "1") " END,"
												   "         seconds_per_app_unit = CASE WHEN $8 IS NULL THEN hv.seconds_per_app_unit"
												   "                                     WHEN hv.seconds_per_app_unit IS NULL THEN $8"
												   "                                     ELSE hv.seconds_per_app_unit"
												   "                                          + " CppAsString2(SECONDS_PER_APP_UNIT_WEIGHT)
												   "                                          * ($8 - hv.seconds_per_app_unit) END,"
												   "         n_success = hv.n_success + excluded.n_success,"
												   "         n_error = hv.n_error + excluded.n_error"
												   "  RETURNING quota),%s"
												   " reply AS ("
												   "  SELECT jsonb_build_object('job_id', $1, 'outcome', $3, 'state', $9,"
												   "                            'quota', (SELECT quota FROM hv)) AS reply, j.sent_at"
												   "    FROM j)"
												   "INSERT INTO allot.job_report"
												   "       (job_id, host_id, sent_at, outcome, app_units, elapsed_secs,"
												   "        raw_flops_per_sec, reported_at, reply%s)"
												   "SELECT $1, $2, r.sent_at, $3, $4, $5, $6, $7, r.reply%s FROM reply r"
												   " RETURNING reply",
												   version == 2 ? ", failures = failures + $16,"
												   "         reason = CASE WHEN $9 <> 'error' THEN NULL"
												   "                       WHEN failures + $16 > max_error_results THEN 'too many errors'"
												   "                       ELSE 'too many sendings' END" :
												   sendings ? ", failures = failures + $16" : "",
												   version < 2 ? "" :
												   " rel AS ("
												   "  INSERT INTO allot.host_reliability AS r"
												   "         (host_id, failed_sendings, error_rate, error_streak, backoff_until)"
												   "  SELECT $2, 1, " CppAsString2(ALLOT_ERROR_RATE_WEIGHT) ", 1,"
												   "         " ALLOT_BACKOFF_UNTIL_SQL("$7", "1", "$18", "$19")
												   "    FROM j WHERE $16 > 0"
												   "  ON CONFLICT (host_id) DO UPDATE"
												   "     SET failed_sendings = r.failed_sendings + 1, consecutive_valid = 0,"
												   "         reliable_at = NULL,"
												   "         error_rate = r.error_rate + " CppAsString2(ALLOT_ERROR_RATE_WEIGHT)
												   "                      * (1 - r.error_rate),"
												   "         error_streak = r.error_streak + 1,"
												   "         backoff_until = " ALLOT_BACKOFF_UNTIL_SQL("$7", "r.error_streak + 1", "$18", "$19") "),"
												   " calm AS ("
												   "  UPDATE allot.host_reliability SET error_streak = 0, backoff_until = NULL"
												   "   WHERE host_id = $2 AND $3 = 'success' AND error_streak > 0"
												   "     AND EXISTS (SELECT FROM j)),",
												   sendings ? ", sending" : "",
												   sendings ? ", $17" : ""),
										  19, accept_args);
}

static void
job_not_found(int64 job_id)
{
	ereport(ERROR,
			(errcode(ERRCODE_NO_DATA_FOUND),
			 errmsg("job %lld does not exist", (long long) job_id),
			 errhint("Jobs are the rows of allot.job.")));
}

/* A positive finite measurement within [lo, hi], or NULL when optional. */
static bool
measurement_arg(FunctionCallInfo fcinfo, int argno, const char *name, bool optional,
				double lo, double hi, double *value)
{
	if (PG_ARGISNULL(argno))
	{
		if (!optional)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be NULL", name)));
		return false;
	}
	*value = PG_GETARG_FLOAT8(argno);
	if (!isfinite(*value) || *value <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a positive finite number, not %g", name, *value)));
	allot_check_range(*value, lo, hi, name);
	return true;
}

static bool
same_number(HeapTuple t, TupleDesc d, int column, bool given, double value)
{
	bool		isnull;
	Datum		v = SPI_getbinval(t, d, column, &isnull);

	if (isnull || !given)
		return isnull && !given;
	return DatumGetFloat8(v) == value;
}

PG_FUNCTION_INFO_V1(allot_report_job);

/* A report that is not accepted: a repeat, or a mistake.  Does not return. */
static Datum
not_accepted(int64 host_id, int64 job_id, bool sendings, Datum *pargs, const char *outcome,
			 double app_units, bool has_elapsed, double elapsed, bool has_raw, double raw_flops,
			 const char *state, int64 job_host, int job_sending, bool has_sending, int sending)
{
	bool		isnull;

	/*
	 * Read with a fresh snapshot: if we waited for the job's row lock, the
	 * report that took it may have committed meanwhile.
	 */
	if (SPI_execute_plan(previous_plan[sendings], pargs, has_sending ? NULL : "  n", false, 1) !=
		SPI_OK_SELECT)
		elog(ERROR, "could not read allot.job_report");
	if (SPI_processed == 1)
	{
		HeapTuple	p = SPI_tuptable->vals[0];
		TupleDesc	pd = SPI_tuptable->tupdesc;
		char	   *was = TextDatumGetCString(SPI_getbinval(p, pd, 1, &isnull));

		if (strcmp(was, "timed_out") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("job %lld timed out on host %lld: its report comes too late",
							(long long) job_id, (long long) host_id),
					 errdetail("The job went back to unsent at its deadline; nothing was recorded.")));
		if (strcmp(was, "requeued") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("job %lld was taken back from host %lld: its report is not wanted",
							(long long) job_id, (long long) host_id),
					 errdetail("The operator requeued the job while the host had it; nothing was recorded.")));
		if (strcmp(was, outcome) == 0 &&
			same_number(p, pd, 2, true, app_units) &&
			same_number(p, pd, 3, has_elapsed, elapsed) &&
			same_number(p, pd, 4, has_raw, raw_flops))
		{
			Datum		reply = SPI_datumTransfer(SPI_getbinval(p, pd, 5, &isnull), false, -1);

			SPI_finish();
			return reply;
		}
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("job %lld was already reported by host %lld with a different result",
						(long long) job_id, (long long) host_id),
				 errdetail("A repeated report must repeat the outcome, app units, elapsed time and FLOPS.")));
	}
	if (strcmp(state, "in_progress") == 0 && job_host == host_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sending %d of job %lld is not the one in progress on host %lld",
						sending, (long long) job_id, (long long) host_id),
				 errdetail("Sending %d is.", job_sending)));
	if (strcmp(state, "in_progress") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("job %lld was not sent to host %lld", (long long) job_id,
						(long long) host_id),
				 errdetail("Only the host a job is in progress on may report it.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("job %lld is not in progress on host %lld", (long long) job_id,
					(long long) host_id),
			 errdetail("The job is %s.", state)));
	pg_unreachable();
}

/*
 * report_job(host_id, job_id, outcome, app_units, elapsed_secs,
 *            raw_flops_per_sec, now [, sending])
 */
Datum
allot_report_job(PG_FUNCTION_ARGS)
{
	int64		host_id,
				job_id;
	char	   *outcome;
	double		app_units = 1,
				elapsed = 0,
				raw_flops = 0;
	bool		has_elapsed,
				has_raw;
	bool		has_sending = PG_NARGS() > 7 && !PG_ARGISNULL(7);
	int			sending = has_sending ? PG_GETARG_INT32(7) : 0;
	bool		sendings;
	int			version;
	TimestampTz now;
	Datum		jargs[3];
	HeapTuple	t;
	TupleDesc	d;
	bool		isnull;
	char	   *state;
	int64		job_host;
	int			job_sending = 0;
	Datum		reply;

	allot_check_settings();
	allot_require_writable("allot.report_job");
	allot_require_arg(fcinfo, 0, "host_id");
	allot_require_arg(fcinfo, 1, "job_id");
	allot_require_arg(fcinfo, 2, "outcome");
	host_id = PG_GETARG_INT64(0);
	job_id = PG_GETARG_INT64(1);
	outcome = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (strcmp(outcome, "success") != 0 && strcmp(outcome, "error") != 0 &&
		strcmp(outcome, "aborted") != 0 && strcmp(outcome, "lost") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown outcome \"%s\"", outcome),
				 errhint("An outcome is success, error, aborted or lost.")));
	if (has_sending && sending < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sending must be a sending's number, 1 or more, not %d", sending)));
	(void) measurement_arg(fcinfo, 3, "app_units", false,
						   ALLOT_MIN_APP_UNITS, ALLOT_MAX_APP_UNITS, &app_units);
	has_elapsed = measurement_arg(fcinfo, 4, "elapsed_secs", true,
								  ALLOT_MIN_SECS, ALLOT_MAX_SECS, &elapsed);
	has_raw = measurement_arg(fcinfo, 5, "raw_flops_per_sec", true,
							  ALLOT_MIN_FLOPS, ALLOT_MAX_FLOPS, &raw_flops);
	now = allot_now_arg(fcinfo, 6);

	SPI_connect();
	allot_lock_for_write("job");	/* before any row: entry.h */
	{
		const WorkloadCache *cache = allot_workload_cache();

		sendings = cache->job_sendings;
		version = cache->voices ? 2 : sendings ? 1 : 0;
	}
	prepare_plans(version);
	jargs[0] = Int64GetDatum(job_id);
	jargs[1] = Int64GetDatum(host_id);
	jargs[2] = Int32GetDatum(sending);
	if (SPI_execute_plan(job_plan[sendings], jargs, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.job");
	if (SPI_processed == 0)
		job_not_found(job_id);
	t = SPI_tuptable->vals[0];
	d = SPI_tuptable->tupdesc;
	if (!DatumGetBool(SPI_getbinval(t, d, JOB_HOST_EXISTS, &isnull)))
		allot_host_not_found(host_id);
	state = TextDatumGetCString(SPI_getbinval(t, d, JOB_STATE, &isnull));
	job_host = DatumGetInt64(SPI_getbinval(t, d, JOB_HOST, &isnull));
	if (isnull)
		job_host = 0;
	if (sendings)
		job_sending = DatumGetInt32(SPI_getbinval(t, d, JOB_SENDING, &isnull));

	/* Not ours now (another sending, or none): a repeat, or a mistake. */
	if (strcmp(state, "in_progress") != 0 || job_host != host_id ||
		(sendings && has_sending && sending != job_sending))
		PG_RETURN_DATUM(not_accepted(host_id, job_id, sendings, jargs, outcome, app_units,
									 has_elapsed, elapsed, has_raw, raw_flops, state, job_host,
									 job_sending, has_sending, sending));

	{
		bool		success = strcmp(outcome, "success") == 0;
		const char *next;
		int			failed = success ? 0 : 1;
		Datum		args[19];
		char		nulls[19];
		TimestampTz sent_at = DatumGetTimestampTz(SPI_getbinval(t, d, JOB_SENT_AT, &isnull));
		double		out_secs = allot_secs_between(sent_at, now);
		double		counted_elapsed = elapsed;

		if (success)
			next = "done";
		else if (sendings)
			next = allot_job_gives_up(DatumGetInt32(SPI_getbinval(t, d, JOB_FAILURES, &isnull)) + 1,
									  DatumGetInt32(SPI_getbinval(t, d, JOB_TRIES, &isnull)),
									  DatumGetInt32(SPI_getbinval(t, d, JOB_MAX_ERRORS, &isnull)),
									  DatumGetInt32(SPI_getbinval(t, d, JOB_MAX_TOTAL, &isnull))) ?
				"error" : "unsent";
		else
			next = strcmp(outcome, "error") == 0 ? "error" : "unsent";

		/*
		 * A job cannot have run for longer than it has been out: elapsed
		 * time counts at most as the time since it was sent (job_report
		 * keeps the claim).  The app units count as claimed here; the
		 * transitioner bounds them when it learns from the job.
		 */
		if (has_elapsed && counted_elapsed > out_secs)
			counted_elapsed = Max(out_secs, ALLOT_MIN_SECS);

		memset(nulls, ' ', sizeof(nulls));
		args[0] = Int64GetDatum(job_id);
		args[1] = Int64GetDatum(host_id);
		args[2] = CStringGetTextDatum(outcome);
		args[3] = Float8GetDatum(app_units);
		args[4] = Float8GetDatum(elapsed);
		nulls[4] = has_elapsed ? ' ' : 'n';
		args[5] = Float8GetDatum(raw_flops);
		nulls[5] = has_raw ? ' ' : 'n';
		args[6] = TimestampTzGetDatum(now);
		/* What this report says of the host's seconds per app unit. */
		args[7] = Float8GetDatum(has_elapsed ? counted_elapsed / app_units : 0);
		nulls[7] = success && has_elapsed ? ' ' : 'n';
		args[8] = CStringGetTextDatum(next);
		args[9] = Int32GetDatum(success ? 1 : -1);
		args[10] = Int32GetDatum(allot_daily_quota);
		args[11] = SPI_getbinval(t, d, JOB_SENT_AT, &isnull);
		args[12] = SPI_getbinval(t, d, JOB_VERSION, &isnull);
		args[13] = SPI_getbinval(t, d, JOB_PREDICTED, &isnull);
		args[14] = Float8GetDatum(counted_elapsed);
		nulls[14] = has_elapsed ? ' ' : 'n';
		args[15] = Int32GetDatum(failed);
		args[16] = Int32GetDatum(job_sending);
		args[17] = Int32GetDatum(allot_error_backoff);
		args[18] = Int32GetDatum(allot_max_error_backoff);

		if (SPI_execute_plan(accept_plan[version], args, nulls, false, 1) != SPI_OK_INSERT_RETURNING ||
			SPI_processed != 1)
			elog(ERROR, "could not record the report of job %lld", (long long) job_id);
		reply = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
												1, &isnull), false, -1);
	}
	SPI_finish();
	PG_RETURN_DATUM(reply);
}

PG_FUNCTION_INFO_V1(allot_estimate_job);

/*
 * estimate_job(host_id, job_id): the version the host would run the job
 * with (the highest projected FLOPS among those that run there), the seed
 * 004 estimate and bound, and the version's peak FLOPS on the host.  No row
 * when no version of the job's app runs on the host.
 */
Datum
allot_estimate_job(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		host_id,
				job_id;
	Datum		args[1];
	const WorkloadCache *cache;
	DispatchHost host;
	int64		app_id;
	double		predicted,
				job_bound_factor;
	bool		isnull;
	int			app = -1,
				best = -1;
	double		best_flops = -1;
	HostVersion best_hv;
	TupleDesc	desc;
	Tuplestorestate *store;
	MemoryContext old;

	allot_check_settings();
	allot_require_arg(fcinfo, 0, "host_id");
	allot_require_arg(fcinfo, 1, "job_id");
	host_id = PG_GETARG_INT64(0);
	job_id = PG_GETARG_INT64(1);
	store = allot_materialize(fcinfo, &desc);

	SPI_connect();
	cache = allot_workload_cache();
	if (estimate_job_plan[cache->voices] == NULL)
	{
		Oid			types[1] = {INT8OID};

		estimate_job_plan[cache->voices] = allot_prepare(
									cache->voices ?
									"SELECT w.app_id, j.predicted_app_units, coalesce(j.bound_factor, 0)"
									"  FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id"
									" WHERE j.id = $1" :
									"SELECT w.app_id, j.predicted_app_units, 0::float8"
									"  FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id"
									" WHERE j.id = $1", 1, types);
	}
	allot_read_dispatch_host(&host, cache, host_id, false);
	args[0] = Int64GetDatum(job_id);
	if (SPI_execute_plan(estimate_job_plan[cache->voices], args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.job");
	if (SPI_processed == 0)
		job_not_found(job_id);
	app_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull)
		app_id = -1;
	predicted = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	job_bound_factor = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));

	for (int a = 0; a < cache->n_apps; a++)
		if (cache->apps[a].id == app_id)
			app = a;
	for (int k = 0; app >= 0 && k < cache->apps[app].n_versions; k++)
	{
		int			v = cache->apps[app].first_version + k;
		HostVersion hv;
		double		flops;

		if (!allot_version_runs_on(&cache->versions[v], &host, cache))
			continue;
		allot_read_host_version(&hv, host_id, cache->versions[v].id);
		flops = allot_projected_flops(&hv, allot_version_peak_flops(&cache->versions[v],
																	&host, cache));
		if (flops > best_flops)
		{
			best = v;
			best_flops = flops;
			best_hv = hv;
		}
	}
	if (best >= 0)
	{
		AppStats	stats;
		EstimateInput in;
		double		est,
					bound;
		Datum		values[4];
		bool		nulls[4] = {false};

		allot_read_app_stats(&stats, app_id, cache->voices);
		in.seconds_per_app_unit = best_hv.seconds_per_app_unit;
		in.est_flops_per_au = cache->apps[app].est_flops_per_au;
		in.peak_flops = best_flops;
		in.predicted_app_units = predicted;
		in.default_seconds_per_app_unit = allot_default_seconds_per_app_unit;
		in.run_flops_bound = allot_app_run_flops_bound(&cache->apps[app], allot_bound_min_reports);
		in.default_bound_factor = allot_default_bound_factor;
		in.bound_factor = Max(cache->apps[app].bound_factor, job_bound_factor);
		allot_estimate(&in, &stats, &est, &bound);
		values[0] = Int64GetDatum(cache->versions[best].id);
		values[1] = Float8GetDatum(est);
		values[2] = Float8GetDatum(bound);
		values[3] = Float8GetDatum(allot_version_peak_flops(&cache->versions[best], &host, cache));
		old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
		tuplestore_putvalues(store, desc, values, nulls);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	return (Datum) 0;
}
