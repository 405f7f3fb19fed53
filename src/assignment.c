/*
 * assignment.c: SQL glue for assignment workloads (seed 000).
 *
 * One request is: take the host's lock (one request per host at a time)
 * and allot.assignment's write lock (allot_begin_host_request, entry.h),
 * and read the host with its current assignment under a snapshot taken
 * after them; take the active workloads from the backend cache; run
 * selection.c's steps over them, reading the usage of the surviving
 * candidates; choose; write the assignment.  Nothing here scans hosts or
 * assignments:
 *
 *   usage(W) = allot.workload_usage row of W        (trigger-maintained)
 *            - counted assignments of W already past allot.assignment_ttl
 *            - the requester's own counted assignment, if on W
 *
 * The middle term comes from the watch list (assignment_usage.c).  What a
 * request writes:
 *
 *   a repeat       one UPDATE of its assignment's seen_at alone: a HOT
 *                  update, no index or usage row touched, and (from 0.5.2)
 *                  no usage trigger even considered
 *   a switch       that UPDATE (its trigger moves the host's threads between
 *                  two usage rows, in workload id order: no deadlocks), and
 *                  host.last_workload_id
 *   nothing fits   the assignment deleted, if there was one; nothing else
 *
 * host.last_seen is not written here: the transitioner brings it up to date
 * from the assignments' seen_at and host_resource.asked_at.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "entry.h"
#include "credit.h"
#include "fairness.h"
#include "selection.h"
#include "table_read.h"
#include "table_write.h"
#include "usage_cache.h"
#include "workload_cache.h"

/* The host as a request sees it. */
typedef struct RequestHost
{
	int64		id;
	HostOffer	offer;
	int64		last_workload_id;	/* 0: none */
	bool		has_assignment; /* a row in allot.assignment, counted or not */
	int64		assigned_workload;	/* 0: none, or not counted now */
	int32		assigned_threads;
	bool		assigned_focus;
	HeapTuple	assignment_row; /* as read, when counted now; else NULL */
} RequestHost;

/* Candidates built for one request. */
typedef struct RequestSelection
{
	const WorkloadCache *cache;
	Candidate  *cand;			/* the capable workloads, in cache order */
	int		   *cache_index;	/* cand[i] is cache->workloads[cache_index[i]] */
	int			n;
	int			fairness;		/* allot.fairness, checked against the schema */
	Unfit	   *unfit;			/* per cache workload */
	const EngineNeeds **unfit_engine;	/* the engine an engine check failed on */
	Selection	selection;
	int			found;			/* allot_assignment_usage's flags */
} RequestSelection;

/* Lapsed assignments a request stops counting at most (allot_tidy_assignments). */
#define SWEEP_PER_REQUEST 64

static SPIPlanPtr update_plan = NULL;
static SPIPlanPtr repeat_plan = NULL;
static SPIPlanPtr insert_plan = NULL;
static SPIPlanPtr last_workload_plan = NULL;
static SPIPlanPtr unassign_plan = NULL;
static SPIPlanPtr heartbeat_plan = NULL;
static SPIPlanPtr host_exists_plan = NULL;
static SPIPlanPtr release_plan = NULL;

