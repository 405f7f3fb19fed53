/*
 * validate.c: validate_job, the project's validator's verdict on a result
 * (seed 004: "grant each validated job credit"; issue 30: quorum
 * replication and host reliability).
 *
 *   validate_job(job_id, valid [, sending, digest, now])
 *
 * Before 0.7.0 the verdict decides the job: valid, it is credited and
 * learnt from; invalid, its sending failed and it goes back to unsent for
 * another host (or gives up, job_retry.h).  From 0.7.0 the job may have
 * replicas (quorum.h): the verdict is on one replica's result, named by
 * the replica's own job id and, if given, its sending; the job and its
 * replicas are locked in id order, quorum.c decides, and one statement per
 * kind of change writes the decision:
 *
 *   the judged row      its verdict and digest; or, when its sending
 *                       failed, the failure as before 0.7.0
 *   decided rows        validated true (credited by the transitioner, and
 *                       learnt from) or false (no credit)
 *   unneeded replicas   still unsent when the job was decided: removed
 *   one more replica    when the owners disagree and nothing is left out
 *   reliability         each newly valid or invalid result counts for its
 *                       host (reliability.h)
 *
 * Locks: the judged row, then the job's verdict lock (entry.h,
 * allot_lock_quorum), then what the decision writes.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "entry.h"
#include "job_retry.h"
#include "quorum.h"
#include "reliability.h"
#include "workload_cache.h"

static SPIPlanPtr validate_plan[2] = {NULL, NULL};	/* before 0.6.0; with retries */
static SPIPlanPtr group_plan = NULL;
static SPIPlanPtr failure_plan = NULL;
static SPIPlanPtr decide_plan = NULL;
static SPIPlanPtr remove_plan = NULL;
static SPIPlanPtr replica_plan = NULL;
static SPIPlanPtr reliability_plan = NULL;
static SPIPlanPtr state_plan = NULL;

/*
 * A failed sending (job_retry.h), as before 0.7.0: the job goes back to
 * unsent for another host (its host, which has a report of it, never gets
 * it again), or gives up; its credit is withdrawn.  $1 job, $2 false.
 */
#define FAILED_RESULT_SQL(extra) \
	"WITH v AS (" \
	"  SELECT j.id, CASE WHEN $2 THEN 'done' ELSE " ALLOT_STATE_AFTER_FAILURE_SQL " END AS next" \
	"    FROM allot.job j" \
	"   WHERE j.id = $1 AND j.state = 'done' FOR UPDATE)" \
	"UPDATE allot.job j" \
	"   SET state = v.next, credit = CASE WHEN $2 THEN j.credit END," \
	"       validated = CASE WHEN v.next = 'unsent' THEN NULL ELSE $2 END," \
	"       failures = j.failures + CASE WHEN $2 THEN 0 ELSE 1 END," \
	"       sampled = j.sampled AND v.next <> 'unsent'," \
	"       host_id = CASE WHEN v.next = 'unsent' THEN NULL ELSE j.host_id END," \
	"       app_version_id = CASE WHEN v.next = 'unsent' THEN NULL ELSE j.app_version_id END," \
	"       sent_at = CASE WHEN v.next = 'unsent' THEN NULL ELSE j.sent_at END," \
	"       deadline = CASE WHEN v.next = 'unsent' THEN NULL ELSE j.deadline END," \
	"       est_secs = CASE WHEN v.next = 'unsent' THEN NULL ELSE j.est_secs END," \
	"       peak_flops_per_sec = CASE WHEN v.next = 'unsent' THEN NULL" \
	"                                 ELSE j.peak_flops_per_sec END," \
	"       app_units = CASE WHEN v.next = 'unsent' THEN NULL ELSE j.app_units END," \
	"       elapsed_secs = CASE WHEN v.next = 'unsent' THEN NULL ELSE j.elapsed_secs END," \
	"       raw_flops_per_sec = CASE WHEN v.next = 'unsent' THEN NULL" \
	"                                ELSE j.raw_flops_per_sec END" extra \
	"  FROM v WHERE j.id = v.id RETURNING 1"

