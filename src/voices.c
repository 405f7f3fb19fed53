/*
 * voices.c: each voice weighs once (voices.h).
 */
#include <stdlib.h>
#include <string.h>

#include "voices.h"

static int
int64_cmp(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* The first position in sorted[0 .. n) whose value is not below key. */
static int
lower_bound(const int64_t *sorted, int n, int64_t key, bool strictly_above)
{
	int			lo = 0,
				hi = n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (sorted[mid] < key || (strictly_above && sorted[mid] == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
allot_voice_weights(const int64_t *voices, int n, double *w, int64_t *work)
{
	int			distinct = 0;

	memcpy(work, voices, sizeof(int64_t) * n);
	qsort(work, n, sizeof(int64_t), int64_cmp);
	for (int i = 0; i < n; i++)
		if (i == 0 || work[i] != work[i - 1])
			distinct++;
	for (int i = 0; i < n; i++)
	{
		int			first = lower_bound(work, n, voices[i], false);
		int			after = lower_bound(work, n, voices[i], true);

		w[i] = 1.0 / (after - first);
	}
	return distinct;
}
