/*
 * entry.h: what every SQL entry point shares (entry.c): argument checks,
 * the host lock, and the SPI conventions of the glue files.
 */
#ifndef ALLOT_ENTRY_H
#define ALLOT_ENTRY_H

#include "postgres.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/timestamp.h"

#include "settings.h"

/* assignment_usage.c: what assignments count for now, and their sweep. */
#define USAGE_LAPSED	1		/* counted assignments of candidates lapsed */
#define USAGE_WATCH_DUE 2		/* the watch list is due for renewal */

/* A lapsed assignment's threads, to subtract from its workload's usage row. */
typedef struct UsageDelta
{
	int			workload;		/* index in the workload cache */
	double		threads;
	double		focus_threads;
} UsageDelta;

/* Lapsed assignments a request stops counting at most (allot_tidy_assignments). */
#define ALLOT_SWEEP_PER_REQUEST 64

typedef struct LapsedUsage
{
	UsageDelta *deltas;
	int			n;
	bool		any;			/* some lapsed and could be swept */
	/*
	 * The hosts of the first ALLOT_SWEEP_PER_REQUEST of them and the watch
	 * list's generation they were listed in (n_hosts 0 when not read from
	 * the list): what a sweep after the request takes.
	 */
	int64		hosts[ALLOT_SWEEP_PER_REQUEST];
	int			n_hosts;
	int64		generation;
} LapsedUsage;

/*
 * The candidates' counted threads, and in *lapsed (unless NULL) the hosts a
 * sweep after the request may take.
 */
extern int	allot_assignment_usage(const int64 *ids, int n, TimestampTz cutoff, bool writer,
								   double *threads, double *focus_threads, LapsedUsage *lapsed);

/* Every row of allot.workload_usage under a snapshot (assignment_usage.c). */
typedef void (*UsageRowFn) (void *arg, int64 workload_id, double threads, double focus_threads);
extern void allot_visit_usage_rows(Snapshot snap, UsageRowFn fn, void *arg);

struct WorkloadCache;
extern int	allot_lapsed_from_watch(const struct WorkloadCache *cache, TimestampTz cutoff,
									LapsedUsage *out);
extern int	allot_lapsed_usage(const struct WorkloadCache *cache, TimestampTz cutoff,
							   LapsedUsage *out);
extern int64 allot_expire_assignments_upto(TimestampTz cutoff, int64 limit);

/* usage.c: an assignment row's threads moved between usage rows. */
extern void allot_usage_moved(HeapTuple old_row, HeapTuple new_row, TupleDesc desc);
extern int64 allot_tidy_assignments(TimestampTz cutoff, int found, const LapsedUsage *lapsed);

/*
 * A seed for a draw the caller did not seed: the backend's own generator,
 * which PostgreSQL seeds from a strong random source when the backend
 * starts.  (Asking OpenSSL at every request cost 1% of a repeat
 * assignment.)  The draws pick among fair candidates; nothing secret hangs
 * on them.
 */
extern uint64 allot_random_seed(void);

/* qsort/bsearch comparator of int64s (ids). */
extern int	allot_compare_int64(const void *a, const void *b);

/*
 * The SPI conventions every glue file shares (entry.c): plans are prepared
 * once per backend, kept, and always generic, so that no call pays for
 * planning; text[] columns become NameLists; set-returning functions
 * materialize their rows.
 */
struct NameList;
extern SPIPlanPtr allot_prepare(const char *sql, int nargs, Oid *argtypes);
extern void allot_text_list(Datum array, struct NameList *out);
extern Tuplestorestate *allot_materialize(FunctionCallInfo fcinfo, TupleDesc *desc);
extern HeapTuple allot_read_host_row(SPIPlanPtr plan, Datum *args, int64 host_id,
									 bool fresh, TupleDesc *desc);

/*
 * Runs a prepared SELECT and hands each row's values to row(arg, values,
 * nulls) as the executor makes it (PostgreSQL 14 and later: a DestReceiver,
 * no copy of every row into SPI_tuptable; older servers go through it).
 * what names the table read, for the error should it fail.
 */
typedef void (*AllotRowFn) (void *arg, const Datum *values, const bool *isnull);
extern void allot_execute_rows(SPIPlanPtr plan, Datum *args, bool read_only,
							   AllotRowFn row, void *arg, const char *what);

/*
 * search_path for the statements a function runs, pinned in C where the
 * function has no SET clause (0.7.0: assign_workload, the assignment usage
 * trigger): what the clause set, set only when it is not so already (one
 * string comparison), so that a request that runs no statement, or one
 * fired inside another that pinned it, pays nothing.  Returns the GUC nest
 * level to give back to allot_unpin_search_path (-1: nothing was set).  An
 * error unwinds it with the transaction, as it does a SET clause.
 */
#define ALLOT_SEARCH_PATH "pg_catalog, pg_temp"
extern int	allot_pin_search_path(void);
extern void allot_unpin_search_path(int level);

/*
 * The order every writer takes its locks in.  A request of one host takes
 * the host's lock, then the row-writing lock (RowExclusiveLock) of the table
 * it writes, allot.job or allot.assignment, and only then reads what it may
 * use: workloads, apps and versions (the backend cache), the host's row.
 * Reports and the transitioner take the same table locks first.  An
 * operator's edit that takes away something a request may be using (a
 * DELETE on allot.workload, app, app_version or host) first locks both
 * tables in EXCLUSIVE mode (allot.edit_lock()): it waits for the requests
 * in flight and for any transaction holding a row of them, and holds new
 * ones back until it commits, when their table lock brings in its
 * invalidations; two such edits take turns.  No request ever writes a
 * reference to a row an operator removed, so none fails on a foreign key;
 * and since the edit takes nothing a request holds before those locks, the
 * two cannot deadlock.  Preparing a statement locks the tables it names,
 * so an entry point prepares its plans only after these locks.
 */
