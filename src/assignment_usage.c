/*
 * assignment_usage.c: what the assignments of some workloads count for now,
 * read exactly, and the sweep of those that lapsed (seed 000 step 2).
 *
 * An assignment counts while its host was seen within allot.assignment_ttl.
 * allot.workload_usage sums the rows marked counted (usage.c's trigger);
 * an assignment whose host went quiet stays marked until a sweep unmarks
 * it, so a request subtracts the lapsed ones itself:
 *
 *   usage(W, cutoff) = workload_usage(W)
 *                    - counted assignments of W seen before cutoff
 *
 * No index on seen_at finds the second term: a host's every request moves
 * seen_at, and an index on it would make every such update a non-HOT one,
 * with index entries to insert and dead ones for every later scan to step
 * over.  Instead allot keeps a watch list:
 *
 *   allot.assignment_horizon  one row: a generation, and watched_below
 *   allot.assignment_watch    for the current generation, every assignment
 *                             that was counted and seen before
 *                             watched_below when the list was built
 *
 * A host seen since has a later seen_at in its row, so a watched entry is
 * only a suspect: the request checks it against the assignment.  While a
 * request's cutoff is at or below watched_below, the lapsed assignments are
 * exactly the watched ones still counted and seen before the cutoff: an
 * index range over the list, about as long as the hosts that went quiet
 * and were not swept yet.  When the cutoff passes it, the list is rebuilt
 * with one scan of allot.assignment, watched_below now set WATCH_AHEAD
 * past the cutoff, and a new generation number, so that no scan of the
 * list ever steps over the entries of an older one.  A rebuilder claims the
 * horizon row without waiting (SKIP LOCKED); a request that finds it
 * claimed, or that only reads (explain_assignment), counts the lapsed rows
 * with a scan of the assignments instead, as do schemas older than 0.5.0.
 * So that requests in a steady farm never find it short, a request that
 * finds the list with less than half of WATCH_AHEAD left renews it after
 * its own writes, without waiting (allot_tidy_assignments).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "entry.h"
#include "signal.h"
#include "table_read.h"
#include "workload_cache.h"

/*
 * How far past the cutoff a rebuilt list watches: the list holds the hosts
 * quiet for more than assignment_ttl minus this, and is rebuilt at most
 * this often, in the farm's time.
 */
static TimestampTz
watch_ahead(void)
{
	int64		secs = Min(Max(allot_assignment_ttl / 4, 1), 30);

	return (TimestampTz) secs * USECS_PER_SEC;
}

static SPIPlanPtr usage_only_plan = NULL;
static SPIPlanPtr lapsed_scan_plan = NULL;
static SPIPlanPtr scan_sweep_plan = NULL;
static SPIPlanPtr expire_one_plan = NULL;
static SPIPlanPtr claim_plan = NULL;
static SPIPlanPtr reaches_plan = NULL;
static SPIPlanPtr rebuild_plan = NULL;
static SPIPlanPtr sweep_plan = NULL;
static SPIPlanPtr lapsed_hosts_plan = NULL;
static SPIPlanPtr unwatch_generation_plan = NULL;
static SPIPlanPtr usage_lock_plan = NULL;
static SPIPlanPtr expire_many_plan = NULL;
static SPIPlanPtr unwatch_plan = NULL;

/*
 * Is there a watch list?  Not in a schema older than 0.5.0, which the same
 * library serves: there, an index on seen_at finds the lapsed rows.
 */
static bool
has_watch(void)
{
	return OidIsValid(get_relname_relid("assignment_horizon",
										get_namespace_oid("allot", false)));
}

/* Plans over what every schema has. */
static void
prepare_common_plans(void)
{
	Oid			time_only[1] = {TIMESTAMPTZOID};
	Oid			id_time[2] = {INT8OID, TIMESTAMPTZOID};

	if (usage_only_plan != NULL)
		return;
	/* Every row, for add_row to pick from (see read_usage_direct). */
	usage_only_plan = allot_prepare(
									"SELECT 0, u.workload_id, u.threads::float8, u.focus_threads::float8"
									"  FROM allot.workload_usage u",
									0, NULL);
	/* The lapsed rows the long way: a reader past the horizon, older schemas. */
	lapsed_scan_plan = allot_prepare(
									 "SELECT 1, workload_id,"
									 "       coalesce(sum(threads) FILTER (WHERE NOT focus), 0)::float8,"
									 "       coalesce(sum(threads) FILTER (WHERE focus), 0)::float8"
									 "  FROM allot.assignment"
									 " WHERE counted AND seen_at < $1"
									 " GROUP BY workload_id",
									 1, time_only);
	/* Sweeps go in workload id order, like every other writer of usage rows. */
	scan_sweep_plan = allot_prepare(
									"SELECT host_id FROM allot.assignment"
									" WHERE counted AND seen_at < $1"
									" ORDER BY workload_id, host_id LIMIT 1000"
									"   FOR UPDATE SKIP LOCKED",
									1, time_only);
	expire_one_plan = allot_prepare(
									"UPDATE allot.assignment SET counted = false"
									" WHERE host_id = $1 AND counted AND seen_at < $2",
									2, id_time);
}

