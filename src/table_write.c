/*
 * table_write.c: the writes an assignment request makes without the
 * executor, where the executor would do nothing more than the write.
 *
 *   allot_touch_assignment      a repeat's seen_at
 *   allot_switch_assignment     a switch's assignment, and the usage rows its
 *                               trigger would move
 *   allot_write_host            a switch's host.last_workload_id, and where
 *                               the host's assignment now is
 *   allot_add_usage             a switch's threads added to a usage row
 *
 * Through SPI each is an UPDATE statement, and most of its cost is the
 * executor concluding that there is nothing to do: at every execution each
 * CHECK constraint of the table and each trigger's WHEN clause is read back
 * from its stored text, compiled and evaluated (allot.host has eleven
 * CHECKs), the foreign keys' checks run a query each, and the row the
 * request has just read by its key is looked up by its key again.  Here
 * that row, at the TID the read found, is updated as the executor would:
 * the table AM's update (with its row lock, its wait for a concurrent
 * writer and its SSI checks), then new index entries when the new version
 * is not heap-only.
 *
 * What the executor would do besides is worked out once per table and set
 * of written columns, and again after any change to the table's definition
 * (a relcache invalidation: a new trigger, constraint, column, index, rule
 * or policy), and kept (WritePlan):
 *	- no rule, no row security, a heap table, no deferred or exclusion
 *	  index, and no stored generated column that depends on a written one
 *	  (an UPDATE would compute it again);
 *	- no trigger that an UPDATE of these columns fires, but those it skips
 *	  (a column list without them; a foreign key's whose columns do not
 *	  change), the one whose WHEN clause the caller knows to be false
 *	  (quiet_trigger), and the check of a foreign key on a written column,
 *	  which is done here as its trigger does it: the referenced row looked
 *	  up by its key and locked FOR KEY SHARE;
 *	- the CHECK constraints whose result may differ on the new row (not
 *	  validated, or reading a written column or the whole row, or calling a
 *	  volatile function), compiled once and evaluated on the new row; the
 *	  others hold for the old row, whose other columns the new row keeps.
 * Whenever the executor would do more, or a CHECK fails, or the row is no
 * longer as read, or the calling role may not update the table, nothing is
 * written and false is returned: the caller runs the UPDATE, which does
 * everything (and reports a violation as it always did).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "common/int.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "optimizer/optimizer.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "entry.h"
#include "table_read.h"
#include "table_write.h"
#include "signal.h"

#if PG_VERSION_NUM >= 140000	/* ExecInsertIndexTuples takes the result relation */

#define MAX_WRITTEN 6

/* A write of some columns of one of allot's tables, as a caller asks for it. */
typedef struct InPlaceWrite
{
	const char *table;			/* allot.<table> */
	int			ncols;
	const char *columns[MAX_WRITTEN];
	Oid			types[MAX_WRITTEN];
	const char *quiet_trigger;	/* its WHEN is false for this write, or NULL */
	/* The row as read allows this write (NULL: any does). */
	bool		(*row_ok) (AllotTable *t, HeapTuple row, const Datum *values);
	/*
	 * allot's own AFTER trigger (of each row or of the statement, without
	 * arguments) whose work after_write does itself, or NULL
	 */
	const char *done_trigger;
	const char *done_function;	/* its function, in schema allot */
	void		(*after_write) (AllotTable *t, HeapTuple old_row, HeapTuple new_row);
} InPlaceWrite;

/* A foreign key on a written column, checked here as its trigger would. */
typedef struct KeyCheck
{
	AttrNumber	column;			/* in the written table */
	Oid			referenced;		/* the referenced table */
	Oid			key_index;		/* its unique index on the referenced column */
	AttrNumber	key_column;		/* the referenced column */
	Oid			eq_proc;		/* the = of the key's type, for the index scan */
} KeyCheck;

#define MAX_KEY_CHECKS 4

