/*
 * retention.c: finished jobs leave the hot tables (0.7.0).
 *
 * Nothing left allot.job before 0.7.0: at a million jobs a day, about
 * 280 bytes each before their reports, a farm grew without end.  A job is
 * *finished* when it is done or has given up (error, or the old timed_out),
 * and *old* when it ended (its last report, else its deadline: a job that
 * gave up at a timeout has no report of that sending) more than
 * allot.retention_period ago.  A *purge* takes the oldest such jobs, at most
 * a batch, and removes them with their rows of allot.job_report, the record
 * of their sendings.  With allot.retention_archive on (the default) they
 * go to allot.job_archive, one row per purge: a JSON array of the jobs,
 * each its job row with its reports, so that a column a later release adds
 * to either table is archived too, and so that TOAST compresses the names
 * that repeat from one job to the next (about 160 bytes a job, where the
 * job and its reports take about 450 in the hot tables); off, they are
 * simply deleted.
 *
 * What the farm knows of a job outlives it: the counts of the statement
 * trigger on allot.job (job_usage.done and .error per workload,
 * host_credit per host, its total and its credit decayed by the week) stay
 * as they were, and the purge adds the jobs it removes to the purged
 * totals, allot.purged_jobs per workload and allot.purged_credit per host,
 * which check_invariants() adds to what the job table holds.  While the
 * purge's DELETE runs, allot_retention_purging() is true in this backend,
 * and the job trigger counts nothing for the rows it deletes (usage.c).
 * Every other change of a purged total (a restore from a dump, merge_host,
 * an operator's edit) moves the counters by its trigger
 * (allot.purged_totals_trigger), as a change of jobs does.  An app's
 * statistics and estimates live in its row (windows of hosts and values),
 * quotas and per-version speeds in host_app_version, fairness in
 * workload_credit: none is read back from old jobs, so none changes.
 *
 * A job is kept past the period while the transitioner has still to learn
 * from it or credit it (validated, and not sampled or not credited): it
 * leaves once it has.  A job the validator has not judged (validated NULL)
 * leaves with the others: the period is the validator's time too.
 *
 * Locks.  The caller holds allot.job's row-writing lock, as every writer
 * does first (entry.h).  The jobs are taken FOR UPDATE SKIP LOCKED: a job a
 * report, a validation or an operator holds is left for the next purge, and
 * the purge holds nothing a request waits for (requests lock unsent jobs
 * and their own usage rows; a purge writes no usage row, no host_credit
 * row).  One purge at a time: a transaction-scoped advisory lock, tried
 * without waiting, so that a second transitioner skips the step instead of
 * queueing behind the first at the purged totals' rows.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "entry.h"
#include "retention.h"

/* One purge at a time per database: pg_locks.objsubid 28786 ("pr"). */
#define ALLOT_PURGE_LOCK_SPACE 0x7072

static bool purging = false;
static SPIPlanPtr take_plan = NULL;
static SPIPlanPtr purge_plan[2] = {NULL, NULL};	/* [archive] */

bool
allot_retention_purging(void)
{
	return purging;
}

/* Does the schema have 0.7.0's purged totals? */
static bool
schema_has_retention(void)
{
	return OidIsValid(get_relname_relid("purged_jobs", get_namespace_oid("allot", false)));
}

static bool
try_purge_lock(void)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, 0, ALLOT_PURGE_LOCK_SPACE);
	return LockAcquire(&tag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL;
}

/*
 * The jobs to purge, locked: $1 the cutoff, $2 the batch.  The finishing
 * instant is the expression of allot.job_finished_idx, whose predicate is
 * the WHERE clause below: the oldest come first from the index, and jobs
 * the transitioner still holds back are not in it at all.  Their ids come
 * back as one array, which the purge then deletes by primary key: joined
 * to a list of rows instead, the planner would hash both tables whole.
 *
 * A replicated job (0.7.0) leaves with its replicas or not at all: its
 * replicas' rows name it (replica_of, ON DELETE CASCADE), so a job is taken
 * only when each of its replicas could be taken too, and then only if every
 * one of them was locked here; a replica is never taken alone.  The batch
 * counts jobs; their replicas come on top.
 */
#define PURGEABLE(j) \
	"     " j ".state IN ('done', 'error', 'timed_out')" \
	" AND (" j ".validated IS NOT TRUE OR (" j ".sampled AND " j ".credit IS NOT NULL))" \
	" AND coalesce(" j ".returned_at, " j ".deadline) < $1"

