/*
 * assign_read.c: what an assignment request's choice needs, read once
 * (seed 000 step 2: the threads on each candidate).
 *
 *   usage(W) = allot.workload_usage row of W        (trigger-maintained)
 *            - counted assignments of W already past allot.assignment_ttl
 *            - the requester's own counted assignment, if on W
 *
 * assign_workload (0.6.0 on) takes the first term from its backend's copy
 * of the usage rows (usage_cache.c), read again only after a change, and
 * the second from the watch list of lapsing assignments (entry.h,
 * assignment_usage.c): an index range over the hosts that went quiet and
 * were not swept yet.  Both are read without the executor, so a repeat
 * needs no SQL; a list that no longer reaches the request's cutoff is
 * rebuilt (or, while another transaction rebuilds it, the lapsed rows are
 * counted with a scan), which needs SQL.
 *
 * explain_assignment, a request with an exclude list and a schema before
 * 0.6.0 read each candidate's usage whole instead
 * (allot_read_candidate_usage), and under allot.fairness = recent or debt
 * the candidates' credit replaces or joins their threads.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"

#include "assign.h"
#include "credit.h"
#include "fairness.h"

static int
compare_deltas(const void *a, const void *b)
{
	int			x = ((const UsageDelta *) a)->workload;
	int			y = ((const UsageDelta *) b)->workload;

	return x < y ? -1 : x > y;
}

/* The lapsed assignments and the requester's own, one entry per workload. */
static void
gather_corrections(const LapsedUsage *lapsed, const AssignHost *host,
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

const UsageDelta *
allot_correction_of(const Corrections *c, int workload)
{
	UsageDelta	key = {workload, 0, 0};

	return c->n > 0 ? bsearch(&key, c->d, c->n, sizeof(UsageDelta), compare_deltas) : NULL;
}

/*
 * For assign_workload without an exclude list: the copy of the usage rows,
 * the groups of candidates (step 1), and the corrections to their usage.
 * Leaves a->usage NULL on a schema without the copy (before 0.6.0) or with
 * an exclude list: the pick then reads each candidate's usage.  The caller
 * holds the host's lock and allot.assignment's write lock.
 */
void
allot_read_assign_usage(Assign *a)
{
	LapsedUsage *lapsed = &a->lapsed;

	a->usage = NULL;
	a->found = 0;
	if (a->n_exclude > 0 || (a->usage = allot_usage_cache(a->cache)) == NULL)
		return;
	allot_pick_groups(a);
	if (a->groups.n_candidates == 0)
		return;

	/* The lapsed from the watch list, or with SQL when it falls short. */
	a->found = allot_lapsed_from_watch(a->cache, a->cutoff, lapsed);
	if (a->found < 0)
	{
		allot_assign_sql(a);
		a->found = allot_lapsed_usage(a->cache, a->cutoff, lapsed);
	}
	gather_corrections(lapsed, &a->host, a->cache, &a->corrections);
}

/*
 * Fill counted threads of the candidates (step 2), each read whole: their
 * usage rows less what lapsed.  A request that will write reads with a
 * fresh snapshot, so that what committed while it waited for its locks is
 * counted.  The caller is connected to SPI.
 */
void
allot_read_candidate_usage(AssignSelection *rs, const AssignHost *host, TimestampTz cutoff,
						   bool writer)
{
	int64	   *ids = palloc(sizeof(int64) * (rs->n + 1));
	double	   *threads,
			   *focus_threads;
	int			nids = 0;

	rs->found = 0;
	rs->lapsed.n_hosts = 0;
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
	rs->found = allot_assignment_usage(ids, nids, cutoff, writer, threads, focus_threads,
									   &rs->lapsed);

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
 * work, so every one is eligible for debt.  The caller is connected to SPI.
 */
void
allot_read_candidate_credit(AssignSelection *rs, TimestampTz now, int mode)
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

/*
 * Whether another transaction, still in progress, is changing the usage row
 * of workload_id: a request moving a host on to that workload (or off it),
 * which holds the row until it commits.  Read without waiting and without
 * locking the row, so it is a hint: the row may be taken or let go a moment
 * later, and the request's own write then waits as any UPDATE would.
 */
bool
allot_usage_row_busy(int64 workload_id)
{
	AllotTable	t;
	Snapshot	snap;
	bool		busy = false;

	allot_table_open(&t, "workload_usage", "workload_usage_pkey", true);
	if (t.rel == NULL)
		return false;
	snap = allot_read_snapshot(false);
	if (TTS_IS_BUFFERTUPLE(t.slot) && allot_fetch_by_key(&t, workload_id, snap))
	{
		BufferHeapTupleTableSlot *row = (BufferHeapTupleTableSlot *) t.slot;
		HeapTupleHeader h = row->base.tuple->t_data;
		uint16		mask;
		TransactionId xmax;

		LockBuffer(row->buffer, BUFFER_LOCK_SHARE);
		mask = h->t_infomask;
		xmax = HeapTupleHeaderGetRawXmax(h);
		LockBuffer(row->buffer, BUFFER_LOCK_UNLOCK);

		/* An update by one transaction (not a row lock, not several). */
		busy = !(mask & (HEAP_XMAX_INVALID | HEAP_XMAX_IS_MULTI)) &&
			!HEAP_XMAX_IS_LOCKED_ONLY(mask) &&
			TransactionIdIsNormal(xmax) &&
			!TransactionIdIsCurrentTransactionId(xmax) &&
			TransactionIdIsInProgress(xmax);
	}
	UnregisterSnapshot(snap);
	allot_table_close(&t);
	return busy;
}