static void
prepare_plans(void)
{
	Oid			assign_args[5] = {INT8OID, INT8OID, INT4OID, BOOLOID, TIMESTAMPTZOID};
	Oid			id_time[2] = {INT8OID, TIMESTAMPTZOID};
	Oid			id_only[1] = {INT8OID};
	Oid			id_id[2] = {INT8OID, INT8OID};

	if (update_plan != NULL)
		return;

	/*
	 * The assignment of a host that has one.  A repeat changes only seen_at
	 * and counted, which no index holds: a HOT update.
	 */
	update_plan = allot_prepare(
								"UPDATE allot.assignment"
								"   SET workload_id = $2, threads = $3, focus = $4, seen_at = $5,"
								"       counted = true,"
								"       assigned_at = CASE WHEN workload_id = $2 THEN assigned_at ELSE $5 END"
								" WHERE host_id = $1",
								5, assign_args);

	/*
	 * A repeat of a counted assignment with the same threads and focus
	 * writes seen_at alone, which fires no usage trigger (from 0.5.2 it
	 * names its columns, and PostgreSQL then skips it without compiling its
	 * WHEN clause).  The WHERE clause checks again, under the row lock, what
	 * the read saw: a row that changed since (a sweep stopped counting it)
	 * is written in full by update_plan.
	 */
	repeat_plan = allot_prepare(
								"UPDATE allot.assignment SET seen_at = $5"
								" WHERE host_id = $1 AND workload_id = $2 AND threads = $3"
								"   AND focus = $4 AND counted",
								5, assign_args);
	insert_plan = allot_prepare(
								"INSERT INTO allot.assignment"
								"       (host_id, workload_id, threads, focus, assigned_at, seen_at, counted)"
								"VALUES ($1, $2, $3, $4, $5, $5, true)",
								5, assign_args);
	last_workload_plan = allot_prepare(
									   "UPDATE allot.host SET last_workload_id = $2 WHERE id = $1",
									   2, id_id);
	unassign_plan = allot_prepare(
								  "DELETE FROM allot.assignment WHERE host_id = $1",
								  1, id_only);
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

/* A text[] column of the row in t's slot as a NameList. */
static NameList
name_list(AllotTable *t, const char *column)
{
	NameList	list = {NULL, 0};
	bool		isnull;
	Datum		d = slot_getattr(t->slot, allot_column(t, column, TEXTARRAYOID), &isnull);

	if (!isnull)
		allot_text_list(d, &list);
	return list;
}

/* A host's compilers, {"gcc": "12.2.0", ...}, as two parallel lists. */
static void
compiler_lists(Jsonb *compilers, NameList *names, NameList *versions)
{
	int			n = JB_ROOT_COUNT(compilers);
	const char **k = palloc(sizeof(char *) * (n + 1));
	const char **v = palloc(sizeof(char *) * (n + 1));
	JsonbIterator *it = JsonbIteratorInit(&compilers->root);
	JsonbValue	key,
				value;
	JsonbIteratorToken tok;
	int			i = 0;

	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		if (tok != WJB_KEY || i >= n)
			continue;
		if (JsonbIteratorNext(&it, &value, true) != WJB_VALUE)
			break;
		k[i] = pnstrdup(key.val.string.val, key.val.string.len);
		if (value.type == jbvString)
			v[i] = pnstrdup(value.val.string.val, value.val.string.len);
		else if (value.type == jbvNumeric)
			v[i] = DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(value.val.numeric)));
		else
			v[i] = "";			/* not a version: compares as 0 */
		i++;
	}
	names->names = k;
	names->count = i;
	versions->names = v;
	versions->count = i;
}

/*
 * Read the host and its assignment, by primary key (table_read.c); errors
 * if the host does not exist.  To assign (fresh), after
 * allot_begin_host_request, under a snapshot taken after it, so that an
 * assignment made by a request we waited for is seen as this host's own,
 * never as another host's.
 */
static void
read_host(RequestHost *host, int64 host_id, TimestampTz cutoff, bool fresh)
{
	Snapshot	snap = allot_read_snapshot(fresh);
	AllotTable	h,
				a;
	bool		isnull;
	Datum		v;

	memset(host, 0, sizeof(*host));
	host->id = host_id;

	allot_table_open(&h, "host", "host_pkey", false);
	if (!allot_fetch_by_key(&h, host_id, snap))
		allot_host_not_found(host_id);
	v = slot_getattr(h.slot, allot_column(&h, "os", TEXTOID), &isnull);
	host->offer.os = isnull ? NULL : TextDatumGetCString(v);
	host->offer.cpu_flags = name_list(&h, "cpu_flags");
	host->offer.tokens = name_list(&h, "tokens");
	host->offer.focus = name_list(&h, "focus");
	v = slot_getattr(h.slot, allot_column(&h, "compilers", JSONBOID), &isnull);
	if (!isnull)
		compiler_lists(DatumGetJsonbP(v), &host->offer.compiler_names,
					   &host->offer.compiler_versions);
	host->offer.threads = allot_slot_int4(&h, allot_column(&h, "threads", INT4OID), 1);
	host->offer.physical_cores = allot_slot_int4(&h, allot_column(&h, "physical_cores", INT4OID),
												 host->offer.threads);
	host->offer.sockets = allot_slot_int4(&h, allot_column(&h, "sockets", INT4OID), 1);
	host->offer.syzygy_max = allot_slot_int4(&h, allot_column(&h, "syzygy_max", INT4OID), 0);
	host->offer.noisy = allot_slot_bool(&h, allot_column(&h, "noisy", BOOLOID), false);
	host->last_workload_id = allot_slot_int8(&h, allot_column(&h, "last_workload_id", INT8OID), 0);
	allot_table_close(&h);

	allot_table_open(&a, "assignment", "assignment_pkey", false);
	if (allot_fetch_by_key(&a, host_id, snap))
	{
		host->has_assignment = true;
		/* It counts while marked so and seen within assignment_ttl. */
		if (allot_slot_bool(&a, allot_column(&a, "counted", BOOLOID), false) &&
			allot_slot_timestamptz(&a, allot_column(&a, "seen_at", TIMESTAMPTZOID),
								   DT_NOBEGIN) >= cutoff)
		{
			host->assigned_workload = allot_slot_int8(&a, allot_column(&a, "workload_id", INT8OID), 0);
			host->assigned_threads = allot_slot_int4(&a, allot_column(&a, "threads", INT4OID), 0);
			host->assigned_focus = allot_slot_bool(&a, allot_column(&a, "focus", BOOLOID), false);
			host->assignment_row = ExecCopySlotHeapTuple(a.slot);
			host->assignment_row->t_self = a.slot->tts_tid;
		}
	}
	allot_table_close(&a);
	UnregisterSnapshot(snap);
}