/* What writing these columns of this table takes besides the write. */
typedef struct WritePlan
{
	const InPlaceWrite *write;
	Oid			relid;
	bool		ok;				/* false: always through the UPDATE */
	AttrNumber	atts[MAX_WRITTEN];
	int			nchecks;
	ExprState **checks;			/* CHECKs that may differ on the new row */
	int			nkeys;
	KeyCheck	keys[MAX_KEY_CHECKS];
} WritePlan;

#define MAX_WRITE_PLANS 8

static MemoryContext plans_context = NULL;
static WritePlan plans[MAX_WRITE_PLANS];
static int	n_plans = 0;

/*
 * A write under way uses its plan's compiled CHECKs, and invalidations can
 * arrive in the middle of it (whatever opens a relation it had not locked
 * yet accepts them: the publication check, the foreign key's lookup, the
 * index entries).  Their memory is then freed only once no write is under
 * way (test/t/050_concurrency.pl's ANALYZE crashed a backend in ExecCheck
 * on freed plans).
 */
static int	writes_under_way = 0;
static bool plans_forgotten = false;	/* plans_context to be reset */

static void
reset_plans(void)
{
	n_plans = 0;
	if (writes_under_way > 0)
		plans_forgotten = true;
	else
	{
		MemoryContextReset(plans_context);
		plans_forgotten = false;
	}
}

/* A change to the definition of a table forgets every plan. */
static void
forget_plans(Datum arg, Oid relid)
{
	for (int i = 0; i < n_plans; i++)
		if (relid == InvalidOid || plans[i].relid == relid)
		{
			reset_plans();
			return;
		}
}

static bool
writes(const WritePlan *p, AttrNumber att)
{
	for (int i = 0; i < p->write->ncols; i++)
		if (p->atts[i] == att)
			return true;
	return false;
}

/* Does this set of columns (pull_varattnos' numbering) meet the written ones? */
static bool
reads_written(const WritePlan *p, Bitmapset *attnos)
{
	if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attnos))
		return true;			/* the whole row */
	for (int i = 0; i < p->write->ncols; i++)
		if (bms_is_member(p->atts[i] - FirstLowInvalidHeapAttributeNumber, attnos))
			return true;
	return false;
}

/* A foreign key's columns (conkey or confkey) as attribute numbers. */
static int
key_columns(Datum keys, AttrNumber *out, int max)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	deconstruct_array(DatumGetArrayTypeP(keys), INT2OID, 2, true, TYPALIGN_SHORT,
					  &elems, &nulls, &n);
	for (int i = 0; i < n && i < max; i++)
		out[i] = DatumGetInt16(elems[i]);
	return n;
}

/* The columns of a foreign key, on this side of it, meet the written ones? */
static bool
key_written(const WritePlan *p, Datum keys)
{
	AttrNumber	atts[INDEX_MAX_KEYS];
	int			n = key_columns(keys, atts, INDEX_MAX_KEYS);

	for (int i = 0; i < n && i < INDEX_MAX_KEYS; i++)
		if (writes(p, atts[i]))
			return true;
	return false;
}

/* The = between a unique index's first column and a value of this type. */
static Oid
key_equality(Oid index_oid, Oid value_type)
{
	Relation	index = index_open(index_oid, AccessShareLock);
	Oid			op = get_opfamily_member(index->rd_opfamily[0], index->rd_opcintype[0],
										 value_type, BTEqualStrategyNumber);

	index_close(index, AccessShareLock);
	return OidIsValid(op) ? get_opcode(op) : InvalidOid;
}

/*
 * An UPDATE trigger: skipped by the executor for this write, or a foreign
 * key's check this write makes itself (added to p->keys); false if the
 * executor would run it.
 */
