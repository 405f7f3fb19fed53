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

#include "access/xact.h"
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

#include "entry.h"
#include "workload_cache.h"

static MemoryContext cache_context = NULL;
static WorkloadCache cache;
static uint64 cache_generation = 1;
static uint64 built_generation = 0;
static uint64 builds = 0;		/* every build's number differs */
static Oid	workload_relid = InvalidOid;
static Oid	engine_relid = InvalidOid;
static Oid	app_relid = InvalidOid;
static Oid	app_version_relid = InvalidOid;
static Oid	resource_relid = InvalidOid;
static Oid	job_usage_relid = InvalidOid;
static SPIPlanPtr workloads_plan[2] = {NULL, NULL};	/* before 0.7.0; with adaptive_replication */
static SPIPlanPtr engines_plan = NULL;	/* 0.5.0 and later: with compilers */
static SPIPlanPtr engines_plan_single = NULL;	/* before: compiler only */
static SPIPlanPtr apps_plan[2] = {NULL, NULL};	/* before 0.7.0; with bounds (issue 32) */
static SPIPlanPtr versions_plan = NULL;
static SPIPlanPtr resources_plan = NULL;	/* 0.6.0 and later: with medians */
static SPIPlanPtr resources_plan_060 = NULL;	/* before */

static void
cache_invalidate_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == workload_relid || relid == engine_relid ||
		relid == app_relid || relid == app_version_relid || relid == resource_relid ||
		relid == job_usage_relid)
		cache_generation++;
}

/*
 * A transaction or subtransaction that aborts may have set a pick hint on
 * its own uncommitted work (jobs it sent, which are unsent again): forget
 * every hint.
 */
static void
forget_pick_hints(void)
{
	if (cache.pick_hints != NULL)
		memset(cache.pick_hints, 0, sizeof(PickHint) * cache.n_job_workloads);
}

static void
pick_hints_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		forget_pick_hints();
}

static void
pick_hints_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		forget_pick_hints();
}

