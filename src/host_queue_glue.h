/*
 * host_queue_glue.h: the seed 002 simulation of a host's jobs in progress,
 * read from the tables (host_queue_glue.c); request_work's buffer form and
 * allot.host_queue use it.
 */
#ifndef ALLOT_HOST_QUEUE_GLUE_H
#define ALLOT_HOST_QUEUE_GLUE_H

#include "postgres.h"

#include "datatype/timestamp.h"

#include "host_queue.h"
#include "workload_cache.h"

/* Fills one QueueResource per cache resource (ninstances 0: absent). */
extern void allot_simulate_host_queue(const WorkloadCache *cache, int64 host_id,
									  double max_buf_secs, TimestampTz now,
									  QueueResource *out);

#endif							/* ALLOT_HOST_QUEUE_GLUE_H */
