/*
 * table_write.c: the one write allot makes without the executor, a repeat's
 * seen_at.
 *
 * A host that asks again and keeps its workload moves its assignment's
 * seen_at forward and changes nothing else.  Through SPI that write is a
 * statement, and most of its cost is the executor concluding that there is
 * nothing to do: at every execution the table's CHECK constraint and the
 * watch trigger's WHEN clause are read back from their stored text,
 * compiled and evaluated (the CHECK concerns threads, the WHEN is false),
 * and the row the request has just read by its key is looked up by its key
 * again.  Here that row, at the TID the read found, is updated as the
 * executor would: the table AM's update (with its row lock, its wait for a
 * concurrent writer and its SSI checks), then new index entries when the new
 * version is not heap-only.
 *
 * It is done only where the executor would do no more than that, and the
 * caller writes through SPI whenever this returns false:
 *	- the table has no rule, no row security, no BEFORE or statement-level
 *	  UPDATE trigger, and its row-level AFTER UPDATE triggers are the
 *	  foreign keys' (whose columns do not change) and the extension's two:
 *	  assignment_usage_change, which names its columns (seen_at is not one),
 *	  and assignment_watch_update, whose WHEN is false for a counted row whose
 *	  seen_at does not go back;
 *	- the row read is counted and its seen_at is not after the new one;
 *	- the calling role may update the table;
 *	- the update finds the row as read (no concurrent writer moved it on).
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/acl.h"
#include "utils/rel.h"

#include "table_read.h"
#include "table_write.h"

#if PG_VERSION_NUM >= 140000	/* ExecInsertIndexTuples takes the result relation */

/* The AFTER UPDATE row triggers an in-place repeat may pass by. */
static bool
triggers_allow_touch(Relation rel, AttrNumber seen_at)
{
	TriggerDesc *td = rel->trigdesc;

	if (td == NULL)
		return true;
	if (td->trig_update_before_row || td->trig_update_instead_row ||
		td->trig_update_before_statement || td->trig_update_after_statement ||
		td->trig_update_new_table || td->trig_update_old_table)
		return false;
	for (int i = 0; i < td->numtriggers; i++)
	{
		const Trigger *tg = &td->triggers[i];

		if (!TRIGGER_FOR_UPDATE(tg->tgtype) || tg->tgenabled == TRIGGER_DISABLED)
			continue;
		if (tg->tgisinternal)
			continue;			/* a foreign key's: its columns do not change */
		if (strcmp(tg->tgname, "assignment_watch_update") == 0)
			continue;			/* its WHEN is false here (see the caller) */
		if (strcmp(tg->tgname, "assignment_usage_change") == 0 && tg->tgnattr > 0)
		{
			bool		names_seen_at = false;

			for (int k = 0; k < tg->tgnattr; k++)
				if (tg->tgattr[k] == seen_at)
					names_seen_at = true;
			if (!names_seen_at)
				continue;
		}
		return false;
	}
	return true;
}

/*
 * New index entries for a version that is not heap-only, as the executor
 * makes them; without a range table (so no hint that the keys are
 * unchanged, which would read the statement's updated columns from it).
 */
static void
insert_index_entries(Relation rel, TupleTableSlot *slot, bool only_summarizing)
{
	EState	   *estate = CreateExecutorState();
	ResultRelInfo *rri = makeNode(ResultRelInfo);

	InitResultRelInfo(rri, rel, 0, NULL, 0);
	ExecOpenIndices(rri, false);
#if PG_VERSION_NUM >= 160000
	(void) ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL,
								 only_summarizing);
#else
	Assert(!only_summarizing);
	(void) ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL);
#endif
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
}

bool
allot_touch_assignment(HeapTuple row, TimestampTz seen_at)
{
	AllotTable	t;
	Relation	rel;
	TupleDesc	desc;
	AttrNumber	seen_at_att,
				counted_att;
	int			column;
	Datum		value;
	bool		isnull;
	HeapTuple	newrow;
	TupleTableSlot *slot;
	TM_Result	result;
	TM_FailureData tmfd;
	LockTupleMode lockmode;
	bool		touched = false;
#if PG_VERSION_NUM >= 160000
	TU_UpdateIndexes update_indexes;
#else
	bool		update_indexes;
#endif

	allot_table_open(&t, "assignment", NULL, false);
	rel = t.rel;
	desc = RelationGetDescr(rel);
	seen_at_att = allot_column(&t, "seen_at", TIMESTAMPTZOID);
	counted_att = allot_column(&t, "counted", BOOLOID);

	value = heap_getattr(row, counted_att, desc, &isnull);
	if (isnull || !DatumGetBool(value))
		goto done;
	value = heap_getattr(row, seen_at_att, desc, &isnull);
	if (isnull || DatumGetTimestampTz(value) > seen_at)
		goto done;
	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rules != NULL ||
		rel->rd_rel->relrowsecurity || rel->rd_tableam != GetHeapamTableAmRoutine() ||
		!triggers_allow_touch(rel, seen_at_att) ||
		pg_class_aclcheck(RelationGetRelid(rel), GetUserId(), ACL_UPDATE) != ACLCHECK_OK)
		goto done;
	/* The executor's check that a published table can be updated. */
	CheckCmdReplicaIdentity(rel, CMD_UPDATE);

	/* The table is RowExclusiveLock'ed by allot_begin_host_request. */
	value = TimestampTzGetDatum(seen_at);
	isnull = false;
	column = seen_at_att;
	newrow = heap_modify_tuple_by_cols(row, desc, 1, &column, &value, &isnull);
	slot = MakeSingleTupleTableSlot(desc, &TTSOpsHeapTuple);
	ExecStoreHeapTuple(newrow, slot, false);

	result = table_tuple_update(rel, &row->t_self, slot, GetCurrentCommandId(true),
								InvalidSnapshot, InvalidSnapshot, true,
								&tmfd, &lockmode, &update_indexes);
	/* Any other outcome is the SPI statement's to meet (and report). */
	if (result == TM_Ok)
	{
		touched = true;
#if PG_VERSION_NUM >= 160000
		if (update_indexes != TU_None)
			insert_index_entries(rel, slot, update_indexes == TU_Summarizing);
#else
		if (update_indexes)
			insert_index_entries(rel, slot, false);
#endif
	}
	ExecDropSingleTupleTableSlot(slot);

done:
	allot_table_close(&t);
	return touched;
}

#else							/* PostgreSQL 13: the UPDATE always */

bool
allot_touch_assignment(HeapTuple row, TimestampTz seen_at)
{
	(void) row;
	(void) seen_at;
	return false;
}

#endif
