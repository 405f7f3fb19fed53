/*
 * credit.h: the rows of allot.workload_credit, for the recent and debt
 * fairness modes (fairness.h has the formulas; this is the SQL glue).
 */
#ifndef ALLOT_CREDIT_H
#define ALLOT_CREDIT_H

#include "postgres.h"

#include "utils/timestamp.h"

#include "workload_cache.h"

typedef struct CreditRow
{
	int64		workload_id;
	int			resource;		/* index into cache->resources */
	double		rec;			/* decayed to the request's now */
	double		debt;			/* as of the last fold */
	double		sent;			/* since the last fold */
} CreditRow;

/* allot.fairness, checked against the installed schema. */
extern int	allot_fairness_mode(void);

/*
 * The credit rows of the id range of the cache's assignment workloads (jobs
 * false) or job workloads (the caller keeps those it finds in the cache);
 * returns how many.
 */
extern int	allot_read_credit(const WorkloadCache *cache, bool jobs,
							  TimestampTz now, CreditRow **rows);

/*
 * Debts are folded by one transaction at a time, while no request adds to
 * them: the fold takes this lock exclusively (allot_lock_fold, or
 * allot.fold_debts itself) and keeps it to its commit, requests that add
 * credit under debt share it.  A fold waits for the requests in progress
 * and the requests after it wait for the fold's transaction (the lock
 * manager queues them behind it, so a busy farm cannot starve the fold); a
 * second transitioner folds after the first commits.  A request takes the
 * lock before it touches a credit row, and the fold holds nothing a
 * request waits for when it asks for it, so the two never wait for each
 * other in a circle.  Keys (1634495599,
 * 1684366964), "allo" "debt", in pg_advisory_xact_lock's (int4, int4) space.
 */
#define ALLOT_FOLD_LOCK_KEY1 1634495599
#define ALLOT_FOLD_LOCK_KEY2 1684366964

extern void allot_lock_fold(void);

/* Add credit handed out at now: to rec under recent, to sent under debt. */
extern void allot_add_credit(const int64 *workload_ids, const char *const *resources,
							 const double *credit, int n, TimestampTz now, int mode);

#endif							/* ALLOT_CREDIT_H */
