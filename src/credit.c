/*
 * credit.c: reading and adding credit (allot.workload_credit).
 *
 * A request reads the rows of the workloads it may choose from, decays
 * each REC to its own now, and after choosing adds the credit of what it
 * handed out in one upsert, in (workload_id, resource) order: the order in
 * which the transitioner's fold locks them too.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "entry.h"
#include "credit.h"
#include "fairness.h"

static SPIPlanPtr read_plan = NULL;
static SPIPlanPtr add_plan = NULL;

static const char *const mode_names[] = {"current", "recent", "debt"};

int
allot_fairness_mode(void)
{
	/* Two syscache lookups, and only in the modes that need the table. */
	if (allot_fairness != FAIRNESS_CURRENT &&
		!OidIsValid(get_relname_relid("workload_credit", get_namespace_oid("allot", false))))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("allot.fairness = %s needs allot 0.4.0 or later",
						mode_names[allot_fairness]),
				 errhint("Run ALTER EXTENSION allot UPDATE, or set allot.fairness = current.")));
	return allot_fairness;
}

static void
prepare_plans(void)
{
	Oid			read_args[2] = {INT8OID, INT8OID};
	Oid			add_args[6] = {INT8ARRAYOID, TEXTARRAYOID, FLOAT8ARRAYOID,
	FLOAT8ARRAYOID, TIMESTAMPTZOID, FLOAT8OID};

	if (add_plan != NULL)
		return;
	/*
	 * The rows of the workloads' id range, which the caller looks up in the
	 * cache: O(rows in the range), and the range skips the older, finished
	 * workloads.  Not "workload_id = ANY ($1)": with the array a parameter
	 * of a generic plan, PostgreSQL tests it element by element on every
	 * row, rows x workloads comparisons (two thirds of a request's time at
	 * 2,000 workloads under allot.fairness = debt).
	 */
	read_plan = allot_prepare(
							  "SELECT workload_id, resource, rec, rec_at, debt, sent"
							  "  FROM allot.workload_credit WHERE workload_id BETWEEN $1 AND $2",
							  2, read_args);

	/*
	 * $3 is added to rec, both decayed to the later of the two instants with
	 * half-life $6; $4 is added to sent.
	 */
	add_plan = allot_prepare(
							 "INSERT INTO allot.workload_credit AS c (workload_id, resource, rec, rec_at, sent)"
							 "SELECT x.workload_id, x.resource, sum(x.rec), $5, sum(x.sent)"
							 "  FROM unnest($1, $2, $3, $4) x(workload_id, resource, rec, sent)"
							 " GROUP BY 1, 2 ORDER BY 1, 2 "
							 "ON CONFLICT (workload_id, resource) DO UPDATE"
							 "   SET rec = allot.decay(c.rec, extract(epoch FROM excluded.rec_at - c.rec_at)::float8, $6)"
							 "           + allot.decay(excluded.rec, extract(epoch FROM c.rec_at - excluded.rec_at)::float8, $6),"
							 "       rec_at = greatest(c.rec_at, excluded.rec_at),"
							 "       sent = c.sent + excluded.sent",
							 6, add_args);
}

static void
fold_lock_tag(LOCKTAG *tag)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) ALLOT_FOLD_LOCK_KEY1,
						 (uint32) ALLOT_FOLD_LOCK_KEY2, 2);
}

void
allot_lock_fold(void)
{
	LOCKTAG		tag;

	fold_lock_tag(&tag);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

int
allot_read_credit(const WorkloadCache *cache, bool jobs, TimestampTz now,
				  CreditRow **rows)
{
	Datum		args[2];
	int64		lo,
				hi;
	int			count = 0;

	prepare_plans();
	allot_workload_id_range(cache, jobs, &lo, &hi);
	args[0] = Int64GetDatum(lo);
	args[1] = Int64GetDatum(hi);
	if (SPI_execute_plan(read_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.workload_credit");

	*rows = palloc(sizeof(CreditRow) * (SPI_processed + 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	td = SPI_tuptable->tupdesc;
		bool		isnull;
		CreditRow  *row = &(*rows)[count];
		char	   *resource = TextDatumGetCString(SPI_getbinval(t, td, 2, &isnull));

		row->resource = allot_resource_index(cache, resource);
		if (row->resource < 0)
			continue;			/* a resource created after the cache was */
		row->workload_id = DatumGetInt64(SPI_getbinval(t, td, 1, &isnull));
		/* rec decays from rec_at to now */
		row->rec = allot_decay(DatumGetFloat8(SPI_getbinval(t, td, 3, &isnull)),
							   allot_secs_between(DatumGetTimestampTz(SPI_getbinval(t, td, 4, &isnull)),
												  now),
							   (double) allot_rec_half_life);
		row->debt = DatumGetFloat8(SPI_getbinval(t, td, 5, &isnull));
		row->sent = DatumGetFloat8(SPI_getbinval(t, td, 6, &isnull));
		count++;
	}
	return count;
}

void
allot_add_credit(const int64 *workload_ids, const char *const *resources,
				 const double *credit, int n, TimestampTz now, int mode)
{
	Datum	   *ids = palloc(sizeof(Datum) * (n + 1));
	Datum	   *names = palloc(sizeof(Datum) * (n + 1));
	Datum	   *rec = palloc(sizeof(Datum) * (n + 1));
	Datum	   *sent = palloc(sizeof(Datum) * (n + 1));
	Datum		args[6];

	if (n == 0 || mode == FAIRNESS_CURRENT)
		return;
	if (mode == FAIRNESS_DEBT)
	{
		LOCKTAG		tag;

		fold_lock_tag(&tag);
		(void) LockAcquire(&tag, ShareLock, false, false);
	}
	prepare_plans();
	for (int i = 0; i < n; i++)
	{
		ids[i] = Int64GetDatum(workload_ids[i]);
		names[i] = CStringGetTextDatum(resources[i]);
		rec[i] = Float8GetDatum(mode == FAIRNESS_RECENT ? credit[i] : 0);
		sent[i] = Float8GetDatum(mode == FAIRNESS_DEBT ? credit[i] : 0);
	}
	args[0] = PointerGetDatum(construct_array(ids, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[1] = PointerGetDatum(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
	args[2] = PointerGetDatum(construct_array(rec, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[3] = PointerGetDatum(construct_array(sent, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[4] = TimestampTzGetDatum(now);
	args[5] = Float8GetDatum((double) allot_rec_half_life);
	if (SPI_execute_plan(add_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not add to allot.workload_credit");
}
