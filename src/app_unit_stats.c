/*
 * app_unit_stats.c: what an app's recent validated reports say of its app
 * units (seed 004, "the server maintains the mean and variance of both
 * actual and predicted app units ... and of actual/predicted"), with each
 * host one voice.
 *
 * A host reports what it likes, as often as it likes.  Three rules keep the
 * statistics the farm's and not a few hosts':
 *
 *   one voice     a host's reports share one weight, however many it sent:
 *                 a host with 50 reports in the window weighs what a host
 *                 with one does, each of its reports 1/50
 *   the bound     a report's ratio of actual to predicted app units counts
 *                 in full up to the seed's own bound, mean + X standard
 *                 deviations with X = 4 ("99.99% of jobs complete"), and at
 *                 the bound beyond it.  The bound is found from below:
 *                 start at ALLOT_RATIO_START times the median ratio, count
 *                 the reports, raise the bound to what they give, and repeat
 *                 while it rises.  An honest tail inside the bound (a job in
 *                 ten taking ten times its prediction) is reached in a few
 *                 rounds and then counts in full; a claim of 1e12 app units
 *                 counts as a report at the bound
 *   plausibility  a host's own reports may not, on average, stray from the
 *                 app's mean by more than X standard deviations over the
 *                 square root of their number (what chance allows n honest
 *                 reports); a host whose every report is long is pulled
 *                 back to that, its reports scaled toward the mean.  One
 *                 long job is what honest hosts report; fifty in a row is
 *                 not (checked among PLAUSIBLE_AMONG hosts or more)
 *
 * The limits, measured in README's threat model: colluding hosts that
 * always claim the most act like honest reports at the bound, with a weight
 * their number gives; beyond about one voice in 16 they could raise the
 * bound without end, and the estimate follows them.
 */
#include <math.h>
#include <stdlib.h>

#include "app_unit_stats.h"
#include "percentile.h"

/* Rounds of the search for the bound; it stops long before. */
#define MAX_ROUNDS 64

/*
 * Hosts are held to what chance allows only among at least this many: with
 * fewer, the spread between hosts is most of what there is to measure, and
 * no host can be told from the others.
 */
#define PLAUSIBLE_AMONG 10

static int
by_host(const void *a, const void *b)
{
	int64_t		x = ((const AppUnitReport *) a)->voice;
	int64_t		y = ((const AppUnitReport *) b)->voice;

	return (x > y) - (x < y);
}

/* Weighted mean and sample variance (neff: the effective sample size). */
static void
mean_var(const double *x, const double *w, int n, double wsum, double neff,
		 double *mean, double *var)
{
	double		m = 0,
				ss = 0;

	for (int i = 0; i < n; i++)
		m += w[i] * x[i];
	m /= wsum;
	for (int i = 0; i < n; i++)
		ss += w[i] * (x[i] - m) * (x[i] - m);
	*mean = m;
	*var = neff > 1 ? ss / wsum * neff / (neff - 1) : 0;
}

void
allot_app_unit_stats(AppUnitReport *reports, int n, double *work,
					 AppStats *stats, double *cap)
{
	double	   *x = work;		/* counted ratios */
	double	   *w = work + n;	/* weights */
	double		hosts = 0,
				w2sum = 0,
				neff,
				mean = 0,
				var = 0,
				limit;

	stats->n = n;
	stats->actual_au_mean = stats->actual_au_m2 = 0;
	stats->predicted_au_mean = stats->predicted_au_m2 = 0;
	stats->au_ratio_mean = stats->au_ratio_m2 = 0;
	*cap = 0;
	if (n == 0)
		return;

	/* One voice per host. */
	qsort(reports, n, sizeof(AppUnitReport), by_host);
	for (int i = 0; i < n;)
	{
		int			j = i;

		while (j < n && reports[j].voice == reports[i].voice)
			j++;
		for (int k = i; k < j; k++)
			w[k] = 1.0 / (j - i);
		hosts += 1;
		w2sum += 1.0 / (j - i);
		i = j;
	}
	neff = hosts * hosts / w2sum;

	/* The search for the bound starts at a multiple of the median ratio. */
	for (int i = 0; i < n; i++)
	{
		work[2 * n + i] = reports[i].actual / reports[i].predicted;
		work[3 * n + i] = w[i];
	}
	limit = ALLOT_RATIO_START *
		allot_percentile_voices(work + 2 * n, work + 3 * n, n, 0.5);

	for (int round = 0; round < MAX_ROUNDS; round++)
	{
		double		next;

		for (int i = 0; i < n; i++)
		{
			double		r = reports[i].actual / reports[i].predicted;

			x[i] = r < limit ? r : limit;
		}
		mean_var(x, w, n, hosts, neff, &mean, &var);

		/* Plausibility: a host's mean within X sigma / sqrt(its reports). */
		for (int i = 0; i < n && hosts >= PLAUSIBLE_AMONG;)
		{
			int			j = i;
			double		hm = 0,
						allowed;

			while (j < n && reports[j].voice == reports[i].voice)
				j++;
			for (int k = i; k < j; k++)
				hm += x[k];
			hm /= j - i;
			allowed = ALLOT_BOUND_X * sqrt(var) / sqrt((double) (j - i));
			if (fabs(hm - mean) > allowed)
			{
				double		scale = allowed / fabs(hm - mean);

				for (int k = i; k < j; k++)
					x[k] = mean + (x[k] - mean) * scale;
			}
			i = j;
		}
		mean_var(x, w, n, hosts, neff, &mean, &var);

		next = mean + ALLOT_BOUND_X * sqrt(var);
		if (!(next > limit * (1 + 1e-9)))
			break;
		limit = next;
	}

	stats->au_ratio_mean = mean;
	stats->au_ratio_m2 = var * (n - 1);
	*cap = limit;

	/* Actual app units as counted (the counted ratio times the prediction). */
	for (int i = 0; i < n; i++)
		x[i] *= reports[i].predicted;
	mean_var(x, w, n, hosts, neff, &mean, &var);
	stats->actual_au_mean = mean;
	stats->actual_au_m2 = var * (n - 1);
	for (int i = 0; i < n; i++)
		x[i] = reports[i].predicted;
	mean_var(x, w, n, hosts, neff, &mean, &var);
	stats->predicted_au_mean = mean;
	stats->predicted_au_m2 = var * (n - 1);
}
