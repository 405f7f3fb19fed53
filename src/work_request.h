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

/*
 * work_needed(): more seconds or more instances are wanted.  As in BOINC's
 * scheduler, a job is sent while either is left, so the last job may
 * overshoot both, by less than itself: a host asking for half an instance
 * gets a whole job rather than none.
 */
static inline bool
allot_request_needs(const ResourceRequest *r)
{
	return r->requested && (r->secs > 0 || r->instances > 0);
}

/*
 * Deadline check: a job is not sent if it could not start and finish within
 * its delay bound behind what this resource already has queued.
 */
static inline bool
allot_request_meets_deadline(const ResourceRequest *r, double est_secs,
							 double delay_bound_secs)
{
	return r->delay + est_secs <= delay_bound_secs;
}

/*
 * A probe: a job whose estimate exceeds its delay bound is still sent when
 * this resource is idle (nothing queued, nothing sent yet in this request)
 * and its workload has no job in progress on any host.  Without it an app
 * whose estimates exceed every deadline would never be sent a job again,
 * and no report could ever correct its estimates; with it one host at a
 * time tries, and the first report does.
 */
static inline bool
allot_request_may_probe(const ResourceRequest *r, long workload_in_progress)
{
	return r->delay <= 0 && workload_in_progress == 0;
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
