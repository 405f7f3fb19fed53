/*
 * dispatch_host.h: a host as job dispatch sees it (dispatch_host.c), shared
 * by request_work, estimate_job, report_job and host_queue: its devices,
 * which app versions run on it, their peak FLOPS there, and what the host
 * has said of them.
 */
#ifndef ALLOT_DISPATCH_HOST_H
#define ALLOT_DISPATCH_HOST_H

#include "postgres.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "datatype/timestamp.h"

#include "estimate.h"
#include "reliability.h"
#include "workload_cache.h"

/*
 * What a host says of its hardware counts within what the farm makes
 * plausible: an instance counts for at most this many times its resource's
 * median FLOPS (allot.resource.median_flops, kept by the transitioner).
 * Real machines of one farm seldom differ by more; a host that claims 1e18
 * FLOPS counts as ten ordinary ones, not as the whole farm.  From 0.7.0 the
 * median is the proven hosts', and a host that has proven nothing counts
 * for at most the median itself (dispatch_host.c, instance_bound).
 */
#define ALLOT_PLAUSIBLE_SPREAD 10.0

typedef struct DispatchHost
{
	int64		id;
	const char *os;
	NameList	cpu_flags;
	NameList	focus;
	int			threads;
	double		cpu_flops;		/* claimed, or the fleet median; counted
								 * within the plausible spread */
	double	   *coproc_count;	/* per cache resource; 0 when absent */
	double	   *coproc_peak;	/* per cache resource, per instance, counted
								 * within the plausible spread */
	int64		voice;			/* its owner's voice, or its own (voices.h) */
	bool		proven;			/* its claims count as proven (0.7.0) */
	HostTrust	trust;			/* for adaptive replication (reliability.h) */
	TimestampTz backoff_until;	/* sent nothing before (error_backoff.h); 0: none */
	int			error_streak;	/* its sendings failed in a row */
} DispatchHost;

/* What the host has said of an app version, and its quota. */
typedef struct HostVersion
{
	double		seconds_per_app_unit;	/* 0: unknown */
	double		raw_flops_per_sec;	/* 0: unknown */
	int			quota;			/* 0: no row yet, i.e. the full quota */
	int			jobs_today;
} HostVersion;

extern void allot_read_dispatch_host(DispatchHost *host, const WorkloadCache *cache,
									 int64 host_id, bool fresh);
extern bool allot_version_runs_on(const CachedVersion *v, const DispatchHost *host,
								  const WorkloadCache *cache);
extern double allot_version_peak_flops(const CachedVersion *v, const DispatchHost *host,
									   const WorkloadCache *cache);
extern bool allot_has_name(const NameList *list, const char *name);

/*
 * Projected FLOPS of a version on the host: what the host says it gets
 * (seed 004's raw FLOPS), which is its peak or less, else the peak.
 */
static inline double
allot_projected_flops(const HostVersion *hv, double peak)
{
	return hv->raw_flops_per_sec > 0 && hv->raw_flops_per_sec < peak ?
		hv->raw_flops_per_sec : peak;
}

/* An app's statistics (seed 004), one app or a row read elsewhere. */
extern void allot_read_app_stats(AppStats *stats, int64 app_id, bool voices);
/*
 * The columns of allot.app that allot_app_stats_from_row reads, in order;
 * from 0.7.0 (voices) also the floor of the bound.
 */
#define ALLOT_APP_STATS_COLUMNS(voices) \
	"n_reports, actual_au_mean, actual_au_m2, predicted_au_mean, predicted_au_m2," \
	" au_ratio_mean, au_ratio_m2", (voices) ? ", coalesce(au_ratio_tail, 0)" : ""
extern void allot_app_stats_from_row(AppStats *stats, HeapTuple t, TupleDesc d, int first);
extern void allot_read_host_version(HostVersion *hv, int64 host_id, int64 version_id);

#endif							/* ALLOT_DISPATCH_HOST_H */
