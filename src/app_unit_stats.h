/*
 * app_unit_stats.h: an app's statistics of app units (seed 004), learnt from
 * its recent validated reports with one voice per host.
 *
 * Pure logic: no SPI, no allocation, no PostgreSQL headers.
 */
#ifndef ALLOT_APP_UNIT_STATS_H
#define ALLOT_APP_UNIT_STATS_H

#include <stdint.h>

#include "estimate.h"

/* One validated successful report in an app's window. */
typedef struct AppUnitReport
{
	int64_t		voice;			/* its host's voice (voices.h) */
	double		actual;			/* app units reported */
	double		predicted;		/* app units the job predicted */
} AppUnitReport;

/*
 * Before a report's ratio of actual to predicted app units counts in full,
 * it must lie within the seed's own bound (mean + ALLOT_BOUND_X standard
 * deviations); the search for that bound starts at this many times the
 * median ratio (see app_unit_stats.c).
 */
#define ALLOT_RATIO_START 2.0

/*
 * The app's statistics from reports[0 .. n), each host one voice.  Sorts
 * reports by host in place; work must hold 4 * n doubles.  *cap receives
 * the ratio beyond which a report counted at that ratio (0 when n is 0).
 */
extern void allot_app_unit_stats(AppUnitReport *reports, int n, double *work,
								 AppStats *stats, double *cap);

#endif							/* ALLOT_APP_UNIT_STATS_H */
