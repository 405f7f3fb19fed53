/*
 * usage_cache.c: each backend's copy of allot.workload_usage (usage_cache.h).
 *
 * Protocol: the statement trigger allot_usage_signal_trigger on
 * allot.workload_usage sends the signal of allot.workload_usage_signal
 * (signal.h); our callbacks bump signals.  A copy is current while no signal came since it was read, and
 * the workload cache it was read for is the current one.  The count is
 * taken before the read's snapshot: a change that commits after the
 * snapshot (and so is missing from the copy) signals after the count was
 * taken, and the copy is stale at the next request.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "entry.h"
#include "signal.h"
#include "table_read.h"
#include "usage_cache.h"

static uint64 signals = 1;
static uint64 read_at_signals = 0;
static uint64 read_for_cache = 0;	/* WorkloadCache.generation */
static MemoryContext usage_context = NULL;
static UsageCache copy;

/*
 * The copy's arrays live as long as the workload cache they index: a read
 * for the same cache zeroes only the entries the last read set (a farm
 * where most requests switch reads the copy at nearly every request, and
 * clearing arrays of every workload and group each time cost more than
 * the rows).  copy_number tells the groups' stats of this read from those
 * of an earlier one.
 */
static double *threads_of = NULL;
static double *focus_of = NULL;
static int *set_list = NULL;	/* the entries the last read set */
static int	n_set = 0;		/* -1: more than the array holds */
static uint64 copy_number = 0;

/*
 * Rows told of one by one: a switch's write at the row signals its row's
 * workload only (signal.h's parts), and the copy reads those rows again by
 * key instead of the whole table.  part_keys holds the key of each entry's
 * signal, sorted, for the callback to find the entries it names; it is made
 * with the arrays, for the signal relation watched then (keys_relid).  A
 * signal for the whole table (a statement changed it), or more stale rows
 * than the list holds, has the whole table read.
 */
typedef struct PartKey
{
	uint32		key;
	int			index;			/* in the workload cache */
} PartKey;

#define MAX_STALE 64
static PartKey *part_keys = NULL;
static int	n_part_keys = 0;
static Oid	keys_relid = InvalidOid;
static bool *is_stale = NULL;	/* by the cache's index */
static int	n_entries = 0;		/* of is_stale */
static int	stale[MAX_STALE];
static int	n_stale = 0;		/* -1: more than stale holds */

/*
 * Each group's sums and least ratios, found when a request first needs them
 * (one that repeats needs only its candidates' groups), kept with the copy.
 * The least ratio with the requester's threads added to every member's
 * (allot.count_requester) depends on those threads: it is kept for a few
 * thread counts per group.
 */
#define MEMO_PER_GROUP 4
typedef struct GroupStats
{
	uint64		summed;			/* the copy_number the fields below are of */
	double		threads;		/* over the members */
	double		focus_threads;
	int			n;				/* least ratios kept, by extra threads */
	double		extra[MEMO_PER_GROUP];
	double		min_plain[MEMO_PER_GROUP];
	double		min_focus[MEMO_PER_GROUP];
} GroupStats;
static GroupStats *stats;

/* The signal's relation as last looked up; InvalidOid: none yet. */
static Oid	watched_relid = InvalidOid;
static bool callback_registered = false;

static bool relid_known = false;	/* watched_relid is the current one */
static uint32 watched_key = 0;	/* allot_signal_key(watched_relid) */

/*
 * The signal table's relcache invalidation: its DROP, or the signal of a
 * backend on a library before 0.8.1's (signal.h).
 */
static void
usage_signal_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == watched_relid)
	{
		signals++;
		relid_known = false;	/* dropped and made again, maybe */
	}
}

/* The signal (signal.h): of the whole table, or of the rows it names. */
static void
usage_key_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	int			lo = 0,
				hi = n_part_keys;

	if (hashvalue == 0 || hashvalue == watched_key)
	{
		signals++;
		return;
	}
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (part_keys[mid].key < hashvalue)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n_part_keys && part_keys[lo].key == hashvalue && n_stale >= 0; lo++)
	{
		int			i = part_keys[lo].index;

		if (is_stale[i])
			continue;
		if (n_stale == MAX_STALE)
			n_stale = -1;
		else
		{
			is_stale[i] = true;
			stale[n_stale++] = i;
		}
	}
}

/* No row is stale: the whole table is about to be read. */
static void
forget_stale(void)
{
	if (is_stale != NULL)
		for (int k = 0; k < n_stale; k++)
			is_stale[stale[k]] = false;
	if (n_stale < 0 && is_stale != NULL)
		memset(is_stale, 0, sizeof(bool) * n_entries);
	n_stale = 0;
}

static int
compare_part_keys(const void *a, const void *b)
{
	const PartKey *x = (const PartKey *) a;
	const PartKey *y = (const PartKey *) b;

	return x->key < y->key ? -1 : x->key > y->key ? 1 : x->index - y->index;
}

