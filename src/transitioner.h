/*
 * transitioner.h: the transitioner's steps that live in files of their own.
 */
#ifndef ALLOT_TRANSITIONER_H
#define ALLOT_TRANSITIONER_H

#include "postgres.h"

#include "datatype/timestamp.h"

/*
 * Learn from up to allot.transitioner_batch validated successes not read
 * yet (transitioner_learn.c): FLOPS per app unit and app-unit statistics,
 * one voice per owner.  Returns the jobs read; counts the FLOPS values taken
 * and the percentiles made.
 */
extern int64 allot_learn_from_reports(int64 *samples_taken, int64 *figures_made);

/*
 * Time out jobs in progress (transitioner.c): those past their deadline at
 * now, or, when host_id is not NULL, every job in progress on that host; at
 * most limit of them.  Each goes back to unsent or gives up (job_retry.h).
 * Returns how many.
 */
extern int64 allot_time_out_jobs(TimestampTz now, const int64 *host_id, int limit);

/*
 * Sample the shares for the status page's history (share_history.c): delete
 * the samples past allot.share_history_retention (counted in *deleted), and
 * record this minute's unless it has one or another run is recording.
 * Returns the rows recorded.  Before 0.7.0, nothing.
 */
extern int64 allot_record_shares(TimestampTz now, int64 *deleted);

#endif							/* ALLOT_TRANSITIONER_H */
