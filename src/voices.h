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

#endif							/* ALLOT_VOICES_H */