static void
prepare_plans(bool voices)
{
	Oid			validate_args[2] = {INT8OID, BOOLOID};

	if (!voices)
	{
		/* Each when first needed: before 0.6.0 jobs have no failures. */
		if (validate_plan[0] == NULL)
			validate_plan[0] = allot_prepare(
											 "UPDATE allot.job SET validated = $2, credit = CASE WHEN $2 THEN credit END"
											 " WHERE id = $1 AND state = 'done' RETURNING 1",
											 2, validate_args);
		return;
	}
	if (group_plan != NULL)
		return;
	{
		Oid			one[1] = {INT8OID};
		Oid			decide_args[5] = {INT8ARRAYOID, INT4ARRAYOID, INT8OID, BOOLOID, TEXTOID};
		Oid			ids[1] = {INT8ARRAYOID};
		Oid			rel_args[4] = {INT8ARRAYOID, BOOLARRAYOID, TIMESTAMPTZOID, INT4OID};

		/*
		 * The judged row is locked first, as a report locks its row (a
		 * farm may report and validate in one transaction); then one
		 * verdict at a time on the job (allot_lock_quorum); then the
		 * job's members, the job and its replicas, are read, not locked:
		 * a sibling being reported meanwhile is held by its report, which
		 * would wait for this lock while this waited for its row.  The
		 * decision writes only members done already, and replicas still
		 * unsent, which no report holds.
		 */
		state_plan = allot_prepare("SELECT coalesce(replica_of, id), state FROM allot.job WHERE id = $1"
								   " FOR UPDATE",
								   1, one);
		group_plan = allot_prepare(
								   "SELECT j.id, j.state, j.sending, j.replica_of IS NOT NULL,"
								   "       CASE WHEN h.owner_id IS NULL THEN j.host_id ELSE -h.owner_id END,"
								   "       j.verdict, j.digest, j.validated, j.min_quorum,"
								   "       j.max_total_results, j.host_id"
								   "  FROM allot.job j LEFT JOIN allot.host h ON h.id = j.host_id"
								   " WHERE j.id = $1 OR j.replica_of = $1"
								   " ORDER BY j.id",
								   1, one);
		failure_plan = allot_prepare(FAILED_RESULT_SQL(", verdict = NULL, digest = NULL"),
									 2, validate_args);

		/*
		 * $1, $2: the rows and their decisions (-1: none); $3 the judged
		 * row, $4 and $5 its verdict and digest.  An invalid result is not
		 * credited.
		 */
		decide_plan = allot_prepare(
									"UPDATE allot.job j"
									"   SET validated = CASE d.v WHEN 1 THEN true WHEN 0 THEN false END,"
									"       credit = CASE WHEN d.v = 1 THEN j.credit END,"
									"       verdict = CASE WHEN j.id = $3 THEN $4 ELSE j.verdict END,"
									"       digest = CASE WHEN j.id = $3 THEN $5 ELSE j.digest END"
									"  FROM unnest($1, $2) d(id, v)"
									" WHERE j.id = d.id",
									5, decide_args);
		remove_plan = allot_prepare(
									"DELETE FROM allot.job WHERE id = ANY ($1) AND state = 'unsent'"
									"   AND replica_of IS NOT NULL",
									1, ids);
		replica_plan = allot_prepare(
									 "INSERT INTO allot.job (workload_id, predicted_app_units, reference,"
									 "       max_error_results, max_total_results, min_quorum,"
									 "       target_nresults, replica_of)"
									 "SELECT workload_id, predicted_app_units, reference, max_error_results,"
									 "       max_total_results, min_quorum, target_nresults, id"
									 "  FROM allot.job WHERE id = $1",
									 1, one);

		/*
		 * Each host's record (reliability.h): $1 hosts, $2 whether its
		 * result was found valid, $3 now, $4 allot.reliable_after.  In host
		 * order, as every writer of the records takes them.
		 */
		reliability_plan = allot_prepare(
										 "INSERT INTO allot.host_reliability AS r"
										 "       (host_id, valid_results, invalid_results, consecutive_valid,"
										 "        error_rate, proven_at, reliable_at)"
										 "SELECT x.h, x.v::int, (NOT x.v)::int, x.v::int,"
										 "       CASE WHEN x.v THEN 0 ELSE " CppAsString2(ALLOT_ERROR_RATE_WEIGHT) " END,"
										 "       CASE WHEN x.v THEN $3 END,"
										 "       CASE WHEN x.v AND $4 <= 1 THEN $3 END"
										 "  FROM unnest($1, $2) x(h, v)"
										 " WHERE EXISTS (SELECT FROM allot.host WHERE id = x.h)"
										 " ORDER BY x.h "
										 "ON CONFLICT (host_id) DO UPDATE"
										 "   SET valid_results = r.valid_results + excluded.valid_results,"
										 "       invalid_results = r.invalid_results + excluded.invalid_results,"
										 "       consecutive_valid = CASE WHEN excluded.valid_results > 0"
										 "                                THEN r.consecutive_valid + 1 ELSE 0 END,"
										 "       error_rate = r.error_rate + " CppAsString2(ALLOT_ERROR_RATE_WEIGHT)
										 "                    * (excluded.invalid_results - r.error_rate),"
										 "       proven_at = coalesce(r.proven_at, excluded.proven_at),"
										 "       reliable_at = CASE WHEN excluded.valid_results = 0 THEN NULL"
										 "                          WHEN r.reliable_at IS NOT NULL THEN r.reliable_at"
										 "                          WHEN r.consecutive_valid + 1 >= $4 THEN $3 END",
										 4, rel_args);
	}
}

