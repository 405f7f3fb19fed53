/*
 * table_read.c: reading a few rows of allot's tables without the executor.
 *
 * A repeat assignment reads the host and its assignment by primary key and
 * the small usage table whole.  Through SPI, each of those reads is a
 * statement: a portal, executor start-up over its plan tree, a projection,
 * the rows copied into a tuple table; for a row found by key that costs
 * several times the read.  These helpers do what the executor does for such
 * a read and nothing else: open the table (and its key index) under
 * AccessShareLock after the privilege check a SELECT would make, scan with
 * the snapshot the caller chooses, and leave the row in a slot, whose
 * columns the caller takes by number.
 *
 * Columns are found by name and type in the table's descriptor, so a
 * library serves every schema version that has the columns it reads, and a
 * column an operator changed the type of is an error, never a misread.
 * Only reads come here.  Every write goes through SPI, so that triggers,
 * constraints and indexes see it, but one: a repeat's seen_at, where the
 * executor has nothing to do besides the write (table_write.c).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "table_read.h"

Snapshot
allot_read_snapshot(bool fresh)
{
	if (!fresh)
		return RegisterSnapshot(GetActiveSnapshot());
	/* What SPI does before a statement that may write. */
	CommandCounterIncrement();
	return RegisterSnapshot(GetTransactionSnapshot());
}

/*
 * The tables and indexes a request opens, by name, with their OIDs once
 * looked up: a lookup by name (the schema and its USAGE check, then the
 * name) cost more than the open.  A prepared statement does not look its
 * names up again either.  Any relcache invalidation of one of them, or of
 * everything, forgets them all; a DROP or a rename sends one, so such a
 * table is looked up again.
 */
#define MAX_KNOWN_RELATIONS 16

typedef struct KnownRelation
{
	const char *name;			/* a string literal of a caller */
	Oid			relid;
} KnownRelation;

static KnownRelation known[MAX_KNOWN_RELATIONS];
static int	n_known = 0;
static bool callback_registered = false;

/*
 * Column numbers found by allot_column, by table, column name (a string
 * literal of a caller) and type; forgotten with the relations.
 */
#define MAX_KNOWN_COLUMNS 64

typedef struct KnownColumn
{
	Oid			relid;
	const char *column;
	Oid			type;
	AttrNumber	attnum;
} KnownColumn;

static KnownColumn known_columns[MAX_KNOWN_COLUMNS];
static int	n_known_columns = 0;

/*
 * Privileges allot_table_privilege found a role to have on a table.  The
 * check reads the table's ACL and the role's memberships at every call; what
 * it found holds until the table's ACL or owner changes (a relcache
 * invalidation of it, forgotten with the relations) or any role or
 * membership does (pg_authid, pg_auth_members: the events on which
 * PostgreSQL forgets its own cache of memberships).  Only privileges held
 * are kept: a refusal is an error, or a write through SQL, which checks
 * again.
 */
#define MAX_KNOWN_PRIVILEGES 16

typedef struct KnownPrivilege
{
	Oid			relid;
	Oid			role;
	AclMode		mode;
} KnownPrivilege;

static KnownPrivilege known_privileges[MAX_KNOWN_PRIVILEGES];
static int	n_known_privileges = 0;

static void
forget_privileges(Datum arg, int cacheid, uint32 hashvalue)
{
	n_known_privileges = 0;
}

static void
forget_relations(Datum arg, Oid relid)
{
	for (int i = 0; i < n_known_privileges; i++)
		if (relid == InvalidOid || known_privileges[i].relid == relid)
		{
			n_known_privileges = 0;
			break;
		}
	for (int i = 0; i < n_known_columns; i++)
		if (relid == InvalidOid || known_columns[i].relid == relid)
		{
			n_known_columns = 0;
			break;
		}
	for (int i = 0; i < n_known; i++)
		if (relid == InvalidOid || known[i].relid == relid)
		{
			n_known = 0;
			return;
		}
}

/*
 * allot.<name>, locked in mode; InvalidOid if it does not exist and
 * missing_ok.  A known OID is locked, and still known after the lock (whose
 * acquisition processes pending invalidations) only if nothing changed it.
 */
Oid
allot_lock_table(const char *name, LOCKMODE mode, bool missing_ok)
{
	Oid			relid;

	for (int i = 0; i < n_known; i++)
	{
		if (strcmp(known[i].name, name) != 0)
			continue;
		relid = known[i].relid;
		LockRelationOid(relid, mode);
		if (i < n_known && known[i].relid == relid)
			return relid;
		UnlockRelationOid(relid, mode);
		break;
	}

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(forget_relations, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHOID, forget_privileges, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, forget_privileges, (Datum) 0);
		callback_registered = true;
	}
	relid = RangeVarGetRelid(makeRangeVar("allot", (char *) name, -1),
							 mode, missing_ok);
	if (OidIsValid(relid) && n_known < MAX_KNOWN_RELATIONS)
	{
		known[n_known].name = name;
		known[n_known].relid = relid;
		n_known++;
	}
	return relid;
}

