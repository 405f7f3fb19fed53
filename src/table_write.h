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
 */
extern bool allot_touch_assignment(AllotTable *assignment, HeapTuple row, TimestampTz seen_at);

/*
 * Write the whole assignment row (workload, threads, focus, seen_at,
 * counted, assigned_at) as assign_commit.c's UPDATE writes it, where it was
 * read, with what that statement's triggers would do (the foreign key's
 * check, the usage moved between two workloads); false, having changed
 * nothing, where the UPDATE would do more.
 */
extern bool allot_switch_assignment(AllotTable *assignment, HeapTuple row, int64 workload_id,
									int32 threads, bool focus, TimestampTz now);

/*
 * Set last_workload_id of row, the host's row read in this request, as an
 * UPDATE of that column alone would, its foreign key checked as its trigger
 * checks it; false, having changed nothing, where the UPDATE would do more.
 */
extern bool allot_write_last_workload(AllotTable *host, HeapTuple row, int64 workload_id);

#endif							/* ALLOT_TABLE_WRITE_H */
