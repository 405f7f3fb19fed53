/*
 * retention.h: finished jobs leave the hot tables after
 * allot.retention_period (retention.c).
 */
#ifndef ALLOT_RETENTION_H
#define ALLOT_RETENTION_H

#include "postgres.h"

#include "datatype/timestamp.h"

/* What one purge did. */
typedef struct RetentionRun
{
	int64		purged;			/* jobs removed from allot.job */
	int64		reports;		/* their rows of allot.job_report */
	int64		archived;		/* rows written to allot.job_archive */
	bool		busy;			/* another transaction was purging: nothing done */
	bool		off;			/* retention_period is 0, or the schema predates 0.7.0 */
	TimestampTz cutoff;			/* jobs finished before this could go */
} RetentionRun;

/*
 * Move at most batch finished jobs that ended before now minus
 * allot.retention_period, oldest first, out of allot.job with their
 * reports: into allot.job_archive (allot.retention_archive on) or nowhere;
 * their counts go to allot.purged_jobs and allot.purged_credit.  The
 * caller has SPI connected and holds allot.job's row-writing lock
 * (entry.h); the rows are taken FOR UPDATE SKIP LOCKED, and a second
 * transaction purging at the same time does nothing (busy).
 */
extern void allot_purge_finished(TimestampTz now, int batch, RetentionRun *out);

/*
 * True while a purge's DELETE runs in this backend: the job trigger then
 * leaves the workloads' and hosts' counters as they are (the jobs leave
 * the table, not the counts), and so do the triggers of the purged totals.
 */
extern bool allot_retention_purging(void);

#endif							/* ALLOT_RETENTION_H */