/* The exclude argument as a sorted C array; NULL means none. */
static int64 *
exclude_list(FunctionCallInfo fcinfo, int argno, int *n)
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

static bool
excluded(const int64 *ids, int n, int64 id)
{
	return n > 0 && bsearch(&id, ids, n, sizeof(int64), allot_compare_int64) != NULL;
}

/*
 * Fill counted threads of the candidates (step 2).  A request that will
 * write reads with a fresh snapshot, so that what committed while it
 * waited for its locks is counted.
 */
static void
read_usage(RequestSelection *rs, const RequestHost *host, TimestampTz cutoff,
		   bool writer)
{
	int64	   *ids = palloc(sizeof(int64) * (rs->n + 1));
	double	   *threads,
			   *focus_threads;
	int			nids = 0;

	rs->found = 0;
	for (int i = 0; i < rs->n; i++)
	{
		rs->cand[i].threads = 0;
		rs->cand[i].focus_threads = 0;
		if (rs->cand[i].status == CANDIDATE)
			ids[nids++] = rs->cand[i].workload_id;
	}
	if (nids == 0)
		return;
	qsort(ids, nids, sizeof(int64), allot_compare_int64);
	threads = palloc0(sizeof(double) * nids);
	focus_threads = palloc0(sizeof(double) * nids);
	rs->found = allot_assignment_usage(ids, nids, cutoff, writer, threads, focus_threads);

	for (int i = 0; i < rs->n; i++)
	{
		Candidate  *c = &rs->cand[i];
		const int64 *hit;

		if (c->status != CANDIDATE)
			continue;
		hit = bsearch(&c->workload_id, ids, nids, sizeof(int64), allot_compare_int64);
		c->threads = threads[hit - ids];
		c->focus_threads = focus_threads[hit - ids];
		/* The requester itself never counts (step 2). */
		if (c->workload_id == host->assigned_workload)
		{
			if (host->assigned_focus)
				c->focus_threads -= host->assigned_threads;
			else
				c->threads -= host->assigned_threads;
		}
	}
}

/*
 * allot.fairness = recent or debt: the candidates' usage is their recent
 * credit, or their debt on the CPU.  Every active assignment workload has
 * work, so every one is eligible for debt.
 */
static void
read_credit(RequestSelection *rs, TimestampTz now, int mode)
{
	const WorkloadCache *cache = rs->cache;
	int			nw = cache->n_workloads;
	double	   *rec = palloc0(sizeof(double) * (nw + 1));
	double	   *share = palloc(sizeof(double) * (nw + 1));
	double	   *overall = palloc(sizeof(double) * (nw + 1));
	DebtCell   *cells = palloc0(sizeof(DebtCell) * (nw + 1));
	CreditRow  *rows;
	int			nrows;

	for (int i = 0; i < nw; i++)
	{
		share[i] = cache->workloads[i].throughput;
		cells[i].eligible = true;
	}
	nrows = allot_read_credit(cache, false, now, &rows);
	for (int k = 0; k < nrows; k++)
	{
		int			i = allot_find_workload(cache, rows[k].workload_id);

		if (i < 0 || rows[k].resource != cache->cpu)
			continue;
		rec[i] = rows[k].rec;
		cells[i].debt = rows[k].debt;
		cells[i].sent = rows[k].sent;
	}
	allot_overall_debts(cells, share, nw, 1, overall);

	for (int c = 0; c < rs->n; c++)
	{
		int			i = rs->cache_index[c];

		if (mode == FAIRNESS_RECENT)
		{
			rs->cand[c].threads = rec[i];
			rs->cand[c].focus_threads = 0;
		}
		rs->cand[c].debt = overall[i];
	}
}

