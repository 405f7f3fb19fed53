/*
 * table_read.h: reading a few rows of allot's tables without the executor
 * (table_read.c).
 */
#ifndef ALLOT_TABLE_READ_H
#define ALLOT_TABLE_READ_H

#include "postgres.h"

#include "access/attnum.h"
#include "nodes/parsenodes.h"
#include "storage/lockdefs.h"
#include "datatype/timestamp.h"
#include "executor/tuptable.h"
#include "utils/timestamp.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

/* One of allot's tables, open for reading, with a slot for its rows. */
typedef struct AllotTable
{
	const char *name;			/* in schema allot, for messages */
	Relation	rel;			/* NULL: the table does not exist */
	Relation	pkey;			/* its key index, when asked for */
	TupleTableSlot *slot;
	ItemPointerData root;		/* where the last fetch's HOT chain starts */
} AllotTable;

/*
 * The snapshot a read uses, registered: a fresh one (with what this
 * transaction wrote so far, as SPI gives a statement that may write), or
 * the active one (as SPI gives a read-only statement).  Release it with
 * UnregisterSnapshot.
 */
extern Snapshot allot_read_snapshot(bool fresh);

/*
 * Open allot.<name> under AccessShareLock, and its index allot.<key_index>
 * (a one-column bigint key, for allot_fetch_by_key) unless that is NULL.
 * A table that does not exist (an older schema) leaves t->rel NULL when
 * missing_ok; otherwise it is an error.
 */
extern void allot_table_open(AllotTable *t, const char *name, const char *key_index,
							 bool missing_ok);
extern void allot_table_close(AllotTable *t);

/* Open t's key index allot.<key_index> now, if allot_table_open did not. */
extern void allot_table_open_key(AllotTable *t, const char *key_index);

/*
 * Lock allot.<name> in mode and return its OID (InvalidOid if it does not
 * exist and missing_ok), looked up by name only the first time.
 */
extern Oid	allot_lock_table(const char *name, LOCKMODE mode, bool missing_ok);

/*
 * Whether the current role (the definer, in a SECURITY DEFINER function) has
 * mode (ACL_SELECT, ACL_UPDATE) on relid, a table the caller has locked; the
 * answer is remembered until the table's or any role's privileges change.
 */
extern bool allot_table_privilege(Oid relid, AclMode mode);

/* Open the index allot.<name> under AccessShareLock; close with index_close(.., NoLock). */
extern Relation allot_index_open(const char *name);

/*
 * The number of a column of the table, which must be of this type; a column
 * it lacks, or of another type, is an error.
 */
extern AttrNumber allot_column(const AllotTable *t, const char *column, Oid type);

/* The same, but InvalidAttrNumber for a column the table lacks (an older schema). */
extern AttrNumber allot_column_if_any(const AllotTable *t, const char *column, Oid type);

/*
 * The row whose one-column bigint key (t->pkey) is key, visible to snap, into
 * t->slot; false if there is none.
 */
extern bool allot_fetch_by_key(AllotTable *t, int64 key, Snapshot snap);

/*
 * The row visible to snap in the HOT chain that starts at root, a TID kept
 * from an earlier fetch (t->root), into t->slot; false if there is none.
 * Any root is safe to pass, and the row found may be any row of the table:
 * the caller checks its key.
 */
extern bool allot_fetch_at(AllotTable *t, ItemPointer root, Snapshot snap);

/* Column values of the row in t->slot, NULL read as if_null. */
#define ALLOT_SLOT_GETTER(fn, type, from_datum) \
static inline type \
fn(AllotTable *t, AttrNumber att, type if_null) \
{ \
	bool		isnull; \
	Datum		d = slot_getattr(t->slot, att, &isnull); \
\
	return isnull ? if_null : from_datum(d); \
}

ALLOT_SLOT_GETTER(allot_slot_int8, int64, DatumGetInt64)
ALLOT_SLOT_GETTER(allot_slot_int4, int32, DatumGetInt32)
ALLOT_SLOT_GETTER(allot_slot_bool, bool, DatumGetBool)
ALLOT_SLOT_GETTER(allot_slot_timestamptz, TimestampTz, DatumGetTimestampTz)

#endif							/* ALLOT_TABLE_READ_H */
