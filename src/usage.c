/*
 * usage.c: the counters that keep requests from scanning: the triggers that
 * keep allot.workload_usage equal to the counted rows of allot.assignment,
 * and the shard of allot.job_usage a backend writes.
 *
 * workload_usage: one row per workload with counted assignments; the row
 * trigger on allot.assignment adds what a row change moves, locking at most
 * two usage rows, in workload id order (no deadlocks between requests).
 *
 * job_usage: one row per (workload, shard).  The statement triggers on
 * allot.job (PL/pgSQL, in the extension script) add each statement's change
 * to the row of the writing backend's shard, allot.usage_shard(): requests
 * of different backends then never wait for each other's usage rows, which
 * they would otherwise hold until they commit.  Readers sum the shards.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "storage/proc.h"

#include "entry.h"

/* Shards of a workload's allot.job_usage row: at most this many rows each. */
#define ALLOT_USAGE_SHARDS 16

static SPIPlanPtr usage_add_plan = NULL;
static SPIPlanPtr usage_drop_plan = NULL;

static void
prepare_plans(void)
{
	Oid			add_args[4] = {INT8OID, INT8OID, INT8OID, INT4OID};
	Oid			id_only[1] = {INT8OID};

	if (usage_add_plan != NULL)
		return;
	usage_add_plan = allot_prepare(
								   "INSERT INTO allot.workload_usage AS u"
								   "       (workload_id, threads, focus_threads, hosts)"
								   "VALUES ($1, $2, $3, $4)"
								   "ON CONFLICT (workload_id) DO UPDATE"
								   "   SET threads = u.threads + excluded.threads,"
								   "       focus_threads = u.focus_threads + excluded.focus_threads,"
								   "       hosts = u.hosts + excluded.hosts"
								   " RETURNING hosts",
								   4, add_args);
	usage_drop_plan = allot_prepare(
									"DELETE FROM allot.workload_usage WHERE workload_id = $1 AND hosts = 0",
									1, id_only);
}

PG_FUNCTION_INFO_V1(allot_usage_shard);

/* usage_shard(): the allot.job_usage shard this backend writes. */
Datum
allot_usage_shard(PG_FUNCTION_ARGS)
{
#if PG_VERSION_NUM >= 170000
	int			proc = MyProcNumber;
#else
	int			proc = MyProc->pgprocno;
#endif

	PG_RETURN_INT32(proc % ALLOT_USAGE_SHARDS);
}

/* ---------------------------------------------------------------------------
 * The trigger that keeps allot.workload_usage equal to the counted rows of
 * allot.assignment.
 * ------------------------------------------------------------------------- */

typedef struct Contribution
{
	int64		workload_id;	/* 0: none */
	int64		threads;
	int64		focus_threads;
} Contribution;

static Contribution
contribution(HeapTuple tuple, TupleDesc desc)
{
	Contribution c = {0, 0, 0};
	bool		isnull;
	int64		threads;

	if (!DatumGetBool(heap_getattr(tuple, SPI_fnumber(desc, "counted"), desc, &isnull)) || isnull)
		return c;
	c.workload_id = DatumGetInt64(heap_getattr(tuple, SPI_fnumber(desc, "workload_id"), desc, &isnull));
	threads = DatumGetInt32(heap_getattr(tuple, SPI_fnumber(desc, "threads"), desc, &isnull));
	if (DatumGetBool(heap_getattr(tuple, SPI_fnumber(desc, "focus"), desc, &isnull)))
		c.focus_threads = threads;
	else
		c.threads = threads;
	return c;
}

static void
usage_add(int64 workload_id, int64 threads, int64 focus_threads, int32 hosts)
{
	Datum		args[4] = {Int64GetDatum(workload_id), Int64GetDatum(threads),
	Int64GetDatum(focus_threads), Int32GetDatum(hosts)};
	bool		isnull;

	if (SPI_execute_plan(usage_add_plan, args, NULL, false, 0) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not update allot.workload_usage");
	if (DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) == 0 &&
		SPI_execute_plan(usage_drop_plan, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not update allot.workload_usage");
}

PG_FUNCTION_INFO_V1(allot_assignment_usage_trigger);

Datum
allot_assignment_usage_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	Contribution before = {0, 0, 0},
				after = {0, 0, 0};

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!TRIGGER_FIRED_AFTER(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("allot_assignment_usage_trigger() must be an AFTER ROW trigger")));

	desc = td->tg_relation->rd_att;
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		after = contribution(td->tg_trigtuple, desc);
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		before = contribution(td->tg_trigtuple, desc);
	else
	{
		before = contribution(td->tg_trigtuple, desc);
		after = contribution(td->tg_newtuple, desc);
	}
	if (before.workload_id == after.workload_id &&
		before.threads == after.threads &&
		before.focus_threads == after.focus_threads)
		return PointerGetDatum(NULL);

	SPI_connect();
	prepare_plans();
	if (before.workload_id == after.workload_id)
		usage_add(after.workload_id, after.threads - before.threads,
				  after.focus_threads - before.focus_threads, 0);
	else
	{
		/* Lock usage rows in workload id order: no deadlock between requests. */
		Contribution *first = &before,
				   *second = &after;

		if (before.workload_id == 0 ||
			(after.workload_id != 0 && after.workload_id < before.workload_id))
		{
			first = &after;
			second = &before;
		}
		if (first->workload_id != 0)
			usage_add(first->workload_id,
					  first == &after ? first->threads : -first->threads,
					  first == &after ? first->focus_threads : -first->focus_threads,
					  first == &after ? 1 : -1);
		if (second->workload_id != 0)
			usage_add(second->workload_id,
					  second == &after ? second->threads : -second->threads,
					  second == &after ? second->focus_threads : -second->focus_threads,
					  second == &after ? 1 : -1);
	}
	SPI_finish();
	return PointerGetDatum(NULL);
}

PG_FUNCTION_INFO_V1(allot_assignment_truncate_trigger);

Datum
allot_assignment_truncate_trigger(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("allot_assignment_truncate_trigger() must be called as a trigger")));
	SPI_connect();
	if (SPI_execute("DELETE FROM allot.workload_usage", false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not empty allot.workload_usage");
	SPI_finish();
	return PointerGetDatum(NULL);
}
