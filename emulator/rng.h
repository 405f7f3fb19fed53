/*
 * rng.h: the emulator's seeded random numbers (splitmix64).
 *
 * Every random quantity comes from a stream derived from the scenario seed
 * and what it is about (a host, a job), never from the order of events, so
 * that a job draws the same app units whichever host takes it and whatever
 * the interleaving of the connections was.
 */
#ifndef EMULATOR_RNG_H
#define EMULATOR_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct Rng
{
	uint64_t	state;
} Rng;

static inline uint64_t
rng_next(Rng *r)
{
	uint64_t	z = (r->state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* A stream for (seed, purpose, id): purposes keep streams apart. */
static inline Rng
rng_stream(uint64_t seed, uint64_t purpose, uint64_t id)
{
	Rng			r = {seed ^ (purpose * UINT64_C(0xD1B54A32D192ED03))};

	r.state ^= id * UINT64_C(0x8CB92BA72F3D8DD7);
	(void) rng_next(&r);
	return r;
}

/* Uniform in [0, 1). */
static inline double
rng_uniform(Rng *r)
{
	return (double) (rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Exponential with the given mean. */
static inline double
rng_exponential(Rng *r, double mean)
{
	return -mean * log(1.0 - rng_uniform(r));
}

/* Standard normal (Box-Muller). */
static inline double
rng_normal(Rng *r)
{
	double		u = 1.0 - rng_uniform(r);
	double		v = rng_uniform(r);

	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* Stream purposes. */
enum
{
	RNG_HOST_SHAPE = 1,
	RNG_AVAILABILITY,
	RNG_JOB,
	RNG_ASSIGN,
	RNG_SQL_SEED
};

#endif							/* EMULATOR_RNG_H */
