/*
 * assign_host.c: the host as an assignment request sees it: what it offers
 * (seed 000 step 1's capability: OS, CPU flags, tokens, compilers, threads,
 * syzygy, noise, focus), its last workload, and its assignment.
 *
 * Both rows are read by primary key without the executor (table_read.c),
 * under a snapshot taken after the request's locks (entry.h), so that an
 * assignment written by a request of this host that we waited for is seen
 * as this host's own, never as another host's.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/snapmgr.h"

#include "assign.h"
#include "table_read.h"

/* A text[] column of the row in t's slot as a NameList. */
static NameList
name_list(AllotTable *t, const char *column)
{
	NameList	list = {NULL, 0};
	bool		isnull;
	Datum		d = slot_getattr(t->slot, allot_column(t, column, TEXTARRAYOID), &isnull);

	if (!isnull)
		allot_text_list(d, &list);
	return list;
}

/* A host's compilers, {"gcc": "12.2.0", ...}, as two parallel lists. */
static void
compiler_lists(Jsonb *compilers, NameList *names, NameList *versions)
{
	int			n = JB_ROOT_COUNT(compilers);
	const char **k = palloc(sizeof(char *) * (n + 1));
	const char **v = palloc(sizeof(char *) * (n + 1));
	JsonbIterator *it = JsonbIteratorInit(&compilers->root);
	JsonbValue	key,
				value;
	JsonbIteratorToken tok;
	int			i = 0;

	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		if (tok != WJB_KEY || i >= n)
			continue;
		if (JsonbIteratorNext(&it, &value, true) != WJB_VALUE)
			break;
		k[i] = pnstrdup(key.val.string.val, key.val.string.len);
		if (value.type == jbvString)
			v[i] = pnstrdup(value.val.string.val, value.val.string.len);
		else if (value.type == jbvNumeric)
			v[i] = DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(value.val.numeric)));
		else
			v[i] = "";			/* not a version: compares as 0 */
		i++;
	}
	names->names = k;
	names->count = i;
	versions->names = v;
	versions->count = i;
}

/* The host's row in h's slot: its offer and last workload. */
static void
read_offer(AllotTable *h, AssignHost *host)
{
	bool		isnull;
	Datum		v;

	v = slot_getattr(h->slot, allot_column(h, "os", TEXTOID), &isnull);
	host->offer.os = isnull ? NULL : TextDatumGetCString(v);
	host->offer.cpu_flags = name_list(h, "cpu_flags");
	host->offer.tokens = name_list(h, "tokens");
	host->offer.focus = name_list(h, "focus");
	v = slot_getattr(h->slot, allot_column(h, "compilers", JSONBOID), &isnull);
	if (!isnull)
		compiler_lists(DatumGetJsonbP(v), &host->offer.compiler_names,
					   &host->offer.compiler_versions);
	host->offer.threads = allot_slot_int4(h, allot_column(h, "threads", INT4OID), 1);
	host->offer.physical_cores = allot_slot_int4(h, allot_column(h, "physical_cores", INT4OID),
												 host->offer.threads);
	host->offer.sockets = allot_slot_int4(h, allot_column(h, "sockets", INT4OID), 1);
	host->offer.syzygy_max = allot_slot_int4(h, allot_column(h, "syzygy_max", INT4OID), 0);
	host->offer.noisy = allot_slot_bool(h, allot_column(h, "noisy", BOOLOID), false);
	host->last_workload_id = allot_slot_int8(h, allot_column(h, "last_workload_id", INT8OID), 0);
}

/*
 * Where the host's assignment row was, as the host's row remembers it
 * (0.8.0 on); invalid when it does not.
 */
static void
read_hint(AllotTable *h, AssignHost *host)
{
	AttrNumber	att = allot_column_if_any(h, "assignment_tid", TIDOID);
	bool		isnull = true;
	Datum		v = (Datum) 0;

	host->hint_column = att != InvalidAttrNumber;
	if (host->hint_column)
		v = slot_getattr(h->slot, att, &isnull);
	if (isnull)
		ItemPointerSetInvalid(&host->assignment_hint);
	else
		host->assignment_hint = *(ItemPointer) DatumGetPointer(v);
}

/*
 * The host's assignment row into a's slot: at the place the host's row
 * remembers, if it is still there, or through the key.
 */
static bool
fetch_assignment(AllotTable *a, AssignHost *host, Snapshot snap)
{
	if (allot_fetch_at(a, &host->assignment_hint, snap))
	{
		/* Any row may be there now: it must be this host's. */
		if (allot_slot_int8(a, allot_column(a, "host_id", INT8OID), 0) == host->id)
			return true;
		ExecClearTuple(a->slot);
	}
	allot_table_open_key(a, "assignment_pkey");
	return allot_fetch_by_key(a, host->id, snap);
}

/*
 * Read the host and its assignment; errors if the host does not exist.  To
 * assign (fresh), after allot_begin_host_request, under a snapshot taken
 * after it, the two tables kept open for the writes (close them with
 * allot_close_assign_host); explain_assignment reads under its statement's
 * snapshot.
 */
void
allot_read_assign_host(AssignHost *host, int64 host_id, TimestampTz cutoff, bool fresh)
{
	Snapshot	snap = allot_read_snapshot(fresh);
	AllotTable *h = &host->host_table;
	AllotTable *a = &host->assignment_table;

	memset(host, 0, sizeof(*host));
	host->id = host_id;

	allot_table_open(h, "host", "host_pkey", false);
	if (!allot_fetch_by_key(h, host_id, snap))
		allot_host_not_found(host_id);
	read_offer(h, host);
	read_hint(h, host);
	/* Kept for a switch, which writes its last_workload_id where it was read. */
	if (fresh)
	{
		host->host_row = ExecCopySlotHeapTuple(h->slot);
		host->host_row->t_self = h->slot->tts_tid;
	}

	allot_table_open(a, "assignment", NULL, false);
	if (fetch_assignment(a, host, snap))
	{
		host->has_assignment = true;
		host->assignment_root = a->root;
		/* It counts while marked so and seen within assignment_ttl. */
		if (allot_slot_bool(a, allot_column(a, "counted", BOOLOID), false) &&
			allot_slot_timestamptz(a, allot_column(a, "seen_at", TIMESTAMPTZOID),
								   DT_NOBEGIN) >= cutoff)
		{
			host->assigned_workload = allot_slot_int8(a, allot_column(a, "workload_id", INT8OID), 0);
			host->assigned_threads = allot_slot_int4(a, allot_column(a, "threads", INT4OID), 0);
			host->assigned_focus = allot_slot_bool(a, allot_column(a, "focus", BOOLOID), false);
			host->assignment_row = ExecCopySlotHeapTuple(a->slot);
			host->assignment_row->t_self = a->slot->tts_tid;
		}
	}
	UnregisterSnapshot(snap);
	if (!fresh)
		allot_close_assign_host(host);
}

void
allot_close_assign_host(AssignHost *host)
{
	allot_table_close(&host->assignment_table);
	allot_table_close(&host->host_table);
}
