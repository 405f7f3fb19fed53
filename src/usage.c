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
 * allot.job add each statement's change to the row of the writing backend's
 * shard, allot.usage_shard(): requests of different backends then never wait
 * for each other's usage rows, which they would otherwise hold until they
 * commit.  Readers sum the shards.  The same triggers keep allot.host_credit,
 * the credit of each host's jobs.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "common/int.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "entry.h"
#include "retention.h"
#include "table_write.h"
#include "workload_cache.h"

/* Shards of a workload's allot.job_usage row: at most this many rows each. */
#define ALLOT_USAGE_SHARDS 16

static SPIPlanPtr usage_add_plan = NULL;
static SPIPlanPtr usage_update_plan = NULL;

static void
prepare_plans(void)
{
	Oid			add_args[4] = {INT8OID, INT8OID, INT8OID, INT4OID};

	if (usage_add_plan != NULL)
		return;
	usage_add_plan = allot_prepare(
								   "INSERT INTO allot.workload_usage AS u"
								   "       (workload_id, threads, focus_threads, hosts)"
								   "VALUES ($1, $2, $3, $4)"
								   "ON CONFLICT (workload_id) DO UPDATE"
								   "   SET threads = u.threads + excluded.threads,"
								   "       focus_threads = u.focus_threads + excluded.focus_threads,"
								   "       hosts = u.hosts + excluded.hosts",
								   4, add_args);
	usage_update_plan = allot_prepare(
									  "UPDATE allot.workload_usage"
									  "   SET threads = threads + $2, focus_threads = focus_threads + $3,"
									  "       hosts = hosts + $4"
									  " WHERE workload_id = $1",
									  4, add_args);
}

/* The allot.job_usage shard this backend writes. */
static int32
backend_shard(void)
{
#if PG_VERSION_NUM >= 170000
	int			proc = MyProcNumber;
#else
	int			proc = MyProc->pgprocno;
#endif

	return proc % ALLOT_USAGE_SHARDS;
}

PG_FUNCTION_INFO_V1(allot_usage_shard);

