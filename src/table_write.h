/*
 * table_write.h: an assignment request's writes without the executor
 * (table_write.c).
 */
#ifndef ALLOT_TABLE_WRITE_H
#define ALLOT_TABLE_WRITE_H

#include "postgres.h"

#include "access/htup.h"
#include "datatype/timestamp.h"

#include "table_read.h"

/*
 * Set seen_at of row, a row of allot.assignment read in this request (its
 * t_self where it was found), to seen_at, as an UPDATE of that column alone
 * would.  False, having changed nothing, where that statement would do more
 * than the write or the row is no longer as read: the caller then writes
 * through SPI.  assignment is the table as the request opened it, or NULL.
 * *root, where the row's HOT chain starts, becomes the new version's TID
 * when the new version is not heap-only (root may be NULL).
 */
extern bool allot_touch_assignment(AllotTable *assignment, HeapTuple row, TimestampTz seen_at,
								   ItemPointer root);

/*
 * Write the whole assignment row (workload, threads, focus, seen_at,
 * counted, assigned_at) as assign_commit.c's UPDATE writes it, where it was
 * read, with what that statement's triggers would do (the foreign key's
 * check, the usage moved between two workloads); false, having changed
 * nothing, where the UPDATE would do more.  *root as above.
 */
extern bool allot_switch_assignment(AllotTable *assignment, HeapTuple row, int64 workload_id,
									int32 threads, bool focus, TimestampTz now,
									ItemPointer root);

/*
 * Set last_workload_id (unless NULL) and assignment_tid (unless NULL; an
 * invalid TID is written as NULL) of row, the host's row read in this
 * request, as an UPDATE of those columns alone would, the foreign key on
 * last_workload_id checked as its trigger checks it; false, having changed
 * nothing, where the UPDATE would do more.
 */
extern bool allot_write_host(AllotTable *host, HeapTuple row, const int64 *last_workload_id,
							 ItemPointer hint);

/*
 * Add threads, focus_threads and hosts to the allot.workload_usage row of
 * workload_id, as usage.c's UPDATE adds them, its statement trigger's
 * signal included; false, having changed nothing, where that statement
 * would do more, or the row is missing (the caller inserts it), or another
 * transaction changed it after the read (the UPDATE then adds to the row
 * as that transaction left it), or the transaction reads under one
 * snapshot (REPEATABLE READ and above: the UPDATE's error to raise).
 */
extern bool allot_add_usage(int64 workload_id, int64 threads, int64 focus_threads, int32 hosts);

#endif							/* ALLOT_TABLE_WRITE_H */
