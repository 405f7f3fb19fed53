/*
 * assign.c: assign_workload, the OpenBench-style front door (seed 000).
 *
 * One request is one path through the stages of assign.h: the host's locks
 * (entry.h), the host and its assignment, the backend cache of workloads,
 * the usage of the candidates, the pick, the commit.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "assign.h"
#include "credit.h"

/*
 * The first statement a request needs opens SQL: search_path pinned (a
 * repeat that reads and writes its rows directly never needs it) and SPI.
 * Every stage calls this before it runs a statement or prepares one.
 */
void
allot_assign_sql(Assign *a)
{
	if (a->sql.open)
		return;
	a->sql.guc_level = allot_pin_search_path();
	SPI_connect();
	a->sql.open = true;
}

static void
close_sql(Assign *a)
{
	if (!a->sql.open)
		return;
	SPI_finish();
	allot_unpin_search_path(a->sql.guc_level);
	a->sql.open = false;
}

/* The exclude argument as a sorted C array; NULL means none. */
int64 *
allot_exclude_arg(FunctionCallInfo fcinfo, int argno, int *n)
{
	ArrayType  *array;
	Datum	   *elems;
	bool	   *nulls;
	int64	   *ids;

	*n = 0;
	if (PG_ARGISNULL(argno))
		return NULL;
	array = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("exclude must be a one-dimensional array of workload ids, not %d-dimensional",
						ARR_NDIM(array))));
	deconstruct_array(array, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, &nulls, n);
	ids = palloc(sizeof(int64) * (*n > 0 ? *n : 1));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("exclude must not contain NULL (element %d)", i + 1)));
		ids[i] = DatumGetInt64(elems[i]);
	}
	qsort(ids, *n, sizeof(int64), allot_compare_int64);
	return ids;
}

/* A uniform draw from the seed, or from the backend's generator. */
static double
draw(FunctionCallInfo fcinfo, int argno)
{
	uint64		state = PG_ARGISNULL(argno) ? allot_random_seed() : (uint64) PG_GETARG_INT64(argno);

	return allot_random_uniform(&state);
}

/*
 * assign_workload's row type, built from its OUT parameters and blessed
 * once per backend rather than at every call.  A function's row type can
 * only change by dropping and creating it, which gives it a new OID.
 */
static TupleDesc
assign_result_desc(FunctionCallInfo fcinfo)
{
	static Oid	fn_oid = InvalidOid;
	static TupleDesc desc = NULL;

	if (desc == NULL || fn_oid != fcinfo->flinfo->fn_oid)
	{
		TupleDesc	d;
		TupleDesc	built;
		MemoryContext old;

		if (get_call_result_type(fcinfo, NULL, &d) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "return type must be a row type");
		old = MemoryContextSwitchTo(TopMemoryContext);
		built = BlessTupleDesc(CreateTupleDescCopy(d));
		MemoryContextSwitchTo(old);
		/* The old one goes only once the new one is whole. */
		if (desc != NULL)
			FreeTupleDesc(desc);
		desc = built;
		fn_oid = fcinfo->flinfo->fn_oid;
	}
	return desc;
}

PG_FUNCTION_INFO_V1(allot_assign_workload);

/*
 * assign_workload(host_id, now, exclude, seed): the fairest workload the host
 * can run, recorded as its assignment; zero rows (and the host's assignment
 * released) when nothing fits.
 */
Datum
allot_assign_workload(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;

	if (SRF_IS_FIRSTCALL())
	{
		Assign		a;
		MemoryContext old;
		HeapTuple	reply;

		funcctx = SRF_FIRSTCALL_INIT();
		funcctx->tuple_desc = assign_result_desc(fcinfo);

		allot_check_settings();
		allot_require_writable("allot.assign_workload");
		allot_require_arg(fcinfo, 0, "host_id");
		memset(&a, 0, sizeof(a));
		a.host_id = PG_GETARG_INT64(0);
		a.now = allot_now_arg(fcinfo, 1);
		a.cutoff = allot_assignment_cutoff(a.now);
		a.exclude = allot_exclude_arg(fcinfo, 2, &a.n_exclude);
		a.draw = draw(fcinfo, 3);

		allot_begin_host_request(a.host_id, "assignment");
		allot_read_assign_host(&a.host, a.host_id, a.cutoff, true);
		a.fairness = allot_fairness_mode();
		if ((a.cache = allot_workload_cache_if_built()) == NULL)
		{
			allot_assign_sql(&a);
			a.cache = allot_workload_cache();
		}
		allot_read_assign_usage(&a);
		allot_pick_assignment(&a);
		allot_commit_assignment(&a);
		allot_close_assign_host(&a.host);

		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		reply = allot_assign_reply(&a, funcctx->tuple_desc);
		MemoryContextSwitchTo(old);
		close_sql(&a);
		funcctx->user_fctx = reply;
		funcctx->max_calls = reply ? 1 : 0;
	}

	funcctx = SRF_PERCALL_SETUP();
	if (funcctx->call_cntr < funcctx->max_calls)
		SRF_RETURN_NEXT(funcctx, HeapTupleGetDatum((HeapTuple) funcctx->user_fctx));
	SRF_RETURN_DONE(funcctx);
}