/* usage_shard(): the allot.job_usage shard this backend writes. */
Datum
allot_usage_shard(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(backend_shard());
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

/*
 * Add to a workload's usage row, making it if need be.  A row whose hosts
 * fall to 0 is kept (0.6.0): deleting it and inserting it again when a host
 * comes back grew the table on a farm where most requests switch (a page
 * pruned of a deleted row is not offered to inserts until VACUUM), and
 * every request that reads the usage read all of it: 217 pages for 397
 * rows.  An update of a row is HOT.  The transitioner drops the zero rows
 * of workloads that are no longer active.
 */
static void
usage_add(int64 workload_id, int64 threads, int64 focus_threads, int32 hosts)
{
	Datum		args[4] = {Int64GetDatum(workload_id), Int64GetDatum(threads),
	Int64GetDatum(focus_threads), Int32GetDatum(hosts)};

	/*
	 * The row is there but for a workload's first host: an UPDATE, without
	 * the speculative insertion's index check.
	 */
	if (SPI_execute_plan(usage_update_plan, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update allot.workload_usage");
	if (SPI_processed == 0 &&
		SPI_execute_plan(usage_add_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not update allot.workload_usage");
}

/* The SQL a usage move opened, if it needed any. */
typedef struct UsageAdd
{
	int			guc_level;
	bool		sql;
} UsageAdd;

/*
 * Add to a workload's usage row: at the row itself where that does all the
 * UPDATE would (table_write.c), else through SQL, opened on first need (no
 * SET clause from 0.7.0: search_path pinned here, unless a request already
 * did).
 */
static void
add_usage(UsageAdd *add, int64 workload_id, int64 threads, int64 focus_threads, int32 hosts)
{
	if (allot_add_usage(workload_id, threads, focus_threads, hosts))
		return;
	if (!add->sql)
	{
		add->guc_level = allot_pin_search_path();
		SPI_connect();
		prepare_plans();
		add->sql = true;
	}
	usage_add(workload_id, threads, focus_threads, hosts);
}

/*
 * An assignment row that counted for `before` (NULL: none) now counts for
 * `after` (NULL: none): its threads move between the two workloads' usage
 * rows, in workload id order (no deadlock between requests).  What the
 * trigger below does for each row change, and what a switch written
 * without the executor does itself (table_write.c).
 */
void
allot_usage_moved(HeapTuple old_row, HeapTuple new_row, TupleDesc desc)
{
	Contribution before = {0, 0, 0},
				after = {0, 0, 0};
	Contribution *first = &before,
			   *second = &after;
	UsageAdd	add = {-1, false};

	if (old_row != NULL)
		before = contribution(old_row, desc);
	if (new_row != NULL)
		after = contribution(new_row, desc);
	if (before.workload_id == after.workload_id &&
		before.threads == after.threads &&
		before.focus_threads == after.focus_threads)
		return;

	if (before.workload_id == after.workload_id)
		add_usage(&add, after.workload_id, after.threads - before.threads,
				  after.focus_threads - before.focus_threads, 0);
	else
	{
		if (before.workload_id == 0 ||
			(after.workload_id != 0 && after.workload_id < before.workload_id))
		{
			first = &after;
			second = &before;
		}
		if (first->workload_id != 0)
			add_usage(&add, first->workload_id,
					  first == &after ? first->threads : -first->threads,
					  first == &after ? first->focus_threads : -first->focus_threads,
					  first == &after ? 1 : -1);
		if (second->workload_id != 0)
			add_usage(&add, second->workload_id,
					  second == &after ? second->threads : -second->threads,
					  second == &after ? second->focus_threads : -second->focus_threads,
					  second == &after ? 1 : -1);
	}
	if (add.sql)
	{
		SPI_finish();
		allot_unpin_search_path(add.guc_level);
	}
}

PG_FUNCTION_INFO_V1(allot_assignment_usage_trigger);

Datum
allot_assignment_usage_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TupleDesc	desc;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!TRIGGER_FIRED_AFTER(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("allot_assignment_usage_trigger() must be an AFTER ROW trigger")));

	desc = td->tg_relation->rd_att;
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		allot_usage_moved(NULL, td->tg_trigtuple, desc);
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		allot_usage_moved(td->tg_trigtuple, NULL, desc);
	else
		allot_usage_moved(td->tg_trigtuple, td->tg_newtuple, desc);
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

/* ---------------------------------------------------------------------------
 * The statement trigger that keeps allot.job_usage (and allot.host_credit)
 * equal to what allot.job holds.
 *
 * For each workload a statement touched: the change in its unsent, in
 * progress, done and errored (error or timed out) jobs, and in the MFLOPS
 * in progress (allot.job_mflops of each job in progress: its peak FLOPS in
 * whole MFLOPS).  New rows count, old rows count negatively; workloads whose
 * change is nothing are left alone.  The changes are added to this
 * backend's shard in one upsert, in workload id order, so that concurrent
 * statements lock usage rows in one order and cannot deadlock.
 *
 * Credit changes only when the transitioner grants it (or an operator
 * writes it): only a statement whose rows carry credit runs the
 * allot.host_credit statement, over the transition tables, in host id order.
 * ------------------------------------------------------------------------- */

typedef struct JobDelta
{
	int64		workload_id;
	int64		min_unsent_id;	/* the least id of its new rows that are unsent */
	int64		unsent;
	int64		in_progress;
	int64		mflops;
	int64		done;
	int64		error;
	int64		reopened;
} JobDelta;

typedef struct JobColumns
{
	AttrNumber	id;
	AttrNumber	workload_id;
	AttrNumber	state;
	AttrNumber	peak;
	AttrNumber	host_id;
	AttrNumber	credit;
	AttrNumber	sent_at;
	AttrNumber	sending;		/* 0: before 0.6.0 */
} JobColumns;

typedef struct JobDeltas
{
	JobDelta   *d;
	int			n;
	int			cap;
	bool		credit;			/* a row has credit and a host */
	bool		deleting;		/* the statement is a DELETE */
	bool		purging;		/* retention's DELETE: the jobs keep their counts */
} JobDeltas;

static SPIPlanPtr job_usage_plan = NULL;
/*
 * allot.host_credit from a statement's rows that carry credit: the credit
 * and the jobs added (new rows) and taken away (old rows), per host, in
 * host id order.  From 0.6.0 also the credit decayed with a half-life of a
 * week from each job's return (allot.credit_decay): kept as its value at
 * decayed_at, the latest return counted, so that host_credit() reads a
 * host's recent average credit from one row.  A batch is brought to its
 * own latest return, the row to the later of the two, and they are added.
 */
static SPIPlanPtr host_credit_plan[2][3];	/* [decayed][insert, update, delete] */

#define CREDIT_ROWS(table, sign) \
	"SELECT host_id, " sign "credit::numeric AS credit, " sign "1 AS jobs," \
	"       " sign "credit AS value, coalesce(returned_at, now()) AS r" \
	"  FROM " table " WHERE credit IS NOT NULL AND host_id IS NOT NULL"

static const char *const credit_rows[3] = {
	CREDIT_ROWS("new_rows", ""),
	CREDIT_ROWS("new_rows", "") " UNION ALL " CREDIT_ROWS("old_rows", "-"),
	CREDIT_ROWS("old_rows", "-")
};

static SPIPlanPtr
host_credit_plan_for(bool decayed, int op)
{
	if (host_credit_plan[decayed][op] != NULL)
		return host_credit_plan[decayed][op];
	host_credit_plan[decayed][op] = allot_prepare(decayed ?
		psprintf("INSERT INTO allot.host_credit AS c (host_id, credit, jobs, decayed, decayed_at)"
				 "SELECT host_id, sum(credit), sum(jobs),"
				 "       sum(allot.credit_decay(value, extract(epoch FROM t - r)::float8)), t"
				 "  FROM (SELECT d.*, max(r) OVER (PARTITION BY host_id) AS t FROM (%s) d) d"
				 " GROUP BY host_id, t HAVING sum(credit) <> 0 OR sum(jobs) <> 0 OR sum(value) <> 0"
				 " ORDER BY host_id "
				 "ON CONFLICT (host_id) DO UPDATE"
				 "   SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs,"
				 "       decayed = allot.credit_decay(c.decayed, extract(epoch FROM"
				 "                     greatest(c.decayed_at, excluded.decayed_at) - c.decayed_at)::float8)"
				 "               + allot.credit_decay(excluded.decayed, extract(epoch FROM"
				 "                     greatest(c.decayed_at, excluded.decayed_at) - excluded.decayed_at)::float8),"
				 "       decayed_at = greatest(c.decayed_at, excluded.decayed_at)",
				 credit_rows[op]) :
		psprintf("INSERT INTO allot.host_credit AS c (host_id, credit, jobs)"
				 "SELECT host_id, sum(credit), sum(jobs) FROM (%s) d"
				 " GROUP BY host_id HAVING sum(credit) <> 0 OR sum(jobs) <> 0 ORDER BY host_id "
				 "ON CONFLICT (host_id) DO UPDATE"
				 "   SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs",
				 credit_rows[op]),
		0, NULL);
	return host_credit_plan[decayed][op];
}

/* Does allot.host_credit keep decayed credit (0.6.0 on)? */
static bool
credit_decayed(void)
{
	Oid			relid = get_relname_relid("host_credit", get_namespace_oid("allot", false));

	return OidIsValid(relid) && get_attnum(relid, "decayed") != InvalidAttrNumber;
}

static AttrNumber
job_column(TupleDesc desc, const char *name)
{
	int			attnum = SPI_fnumber(desc, name);

	if (attnum <= 0)
		elog(ERROR, "allot.job has no column \"%s\"", name);
	return (AttrNumber) attnum;
}

/* allot.job_mflops(): the peak FLOPS in whole MFLOPS, 0 when unknown. */
static int64
job_mflops(Datum peak, bool isnull)
{
	double		m;

	if (isnull)
		return 0;
	m = rint(DatumGetFloat8(peak) / 1e6);
	if (isnan(m) || !FLOAT8_FITS_IN_INT64(m))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("job peak_flops_per_sec %g is out of range", DatumGetFloat8(peak)),
				 errdetail("A job's MFLOPS in progress must fit in a bigint.")));
	return (int64) m;
}

/* *sum += sign * v (sign: 1 or -1), for the workload's job_usage change. */
static void
delta_add(int64 *sum, int64 v, int sign, int64 workload_id)
{
	if (sign > 0 ? pg_add_s64_overflow(*sum, v, sum) : pg_sub_s64_overflow(*sum, v, sum))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the change in allot.job_usage of workload %lld is out of range",
						(long long) workload_id),
				 errdetail("A statement's change in a workload's jobs or MFLOPS in progress must fit in a bigint.")));
}

