/*
 * table_write.h: a repeat's seen_at written without the executor
 * (table_write.c).
 */
#ifndef ALLOT_TABLE_WRITE_H
#define ALLOT_TABLE_WRITE_H

#include "postgres.h"

#include "access/htup.h"
#include "datatype/timestamp.h"

/*
 * Set seen_at of row, a row of allot.assignment read in this request (its
 * t_self where it was found), to seen_at, as an UPDATE of that column alone
 * would.  False, having changed nothing, where that statement would do more
 * than the write or the row is no longer as read: the caller then writes
 * through SPI.
 */
extern bool allot_touch_assignment(HeapTuple row, TimestampTz seen_at);

#endif							/* ALLOT_TABLE_WRITE_H */
