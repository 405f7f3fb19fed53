/*
 * estimate.h: run-time estimates and running statistics (seed 004).
 *
 * Pure logic: no SPI, no allocation, no PostgreSQL headers.
 */
#ifndef ALLOT_ESTIMATE_H
#define ALLOT_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

/* An app's statistics over its successful jobs (Welford accumulators). */
typedef struct AppStats
{
	int64_t		n;
	double		actual_au_mean;
	double		actual_au_m2;
	double		predicted_au_mean;
	double		predicted_au_m2;
	double		au_ratio_mean;	/* of actual / predicted */
	double		au_ratio_m2;
	double		au_ratio_tail;	/* the ratio the farm's tail reaches, where
								 * the seed's bound falls short of it
								 * (app_unit_stats.c); 0: none */
} AppStats;

/* What is known about running one job with one app version on one host. */
typedef struct EstimateInput
{
	double		seconds_per_app_unit;	/* host's history or its own figure; 0: none */
	double		est_flops_per_au;	/* the app's FLOPs per app unit; 0: none */
	double		peak_flops;		/* the version's peak FLOPS on this host */
	double		predicted_app_units;
	double		default_seconds_per_app_unit;	/* the last resort */
	/* The bound when app units say nothing of the spread (estimate.c): */
	double		run_flops_bound;	/* the app's FLOPs per predicted app unit
									 * that mean + X sd of its run times
									 * reach; 0: not known yet */
	double		default_bound_factor;	/* bound / base while it is unknown */
	double		bound_factor;	/* the operator's floor, bound / estimate;
								 * 0: none */
} EstimateInput;

/* Multipliers of the seed: X = 2 for the estimate, X = 4 for the bound. */
#define ALLOT_ESTIMATE_X 2.0
#define ALLOT_BOUND_X 4.0

extern double allot_sent_credit(double est_secs, double peak_flops,
								double bound_secs);
extern double allot_stdev(int64_t n, double m2);
extern double allot_app_unit_factor(const AppStats *stats, double x);
extern double allot_seconds_per_app_unit(const EstimateInput *in);
extern bool allot_app_units_show_spread(const AppStats *stats);
extern void allot_estimate(const EstimateInput *in, const AppStats *stats,
						   double *est_secs, double *bound_secs);

#endif							/* ALLOT_ESTIMATE_H */
