/*
 * percentile.h: order statistics in O(N), for FLOPS per app unit (seed 004).
 *
 * Pure logic: no SPI, no allocation, no PostgreSQL headers.
 */
#ifndef ALLOT_PERCENTILE_H
#define ALLOT_PERCENTILE_H

#include <stdint.h>

/*
 * The p-th percentile of values[0 .. n), as PostgreSQL's percentile_disc(p)
 * defines it: the first value, in ascending order, whose position reaches
 * p * n (the value at 1-based position max(1, ceil(p * n))).  Reorders
 * values in place; expected O(n).  n must be >= 1 and p in [0, 1].
 */
extern double allot_percentile_disc(double *values, int64_t n, double p);

/*
 * The same over weighted values, where a value's weight is its host's share
 * of one voice: the first value, in ascending order, at which the weight of
 * the values up to it exceeds p times the total.  With equal weights that is
 * percentile_disc(p) except where p * n is a whole number k: then the
 * (k+1)-th value, not the k-th, so that a fraction p of the voices can lie
 * below the figure without setting it.  Reorders both arrays in place;
 * expected O(n).  n must be >= 1, every weight > 0 and p in [0, 1].
 */
extern double allot_percentile_voices(double *values, double *weights, int64_t n, double p);

/*
 * The lower weighted median: the first value, in ascending order, at which
 * the weight of the values up to it reaches half the total.  With two
 * voices it is the lesser: a median of claims is held by the honest half
 * when liars claim more.  Reorders both arrays in place; expected O(n).
 */
extern double allot_median_voices(double *values, double *weights, int64_t n);

#endif							/* ALLOT_PERCENTILE_H */
