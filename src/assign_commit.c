/*
 * assign_commit.c: an assignment request's choice, recorded, and its reply.
 *
 *   a repeat       its assignment's seen_at alone, at the row the request
 *                  read (table_write.c): a HOT update, no index or usage row
 *                  touched, no usage trigger even considered; through SQL
 *                  (the same UPDATE) where the table asks for more than the
 *                  write (an operator's trigger or CHECK, a clock that went
 *                  back, a row that changed since it was read)
 *   a switch       the assignment written at the row the request read
 *                  (table_write.c) or inserted through SQL, the host's
 *                  threads moved between two usage rows in workload id
 *                  order (no deadlocks), as the usage trigger moves them;
 *                  and host.last_workload_id at the row the request read,
 *                  the foreign keys checked there
 *   nothing fits   the assignment deleted, if there was one; nothing else
 *
 * host.last_seen is not written here: the transitioner brings it up to date
 * from the assignments' seen_at and host_resource.asked_at.  After its own
 * writes, a request that met lapsed assignments stops counting a few of
 * them, and the first to find the watch list due renews it
 * (allot_tidy_assignments), neither waiting for anything.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"

#include "assign.h"
#include "credit.h"
#include "table_write.h"

static SPIPlanPtr update_plan = NULL;
static SPIPlanPtr repeat_plan = NULL;
static SPIPlanPtr insert_plan = NULL;
static SPIPlanPtr last_workload_plan = NULL;
static SPIPlanPtr unassign_plan = NULL;

/* The request's statements; the caller has opened SQL (allot_assign_sql). */
static void
prepare_plans(void)
{
	Oid			assign_args[5] = {INT8OID, INT8OID, INT4OID, BOOLOID, TIMESTAMPTZOID};
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
	/* A new row starts its HOT chain where it is inserted. */
	insert_plan = allot_prepare(
								"INSERT INTO allot.assignment"
								"       (host_id, workload_id, threads, focus, assigned_at, seen_at, counted)"
								"VALUES ($1, $2, $3, $4, $5, $5, true)"
								" RETURNING ctid",
								5, assign_args);
	last_workload_plan = allot_prepare(
									   "UPDATE allot.host SET last_workload_id = $2 WHERE id = $1",
									   2, id_id);
	unassign_plan = allot_prepare(
								  "DELETE FROM allot.assignment WHERE host_id = $1",
								  1, id_only);
}

/* Run one of the request's statements; false if it found no row. */
static bool
execute(Assign *a, SPIPlanPtr *plan, Datum *args, int expect)
{
	allot_assign_sql(a);
	prepare_plans();
	if (SPI_execute_plan(*plan, args, NULL, false, 0) != expect)
		elog(ERROR, "could not record the assignment of host %lld", (long long) a->host_id);
	return SPI_processed > 0;
}

/*
 * The chosen workload, recorded as the host's assignment; and the host's
 * row, when its last workload changes or it does not say where its
 * assignment is.
 */
static void
record(Assign *a, const CachedWorkload *w)
{
	AssignHost *host = &a->host;
	Datum		args[5] = {
		Int64GetDatum(a->host_id), Int64GetDatum(w->id),
		Int32GetDatum(host->offer.threads),
		BoolGetDatum(a->focus_assigned),
		TimestampTzGetDatum(a->now)
	};
	bool		written = false;
	/* Where the assignment's chain starts after the write, if we know. */
	ItemPointerData root = host->assignment_root;
	bool		root_known = true;
	bool		inserted = false;
	bool		move,
				hint;

	/* Credit first: the transitioner's fold locks those rows first too. */
	if (a->fairness != FAIRNESS_CURRENT)
	{
		const char *cpu = "cpu";
		double		credit = allot_assignment_credit(host);
		int64		id = w->id;

		allot_assign_sql(a);
		allot_add_credit(&id, &cpu, &credit, 1, a->now, a->fairness);
	}

