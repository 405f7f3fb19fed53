/*
 * signal.c: a change one transaction makes, told to every backend that
 * keeps a copy of it (signal.h).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_default_acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "signal.h"

/* The key of signal table relid: no pg_default_acl entry has it. */
static void
signal_key_values(Oid relid, Datum *values, bool *nulls)
{
	for (int i = 0; i < Natts_pg_default_acl; i++)
	{
		values[i] = (Datum) 0;
		nulls[i] = true;
	}
	values[Anum_pg_default_acl_defaclrole - 1] = ObjectIdGetDatum(relid);
	values[Anum_pg_default_acl_defaclnamespace - 1] = ObjectIdGetDatum(InvalidOid);
	values[Anum_pg_default_acl_defaclobjtype - 1] = CharGetDatum(DEFACLOBJ_RELATION);
	nulls[Anum_pg_default_acl_defaclrole - 1] = false;
	nulls[Anum_pg_default_acl_defaclnamespace - 1] = false;
	nulls[Anum_pg_default_acl_defaclobjtype - 1] = false;
}

void
allot_signal_readers(Oid nsp, const char *name)
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
	signal_key_values(relid, values, nulls);
	acl = table_open(DefaultAclRelationId, AccessShareLock);
	key = heap_form_tuple(RelationGetDescr(acl), values, nulls);
	CacheInvalidateHeapTuple(acl, key, NULL);
	heap_freetuple(key);
	table_close(acl, AccessShareLock);
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
