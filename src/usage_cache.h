/*
 * usage_cache.h: each backend's copy of allot.workload_usage, for
 * assign_workload (0.6.0 on).
 *
 * A repeat request used to read every usage row of its candidates, while
 * on a farm in service the rows change only when a host switches or a
 * lapsed assignment is swept.  So a backend keeps the rows, by the
 * workload cache's index, with each group's sums (workload_cache.h) as
 * requests need them, and reads them again only after a change: a
 * statement trigger on allot.workload_usage, or the write at the row
 * (table_write.c), sends the signal of the empty table
 * allot.workload_usage_signal (signal.h), which PostgreSQL delivers to
 * every backend when the change commits, and to the changing backend at
 * its next command.  A copy read before a signal arrived is stale.
 *
 * Lapsed assignments not swept yet, and the requester's own, are not in
 * the copy: a request subtracts them itself (assignment_usage.c).
 */
#ifndef ALLOT_USAGE_CACHE_H
#define ALLOT_USAGE_CACHE_H

#include "workload_cache.h"

typedef struct UsageCache
{
	/* per assignment workload (the workload cache's index) */
	const double *threads;		/* counted threads of hosts not focus-assigned */
	const double *focus_threads;	/* of focus-assigned hosts */
} UsageCache;

/*
 * The copy for this cache, read again if it is stale, or NULL on a schema
 * without the signal (before 0.6.0): the caller reads the table.  The
 * caller is connected to SPI and holds allot.assignment's write lock.
 */
extern const UsageCache *allot_usage_cache(const WorkloadCache *cache);

/*
 * Over group g's members (WorkloadCache.groups), in the copy
 * allot_usage_cache last returned: their counted threads (with the focus
 * threads, or without), and their least (threads [+ focus_threads] +
 * extra) / throughput, extra being the requester's threads under
 * allot.count_requester, else 0.  Found on first use, kept with the copy.
 */
extern double allot_group_threads(const WorkloadCache *cache, int g, bool with_focus);
extern double allot_group_min_ratio(const WorkloadCache *cache, int g, double extra,
									bool with_focus);

#endif							/* ALLOT_USAGE_CACHE_H */
