/*
 * workload_cache.h: the active assignment workloads and their engines'
 * needs, cached per backend.
 *
 * The cache is rebuilt from allot.workload and allot.engine on first use and
 * after any change to either table: a statement trigger on both sends a
 * relcache invalidation, which every backend receives at its next
 * transaction start (or lock acquisition) and which marks its cache stale.
 * A dispatch request therefore reads no workload rows.
 */
#ifndef ALLOT_WORKLOAD_CACHE_H
#define ALLOT_WORKLOAD_CACHE_H

#include "selection.h"

typedef struct CachedWorkload
{
	int64_t		id;
	int32_t		priority;
	double		throughput;
	int			engine;			/* dense number of the dev engine */
	const char *engine_name;
	int			workload_size;
	WorkloadNeeds needs;
} CachedWorkload;

typedef struct WorkloadCache
{
	int			n_workloads;	/* ordered by priority desc, then id */
	CachedWorkload *workloads;
	int			n_engines;		/* every dev engine named by a workload */
} WorkloadCache;

extern const WorkloadCache *allot_workload_cache(void);
extern void allot_workload_cache_init(void);

#endif							/* ALLOT_WORKLOAD_CACHE_H */
