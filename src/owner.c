/*
 * owner.c: the SQL glue of owners (voices.h, allot.owner): the limits
 * register_host applies to an owner's hosts.
 *
 * register_host is PL/pgSQL; it reads the limits through this function so
 * that allot's library is loaded and its settings checked first: a setting
 * read with current_setting() before the library defines it would be
 * whatever placeholder a web login SET.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"

#include "entry.h"

PG_FUNCTION_INFO_V1(allot_owner_host_limits);

/* owner_host_limits(OUT max_hosts int, OUT max_new_hosts_per_day int) */
Datum
allot_owner_host_limits(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	allot_check_settings();
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "owner_host_limits must return a record");
	values[0] = Int32GetDatum(allot_owner_max_hosts);
	values[1] = Int32GetDatum(allot_owner_max_new_hosts_per_day);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