/* What an assignment is worth: its threads for one assignment_ttl. */
static double
assignment_credit(const RequestHost *host)
{
	return (double) host->offer.threads * allot_assignment_ttl;
}

/* A uniform draw from the seed, or from the backend's generator. */
static double
draw(FunctionCallInfo fcinfo, int argno)
{
	uint64		state = PG_ARGISNULL(argno) ? allot_random_seed() : (uint64) PG_GETARG_INT64(argno);

	return allot_random_uniform(&state);
}

/* The settings of steps 3 to 7 for this host, and its draw. */
static void
selection_params(const RequestHost *host, int mode, double u, SelectionParams *params)
{
	memset(params, 0, sizeof(*params));
	params->balance_engines = allot_balance_engine_throughputs;
	params->repeat_threshold = allot_repeat_threshold;
	params->repeat_upper = allot_repeat_upper;
	params->count_requester = allot_count_requester;
	params->requester_threads = host->offer.threads;
	params->last_workload_id = host->last_workload_id;
	params->draw = u;
	params->by_debt = mode == FAIRNESS_DEBT;
	params->debt_slack = assignment_credit(host);
}

/* Seed 000, steps 1 to 7, for one host; the caller is connected to SPI. */
static void
select_for_host(RequestSelection *rs, const RequestHost *host,
				const int64 *exclude, int n_exclude, TimestampTz now,
				double u, bool read_only)
{
	const WorkloadCache *cache = allot_workload_cache();
	TimestampTz cutoff = allot_assignment_cutoff(now);
	int			mode = allot_fairness_mode();
	SelectionParams params;
	int		   *engine_counts;

	rs->cache = cache;
	rs->fairness = mode;
	rs->n = 0;
	rs->cand = palloc0(sizeof(Candidate) * (cache->n_workloads + 1));
	rs->cache_index = palloc(sizeof(int) * (cache->n_workloads + 1));
	rs->unfit = palloc0(sizeof(Unfit) * (cache->n_workloads + 1));
	rs->unfit_engine = palloc0(sizeof(EngineNeeds *) * (cache->n_workloads + 1));

	/*
	 * Step 1: capability.  Workloads come by priority, highest first: once
	 * one fits, a lower priority can never be a candidate, so a request stops
	 * there (explain_assignment goes on: it says why of every workload).
	 */
	for (int i = 0; i < cache->n_workloads; i++)
	{
		const CachedWorkload *w = &cache->workloads[i];
		Candidate  *c;

		if (!read_only && rs->n > 0 && w->priority < rs->cand[0].priority)
			break;
		if (excluded(exclude, n_exclude, w->id))
			rs->unfit[i] = UNFIT_EXCLUDED;
		else
			rs->unfit[i] = allot_host_unfit(&host->offer, &w->needs,
											&rs->unfit_engine[i]);
		if (rs->unfit[i] != FIT)
			continue;

		c = &rs->cand[rs->n];
		rs->cache_index[rs->n++] = i;
		c->workload_id = w->id;
		c->priority = w->priority;
		c->engine = w->engine;
		c->throughput = w->throughput;
		for (int f = 0; f < host->offer.focus.count; f++)
			if (strcmp(host->offer.focus.names[f], w->engine_name) == 0)
				c->focus = true;
	}

	/* Step 1: priority, then focus. */
	allot_refine_candidates(rs->cand, rs->n);

	/* Step 2: threads on each candidate, or what replaces them over time. */
	read_usage(rs, host, cutoff, !read_only);
	if (mode != FAIRNESS_CURRENT)
		read_credit(rs, now, mode);

	/* Steps 3 to 7. */
	selection_params(host, mode, u, &params);
	engine_counts = palloc(sizeof(int) * (cache->n_engines + 1));
	allot_select(rs->cand, rs->n, cache->n_engines, engine_counts, &params,
				 &rs->selection);
}

/* ---------------------------------------------------------------------------
 * assign_workload's own path (0.6.0): the candidates come group by group
 * (workload_cache.h), their usage from the backend's copy of
 * allot.workload_usage (usage_cache.h) less the lapsed assignments and the
 * requester's own, and a repeat is decided from each group's sums
 * (allot_repeat_from_sums) without visiting every candidate.  Whatever the
 * sums leave unsure, and every switch, goes through allot_select over the
 * candidates in cache order, as explain_assignment's path does: the two
 * choose alike (test/pgtap/42_assign_paths.sql compares them).
 * ------------------------------------------------------------------------- */

