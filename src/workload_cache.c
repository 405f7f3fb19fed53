/*
 * workload_cache.c: per-backend cache of active assignment workloads.
 *
 * Protocol: allot.workload and allot.engine carry a statement trigger
 * (allot_workload_cache_invalidate) that queues a relcache invalidation of
 * the changed table.  PostgreSQL delivers it to every backend when the change
 * commits (and to the changing backend at once); our relcache callback then
 * bumps cache_generation.  A cache built under an older generation is stale.
 * A build that an invalidation overtakes is used for the current call only.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "storage/sinval.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "workload_cache.h"

static MemoryContext cache_context = NULL;
static WorkloadCache cache;
static uint64 cache_generation = 1;
static uint64 built_generation = 0;
static Oid	workload_relid = InvalidOid;
static Oid	engine_relid = InvalidOid;
static SPIPlanPtr workloads_plan = NULL;
static SPIPlanPtr engines_plan = NULL;

static void
cache_invalidate_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == workload_relid || relid == engine_relid)
		cache_generation++;
}

void
allot_workload_cache_init(void)
{
	CacheRegisterRelcacheCallback(cache_invalidate_callback, (Datum) 0);
}

PG_FUNCTION_INFO_V1(allot_workload_cache_invalidate);

/* Statement trigger on allot.workload and allot.engine. */
Datum
allot_workload_cache_invalidate(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("allot_workload_cache_invalidate() must be called as a trigger")));
	CacheInvalidateRelcache(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}

static SPIPlanPtr
prepare_kept(const char *sql)
{
	SPIPlanPtr	plan = SPI_prepare(sql, 0, NULL);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	SPI_keepplan(plan);
	return plan;
}

/* A text[] column as a NameList of C strings in the cache context. */
static NameList
name_list(HeapTuple tuple, TupleDesc desc, int column, bool *isnull)
{
	NameList	list = {NULL, 0};
	Datum		d = SPI_getbinval(tuple, desc, column, isnull);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	const char **names;

	if (*isnull)
		return list;
	deconstruct_array(DatumGetArrayTypeP(d), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	names = palloc(sizeof(char *) * (n > 0 ? n : 1));
	for (int i = 0; i < n; i++)
		names[i] = nulls[i] ? "" : TextDatumGetCString(elems[i]);
	list.names = names;
	list.count = n;
	return list;
}

static char *
text_or_null(HeapTuple tuple, TupleDesc desc, int column)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tuple, desc, column, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

static EngineNeeds *
find_engine(EngineNeeds *engines, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(engines[i].name, name) == 0)
			return &engines[i];
	return NULL;
}

static WorkloadMode
parse_mode(const char *mode)
{
	if (strcmp(mode, "spsa_single") == 0)
		return MODE_SPSA_SINGLE;
	if (strcmp(mode, "spsa_multiple") == 0)
		return MODE_SPSA_MULTIPLE;
	return MODE_GAMES;
}

/* Read both tables; the caller is connected to SPI. */
static void
cache_build(void)
{
	MemoryContext old;
	EngineNeeds *engines;
	int			n_engines;
	const char **dev_names;
	Oid			nsp = get_namespace_oid("allot", false);

	workload_relid = get_relname_relid("workload", nsp);
	engine_relid = get_relname_relid("engine", nsp);

	if (workloads_plan == NULL)
	{
		engines_plan = prepare_kept(
									"SELECT name, systems, cpu_flags, compiler, compiler_min, private"
									"  FROM allot.engine");
		workloads_plan = prepare_kept(
									  "SELECT id, priority, throughput, engine, base_engine, dev_threads,"
									  "       base_threads, syzygy, time_based, mode, workload_size"
									  "  FROM allot.workload"
									  " WHERE state = 'active' AND app_id IS NULL"
									  " ORDER BY priority DESC, id");
	}

	if (cache_context == NULL)
		cache_context = AllocSetContextCreate(CacheMemoryContext,
											  "allot workload cache",
											  ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(cache_context);
	memset(&cache, 0, sizeof(cache));

	if (SPI_execute_plan(engines_plan, NULL, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.engine");
	old = MemoryContextSwitchTo(cache_context);
	n_engines = (int) SPI_processed;
	engines = palloc0(sizeof(EngineNeeds) * (n_engines > 0 ? n_engines : 1));
	for (int i = 0; i < n_engines; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull;

		engines[i].name = text_or_null(t, d, 1);
		engines[i].systems = name_list(t, d, 2, &isnull);
		engines[i].any_system = isnull;
		engines[i].cpu_flags = name_list(t, d, 3, &isnull);
		engines[i].compiler = text_or_null(t, d, 4);
		engines[i].compiler_min = text_or_null(t, d, 5);
		engines[i].is_private = DatumGetBool(SPI_getbinval(t, d, 6, &isnull));
	}
	MemoryContextSwitchTo(old);

	if (SPI_execute_plan(workloads_plan, NULL, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.workload");
	old = MemoryContextSwitchTo(cache_context);
	cache.n_workloads = (int) SPI_processed;
	cache.workloads = palloc0(sizeof(CachedWorkload) *
							  (cache.n_workloads > 0 ? cache.n_workloads : 1));
	dev_names = palloc(sizeof(char *) * (cache.n_workloads > 0 ? cache.n_workloads : 1));
	for (int i = 0; i < cache.n_workloads; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		CachedWorkload *w = &cache.workloads[i];
		bool		isnull;
		char	   *base;
		int			e;

		w->id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
		w->priority = DatumGetInt32(SPI_getbinval(t, d, 2, &isnull));
		w->throughput = DatumGetFloat8(SPI_getbinval(t, d, 3, &isnull));
		w->engine_name = text_or_null(t, d, 4);
		base = text_or_null(t, d, 5);
		w->needs.dev = find_engine(engines, n_engines, w->engine_name);
		w->needs.base = base ? find_engine(engines, n_engines, base) : NULL;
		w->needs.dev_threads = DatumGetInt32(SPI_getbinval(t, d, 6, &isnull));
		w->needs.base_threads = DatumGetInt32(SPI_getbinval(t, d, 7, &isnull));
		w->needs.syzygy = DatumGetInt32(SPI_getbinval(t, d, 8, &isnull));
		w->needs.time_based = DatumGetBool(SPI_getbinval(t, d, 9, &isnull));
		w->needs.mode = parse_mode(text_or_null(t, d, 10));
		w->workload_size = DatumGetInt32(SPI_getbinval(t, d, 11, &isnull));

		/* Dense engine numbers, for balancing (seed 000 step 3). */
		for (e = 0; e < cache.n_engines; e++)
			if (strcmp(dev_names[e], w->engine_name) == 0)
				break;
		if (e == cache.n_engines)
			dev_names[cache.n_engines++] = w->engine_name;
		w->engine = e;
	}
	MemoryContextSwitchTo(old);
}

/*
 * The current cache; the caller is connected to SPI.  Pending invalidations
 * are read first, so a change committed before this call is always seen.
 */
const WorkloadCache *
allot_workload_cache(void)
{
	uint64		generation;

	AcceptInvalidationMessages();
	if (built_generation == cache_generation)
		return &cache;

	generation = cache_generation;
	cache_build();
	/* An invalidation that arrived during the build leaves the cache stale. */
	if (generation == cache_generation)
		built_generation = generation;
	return &cache;
}
