/*
 * dispatch.h: one request_work call, stage by stage (seeds 001, 003).
 *
 *   dispatch.c          the entry point: the host's locks, then the stages
 *   request_parse.c     parse   the JSON request, or the buffer form, into
 *                               what the host wants per resource
 *   dispatch_read.c     read    what the picks need: the host's versions and
 *                               quotas, each job workload's usage and unsent
 *                               jobs, its app's statistics, its credit
 *   dispatch_pick.c     pick    per resource, coprocessors first, the seed
 *                               000 selection chooses a workload and one of
 *                               its unsent jobs is taken; each counts at once
 *   dispatch_commit.c   commit  one statement writes everything and builds
 *                               the reply
 *
 * Pure logic the stages call: selection.h (which workload), work_request.h
 * (what a resource still wants), estimate.h (how long a job takes),
 * fairness.h (usage over time), host_queue.h (the buffer form).
 */
#ifndef ALLOT_DISPATCH_H
#define ALLOT_DISPATCH_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "utils/jsonb.h"

#include "dispatch_host.h"
#include "estimate.h"
#include "fairness.h"
#include "work_request.h"
#include "workload_cache.h"

/* What the client says of one of its app versions. */
typedef struct ClientVersion
{
	int64		version_id;
	double		seconds_per_app_unit;	/* 0: not stated */
	double		raw_flops_per_sec;	/* 0: not stated */
} ClientVersion;

/* The request, parsed. */
typedef struct Request
{
	ResourceRequest *rsc;		/* per cache resource */
	bool		shared_seconds; /* old client: one work_req_seconds for all */
	bool		no_gpus;
	int64	   *exclude;
	int			n_exclude;
	ClientVersion *client;
	int			n_client;
} Request;

/* A job workload as this request sees it. */
typedef struct JobWorkload
{
	const CachedWorkload *w;
	const CachedApp *app;
	bool		excluded;		/* in the request's exclude list */
	bool		exhausted;		/* no unsent job could be taken */
	bool	   *blocked;		/* per resource: refused by the deadline check */
	int64		last_taken;		/* highest job id taken so far (0: none) */
	int64		held_id;		/* a job taken but refused by a deadline check */
	double		held_predicted;
	int64		held_group;
	bool		held_replicated;
	double		held_bound_factor;
	int64		last_replica;	/* highest replica id taken so far (0: none) */
	bool		no_replicas;	/* no unsent replica left for this request */
	int64		unsent;
	int64		reopened;		/* jobs that came back to unsent, so far */
	int64		in_progress;	/* here and on every other host */
	double		mflops;			/* usage: peak MFLOPS in progress */
	double		rec;			/* recent estimated credit at now (recent) */
	DebtCell   *debt;			/* per resource (debt) */
	AppStats	stats;
} JobWorkload;

/* A job the request sends. */
typedef struct Pick
{
	int64		job_id;
	int64		workload_id;
	int64		version_id;
	int			resource;
	double		ncpus;
	double		ncoprocs;
	double		predicted;
	double		est;
	double		bound;
	double		peak;
	TimestampTz deadline;
	int64		app_id;
	double		est_flops_per_au;
	double		credit;			/* est_secs x peak FLOPS */
	int64		group_id;		/* the job it replicates, or its own id */
	bool		replicated;		/* of a job with replicas: one per owner */
	bool		replicate;		/* adaptive replication replicates it now */
} Pick;

typedef struct Dispatch
{
	const WorkloadCache *cache;
	DispatchHost host;
	Request		req;
	HostVersion *hv;			/* per cache version */
	JobWorkload *jw;			/* per cache job workload */
	Pick	   *picks;
	int			n_picks;
	int			max_picks;
	TimestampTz now;
	uint64		rng;
	int			fairness;		/* allot.fairness */
	bool		hints;			/* job_usage counts reopened jobs (0.5.1 on):
								 * picks may start at the backend's hints */
	double	   *share;			/* per job workload: its throughput (debt) */
	double	   *overall;		/* per job workload: overall debt (debt) */
} Dispatch;

extern void allot_parse_request(Dispatch *d, Jsonb *json);
extern void allot_read_for_picks(Dispatch *d);
extern void allot_pick_jobs(Dispatch *d);
extern Datum allot_commit_request(Dispatch *d);

#endif							/* ALLOT_DISPATCH_H */
