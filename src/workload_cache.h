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
	/* job workloads only */
	int			app;			/* index into apps */
	double		delay_bound_secs;	/* 0: allot.default_delay_bound */
	bool		adaptive_replication;	/* replicate jobs of hosts not reliable */
} CachedWorkload;

typedef struct CachedVersion
{
	int64_t		id;
	const char *platform;		/* NULL: any OS */
	int			resource;		/* index into resources */
	double		ncpus;
	double		ncoprocs;
	NameList	cpu_flags;
} CachedVersion;

typedef struct CachedApp
{
	int64_t		id;
	double		est_flops_per_au;	/* 0: not known yet */
	int64_t		run_flops_n;	/* reports behind run_flops_bound */
	double		run_flops_bound;	/* app.run_flops_bound; 0: none */
	double		bound_factor;	/* the operator's (app.bound_factor); 0: none */
	int			first_version;	/* its versions are versions[first .. first + n) */
	int			n_versions;
} CachedApp;

/*
 * The app's run-time spread (issue 32), once allot.bound_min_reports
 * reports made it; 0 before.
 */
static inline double
allot_app_run_flops_bound(const CachedApp *app, int min_reports)
{
	return app->run_flops_n >= min_reports ? app->run_flops_bound : 0;
}

/*
 * Where request_work starts looking for a job workload's oldest unsent job
 * (dispatch_pick.c): every job of the workload with an id up to after was
 * not unsent when it was set.  Kept beside the cache, so that a rebuild
 * (any change to workloads, apps or versions, or the extension dropped and
 * created again) forgets them.
 */
typedef struct PickHint
{
	int64_t		after;
	int64_t		reopened;		/* the workload's job_usage.reopened then */
	int64_t		set_at;			/* server clock (a TimestampTz); 0: not set */
} PickHint;

/*
 * Assignment workloads of one priority with the same needs (FitNeeds) and
 * dev engine: a host can run all of them or none, and they share the
 * engine's balancing and focus.  A request judges each group once
 * (assignment.c), not each workload.
 */
typedef struct AssignGroup
{
	FitNeeds	fit;
	int			dev_needs;		/* index into engine_needs, -1: none */
	int			base_needs;
	int32_t		priority;
	int			engine;			/* dense number of the dev engine */
	const char *engine_name;
	int			first;			/* members: group_members[first .. first + n) */
	int			n;
	double		sum_throughput; /* of the members */
} AssignGroup;

typedef struct WorkloadCache
{
	uint64_t	generation;		/* each build's own number */

	/* active assignment workloads, ordered by priority desc, then id */
	int			n_workloads;
	CachedWorkload *workloads;
	/* active job workloads, same order */
	int			n_job_workloads;
	CachedWorkload *job_workloads;
	int			n_engines;		/* every dev engine named by a workload */
	/* engines with a row in allot.engine, which workloads' needs point to */
	int			n_engine_needs;
	const EngineNeeds *engine_needs;
	/* the assignment workloads in groups, by priority (highest first) */
	int			n_groups;
	AssignGroup *groups;
	int		   *group_members;	/* workload indices, in cache order per group */
	int		   *workload_group; /* per assignment workload */

	/* job side; all empty while the extension is at 0.1.0 */
	int			n_apps;
	CachedApp  *apps;
	int			n_versions;
	CachedVersion *versions;
	int			n_resources;	/* coprocessor types by name, then cpu last */
	const char **resources;
	int			cpu;			/* index of 'cpu' in resources */
	double	   *median_flops;	/* per resource: allot.resource.median_flops
								 * (0.6.0 on); 0: not known */

	/* Lookups by id (allot_find_*): (id, index) pairs sorted by id. */
	struct IdIndex *workloads_by_id;
	/* ... and for the assignment workloads, when their ids are dense enough,
	 * the index by id - dense_lo (-1: none), NULL otherwise */
	int64_t		dense_lo;
	int			dense_n;
	int		   *dense;
	struct IdIndex *apps_by_id;
	struct IdIndex *versions_by_id;
	struct IdIndex *job_workloads_by_id;

	/* per job workload, same order; written by requests and the job trigger */
	PickHint   *pick_hints;
	bool		job_usage_reopened;	/* job_usage counts reopened jobs (0.5.1 on) */
	bool		job_sendings;	/* jobs count their sendings, tries and failures,
								 * and retry (0.6.0 on) */
	bool		voices;			/* hosts have owners and reliability, jobs
								 * quorums and replicas (0.7.0 on) */
} WorkloadCache;

extern const WorkloadCache *allot_workload_cache(void);
/* The cache if it is current, without building it (which needs SPI); else NULL. */
extern const WorkloadCache *allot_workload_cache_if_built(void);
extern int	allot_resource_index(const WorkloadCache *cache, const char *name);

/* Index of the row with this id in the cache's arrays, or -1. */
extern int	allot_find_workload(const WorkloadCache *cache, int64_t id);
/* The least and greatest id of the assignment (jobs false) or job workloads;
 * lo > hi when there are none. */
extern void allot_workload_id_range(const WorkloadCache *cache, bool jobs,
									int64_t *lo, int64_t *hi);
extern int	allot_find_app(const WorkloadCache *cache, int64_t id);
extern int	allot_find_version(const WorkloadCache *cache, int64_t id);
extern int	allot_find_job_workload(const WorkloadCache *cache, int64_t id);
extern void allot_workload_cache_init(void);
/* A job of the workload is unsent at id after + 1: lower its hint to after. */
extern void allot_pick_hint_lower(int64_t workload_id, int64_t after);

#endif							/* ALLOT_WORKLOAD_CACHE_H */