/* What assign_workload chose. */
typedef struct Choice
{
	int			workload;		/* index in the cache, -1: nothing fits */
	bool		focus_assigned;
	bool		repeated;
	int			found;			/* allot_lapsed_usage's flags */
} Choice;

/* The groups a request's candidates are in: step 1, group by group. */
typedef struct GroupPick
{
	bool	   *chosen;			/* per group: its members are candidates */
	int32		top;			/* their priority */
	bool		focus_assigned;
	int		   *engine_count;	/* candidates per dev engine (step 3) */
	int			n_candidates;
} GroupPick;

static void
pick_groups(const WorkloadCache *cache, const RequestHost *host, GroupPick *gp)
{
	Unfit	   *verdict = palloc(sizeof(Unfit) * (cache->n_engine_needs + 1));
	bool	   *judged = palloc0(sizeof(bool) * (cache->n_engine_needs + 1));
	bool	   *focus = palloc0(sizeof(bool) * (cache->n_groups + 1));
	bool		found = false;

	gp->chosen = palloc0(sizeof(bool) * (cache->n_groups + 1));
	gp->engine_count = palloc0(sizeof(int) * (cache->n_engines + 1));
	gp->focus_assigned = false;
	gp->n_candidates = 0;
	gp->top = 0;

	/* Groups come by priority, highest first: stop below the first that fits. */
	for (int g = 0; g < cache->n_groups; g++)
	{
		const AssignGroup *grp = &cache->groups[g];
		Unfit		dev = FIT,
					base = FIT;
		const EngineNeeds *engine;
		int			e;

		if (found && grp->priority < gp->top)
			break;
		/* Each engine judged once (the costly part: names, versions). */
		if ((e = grp->dev_needs) >= 0)
		{
			if (!judged[e])
				verdict[e] = allot_engine_unfit(&host->offer, &cache->engine_needs[e]);
			judged[e] = true;
			dev = verdict[e];
		}
		if (dev == FIT && (e = grp->base_needs) >= 0)
		{
			if (!judged[e])
				verdict[e] = allot_engine_unfit(&host->offer, &cache->engine_needs[e]);
			judged[e] = true;
			base = verdict[e];
		}
		if (allot_fit_unfit(&host->offer, &grp->fit, dev, base, &engine) != FIT)
			continue;
		found = true;
		gp->top = grp->priority;
		gp->chosen[g] = true;
		for (int f = 0; f < host->offer.focus.count; f++)
			if (strcmp(host->offer.focus.names[f], grp->engine_name) == 0)
				focus[g] = gp->focus_assigned = true;
	}

	/* Step 1's focus: only the focused engines' groups, if any. */
	for (int g = 0; g < cache->n_groups; g++)
	{
		if (gp->focus_assigned && !focus[g])
			gp->chosen[g] = false;
		if (gp->chosen[g])
		{
			gp->engine_count[cache->groups[g].engine] += cache->groups[g].n;
			gp->n_candidates += cache->groups[g].n;
		}
	}
}

/* Threads subtracted from some workloads: the lapsed, and the requester's. */
typedef struct Corrections
{
	UsageDelta *d;				/* sorted by workload, one entry each */
	int			n;
} Corrections;

static int
compare_deltas(const void *a, const void *b)
{
	int			x = ((const UsageDelta *) a)->workload;
	int			y = ((const UsageDelta *) b)->workload;

	return x < y ? -1 : x > y;
}

static void
gather_corrections(const LapsedUsage *lapsed, const RequestHost *host,
				   const WorkloadCache *cache, Corrections *out)
{
	int			own = host->assigned_workload ?
		allot_find_workload(cache, host->assigned_workload) : -1;
	int			n = lapsed->n;
	UsageDelta *d = palloc(sizeof(UsageDelta) * (n + 1));
	int			k = 0;

	memcpy(d, lapsed->deltas, sizeof(UsageDelta) * n);
	/* The requester itself never counts (step 2). */
	if (own >= 0)
	{
		d[n].workload = own;
		d[n].threads = host->assigned_focus ? 0 : host->assigned_threads;
		d[n].focus_threads = host->assigned_focus ? host->assigned_threads : 0;
		n++;
	}
	qsort(d, n, sizeof(UsageDelta), compare_deltas);
	for (int i = 0; i < n; i++)
	{
		if (k > 0 && d[k - 1].workload == d[i].workload)
		{
			d[k - 1].threads += d[i].threads;
			d[k - 1].focus_threads += d[i].focus_threads;
		}
		else
			d[k++] = d[i];
	}
	out->d = d;
	out->n = k;
}

