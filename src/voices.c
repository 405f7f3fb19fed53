/*
 * voices.c: each voice weighs once (voices.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "percentile.h"
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

typedef struct VoiceValue
{
	int64_t		voice;
	double		value;
} VoiceValue;

static int
by_voice_then_value(const void *a, const void *b)
{
	const VoiceValue *x = a;
	const VoiceValue *y = b;

	if (x->voice != y->voice)
		return (x->voice > y->voice) - (x->voice < y->voice);
	return (x->value > y->value) - (x->value < y->value);
}

static bool
says_something(double v)
{
	return v > 0 && isfinite(v);
}

void
allot_screen(const int64_t *voices, const double *values, int n, ScreenBand *band,
			 bool *voice_out, bool *value_out, double *work, int64_t *iwork)
{
	VoiceValue *vv = (VoiceValue *) work;	/* n pairs: 2 * n doubles' room */
	double	   *medians = work + 2 * n;
	int64_t    *median_voice = iwork;
	int			m = 0,
				nv = 0;

	band->centre = band->low = band->high = 0;
	for (int i = 0; i < n; i++)
	{
		voice_out[i] = value_out[i] = false;
		if (!says_something(values[i]))
			continue;
		vv[m].voice = voices[i];
		vv[m].value = values[i];
		m++;
	}
	if (m == 0)
		return;

	/* Each voice's median value (the lower one of an even count). */
	qsort(vv, m, sizeof(VoiceValue), by_voice_then_value);
	for (int i = 0; i < m;)
	{
		int			j = i;

		while (j < m && vv[j].voice == vv[i].voice)
			j++;
		medians[nv] = vv[i + (j - i - 1) / 2].value;
		median_voice[nv++] = vv[i].voice;
		i = j;
	}
	if (nv < ALLOT_SCREEN_AMONG)
		return;

	/* The voices' median, each voice one vote; the band around it. */
	{
		double	   *copy = (double *) vv;	/* the pairs are done with */
		double	   *ones = copy + nv;

		for (int k = 0; k < nv; k++)
		{
			copy[k] = medians[k];
			ones[k] = 1;
		}
		band->centre = allot_median_voices(copy, ones, nv);
	}
	band->low = band->centre / ALLOT_SCREEN_SPREAD;
	band->high = band->centre * ALLOT_SCREEN_SPREAD;

	for (int i = 0; i < n; i++)
	{
		int			lo = 0,
					hi = nv;

		if (says_something(values[i]))
			value_out[i] = values[i] < band->low || values[i] > band->high;
		/* the voice's median: median_voice is sorted (qsort by voice) */
		while (lo < hi)
		{
			int			mid = lo + (hi - lo) / 2;

			if (median_voice[mid] < voices[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nv && median_voice[lo] == voices[i])
			voice_out[i] = medians[lo] < band->low || medians[lo] > band->high;
	}
}

double
allot_percentile_screened(double *values, const int64_t *voices, int n, double p,
						  double *work, int64_t *iwork, bool *flags)
{
	ScreenBand	band;
	bool	   *voice_out = flags;
	bool	   *value_out = flags + n;
	double	   *w = work + 3 * n;
	double	   *kept = work + 4 * n;
	int64_t    *kept_voices = iwork + 2 * n;
	int			m = 0;

	allot_screen(voices, values, n, &band, voice_out, value_out, work, iwork);
	for (int i = 0; i < n; i++)
	{
		if (voice_out[i] || value_out[i])
			continue;
		kept[m] = values[i];
		kept_voices[m++] = voices[i];
	}
	if (m == 0)					/* cannot be: the band holds the median */
		return values[0];
	allot_voice_weights(kept_voices, m, w, iwork);
	return allot_percentile_voices(kept, w, m, p);
}