static bool
trigger_passes(WritePlan *p, const Trigger *tg)
{
	HeapTuple	con;
	Form_pg_constraint c;
	bool		isnull;
	bool		passes = false;

	if (!TRIGGER_FOR_UPDATE(tg->tgtype) || tg->tgenabled == TRIGGER_DISABLED)
		return true;
	if (tg->tgnattr > 0)
	{
		bool		named = false;

		for (int k = 0; k < tg->tgnattr; k++)
			named = named || writes(p, tg->tgattr[k]);
		if (!named)
			return true;		/* UPDATE OF other columns */
	}
	if (p->write->quiet_trigger != NULL && strcmp(tg->tgname, p->write->quiet_trigger) == 0)
		return true;
	if (p->write->done_trigger != NULL && strcmp(tg->tgname, p->write->done_trigger) == 0 &&
		TRIGGER_FOR_AFTER(tg->tgtype) && tg->tgnargs == 0)
	{
		/* Still allot's own function, whose work after_write does. */
		char	   *name = get_func_name(tg->tgfoid);
		Oid			nsp = get_func_namespace(tg->tgfoid);

		return name != NULL && strcmp(name, p->write->done_function) == 0 &&
			nsp == get_namespace_oid("allot", true);
	}
	if (!tg->tgisinternal || !OidIsValid(tg->tgconstraint))
		return false;

	/* A foreign key's: it runs only if its columns on this side change. */
	con = SearchSysCache1(CONSTROID, ObjectIdGetDatum(tg->tgconstraint));
	if (!HeapTupleIsValid(con))
		return false;
	c = (Form_pg_constraint) GETSTRUCT(con);
	if (c->contype == CONSTRAINT_FOREIGN && c->conrelid == p->relid &&
		c->confrelid != p->relid && tg->tgfoid == F_RI_FKEY_CHECK_UPD)
	{
		Datum		keys = SysCacheGetAttr(CONSTROID, con, Anum_pg_constraint_conkey, &isnull);
		Datum		fkeys = SysCacheGetAttr(CONSTROID, con, Anum_pg_constraint_confkey, &isnull);
		AttrNumber	column,
					key_column;

		if (!key_written(p, keys))
			passes = true;
		else if (key_columns(keys, &column, 1) == 1 && key_columns(fkeys, &key_column, 1) == 1 &&
				 p->nkeys < MAX_KEY_CHECKS && c->confmatchtype == FKCONSTR_MATCH_SIMPLE)
		{
			/* A one-column key on a written column: checked here. */
			KeyCheck   *k = &p->keys[p->nkeys++];

			k->column = column;
			k->referenced = c->confrelid;
			k->key_index = c->conindid;
			k->key_column = key_column;
			k->eq_proc = key_equality(c->conindid, get_atttype(p->relid, k->column));
			passes = OidIsValid(k->eq_proc);
		}
	}
	else if (c->contype == CONSTRAINT_FOREIGN && c->confrelid == p->relid &&
			 c->conrelid != p->relid)
	{
		/* The referenced side: it runs only if the key changes. */
		Datum		fkeys = SysCacheGetAttr(CONSTROID, con, Anum_pg_constraint_confkey, &isnull);

		passes = !key_written(p, fkeys);
	}
	ReleaseSysCache(con);
	return passes;
}

