/*
 * assignment.c: SQL glue for the assignment's other calls (seed 000):
 * explain_assignment, heartbeat, release_assignment, expire_assignments.
 * assign_workload itself is assign.c, stage by stage (assign.h).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "assign.h"

static SPIPlanPtr heartbeat_plan = NULL;
static SPIPlanPtr host_exists_plan = NULL;
static SPIPlanPtr release_plan = NULL;

static void
prepare_plans(void)
{
	Oid			id_time[2] = {INT8OID, TIMESTAMPTZOID};
	Oid			id_only[1] = {INT8OID};

	if (heartbeat_plan != NULL)
		return;
	heartbeat_plan = allot_prepare(
								   "UPDATE allot.assignment"
								   "   SET seen_at = greatest(seen_at, $2), counted = true"
								   " WHERE host_id = $1",
								   2, id_time);
	host_exists_plan = allot_prepare(
									 "SELECT FROM allot.host WHERE id = $1",
									 1, id_only);
	release_plan = allot_prepare(
								 "WITH a AS (DELETE FROM allot.assignment WHERE host_id = $1 RETURNING 1)"
								 "SELECT (SELECT count(*) FROM a), EXISTS (SELECT FROM allot.host WHERE id = $1)",
								 1, id_only);
}

/*
 * Why a workload is not a candidate, naming the engine that failed an engine
 * check, and for a compiler the compilers it accepts:
 * "compiler missing or too old (engine Ethereal needs gcc>=10 or clang)".
 */
static char *
unfit_reason(Unfit unfit, const EngineNeeds *engine)
{
	StringInfoData reason;

	if (engine == NULL)
		return pstrdup(allot_unfit_text(unfit));
	initStringInfo(&reason);
	appendStringInfo(&reason, "%s (engine %s", allot_unfit_text(unfit), engine->name);
	if (unfit == UNFIT_COMPILER)
		for (int k = 0; k < engine->n_compilers; k++)
		{
			const CompilerNeed *need = &engine->compilers[k];

			appendStringInfo(&reason, "%s%s", k == 0 ? " needs " : " or ", need->name);
			if (need->min_version != NULL)
				appendStringInfo(&reason, ">=%s", need->min_version);
		}
	appendStringInfoChar(&reason, ')');
	return reason.data;
}

PG_FUNCTION_INFO_V1(allot_explain_assignment);

/*
 * explain_assignment(host_id, now, exclude): every active assignment
 * workload with what assign_workload would make of it; writes nothing.
 */
Datum
allot_explain_assignment(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext old;
		TupleDesc	desc;
		int64		host_id;
		TimestampTz now;
		TimestampTz cutoff;
		int64	   *exclude;
		int			n_exclude;
		AssignHost host;
		AssignSelection rs;
		HeapTuple  *rows;
		int			nrows;

		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "return type must be a row type");
		funcctx->tuple_desc = BlessTupleDesc(desc);
		MemoryContextSwitchTo(old);

		allot_check_settings();
		allot_require_arg(fcinfo, 0, "host_id");
		host_id = PG_GETARG_INT64(0);
		now = allot_now_arg(fcinfo, 1);
		cutoff = allot_assignment_cutoff(now);
		exclude = allot_exclude_arg(fcinfo, 2, &n_exclude);

		SPI_connect();
		allot_read_assign_host(&host, host_id, cutoff, false);
		/* The draw only matters to assign_workload; explain reports odds. */
		allot_select_for_host(&rs, &host, exclude, n_exclude, now, 0.0, true);

		/* Rows go in the multi-call context: they outlive SPI_finish. */
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		nrows = rs.cache->n_workloads;
		rows = palloc(sizeof(HeapTuple) * (nrows + 1));
		for (int i = 0, k = 0; i < nrows; i++)
		{
			const CachedWorkload *w = &rs.cache->workloads[i];
			Datum		values[9];
			bool		nulls[9] = {false};
			const Candidate *c = NULL;

			if (rs.unfit[i] == FIT)
				c = &rs.cand[k++];

			values[0] = Int64GetDatum(w->id);
			values[1] = BoolGetDatum(c != NULL && c->status == CANDIDATE);
			if (c == NULL)
				values[2] = CStringGetTextDatum(unfit_reason(rs.unfit[i],
															 rs.unfit_engine[i]));
			else if (c->status == LOWER_PRIORITY)
				values[2] = CStringGetTextDatum("a higher priority is runnable");
			else if (c->status == NOT_FOCUSED)
				values[2] = CStringGetTextDatum("not in focus while a focused engine is runnable");
			else if (rs.selection.repeated && c->probability > 0)
				values[2] = CStringGetTextDatum("candidate, repeat of the last workload");
			else if (c->probability > 0)
				values[2] = CStringGetTextDatum("candidate, lowest ratio");
			else
				values[2] = CStringGetTextDatum("candidate");
			values[3] = Int32GetDatum(w->priority);
			if (c != NULL && c->status == CANDIDATE)
			{
				values[4] = Float8GetDatum(c->counted_threads);
				values[5] = Float8GetDatum(c->effective_throughput);
				values[6] = Float8GetDatum(c->ratio);
				values[7] = Float8GetDatum(rs.selection.fair_ratio);
			}
			else
				nulls[4] = nulls[5] = nulls[6] = nulls[7] = true;
			values[8] = Float8GetDatum(c != NULL ? c->probability : 0.0);
			rows[i] = heap_form_tuple(funcctx->tuple_desc, values, nulls);
		}
		MemoryContextSwitchTo(old);
		SPI_finish();
		funcctx->user_fctx = rows;
		funcctx->max_calls = nrows;
	}

	funcctx = SRF_PERCALL_SETUP();
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		/* SRF_RETURN_NEXT advances call_cntr before using its argument. */
		HeapTuple	row = ((HeapTuple *) funcctx->user_fctx)[funcctx->call_cntr];

		SRF_RETURN_NEXT(funcctx, HeapTupleGetDatum(row));
	}
	SRF_RETURN_DONE(funcctx);
}

