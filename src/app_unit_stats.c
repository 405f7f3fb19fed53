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
 * From 0.7.0 the reports are screened first (voices.h): voices and reports
 * implausible by far are left out, and a voice is an owner, not a host.
 * The limits, measured in docs/voices.md's threat model: colluding voices
 * that always claim the most within the band act like honest reports at
 * the bound, with a weight their number gives; beyond about one voice in 16
 * they raise the bound without end, and the estimate follows them.  And a
 * search from below stalls under a tail rarer than about one report in 17,
 * however far it reaches: when one voice in ALLOT_TAIL_SHARE reaches the
 * stalled limit, the search goes on from the seed's own bound.
 */
#include <math.h>
#include <stdbool.h>
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

/*
 * Leave out what screening finds implausible by far (voices.h): the
 * reports of voices whose median ratio or median FLOPS per app unit is
 * beyond the band, and reports whose ratio is.  Returns how many reports
 * remain, moved to the front.
 */
static int
screen_reports(AppUnitReport *reports, int n, double *work, AppUnitScreen *screen)
{
	int64_t    *voices = (int64_t *) (work + 7 * n);
	bool	   *ratio_voice_out = (bool *) (work + 10 * n);	/* after allot_screen's iwork */
	bool	   *ratio_out = ratio_voice_out + n;
	bool	   *flops_voice_out = ratio_out + n;
	bool	   *flops_out = flops_voice_out + n;
	double	   *values = work;
	int			kept = 0;

	for (int i = 0; i < n; i++)
	{
		voices[i] = reports[i].voice;
		values[i] = reports[i].actual / reports[i].predicted;
	}
	allot_screen(voices, values, n, &screen->ratio, ratio_voice_out, ratio_out,
				 work + 4 * n, voices + n);
	for (int i = 0; i < n; i++)
		values[i] = reports[i].flops_per_au;
	allot_screen(voices, values, n, &screen->flops, flops_voice_out, flops_out,
				 work + 4 * n, voices + n);

	screen->n_voices_out = 0;
	for (int i = 0; i < n; i++)
	{
		bool		voice_out = ratio_voice_out[i] || flops_voice_out[i];

		if (voice_out && screen->voices_out != NULL)
		{
			bool		listed = false;

			for (int k = 0; k < screen->n_voices_out && !listed; k++)
				listed = screen->voices_out[k] == reports[i].voice;
			if (!listed)
				screen->voices_out[screen->n_voices_out++] = reports[i].voice;
		}
		if (!voice_out && !ratio_out[i])
			reports[kept++] = reports[i];
	}
	return kept;
}

/*
 * A share of the voices this large reaching the limit is the farm's tail,
 * not a few voices' claim: 0.6.0's search held out a few voices claiming
 * the most up to about one voice in 16, and no further.
 */
#define ALLOT_TAIL_SHARE 16

/* Do at least one voice in ALLOT_TAIL_SHARE have a report at the limit? */
static bool
tail_is_the_farms(const AppUnitReport *reports, const double *w, int n, double hosts,
				  double limit)
{
	double		reaching = 0;

	(void) w;
	for (int i = 0; i < n;)
	{
		int			j = i;
		bool		reaches = false;

		while (j < n && reports[j].voice == reports[i].voice)
		{
			reaches = reaches || reports[j].actual / reports[j].predicted >= limit;
			j++;
		}
		if (reaches)
			reaching += 1;
		i = j;
	}
	return reaching * ALLOT_TAIL_SHARE >= hosts;
}

/* The seed's bound, mean + X sd of the ratios, uncapped (work: n doubles). */
static double
plain_bound(const AppUnitReport *reports, const double *w, int n, double hosts, double neff,
			double *work)
{
	double		mean,
				var;

	for (int i = 0; i < n; i++)
		work[i] = reports[i].actual / reports[i].predicted;
	mean_var(work, w, n, hosts, neff, &mean, &var);
	return mean + ALLOT_BOUND_X * sqrt(var);
}

void
allot_app_unit_stats(AppUnitReport *reports, int n, double *work,
					 AppStats *stats, double *cap, AppUnitScreen *screen)
{
	double	   *x;
	double	   *w;
	double		hosts = 0,
				w2sum = 0,
				neff,
				mean = 0,
				var = 0,
				limit;
	bool		stalled = false;

	if (screen != NULL)
		n = screen_reports(reports, n, work, screen);
	x = work;					/* counted ratios */
	w = work + n;				/* weights */
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
		if (!(next > limit * (1 + 1e-9)) && screen != NULL && !stalled &&
			hosts >= ALLOT_SCREEN_AMONG && tail_is_the_farms(reports, w, n, hosts, limit))
		{
			/*
			 * Stalled below a tail the farm shares (0.7.0): counted up to
			 * the limit, a tail rarer than about one report in 17 can never
			 * raise it (mean + X sd of the capped values stays below), and
			 * voices that report exactly their prediction, diluting the
			 * tail, stalled it below the farm's honest long jobs.  When at
			 * least one voice in ALLOT_TAIL_SHARE reaches the limit, the
			 * tail is not a few voices' claim: the search goes on from the
			 * seed's own bound over the screened reports, uncapped.
			 */
			double		plain = plain_bound(reports, w, n, hosts, neff, work + 2 * n);

			stalled = true;
			if (plain > limit)
			{
				limit = plain;
				continue;
			}
		}
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
