/*
 * signal.c: a change one transaction makes, told to every backend that
 * keeps a copy of it (signal.h).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_default_acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "signal.h"

/*
 * The key of a signal of table relid, for the whole of what it stands for
 * (part InvalidOid) or for one part: no pg_default_acl entry has it.
 */
static void
signal_key_values(Oid relid, Oid part, Datum *values, bool *nulls)
{
	for (int i = 0; i < Natts_pg_default_acl; i++)
	{
		values[i] = (Datum) 0;
		nulls[i] = true;
	}
	values[Anum_pg_default_acl_defaclrole - 1] = ObjectIdGetDatum(relid);
	values[Anum_pg_default_acl_defaclnamespace - 1] = ObjectIdGetDatum(part);
	values[Anum_pg_default_acl_defaclobjtype - 1] = CharGetDatum(DEFACLOBJ_RELATION);
	nulls[Anum_pg_default_acl_defaclrole - 1] = false;
	nulls[Anum_pg_default_acl_defaclnamespace - 1] = false;
	nulls[Anum_pg_default_acl_defaclobjtype - 1] = false;
}

/*
 * A part's number as the key holds it: an OID.  Two parts may share one,
 * and a part may share the whole's (InvalidOid): a reader then reads more
 * than it needed to, never less.
 */
static Oid
part_oid(int64 part)
{
	return (Oid) ((uint64) part ^ ((uint64) part >> 32));
}

static void
send_signal(Oid nsp, const char *name, Oid part)
{
	Oid			relid = get_relname_relid(name, nsp);
	Datum		values[Natts_pg_default_acl];
	bool		nulls[Natts_pg_default_acl];
	Relation	acl;
	HeapTuple	key;

	if (!OidIsValid(relid))
		return;
	/*
	 * Only the key's columns are read, to hash them: the tuple stands for
	 * an entry that would have been changed, and is never stored.
	 */
	signal_key_values(relid, part, values, nulls);
	acl = table_open(DefaultAclRelationId, AccessShareLock);
	key = heap_form_tuple(RelationGetDescr(acl), values, nulls);
	CacheInvalidateHeapTuple(acl, key, NULL);
	heap_freetuple(key);
	table_close(acl, AccessShareLock);
}

void
allot_signal_readers(Oid nsp, const char *name)
{
	send_signal(nsp, name, InvalidOid);
}

/*
 * Parts told in one command, per signal, before the whole is told instead:
 * a statement that moves many hosts (an operator's UPDATE of every
 * assignment) writes a usage row per host, and a message per row would
 * overflow PostgreSQL's shared queue, which resets every backend's caches.
 * The whole's message reaches readers when the command's parts would (the
 * command's end, here; the commit, elsewhere), so later parts of the same
 * command need none.
 */
#define MAX_PARTS_PER_COMMAND 16

static struct
{
	TransactionId xid;			/* the (sub)transaction and command counted */
	CommandId	cid;
	Oid			nsp;
	char		name[NAMEDATALEN];
	int			parts;
} told;

void
allot_signal_part(Oid nsp, const char *name, int64 part)
{
	TransactionId xid = GetCurrentTransactionIdIfAny();
	CommandId	cid = GetCurrentCommandId(false);

	if (!TransactionIdIsValid(xid))
	{
		/* Nothing written yet, so nothing to count the command by. */
		send_signal(nsp, name, part_oid(part));
		return;
	}
	if (told.xid != xid || told.cid != cid || told.nsp != nsp ||
		strncmp(told.name, name, NAMEDATALEN) != 0)
	{
		told.xid = xid;
		told.cid = cid;
		told.nsp = nsp;
		strlcpy(told.name, name, NAMEDATALEN);
		told.parts = 0;
	}
	if (told.parts > MAX_PARTS_PER_COMMAND)
		return;					/* the whole is told */
	if (++told.parts > MAX_PARTS_PER_COMMAND)
		send_signal(nsp, name, InvalidOid);
	else
		send_signal(nsp, name, part_oid(part));
}

void
allot_signal_listen(SyscacheCallbackFunction fn)
{
	CacheRegisterSyscacheCallback(DEFACLROLENSPOBJ, fn, (Datum) 0);
}

uint32
allot_signal_key(Oid relid)
{
	return GetSysCacheHashValue3(DEFACLROLENSPOBJ, ObjectIdGetDatum(relid),
								 ObjectIdGetDatum(InvalidOid),
								 CharGetDatum(DEFACLOBJ_RELATION));
}

uint32
allot_signal_part_key(Oid relid, int64 part)
{
	return GetSysCacheHashValue3(DEFACLROLENSPOBJ, ObjectIdGetDatum(relid),
								 ObjectIdGetDatum(part_oid(part)),
								 CharGetDatum(DEFACLOBJ_RELATION));
}