static const UsageDelta *
correction_of(const Corrections *c, int workload)
{
	UsageDelta	key = {workload, 0, 0};

	return c->n > 0 ? bsearch(&key, c->d, c->n, sizeof(UsageDelta), compare_deltas) : NULL;
}

/*
 * Step 6 from the groups' sums; REPEAT_YES means allot_select would repeat
 * the host's last workload (selection.h).
 */
static RepeatVerdict
repeat_by_sums(const WorkloadCache *cache, const UsageCache *usage, const GroupPick *gp,
			   const Corrections *corr, const RequestHost *host, const SelectionParams *params)
{
	bool		with_focus = gp->focus_assigned;
	int			last = host->last_workload_id ? allot_find_workload(cache, host->last_workload_id) : -1;
	double		requester = params->count_requester ? params->requester_threads : 0;
	RepeatSums	sums = {requester, 0, 0, 0};
	bool		any = false;

	if (last < 0 || !gp->chosen[cache->workload_group[last]])
		return REPEAT_NO;		/* the last workload is not a candidate */

	for (int g = 0; g < cache->n_groups; g++)
	{
		const AssignGroup *grp = &cache->groups[g];
		double		count;
		double		low;

		if (!gp->chosen[g])
			continue;
		count = params->balance_engines ? gp->engine_count[grp->engine] : 1;
		sums.sum_threads += allot_group_threads(cache, g, with_focus);
		sums.sum_throughput += grp->sum_throughput / count;
		low = allot_group_min_ratio(cache, g, requester, with_focus) * count;
		if (!any || low < sums.min_ratio)
			sums.min_ratio = low;
		any = true;
	}

	/* Less the corrections: fewer threads, and those workloads' ratios lower. */
	for (int k = 0; k < corr->n; k++)
	{
		int			i = corr->d[k].workload;
		const CachedWorkload *w = &cache->workloads[i];
		double		less = corr->d[k].threads + (with_focus ? corr->d[k].focus_threads : 0);
		double		counted;
		double		count;
		double		ratio;

		if (w->priority != gp->top || !gp->chosen[cache->workload_group[i]])
			continue;
		count = params->balance_engines ? gp->engine_count[w->engine] : 1;
		counted = usage->threads[i] + (with_focus ? usage->focus_threads[i] : 0) - less;
		sums.sum_threads -= less;
		ratio = (counted + requester) / (w->throughput / count);
		if (ratio < sums.min_ratio)
			sums.min_ratio = ratio;
	}

	/* The last workload's ratio, exactly as allot_select computes it. */
	{
		const CachedWorkload *w = &cache->workloads[last];
		const UsageDelta *c = correction_of(corr, last);
		double		count = params->balance_engines ? gp->engine_count[w->engine] : 1;
		double		threads = usage->threads[last] - (c ? c->threads : 0);
		double		focus_threads = usage->focus_threads[last] - (c ? c->focus_threads : 0);
		double		counted = threads + (with_focus ? focus_threads : 0);

		sums.last_ratio = (counted + requester) / (w->throughput / count);
	}
	return allot_repeat_from_sums(&sums, params);
}

/*
 * Steps 2 to 7 over every candidate, in cache order (as explain_assignment
 * orders them, so that a seeded draw picks alike).
 */