/* The key of each of the cache's workloads' rows, for relid's signals. */
static void
make_part_keys(const WorkloadCache *cache, Oid relid)
{
	n_part_keys = 0;			/* none while they are made */
	for (int i = 0; i < cache->n_workloads; i++)
	{
		part_keys[i].key = allot_signal_part_key(relid, cache->workloads[i].id);
		part_keys[i].index = i;
	}
	qsort(part_keys, cache->n_workloads, sizeof(PartKey), compare_part_keys);
	keys_relid = relid;
	n_part_keys = cache->n_workloads;
}

/*
 * The signal's relation, or InvalidOid before 0.6.0: looked up by name
 * after its relcache invalidation only (a lookup cost 1% of a repeat).  A schema without it
 * is looked up at every call, so that the update that adds it is seen.
 */
static Oid
signal_relid(void)
{
	if (relid_known)
		return watched_relid;
	return get_relname_relid("workload_usage_signal", get_namespace_oid("allot", false));
}

/* Where the usage rows go: the copy's arrays, by the cache's index. */
typedef struct CopySink
{
	const WorkloadCache *cache;
} CopySink;

/* Entry i of the copy, as its row says. */
static void
set_entry(const WorkloadCache *cache, int i, double threads, double focus_threads)
{
	/* One row a workload (the key); were there more, all is zeroed next. */
	if (threads_of[i] == 0 && focus_of[i] == 0 && (threads != 0 || focus_threads != 0))
	{
		if (n_set >= 0 && n_set < cache->n_workloads)
			set_list[n_set++] = i;
		else
			n_set = -1;
	}
	threads_of[i] = threads;
	focus_of[i] = focus_threads;
}

static void
copy_row(void *arg, int64 workload_id, double threads, double focus_threads)
{
	CopySink   *sink = (CopySink *) arg;
	int			i = allot_find_workload(sink->cache, workload_id);

	if (i >= 0)					/* not a job workload's, nor one not active */
		set_entry(sink->cache, i, threads, focus_threads);
}

/*
 * The least (threads + extra) / throughput, and (threads + focus_threads +
 * extra) / throughput, over group g's members.
 */
static void
group_mins(const WorkloadCache *cache, const double *threads, const double *focus, int g,
		   double extra, double *plain, double *with_focus)
{
	const AssignGroup *grp = &cache->groups[g];

	for (int k = 0; k < grp->n; k++)
	{
		int			i = cache->group_members[grp->first + k];
		double		tp = cache->workloads[i].throughput;
		double		p = (threads[i] + extra) / tp;
		double		f = (threads[i] + focus[i] + extra) / tp;

		if (k == 0 || p < *plain)
			*plain = p;
		if (k == 0 || f < *with_focus)
			*with_focus = f;
	}
}

/* Read every usage row into the copy; the groups' stats come on demand. */
static void
read_copy(const WorkloadCache *cache)
{
	uint64		at;
	Snapshot	snap;
	CopySink	sink;

	read_at_signals = 0;		/* stale until whole */
	if (usage_context == NULL)
		usage_context = AllocSetContextCreate(TopMemoryContext, "allot usage copy",
											  ALLOCSET_SMALL_SIZES);
	if (read_for_cache != cache->generation || threads_of == NULL)
	{
		int			n = cache->n_workloads;

		/* The callback finds no entries until they are made again. */
		n_part_keys = 0;
		n_stale = 0;
		MemoryContextReset(usage_context);
		threads_of = MemoryContextAllocZero(usage_context, sizeof(double) * (n + 1));
		focus_of = MemoryContextAllocZero(usage_context, sizeof(double) * (n + 1));
		set_list = MemoryContextAlloc(usage_context, sizeof(int) * (n + 1));
		stats = MemoryContextAllocZero(usage_context, sizeof(GroupStats) * (cache->n_groups + 1));
		part_keys = MemoryContextAlloc(usage_context, sizeof(PartKey) * (n + 1));
		is_stale = MemoryContextAllocZero(usage_context, sizeof(bool) * (n + 1));
		n_entries = n + 1;
		keys_relid = InvalidOid;
		n_set = 0;
		read_for_cache = cache->generation;
	}
	/*
	 * Signals that come while the keys are made are lost to the stale list:
	 * they are of changes this read's snapshot, taken after, sees.
	 */
	if (keys_relid != watched_relid)
		make_part_keys(cache, watched_relid);
	forget_stale();
	if (n_set < 0)
	{
		memset(threads_of, 0, sizeof(double) * (cache->n_workloads + 1));
		memset(focus_of, 0, sizeof(double) * (cache->n_workloads + 1));
	}
	for (int k = 0; k < n_set; k++)
		threads_of[set_list[k]] = focus_of[set_list[k]] = 0;
	n_set = 0;
	copy_number++;

	/* The count before the snapshot (see the top of this file). */
	at = signals;
	snap = allot_read_snapshot(true);
	sink.cache = cache;
	allot_visit_usage_rows(snap, copy_row, &sink);
	UnregisterSnapshot(snap);

	copy.threads = threads_of;
	copy.focus_threads = focus_of;

	/*
	 * A read under a transaction's snapshot (REPEATABLE READ and above) may
	 * miss what committed before its signal was counted: it serves this
	 * request only.
	 */
	if (!IsolationUsesXactSnapshot())
		read_at_signals = at;
}