static void
job_not_done(int64 job_id, const char *state)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("job %lld is not done, it is %s", (long long) job_id, state),
			 errhint("Only a job reported successfully can be validated.")));
}

static void
job_not_found(int64 job_id)
{
	ereport(ERROR,
			(errcode(ERRCODE_NO_DATA_FOUND),
			 errmsg("job %lld does not exist", (long long) job_id)));
}

/* Before 0.7.0: the verdict decides the job. */
static void
validate_alone(int64 job_id, bool valid, bool sendings)
{
	Datum		args[2] = {Int64GetDatum(job_id), BoolGetDatum(valid)};

	prepare_plans(false);
	if (sendings && !valid && validate_plan[1] == NULL)
	{
		Oid			validate_args[2] = {INT8OID, BOOLOID};

		validate_plan[1] = allot_prepare(FAILED_RESULT_SQL(""), 2, validate_args);
	}
	if (SPI_execute_plan(validate_plan[sendings && !valid], args, NULL, false, 0) !=
		SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "could not validate job %lld", (long long) job_id);
	if (SPI_processed == 0)
	{
		Oid			types[1] = {INT8OID};
		bool		isnull;

		/*
		 * Under a new snapshot: the UPDATE may have waited for a
		 * transaction that changed or removed the job (a purge), and the
		 * statement's snapshot would still show it done.
		 */
		if (SPI_execute_with_args("SELECT state FROM allot.job WHERE id = $1", 1, types,
								  args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read allot.job");
		if (SPI_processed == 0)
			job_not_found(job_id);
		job_not_done(job_id, TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
																SPI_tuptable->tupdesc, 1, &isnull)));
	}
}

static MemberState
member_state(const char *state)
{
	if (strcmp(state, "unsent") == 0)
		return MEMBER_UNSENT;
	if (strcmp(state, "in_progress") == 0)
		return MEMBER_IN_PROGRESS;
	if (strcmp(state, "done") == 0)
		return MEMBER_DONE;
	return MEMBER_ENDED;
}

static int
tristate(HeapTuple t, TupleDesc d, int column)
{
	bool		isnull;
	Datum		v = SPI_getbinval(t, d, column, &isnull);

	return isnull ? ALLOT_UNKNOWN : DatumGetBool(v) ? 1 : 0;
}

