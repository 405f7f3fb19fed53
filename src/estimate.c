/*
 * estimate.c: how long a job will take (seed 004, "Job completion time
 * estimates and bounds").
 *
 *   seconds_per_app_unit(H, V) * J.predicted_app_units
 *     * (actual_mean / predicted_mean + X * stdev(actual / predicted))
 *
 * with X = 2 for the estimate and X = 4 for the bound.  seconds_per_app_unit
 * comes from the host's own history with the version; before there is any,
 * from the app's FLOPs per app unit over the version's peak FLOPS on the
 * host; before that, from a configured default.
 */
#include <math.h>
#include <stddef.h>

#include "estimate.h"

/* A standard deviation of app-unit ratios below this share of their mean is none. */
#define ALLOT_NO_SPREAD 1e-6

/*
 * The credit a job counts for the moment it is sent (fairness = recent or
 * debt): its estimate times the peak FLOPS it runs at, the estimate taken at
 * most as the delay bound.  A job whose estimate exceeds its bound is sent
 * only as a probe (to an idle resource of a workload with nothing in
 * progress), and its estimate then follows whatever seconds per app unit
 * the client stated; without the cap one request could write credit enough
 * to starve its workload for months.  A job cannot run longer than its
 * bound and be counted, so the cap takes nothing from an honest one.
 */
double
allot_sent_credit(double est_secs, double peak_flops, double bound_secs)
{
	if (!(est_secs <= bound_secs))		/* NaN included */
		est_secs = bound_secs;
	return est_secs * peak_flops;
}

/* Sample standard deviation from a Welford accumulator; 0 below 2 samples. */
double
allot_stdev(int64_t n, double m2)
{
	if (n < 2 || m2 <= 0)
		return 0;
	return sqrt(m2 / (double) (n - 1));
}

/*
 * The seed's correction of predicted app units: the ratio of the means plus
 * X standard deviations of actual/predicted.  An app with no history
 * predicts exactly: 1.
 */
double
allot_app_unit_factor(const AppStats *stats, double x)
{
	double		ratio = 1;

	if (stats == NULL || stats->n == 0)
		return 1;
	if (stats->predicted_au_mean > 0)
		ratio = stats->actual_au_mean / stats->predicted_au_mean;
	return ratio + x * allot_stdev(stats->n, stats->au_ratio_m2);
}

/*
 * The fallback chain for seconds per app unit.  What the host says of
 * itself (its own reports, or its request) counts no faster than the app's
 * FLOPs per app unit at the version's peak FLOPS on the host: the FLOPs per
 * app unit are those of the farm's most efficient hosts (the transitioner's
 * percentile), so no honest host runs much faster than that, and a host
 * that claims to cannot draw more jobs, each estimated shorter, than its
 * hardware could run.
 */
double
allot_seconds_per_app_unit(const EstimateInput *in)
{
	if (in->seconds_per_app_unit > 0)
	{
		if (in->est_flops_per_au > 0 && in->peak_flops > 0 &&
			in->seconds_per_app_unit < in->est_flops_per_au / in->peak_flops)
			return in->est_flops_per_au / in->peak_flops;
		return in->seconds_per_app_unit;
	}
	if (in->est_flops_per_au > 0 && in->peak_flops > 0)
		return in->est_flops_per_au / in->peak_flops;
	return in->default_seconds_per_app_unit;
}

/*
 * Do the app's reports of app units show how its jobs differ?  Not when
 * every report said what was predicted (most BOINC apps never call the
 * app-units API, and each report says 1): then the seed's bound is the
 * estimate itself, and seed 004's note 3 applies, "an app's jobs have
 * variance that is not reflected in app units".
 */
bool
allot_app_units_show_spread(const AppStats *stats)
{
	/* Not rounding noise: ratios of 1 summed in floating point. */
	return stats != NULL &&
		allot_stdev(stats->n, stats->au_ratio_m2) > ALLOT_NO_SPREAD * fabs(stats->au_ratio_mean);
}

/*
 * The estimate (X = 2) and the bound (X = 4) of seed 004, the bound at
 * least the base times the ratio the farm's tail reaches where mean + 4 sd
 * falls short of it (AppStats.au_ratio_tail, issue 30).  Where app units
 * show no spread, the bound comes from run times instead (issue 32): the
 * FLOPs per predicted app unit that the app's run times reach at mean + 4
 * standard deviations (the transitioner's run_flops_bound, learnt as the
 * app-unit statistics are), over the FLOPs per app unit the base is
 * counted at; while that is unknown, default_bound_factor times the base.
 * Never below the seed's own bound, and never below the operator's
 * bound_factor times the estimate (BOINC's rsc_fpops_bound by hand).
 */
void
allot_estimate(const EstimateInput *in, const AppStats *stats,
			   double *est_secs, double *bound_secs)
{
	double		base = allot_seconds_per_app_unit(in) * in->predicted_app_units;
	double		bound;

	*est_secs = base * allot_app_unit_factor(stats, ALLOT_ESTIMATE_X);
	bound = base * allot_app_unit_factor(stats, ALLOT_BOUND_X);
	if (stats != NULL && stats->n > 0 && base * stats->au_ratio_tail > bound)
		bound = base * stats->au_ratio_tail;
	if (!allot_app_units_show_spread(stats))
	{
		double		factor = in->default_bound_factor;

		if (in->run_flops_bound > 0 && in->est_flops_per_au > 0)
			factor = in->run_flops_bound / in->est_flops_per_au;
		if (base * factor > bound)
			bound = base * factor;
	}
	if (in->bound_factor > 0 && *est_secs * in->bound_factor > bound)
		bound = *est_secs * in->bound_factor;
	/* A job may always run as long as it is expected to. */
	if (bound < *est_secs)
		bound = *est_secs;
	*bound_secs = bound;
}