static void merge_runs(JobDeltas *deltas);

/* Adds sign times each row of ts to deltas: one entry per run of a workload. */
static void
add_rows(Tuplestorestate *ts, TupleTableSlot *slot, const JobColumns *col, int sign,
		 JobDeltas *deltas)
{
	tuplestore_rescan(ts);
	while (tuplestore_gettupleslot(ts, true, false, slot))
	{
		bool		isnull;
		int64		workload_id = DatumGetInt64(slot_getattr(slot, col->workload_id, &isnull));
		text	   *state = DatumGetTextPP(slot_getattr(slot, col->state, &isnull));
		const char *s = VARDATA_ANY(state);
		int			len = VARSIZE_ANY_EXHDR(state);
		JobDelta   *d;

#define STATE_IS(name) (len == (int) sizeof(name) - 1 && memcmp(s, name, len) == 0)
		/*
		 * A purge (retention.c) moves finished jobs out of the table, and
		 * their counts and credit into the purged totals, not out of the
		 * farm's counters.
		 */
		if (deltas->purging)
		{
			if (!(STATE_IS("done") || STATE_IS("error") || STATE_IS("timed_out")))
				elog(ERROR, "a purge may remove only finished jobs");
			continue;
		}
		if (deltas->n == 0 || deltas->d[deltas->n - 1].workload_id != workload_id)
		{
			if (deltas->n == deltas->cap)
			{
				/* Fold the runs first: a big statement grows with its workloads, not its rows. */
				merge_runs(deltas);
				if (deltas->n > deltas->cap / 2)
				{
					deltas->cap *= 2;
					deltas->d = repalloc_huge(deltas->d, sizeof(JobDelta) * deltas->cap);
				}
			}
			d = &deltas->d[deltas->n++];
			memset(d, 0, sizeof(JobDelta));
			d->workload_id = workload_id;
			d->min_unsent_id = PG_INT64_MAX;
		}
		d = &deltas->d[deltas->n - 1];
		if (STATE_IS("unsent"))
		{
			delta_add(&d->unsent, 1, sign, workload_id);
			if (sign > 0)
				d->min_unsent_id = Min(d->min_unsent_id,
									   DatumGetInt64(slot_getattr(slot, col->id, &isnull)));
		}
		else if (STATE_IS("in_progress"))
		{
			Datum		peak = slot_getattr(slot, col->peak, &isnull);

			/* A job in progress cannot vanish under its host. */
			if (deltas->deleting)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("job %lld is in progress on host %lld: it cannot be deleted",
								(long long) DatumGetInt64(slot_getattr(slot, col->id, &isnull)),
								(long long) DatumGetInt64(slot_getattr(slot, col->host_id, &isnull))),
						 errdetail("Its host will report it."),
						 errhint("Wait for its report or its deadline, or delete only jobs that are not in progress.")));

			delta_add(&d->in_progress, 1, sign, workload_id);
			delta_add(&d->mflops, job_mflops(peak, isnull), sign, workload_id);
		}
		else if (STATE_IS("done"))
			delta_add(&d->done, 1, sign, workload_id);
		else if (STATE_IS("error") || STATE_IS("timed_out"))
			delta_add(&d->error, 1, sign, workload_id);
