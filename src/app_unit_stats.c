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
 * stalled limit, the search goes on from the seed's own bound or the ratio
 * that many voices reach, whichever is larger, and the jobs' bound is at
 * least that ratio (stats->au_ratio_tail).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
 * Bounded influence over owners' voices (issue 30, "collusion breakdown").
 * Screening leaves out claims a hundred times off; the plausibility rule
 * below pulls a voice back to what chance allows its number of reports.
 * Neither held a quarter of the voices claiming inside the band (fifty
 * times the prediction, every job): they inflate the standard deviation
 * that the plausibility rule and the search for the bound measure them by,
 * and the seed's mean follows them (+108% at 34 voices of 134).
 *
 * So, before the seed's formulas run, a voice is left out, with all its
 * reports, in every statistic, when it is both:
 *
 *   far     its mean ratio lies more than ALLOT_CHANCE_SIGMAS (the seed's
 *           X of the estimate, 2) standard errors, sd / sqrt(its reports),
 *           from the centre
 *   rare    honest reports would seldom show what it shows: for each of its
 *           ratios t on its side of the centre, the probability that as
 *           many of its number of reports as it has at t or beyond would
 *           lie there, each with the share of the reference's reports (and
 *           its own) that do, each voice one weight.  The least of these,
 *           times the number of ratios tried, is below ALLOT_CHANCE_ODDS
 *           (one in a million)
 *
 * The centre, the sd and the reference must not be the liars' own:
 *
 *   centre     the voices' median mean ratio, each voice one vote
 *   sd         the pooled spread within voices: each report's squared
 *              distance from its own voice's mean, over the reports'
 *              degrees of freedom.  Colluders who repeat a claim add
 *              nothing to it however far they are; an honest tail adds to
 *              it wherever it falls
 *   reference  the voices within ALLOT_BOUND_X (4) standard errors of the
 *              centre: what chance allows
 *
 * "Far" alone would leave out an honest voice that drew the rare end of a
 * heavy tail (one job in fifty at fifty times its prediction is ten
 * standard deviations out); "rare" alone would let colluders vouch for one
 * another (a quarter of the voices repeating one claim make it a quarter of
 * the reports).  Together: left out is a voice that is far, and whose
 * reports the voices chance allows seldom show as often as it does.  An
 * honest voice is left out only by a run of luck rarer than one in a
 * million; the seed's formulas then lose one voice of the farm's, no more.
 *
 * Nothing is left out among fewer than ALLOT_SCREEN_AMONG voices, before
 * any voice has two reports (one report says nothing of a voice's habit),
 * or when half the voices or more would be: the rule is for a minority.
 * The sd counts as at least ALLOT_CHANCE_SD_FLOOR of the centre, so that
 * voices of an app whose every report is its prediction are not told apart
 * by rounding.
 *
 * Together (issue 30, in band).  A voice of seven reports at five times
 * the prediction, or with four of seven at ten times, is rare (one in a few
 * thousand) but not one in a million, and a quarter of the voices claiming
 * it vouch for one another in the reference above: they moved credit by
 * +41% and +48% (docs/voices.md).  What one voice cannot show, many show
 * together: the odds of each voice above the centre (two of its reports at
 * least at or beyond a ratio: one report is no habit), now against the
 * voices that are not far (a colluder is judged, not a judge), and the
 * number of voices at
 * or below each odds against what honest voices would show
 * (collective_threshold).  Thirty voices each as rare as one in forty
 * among a hundred and thirty, where chance gives three, are left out
 * together.  When that would be half the voices (a third of them
 * colluding make even common odds too common, and honest voices of the
 * tail share them), the rarest group beyond chance by itself is left out
 * instead.  The rule then runs again on what is left (CHANCE_PASSES): a
 * group left out may have hidden a second, less rare, whose spread it
 * inflated.  On an honest farm nothing is left out, and the first pass is
 * the last: 2,000 random heavy-tailed farms in the unit tests, and 20,000
 * more when it was built (the same one of them, one voice, as the rule
 * alone above left out).
 *
 * What it cannot do (docs/voices.md measures it): voices whose reports are
 * what many honest voices report (exactly the prediction, every job: an
 * honest voice without a long job does so) are not rare, alone or
 * together; nor does it judge voices that claim less than the centre by
 * less than the sd allows (an honest tail keeps the sd wide).
 */
#define ALLOT_CHANCE_SD_FLOOR 0.01

/* Passes of the rule at most (each leaves voices out, or is the last). */
#define CHANCE_PASSES 8


/* Each voice's first report, number of reports and mean ratio. */
typedef struct VoiceMean
{
	int			first;
	int			n;
	double		mean;
	bool		reference;
	bool		far;
	bool		kept;
} VoiceMean;

static double
ratio_of(const AppUnitReport *r)
{
	return r->actual / r->predicted;
}

/*
 * P(X >= c) for X binomial(n, q), or 1 when c is not above what is
 * expected (nothing rare to measure).  The terms fall away geometrically
 * past the mode, so the sum stops once they no longer count.
 */
static double
binomial_tail(int n, int c, double q)
{
	double		p = 0;

	if (c <= 0 || q >= 1 || c <= n * q)
		return 1;
	if (q <= 0)
		return 0;
	for (int k = c; k <= n; k++)
	{
		double		term = exp(lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) +
							   k * log(q) + (n - k) * log1p(-q));

		p += term;
		if (term < 1e-17 * p)
			break;
	}
	return p;
}

