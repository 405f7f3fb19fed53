/*
 * share_history_test.c: unit tests of src/share_history.h (the minute a
 * sample belongs to, and which samples are past their retention), without
 * PostgreSQL.  Prints TAP.  Build and run: make -C test/unit (or
 * test/unit/run.sh).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "share_history.h"
#include "tap.h"

#define MIN ALLOT_USECS_PER_MINUTE
#define SEC INT64_C(1000000)

/* 2026-01-01 10:02:45.5 UTC, in microseconds from 2000-01-01 UTC. */
#define T_2026 (INT64_C(820576800) * SEC + 2 * MIN + 45 * SEC + SEC / 2)

/* The seconds are cut off; a whole minute stays as it is. */
static bool
t_minute_after_2000(void)
{
	return allot_sample_minute(T_2026) == T_2026 - 45 * SEC - SEC / 2 &&
		allot_sample_minute(T_2026 - 45 * SEC - SEC / 2) == T_2026 - 45 * SEC - SEC / 2 &&
		allot_sample_minute(0) == 0 &&
		allot_sample_minute(MIN - 1) == 0 &&
		allot_sample_minute(MIN) == MIN;
}

/* Before 2000 (negative instants) it rounds down too, not toward zero. */
static bool
t_minute_before_2000(void)
{
	return allot_sample_minute(-1) == -MIN &&
		allot_sample_minute(-MIN) == -MIN &&
		allot_sample_minute(-MIN - 1) == -2 * MIN &&
		/* 1970-01-01 00:00:30 UTC */
		allot_sample_minute(-INT64_C(946684800) * SEC + 30 * SEC) == -INT64_C(946684800) * SEC;
}

/* The cutoff is the minute less the retention; 0 keeps only this minute. */
static bool
t_cutoff(void)
{
	int64_t		minute = allot_sample_minute(T_2026);

	return allot_sample_cutoff(T_2026, 86400) == minute - 1440 * MIN &&
		allot_sample_cutoff(T_2026, 120) == minute - 2 * MIN &&
		allot_sample_cutoff(T_2026, 0) == minute &&
		allot_sample_cutoff(T_2026, 31 * 86400) == minute - 31 * 1440 * MIN;
}

static const UnitTest tests[] = {
	{"the minute of an instant after 2000: its seconds cut off", t_minute_after_2000},
	{"the minute of an instant before 2000 rounds down", t_minute_before_2000},
	{"the cutoff: the minute less the retention", t_cutoff},
};

int
main(void)
{
	return run_tests(tests, (int) (sizeof(tests) / sizeof(tests[0])));
}