/* Work out what writing w's columns of rel takes (see the top of the file). */
static void
plan_write(WritePlan *p, Relation rel, AllotTable *t)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleConstr *constr = desc->constr;
	TriggerDesc *td;
	List	   *indexes;
	ListCell   *lc;

	p->ok = false;
	for (int i = 0; i < p->write->ncols; i++)
		p->atts[i] = allot_column(t, p->write->columns[i], p->write->types[i]);
	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rules != NULL ||
		rel->rd_rel->relrowsecurity || rel->rd_tableam != GetHeapamTableAmRoutine())
		return;

	/*
	 * Triggers, from a copy: looking up a trigger's function or constraint
	 * may take in an invalidation of the table, and the relcache then makes
	 * its triggers anew (as the executor knows: it copies them too).  The
	 * copy lives in the plans' memory.
	 */
	td = CopyTriggerDesc(rel->trigdesc);
	if (td != NULL)
	{
		if (td->trig_update_instead_row || td->trig_update_new_table ||
			td->trig_update_old_table)
			return;
		for (int i = 0; i < td->numtriggers; i++)
			if (!trigger_passes(p, &td->triggers[i]))
				return;
	}

	/* Indexes: entries an UPDATE makes at once, as here; no deferred checks. */
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		bool		plain = index->rd_index->indimmediate && !index->rd_index->indisexclusion;

		index_close(index, AccessShareLock);
		if (!plain)
			return;
	}

	if (constr != NULL)
	{
		/* Stored generated columns an UPDATE of these columns computes again. */
		for (int i = 0; i < constr->num_defval; i++)
		{
			Bitmapset  *attnos = NULL;

			if (TupleDescAttr(desc, constr->defval[i].adnum - 1)->attgenerated == '\0')
				continue;
			pull_varattnos(stringToNode(constr->defval[i].adbin), 1, &attnos);
			if (reads_written(p, attnos))
				return;
		}

		/* The CHECKs whose result may differ on the new row, compiled. */
		p->checks = palloc(sizeof(ExprState *) * (constr->num_check + 1));
		for (int i = 0; i < constr->num_check; i++)
		{
			Expr	   *check = stringToNode(constr->check[i].ccbin);
			Bitmapset  *attnos = NULL;

			pull_varattnos((Node *) check, 1, &attnos);
			if (constr->check[i].ccvalid && !reads_written(p, attnos) &&
				!contain_volatile_functions((Node *) check))
				continue;
			p->checks[p->nchecks++] = ExecInitExpr(expression_planner(check), NULL);
		}
	}
	p->ok = true;
}

/* The plan for this write of rel, worked out on first use. */
static const WritePlan *
write_plan(const InPlaceWrite *w, Relation rel, AllotTable *t)
{
	static bool callback_registered = false;
	Oid			relid = RelationGetRelid(rel);
	WritePlan  *p;
	MemoryContext old;

	for (int i = 0; i < n_plans; i++)
		if (plans[i].write == w && plans[i].relid == relid)
			return &plans[i];
	if (plans_context == NULL)
		plans_context = AllocSetContextCreate(TopMemoryContext, "allot in-place writes",
											  ALLOCSET_SMALL_SIZES);
	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(forget_plans, (Datum) 0);
		callback_registered = true;
	}
	if (n_plans == MAX_WRITE_PLANS)
		reset_plans();
	p = &plans[n_plans];
	memset(p, 0, sizeof(*p));
	p->write = w;
	p->relid = relid;
	old = MemoryContextSwitchTo(plans_context);
	PG_TRY();
	{
		plan_write(p, rel, t);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	n_plans++;
	return p;
}

/*
 * What a foreign key's check does: the referenced row found by its key
 * under the latest snapshot, and locked FOR KEY SHARE (at once if this
 * transaction holds it already).  False if there is none, or it was
 * changed since: the UPDATE's own check then says what it says.
 */