static void
prepare_take_plan(void)
{
	Oid			types[2] = {TIMESTAMPTZOID, INT4OID};

	if (take_plan != NULL)
		return;
	take_plan = allot_prepare(
							  "WITH jobs AS ("
							  "  SELECT j.id FROM allot.job j"
							  "   WHERE " PURGEABLE("j")
							  "     AND j.replica_of IS NULL"
							  "     AND NOT EXISTS (SELECT FROM allot.job r WHERE r.replica_of = j.id"
							  "                        AND NOT (" PURGEABLE("r") "))"
							  "   ORDER BY coalesce(j.returned_at, j.deadline)"
							  "   LIMIT $2 FOR UPDATE OF j SKIP LOCKED),"
							  " replicas AS ("
							  "  SELECT r.id, r.replica_of FROM allot.job r"
							  "   WHERE r.replica_of IN (SELECT id FROM jobs) FOR UPDATE OF r SKIP LOCKED),"
							  " whole AS ("
							  "  SELECT g.id FROM jobs g"
							  "   WHERE (SELECT count(*) FROM allot.job r WHERE r.replica_of = g.id)"
							  "       = (SELECT count(*) FROM replicas r WHERE r.replica_of = g.id))"
							  "SELECT array_agg(x.id) FROM ("
							  "  SELECT id FROM whole UNION ALL"
							  "  SELECT id FROM replicas WHERE replica_of IN (SELECT id FROM whole)) x",
							  2, types);
}

/*
 * The purge of the jobs $1 (locked), at now $2, in one statement: their
 * reports, then them; their counts into the purged totals, in id order, as
 * every writer of those takes their rows.  A host's credit is decayed to
 * its latest return in the batch, as the job trigger decays it (a job
 * without a return counts at the host's decayed_at, as check_invariants()
 * counts it), and merged into its purged total at the later of the two
 * instants.  With the archive, the jobs go to allot.job_archive as one json
 * value (text: built and compressed three times faster than jsonb), each
 * {"job": its row, "reports": its reports, oldest first}.
 */
static SPIPlanPtr
purge_plan_for(bool archive)
{
	Oid			types[2] = {INT8ARRAYOID, TIMESTAMPTZOID};

	if (purge_plan[archive] != NULL)
		return purge_plan[archive];
	purge_plan[archive] = allot_prepare(psprintf(
												 "WITH reports AS ("
												 "  DELETE FROM allot.job_report r WHERE r.job_id = ANY ($1) RETURNING r.*),"
												 " jobs AS ("
												 "  DELETE FROM allot.job j WHERE j.id = ANY ($1) RETURNING j.*),"
												 " counts AS ("
												 "  INSERT INTO allot.purged_jobs AS p (workload_id, done, error)"
												 "  SELECT workload_id, count(*) FILTER (WHERE state = 'done'),"
												 "         count(*) FILTER (WHERE state <> 'done')"
												 "    FROM jobs GROUP BY workload_id ORDER BY workload_id"
												 "  ON CONFLICT (workload_id) DO UPDATE"
												 "     SET done = p.done + excluded.done, error = p.error + excluded.error),"
												 " credit AS ("
												 "  INSERT INTO allot.purged_credit AS p (host_id, credit, jobs, decayed, decayed_at)"
												 "  SELECT host_id, sum(credit::numeric), count(*),"
												 "         sum(allot.credit_decay(credit, extract(epoch FROM t - r)::float8)), t"
												 "    FROM (SELECT j.host_id, j.credit, x.r,"
												 "                 max(x.r) OVER (PARTITION BY j.host_id) AS t"
												 "            FROM jobs j LEFT JOIN allot.host_credit c ON c.host_id = j.host_id,"
												 "                 LATERAL (SELECT coalesce(j.returned_at, c.decayed_at, $2) AS r) x"
												 "           WHERE j.credit IS NOT NULL AND j.host_id IS NOT NULL) d"
												 "   GROUP BY host_id, t ORDER BY host_id"
												 "  ON CONFLICT (host_id) DO UPDATE"
												 "     SET credit = p.credit + excluded.credit, jobs = p.jobs + excluded.jobs,"
												 "         decayed = allot.credit_decay(p.decayed, extract(epoch FROM"
												 "                       greatest(p.decayed_at, excluded.decayed_at) - p.decayed_at)::float8)"
												 "                 + allot.credit_decay(excluded.decayed, extract(epoch FROM"
												 "                       greatest(p.decayed_at, excluded.decayed_at) - excluded.decayed_at)::float8),"
												 "         decayed_at = greatest(p.decayed_at, excluded.decayed_at)),"
												 " archived AS (%s)"
												 "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM reports),"
												 "       (SELECT coalesce(sum(job_count), 0) FROM archived)::bigint",
												 archive ?
												 "  INSERT INTO allot.job_archive (archived_at, job_count, first_job_id, last_job_id,"
												 "                                 finished_from, finished_to, jobs)"
												 "  SELECT $2, count(*), min(j.id), max(j.id),"
												 "         min(coalesce(j.returned_at, j.deadline)), max(coalesce(j.returned_at, j.deadline)),"
												 "         json_agg(json_build_object('job', to_json(j),"
												 "                                    'reports', coalesce(r.reports, '[]'::json)) ORDER BY j.id)"
												 "    FROM jobs j"
												 "    LEFT JOIN (SELECT x.job_id, json_agg(to_json(x) ORDER BY x.reported_at, x.sent_at) AS reports"
												 "                 FROM reports x GROUP BY x.job_id) r ON r.job_id = j.id"
												 "  HAVING count(*) > 0"
												 "  RETURNING job_count" :
												 "  SELECT 0 AS job_count WHERE false"),
										2, types);
	return purge_plan[archive];
}

