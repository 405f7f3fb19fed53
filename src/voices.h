/*
 * voices.h: who speaks in allot's statistics (issue 30, "a voice is
 * earned").
 *
 * A host costs nothing to make, so a host is not a voice: its owner is (a
 * BOINC account, an OpenBench user, the operator; allot.owner).  A host
 * without an owner is its own owner.  Every figure allot learns from what
 * hosts say (an app's app-unit statistics and FLOPS per app unit, each
 * resource's median FLOPS) weighs each voice once, however many hosts and
 * reports it has: a voice's values share one weight.
 *
 * A voice is a bigint, so that the apps' arrays can keep it beside each
 * value: a host without an owner is its own id (> 0), an owner is minus its
 * id; values kept from before 0.6.0 are below ALLOT_VOICE_LEGACY_BELOW, a
 * voice each.
 *
 * Pure logic: no SPI, no allocation, no PostgreSQL headers.
 */
#ifndef ALLOT_VOICES_H
#define ALLOT_VOICES_H

#include <stdbool.h>
#include <stdint.h>

#define ALLOT_VOICE_LEGACY_BELOW (-(INT64_C(1) << 62))

/* The voice of a host: its owner's (owner_id > 0), else its own. */
static inline int64_t
allot_voice_of(int64_t host_id, int64_t owner_id)
{
	return owner_id > 0 ? -owner_id : host_id;
}

/*
 * Each value's weight, its voice's one weight shared among the voice's
 * values: w[i] = 1 / (values of voices[i]).  work must hold n int64s.
 * Returns the number of distinct voices.
 */
extern int	allot_voice_weights(const int64_t *voices, int n, double *w, int64_t *work);

/*
 * Bounded influence (issue 30, "collusion breakdown").  The seed's mean +
 * X standard deviations and its 5th percentile let a few voices move them
 * without end: colluders past about one voice in 16 raised the bound by
 * claiming huge app units, and five voices in a hundred claiming tiny run
 * times set the 5th percentile.  Before the seed's formulas run, claims
 * implausible by far are left out:
 *
 *   a voice   whose median value lies more than ALLOT_SCREEN_SPREAD times
 *             above or below the voices' median (each voice one vote),
 *             with every value it sent, in every statistic
 *   a value   beyond the same band on its own
 *
 * Only among ALLOT_SCREEN_AMONG voices or more: with fewer there is no
 * majority to judge by.  An honest farm, whose hosts differ in how long a
 * unit of work takes them by less than the spread, keeps every value, and
 * the seed's formulas apply to it unchanged.  Claims within the band are
 * the seed's formulas' to bound (app_unit_stats.c): the limits, measured,
 * are in the threat model.
 */
#define ALLOT_SCREEN_SPREAD 100.0
#define ALLOT_SCREEN_AMONG 10

/* The band of plausible values: centre / spread .. centre * spread. */
typedef struct ScreenBand
{
	double		centre;			/* 0: no band (too few voices, or none) */
	double		low;
	double		high;
} ScreenBand;

/*
 * Screens values[0 .. n) of voices[0 .. n) (a value <= 0 or NaN says
 * nothing and is neither judged nor counted): sets *band, and voice_out[i]
 * when the voice of value i is left out, value_out[i] when value i is
 * beyond the band.  work must hold 3 * n doubles, iwork 2 * n int64s.
 */
extern void allot_screen(const int64_t *voices, const double *values, int n,
						 ScreenBand *band, bool *voice_out, bool *value_out,
						 double *work, int64_t *iwork);

/*
 * The p-th percentile of values[0 .. n) by voices (allot_percentile_voices)
 * after screening them: seed 004's figure of FLOPS per app unit, held to
 * the band.  n must be >= 1; if screening left nothing out, it is the
 * seed's figure exactly.  Reorders values; work must hold 5 * n doubles,
 * iwork 3 * n int64s, flags 2 * n bools.
 */
extern double allot_percentile_screened(double *values, const int64_t *voices, int n, double p,
										double *work, int64_t *iwork, bool *flags);

#endif							/* ALLOT_VOICES_H */