void
allot_table_open(AllotTable *t, const char *name, const char *key_index, bool missing_ok)
{
	Oid			relid = allot_lock_table(name, AccessShareLock, missing_ok);

	memset(t, 0, sizeof(*t));
	t->name = name;
	if (!OidIsValid(relid))
		return;
	/* The executor's check of a SELECT, as the calling role (or definer). */
	if (!allot_table_privilege(relid, ACL_SELECT))
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, psprintf("allot.%s", name));
	t->rel = table_open(relid, NoLock);
	t->slot = table_slot_create(t->rel, NULL);
	if (key_index != NULL)
		allot_table_open_key(t, key_index);
}

void
allot_table_open_key(AllotTable *t, const char *key_index)
{
	if (t->pkey != NULL)
		return;
	/* By name, as the extension's scripts create it: <table>_pkey. */
	t->pkey = allot_index_open(key_index);
	if (t->pkey->rd_index->indrelid != RelationGetRelid(t->rel) ||
		IndexRelationGetNumberOfKeyAttributes(t->pkey) != 1 ||
		TupleDescAttr(RelationGetDescr(t->pkey), 0)->atttypid != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("allot.%s is not a one-column bigint key of allot.%s", key_index, t->name),
				 errhint("allot's tables and keys are created by the extension; do not change them.")));
}

void
allot_table_close(AllotTable *t)
{
	if (t->rel == NULL)
		return;
	ExecDropSingleTupleTableSlot(t->slot);
	/* Locks are kept to the end of the transaction, as the executor does. */
	if (t->pkey != NULL)
		index_close(t->pkey, NoLock);
	table_close(t->rel, NoLock);
	t->rel = NULL;
}

bool
allot_table_privilege(Oid relid, AclMode mode)
{
	Oid			role = GetUserId();

	/* The table is locked, so a GRANT or REVOKE on it has been heard of. */
	for (int i = 0; i < n_known_privileges; i++)
		if (known_privileges[i].relid == relid && known_privileges[i].role == role &&
			known_privileges[i].mode == mode)
			return true;
	if (pg_class_aclcheck(relid, role, mode) != ACLCHECK_OK)
		return false;
	if (callback_registered && n_known_privileges < MAX_KNOWN_PRIVILEGES)
	{
		known_privileges[n_known_privileges].relid = relid;
		known_privileges[n_known_privileges].role = role;
		known_privileges[n_known_privileges].mode = mode;
		n_known_privileges++;
	}
	return true;
}

Relation
allot_index_open(const char *name)
{
	return index_open(allot_lock_table(name, AccessShareLock, false), NoLock);
}

/* A column's number (or its absence), remembered until the table changes. */
static void
remember_column(Oid relid, const char *column, Oid type, AttrNumber attnum)
{
	if (n_known_columns >= MAX_KNOWN_COLUMNS || !callback_registered)
		return;
	known_columns[n_known_columns].relid = relid;
	known_columns[n_known_columns].column = column;
	known_columns[n_known_columns].type = type;
	known_columns[n_known_columns].attnum = attnum;
	n_known_columns++;
}

/* A column's number; InvalidAttrNumber if missing_ok and the table lacks it. */
static AttrNumber
find_column(const AllotTable *t, const char *column, Oid type, bool missing_ok)
{
	TupleDesc	desc = RelationGetDescr(t->rel);
	Oid			relid = RelationGetRelid(t->rel);

	/* The table is locked, so an ALTER of it has been heard of by now. */
	for (int i = 0; i < n_known_columns; i++)
		if (known_columns[i].column == column && known_columns[i].relid == relid &&
			known_columns[i].type == type &&
			(missing_ok || known_columns[i].attnum != InvalidAttrNumber))
			return known_columns[i].attnum;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (a->attisdropped || strcmp(NameStr(a->attname), column) != 0)
			continue;
		if (a->atttypid != type)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of allot.%s is of type %s, not %s",
							column, t->name, format_type_be(a->atttypid),
							format_type_be(type)),
					 errhint("allot's columns are defined by the extension; do not change their types.")));
		remember_column(relid, column, type, a->attnum);
		return a->attnum;
	}
	if (missing_ok)
	{
		/* An ALTER TABLE that adds it forgets this, as any change does. */
		remember_column(relid, column, type, InvalidAttrNumber);
		return InvalidAttrNumber;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("column \"%s\" of allot.%s does not exist", column, t->name),
			 errhint("Update the extension: ALTER EXTENSION allot UPDATE.")));
	return InvalidAttrNumber;	/* not reached */
}

AttrNumber
allot_column(const AllotTable *t, const char *column, Oid type)
{
	return find_column(t, column, type, false);
}

AttrNumber
allot_column_if_any(const AllotTable *t, const char *column, Oid type)
{
	return find_column(t, column, type, true);
}