	/* The same workload, threads and focus: seen_at alone. */
	if (host->assigned_workload == w->id &&
		host->assigned_threads == host->offer.threads &&
		host->assigned_focus == a->focus_assigned)
	{
		if (allot_touch_assignment(&host->assignment_table, host->assignment_row,
								   a->now, &root))
			written = true;
		else if (execute(a, &repeat_plan, args, SPI_OK_UPDATE))
		{
			written = true;
			root_known = false; /* the UPDATE does not say */
		}
	}
	/* Another workload, or other threads: at the row read, or through SQL. */
	if (!written && host->has_assignment &&
		!allot_switch_assignment(&host->assignment_table, host->assignment_row, w->id,
								 host->offer.threads, a->focus_assigned, a->now, &root))
	{
		(void) execute(a, &update_plan, args, SPI_OK_UPDATE);
		root_known = false;
	}
	else if (!written && !host->has_assignment)
	{
		bool		isnull;

		(void) execute(a, &insert_plan, args, SPI_OK_INSERT_RETURNING);
		root = *(ItemPointer) DatumGetPointer(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc, 1, &isnull));
		inserted = true;
	}

	/*
	 * The host's row is written only when its last workload changes, and
	 * then it also says where the assignment now is; or when the assignment
	 * is new, or the row says nothing of where it is.  A place that is only
	 * out of date (the row moved off its page, or an operator's value) is
	 * left to the next switch: on a small, busy farm rows move often, and a
	 * host row written at each move cost more than the reads through the
	 * key it saved.  At the row the request read, or, for the last
	 * workload, through SQL where the table asks for more.
	 */
	move = host->last_workload_id != w->id;
	hint = host->hint_column && root_known &&
		!ItemPointerEquals(&root, &host->assignment_hint) &&
		(move || inserted || !ItemPointerIsValid(&host->assignment_hint));
	if ((move || hint) &&
		!allot_write_host(&host->host_table, host->host_row, move ? &w->id : NULL,
						  hint ? &root : NULL) && move)
	{
		Datum		hargs[2] = {Int64GetDatum(a->host_id), Int64GetDatum(w->id)};

		(void) execute(a, &last_workload_plan, hargs, SPI_OK_UPDATE);
	}
}

/*
 * Record the choice; then, without waiting for anything, what the usage read
 * found to tidy.
 */
void
allot_commit_assignment(Assign *a)
{
	if (a->chosen >= 0)
		record(a, &a->cache->workloads[a->chosen]);
	else if (a->host.has_assignment)
	{
		Datum		args[1] = {Int64GetDatum(a->host_id)};

		/* Nothing fits: the host works on nothing, so it counts nowhere. */
		(void) execute(a, &unassign_plan, args, SPI_OK_DELETE);
	}

	/*
	 * Assignments that lapsed unswept cost every request a subtraction: the
	 * first to meet them stops counting a few; and the first to find the
	 * watch list due renews it.
	 */
	if (a->found > 0)
	{
		allot_assign_sql(a);
		(void) allot_tidy_assignments(a->cutoff, a->found, &a->lapsed);
	}
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
 * The reply row, in the current memory context: the workload and its
 * concurrency settings (seed 000, end); NULL when nothing fits.
 */
HeapTuple
allot_assign_reply(Assign *a, TupleDesc desc)
{
	const CachedWorkload *w;
	ConcurrencySettings cs;
	Datum		values[6];
	bool		nulls[6] = {false};

	if (a->chosen < 0)
		return NULL;
	w = &a->cache->workloads[a->chosen];
	cs = allot_concurrency(&a->host.offer, &w->needs, w->workload_size);
	values[0] = Int64GetDatum(w->id);
	values[1] = Int32GetDatum(int_setting(cs.cutechess_count, "cutechess_count", w->id));
	values[2] = Int32GetDatum(int_setting(cs.concurrency_per, "concurrency_per", w->id));
	values[3] = Int32GetDatum(int_setting(cs.games_per_cutechess, "games_per_cutechess", w->id));
	values[4] = BoolGetDatum(a->focus_assigned);
	values[5] = BoolGetDatum(a->repeated);
	return heap_form_tuple(desc, values, nulls);
}
