/*
 * host_queue.h: simulate one host's queue of in-progress jobs (seed 002).
 *
 * Pure logic: no SPI, no memory allocation, no PostgreSQL headers.  The SQL
 * glue (allot.host_queue, and request_work with a "buffer") fills the jobs
 * and resources from the tables, calls allot_host_queue() once, and reads
 * the outputs of every resource.
 *
 * Seed 002 has the BOINC client simulate its queue before it asks for work:
 * first in FIFO order (its round-robin simulation; the server sees the jobs
 * of a single project, for which that is plain FIFO), which gives per
 * processor type the shortfall, the idle instances, the saturated time and
 * the jobs that miss their deadline; then again with the deadline-missing
 * jobs first in EDF order, which gives the busy time ("no new jobs can
 * possibly be started before this time").  A thin client sends only its
 * buffer, so the server runs the same simulation for it (docs/concepts.md "Job workloads", buffer).
 *
 * Vocabulary:
 *   usage      instances a job occupies: ncoprocs for a GPU job, ncpus for
 *              a CPU job; may be fractional
 *   saturated  time from now until the first moment not all instances are
 *              busy in the FIFO simulation
 *   busy       the same in the EDF simulation
 *   shortfall  instance-seconds left idle between now and max_buf
 */
#ifndef ALLOT_HOST_QUEUE_H
#define ALLOT_HOST_QUEUE_H

#include <stddef.h>

/*
 * Instance counts closer than this are equal: ten jobs of 0.1 CPU fill one
 * CPU although their sum in binary floating point is 0.9999999999999999.
 */
#define ALLOT_QUEUE_EPSILON 1e-9

/*
 * Doubles of scratch space allot_host_queue() needs for n_jobs jobs: a
 * permutation, a finish time per job and a heap of running jobs.
 */
#define ALLOT_HOST_QUEUE_SCRATCH(n_jobs) \
	((n_jobs) > 0 ? (size_t) 3 * (size_t) (n_jobs) : (size_t) 0)

/* One in-progress job on the host, as the server knows it. */
typedef struct QueueJob
{
	int			resource;		/* index into the resources array */
	double		usage;			/* instances of that resource it occupies
								 * (ncoprocs for a GPU job, ncpus for a CPU
								 * job); may be fractional, > 0 */
	double		remaining_secs; /* estimated seconds still to run (>= 0) */
	double		deadline_secs;	/* seconds from now until its deadline (may
								 * be <= 0: already late) */
	double		order;			/* FIFO key: smaller runs first (the glue
								 * passes seconds since sent) */
} QueueJob;

typedef struct QueueResource
{
	double		ninstances;		/* instances of this resource on the host
								 * (>= 0) */
	/* outputs */
	double		idle_instances; /* ninstances minus instances in use at time
								 * 0 (FIFO simulation), >= 0 */
	double		shortfall_secs; /* instance-seconds idle between now and
								 * max_buf_secs in the FIFO simulation */
	double		saturated_secs; /* time from now until the first moment not
								 * all instances are busy (FIFO simulation);
								 * 0 if idle now */
	double		busy_secs;		/* same, in the second simulation where
								 * deadline-missing jobs run first in EDF
								 * order */
	int			deadline_misses;	/* jobs of this resource that finish
									 * after their deadline in the FIFO
									 * simulation */
} QueueResource;

/*
 * Simulate; fills the outputs of every resource.  jobs is sorted in place
 * (by resource, then order, then input position).  scratch must hold
 * ALLOT_HOST_QUEUE_SCRATCH(n_jobs) doubles (it may be NULL when n_jobs is
 * 0).  Jobs whose resource is not in [0, n_resources) are ignored.
 */
extern void allot_host_queue(QueueJob *jobs, int n_jobs,
							 QueueResource *resources, int n_resources,
							 double max_buf_secs, double *scratch);

#endif							/* ALLOT_HOST_QUEUE_H */