/*
 * The reference's reports: ratios in ascending order with each report's
 * voice weight (1 / its voice's reports), and the sum of the weights from
 * each position on, so that the share of the reference at or above a
 * ratio is a binary search.
 */
typedef struct Reference
{
	double	   *ratio;
	double	   *from;			/* from[i]: weight of ratio[i ..]; from[m] = 0 */
	int			m;
	double		voices;
} Reference;

static int
by_ratio(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/* Weight of the reference's reports at or above t (above) or at or below. */
static double
reference_beyond(const Reference *ref, double t, bool above)
{
	int			lo = 0,
				hi = ref->m;

	/* the first position whose ratio is >= t (above) or > t (below) */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (above ? ref->ratio[mid] < t : ref->ratio[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return above ? ref->from[lo] : ref->from[0] - ref->from[lo];
}

/*
 * The reference of the voices `of` marks (the reports of the others left
 * aside), in work[5n .. 7n] (work[0 .. 2n] its scratch).
 */
static void
build_reference(const AppUnitReport *reports, const VoiceMean *vm, int nv, bool clean,
				double *work, int n, Reference *ref)
{
	ref->ratio = work + 5 * n;
	ref->from = work + 6 * n;
	ref->m = 0;
	ref->voices = 0;
	for (int v = 0; v < nv; v++)
	{
		if (!(clean ? !vm[v].far : vm[v].reference))
			continue;
		for (int i = vm[v].first; i < vm[v].first + vm[v].n; i++)
		{
			work[2 * ref->m] = ratio_of(&reports[i]);	/* pairs over x and w */
			work[2 * ref->m + 1] = 1.0 / vm[v].n;
			ref->m++;
		}
		ref->voices += 1;
	}
	qsort(work, ref->m, 2 * sizeof(double), by_ratio);
	ref->from[ref->m] = 0;
	for (int i = ref->m - 1; i >= 0; i--)
	{
		ref->ratio[i] = work[2 * i];
		ref->from[i] = ref->from[i + 1] + work[2 * i + 1];
	}
}

/*
 * Is what voice v reports rare among the reports of the reference voices
 * (and its own)?  For each of its ratios t on the side of its mean, the
 * probability that as many of n_v honest reports as it has at t or beyond
 * lie there, each with the voice-weighted share of the reference's reports
 * (and its own) that do; the least of these, times the number of ratios
 * tried.  sorted: room for the voice's n_v ratios.
 */
static double
voice_odds(const AppUnitReport *reports, const VoiceMean *v, const Reference *ref,
		   bool in_ref, int min_count, double centre, double *sorted)
{
	bool		above = v->mean > centre;
	double		least = 1;
	int			tried = 0;

	for (int i = 0; i < v->n; i++)
		sorted[i] = ratio_of(&reports[v->first + i]);
	qsort(sorted, v->n, sizeof(double), by_ratio);
	for (int i = 0; i < v->n; i++)
	{
		/* from the far end: t and how many of its ratios lie at t or beyond */
		int			at = above ? v->n - 1 - i : i;
		double		t = sorted[at];
		int			count = i + 1;
		double		own,
					share;

		if ((above ? t <= centre : t >= centre) ||
			(i + 1 < v->n && sorted[above ? at - 1 : at + 1] == t))
			continue;			/* not on its side, or not the last of equals */
		if (count < min_count)
			continue;			/* one report is no habit (together) */
		own = (double) count / v->n;
		share = in_ref ? reference_beyond(ref, t, above) / ref->voices :
			(reference_beyond(ref, t, above) + own) / (ref->voices + 1);
		least = fmin(least, binomial_tail(v->n, count, share));
		tried++;
	}
	return tried == 0 ? 1 : fmin(1, least * tried);
}

/*
 * Which voices are beyond chance together (issue 30, "collusion breakdown",
 * in band).  A voice's odds (voice_odds) say how seldom one honest voice
 * reports as it does; an honest voice's odds are at most t with
 * probability about t.  So among nv honest voices, c or more with odds at
 * or below t is a binomial tail, P(Binomial(nv, t) >= c).  For each
 * distinct odds t below 1 among the k given, that tail with c the voices
 * at or below t; the least of these tails, times the number of t tried,
 * below ALLOT_CHANCE_ODDS_TOGETHER: returns its t (the voices at or below
 * it are left out together), else -1.  The least tail, not the largest t
 * that passes: once colluders make the count overwhelming, a larger t
 * would still pass and sweep in honest voices of the tail.  odds: sorted
 * in place.  With least_tail false: the least t whose tail is below it
 * (the rarest group beyond chance by itself), for when the least tail
 * would sweep in half the voices.
 */
static double
collective_threshold(double *odds, int k, int nv, bool least_tail)
{
	double		threshold = -1,
				least = 1;
	int			tried = 0;

	qsort(odds, k, sizeof(double), by_ratio);
	for (int i = 0; i < k && odds[i] < 1; i++)
	{
		if (i + 1 < k && odds[i + 1] == odds[i])
			continue;
		tried++;
	}
	for (int i = 0; i < k && odds[i] < 1; i++)
	{
		double		tail;

		if (i + 1 < k && odds[i + 1] == odds[i])
			continue;
		tail = binomial_tail(nv, i + 1, odds[i]);
		if (tail < least && (least_tail || tail * tried < ALLOT_CHANCE_ODDS_TOGETHER))
		{
			least = tail;
			threshold = odds[i];
			if (!least_tail)
				break;
		}
	}
	return least * tried < ALLOT_CHANCE_ODDS_TOGETHER ? threshold : -1;
}

/*
 * Leave out the voices beyond chance (above), adding them to the screen's
 * list.  Returns how many reports remain, moved to the front (sorted by
 * voice).  work must hold 7 * n + 1 doubles.
 */
static int
leave_out_improbable_voices(AppUnitReport *reports, int n, double *work,
							AppUnitScreen *screen)
{
	VoiceMean  *vm = (VoiceMean *) (work + 2 * n);	/* n of them: 3 doubles' room each */
	double	   *x = work;
	double	   *w = work + n;
	int			nv = 0,
				out = 0,
				kept = 0;
	double		ss = 0,
				dof = 0,
				centre,
				sd,
				threshold;
	double	   *odds;
	Reference	ref;

	if (n == 0)
		return 0;
	qsort(reports, n, sizeof(AppUnitReport), by_host);
	for (int i = 0; i < n;)
	{
		int			j = i;
		double		sum = 0;

		while (j < n && reports[j].voice == reports[i].voice)
			sum += ratio_of(&reports[j++]);
		vm[nv].first = i;
		vm[nv].n = j - i;
		vm[nv].mean = sum / (j - i);
		for (int k = i; k < j; k++)
			ss += (ratio_of(&reports[k]) - vm[nv].mean) * (ratio_of(&reports[k]) - vm[nv].mean);
		dof += j - i - 1;
		nv++;
		i = j;
	}
	if (nv < ALLOT_SCREEN_AMONG || dof == 0)
		return n;

	/* The voices' median mean, and the pooled spread within voices. */
	for (int v = 0; v < nv; v++)
	{
		x[v] = vm[v].mean;
		w[v] = 1;
	}
	centre = allot_median_voices(x, w, nv);
	sd = fmax(sqrt(ss / dof), ALLOT_CHANCE_SD_FLOOR * fabs(centre));
	for (int v = 0; v < nv; v++)
	{
		double		z = fabs(vm[v].mean - centre) / (sd / sqrt((double) vm[v].n));

		vm[v].reference = z <= ALLOT_BOUND_X;
		vm[v].far = z > ALLOT_CHANCE_SIGMAS;
	}
	/* Each voice alone, against the voices chance allows (4 SE). */
	build_reference(reports, vm, nv, false, work, n, &ref);
	for (int v = 0; v < nv; v++)
		vm[v].kept = !vm[v].far ||
			voice_odds(reports, &vm[v], &ref, vm[v].reference, 1, centre, x) >= ALLOT_CHANCE_ODDS;

	/*
	 * The voices together, each against the voices that are not far (2
	 * SE): colluders within 4 SE would vouch for one another there, and a
	 * colluder near enough not to be far counts among those judged.  Only
	 * voices above the centre are judged together: colluders with many
	 * long reports make honest voices without a long job look rare too
	 * (the reference's tail is theirs), and below the centre no claim is
	 * rarer than what an honest voice without a long job reports; one a
	 * hundred times lower is screened, one no honest voice reports is
	 * rare alone.
	 */
	build_reference(reports, vm, nv, true, work, n, &ref);
	odds = work + n;			/* the reference's scratch is free now */
	for (int v = 0; v < nv; v++)
		odds[v] = vm[v].mean <= centre ? 1 :
			voice_odds(reports, &vm[v], &ref, !vm[v].far, 2, centre, x);
	memcpy(x, odds, nv * sizeof(double));
	threshold = collective_threshold(x, nv, nv, true);
	for (int v = 0; v < nv; v++)
		out += !vm[v].kept || odds[v] <= threshold;
	if (out * 2 >= nv)
	{
		/*
		 * The least tail swept in half the voices: colluders a third of
		 * the voices make even common odds too common, and honest voices
		 * of the tail share them.  Take the rarest group that is beyond
		 * chance by itself instead; the next pass judges the rest.
		 */
		memcpy(x, odds, nv * sizeof(double));
		threshold = collective_threshold(x, nv, nv, false);
	}
	out = 0;
	for (int v = 0; v < nv; v++)
	{
		vm[v].kept = vm[v].kept && !(odds[v] <= threshold);
		out += !vm[v].kept;
	}
	if (out * 2 >= nv)
		return n;				/* not a minority: leave the seed's formulas be */

	for (int v = 0; v < nv; v++)
	{
		if (!vm[v].kept)
		{
			if (screen->voices_out != NULL)
				screen->voices_out[screen->n_voices_out++] = reports[vm[v].first].voice;
			continue;
		}
		for (int i = vm[v].first; i < vm[v].first + vm[v].n; i++)
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

/*
 * The ratio the farm's tail reaches: the largest that one voice in
 * ALLOT_TAIL_SHARE has reported or passed (each voice's largest ratio, the
 * ceil(hosts / ALLOT_TAIL_SHARE)-th from the top).  Reports sorted by
 * voice; work: n doubles.
 */
static double
farms_tail(const AppUnitReport *reports, int n, double hosts, double *work)
{
	int			nv = 0,
				k = (int) ceil(hosts / ALLOT_TAIL_SHARE);

	for (int i = 0; i < n;)
	{
		int64_t		voice = reports[i].voice;
		double		most = 0;

		for (; i < n && reports[i].voice == voice; i++)
			most = fmax(most, reports[i].actual / reports[i].predicted);
		work[nv++] = most;
	}
	if (k < 1 || k > nv)
		return 0;
	qsort(work, nv, sizeof(double), by_ratio);
	return work[nv - k];
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
	double		tail;

	if (screen != NULL)
	{
		n = screen_reports(reports, n, work, screen);
		/*
		 * Again on what is left, while it leaves voices out: a group left
		 * out together (the rarest) may hide a second group of the same
		 * colluders, less rare, that the first inflated the spread for.
		 * On an honest farm the first pass leaves nothing out.
		 */
		for (int pass = 0; pass < CHANCE_PASSES && !screen->screen_only; pass++)
		{
			int			left = leave_out_improbable_voices(reports, n, work, screen);

			if (left == n)
				break;
			n = left;
		}
	}
	x = work;					/* counted ratios */
	w = work + n;				/* weights */
	stats->n = n;
	stats->actual_au_mean = stats->actual_au_m2 = 0;
	stats->predicted_au_mean = stats->predicted_au_m2 = 0;
	stats->au_ratio_mean = stats->au_ratio_m2 = 0;
	stats->au_ratio_tail = 0;
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
			hosts >= ALLOT_SCREEN_AMONG &&
			(tail = farms_tail(reports, n, hosts, work + 2 * n)) >= limit)
		{
			/*
			 * Stalled below a tail the farm shares (0.7.0): counted up to
			 * the limit, a tail rarer than about one report in 17 can never
			 * raise it (mean + X sd of the capped values stays below), and
			 * voices that report exactly their prediction, diluting the
			 * tail, stalled it below the farm's honest long jobs.  When at
			 * least one voice in ALLOT_TAIL_SHARE reaches the limit, the
			 * tail is not a few voices' claim: the search goes on from the
			 * larger of the seed's own bound over the screened reports,
			 * uncapped, and the ratio the farm's tail reaches.  Even
			 * uncapped, mean + X sd stays below a tail rarer than one report
			 * in 17 (Cantelli's inequality: X = 4 promises no more), so that
			 * ratio is also kept as a floor of the jobs' bound.
			 */
			double		plain = plain_bound(reports, w, n, hosts, neff, work + 2 * n);

			stalled = true;
			stats->au_ratio_tail = tail;
			if (fmax(plain, tail) > limit)
			{
				limit = fmax(plain, tail);
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