void
allot_purge_finished(TimestampTz now, int batch, RetentionRun *out)
{
	Datum		args[2];
	volatile int rc = 0;
	bool		isnull;
	Datum		ids;

	memset(out, 0, sizeof(*out));
	if (allot_retention_period == 0 || !schema_has_retention())
	{
		out->off = true;
		return;
	}
	/* now is at least 1970 and the period at most 68 years: no overflow */
	out->cutoff = now - (TimestampTz) allot_retention_period * USECS_PER_SEC;
	if (!try_purge_lock())
	{
		out->busy = true;
		return;
	}

	prepare_take_plan();
	args[0] = TimestampTzGetDatum(out->cutoff);
	args[1] = Int32GetDatum(batch);
	if (SPI_execute_plan(take_plan, args, NULL, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not lock the finished jobs to purge");
	ids = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return;					/* none */

	args[0] = ids;
	args[1] = TimestampTzGetDatum(now);
	purging = true;
	PG_TRY();
	{
		rc = SPI_execute_plan(purge_plan_for(allot_retention_archive), args, NULL, false, 0);
	}
	PG_FINALLY();
	{
		purging = false;
	}
	PG_END_TRY();
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not purge finished jobs: %s", SPI_result_code_string(rc));
	out->purged = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	out->reports = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	out->archived = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
}

PG_FUNCTION_INFO_V1(allot_purge_finished_sql);

/*
 * purge_finished(now, batch): one purge, outside the transitioner (to catch
 * up after turning retention on, or on a schedule of its own).  batch NULL:
 * allot.retention_batch.
 */
Datum
allot_purge_finished_sql(PG_FUNCTION_ARGS)
{
	TimestampTz now;
	int			batch = allot_retention_batch;
	RetentionRun r;
	char	   *json;

	allot_check_settings();
	allot_require_writable("allot.purge_finished");
	now = allot_now_arg(fcinfo, 0);
	if (!PG_ARGISNULL(1))
	{
		batch = PG_GETARG_INT32(1);
		if (batch < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("batch must be at least 1, not %d", batch),
					 errhint("Leave it NULL for allot.retention_batch.")));
	}

	SPI_connect();
	allot_lock_for_write("job");	/* before any row: entry.h */
	allot_purge_finished(now, batch, &r);
	SPI_finish();

	if (r.off)
		json = psprintf("{\"purged\": 0, \"reports\": 0, \"archived\": 0, \"busy\": false,"
						" \"cutoff\": null}");
	else
		json = psprintf("{\"purged\": %lld, \"reports\": %lld, \"archived\": %lld,"
						" \"busy\": %s, \"cutoff\": \"%s\"}",
						(long long) r.purged, (long long) r.reports, (long long) r.archived,
						r.busy ? "true" : "false",
						DatumGetCString(DirectFunctionCall1(timestamptz_out,
															TimestampTzGetDatum(r.cutoff))));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

PG_FUNCTION_INFO_V1(allot_retention_purging_sql);

/* retention_purging(): for the purged totals' trigger (PL/pgSQL). */
Datum
allot_retention_purging_sql(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(purging);
}