static bool
lock_referenced(const KeyCheck *k, Datum value)
{
	Relation	ref = table_open(k->referenced, RowShareLock);
	Relation	index = index_open(k->key_index, AccessShareLock);
	TupleTableSlot *slot = table_slot_create(ref, NULL);
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	ScanKeyData key;
	IndexScanDesc scan;
	bool		locked = false;

	ScanKeyInit(&key, 1, BTEqualStrategyNumber, k->eq_proc, value);
	scan = index_beginscan(ref, index, snap, 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		TM_FailureData tmfd;

		locked = table_tuple_lock(ref, &slot->tts_tid, snap, slot, GetCurrentCommandId(false),
								  LockTupleKeyShare, LockWaitBlock, 0, &tmfd) == TM_Ok;
	}
	index_endscan(scan);
	UnregisterSnapshot(snap);
	ExecDropSingleTupleTableSlot(slot);
	index_close(index, NoLock);
	table_close(ref, NoLock);
	return locked;
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

/* Do the plan's CHECKs hold for the new row in slot? */
static bool
checks_hold(const WritePlan *p, TupleTableSlot *slot)
{
	ExprContext *econtext;
	bool		hold = true;

	if (p->nchecks == 0)
		return true;
	econtext = CreateStandaloneExprContext();
	econtext->ecxt_scantuple = slot;
	for (int i = 0; i < p->nchecks && hold; i++)
		hold = ExecCheck(p->checks[i], econtext);
	FreeExprContext(econtext, true);
	return hold;
}

/*
 * Write values into w's columns of row, a row of allot.<w->table> read in
 * this request (t_self where it was found), as an UPDATE of those columns
 * alone would; false, having written nothing, where the UPDATE would do
 * more than that (see the top of the file).  The caller holds the table's
 * RowExclusiveLock.
 */
static bool
write_guts(const InPlaceWrite *w, AllotTable *open, HeapTuple row, const Datum *values,
		   const bool *nulls, ItemPointer root, TM_Result *outcome)
{
	AllotTable	own;
	AllotTable *t = open;
	Relation	rel;
	TupleDesc	desc;
	WritePlan	plan;
	const WritePlan *p = &plan;
	int			columns[MAX_WRITTEN];
	HeapTuple	newrow = NULL;
	TupleTableSlot *slot = NULL;
	TM_Result	result;
	TM_FailureData tmfd;
	LockTupleMode lockmode;
	bool		written = false;
#if PG_VERSION_NUM >= 160000
	TU_UpdateIndexes update_indexes;
#else
	bool		update_indexes;
#endif

	*outcome = TM_Invisible;	/* nothing tried */
	if (t == NULL)
	{
		allot_table_open(&own, w->table, NULL, false);
		t = &own;
	}
	rel = t->rel;
	desc = RelationGetDescr(rel);
	/* A copy: plans[] may be planned again during the write; not its memory. */
	plan = *write_plan(w, rel, t);
	if (!p->ok || (w->row_ok != NULL && !w->row_ok(t, row, values)) ||
		!allot_table_privilege(RelationGetRelid(rel), ACL_UPDATE))
		goto done;
	for (int i = 0; i < w->ncols; i++)
	{
		columns[i] = p->atts[i];
		if (nulls[i] && TupleDescAttr(desc, p->atts[i] - 1)->attnotnull)
			goto done;
	}
	/* The executor's check that a published table can be updated. */
	CheckCmdReplicaIdentity(rel, CMD_UPDATE);

	newrow = heap_modify_tuple_by_cols(row, desc, w->ncols, columns, (Datum *) values,
									   (bool *) nulls);
	slot = MakeSingleTupleTableSlot(desc, &TTSOpsHeapTuple);
	ExecStoreHeapTuple(newrow, slot, false);
	if (!checks_hold(p, slot))
		goto done;
	for (int i = 0; i < p->nkeys; i++)
	{
		bool		isnull;
		Datum		value = slot_getattr(slot, p->keys[i].column, &isnull);

		if (!isnull && !lock_referenced(&p->keys[i], value))
			goto done;
	}

	result = table_tuple_update(rel, &row->t_self, slot, GetCurrentCommandId(true),
								InvalidSnapshot, InvalidSnapshot, true,
								&tmfd, &lockmode, &update_indexes);
	*outcome = result;
	/* Any other outcome is the UPDATE's to meet (and report). */
	if (result == TM_Ok)
	{
		written = true;
#if PG_VERSION_NUM >= 160000
		if (update_indexes != TU_None)
			insert_index_entries(rel, slot, update_indexes == TU_Summarizing);
		/* Not heap-only: the new version starts a chain of its own. */
		if (update_indexes == TU_All && root != NULL)
			*root = slot->tts_tid;
#else
		if (update_indexes)
			insert_index_entries(rel, slot, false);
		if (update_indexes && root != NULL)
			*root = slot->tts_tid;
#endif
		if (w->after_write != NULL)
			w->after_write(t, row, newrow);
	}

done:
	if (slot != NULL)
		ExecDropSingleTupleTableSlot(slot);
	if (t != open)
		allot_table_close(t);
	return written;
}

/*
 * write_guts, its memory safe from invalidations; *outcome (unless NULL) is
 * the table AM's answer, TM_Invisible where nothing was tried.
 */
static bool
write_in_place_as(const InPlaceWrite *w, AllotTable *open, HeapTuple row, const Datum *values,
				  const bool *nulls, ItemPointer root, TM_Result *outcome)
{
	volatile bool written = false;
	TM_Result	ignored;

	writes_under_way++;
	PG_TRY();
	{
		written = write_guts(w, open, row, values, nulls, root,
							 outcome != NULL ? outcome : &ignored);
	}
	PG_CATCH();
	{
		if (--writes_under_way == 0 && plans_forgotten)
			reset_plans();
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (--writes_under_way == 0 && plans_forgotten)
		reset_plans();
	return written;
}

static bool
write_in_place(const InPlaceWrite *w, AllotTable *open, HeapTuple row, const Datum *values,
			   const bool *nulls, ItemPointer root)
{
	return write_in_place_as(w, open, row, values, nulls, root, NULL);
}

/*
 * A repeat: seen_at alone.  assignment_watch_update's WHEN (the row counts
 * again, or its seen_at goes back) is false for a counted row whose seen_at
 * does not go back, which the caller's row must be; the usage trigger names
 * its columns, and seen_at is not one.
 */
static bool
counted_and_later(AllotTable *t, HeapTuple row, const Datum *values)
{
	TupleDesc	desc = RelationGetDescr(t->rel);
	bool		isnull;
	Datum		counted = heap_getattr(row, allot_column(t, "counted", BOOLOID), desc, &isnull);
	Datum		seen_at;

	if (isnull || !DatumGetBool(counted))
		return false;
	seen_at = heap_getattr(row, allot_column(t, "seen_at", TIMESTAMPTZOID), desc, &isnull);
	return !isnull && DatumGetTimestampTz(seen_at) <= DatumGetTimestampTz(values[0]);
}

static const InPlaceWrite touch_write = {
	"assignment", 1, {"seen_at"}, {TIMESTAMPTZOID}, "assignment_watch_update", counted_and_later,
	NULL, NULL, NULL
};

bool
allot_touch_assignment(AllotTable *assignment, HeapTuple row, TimestampTz seen_at,
					   ItemPointer root)
{
	Datum		value = TimestampTzGetDatum(seen_at);
	bool		null = false;

	return row != NULL && write_in_place(&touch_write, assignment, row, &value, &null, root);
}

/*
 * A switch of a counted assignment whose seen_at does not go back (so that
 * assignment_watch_update's WHEN is false): the whole assignment, as
 * assign_commit.c's UPDATE writes it.  Its foreign key to the new workload
 * is checked here; the usage trigger's work, moving the host's threads
 * between two usage rows, is done right after the write, as the trigger
 * would do it at the statement's end (allot_usage_moved).
 */
static bool
counted_and_later_switch(AllotTable *t, HeapTuple row, const Datum *values)
{
	return counted_and_later(t, row, &values[3]);
}

static void
move_usage(AllotTable *t, HeapTuple old_row, HeapTuple new_row)
{
	allot_usage_moved(old_row, new_row, RelationGetDescr(t->rel));
}

static const InPlaceWrite switch_write = {
	"assignment", 6,
	{"workload_id", "threads", "focus", "seen_at", "counted", "assigned_at"},
	{INT8OID, INT4OID, BOOLOID, TIMESTAMPTZOID, BOOLOID, TIMESTAMPTZOID},
	"assignment_watch_update", counted_and_later_switch,
	"assignment_usage_change", "assignment_usage_trigger", move_usage
};

bool
allot_switch_assignment(AllotTable *assignment, HeapTuple row, int64 workload_id,
						int32 threads, bool focus, TimestampTz now, ItemPointer root)
{
	bool		isnull;
	Datum		old_workload;
	Datum		assigned_at;
	Datum		values[MAX_WRITTEN];
	bool		nulls[MAX_WRITTEN] = {false};

	if (row == NULL)
		return false;
	old_workload = heap_getattr(row, allot_column(assignment, "workload_id", INT8OID),
								RelationGetDescr(assignment->rel), &isnull);
	assigned_at = heap_getattr(row, allot_column(assignment, "assigned_at", TIMESTAMPTZOID),
							   RelationGetDescr(assignment->rel), &isnull);
	values[0] = Int64GetDatum(workload_id);
	values[1] = Int32GetDatum(threads);
	values[2] = BoolGetDatum(focus);
	values[3] = TimestampTzGetDatum(now);
	values[4] = BoolGetDatum(true);
	/* assigned_at = CASE WHEN workload_id = $2 THEN assigned_at ELSE $5 END */
	values[5] = !isnull && DatumGetInt64(old_workload) == workload_id ?
		assigned_at : TimestampTzGetDatum(now);
	return write_in_place(&switch_write, assignment, row, values, nulls, root);
}

/*
 * The host's row: its last_workload_id (a switch), a foreign key to
 * allot.workload, whose check is made here: the workload's row locked FOR
 * KEY SHARE (the assignment written just before, on the same workload,
 * holds it already); its assignment_tid (where its assignment now is), which
 * nothing checks; or both.
 */
static const InPlaceWrite last_workload_write = {
	"host", 1, {"last_workload_id"}, {INT8OID}, NULL, NULL, NULL, NULL, NULL
};
static const InPlaceWrite hint_write = {
	"host", 1, {"assignment_tid"}, {TIDOID}, NULL, NULL, NULL, NULL, NULL
};
static const InPlaceWrite last_workload_hint_write = {
	"host", 2, {"last_workload_id", "assignment_tid"}, {INT8OID, TIDOID},
	NULL, NULL, NULL, NULL, NULL
};

bool
allot_write_host(AllotTable *host, HeapTuple row, const int64 *last_workload_id,
				 ItemPointer hint)
{
	Datum		values[2];
	bool		nulls[2] = {false, false};
	const InPlaceWrite *w;
	int			n = 0;

	if (last_workload_id != NULL)
		values[n++] = Int64GetDatum(*last_workload_id);
	if (hint != NULL)
	{
		nulls[n] = !ItemPointerIsValid(hint);
		values[n++] = PointerGetDatum(hint);
	}
	w = hint == NULL ? &last_workload_write :
		last_workload_id == NULL ? &hint_write : &last_workload_hint_write;
	return row != NULL && n > 0 && write_in_place(w, host, row, values, nulls, NULL);
}

/*
 * A usage row's counters: what the UPDATE of usage.c adds, its statement
 * trigger's work (the signal that every backend's copy of the usage is
 * stale: usage_cache.c) done here, for this row only: a copy reads it
 * again, not the whole table.
 */
static void
signal_usage(AllotTable *t, HeapTuple old_row, HeapTuple new_row)
{
	bool		isnull;
	Datum		workload = heap_getattr(new_row, allot_column(t, "workload_id", INT8OID),
										RelationGetDescr(t->rel), &isnull);

	(void) old_row;
	if (isnull)
		allot_signal_readers(RelationGetNamespace(t->rel), "workload_usage_signal");
	else
		allot_signal_part(RelationGetNamespace(t->rel), "workload_usage_signal",
						  DatumGetInt64(workload));
}

static const InPlaceWrite usage_write = {
	"workload_usage", 3, {"threads", "focus_threads", "hosts"}, {INT8OID, INT8OID, INT4OID},
	NULL, NULL, "workload_usage_signal", "usage_signal_trigger", signal_usage
};

/*
 * Tries of allot_add_usage on a row other transactions keep changing: each
 * reads the row as the last of them left it, as the UPDATE's own recheck
 * does.  On a farm where most requests switch, one write in six met a row
 * changed since its read; after that many, the UPDATE waits its turn.
 */
#define USAGE_WRITE_TRIES 4

bool
allot_add_usage(int64 workload_id, int64 threads, int64 focus_threads, int32 hosts)
{
	AllotTable	t;
	Oid			relid;
	TM_Result	outcome = TM_Updated;
	bool		written = false;

	/* Under one snapshot a row changed since is the UPDATE's error to raise. */
	if (IsolationUsesXactSnapshot())
		return false;
	relid = allot_lock_table("workload_usage", RowExclusiveLock, true);
	if (!OidIsValid(relid) || !allot_table_privilege(relid, ACL_SELECT))
		return false;
	allot_table_open(&t, "workload_usage", "workload_usage_pkey", false);
	for (int tries = 0; !written && outcome == TM_Updated && tries < USAGE_WRITE_TRIES; tries++)
	{
		Snapshot	snap = allot_read_snapshot(true);
		TupleDesc	desc = RelationGetDescr(t.rel);
		HeapTuple	row;
		Datum		values[3];
		bool		nulls[3] = {false, false, false};
		bool		isnull[3];
		int64		th,
					ft;
		int32		h;

		outcome = TM_Invisible;
		if (!allot_fetch_by_key(&t, workload_id, snap))
		{
			UnregisterSnapshot(snap);
			break;				/* no row yet: the UPDATE's INSERT makes it */
		}
		UnregisterSnapshot(snap);
		row = ExecCopySlotHeapTuple(t.slot);
		row->t_self = t.slot->tts_tid;
		th = DatumGetInt64(heap_getattr(row, allot_column(&t, "threads", INT8OID), desc, &isnull[0]));
		ft = DatumGetInt64(heap_getattr(row, allot_column(&t, "focus_threads", INT8OID), desc,
										&isnull[1]));
		h = DatumGetInt32(heap_getattr(row, allot_column(&t, "hosts", INT4OID), desc, &isnull[2]));
		/* NULLs and overflows: the UPDATE's to meet, and report. */
		if (isnull[0] || isnull[1] || isnull[2] ||
			pg_add_s64_overflow(th, threads, &th) ||
			pg_add_s64_overflow(ft, focus_threads, &ft) ||
			pg_add_s32_overflow(h, hosts, &h))
			break;
		values[0] = Int64GetDatum(th);
		values[1] = Int64GetDatum(ft);
		values[2] = Int32GetDatum(h);
		written = write_in_place_as(&usage_write, &t, row, values, nulls, NULL, &outcome);
		heap_freetuple(row);
	}
	allot_table_close(&t);
	return written;
}

#else							/* PostgreSQL 13: the UPDATE always */

bool
allot_add_usage(int64 workload_id, int64 threads, int64 focus_threads, int32 hosts)
{
	(void) workload_id;
	(void) threads;
	(void) focus_threads;
	(void) hosts;
	return false;
}

bool
allot_touch_assignment(AllotTable *assignment, HeapTuple row, TimestampTz seen_at,
					   ItemPointer root)
{
	(void) assignment;
	(void) row;
	(void) seen_at;
	(void) root;
	return false;
}

bool
allot_switch_assignment(AllotTable *assignment, HeapTuple row, int64 workload_id,
						int32 threads, bool focus, TimestampTz now, ItemPointer root)
{
	(void) assignment;
	(void) row;
	(void) workload_id;
	(void) threads;
	(void) focus;
	(void) now;
	(void) root;
	return false;
}

bool
allot_write_host(AllotTable *host, HeapTuple row, const int64 *last_workload_id,
				 ItemPointer hint)
{
	(void) host;
	(void) row;
	(void) last_workload_id;
	(void) hint;
	return false;
}

#endif