/* From 0.7.0: the verdict on one member of a job that may have replicas. */
static void
validate_member(int64 job_id, bool valid, bool has_sending, int sending, const char *digest,
				TimestampTz now)
{
	Datum		arg;
	bool		isnull;
	int64		group;
	int			n,
				judged = -1,
				min_quorum = 1,
				max_total = 1;
	QuorumMember *m;
	int64	   *hosts;
	QuorumOutcome out;
	SPITupleTable *rows;

	prepare_plans(true);
	arg = Int64GetDatum(job_id);
	if (SPI_execute_plan(state_plan, &arg, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.job");
	if (SPI_processed == 0)
		job_not_found(job_id);
	group = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	allot_lock_quorum(group);

	arg = Int64GetDatum(group);
	if (SPI_execute_plan(group_plan, &arg, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.job");
	rows = SPI_tuptable;
	n = (int) SPI_processed;
	m = palloc0(sizeof(QuorumMember) * (n + 1));
	hosts = palloc0(sizeof(int64) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		HeapTuple	t = rows->vals[i];
		TupleDesc	d = rows->tupdesc;
		Datum		v;

		m[i].id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
		m[i].state = member_state(TextDatumGetCString(SPI_getbinval(t, d, 2, &isnull)));
		m[i].replica = DatumGetBool(SPI_getbinval(t, d, 4, &isnull));
		v = SPI_getbinval(t, d, 5, &isnull);
		m[i].voice = isnull ? 0 : DatumGetInt64(v);
		m[i].verdict = tristate(t, d, 6);
		v = SPI_getbinval(t, d, 7, &isnull);
		m[i].digest = isnull ? NULL : TextDatumGetCString(v);
		m[i].validated = tristate(t, d, 8);
		v = SPI_getbinval(t, d, 11, &isnull);
		hosts[i] = isnull ? 0 : DatumGetInt64(v);
		if (m[i].id == group)
		{
			min_quorum = DatumGetInt32(SPI_getbinval(t, d, 9, &isnull));
			max_total = DatumGetInt32(SPI_getbinval(t, d, 10, &isnull));
		}
		if (m[i].id == job_id)
		{
			judged = i;
			if (m[i].state != MEMBER_DONE)
				job_not_done(job_id, TextDatumGetCString(SPI_getbinval(t, d, 2, &isnull)));
			if (has_sending && DatumGetInt32(SPI_getbinval(t, d, 3, &isnull)) != sending)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("job %lld is at sending %d, not %d: the verdict is not on its result",
								(long long) job_id, DatumGetInt32(SPI_getbinval(t, d, 3, &isnull)),
								sending),
						 errdetail("Its result of sending %d was replaced after the validator read it.",
								   sending)));
		}
	}
	if (judged < 0)				/* it became another's replica meanwhile */
		job_not_found(job_id);

	out.validated = palloc(sizeof(int) * (n + 1));
	out.remove = palloc(sizeof(bool) * (n + 1));
	allot_quorum_judge(m, n, judged, valid, digest, min_quorum, max_total, &out);

	{
		Datum	   *ids = palloc(sizeof(Datum) * (n + 1));
		Datum	   *vals = palloc(sizeof(Datum) * (n + 1));
		Datum	   *gone = palloc(sizeof(Datum) * (n + 1));
		Datum	   *rel_hosts = palloc(sizeof(Datum) * (n + 1));
		Datum	   *rel_valid = palloc(sizeof(Datum) * (n + 1));
		int			nd = 0,
					ng = 0,
					nr = 0;
		Datum		args[5];
		char		nulls[5] = {' ', ' ', ' ', ' ', digest == NULL ? 'n' : ' '};

		for (int i = 0; i < n; i++)
		{
			/* A host's record counts each result once: when it is first
			 * found valid or invalid, or found otherwise than it was. */
			if (out.validated[i] != ALLOT_UNKNOWN && out.validated[i] != m[i].validated &&
				hosts[i] != 0)
			{
				rel_hosts[nr] = Int64GetDatum(hosts[i]);
				rel_valid[nr++] = BoolGetDatum(out.validated[i] == 1);
			}
			/* Only the rows the decision changes: a sibling being reported
			 * meanwhile is held by its report, and is not waited for. */
			if (out.remove[i])
				gone[ng++] = Int64GetDatum(m[i].id);
			else if ((i == judged && !out.retry) || (i != judged && out.validated[i] != m[i].validated))
			{
				ids[nd] = Int64GetDatum(m[i].id);
				vals[nd++] = Int32GetDatum(out.validated[i]);
			}
		}
		if (out.retry)
		{
			args[0] = Int64GetDatum(job_id);
			args[1] = BoolGetDatum(false);
			if (SPI_execute_plan(failure_plan, args, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
				elog(ERROR, "could not record job %lld's invalid result", (long long) job_id);
		}
		if (nd > 0)
		{
			args[0] = PointerGetDatum(construct_array(ids, nd, INT8OID, 8, FLOAT8PASSBYVAL,
													  TYPALIGN_DOUBLE));
			args[1] = PointerGetDatum(construct_array(vals, nd, INT4OID, 4, true, TYPALIGN_INT));
			args[2] = Int64GetDatum(out.retry ? 0 : job_id);
			args[3] = BoolGetDatum(valid);
			args[4] = digest == NULL ? (Datum) 0 : CStringGetTextDatum(digest);
			if (SPI_execute_plan(decide_plan, args, nulls, false, 0) != SPI_OK_UPDATE)
				elog(ERROR, "could not record the decision on job %lld", (long long) group);
		}
		if (ng > 0)
		{
			args[0] = PointerGetDatum(construct_array(gone, ng, INT8OID, 8, FLOAT8PASSBYVAL,
													  TYPALIGN_DOUBLE));
			if (SPI_execute_plan(remove_plan, args, NULL, false, 0) != SPI_OK_DELETE)
				elog(ERROR, "could not remove job %lld's unneeded replicas", (long long) group);
		}
		if (out.add_replica)
		{
			args[0] = Int64GetDatum(group);
			if (SPI_execute_plan(replica_plan, args, NULL, false, 0) != SPI_OK_INSERT)
				elog(ERROR, "could not replicate job %lld again", (long long) group);
		}
		if (nr > 0)
		{
			args[0] = PointerGetDatum(construct_array(rel_hosts, nr, INT8OID, 8, FLOAT8PASSBYVAL,
													  TYPALIGN_DOUBLE));
			args[1] = PointerGetDatum(construct_array(rel_valid, nr, BOOLOID, 1, true, TYPALIGN_CHAR));
			args[2] = TimestampTzGetDatum(now);
			args[3] = Int32GetDatum(allot_reliable_after);
			if (SPI_execute_plan(reliability_plan, args, NULL, false, 0) != SPI_OK_INSERT)
				elog(ERROR, "could not record the hosts' reliability");
		}
	}
}

PG_FUNCTION_INFO_V1(allot_validate_job);

/* validate_job(job_id, valid [, sending, digest, now]). */
Datum
allot_validate_job(PG_FUNCTION_ARGS)
{
	int64		job_id;
	bool		valid;
	bool		has_sending = PG_NARGS() > 2 && !PG_ARGISNULL(2);
	int			sending = has_sending ? PG_GETARG_INT32(2) : 0;
	char	   *digest = NULL;
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	const WorkloadCache *cache;

	allot_check_settings();
	allot_require_writable("allot.validate_job");
	allot_require_arg(fcinfo, 0, "job_id");
	allot_require_arg(fcinfo, 1, "valid");
	job_id = PG_GETARG_INT64(0);
	valid = PG_GETARG_BOOL(1);
	if (has_sending && sending < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sending must be a sending's number, 1 or more, not %d", sending)));
	if (PG_NARGS() > 3 && !PG_ARGISNULL(3))
	{
		digest = text_to_cstring(PG_GETARG_TEXT_PP(3));
		if (strlen(digest) > 1000)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("digest must be at most 1000 bytes, not %zu", strlen(digest)),
					 errhint("Pass a hash of the result, such as the MD5 of its output files.")));
	}
	if (PG_NARGS() > 4)
		now = allot_now_arg(fcinfo, 4);

	SPI_connect();
	allot_lock_for_write("job");	/* before any row: entry.h */
	cache = allot_workload_cache();
	if (cache->voices)
		validate_member(job_id, valid, has_sending, sending, digest, now);
	else
		validate_alone(job_id, valid, cache->job_sendings);
	SPI_finish();
	PG_RETURN_BOOL(true);
}
