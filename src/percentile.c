/*
 * percentile.c: the 5th-percentile of FLOPS per app unit without a sort.
 *
 * Seed 004 takes an order statistic (the 5th percentile) of the N most
 * recent raw FLOPS per app unit, so that the most efficient hosts set the
 * estimate.  A selection finds the k-th smallest value in expected O(N):
 * partition around a pivot (median of three, so sorted or reversed input
 * stays linear), then continue only in the side that holds position k.
 */
#include <math.h>

#include "percentile.h"

static inline void
swap(double *a, double *b)
{
	double		t = *a;

	*a = *b;
	*b = t;
}

/* Returns the k-th smallest (0-based) of v[lo .. hi], reordering v. */
static double
select_kth(double *v, int64_t lo, int64_t hi, int64_t k)
{
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		double		pivot;
		int64_t		i,
					j;

		/* Median of three into v[mid]. */
		if (v[mid] < v[lo])
			swap(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap(&v[hi], &v[mid]);
		pivot = v[mid];

		/*
		 * Hoare partition: afterwards v[lo .. j] <= pivot <= v[j+1 .. hi].
		 * Equal keys split evenly, so many duplicates stay linear too.
		 */
		i = lo - 1;
		j = hi + 1;
		for (;;)
		{
			do
				i++;
			while (v[i] < pivot);
			do
				j--;
			while (v[j] > pivot);
			if (i >= j)
				break;
			swap(&v[i], &v[j]);
		}
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
	return v[k];
}

double
allot_percentile_disc(double *values, int64_t n, double p)
{
	/* As percentile_disc: rownum = ceil(p * n), at least 1. */
	int64_t		rownum = (int64_t) ceil(p * (double) n);

	if (rownum < 1)
		rownum = 1;
	if (rownum > n)
		rownum = n;
	return select_kth(values, 0, n - 1, rownum - 1);
}
