/*
 * voices_test.c: unit tests of src/voices.c (each owner one voice) and of
 * the lower weighted median in src/percentile.c, without PostgreSQL.
 * Prints TAP.  Build and run: make -C test/unit.
 */
#include <stdbool.h>

#include "percentile.h"
#include "tap.h"
#include "voices.h"

/* A host without an owner is its own voice; an owner's hosts share one. */
static bool
test_voice_of(void)
{
	return allot_voice_of(42, 0) == 42 && allot_voice_of(42, 7) == -7 &&
		allot_voice_of(43, 7) == allot_voice_of(42, 7) &&
		allot_voice_of(1, INT64_C(1) << 40) > ALLOT_VOICE_LEGACY_BELOW;
}

/* Thirty values of one voice weigh what one value of another does. */
static bool
test_weights(void)
{
	int64_t		voices[31];
	double		w[31],
				sum30 = 0;
	int64_t		work[31];
	int			distinct;

	for (int i = 0; i < 30; i++)
		voices[i] = -5;
	voices[30] = 9;
	distinct = allot_voice_weights(voices, 31, w, work);
	for (int i = 0; i < 30; i++)
		sum30 += w[i];
	return distinct == 2 && sum30 > 0.999999 && sum30 < 1.000001 && w[30] == 1.0;
}

/* Thirty registrations of one owner claiming 1e18 against three honest
 * voices at 1e9: the median is 1e9.  Two voices: the lesser holds it. */
static bool
test_median(void)
{
	double		v[33],
				w[33];
	int64_t		voices[33],
				work[33];
	double		two[2] = {1e18, 1e9},
				tw[2] = {1, 1};

	for (int i = 0; i < 30; i++)
	{
		v[i] = 1e18;
		voices[i] = -1;
	}
	for (int i = 30; i < 33; i++)
	{
		v[i] = 1e9;
		voices[i] = i;
	}
	allot_voice_weights(voices, 33, w, work);
	return allot_median_voices(v, w, 33) == 1e9 && allot_median_voices(two, tw, 2) == 1e9;
}

/* Thirty owners of one host each claiming 1e18 against three honest ones:
 * they are the majority of the voices, and hold the median (which is why
 * only proven hosts are counted). */
static bool
test_median_majority(void)
{
	double		v[33],
				w[33];
	int64_t		voices[33],
				work[33];

	for (int i = 0; i < 33; i++)
	{
		v[i] = i < 30 ? 1e18 : 1e9;
		voices[i] = i + 1;
	}
	allot_voice_weights(voices, 33, w, work);
	return allot_median_voices(v, w, 33) == 1e18;
}

int
main(void)
{
	static const UnitTest tests[] = {
		{"a host without an owner is its own voice; an owner's hosts share one", test_voice_of},
		{"thirty values of one voice weigh what one value of another does", test_weights},
		{"one owner's thirty 1e18 claims do not move the median; of two voices the lesser holds it", test_median},
		{"thirty owners are thirty voices: a majority holds the median", test_median_majority},
	};

	return run_tests(tests, sizeof(tests) / sizeof(tests[0]));
}
