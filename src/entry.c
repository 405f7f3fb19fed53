/*
 * entry.c: what every SQL entry point shares: the SPI conventions (plans
 * prepared once per backend, kept, and always generic, so that no call pays
 * for planning; text[] columns as NameLists; set-returning functions that
 * materialize their rows), reading a host under its lock, and the check on
 * a caller's `now`.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#if PG_VERSION_NUM >= 150000
#include "common/pg_prng.h"
#endif
#include "nodes/makefuncs.h"
#include "nodes/params.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "entry.h"
#include "table_read.h"
#include "selection.h"

uint64
allot_random_seed(void)
{
#if PG_VERSION_NUM >= 150000
	return pg_prng_uint64(&pg_global_prng_state);
#else
	return (uint64) random() << 32 ^ (uint64) random();
#endif
}

SPIPlanPtr
allot_prepare(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, argtypes, CURSOR_OPT_GENERIC_PLAN);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	SPI_keepplan(plan);
	return plan;
}

/* A text[] as C strings in the current memory context (NULL elements: ""). */
void
allot_text_list(Datum array, NameList *out)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	const char **names;

	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	names = palloc(sizeof(char *) * (n > 0 ? n : 1));
	for (int i = 0; i < n; i++)
		names[i] = nulls[i] ? "" : TextDatumGetCString(elems[i]);
	out->names = names;
	out->count = n;
}

/*
 * Read a host's row with `plan` (its first argument the host id); errors if
 * the host does not exist.  A request that writes on the host's behalf
 * (fresh) reads under a snapshot taken after allot_begin_host_request, so
 * that what an earlier request of this host committed while we waited is
 * seen.
 */
HeapTuple
allot_read_host_row(SPIPlanPtr plan, Datum *args, int64 host_id, bool fresh,
					TupleDesc *desc)
{
	if (SPI_execute_plan(plan, args, NULL, !fresh, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.host");
	if (SPI_processed == 0)
		allot_host_not_found(host_id);
	*desc = SPI_tuptable->tupdesc;
	return SPI_tuptable->vals[0];
}

/*
 * A SET clause costs every call a GUC switch and back (0.6.0: 8% of a
 * repeat assignment): the value parsed, the old one saved, both passed
 * through their hooks.  Here the switch is made only when the value differs;
 * an error unwinds the nest level with the (sub)transaction, as it does
 * fmgr's for a SET clause.
 */
int
allot_pin_search_path(void)
{
	int			level;

	if (namespace_search_path != NULL &&
		strcmp(namespace_search_path, ALLOT_SEARCH_PATH) == 0)
		return -1;
	level = NewGUCNestLevel();
	(void) set_config_option("search_path", ALLOT_SEARCH_PATH, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return level;
}

void
allot_unpin_search_path(int level)
{
	if (level >= 0)
		AtEOXact_GUC(true, level);
}

/*
 * Take the row-writing lock of one of allot's tables now, before the caller
 * reads anything it may write rows about (entry.h).  A table that does not
 * exist yet (an older schema) is skipped: the caller's own check says so.
 */
void
allot_lock_for_write(const char *table)
{
	(void) allot_lock_table(table, RowExclusiveLock, true);
}

void
allot_begin_host_request(int64 host_id, const char *table)
{
	allot_lock_host(host_id);
	allot_lock_for_write(table);
}

/*
 * Set up a set-returning function to return its rows in a tuplestore (the
 * materialize mode every caller of ours accepts); *desc is the row type.
 */
Tuplestorestate *
allot_materialize(FunctionCallInfo fcinfo, TupleDesc *desc)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	Tuplestorestate *store;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (get_call_result_type(fcinfo, NULL, desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	*desc = CreateTupleDescCopy(*desc);
	store = tuplestore_begin_heap(true, false, work_mem);
	MemoryContextSwitchTo(old);

	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = *desc;
	return store;
}

/*
 * A standby (or a read-only transaction) would otherwise fail a writer at
 * its first locking read, with 25006 naming an internal statement; say what
 * happened and where to call instead (entry.h).
 */
void
allot_require_writable(const char *function)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s cannot run on a standby: the server is in recovery, and read-only",
						function),
				 errdetail("%s writes allot's tables.", function),
				 errhint("Call it on the primary. A standby serves the status views and "
						 "allot's read-only functions.")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s cannot run in a read-only transaction", function),
				 errdetail("%s writes allot's tables.", function),
				 errhint("Call it in a read-write transaction (transaction_read_only off).")));
}