#undef STATE_IS
		if (!deltas->credit)
		{
			(void) slot_getattr(slot, col->credit, &isnull);
			if (!isnull)
			{
				(void) slot_getattr(slot, col->host_id, &isnull);
				deltas->credit = !isnull;
			}
		}
	}
	tuplestore_rescan(ts);
}

static int
delta_cmp(const void *a, const void *b)
{
	int64		x = ((const JobDelta *) a)->workload_id;
	int64		y = ((const JobDelta *) b)->workload_id;

	return (x > y) - (x < y);
}

/* Sorts the entries by workload and merges each workload's into one. */
static void
merge_runs(JobDeltas *deltas)
{
	int			out = 0;

	qsort(deltas->d, deltas->n, sizeof(JobDelta), delta_cmp);
	for (int i = 0; i < deltas->n; i++)
	{
		JobDelta   *d = &deltas->d[i];

		if (out > 0 && deltas->d[out - 1].workload_id == d->workload_id)
		{
			JobDelta   *m = &deltas->d[out - 1];

			delta_add(&m->unsent, d->unsent, 1, m->workload_id);
			delta_add(&m->in_progress, d->in_progress, 1, m->workload_id);
			delta_add(&m->mflops, d->mflops, 1, m->workload_id);
			delta_add(&m->done, d->done, 1, m->workload_id);
			delta_add(&m->error, d->error, 1, m->workload_id);
			m->min_unsent_id = Min(m->min_unsent_id, d->min_unsent_id);
		}
		else
			deltas->d[out++] = *d;
	}
	deltas->n = out;
}