static void
select_over_candidates(const WorkloadCache *cache, const UsageCache *usage, const GroupPick *gp,
					   const Corrections *corr, const RequestHost *host, TimestampTz now,
					   int mode, SelectionParams *params, Choice *choice)
{
	RequestSelection rs;
	int		   *engine_counts;
	int			k = 0;

	memset(&rs, 0, sizeof(rs));
	rs.cache = cache;
	rs.fairness = mode;
	rs.cand = palloc0(sizeof(Candidate) * (gp->n_candidates + 1));
	rs.cache_index = palloc(sizeof(int) * (gp->n_candidates + 1));
	for (int i = 0; i < cache->n_workloads && cache->workloads[i].priority >= gp->top; i++)
	{
		const CachedWorkload *w = &cache->workloads[i];
		const UsageDelta *c;
		Candidate  *cand;

		if (w->priority != gp->top || !gp->chosen[cache->workload_group[i]])
			continue;
		cand = &rs.cand[k];
		rs.cache_index[k++] = i;
		cand->workload_id = w->id;
		cand->priority = w->priority;
		cand->engine = w->engine;
		cand->focus = gp->focus_assigned;	/* only focused groups are left then */
		cand->throughput = w->throughput;
		cand->status = CANDIDATE;
		cand->threads = usage->threads[i];
		cand->focus_threads = usage->focus_threads[i];
		if ((c = correction_of(corr, i)) != NULL)
		{
			cand->threads -= c->threads;
			cand->focus_threads -= c->focus_threads;
		}
	}
	rs.n = k;
	if (mode != FAIRNESS_CURRENT)
		read_credit(&rs, now, mode);
	engine_counts = palloc(sizeof(int) * (cache->n_engines + 1));
	allot_select(rs.cand, rs.n, cache->n_engines, engine_counts, params, &rs.selection);
	choice->workload = rs.selection.chosen >= 0 ? rs.cache_index[rs.selection.chosen] : -1;
	choice->focus_assigned = rs.selection.focus_assigned;
	choice->repeated = rs.selection.repeated;
}

/*
 * Seed 000 for assign_workload, without an exclude list (that goes through
 * select_for_host, as does a schema before 0.6.0, which has no copy to
 * keep: then false).  The caller is connected to SPI and holds the host's
 * lock and allot.assignment's write lock.
 */
static bool
choose_for_host(const WorkloadCache *cache, const RequestHost *host, TimestampTz now, double u,
				Choice *choice)
{
	const UsageCache *usage;
	TimestampTz cutoff = allot_assignment_cutoff(now);
	int			mode = allot_fairness_mode();
	SelectionParams params;
	GroupPick	gp;
	LapsedUsage lapsed;
	Corrections corr;

	memset(choice, 0, sizeof(*choice));
	choice->workload = -1;
	usage = allot_usage_cache(cache);
	if (usage == NULL)
		return false;
	pick_groups(cache, host, &gp);
	if (gp.n_candidates == 0)
		return true;

	/* Step 2: the copy of the usage rows, less what lapsed and the requester. */
	choice->found = allot_lapsed_usage(cache, cutoff, &lapsed);
	gather_corrections(&lapsed, host, cache, &corr);

	selection_params(host, mode, u, &params);
	if (mode == FAIRNESS_CURRENT &&
		repeat_by_sums(cache, usage, &gp, &corr, host, &params) == REPEAT_YES)
	{
		choice->workload = allot_find_workload(cache, host->last_workload_id);
		choice->focus_assigned = gp.focus_assigned;
		choice->repeated = true;
		return true;
	}
	select_over_candidates(cache, usage, &gp, &corr, host, now, mode, &params, choice);
	return true;
}

