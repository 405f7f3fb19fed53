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
#include <stddef.h>

#include "percentile.h"

/* Swap values a and b, and their weights when there are weights. */
static inline void
swap(double *v, double *w, int64_t a, int64_t b)
{
	double		t = v[a];

	v[a] = v[b];
	v[b] = t;
	if (w != NULL)
	{
		t = w[a];
		w[a] = w[b];
		w[b] = t;
	}
}

/*
 * Partition v[lo .. hi] (lo < hi), and w with it when not NULL, around a
 * pivot, the median of three (so that sorted or reversed input stays
 * linear).  Hoare's scheme: afterwards v[lo .. j] <= pivot <= v[j+1 .. hi],
 * both parts non-empty, and equal keys split evenly, so that many
 * duplicates stay linear too.  Returns j.
 */
static int64_t
partition(double *v, double *w, int64_t lo, int64_t hi)
{
	int64_t		mid = lo + (hi - lo) / 2;
	double		pivot;
	int64_t		i = lo - 1,
				j = hi + 1;

	if (v[mid] < v[lo])
		swap(v, w, mid, lo);
	if (v[hi] < v[lo])
		swap(v, w, hi, lo);
	if (v[hi] < v[mid])
		swap(v, w, hi, mid);
	pivot = v[mid];
	for (;;)
	{
		do
			i++;
		while (v[i] < pivot);
		do
			j--;
		while (v[j] > pivot);
		if (i >= j)
			return j;
		swap(v, w, i, j);
	}
}

/* Returns the k-th smallest (0-based) of v[lo .. hi], reordering v. */
static double
select_kth(double *v, int64_t lo, int64_t hi, int64_t k)
{
	while (lo < hi)
	{
		int64_t		j = partition(v, NULL, lo, hi);

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

double
allot_percentile_voices(double *v, double *w, int64_t n, double p)
{
	double		total = 0,
				target,
				below = 0;		/* weight of the values left of lo */
	int64_t		lo = 0,
				hi = n - 1;

	for (int64_t i = 0; i < n; i++)
		total += w[i];
	/* "exceeds": by more than rounding, since weights like 1/3 add up inexactly */
	target = p * total + 1e-9 * total;

	/*
	 * As select_kth, but the side to go on is decided by weight: the values
	 * of the left part are all <= those of the right, so the answer is in
	 * the left part exactly when the weight below the range plus the left
	 * part's exceeds the target.
	 */
	while (lo < hi)
	{
		int64_t		j = partition(v, w, lo, hi);
		double		left = 0;

		for (int64_t k = lo; k <= j; k++)
			left += w[k];
		if (below + left > target)
			hi = j;
		else
		{
			below += left;
			lo = j + 1;
		}
	}
	return v[lo];
}

double
allot_median_voices(double *v, double *w, int64_t n)
{
	/* "exceeds just under half" is "reaches half", rounding allowed for */
	return allot_percentile_voices(v, w, n, 0.5 - 2e-9);
}