/*
 * The stale rows read again by key, under a snapshot taken after they were
 * taken off the list, as read_copy's count (a change whose signal comes
 * after that may be missing, and is on the list at the next request).
 * Called while the copy is current but for them (read_at_signals ==
 * signals); until they are read it is not, so that an error on the way has
 * the next request read the whole table.
 */
static void
read_stale(const WorkloadCache *cache)
{
	int			list[MAX_STALE];
	int			n = n_stale;
	uint64		at = signals;
	AllotTable	t;
	AttrNumber	c_threads,
				c_focus;
	Snapshot	snap;

	read_at_signals = 0;
	memcpy(list, stale, sizeof(int) * n);
	forget_stale();
	snap = allot_read_snapshot(true);
	allot_table_open(&t, "workload_usage", "workload_usage_pkey", false);
	c_threads = allot_column(&t, "threads", INT8OID);
	c_focus = allot_column(&t, "focus_threads", INT8OID);
	for (int k = 0; k < n; k++)
	{
		int			i = list[k];

		if (allot_fetch_by_key(&t, cache->workloads[i].id, snap))
			set_entry(cache, i, (double) allot_slot_int8(&t, c_threads, 0),
					  (double) allot_slot_int8(&t, c_focus, 0));
		else
			set_entry(cache, i, 0, 0);
	}
	allot_table_close(&t);
	UnregisterSnapshot(snap);
	copy_number++;
	read_at_signals = at;
}

const UsageCache *
allot_usage_cache(const WorkloadCache *cache)
{
	Oid			relid = signal_relid();

	if (!OidIsValid(relid))
		return NULL;
	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(usage_signal_callback, (Datum) 0);
		allot_signal_listen(usage_key_callback);
		callback_registered = true;
	}
	/*
	 * Another relation than the one watched (the extension dropped and
	 * created again): what was read before is of no use, and signals of the
	 * new one may have come unwatched.
	 */
	if (relid != watched_relid)
	{
		watched_relid = relid;
		watched_key = allot_signal_key(relid);
		read_at_signals = 0;
	}
	relid_known = true;
	/* Signals committed before this call (the caller's locks took them in). */
	AcceptInvalidationMessages();
	if (read_at_signals != signals || read_for_cache != cache->generation || n_stale < 0)
		read_copy(cache);
	else if (n_stale > 0)
		read_stale(cache);
	return &copy;
}

/* Group g's stats in the current copy, its sums and plain least ratios. */
static GroupStats *
group_stats(const WorkloadCache *cache, int g)
{
	GroupStats *st = &stats[g];

	if (st->summed != copy_number)
	{
		const AssignGroup *grp = &cache->groups[g];

		st->threads = 0;
		st->focus_threads = 0;

		for (int k = 0; k < grp->n; k++)
		{
			int			i = cache->group_members[grp->first + k];

			st->threads += copy.threads[i];
			st->focus_threads += copy.focus_threads[i];
		}
		st->extra[0] = 0;
		group_mins(cache, copy.threads, copy.focus_threads, g, 0,
				   &st->min_plain[0], &st->min_focus[0]);
		st->n = 1;
		st->summed = copy_number;
	}
	return st;
}

double
allot_group_threads(const WorkloadCache *cache, int g, bool with_focus)
{
	GroupStats *st = group_stats(cache, g);

	return st->threads + (with_focus ? st->focus_threads : 0);
}

double
allot_group_min_ratio(const WorkloadCache *cache, int g, double extra, bool with_focus)
{
	GroupStats *st = group_stats(cache, g);
	double		plain,
				focus;

	for (int k = 0; k < st->n; k++)
		if (st->extra[k] == extra)
			return with_focus ? st->min_focus[k] : st->min_plain[k];
	group_mins(cache, copy.threads, copy.focus_threads, g, extra, &plain, &focus);
	if (st->n < MEMO_PER_GROUP)
	{
		st->extra[st->n] = extra;
		st->min_plain[st->n] = plain;
		st->min_focus[st->n] = focus;
		st->n++;
	}
	return with_focus ? focus : plain;
}

PG_FUNCTION_INFO_V1(allot_usage_signal_trigger);

/*
 * Statement trigger on allot.workload_usage: its change, when it commits,
 * makes every backend's copy stale.  From 0.7.0 also on the watch list's
 * tables, with the signal's table as its argument
 * (assignment_usage.c: what a backend knows of the list).
 */
Datum
allot_usage_signal_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("allot_usage_signal_trigger() must be called as a trigger")));
	allot_signal_readers(RelationGetNamespace(trigdata->tg_relation),
						 trigdata->tg_trigger->tgnargs > 0 ?
						 trigdata->tg_trigger->tgargs[0] : "workload_usage_signal");
	return PointerGetDatum(NULL);
}

