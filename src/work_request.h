/*
 * work_request.h: what a host still wants, per resource, while a request is
 * being filled (seeds 001 and 003, "Scheduler changes").
 *
 * Pure logic: no SPI, no allocation, no PostgreSQL headers.
 */
#ifndef ALLOT_WORK_REQUEST_H
#define ALLOT_WORK_REQUEST_H

#include <stdbool.h>

typedef struct ResourceRequest
{
	bool		requested;		/* req_secs > 0 or req_instances > 0 */
	bool		tried;			/* still wanted work when its turn came */
	double		secs;			/* instance-seconds still wanted */
	double		instances;		/* instances still to occupy */
	double		delay;			/* estimated delay before a new job starts */
	double		ninstances;		/* instances of this resource on the host */
	int			jobs;			/* jobs sent for it so far */
} ResourceRequest;

/* work_needed(): more seconds or more instances are wanted. */
static inline bool
allot_request_needs(const ResourceRequest *r)
{
	return r->requested && (r->secs > 0 || r->instances > 0);
}

/*
 * May a job using `usage` instances be sent?  While seconds are wanted, yes
 * (the last job may overshoot seconds); when only instances are wanted, only
 * if it fits: instances are never overshot.
 */
static inline bool
allot_request_takes(const ResourceRequest *r, double usage)
{
	return r->secs > 0 || r->instances >= usage - 1e-9;
}

/*
 * Deadline check: a job is not sent if it could not start and finish within
 * its delay bound (0: none) behind what this resource already has queued.
 */
static inline bool
allot_request_meets_deadline(const ResourceRequest *r, double est_secs,
							 double delay_bound_secs)
{
	return delay_bound_secs <= 0 || r->delay + est_secs <= delay_bound_secs;
}

/*
 * Charge a job sent for this resource: its instance-seconds, its instances
 * (never below zero), and its share of the resource's queue, which delays
 * every later job of this request.
 */
static inline void
allot_request_charge(ResourceRequest *r, double est_secs, double usage)
{
	r->secs -= est_secs * usage;
	r->instances = r->instances > usage ? r->instances - usage : 0;
	r->delay += est_secs * usage / (r->ninstances >= 1 ? r->ninstances : 1);
	r->jobs++;
}

#endif							/* ALLOT_WORK_REQUEST_H */
