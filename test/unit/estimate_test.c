/*
 * estimate_test.c: unit tests of src/estimate.c (run-time estimates, the
 * credit a sent job counts for), without
 * PostgreSQL.  Prints TAP.  Build and run: make -C test/unit (or
 * test/unit/run.sh).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "estimate.h"
#include "tap.h"

static bool
near(double got, double want)
{
	double		scale = fabs(want) > 1 ? fabs(want) : 1;

	return got == want || fabs(got - want) <= 1e-12 * scale;
}

/* The sent credit: estimate x peak, the estimate at most the bound. */
static bool
t_sent_credit(void)
{
	return near(allot_sent_credit(3600, 1e9, 86400), 3.6e12) &&
		near(allot_sent_credit(86400, 1e9, 86400), 8.64e13) &&
		near(allot_sent_credit(1e19, 1e9, 259200), 2.592e14) &&
		near(allot_sent_credit(INFINITY, 1e9, 259200), 2.592e14) &&
		near(allot_sent_credit(NAN, 1e9, 259200), 2.592e14);
}

/* The fallback chain: own figure, then FLOPs over peak, then the default. */
static bool
t_seconds_per_app_unit(void)
{
	EstimateInput own = {.seconds_per_app_unit = 7, .est_flops_per_au = 1e9,
	.peak_flops = 1e9, .predicted_app_units = 1, .default_seconds_per_app_unit = 60};
	EstimateInput flops = own;
	EstimateInput dflt = own;
	EstimateInput too_fast = own;

	flops.seconds_per_app_unit = 0;
	dflt.seconds_per_app_unit = 0;
	dflt.est_flops_per_au = 0;
	/* A host's own figure counts no faster than the app's FLOPs per app
	 * unit at its peak: 1e9 FLOPs a unit at 1e9 FLOPS, 1 s. */
	too_fast.seconds_per_app_unit = 1e-6;
	return near(allot_seconds_per_app_unit(&own), 7) &&
		near(allot_seconds_per_app_unit(&flops), 1) &&
		near(allot_seconds_per_app_unit(&dflt), 60) &&
		near(allot_seconds_per_app_unit(&too_fast), 1);
}

/* Estimate and bound: 2 and 4 standard deviations above the mean ratio. */
static bool
t_estimate_and_bound(void)
{
	/* ratios 1 and 3: mean 2, m2 2, stdev sqrt(2) */
	AppStats	s = {.n = 2, .actual_au_mean = 200, .predicted_au_mean = 100,
	.au_ratio_mean = 2, .au_ratio_m2 = 2};
	EstimateInput in = {.seconds_per_app_unit = 10, .predicted_app_units = 5};
	double		est,
				bound;

	allot_estimate(&in, &s, &est, &bound);
	return near(est, 50 * (2 + 2 * sqrt(2))) && near(bound, 50 * (2 + 4 * sqrt(2))) &&
		near(allot_stdev(1, 5), 0) && near(allot_stdev(3, -1), 0);
}

/*
 * Issue 32: app units that say nothing (every ratio 1) leave the bound to
 * run times: their learnt figure over the FLOPs per app unit, else the
 * default factor; the operator's factor is a floor over the estimate; and
 * where app units show the spread, the seed's bound stands.
 */
static bool
t_bound_without_app_units(void)
{
	AppStats	flat = {.n = 50, .actual_au_mean = 1, .predicted_au_mean = 1,
	.au_ratio_mean = 1, .au_ratio_m2 = 0};
	AppStats	spread = {.n = 2, .actual_au_mean = 200, .predicted_au_mean = 100,
	.au_ratio_mean = 2, .au_ratio_m2 = 2};
	EstimateInput in = {.est_flops_per_au = 1e11, .peak_flops = 1e9,
	.predicted_app_units = 1, .default_bound_factor = 10};
	double		est,
				bound,
				b_default,
				b_run,
				b_floor,
				b_seed;

	allot_estimate(&in, &flat, &est, &b_default);	/* base 100 s */
	in.run_flops_bound = 12.7e11;
	allot_estimate(&in, &flat, &est, &b_run);
	in.bound_factor = 20;
	allot_estimate(&in, &flat, &est, &b_floor);
	in.bound_factor = 0;
	allot_estimate(&in, &spread, &est, &b_seed);
	allot_estimate(&in, NULL, &est, &bound);
	return near(b_default, 1000) && near(b_run, 1270) && near(b_floor, 2000) &&
		near(b_seed, 100 * (2 + 4 * sqrt(2))) && near(bound, 1270) &&
		!allot_app_units_show_spread(&flat) && allot_app_units_show_spread(&spread);
}

static const UnitTest tests[] =
{
	{"sent credit: estimate capped at the delay bound, NaN and inf too", t_sent_credit},
	{"seconds per app unit: own figure (no faster than FLOPs over peak), FLOPs over peak, default", t_seconds_per_app_unit},
	{"estimate and bound: X = 2 and 4 standard deviations", t_estimate_and_bound},
	{"bound without app units: run times, else the default factor; operator's floor", t_bound_without_app_units},
};

int
main(void)
{
	return run_tests(tests, (int) (sizeof(tests) / sizeof(tests[0])));
}