static int32
int_setting(int64 value, const char *name, int64 workload_id)
{
	if (value > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s of workload %lld is out of range: %lld",
						name, (long long) workload_id, (long long) value),
				 errhint("Lower the workload's workload_size.")));
	return (int32) value;
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
		MemoryContext old;
		int64		host_id;
		TimestampTz now;
		TimestampTz cutoff;
		int64	   *exclude;
		int			n_exclude;
		double		u;
		RequestHost host;
		RequestSelection rs;
		const WorkloadCache *cache;
		Choice		choice;
		HeapTuple	tuple = NULL;

		funcctx = SRF_FIRSTCALL_INIT();
		funcctx->tuple_desc = assign_result_desc(fcinfo);

		allot_check_settings();
		allot_require_writable("allot.assign_workload");
		allot_require_arg(fcinfo, 0, "host_id");
		host_id = PG_GETARG_INT64(0);
		now = allot_now_arg(fcinfo, 1);
		cutoff = allot_assignment_cutoff(now);
		exclude = exclude_list(fcinfo, 2, &n_exclude);
		u = draw(fcinfo, 3);

		SPI_connect();
		allot_begin_host_request(host_id, "assignment");
		prepare_plans();
		read_host(&host, host_id, cutoff, true);
		/* One cache throughout: choice.workload indexes its arrays. */
		cache = allot_workload_cache();
		if (n_exclude > 0 || !choose_for_host(cache, &host, now, u, &choice))
		{
			select_for_host(&rs, &host, exclude, n_exclude, now, u, false);
			cache = rs.cache;
			choice.workload = rs.selection.chosen >= 0 ?
				rs.cache_index[rs.selection.chosen] : -1;
			choice.focus_assigned = rs.selection.focus_assigned;
			choice.repeated = rs.selection.repeated;
			choice.found = rs.found;
		}

		if (choice.workload < 0)
		{
			Datum		args[1] = {Int64GetDatum(host_id)};

			/* Nothing fits: the host works on nothing, so it counts nowhere. */
			if (host.has_assignment &&
				SPI_execute_plan(unassign_plan, args, NULL, false, 0) != SPI_OK_DELETE)
				elog(ERROR, "could not release the assignment of host %lld",
					 (long long) host_id);
		}
		else
		{
			const CachedWorkload *w = &cache->workloads[choice.workload];
			ConcurrencySettings cs = allot_concurrency(&host.offer, &w->needs,
													   w->workload_size);
			Datum		args[5] = {
				Int64GetDatum(host_id), Int64GetDatum(w->id),
				Int32GetDatum(host.offer.threads),
				BoolGetDatum(choice.focus_assigned),
				TimestampTzGetDatum(now)
			};
			Datum		values[6];
			bool		nulls[6] = {false};
			bool		written = false;

			values[0] = Int64GetDatum(w->id);
			values[1] = Int32GetDatum(int_setting(cs.cutechess_count, "cutechess_count", w->id));
			values[2] = Int32GetDatum(int_setting(cs.concurrency_per, "concurrency_per", w->id));
			values[3] = Int32GetDatum(int_setting(cs.games_per_cutechess, "games_per_cutechess", w->id));
			values[4] = BoolGetDatum(choice.focus_assigned);
			values[5] = BoolGetDatum(choice.repeated);

			/* Credit first: the transitioner's fold locks those rows first too. */
			if (allot_fairness_mode() != FAIRNESS_CURRENT)
			{
				const char *cpu = "cpu";
				double		credit = assignment_credit(&host);
				int64		id = w->id;

				allot_add_credit(&id, &cpu, &credit, 1, now, allot_fairness_mode());
			}
			if (host.assigned_workload == w->id &&
				host.assigned_threads == host.offer.threads &&
				host.assigned_focus == choice.focus_assigned)
			{
				written = allot_touch_assignment(host.assignment_row, now);
				if (!written &&
					SPI_execute_plan(repeat_plan, args, NULL, false, 0) != SPI_OK_UPDATE)
					elog(ERROR, "could not record the assignment of host %lld",
						 (long long) host_id);
				written = written || SPI_processed > 0;
			}
			if (!written &&
				(host.has_assignment
				 ? SPI_execute_plan(update_plan, args, NULL, false, 0) != SPI_OK_UPDATE
				 : SPI_execute_plan(insert_plan, args, NULL, false, 0) != SPI_OK_INSERT))
				elog(ERROR, "could not record the assignment of host %lld",
					 (long long) host_id);

			/* The host row is written only when its last workload changes. */
			if (host.last_workload_id != w->id)
			{
				Datum		hargs[2] = {Int64GetDatum(host_id), Int64GetDatum(w->id)};

				if (SPI_execute_plan(last_workload_plan, hargs, NULL, false, 0) != SPI_OK_UPDATE)
					elog(ERROR, "could not update host %lld", (long long) host_id);
			}

			old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
			tuple = heap_form_tuple(funcctx->tuple_desc, values, nulls);
			MemoryContextSwitchTo(old);
		}

		/*
		 * Assignments that lapsed unswept cost every request a subtraction:
		 * the first to meet them stops counting a few; and the first to find
		 * the watch list due renews it.  Both after its own writes and
		 * without waiting for anything.
		 */
		(void) allot_tidy_assignments(cutoff, choice.found, SWEEP_PER_REQUEST);
		SPI_finish();
		funcctx->user_fctx = tuple;
		funcctx->max_calls = tuple ? 1 : 0;
	}

	funcctx = SRF_PERCALL_SETUP();
	if (funcctx->call_cntr < funcctx->max_calls)
		SRF_RETURN_NEXT(funcctx, HeapTupleGetDatum((HeapTuple) funcctx->user_fctx));
	SRF_RETURN_DONE(funcctx);
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
		RequestHost host;
		RequestSelection rs;
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
		exclude = exclude_list(fcinfo, 2, &n_exclude);

		SPI_connect();
		prepare_plans();
		read_host(&host, host_id, cutoff, false);
		/* The draw only matters to assign_workload; explain reports odds. */
		select_for_host(&rs, &host, exclude, n_exclude, now, 0.0, true);

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
