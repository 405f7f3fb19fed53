/*
 * allot.c: module entry point and settings.
 *
 * allot keeps no shared memory: all of its state is in tables of schema
 * allot, so it needs no shared_preload_libraries entry and survives crashes
 * and restarts with whatever the tables say.  The only per-backend state is
 * the workload cache (workload_cache.c) and prepared plans.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "allot.h"
#include "selection.h"
#include "workload_cache.h"

PG_MODULE_MAGIC;

bool		allot_balance_engine_throughputs = false;
double		allot_repeat_threshold = 0.75;
double		allot_repeat_upper = 0;
bool		allot_count_requester = false;
int			allot_assignment_ttl = 120;
int			allot_fairness = FAIRNESS_CURRENT;
int			allot_rec_half_life = 10 * 24 * 3600;
int			allot_daily_quota = 100;
double		allot_default_seconds_per_app_unit = 3600;
int			allot_max_jobs_per_request = 1000;
int			allot_flops_sample_size = 100;
double		allot_flops_percentile = 0.05;
double		allot_flops_avg_weight = 0.1;
double		allot_gpu_efficiency = 1.0;
int			allot_transitioner_batch = 10000;

static const struct config_enum_entry fairness_options[] = {
	{"current", FAIRNESS_CURRENT, false},
	{"recent", FAIRNESS_RECENT, false},
	{"debt", FAIRNESS_DEBT, false},
	{NULL, 0, false}
};

void		_PG_init(void);

SPIPlanPtr
allot_prepare(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, argtypes, CURSOR_OPT_GENERIC_PLAN);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	SPI_keepplan(plan);
	return plan;
}

/* A text[] as C strings in the current memory context (NULL elements: ""). */
void
allot_text_list(Datum array, NameList *out)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	const char **names;

	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	names = palloc(sizeof(char *) * (n > 0 ? n : 1));
	for (int i = 0; i < n; i++)
		names[i] = nulls[i] ? "" : TextDatumGetCString(elems[i]);
	out->names = names;
	out->count = n;
}

/*
 * Read a host's row with `plan` (its first argument the host id); errors if
 * the host does not exist.  To write on its behalf (lock), first take the
 * host's lock, then read under a snapshot taken after it, so that what an
 * earlier request of this host committed while we waited is seen.
 */
HeapTuple
allot_read_host_row(SPIPlanPtr plan, Datum *args, int64 host_id, bool lock,
					TupleDesc *desc)
{
	if (lock)
		allot_lock_host(host_id);
	if (SPI_execute_plan(plan, args, NULL, !lock, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.host");
	if (SPI_processed == 0)
		allot_host_not_found(host_id);
	*desc = SPI_tuptable->tupdesc;
	return SPI_tuptable->vals[0];
}

/*
 * Set up a set-returning function to return its rows in a tuplestore (the
 * materialize mode every caller of ours accepts); *desc is the row type.
 */
Tuplestorestate *
allot_materialize(FunctionCallInfo fcinfo, TupleDesc *desc)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	Tuplestorestate *store;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (get_call_result_type(fcinfo, NULL, desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	*desc = CreateTupleDescCopy(*desc);
	store = tuplestore_begin_heap(true, false, work_mem);
	MemoryContextSwitchTo(old);

	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = *desc;
	return store;
}

void
_PG_init(void)
{
	DefineCustomBoolVariable("allot.balance_engine_throughputs",
							 "Divide each workload's throughput by its engine's number of candidates.",
							 "Seed 000 step 3.",
							 &allot_balance_engine_throughputs, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.repeat_threshold",
							 "A host repeats its last workload while every candidate's ratio is above this fraction of fair.",
							 "Seed 000 step 6.",
							 &allot_repeat_threshold, 0.75, 0.0, 1000.0,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.repeat_upper",
							 "Refuse a repeat unless the last workload's ratio is below this multiple of fair; 0 disables.",
							 "OpenBench 2024+ uses 1.25.",
							 &allot_repeat_upper, 0.0, 0.0, 1000.0,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("allot.count_requester",
							 "Add the requesting host's threads to every candidate, and once to fair, before comparing.",
							 "OpenBench 2024+ behaviour.",
							 &allot_count_requester, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.assignment_ttl",
							"An assignment counts while its host was seen this recently.",
							NULL,
							&allot_assignment_ttl, 120, 1, 365 * 24 * 3600,
							PGC_USERSET, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomEnumVariable("allot.fairness",
							 "What usage is compared when choosing a workload.",
							 "current: threads or FLOPS in use now (seed 000); recent: recent estimated credit, "
							 "decayed with allot.rec_half_life (seed 002); debt: long-term debt per workload and "
							 "resource (seeds 001, 003).",
							 &allot_fairness, FAIRNESS_CURRENT, fairness_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.rec_half_life",
							"Half-life of recent estimated credit, for allot.fairness = recent.",
							NULL,
							&allot_rec_half_life, 10 * 24 * 3600, 1, INT_MAX,
							PGC_USERSET, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.daily_quota",
							"Jobs a host may take per app version per day, at most.",
							"Errors, aborts and timeouts lower a host's quota by one; successes double it back up to this.",
							&allot_daily_quota, 100, 1, 1000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.default_seconds_per_app_unit",
							 "Run-time estimate per app unit when nothing better is known.",
							 "Seed 004: the last step of the estimate's fallback chain.",
							 &allot_default_seconds_per_app_unit, 3600, 1e-6, 1e9,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.max_jobs_per_request",
							"The most jobs one request_work call sends.",
							NULL,
							&allot_max_jobs_per_request, 1000, 1, 100000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.flops_sample_size",
							"Raw FLOPS per app unit collected per app and kind before a percentile is taken.",
							"Seed 004's N.",
							&allot_flops_sample_size, 100, 1, 1000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.flops_percentile",
							 "The percentile of raw FLOPS per app unit taken as the app's figure.",
							 "Seed 004: the most efficient hosts set the estimate.",
							 &allot_flops_percentile, 0.05, 0.0, 1.0,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.flops_avg_weight",
							 "Weight of a new percentile in the exponential average est_flops_per_au.",
							 NULL,
							 &allot_flops_avg_weight, 0.1, 0.0, 1.0,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("allot.gpu_efficiency",
							 "Scale of a GPU-only app's figure when no app has both CPU and GPU figures.",
							 "Seed 004 note 2; otherwise the average CPU/GPU ratio of apps with both is used.",
							 &allot_gpu_efficiency, 1.0, 1e-9, 1e9,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("allot.transitioner_batch",
							"Rows each step of run_transitioner handles per call, at most.",
							NULL,
							&allot_transitioner_batch, 10000, 1, 10000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
#if PG_VERSION_NUM >= 150000
	MarkGUCPrefixReserved("allot");
#else
	EmitWarningsOnPlaceholders("allot");
#endif

	allot_workload_cache_init();
}
