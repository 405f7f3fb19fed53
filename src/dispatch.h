/*
 * dispatch.h: a host as job dispatch sees it, shared by request_work
 * (dispatch.c), estimate_job and report_job (report.c).
 */
#ifndef ALLOT_DISPATCH_H
#define ALLOT_DISPATCH_H

#include "postgres.h"

#include "datatype/timestamp.h"

#include "estimate.h"
#include "workload_cache.h"

typedef struct DispatchHost
{
	int64		id;
	const char *os;
	NameList	cpu_flags;
	NameList	focus;
	int			threads;
	double		cpu_flops;		/* measured, or the fleet median */
	double	   *coproc_count;	/* per cache resource; 0 when absent */
	double	   *coproc_peak;	/* per cache resource, per instance */
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
extern void allot_read_app_stats(AppStats *stats, int64 app_id);
extern void allot_read_host_version(HostVersion *hv, int64 host_id, int64 version_id);

/* host_queue_glue.c: the seed 002 simulation of a host's jobs in progress;
 * fills one QueueResource per cache resource (ninstances 0: absent). */
struct QueueResource;
extern void allot_simulate_host_queue(const WorkloadCache *cache, int64 host_id,
									  double max_buf_secs, TimestampTz now,
									  struct QueueResource *out);

#endif							/* ALLOT_DISPATCH_H */