/* Plans over the watch list (0.5.0 and later). */
static void
prepare_watch_plans(void)
{
	Oid			ids_time[2] = {INT8ARRAYOID, TIMESTAMPTZOID};
	Oid			time_only[1] = {TIMESTAMPTZOID};

	if (reaches_plan != NULL)
		return;

	reaches_plan = allot_prepare(
								 "SELECT FROM allot.assignment_horizon WHERE watched_below >= $1",
								 1, time_only);

	/*
	 * Rebuilding the list is claimed by locking the horizon row, without
	 * waiting: a request does not wait for another's transaction to end.
	 */
	claim_plan = allot_prepare(
							   "SELECT FROM allot.assignment_horizon"
							   " WHERE watched_below < $1 FOR UPDATE SKIP LOCKED",
							   1, time_only);
	/* Rebuild the list, watching below $1. */
	rebuild_plan = allot_prepare(
								 "WITH h AS ("
								 "  UPDATE allot.assignment_horizon"
								 "     SET generation = generation + 1, watched_below = $1"
								 "  RETURNING generation),"
								 " old AS ("
								 "  DELETE FROM allot.assignment_watch w USING h"
								 "   WHERE w.generation < h.generation)"
								 "INSERT INTO allot.assignment_watch (generation, host_id, seen_at)"
								 "SELECT h.generation, a.host_id, a.seen_at"
								 "  FROM h, allot.assignment a"
								 " WHERE a.counted AND a.seen_at < $1",
								 1, time_only);

	/*
	 * A request's own sweep (sweep_lapsed): the lapsed assignments of the
	 * hosts it found in the watch list, and then their workloads' usage rows,
	 * both taken only if nobody holds them; the assignments of the usage rows
	 * it got are no longer counted, and their entries in the list's
	 * generation leave it one by one (again skipping any a rebuild is
	 * deleting).  Everything through keys: a query that joined the horizon
	 * row was planned (generically) for a list as large as its table, which
	 * the churn of rebuilds keeps many times larger than the list, and
	 * scanned all of it at every sweep.  The sweep gives up rather than
	 * wait, so no order is needed.
	 */
	{
		Oid			ids_only[1] = {INT8ARRAYOID};

		lapsed_hosts_plan = allot_prepare(
										  "SELECT host_id, workload_id FROM allot.assignment"
										  " WHERE host_id = ANY ($1) AND counted AND seen_at < $2"
										  " FOR UPDATE SKIP LOCKED",
										  2, ids_time);
		{
			Oid			id_generation[2] = {INT8OID, INT8OID};

			unwatch_generation_plan = allot_prepare(
													"DELETE FROM allot.assignment_watch w"
													" USING (SELECT x.generation, x.host_id"
													"          FROM allot.assignment_watch x"
													"         WHERE x.generation = $2 AND x.host_id = $1"
													"           FOR UPDATE SKIP LOCKED) d"
													" WHERE w.generation = d.generation AND w.host_id = d.host_id",
													2, id_generation);
		}
		usage_lock_plan = allot_prepare(
										"SELECT workload_id FROM allot.workload_usage"
										" WHERE workload_id = ANY ($1)"
										" ORDER BY workload_id FOR UPDATE SKIP LOCKED",
										1, ids_only);
		expire_many_plan = allot_prepare(
										 "UPDATE allot.assignment SET counted = false"
										 " WHERE host_id = ANY ($1) AND counted AND seen_at < $2",
										 2, ids_time);
		unwatch_plan = allot_prepare(
									 "DELETE FROM allot.assignment_watch w"
									 " USING (SELECT x.generation, x.host_id"
									 "          FROM allot.assignment_horizon h"
									 "          JOIN allot.assignment_watch x"
									 "            ON x.generation = h.generation AND x.host_id = ANY ($1)"
									 "           FOR UPDATE OF x SKIP LOCKED) d"
									 " WHERE w.generation = d.generation AND w.host_id = d.host_id",
									 1, ids_only);
	}

	sweep_plan = allot_prepare(
							   "SELECT a.host_id"
							   "  FROM allot.assignment_horizon h"
							   "  JOIN allot.assignment_watch w"
							   "    ON w.generation = h.generation AND w.seen_at < $1"
							   "  JOIN allot.assignment a"
							   "    ON a.host_id = w.host_id AND a.counted AND a.seen_at < $1"
							   " ORDER BY a.workload_id, a.host_id LIMIT 1000"
							   "   FOR UPDATE OF a SKIP LOCKED",
							   1, time_only);
}

/*
 * Rebuild the watch list for this cutoff, watching WATCH_AHEAD past it,
 * unless the list reaches `due` already or another transaction is
 * rebuilding it now; returns whether this one did (and then sees the new
 * list).
 */
