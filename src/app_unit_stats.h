/*
 * app_unit_stats.h: an app's statistics of app units (seed 004), learnt from
 * its recent validated reports with one voice per owner (voices.h).
 *
 * Pure logic: no SPI, no allocation, no PostgreSQL headers.
 */
#ifndef ALLOT_APP_UNIT_STATS_H
#define ALLOT_APP_UNIT_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "estimate.h"
#include "voices.h"

/* One validated successful report in an app's window. */
typedef struct AppUnitReport
{
	int64_t		voice;			/* its host's voice (voices.h) */
	double		actual;			/* app units reported */
	double		predicted;		/* app units the job predicted */
	double		flops_per_au;	/* elapsed x raw FLOPS / actual, as claimed;
								 * 0: the report says nothing of it */
} AppUnitReport;

/*
 * What screening left out (voices.h): the bands of ratios and of FLOPS per
 * app unit, and the voices left out of every statistic (room for n).
 */
typedef struct AppUnitScreen
{
	ScreenBand	ratio;
	ScreenBand	flops;
	int64_t    *voices_out;
	int			n_voices_out;
	bool		screen_only;	/* true: screening alone, without the rule of
								 * ALLOT_CHANCE_SIGMAS (for comparison) */
} AppUnitScreen;

/* Doubles of work allot_app_unit_stats needs for n reports. */
#define ALLOT_APP_UNIT_WORK(n) (11 * (n) + 1)

/*
 * Before a report's ratio of actual to predicted app units counts in full,
 * it must lie within the seed's own bound (mean + ALLOT_BOUND_X standard
 * deviations); the search for that bound starts at this many times the
 * median ratio (see app_unit_stats.c).
 */
#define ALLOT_RATIO_START 2.0

/*
 * A voice whose mean ratio of actual to predicted app units lies more than
 * ALLOT_CHANCE_SIGMAS standard errors (sd / sqrt(its reports)) from the
 * voices' mean (twice the seed's X of the bound), and whose reports the
 * other voices would show less often than ALLOT_CHANCE_ODDS, is left out
 * of the app's statistics (app_unit_stats.c, "bounded influence over
 * owners' voices").
 */
#define ALLOT_CHANCE_SIGMAS ALLOT_ESTIMATE_X
#define ALLOT_CHANCE_ODDS 1e-6

/*
 * Voices that are each rare, but not one in a million, are left out
 * together when honest voices would show as many as rare less often than
 * this (app_unit_stats.c, "together"): a hundredth of ALLOT_CHANCE_ODDS,
 * since the odds it multiplies are estimated from the farm itself.
 */
#define ALLOT_CHANCE_ODDS_TOGETHER 1e-8

/*
 * The app's statistics from reports[0 .. n), each voice one voice, after
 * screening (voices.h): the reports of voices left out, and those whose
 * ratio is beyond the band, are not counted (stats->n counts the rest).
 * Reorders reports in place; work must hold ALLOT_APP_UNIT_WORK(n)
 * doubles.  *cap receives the ratio beyond which a report counted at that
 * ratio (0 when nothing counts).  With screen NULL nothing is screened
 * (0.6.0's statistics); else it receives what was left out, by
 * screening and by chance (the voices beyond ALLOT_CHANCE_SIGMAS).
 */
extern void allot_app_unit_stats(AppUnitReport *reports, int n, double *work,
								 AppStats *stats, double *cap, AppUnitScreen *screen);

#endif							/* ALLOT_APP_UNIT_STATS_H */