/* Is the role the request comes from an operator (allot_admin) or superuser? */
static bool
caller_is_operator(void)
{
	Oid			caller = GetOuterUserId();	/* before any SECURITY DEFINER switch */
	Oid			admin;

	if (superuser_arg(caller))
		return true;
	admin = get_role_oid("allot_admin", true);
	return OidIsValid(admin) && has_privs_of_role(caller, admin);
}

static bool
within_skew(TimestampTz a, TimestampTz b)
{
	return a - b <= ALLOT_WEB_CLOCK_SKEW_SECS * USECS_PER_SEC &&
		b - a <= ALLOT_WEB_CLOCK_SKEW_SECS * USECS_PER_SEC;
}

TimestampTz
allot_now_arg(FunctionCallInfo fcinfo, int argno)
{
	/* 1970-01-01 and 10000-01-01 00:00 UTC, in microseconds since 2000. */
	const TimestampTz lo = -INT64CONST(946684800000000);
	const TimestampTz hi = INT64CONST(252455616000000000);
	TimestampTz now;

	allot_require_arg(fcinfo, argno, "now");
	now = PG_GETARG_TIMESTAMPTZ(argno);
	if (TIMESTAMP_NOT_FINITE(now) || now < lo || now >= hi)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("now must be a timestamp between %s and %s, not %s",
						ALLOT_MIN_NOW_TEXT, ALLOT_MAX_NOW_TEXT, timestamptz_to_str(now))));

	/*
	 * The default, now(), is the transaction's start; a web layer passing
	 * its own clock is near the statement's.  Anything else is virtual time,
	 * which only an operator may use.
	 */
	if (!within_skew(now, GetCurrentTransactionStartTimestamp()) &&
		!within_skew(now, GetCurrentTimestamp()) &&
		!caller_is_operator())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("now must be within %d seconds of the server's clock, not %s",
						ALLOT_WEB_CLOCK_SKEW_SECS, timestamptz_to_str(now)),
				 errdetail("Role \"%s\" is not an operator of allot (a member of allot_admin).",
						   GetUserNameFromId(GetOuterUserId(), false)),
				 errhint("Leave now out: it defaults to the server's clock.")));
	return now;
}

/* qsort/bsearch comparator of int64s (ids). */
int
allot_compare_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a,
				y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

#if PG_VERSION_NUM >= 140000
/* The receiver of allot_execute_rows: each row to the caller's function. */
typedef struct RowReceiver
{
	DestReceiver pub;			/* first: the executor sends rows here */
	AllotRowFn	row;
	void	   *arg;
} RowReceiver;

static bool
receive_row(TupleTableSlot *slot, DestReceiver *self)
{
	RowReceiver *r = (RowReceiver *) self;

	slot_getallattrs(slot);
	r->row(r->arg, slot->tts_values, slot->tts_isnull);
	return true;
}

static void
receiver_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
receiver_nothing(DestReceiver *self)
{
}
#endif

void
allot_execute_rows(SPIPlanPtr plan, Datum *args, bool read_only, AllotRowFn row, void *arg,
				   const char *what)
{
#if PG_VERSION_NUM >= 140000
	int			nargs = SPI_getargcount(plan);
	ParamListInfo params = makeParamList(nargs);
	SPIExecuteOptions options;
	RowReceiver receiver;

	for (int i = 0; i < nargs; i++)
	{
		params->params[i].value = args[i];
		params->params[i].isnull = false;
		params->params[i].pflags = PARAM_FLAG_CONST;
		params->params[i].ptype = SPI_getargtypeid(plan, i);
	}
	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = receive_row;
	receiver.pub.rStartup = receiver_startup;
	receiver.pub.rShutdown = receiver_nothing;
	receiver.pub.rDestroy = receiver_nothing;
	receiver.pub.mydest = DestNone;
	receiver.row = row;
	receiver.arg = arg;
	memset(&options, 0, sizeof(options));
	options.params = params;
	options.read_only = read_only;
	options.dest = &receiver.pub;
	/* A receiver tagged DestNone makes SPI say SPI_OK_UTILITY, not SELECT. */
	if (SPI_execute_plan_extended(plan, &options) < 0)
		elog(ERROR, "could not read %s", what);
#else
	if (SPI_execute_plan(plan, args, NULL, read_only, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read %s", what);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		TupleDesc	desc = SPI_tuptable->tupdesc;
		Datum	   *v = palloc(sizeof(Datum) * desc->natts);
		bool	   *isnull = palloc(sizeof(bool) * desc->natts);

		heap_deform_tuple(SPI_tuptable->vals[r], desc, v, isnull);
		row(arg, v, isnull);
		pfree(v);
		pfree(isnull);
	}
#endif
}