static bool
rebuild_watch(TimestampTz cutoff, TimestampTz due)
{
	Datum		args[2] = {TimestampTzGetDatum(due),
	TimestampTzGetDatum(cutoff + watch_ahead())};

	if (SPI_execute_plan(claim_plan, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.assignment_horizon");
	if (SPI_processed == 0)
		return false;
	if (SPI_execute_plan(rebuild_plan, &args[1], NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not rebuild allot.assignment_watch");
	return true;
}

/* Does the watch list, as this transaction sees it, reach this cutoff? */
static bool
watch_reaches(TimestampTz cutoff)
{
	Datum		args[1] = {TimestampTzGetDatum(cutoff)};

	if (SPI_execute_plan(reaches_plan, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.assignment_horizon");
	return SPI_processed == 1;
}

/*
 * Where the rows of a usage read through SPI go: threads[] and
 * focus_threads[] of the workloads ids[0..n) (kind 0 adds, kind 1
 * subtracts), and whether a candidate had lapsed rows.
 */
typedef struct UsageSink
{
	const int64 *ids;
	int			n;
	double	   *threads;
	double	   *focus_threads;
	bool	   *lapsed;
	LapsedUsage *found;			/* the lapsed hosts, for the sweep; or NULL */
} UsageSink;

/* One row: (kind, workload_id, threads, focus_threads). */
static void
add_row(void *arg, const Datum *v, const bool *isnull)
{
	UsageSink  *sink = (UsageSink *) arg;
	int			kind = DatumGetInt32(v[0]);
	int64		want;
	const int64 *hit;
	int			sign = kind == 0 ? 1 : -1;

	want = DatumGetInt64(v[1]);
	hit = bsearch(&want, sink->ids, sink->n, sizeof(int64), allot_compare_int64);
	if (hit == NULL)
		return;
	if (kind == 1)
		*sink->lapsed = true;
	sink->threads[hit - sink->ids] += sign * DatumGetFloat8(v[2]);
	sink->focus_threads[hit - sink->ids] += sign * DatumGetFloat8(v[3]);
}

static void
read_rows(SPIPlanPtr plan, Datum *args, bool fresh, const int64 *ids, int n,
		  double *threads, double *focus_threads, bool *lapsed)
{
	UsageSink	sink;

	sink.ids = ids;
	sink.n = n;
	sink.threads = threads;
	sink.focus_threads = focus_threads;
	sink.lapsed = lapsed;
	sink.found = NULL;			/* rows per workload: no hosts to sweep */
	allot_execute_rows(plan, args, !fresh, add_row, &sink, "allot.workload_usage");
}

/* One lapsed assignment: its host, workload, threads, and whether focus-assigned. */
typedef void (*LapsedFn) (void *arg, int64 host_id, int64 workload_id, double threads,
						  bool focus);

/*
 * The horizon's one row, under snap: the list's generation and
 * watched_below (DT_NOBEGIN: no row).
 */
static void
read_horizon(Snapshot snap, int64 *generation, TimestampTz *horizon)
{
	AllotTable	t;
	TableScanDesc scan;

	*generation = 0;
	*horizon = DT_NOBEGIN;
	allot_table_open(&t, "assignment_horizon", NULL, false);
	scan = table_beginscan(t.rel, snap, 0, NULL);
	if (table_scan_getnextslot(scan, ForwardScanDirection, t.slot))
	{
		*generation = allot_slot_int8(&t, allot_column(&t, "generation", INT8OID), 0);
		*horizon = allot_slot_timestamptz(&t, allot_column(&t, "watched_below", TIMESTAMPTZOID),
										  DT_NOBEGIN);
	}
	table_endscan(scan);
	allot_table_close(&t);
}

/*
 * The watched entries of this generation seen before the cutoff, each
 * checked against its assignment under snap: fn gets the ones still
 * counted and seen before the cutoff.  An index range over the list, about
 * as long as the hosts that went quiet and were not swept yet, with a
 * primary-key probe of each entry's assignment.  *first, if asked for, is
 * the earliest time a counted assignment of the list may lapse at: the
 * seen_at of each visited entry's counted assignment, and the listed seen_at
 * of the first entry not visited (its assignment's is no earlier: a seen_at
 * that moves back, or an assignment counted again, adds to the list, which
 * signals).  DT_NOEND: none.  No cutoff up to it has anything to visit.
 * Entries of hosts that asked again since they were listed, or whose
 * assignment is gone or no longer counts, stay in the list until the next
 * rebuild or sweep; counted at their listed seen_at, they would send every
 * request back to the list while one of them is older than its cutoff.
 */
static void
visit_lapsed(Snapshot snap, int64 generation, TimestampTz cutoff, LapsedFn fn, void *arg,
			 TimestampTz *first)
{
	AllotTable	w,
				a;
	Relation	seen_idx = allot_index_open("assignment_watch_seen_idx");
	ScanKeyData keys[1];
	IndexScanDesc iscan;
	AttrNumber	w_host,
				w_seen,
				a_workload,
				a_threads,
				a_focus,
				a_counted,
				a_seen;

	allot_table_open(&w, "assignment_watch", NULL, false);
	allot_table_open(&a, "assignment", "assignment_pkey", false);
	w_host = allot_column(&w, "host_id", INT8OID);
	w_seen = allot_column(&w, "seen_at", TIMESTAMPTZOID);
	a_workload = allot_column(&a, "workload_id", INT8OID);
	a_threads = allot_column(&a, "threads", INT4OID);
	a_focus = allot_column(&a, "focus", BOOLOID);
	a_counted = allot_column(&a, "counted", BOOLOID);
	a_seen = allot_column(&a, "seen_at", TIMESTAMPTZOID);
	if (first != NULL)
		*first = DT_NOEND;

	/*
	 * assignment_watch_seen_idx is (generation, seen_at): the generation's
	 * entries come earliest first, and the scan stops at the first that is
	 * not before the cutoff.
	 */
	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(generation));
	iscan = index_beginscan(w.rel, seen_idx, snap, 1, 0);
	index_rescan(iscan, keys, 1, NULL, 0);
	while (index_getnext_slot(iscan, ForwardScanDirection, w.slot))
	{
		TimestampTz listed = allot_slot_timestamptz(&w, w_seen, DT_NOEND);
		TimestampTz seen;

		if (listed >= cutoff)
		{
			if (first != NULL && listed < *first)
				*first = listed;
			break;
		}
		if (!allot_fetch_by_key(&a, allot_slot_int8(&w, w_host, 0), snap) ||
			!allot_slot_bool(&a, a_counted, false))
			continue;			/* gone or swept */
		seen = allot_slot_timestamptz(&a, a_seen, DT_NOEND);
		if (first != NULL && seen < *first)
			*first = seen;
		if (seen >= cutoff)
			continue;			/* seen since it was listed */
		fn(arg, allot_slot_int8(&w, w_host, 0), allot_slot_int8(&a, a_workload, 0),
		   (double) allot_slot_int4(&a, a_threads, 0), allot_slot_bool(&a, a_focus, false));
		CHECK_FOR_INTERRUPTS();
	}
	index_endscan(iscan);
	index_close(seen_idx, NoLock);
	allot_table_close(&a);
	allot_table_close(&w);
}

/* A lapsed assignment's host, for the sweep after the request (0: none). */
static void
note_lapsed_host(LapsedUsage *found, int64 host_id)
{
	if (found != NULL && host_id != 0 && found->n_hosts < ALLOT_SWEEP_PER_REQUEST)
		found->hosts[found->n_hosts++] = host_id;
}

/* A lapsed assignment subtracted from the candidates' sums (UsageSink). */
static void
subtract_lapsed(void *arg, int64 host_id, int64 workload_id, double threads, bool focus)
{
	UsageSink  *sink = (UsageSink *) arg;
	const int64 *hit = bsearch(&workload_id, sink->ids, sink->n, sizeof(int64),
							   allot_compare_int64);

	if (hit == NULL)
		return;
	*sink->lapsed = true;
	note_lapsed_host(sink->found, host_id);
	if (focus)
		sink->focus_threads[hit - sink->ids] -= threads;
	else
		sink->threads[hit - sink->ids] -= threads;
}

/*
 * Where column att of a row without NULLs always starts, when every column
 * up to it is fixed-width and not dropped (as workload_usage's bigints are);
 * -1 otherwise.
 */
static int
fixed_offset(TupleDesc desc, AttrNumber att)
{
	int			off = 0;

	for (int i = 0; i < att; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (a->attisdropped || a->attlen <= 0)
			return -1;
		off = att_align_nominal(off, a->attalign);
		if (i == att - 1)
			return a->attlen == sizeof(int64) && a->attbyval ? off : -1;
		off += a->attlen;
	}
	return -1;
}

/*
 * Every row of allot.workload_usage under snap, without the executor:
 * fn(arg, workload_id, threads, focus_threads).
 */
void
allot_visit_usage_rows(Snapshot snap, UsageRowFn fn, void *arg)
{
	AllotTable	t;
	AttrNumber	c_workload,
				c_threads,
				c_focus;

	allot_table_open(&t, "workload_usage", NULL, false);
	c_workload = allot_column(&t, "workload_id", INT8OID);
	c_threads = allot_column(&t, "threads", INT8OID);
	c_focus = allot_column(&t, "focus_threads", INT8OID);
	if (IsolationIsSerializable() || t.rel->rd_tableam != GetHeapamTableAmRoutine())
	{
		/* The table AM's scan, which also takes SSI's predicate locks. */
		TableScanDesc scan = table_beginscan(t.rel, snap, 0, NULL);

		while (table_scan_getnextslot(scan, ForwardScanDirection, t.slot))
			fn(arg, allot_slot_int8(&t, c_workload, 0), (double) allot_slot_int8(&t, c_threads, 0),
			   (double) allot_slot_int8(&t, c_focus, 0));
		table_endscan(scan);
	}
	else
	{
		/*
		 * Page by page, as the heap's own scan reads a page (pruned first,
		 * then every row's visibility judged under one share lock), each
		 * visible row's three columns taken from the page itself: no slot,
		 * no pin per row.  A backend reads the whole table whenever another
		 * one changed it, which on a farm where most requests switch is
		 * every request.
		 */
		TupleDesc	desc = RelationGetDescr(t.rel);
		BlockNumber nblocks = RelationGetNumberOfBlocks(t.rel);
		HeapTupleData tuple;
		int			off_workload = fixed_offset(desc, c_workload);
		int			off_threads = fixed_offset(desc, c_threads);
		int			off_focus = fixed_offset(desc, c_focus);
		bool		fixed = off_workload >= 0 && off_threads >= 0 && off_focus >= 0;

		tuple.t_tableOid = RelationGetRelid(t.rel);
		for (BlockNumber b = 0; b < nblocks; b++)
		{
			Buffer		buf = ReadBuffer(t.rel, b);
			Page		page;
			OffsetNumber last;

			heap_page_prune_opt(t.rel, buf);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			last = PageGetMaxOffsetNumber(page);
			for (OffsetNumber off = FirstOffsetNumber; off <= last; off++)
			{
				ItemId		lp = PageGetItemId(page, off);
				bool		n1,
							n2,
							n3;
				Datum		w,
							th,
							ft;

				if (!ItemIdIsNormal(lp))
					continue;
				tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
				tuple.t_len = ItemIdGetLength(lp);
				ItemPointerSet(&tuple.t_self, b, off);
				if (!HeapTupleSatisfiesVisibility(&tuple, snap, buf))
					continue;
				if (fixed && !HeapTupleHasNulls(&tuple))
				{
					/* Three bigints at offsets the descriptor knows. */
					const char *data = (const char *) tuple.t_data + tuple.t_data->t_hoff;

					fn(arg, *(const int64 *) (data + off_workload),
					   (double) *(const int64 *) (data + off_threads),
					   (double) *(const int64 *) (data + off_focus));
					continue;
				}
				w = heap_getattr(&tuple, c_workload, desc, &n1);
				th = heap_getattr(&tuple, c_threads, desc, &n2);
				ft = heap_getattr(&tuple, c_focus, desc, &n3);
				fn(arg, n1 ? 0 : DatumGetInt64(w), n2 ? 0 : (double) DatumGetInt64(th),
				   n3 ? 0 : (double) DatumGetInt64(ft));
			}
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			ReleaseBuffer(buf);
			CHECK_FOR_INTERRUPTS();
		}
	}
	allot_table_close(&t);
}

/* A usage row added to the candidates' sums (UsageSink). */
static void
add_usage_row(void *arg, int64 workload_id, double threads, double focus_threads)
{
	UsageSink  *sink = (UsageSink *) arg;
	const int64 *hit = bsearch(&workload_id, sink->ids, sink->n, sizeof(int64),
							   allot_compare_int64);

	if (hit == NULL)
		return;
	sink->threads[hit - sink->ids] += threads;
	sink->focus_threads[hit - sink->ids] += focus_threads;
}

/*
 * The usage of the workloads ids[0..n) (sorted) under one snapshot, read
 * without the executor (table_read.c): their usage rows added, and the
 * lapsed assignments among the watched ones subtracted.  Sets *horizon to
 * the list's watched_below (DT_NOBEGIN: no horizon row), and reads the list
 * only if it reaches the cutoff; otherwise the caller rebuilds it.
 *
 * A request's cost is a scan of allot.workload_usage, one row of the
 * horizon, and the lapsed assignments not swept yet (visit_lapsed).  Every
 * usage row is read and the candidates' kept (a binary search each).
 * Filtering in SQL with "workload_id = ANY ($1)" cost more: with the array
 * a parameter of a generic plan, PostgreSQL tests it element by element,
 * U x C / 2 comparisons for U usage rows and C candidates (550 us of a
 * request at 2,000 workloads, against 70 us for reading all 436 rows).  As
 * one SQL statement, this read was 40% of a repeat assignment's time, a
 * third of that executor start-up.  (assign_workload itself reads the rows
 * from its backend's copy, usage_cache.c, from 0.6.0.)
 */
static void
read_usage_direct(const int64 *ids, int n, TimestampTz cutoff, bool fresh,
				  double *threads, double *focus_threads, TimestampTz *horizon,
				  bool *lapsed, LapsedUsage *found)
{
	Snapshot	snap = allot_read_snapshot(fresh);
	int64		generation;
	UsageSink	sink = {ids, n, threads, focus_threads, lapsed, found};

	/* Every usage row; the candidates' are kept (see above). */
	allot_visit_usage_rows(snap, add_usage_row, &sink);
	read_horizon(snap, &generation, horizon);
	if (found != NULL)
	{
		found->n_hosts = 0;
		found->generation = generation;
	}
	if (cutoff <= *horizon)
		visit_lapsed(snap, generation, cutoff, subtract_lapsed, &sink, NULL);
	UnregisterSnapshot(snap);
}

/* Lapsed assignments gathered as deltas of the workload cache's rows. */
typedef struct LapsedSink
{
	const WorkloadCache *cache;
	LapsedUsage *out;
	int			room;
} LapsedSink;

static void
gather_lapsed(void *arg, int64 host_id, int64 workload_id, double threads, bool focus)
{
	LapsedSink *sink = (LapsedSink *) arg;
	LapsedUsage *out = sink->out;
	int			i = allot_find_workload(sink->cache, workload_id);

	if (i < 0)
		return;					/* not an active assignment workload */
	out->any = true;
	note_lapsed_host(out, host_id);
	if (out->n == sink->room)
	{
		sink->room *= 2;
		out->deltas = repalloc(out->deltas, sizeof(UsageDelta) * sink->room);
	}
	out->deltas[out->n].workload = i;
	out->deltas[out->n].threads = focus ? 0 : threads;
	out->deltas[out->n].focus_threads = focus ? threads : 0;
	out->n++;
}

/* A row of lapsed_scan_plan: (1, workload_id, threads, focus_threads). */
static void
gather_lapsed_row(void *arg, const Datum *v, const bool *isnull)
{
	double		threads = DatumGetFloat8(v[2]);
	double		focus = DatumGetFloat8(v[3]);

	/* Per workload, not per host: nothing for a sweep to take. */
	if (threads != 0)
		gather_lapsed(arg, 0, DatumGetInt64(v[1]), threads, false);
	if (focus != 0)
		gather_lapsed(arg, 0, DatumGetInt64(v[1]), focus, true);
}

/*
 * What the backend knows of the watch list (0.7.0 on): its generation, how
 * far it reaches, and the earliest seen_at it lists, as read under a
 * snapshot taken after `read_at` signals.  Entries leave the list (sweeps)
 * without a signal, which only makes the earliest one later; every change
 * that adds or lowers one, or moves the horizon, is a statement on
 * allot.assignment_watch or allot.assignment_horizon, whose statement
 * triggers send the signal of the empty table allot.assignment_watch_signal
 * (signal.h), as workload_usage_signal does for the usage copy
 * (usage_cache.c): PostgreSQL delivers it to every backend when the change
 * commits, before the change's locks are let go.  While nothing
 * was signalled since, a cutoff up to both the horizon and the earliest
 * entry has nothing lapsed to find: such a request reads neither table.
 */
static uint64 watch_signals = 1;
static Oid	watch_signal_relid = InvalidOid;	/* InvalidOid: look it up */
static bool watch_callback_registered = false;
static uint32 watch_signal_key = 0;	/* allot_signal_key(watch_signal_relid) */

static struct
{
	uint64		read_at;		/* 0: nothing known */
	int64		generation;
	TimestampTz horizon;
	TimestampTz first;
} watch_known;

/* As the usage copy's callbacks (usage_cache.c). */
static void
watch_signal_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == watch_signal_relid)
	{
		watch_signals++;
		watch_signal_relid = InvalidOid;	/* dropped and made again, maybe */
	}
}

static void
watch_key_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	if (hashvalue == 0 || hashvalue == watch_signal_key)
		watch_signals++;
}

/* Is the watch list signalled (0.7.0 on)?  Looked up again after a signal. */
static bool
watch_signalled(void)
{
	if (!watch_callback_registered)
	{
		CacheRegisterRelcacheCallback(watch_signal_callback, (Datum) 0);
		allot_signal_listen(watch_key_callback);
		watch_callback_registered = true;
	}
	if (!OidIsValid(watch_signal_relid))
	{
		watch_signal_relid = get_relname_relid("assignment_watch_signal",
											   get_namespace_oid("allot", false));
		if (OidIsValid(watch_signal_relid))
			watch_signal_key = allot_signal_key(watch_signal_relid);
		watch_known.read_at = 0;
	}
	return OidIsValid(watch_signal_relid);
}

/*
 * The counted assignments of the cache's workloads that lapsed at this
 * cutoff and were not swept yet, as deltas to subtract from the usage rows
 * (usage_cache.c holds those), for assign_workload: from the watch list,
 * read with a fresh snapshot and without the executor, so that a repeat runs
 * no statement; or from what the backend knows of it, without reading it.
 * Returns what allot_assignment_usage returns, for allot_tidy_assignments;
 * or -1, having read nothing, on a schema without a watch list or when the
 * list does not reach the cutoff: the caller then opens SQL and calls
 * allot_lapsed_usage.  The caller holds allot.assignment's write lock,
 * whose taking brought in the signals committed before it.
 */
int
allot_lapsed_from_watch(const WorkloadCache *cache, TimestampTz cutoff, LapsedUsage *out)
{
	LapsedSink	sink = {cache, out, 16};
	Snapshot	snap;
	int64		generation;
	TimestampTz horizon;
	TimestampTz first;
	uint64		at;
	bool		signalled = watch_signalled();

	out->n = 0;
	out->any = false;
	out->n_hosts = 0;
	out->deltas = palloc(sizeof(UsageDelta) * sink.room);
	if (signalled && watch_known.read_at == watch_signals &&
		cutoff <= watch_known.horizon && cutoff <= watch_known.first)
		return watch_known.horizon - cutoff < watch_ahead() / 2 ? USAGE_WATCH_DUE : 0;
	if (!signalled && !has_watch())
		return -1;

	/* The count before the snapshot, as the usage copy takes it. */
	at = watch_signals;
	snap = allot_read_snapshot(true);
	read_horizon(snap, &generation, &horizon);
	if (cutoff > horizon)
	{
		UnregisterSnapshot(snap);
		return -1;
	}
	out->generation = generation;
	visit_lapsed(snap, generation, cutoff, gather_lapsed, &sink, &first);
	UnregisterSnapshot(snap);
	if (signalled && !IsolationUsesXactSnapshot())
	{
		watch_known.read_at = at;
		watch_known.generation = generation;
		watch_known.horizon = horizon;
		watch_known.first = first;
	}
	return (out->any ? USAGE_LAPSED : 0) |
		(horizon - cutoff < watch_ahead() / 2 ? USAGE_WATCH_DUE : 0);
}

/*
 * The same, where the watch list may fall short: rebuilt first when the
 * cutoff has passed it and nobody else is rebuilding it; else the lapsed
 * rows come from a scan of the assignments.  The caller is connected to
 * SPI.
 */
int
allot_lapsed_usage(const WorkloadCache *cache, TimestampTz cutoff, LapsedUsage *out)
{
	LapsedSink	sink = {cache, out, 16};
	Datum		args[1] = {TimestampTzGetDatum(cutoff)};
	int			found;

	prepare_common_plans();
	if (has_watch())
	{
		for (int attempt = 0; attempt < 2; attempt++)
		{
			if ((found = allot_lapsed_from_watch(cache, cutoff, out)) >= 0)
				return found;
			prepare_watch_plans();
			if (attempt > 0 || !rebuild_watch(cutoff, cutoff))
				break;
		}
	}
	/* No list that reaches the cutoff: scan (nothing for the caller to sweep). */
	out->n = 0;
	out->any = false;
	out->n_hosts = 0;
	out->deltas = palloc(sizeof(UsageDelta) * sink.room);
	allot_execute_rows(lapsed_scan_plan, args, false, gather_lapsed_row, &sink,
					   "allot.assignment");
	out->any = false;
	return 0;
}

/*
 * The counted threads and focus threads of the workloads ids[0..n) (sorted)
 * at this cutoff, into threads[] and focus_threads[] (zeroed by the caller).
 * A writer, which is about to write anyway, rebuilds the watch list when the
 * cutoff has passed it; a reader scans instead.  Returns what the caller
 * should see to after its writes (allot_tidy_assignments): USAGE_LAPSED if
 * some of these workloads' counted assignments had lapsed, USAGE_WATCH_DUE
 * if a writer found the list with less than half its lead left; either only
 * when it read a watch list that reaches the cutoff; and then in *found
 * (unless NULL) the hosts of the first lapsed ones, for the sweep.  The
 * caller is connected to SPI; a writer reads with a fresh snapshot.
 */
int
allot_assignment_usage(const int64 *ids, int n, TimestampTz cutoff, bool writer,
					   double *threads, double *focus_threads, LapsedUsage *found)
{
	Datum		args[1] = {TimestampTzGetDatum(cutoff)};
	TimestampTz horizon;
	bool		lapsed = false;

	if (found != NULL)
		found->n_hosts = 0;
	if (n == 0)
		return 0;

	prepare_common_plans();
	if (has_watch())
	{
		prepare_watch_plans();
		read_usage_direct(ids, n, cutoff, writer, threads, focus_threads, &horizon, &lapsed,
						  found);
		if (cutoff <= horizon)
			return (lapsed ? USAGE_LAPSED : 0) |
				(writer && horizon - cutoff < watch_ahead() / 2 ? USAGE_WATCH_DUE : 0);
		/* The list does not reach this cutoff: start again without it. */
		memset(threads, 0, sizeof(double) * n);
		memset(focus_threads, 0, sizeof(double) * n);
		lapsed = false;
		if (found != NULL)
			found->n_hosts = 0;
		if (writer && rebuild_watch(cutoff, cutoff))
		{
			read_usage_direct(ids, n, cutoff, true, threads, focus_threads, &horizon, &lapsed,
							  found);
			return lapsed ? USAGE_LAPSED : 0;
		}
	}
	read_rows(usage_only_plan, args, writer, ids, n, threads, focus_threads, &lapsed);
	read_rows(lapsed_scan_plan, args, writer, ids, n, threads, focus_threads, &lapsed);

	/*
	 * Nothing for the caller to sweep: a request's sweep takes lapsed rows
	 * from a list that reaches its cutoff, and here there is none (an older
	 * schema, or a list another transaction is rebuilding).
	 */
	return 0;
}

/* Drop the entries of these hosts from the current list, skipping any that
 * a rebuild holds (it is deleting the whole generation anyway). */
static void
unwatch(Datum host_ids)
{
	if (SPI_execute_plan(unwatch_plan, &host_ids, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not update allot.assignment_watch");
}

/*
 * The sweep itself: the lapsed assignments of the hosts the request found in
 * the watch list, taken SKIP LOCKED; their workloads' usage rows, SKIP
 * LOCKED; those whose usage row this transaction holds stop counting and
 * leave the list.  Returns how many.
 */
static int64
sweep_lapsed(TimestampTz cutoff, const LapsedUsage *found)
{
	Datum		args[2];
	int64	   *hosts;
	int64	   *workloads;
	Datum	   *d;
	int			n;
	int			ne = 0;

	if (found == NULL || found->n_hosts == 0)
		return 0;
	d = palloc(sizeof(Datum) * found->n_hosts);
	for (int i = 0; i < found->n_hosts; i++)
		d[i] = Int64GetDatum(found->hosts[i]);
	args[0] = PointerGetDatum(construct_array(d, found->n_hosts, INT8OID, 8,
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[1] = TimestampTzGetDatum(cutoff);
	if (SPI_execute_plan(lapsed_hosts_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read lapsed assignments");
	n = (int) SPI_processed;
	if (n == 0)
		return 0;

	/* (host, workload) pairs; their workloads (= ANY takes repeats). */
	hosts = palloc(sizeof(int64) * n);
	workloads = palloc(sizeof(int64) * n);
	d = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;

		hosts[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		workloads[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));
		d[i] = Int64GetDatum(workloads[i]);
	}
	SPI_freetuptable(SPI_tuptable);

	args[0] = PointerGetDatum(construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	if (SPI_execute_plan(usage_lock_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock allot.workload_usage");

	/* The hosts whose workload's usage row this transaction holds now. */
	for (int i = 0; i < n; i++)
	{
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			bool		isnull;

			if (DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1,
											&isnull)) == workloads[i])
			{
				d[ne++] = Int64GetDatum(hosts[i]);
				break;
			}
		}
	}
	if (ne == 0)
		return 0;
	args[0] = PointerGetDatum(construct_array(d, ne, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[1] = TimestampTzGetDatum(cutoff);
	if (SPI_execute_plan(expire_many_plan, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not expire assignments");
	n = (int) SPI_processed;
	args[1] = Int64GetDatum(found->generation);
	for (int i = 0; i < ne; i++)
	{
		args[0] = d[i];
		if (SPI_execute_plan(unwatch_generation_plan, args, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not update allot.assignment_watch");
	}
	return n;
}

/*
 * Run fn(arg) after the request's own writes without ever waiting for a
 * lock: the rows it takes are out of the lock order (entry.h), held by
 * transactions whose own writes hold others.  SKIP LOCKED is not quite
 * enough, since locking a row that a committed transaction updated can
 * still wait for a transaction that holds a lock on a newer version of it
 * (bench/assign.sh at 1,000 hosts and 32 clients found such deadlocks).  So
 * it runs in a subtransaction with a lock_timeout of NO_WAIT_LOCK_TIMEOUT:
 * if it would wait, it gives up, its locks go, and the request commits
 * without it.  Returns whether it ran to the end.
 */
#define NO_WAIT_LOCK_TIMEOUT "1ms"

static bool
without_waiting(void (*fn) (void *arg), void *arg)
{
	MemoryContext caller_context = CurrentMemoryContext;
	ResourceOwner caller_owner = CurrentResourceOwner;
	volatile bool done = true;
	int			guc_level;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller_context);
	guc_level = NewGUCNestLevel();
	(void) set_config_option("lock_timeout", NO_WAIT_LOCK_TIMEOUT, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	PG_TRY();
	{
		fn(arg);
		AtEOXact_GUC(true, guc_level);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller_context);
		CurrentResourceOwner = caller_owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(caller_context);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE)
			PG_RE_THROW();
		FlushErrorState();
		FreeErrorData(edata);
		/* The subtransaction's abort also restores lock_timeout. */
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller_context);
		CurrentResourceOwner = caller_owner;
		done = false;
	}
	PG_END_TRY();
	return done;
}

typedef struct TidyArgs
{
	TimestampTz cutoff;
	const LapsedUsage *lapsed;
	int64		expired;
} TidyArgs;

static void
sweep_step(void *arg)
{
	TidyArgs   *a = (TidyArgs *) arg;

	a->expired = sweep_lapsed(a->cutoff, a->lapsed);
}

static void
renew_step(void *arg)
{
	TidyArgs   *a = (TidyArgs *) arg;

	(void) rebuild_watch(a->cutoff, a->cutoff + watch_ahead() / 2);
}

/* A turn (the sweeper's, the renewer's), to the end of the transaction, if nobody has it. */
static bool
take_turn(uint16 space)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, 0, space);
	return LockAcquire(&tag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL;
}

/*
 * Is the watch list still due for renewal at this cutoff, as the latest
 * snapshot sees it?  A request learnt that it was when it read the list;
 * another may have renewed it since.
 */
static bool
watch_still_due(TimestampTz cutoff)
{
	Snapshot	snap = allot_read_snapshot(true);
	int64		generation;
	TimestampTz horizon;

	read_horizon(snap, &generation, &horizon);
	UnregisterSnapshot(snap);
	return horizon - cutoff < watch_ahead() / 2;
}

/*
 * What a request does after its own writes about what its usage read found
 * (allot_assignment_usage's flags, and in `lapsed` the hosts, when it read
 * them from the watch list), neither ever waiting:
 *
 *   USAGE_LAPSED     it stops counting up to ALLOT_SWEEP_PER_REQUEST of the
 *                    lapsed assignments (those hosts', looked up by key),
 *                    as the transitioner's sweep would within
 *                    a minute, so that the requests after it need not each
 *                    subtract them again, unless another transaction is
 *                    sweeping: requests in flight meet the same lapsed
 *                    rows, and at 8 clients four sweeps in five took none
 *                    (0.2 rows a sweep), the rows being held or already
 *                    swept by another; a later request or the transitioner
 *                    sweeps what it gave up on.
 *   USAGE_WATCH_DUE  it renews the watch list, which has spent half its lead
 *                    on the cutoff, unless another transaction is renewing
 *                    it or has renewed it since the request read it: the
 *                    list keeps reaching every request's cutoff.  A list
 *                    that falls short sends each request to a scan of
 *                    every assignment until its rebuild commits (7 of them
 *                    for every rebuild at 100,000 hosts, 12 ms each).  The
 *                    requests that find the list due until the renewal
 *                    commits (a backend learns of it from its signal) skip
 *                    it for a lock tried and a row read: on the switching
 *                    farm at 32 clients one request in seven found it due,
 *                    and each paid a subtransaction and a statement.
 *
 * Returns how many assignments it stopped counting.
 */
int64
allot_tidy_assignments(TimestampTz cutoff, int found, const LapsedUsage *lapsed)
{
	TidyArgs	args = {cutoff, lapsed, 0};

	/* Flags come only from a watch list that reaches the cutoff. */
	if (found == 0)
		return 0;
	prepare_common_plans();
	prepare_watch_plans();
	if ((found & USAGE_LAPSED) != 0 && take_turn(ALLOT_SWEEP_LOCK_SPACE) &&
		!without_waiting(sweep_step, &args))
		args.expired = 0;
	if ((found & USAGE_WATCH_DUE) != 0 && take_turn(ALLOT_RENEW_LOCK_SPACE) &&
		watch_still_due(cutoff))
		(void) without_waiting(renew_step, &args);
	return args.expired;
}

/*
 * Stop counting at most `limit` assignments whose host was not seen since
 * cutoff, in workload id order like every other writer of usage rows.  Rows
 * another session holds are skipped: that session is renewing or expiring
 * them.  The caller is connected to SPI.
 */
int64
allot_expire_assignments_upto(TimestampTz cutoff, int64 limit)
{
	Datum		args[2];
	int64		expired = 0;
	SPIPlanPtr	find;
	Datum	   *gone;
	int			ngone;

	allot_lock_for_write("assignment");
	prepare_common_plans();
	find = scan_sweep_plan;
	if (has_watch())
	{
		prepare_watch_plans();
		if (watch_reaches(cutoff) || rebuild_watch(cutoff, cutoff))
			find = sweep_plan;
	}
	args[1] = TimestampTzGetDatum(cutoff);
	while (expired < limit)
	{
		SPITupleTable *batch;
		uint64		n;

		if (SPI_execute_plan(find, &args[1], NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read expired assignments");
		n = SPI_processed;
		if (n == 0)
			break;
		batch = SPI_tuptable;
		gone = palloc(sizeof(Datum) * n);
		ngone = 0;
		for (uint64 i = 0; i < n && expired < limit; i++)
		{
			bool		isnull;

			args[0] = SPI_getbinval(batch->vals[i], batch->tupdesc, 1, &isnull);
			if (SPI_execute_plan(expire_one_plan, args, NULL, false, 0) != SPI_OK_UPDATE)
				elog(ERROR, "could not expire an assignment");
			expired += (int64) SPI_processed;
			if (SPI_processed > 0)
				gone[ngone++] = args[0];
		}
		/* What no longer counts leaves the list: no request visits it again. */
		if (find == sweep_plan && ngone > 0)
			unwatch(PointerGetDatum(construct_array(gone, ngone, INT8OID, 8,
													FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)));
		pfree(gone);
		SPI_freetuptable(batch);
		CHECK_FOR_INTERRUPTS();
	}
	return expired;
}