PG_FUNCTION_INFO_V1(allot_heartbeat);

/*
 * heartbeat(host_id, now): the host is alive; its assignment counts again.
 * It writes the assignment only (a HOT update, as a repeat's): a host
 * without one has nothing to keep counted.
 */
Datum
allot_heartbeat(PG_FUNCTION_ARGS)
{
	int64		host_id;
	Datum		args[2];
	bool		has_assignment;

	allot_check_settings();
	allot_require_writable("allot.heartbeat");
	allot_require_arg(fcinfo, 0, "host_id");
	host_id = PG_GETARG_INT64(0);
	args[0] = Int64GetDatum(host_id);
	args[1] = TimestampTzGetDatum(allot_now_arg(fcinfo, 1));

	SPI_connect();
	/* In the order assign_workload takes them: host first, then its rows. */
	allot_begin_host_request(host_id, "assignment");
	prepare_plans();
	if (SPI_execute_plan(heartbeat_plan, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the heartbeat of host %lld", (long long) host_id);
	has_assignment = SPI_processed > 0;
	if (!has_assignment &&
		(SPI_execute_plan(host_exists_plan, args, NULL, false, 1) != SPI_OK_SELECT ||
		 SPI_processed == 0))
		allot_host_not_found(host_id);
	SPI_finish();
	PG_RETURN_BOOL(has_assignment);
}

PG_FUNCTION_INFO_V1(allot_release_assignment);

/* release_assignment(host_id): the host stops working on its workload. */
Datum
allot_release_assignment(PG_FUNCTION_ARGS)
{
	int64		host_id;
	Datum		args[1];
	bool		had,
				exists,
				isnull;

	allot_check_settings();
	allot_require_writable("allot.release_assignment");
	allot_require_arg(fcinfo, 0, "host_id");
	host_id = PG_GETARG_INT64(0);
	args[0] = Int64GetDatum(host_id);

	SPI_connect();
	allot_begin_host_request(host_id, "assignment");
	prepare_plans();
	if (SPI_execute_plan(release_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not release the assignment of host %lld", (long long) host_id);
	had = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) > 0;
	exists = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (!exists)
		allot_host_not_found(host_id);
	SPI_finish();
	PG_RETURN_BOOL(had);
}

PG_FUNCTION_INFO_V1(allot_expire_assignments);

/*
 * expire_assignments(now): stop counting every assignment whose host was not
 * seen within allot.assignment_ttl.  Requests are exact without it (they
 * subtract such rows as they read); it keeps that subtraction small.
 */
Datum
allot_expire_assignments(PG_FUNCTION_ARGS)
{
	TimestampTz cutoff;
	int64		expired;

	allot_check_settings();
	allot_require_writable("allot.expire_assignments");
	cutoff = allot_assignment_cutoff(allot_now_arg(fcinfo, 0));
	SPI_connect();
	expired = allot_expire_assignments_upto(cutoff, PG_INT64_MAX);
	SPI_finish();
	PG_RETURN_INT64(expired);
}
