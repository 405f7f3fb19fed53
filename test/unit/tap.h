/*
 * tap.h: the runner every unit test program shares.  A test is a function
 * that returns whether it passed; run_tests() prints TAP ("1..N", then one
 * "ok" or "not ok" line per test) and returns the program's exit status.
 */
#ifndef ALLOT_UNIT_TAP_H
#define ALLOT_UNIT_TAP_H

#include <stdbool.h>
#include <stdio.h>

typedef struct UnitTest
{
	const char *name;
	bool		(*fn) (void);
} UnitTest;

static inline int
run_tests(const UnitTest *tests, int n)
{
	int			failed = 0;

	printf("1..%d\n", n);
	for (int i = 0; i < n; i++)
	{
		bool		good = tests[i].fn();

		printf("%s %d - %s\n", good ? "ok" : "not ok", i + 1, tests[i].name);
		if (!good)
			failed++;
	}
	return failed == 0 ? 0 : 1;
}

#endif							/* ALLOT_UNIT_TAP_H */