/*
 * One entry per workload.  An update that leaves a workload more unsent
 * jobs than it found reopened them (a report that gives a job back, the
 * transitioner's time-outs).  Requests in this backend look below their
 * hint for the new unsent rows; then the workloads without change are
 * dropped.
 */
static void
finish_deltas(JobDeltas *deltas, bool update)
{
	int			n;

	merge_runs(deltas);
	n = deltas->n;
	deltas->n = 0;
	for (int i = 0; i < n; i++)
	{
		JobDelta   *d = &deltas->d[i];

		if (update && d->unsent > 0)
			d->reopened = d->unsent;
		if (d->min_unsent_id != PG_INT64_MAX)
			allot_pick_hint_lower(d->workload_id, d->min_unsent_id - 1);
		if (d->unsent != 0 || d->in_progress != 0 || d->mflops != 0 ||
			d->done != 0 || d->error != 0)
			deltas->d[deltas->n++] = *d;
	}
}

static Datum
delta_array(const JobDeltas *deltas, size_t offset)
{
	Datum	   *values = palloc(sizeof(Datum) * deltas->n);

	for (int i = 0; i < deltas->n; i++)
		values[i] = Int64GetDatum(*(const int64 *) ((const char *) &deltas->d[i] + offset));
	return PointerGetDatum(construct_array(values, deltas->n, INT8OID, 8, FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
}

static void
write_job_usage(const JobDeltas *deltas, int32 shard)
{
	Datum		args[8];

	if (job_usage_plan == NULL)
	{
		Oid			types[8] = {INT4OID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
		INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID};

		job_usage_plan = allot_prepare(
									   "INSERT INTO allot.job_usage AS u"
									   "       (workload_id, shard, unsent, in_progress, mflops, done, error, reopened)"
									   "SELECT w, $1, un, ip, mf, dn, er, ro"
									   "  FROM unnest($2, $3, $4, $5, $6, $7, $8) AS d(w, un, ip, mf, dn, er, ro) "
									   "ON CONFLICT (workload_id, shard) DO UPDATE"
									   "   SET unsent = u.unsent + excluded.unsent,"
									   "       in_progress = u.in_progress + excluded.in_progress,"
									   "       mflops = u.mflops + excluded.mflops,"
									   "       done = u.done + excluded.done,"
									   "       error = u.error + excluded.error,"
									   "       reopened = u.reopened + excluded.reopened",
									   8, types);
	}
	args[0] = Int32GetDatum(shard);
	args[1] = delta_array(deltas, offsetof(JobDelta, workload_id));
	args[2] = delta_array(deltas, offsetof(JobDelta, unsent));
	args[3] = delta_array(deltas, offsetof(JobDelta, in_progress));
	args[4] = delta_array(deltas, offsetof(JobDelta, mflops));
	args[5] = delta_array(deltas, offsetof(JobDelta, done));
	args[6] = delta_array(deltas, offsetof(JobDelta, error));
	args[7] = delta_array(deltas, offsetof(JobDelta, reopened));
	if (SPI_execute_plan(job_usage_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not update allot.job_usage");
}

/*
 * Jobs only for job workloads: an INSERT of jobs into a workload without an
 * app (an assignment workload, which request_work never serves) is refused.
 * One lookup per inserting statement, over the workloads it touched; an
 * UPDATE that moves jobs is checked by a row trigger (job_workload_check),
 * so that the requests' updates pay nothing for it.
 */
static void
check_job_workloads(const JobDeltas *deltas)
{
	static SPIPlanPtr plan = NULL;
	Datum		args[1];
	bool		isnull;

	if (plan == NULL)
	{
		Oid			types[1] = {INT8ARRAYOID};

		plan = allot_prepare("SELECT id FROM allot.workload"
							 " WHERE id = ANY ($1) AND app_id IS NULL ORDER BY id LIMIT 1",
							 1, types);
	}
	args[0] = delta_array(deltas, offsetof(JobDelta, workload_id));
	if (SPI_execute_plan(plan, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.workload");
	if (SPI_processed == 1)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("workload %lld has no app: only a job workload (one with an app) has jobs",
						(long long) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
																SPI_tuptable->tupdesc, 1, &isnull))),
				 errhint("Jobs are for workloads with an app_id; assignment workloads are served by assign_workload.")));
}

/* ---------------------------------------------------------------------------
 * Sendings an operator ended by hand (0.7.0).  allot ends a sending in
 * progress only in statements that record how it ended in allot.job_report
 * (a report, a timeout, requeue_job).  An UPDATE of allot.job that moves a
 * job out of progress otherwise is an operator's edit: the sending is
 * recorded as taken back ('requeued'), as requeue_job would, so that its
 * host's report is told so instead of being taken for a later sending, and
 * the host is not sent the job again.  Recorded with ON CONFLICT DO
 * NOTHING: allot's own statements, whose record is there, add nothing.
 * ------------------------------------------------------------------------- */

typedef struct EndedSending
{
	int64		job_id;
	int64		host_id;
	Datum		sent_at;
	int32		sending;
	bool		ended;
} EndedSending;

static int
ended_cmp(const void *a, const void *b)
{
	int64		x = ((const EndedSending *) a)->job_id;
	int64		y = ((const EndedSending *) b)->job_id;

	return (x > y) - (x < y);
}

static bool
slot_state_is(TupleTableSlot *slot, AttrNumber column, const char *name)
{
	bool		isnull;
	text	   *state = DatumGetTextPP(slot_getattr(slot, column, &isnull));

	return !isnull && (size_t) VARSIZE_ANY_EXHDR(state) == strlen(name) &&
		memcmp(VARDATA_ANY(state), name, strlen(name)) == 0;
}

static void
record_taken_back(TriggerData *td, TupleTableSlot *slot, const JobColumns *col)
{
	static SPIPlanPtr plan = NULL;
	EndedSending *e = NULL;
	int			n = 0,
				cap = 0,
				ended = 0;
	Datum	   *jobs,
			   *hosts,
			   *sent,
			   *sendings;
	Datum		args[4];
	bool		isnull;

	tuplestore_rescan(td->tg_oldtable);
	while (tuplestore_gettupleslot(td->tg_oldtable, true, false, slot))
	{
		if (!slot_state_is(slot, col->state, "in_progress"))
			continue;
		if (n == cap)
		{
			cap = cap == 0 ? 16 : cap * 2;
			e = e == NULL ? palloc(sizeof(EndedSending) * cap) : repalloc(e, sizeof(EndedSending) * cap);
		}
		e[n].job_id = DatumGetInt64(slot_getattr(slot, col->id, &isnull));
		e[n].host_id = DatumGetInt64(slot_getattr(slot, col->host_id, &isnull));
		e[n].sent_at = slot_getattr(slot, col->sent_at, &isnull);
		e[n].sending = DatumGetInt32(slot_getattr(slot, col->sending, &isnull));
		e[n].ended = false;
		n++;
	}
	tuplestore_rescan(td->tg_oldtable);
	if (n == 0)
		return;
	qsort(e, n, sizeof(EndedSending), ended_cmp);
	tuplestore_rescan(td->tg_newtable);
	while (tuplestore_gettupleslot(td->tg_newtable, true, false, slot))
	{
		EndedSending key;
		EndedSending *found;

		if (slot_state_is(slot, col->state, "in_progress"))
			continue;
		key.job_id = DatumGetInt64(slot_getattr(slot, col->id, &isnull));
		found = bsearch(&key, e, n, sizeof(EndedSending), ended_cmp);
		if (found != NULL && !found->ended)
		{
			found->ended = true;
			ended++;
		}
	}
	tuplestore_rescan(td->tg_newtable);
	if (ended == 0)
		return;

	jobs = palloc(sizeof(Datum) * ended);
	hosts = palloc(sizeof(Datum) * ended);
	sent = palloc(sizeof(Datum) * ended);
	sendings = palloc(sizeof(Datum) * ended);
	ended = 0;
	for (int i = 0; i < n; i++)
	{
		if (!e[i].ended)
			continue;
		jobs[ended] = Int64GetDatum(e[i].job_id);
		hosts[ended] = Int64GetDatum(e[i].host_id);
		sent[ended] = e[i].sent_at;
		sendings[ended++] = Int32GetDatum(e[i].sending);
	}
	if (plan == NULL)
	{
		Oid			types[4] = {INT8ARRAYOID, INT8ARRAYOID, TIMESTAMPTZARRAYOID, INT4ARRAYOID};

		plan = allot_prepare(
							 "INSERT INTO allot.job_report"
							 "       (job_id, host_id, sent_at, outcome, reported_at, reply, sending)"
							 "SELECT x.j, x.h, x.s, 'requeued', now(),"
							 "       jsonb_build_object('job_id', x.j, 'outcome', 'requeued',"
							 "                          'state', (SELECT state FROM allot.job WHERE id = x.j)),"
							 "       x.n"
							 "  FROM unnest($1, $2, $3, $4) x(j, h, s, n) "
							 "ON CONFLICT DO NOTHING",
							 4, types);
	}
	args[0] = PointerGetDatum(construct_array(jobs, ended, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[1] = PointerGetDatum(construct_array(hosts, ended, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[2] = PointerGetDatum(construct_array(sent, ended, TIMESTAMPTZOID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	args[3] = PointerGetDatum(construct_array(sendings, ended, INT4OID, 4, true, TYPALIGN_INT));
	if (SPI_execute_plan(plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the sendings taken back");
}

PG_FUNCTION_INFO_V1(allot_job_usage_trigger);

Datum
allot_job_usage_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	JobColumns	col;
	JobDeltas	deltas;
	TupleTableSlot *slot;
	int			op;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) ||
		!TRIGGER_FIRED_AFTER(td->tg_event) ||
		TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("allot_job_usage_trigger() must be an AFTER STATEMENT trigger on insert, update or delete")));
	op = TRIGGER_FIRED_BY_INSERT(td->tg_event) ? 0 : TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? 1 : 2;
	if ((op != 2 && td->tg_newtable == NULL) || (op != 0 && td->tg_oldtable == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("allot_job_usage_trigger() needs the statement's transition tables"),
				 errhint("Create the trigger with REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows.")));

	SPI_connect();
	desc = RelationGetDescr(td->tg_relation);
	col.id = job_column(desc, "id");
	col.workload_id = job_column(desc, "workload_id");
	col.state = job_column(desc, "state");
	col.peak = job_column(desc, "peak_flops_per_sec");
	col.host_id = job_column(desc, "host_id");
	col.credit = job_column(desc, "credit");
	/* 0.7.0: sendings ended by hand are recorded (record_taken_back). */
	col.sending = SPI_fnumber(desc, "replica_of") > 0 ? job_column(desc, "sending") : 0;
	col.sent_at = job_column(desc, "sent_at");
	deltas.cap = 16;
	deltas.n = 0;
	deltas.d = palloc(sizeof(JobDelta) * deltas.cap);
	deltas.credit = false;
	deltas.deleting = op == 2;
	deltas.purging = op == 2 && allot_retention_purging();
	slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	if (op != 0)
		add_rows(td->tg_oldtable, slot, &col, -1, &deltas);
	if (op != 2)
		add_rows(td->tg_newtable, slot, &col, 1, &deltas);
	if (op == 1 && col.sending > 0)
		record_taken_back(td, slot, &col);
	ExecDropSingleTupleTableSlot(slot);

	finish_deltas(&deltas, op == 1);
	if (op == 0 && deltas.n > 0)
		check_job_workloads(&deltas);
	if (deltas.n > 0)
		write_job_usage(&deltas, backend_shard());
	if (deltas.credit)
	{
		if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
			elog(ERROR, "could not register the transition tables of allot.job");
		if (SPI_execute_plan(host_credit_plan_for(credit_decayed(), op), NULL, NULL, false, 0) !=
			SPI_OK_INSERT)
			elog(ERROR, "could not update allot.host_credit");
	}
	SPI_finish();
	return PointerGetDatum(NULL);
}