void
allot_workload_cache_init(void)
{
	CacheRegisterRelcacheCallback(cache_invalidate_callback, (Datum) 0);
	RegisterXactCallback(pick_hints_xact_callback, NULL);
	RegisterSubXactCallback(pick_hints_subxact_callback, NULL);
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

/* A text[] column as a NameList in the current (cache) memory context. */
static NameList
name_list(HeapTuple tuple, TupleDesc desc, int column, bool *isnull)
{
	NameList	list = {NULL, 0};
	Datum		d = SPI_getbinval(tuple, desc, column, isnull);

	if (!*isnull)
		allot_text_list(d, &list);
	return list;
}

static char *
text_or_null(HeapTuple tuple, TupleDesc desc, int column)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tuple, desc, column, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/*
 * An engine's compilers: each element of its compilers list ("gcc" or
 * "gcc>=10.2", as OpenBench's engine configurations write them), then its
 * single compiler/compiler_min, if any.  Any one of them will do.
 */
static void
compiler_needs(HeapTuple tuple, TupleDesc desc, EngineNeeds *engine)
{
	bool		isnull;
	NameList	list = name_list(tuple, desc, 7, &isnull);
	char	   *single = text_or_null(tuple, desc, 4);
	CompilerNeed *needs = palloc(sizeof(CompilerNeed) * (list.count + 1));
	int			n = 0;

	for (int i = 0; i < list.count; i++)
	{
		const char *spec = list.names[i];
		const char *ge = strstr(spec, ">=");

		needs[n].name = ge ? pnstrdup(spec, ge - spec) : spec;
		needs[n].min_version = ge ? ge + 2 : NULL;
		n++;
	}
	if (single != NULL)
	{
		needs[n].name = single;
		needs[n].min_version = text_or_null(tuple, desc, 5);
		n++;
	}
	engine->compilers = needs;
	engine->n_compilers = n;
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

typedef struct IdIndex
{
	int64		id;
	int			index;
} IdIndex;

static int
compare_id_index(const void *a, const void *b)
{
	int64		x = ((const IdIndex *) a)->id,
				y = ((const IdIndex *) b)->id;

	return x < y ? -1 : x > y;
}

/* (id, index) pairs of n rows, sorted by id; ids[i] is row i's id. */
static IdIndex *
id_index(const int64 *ids, int n)
{
	IdIndex    *idx = palloc(sizeof(IdIndex) * (n > 0 ? n : 1));

	for (int i = 0; i < n; i++)
	{
		idx[i].id = ids[i];
		idx[i].index = i;
	}
	qsort(idx, n, sizeof(IdIndex), compare_id_index);
	return idx;
}

static int
find_id(const IdIndex *idx, int n, int64 id)
{
	int			lo = 0,
				hi = n - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (idx[mid].id == id)
			return idx[mid].index;
		if (idx[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int
allot_find_workload(const WorkloadCache *c, int64_t id)
{
	if (c->dense != NULL)
		return id >= c->dense_lo && id - c->dense_lo < c->dense_n ? c->dense[id - c->dense_lo] : -1;
	return find_id(c->workloads_by_id, c->n_workloads, id);
}

/*
 * Workload ids are an identity's, mostly dense: then a lookup (every usage
 * row a request reads) is an array index, where the ids span at most four
 * times as many as there are workloads.
 */
static void
build_dense_index(void)
{
	int64		lo,
				hi;

	allot_workload_id_range(&cache, false, &lo, &hi);
	if (lo > hi || hi - lo >= (int64) 4 * cache.n_workloads + 64)
		return;
	cache.dense_lo = lo;
	cache.dense_n = (int) (hi - lo + 1);
	cache.dense = palloc(sizeof(int) * cache.dense_n);
	for (int i = 0; i < cache.dense_n; i++)
		cache.dense[i] = -1;
	for (int i = 0; i < cache.n_workloads; i++)
		cache.dense[cache.workloads[i].id - lo] = i;
}

void
allot_workload_id_range(const WorkloadCache *c, bool jobs, int64_t *lo, int64_t *hi)
{
	const IdIndex *idx = jobs ? c->job_workloads_by_id : c->workloads_by_id;
	int			n = jobs ? c->n_job_workloads : c->n_workloads;

	*lo = n > 0 ? idx[0].id : 1;
	*hi = n > 0 ? idx[n - 1].id : 0;
}

int
allot_find_app(const WorkloadCache *c, int64_t id)
{
	return find_id(c->apps_by_id, c->n_apps, id);
}

int
allot_find_version(const WorkloadCache *c, int64_t id)
{
	return find_id(c->versions_by_id, c->n_versions, id);
}

int
allot_find_job_workload(const WorkloadCache *c, int64_t id)
{
	return find_id(c->job_workloads_by_id, c->n_job_workloads, id);
}

int
allot_resource_index(const WorkloadCache *c, const char *name)
{
	for (int i = 0; i < c->n_resources; i++)
		if (strcmp(c->resources[i], name) == 0)
			return i;
	return -1;
}

/*
 * allot.resource's rows, cpu last; from 0.6.0 with the median FLOPS of an
 * instance, which bounds what a host's claim counts for (dispatch_host.c).
 * (An ALTER of allot.resource sends an invalidation.)
 */
static SPIPlanPtr
resources_plan_for_schema(void)
{
	if (get_attnum(resource_relid, "median_flops") != InvalidAttrNumber)
	{
		if (resources_plan == NULL)
			resources_plan = allot_prepare(
										  "SELECT name, median_flops FROM allot.resource"
										  " ORDER BY name = 'cpu', name", 0, NULL);
		return resources_plan;
	}
	if (resources_plan_060 == NULL)
		resources_plan_060 = allot_prepare(
											  "SELECT name, NULL::float8 FROM allot.resource"
											  " ORDER BY name = 'cpu', name", 0, NULL);
	return resources_plan_060;
}

/* Resources, apps and app versions (0.2.0 and later). */
static void
load_job_side(void)
{
	MemoryContext old;
	int			n;
	bool		bounds;

	if (SPI_execute_plan(resources_plan_for_schema(), NULL, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.resource");
	old = MemoryContextSwitchTo(cache_context);
	n = (int) SPI_processed;
	cache.resources = palloc(sizeof(char *) * (n > 0 ? n : 1));
	cache.median_flops = palloc0(sizeof(double) * (n > 0 ? n : 1));
	cache.cpu = -1;
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		median = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);

		cache.resources[i] = text_or_null(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		if (strcmp(cache.resources[i], "cpu") == 0)
			cache.cpu = i;
		if (!isnull)
			cache.median_flops[i] = DatumGetFloat8(median);
	}
	cache.n_resources = n;
	MemoryContextSwitchTo(old);

	bounds = get_attnum(app_relid, "run_flops_n") != InvalidAttrNumber;
	if (apps_plan[bounds] == NULL)
		apps_plan[1] = allot_prepare(
									 "SELECT id, coalesce(est_flops_per_au, 0), run_flops_n,"
									 "       coalesce(run_flops_bound, 0), coalesce(bound_factor, 0)"
									 "  FROM allot.app ORDER BY id", 0, NULL);
	if (SPI_execute_plan(apps_plan[bounds], NULL, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.app");
	old = MemoryContextSwitchTo(cache_context);
	n = (int) SPI_processed;
	cache.apps = palloc0(sizeof(CachedApp) * (n > 0 ? n : 1));
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;

		cache.apps[i].id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
		cache.apps[i].est_flops_per_au = DatumGetFloat8(SPI_getbinval(t, d, 2, &isnull));
		cache.apps[i].run_flops_n = DatumGetInt64(SPI_getbinval(t, d, 3, &isnull));
		cache.apps[i].run_flops_bound = DatumGetFloat8(SPI_getbinval(t, d, 4, &isnull));
		cache.apps[i].bound_factor = DatumGetFloat8(SPI_getbinval(t, d, 5, &isnull));
	}
	cache.n_apps = n;
	{
		int64	   *ids = palloc(sizeof(int64) * (n + 1));

		for (int i = 0; i < n; i++)
			ids[i] = cache.apps[i].id;
		cache.apps_by_id = id_index(ids, n);
	}
	MemoryContextSwitchTo(old);

	if (SPI_execute_plan(versions_plan, NULL, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.app_version");
	old = MemoryContextSwitchTo(cache_context);
	n = (int) SPI_processed;
	cache.versions = palloc0(sizeof(CachedVersion) * (n > 0 ? n : 1));
	cache.n_versions = n;
	for (int i = 0; i < n; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		CachedVersion *v = &cache.versions[i];
		bool		isnull;
		int			app = allot_find_app(&cache, DatumGetInt64(SPI_getbinval(t, d, 2, &isnull)));
		char	   *resource = text_or_null(t, d, 4);

		v->id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
		v->platform = text_or_null(t, d, 3);
		v->resource = allot_resource_index(&cache, resource);
		v->ncpus = DatumGetFloat8(SPI_getbinval(t, d, 5, &isnull));
		v->ncoprocs = DatumGetFloat8(SPI_getbinval(t, d, 6, &isnull));
		v->cpu_flags = name_list(t, d, 7, &isnull);
		/* versions are ordered by app: each app's are contiguous */
		if (app >= 0)
		{
			if (cache.apps[app].n_versions == 0)
				cache.apps[app].first_version = i;
			cache.apps[app].n_versions++;
		}
	}
	{
		int64	   *ids = palloc(sizeof(int64) * (n + 1));

		for (int i = 0; i < n; i++)
			ids[i] = cache.versions[i].id;
		cache.versions_by_id = id_index(ids, n);
	}
	MemoryContextSwitchTo(old);
}

/*
 * The engines query for the schema's version: allot.engine.compilers exists
 * from 0.5.0 on, and a session may update the extension between two
 * requests.  Both queries give the same columns.
 */
static SPIPlanPtr
engines_plan_for_schema(void)
{
	if (get_attnum(engine_relid, "compilers") != InvalidAttrNumber)
	{
		if (engines_plan == NULL)
			engines_plan = allot_prepare(
										"SELECT name, systems, cpu_flags, compiler, compiler_min,"
										"       private, compilers"
										"  FROM allot.engine", 0, NULL);
		return engines_plan;
	}
	if (engines_plan_single == NULL)
		engines_plan_single = allot_prepare(
											"SELECT name, systems, cpu_flags, compiler, compiler_min,"
											"       private, NULL::text[]"
											"  FROM allot.engine", 0, NULL);
	return engines_plan_single;
}

/* A workload's place while its groups are formed: its key and index. */
typedef struct GroupKey
{
	int32		priority;
	int			engine;
	FitNeeds	fit;
	int			index;
} GroupKey;

static int
compare_group_keys(const void *a, const void *b)
{
	const GroupKey *x = a;
	const GroupKey *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;	/* highest first */
	if (x->engine != y->engine)
		return x->engine < y->engine ? -1 : 1;
	if (x->fit.dev != y->fit.dev)
		return (uintptr_t) x->fit.dev < (uintptr_t) y->fit.dev ? -1 : 1;
	if (x->fit.base != y->fit.base)
		return (uintptr_t) x->fit.base < (uintptr_t) y->fit.base ? -1 : 1;
	if (x->fit.threads != y->fit.threads)
		return x->fit.threads < y->fit.threads ? -1 : 1;
	if (x->fit.core_odds != y->fit.core_odds)
		return x->fit.core_odds ? 1 : -1;
	if (x->fit.syzygy != y->fit.syzygy)
		return x->fit.syzygy < y->fit.syzygy ? -1 : 1;
	if (x->fit.time_based != y->fit.time_based)
		return x->fit.time_based ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;	/* cache order */
}

static bool
same_group(const GroupKey *x, const GroupKey *y)
{
	GroupKey	a = *x,
				b = *y;

	a.index = b.index = 0;
	return compare_group_keys(&a, &b) == 0;
}

/*
 * The assignment workloads in groups (AssignGroup), highest priority first,
 * each group's members in cache order; in the cache's context.
 */
static void
build_groups(const EngineNeeds *engines)
{
	int			n = cache.n_workloads;
	GroupKey   *keys = palloc(sizeof(GroupKey) * (n + 1));

	for (int i = 0; i < n; i++)
	{
		keys[i].priority = cache.workloads[i].priority;
		keys[i].engine = cache.workloads[i].engine;
		allot_fit_needs(&cache.workloads[i].needs, &keys[i].fit);
		keys[i].index = i;
	}
	qsort(keys, n, sizeof(GroupKey), compare_group_keys);

	cache.groups = palloc0(sizeof(AssignGroup) * (n + 1));
	cache.group_members = palloc(sizeof(int) * (n + 1));
	cache.workload_group = palloc(sizeof(int) * (n + 1));
	cache.n_groups = 0;
	for (int k = 0; k < n; k++)
	{
		const CachedWorkload *w = &cache.workloads[keys[k].index];
		AssignGroup *g;

		if (k == 0 || !same_group(&keys[k - 1], &keys[k]))
		{
			g = &cache.groups[cache.n_groups++];
			g->fit = keys[k].fit;
			g->dev_needs = g->fit.dev ? (int) (g->fit.dev - engines) : -1;
			g->base_needs = g->fit.base ? (int) (g->fit.base - engines) : -1;
			g->priority = w->priority;
			g->engine = w->engine;
			g->engine_name = w->engine_name;
			g->first = k;
		}
		g = &cache.groups[cache.n_groups - 1];
		g->n++;
		g->sum_throughput += w->throughput;
		cache.group_members[k] = keys[k].index;
		cache.workload_group[keys[k].index] = cache.n_groups - 1;
	}
	pfree(keys);
}

/*
 * Read the tables; the caller is connected to SPI.  Each read takes a fresh
 * snapshot: a request builds the cache after waiting for its locks
 * (entry.h), and must see what an operator committed meanwhile, not what
 * its statement's snapshot saw before it waited.
 */
static void
cache_build(void)
{
	MemoryContext old;
	EngineNeeds *engines;
	int			n_engines;
	const char **dev_names;
	int			n;
	bool		adaptive;
	Oid			nsp = get_namespace_oid("allot", false);

	workload_relid = get_relname_relid("workload", nsp);
	engine_relid = get_relname_relid("engine", nsp);
	/* Absent while the extension is at 0.1.0: then there is no job side. */
	app_relid = get_relname_relid("app", nsp);
	app_version_relid = get_relname_relid("app_version", nsp);
	resource_relid = get_relname_relid("resource", nsp);
	job_usage_relid = get_relname_relid("job_usage", nsp);

	/* From 0.7.0 a job workload may replicate adaptively (voices.h). */
	adaptive = get_attnum(workload_relid, "adaptive_replication") != InvalidAttrNumber;
	if (workloads_plan[adaptive] == NULL)
	{
		workloads_plan[adaptive] = allot_prepare(psprintf(
									  "SELECT id, priority, throughput, engine, base_engine, dev_threads,"
									  "       base_threads, syzygy, time_based, mode, workload_size,"
									  "       app_id,"
									  "       coalesce(extract(epoch FROM delay_bound)::float8, 0), %s"
									  "  FROM allot.workload"
									  " WHERE state = 'active'"
									  " ORDER BY priority DESC, id",
									  adaptive ? "adaptive_replication" : "false"), 0, NULL);
	}
	if (versions_plan == NULL && OidIsValid(app_relid))
	{
		apps_plan[0] = allot_prepare(
									 "SELECT id, coalesce(est_flops_per_au, 0), 0::bigint, 0::float8, 0::float8"
									 "  FROM allot.app ORDER BY id", 0, NULL);
		versions_plan = allot_prepare(
									 "SELECT id, app_id, platform, resource, ncpus, ncoprocs, cpu_flags"
									 "  FROM allot.app_version ORDER BY app_id, id", 0, NULL);
	}

	if (cache_context == NULL)
		cache_context = AllocSetContextCreate(CacheMemoryContext,
											  "allot workload cache",
											  ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(cache_context);
	memset(&cache, 0, sizeof(cache));
	cache.generation = ++builds;
	/* Before 0.5.1 job_usage has no reopened column (ALTER sends an invalidation). */
	cache.job_usage_reopened = OidIsValid(job_usage_relid) &&
		get_attnum(job_usage_relid, "reopened") != InvalidAttrNumber;
	/* Before 0.6.0 jobs have no sendings (the update's new index and
	 * triggers on allot.workload send an invalidation). */
	{
		Oid			job_relid = get_relname_relid("job", nsp);

		cache.job_sendings = OidIsValid(job_relid) &&
			get_attnum(job_relid, "sending") != InvalidAttrNumber;
		/* 0.7.0: owners, proven work, quorum replication. */
		cache.voices = OidIsValid(job_relid) &&
			get_attnum(job_relid, "replica_of") != InvalidAttrNumber;
	}

	if (SPI_execute_plan(engines_plan_for_schema(), NULL, NULL, false, 0) != SPI_OK_SELECT)
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
		compiler_needs(t, d, &engines[i]);
		engines[i].is_private = DatumGetBool(SPI_getbinval(t, d, 6, &isnull));
	}
	MemoryContextSwitchTo(old);

	if (OidIsValid(app_relid))
		load_job_side();

	if (SPI_execute_plan(workloads_plan[adaptive], NULL, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.workload");
	old = MemoryContextSwitchTo(cache_context);
	n = (int) SPI_processed;
	cache.workloads = palloc0(sizeof(CachedWorkload) * (n > 0 ? n : 1));
	cache.job_workloads = palloc0(sizeof(CachedWorkload) * (n > 0 ? n : 1));
	cache.pick_hints = palloc0(sizeof(PickHint) * (n > 0 ? n : 1));
	dev_names = palloc(sizeof(char *) * (n > 0 ? n : 1));
	for (int i = 0; i < n; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		CachedWorkload w;
		bool		isnull;
		bool		no_app;
		int64		app_id;
		char	   *base;
		int			e;

		memset(&w, 0, sizeof(w));
		w.id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
		w.priority = DatumGetInt32(SPI_getbinval(t, d, 2, &isnull));
		w.throughput = DatumGetFloat8(SPI_getbinval(t, d, 3, &isnull));
		w.engine_name = text_or_null(t, d, 4);
		base = text_or_null(t, d, 5);
		w.needs.dev = find_engine(engines, n_engines, w.engine_name);
		w.needs.base = base ? find_engine(engines, n_engines, base) : NULL;
		w.needs.dev_threads = DatumGetInt32(SPI_getbinval(t, d, 6, &isnull));
		w.needs.base_threads = DatumGetInt32(SPI_getbinval(t, d, 7, &isnull));
		w.needs.syzygy = DatumGetInt32(SPI_getbinval(t, d, 8, &isnull));
		w.needs.time_based = DatumGetBool(SPI_getbinval(t, d, 9, &isnull));
		w.needs.mode = parse_mode(text_or_null(t, d, 10));
		w.workload_size = DatumGetInt32(SPI_getbinval(t, d, 11, &isnull));
		app_id = DatumGetInt64(SPI_getbinval(t, d, 12, &no_app));
		w.delay_bound_secs = DatumGetFloat8(SPI_getbinval(t, d, 13, &isnull));
		w.adaptive_replication = DatumGetBool(SPI_getbinval(t, d, 14, &isnull));

		/* Dense engine numbers, for balancing (seed 000 step 3). */
		for (e = 0; e < cache.n_engines; e++)
			if (strcmp(dev_names[e], w.engine_name) == 0)
				break;
		if (e == cache.n_engines)
			dev_names[cache.n_engines++] = w.engine_name;
		w.engine = e;

		if (no_app)
			cache.workloads[cache.n_workloads++] = w;
		else
		{
			/* A job workload whose app has no row cannot be served. */
			w.app = allot_find_app(&cache, app_id);
			if (w.app >= 0)
				cache.job_workloads[cache.n_job_workloads++] = w;
		}
	}
	cache.engine_needs = engines;
	cache.n_engine_needs = n_engines;
	build_groups(engines);
	{
		int64	   *ids = palloc(sizeof(int64) * (n + 1));

		for (int i = 0; i < cache.n_workloads; i++)
			ids[i] = cache.workloads[i].id;
		cache.workloads_by_id = id_index(ids, cache.n_workloads);
		build_dense_index();
		for (int i = 0; i < cache.n_job_workloads; i++)
			ids[i] = cache.job_workloads[i].id;
		cache.job_workloads_by_id = id_index(ids, cache.n_job_workloads);
	}
	MemoryContextSwitchTo(old);
}

/*
 * Only a complete, current cache has hints to lower: a build that failed
 * half-way (a cancel, say) leaves built_generation behind, and the next
 * request builds afresh, without hints.
 */
void
allot_pick_hint_lower(int64 workload_id, int64 after)
{
	int			i;

	if (built_generation != cache_generation || cache.pick_hints == NULL)
		return;
	i = allot_find_job_workload(&cache, workload_id);
	if (i >= 0 && cache.pick_hints[i].set_at != 0 && after < cache.pick_hints[i].after)
		cache.pick_hints[i].after = after;
}

/*
 * The current cache; the caller is connected to SPI.  Pending invalidations
 * are read first, so a change committed before this call is always seen.
 */
const WorkloadCache *
allot_workload_cache_if_built(void)
{
	AcceptInvalidationMessages();
	return built_generation == cache_generation ? &cache : NULL;
}

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