extern void allot_begin_host_request(int64 host_id, const char *table);
extern void allot_lock_for_write(const char *table);

/*
 * Every entry point that writes allot's tables calls this right after
 * allot_check_settings: on a standby (in recovery) or in a read-only
 * transaction it refuses with 25006, naming the function, before any
 * argument is read, lock taken or row read; the status views and the
 * read-only functions keep working there.
 */
extern void allot_require_writable(const char *function);

/* Entry points reject NULL arguments they cannot do without. */
static inline void
allot_require_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", name)));
}

/*
 * The magnitudes allot accepts from callers (docs/errors.md): far beyond
 * any real farm, and narrow enough that every product, square and ratio
 * allot forms from them stays finite and non-zero, and every deadline a
 * valid timestamp.
 */
#define ALLOT_MIN_FLOPS 1.0			/* per second, of a device or a report */
#define ALLOT_MAX_FLOPS 1e20
#define ALLOT_MIN_SECS 1e-6			/* elapsed time, seconds per app unit */
#define ALLOT_MAX_SECS 1e10
#define ALLOT_MAX_INSTANCES 1e6		/* of one resource, in a request */
#define ALLOT_MIN_APP_UNITS 1e-9
#define ALLOT_MAX_APP_UNITS 1e12
#define ALLOT_MIN_NOW_TEXT "1970-01-01"
#define ALLOT_MAX_NOW_TEXT "9999-12-31"

/* A positive number within [lo, hi], or ERROR naming it. */
static inline void
allot_check_range(double value, double lo, double hi, const char *name)
{
	if (!(value >= lo && value <= hi))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between %g and %g, not %g", name, lo, hi, value)));
}

/*
 * Virtual time must be a real instant, within years 1970 to 9999: arithmetic
 * on infinity is meaningless, and a deadline must stay a valid timestamp.
 * Only an operator may move it further than ALLOT_WEB_CLOCK_SKEW_SECS from
 * the server's clock: simulations and tests are the operator's; a web
 * login's `now` would otherwise decide deadlines and credit (entry.c).
 */
#define ALLOT_WEB_CLOCK_SKEW_SECS 60

extern TimestampTz allot_now_arg(FunctionCallInfo fcinfo, int argno);

static inline void
allot_host_not_found(int64 host_id)
{
	ereport(ERROR,
			(errcode(ERRCODE_NO_DATA_FOUND),
			 errmsg("host %lld does not exist", (long long) host_id),
			 errhint("Hosts are the rows of allot.host.")));
}

/*
 * Serialise the requests of one host for the rest of the transaction: a
 * transaction-scoped advisory lock in allot's own key space (field4), held
 * in shared memory only, unlike a row lock, which dirties and WAL-logs the
 * host's page.  Reads after it take a fresh snapshot and so see what the
 * previous holder committed.
 */
#define ALLOT_HOST_LOCK_SPACE 0x616C	/* "al"; pg_locks.objsubid 24940 */

/*
 * One transaction at a time sweeps lapsed assignments after its request
 * (allot_tidy_assignments); the others, meeting the same lapsed rows at the
 * same moment, would find them held or swept by it, and take nothing.
 */
#define ALLOT_SWEEP_LOCK_SPACE 0x6173	/* "as"; pg_locks.objsubid 24947 */

/*
 * One transaction at a time renews the watch list of lapsing assignments
 * after its request (allot_tidy_assignments); the others, finding the list
 * due at the same moment, skip it while that one holds this lock.
 */
#define ALLOT_RENEW_LOCK_SPACE 0x6172	/* "ar"; pg_locks.objsubid 24946 */

/*
 * One transaction at a time writes the share history (share_history.c);
 * the others only try this lock, and skip that step when it is held.
 */
#define ALLOT_SHARE_HISTORY_LOCK_SPACE 0x7368	/* "sh"; pg_locks.objsubid 29544 */

/*
 * One verdict at a time per replicated job (validate.c): a transaction-
 * scoped advisory lock on the job's id, taken after the judged row's lock,
 * as a report takes its row first.
 */
#define ALLOT_QUORUM_LOCK_SPACE 0x6771	/* "gq"; pg_locks.objsubid 26481 */

static inline void
allot_lock_quorum(int64 group_id)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) ((uint64) group_id >> 32),
						 (uint32) group_id, ALLOT_QUORUM_LOCK_SPACE);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

static inline void
allot_lock_host(int64 host_id)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) ((uint64) host_id >> 32),
						 (uint32) host_id, ALLOT_HOST_LOCK_SPACE);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/*
 * Seconds from one instant to another, in C: SQL's extract(epoch) is a
 * numeric, and its ::float8 goes through text.
 */
static inline double
allot_secs_between(TimestampTz from, TimestampTz to)
{
	return (double) (to - from) / USECS_PER_SEC;
}

/* An assignment counts while its host was seen after this instant. */
static inline TimestampTz
allot_assignment_cutoff(TimestampTz now)
{
	return now - (TimestampTz) allot_assignment_ttl * USECS_PER_SEC;
}

#endif							/* ALLOT_ENTRY_H */