/*
 * When a read by key prunes a heap page (its dead row versions removed, the
 * page compacted, a WAL record written).  PostgreSQL's index fetch prunes
 * whenever a page's free space is below the table's fillfactor reserve (a
 * tenth of the page at least).  Rows that are updated rather than inserted,
 * as an assignment is at every request, fill a page up to that reserve when
 * they are inserted; after a pruning, the first new version of any row on
 * the page takes it below the reserve again, so every read pruned: 0.93
 * prunings a request at 100,000 hosts, the 80 rows of the page judged and
 * moved each time, where a one-row UPDATE of a table with room on its pages
 * made 0.11.  Here a page is pruned once it could no longer take a few more
 * versions, so each pruning makes room for a dozen updates or more.  Reads
 * through the executor still prune as they always do.
 */
#define PRUNE_BELOW (BLCKSZ / 16)

/*
 * The visible version of the HOT chain that starts at root, into t's slot,
 * as heapam_index_fetch_tuple fetches it (the chain followed under a share
 * lock, SSI's checks made there), with that one difference: when to prune.
 * *all_dead is set when every version of the chain is dead to everyone.
 */
static bool
fetch_heap_chain(AllotTable *t, ItemPointer root, Snapshot snap, bool *all_dead)
{
	BufferHeapTupleTableSlot *bslot = (BufferHeapTupleTableSlot *) t->slot;
	Buffer		buf = ReadBuffer(t->rel, ItemPointerGetBlockNumber(root));
	Page		page = BufferGetPage(buf);
	ItemPointerData htid = *root;
	bool		found;

	/* Unlocked, as heap_page_prune_opt looks at it: a hint. */
	if (PageIsFull(page) || PageGetHeapFreeSpace(page) < PRUNE_BELOW)
		heap_page_prune_opt(t->rel, buf);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	found = heap_hot_search_buffer(&htid, t->rel, buf, snap, &bslot->base.tupdata,
								   all_dead, true);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	if (!found)
	{
		ReleaseBuffer(buf);
		return false;
	}
	t->slot->tts_tableOid = RelationGetRelid(t->rel);
	/* The slot takes our pin: the row stays where it is while held. */
	ExecStorePinnedBufferHeapTuple(&bslot->base.tupdata, t->slot, buf);
	t->root = *root;
	return true;
}

/* The heap's fetch through an index: each entry's chain, until one is seen. */
static bool
fetch_heap_by_key(AllotTable *t, IndexScanDesc scan, Snapshot snap)
{
	ItemPointer tid;

	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		bool		all_dead = false;

		if (fetch_heap_chain(t, tid, snap, &all_dead))
			return true;
		/* An entry whose chain is all dead is marked for the index to forget. */
		if (!scan->xactStartedInRecovery)
			scan->kill_prior_tuple = all_dead;
	}
	return false;
}

bool
allot_fetch_by_key(AllotTable *t, int64 key, Snapshot snap)
{
	ScanKeyData skey;
	IndexScanDesc scan;
	bool		found;

	ItemPointerSetInvalid(&t->root);
	ScanKeyInit(&skey, 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(key));
	scan = index_beginscan(t->rel, t->pkey, snap, 1, 0);
	index_rescan(scan, &skey, 1, NULL, 0);
	/* The slot keeps its own pin on the row's buffer past the scan's end. */
	if (t->rel->rd_tableam == GetHeapamTableAmRoutine() && TTS_IS_BUFFERTUPLE(t->slot))
		found = fetch_heap_by_key(t, scan, snap);
	else
		found = index_getnext_slot(scan, ForwardScanDirection, t->slot);
	index_endscan(scan);
	return found;
}

/*
 * Whether block is within rel's main fork.  The size is asked of the file
 * system (a system call) unless the size this backend last learnt says so:
 * a relation only shrinks by a truncation (VACUUM's, under an
 * AccessExclusiveLock), which first sends an invalidation that makes every
 * backend forget the size it knew, and which this backend has heard of once
 * it holds its lock on rel.  A size that is only out of date because rel
 * grew since errs on the safe side: the file system is asked.
 */
static bool
block_exists(Relation rel, BlockNumber block)
{
#if PG_VERSION_NUM >= 150000
	BlockNumber known = RelationGetSmgr(rel)->smgr_cached_nblocks[MAIN_FORKNUM];

	if (known != InvalidBlockNumber && block < known)
		return true;
#endif
	return block < RelationGetNumberOfBlocks(rel);
}

/*
 * The row of the HOT chain that starts at root (a hint a caller kept, which
 * may be stale or wrong: past the table's end, a line pointer since reused
 * by another row), visible to snap, into t->slot; false if there is none
 * there.  The caller checks that the row is the one it wants.
 */
bool
allot_fetch_at(AllotTable *t, ItemPointer root, Snapshot snap)
{
	bool		all_dead = false;

	ItemPointerSetInvalid(&t->root);
	if (!ItemPointerIsValid(root) || t->rel->rd_tableam != GetHeapamTableAmRoutine() ||
		!TTS_IS_BUFFERTUPLE(t->slot) ||
		!block_exists(t->rel, ItemPointerGetBlockNumber(root)))
		return false;
	return fetch_heap_chain(t, root, snap, &all_dead);
}
