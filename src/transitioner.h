/*
 * transitioner.h: the transitioner's steps that live in files of their own.
 */
#ifndef ALLOT_TRANSITIONER_H
#define ALLOT_TRANSITIONER_H

#include "postgres.h"

/*
 * Learn from up to allot.transitioner_batch validated successes not read
 * yet (transitioner_learn.c): FLOPS per app unit and app-unit statistics,
 * one voice per host.  Returns the jobs read; counts the FLOPS values taken
 * and the percentiles made.
 */
extern int64 allot_learn_from_reports(int64 *samples_taken, int64 *figures_made);

#endif							/* ALLOT_TRANSITIONER_H */
