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

/* The credit rows of these workloads; returns how many. */
extern int	allot_read_credit(const WorkloadCache *cache, const int64 *ids, int n,
							  TimestampTz now, CreditRow **rows);

/* Add credit handed out at now: to rec under recent, to sent under debt. */
extern void allot_add_credit(const int64 *workload_ids, const char *const *resources,
							 const double *credit, int n, TimestampTz now, int mode);

#endif							/* ALLOT_CREDIT_H */
