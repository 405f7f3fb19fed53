/*
 * selection_test.c: unit tests of the repeat decided from sums
 * (allot_repeat_from_sums, src/selection.c) against allot_select itself,
 * without PostgreSQL.  Prints TAP.  Build and run: make -C test/unit.
 *
 * assign_workload adds its sums group by group, in another order than
 * allot_select, and finds the lowest ratio per group (with the requester's
 * threads under count_requester): the sums may differ
 * from allot_select's by rounding.  What must hold on any farm: when the
 * sums say REPEAT_YES, allot_select repeats; when allot_select repeats, the
 * sums never say REPEAT_NO.  Farms on a bound (a quotient of exactly 3/4 or
 * 5/4) are the ones the margin is for.
 */
#include <stdint.h>
#include <string.h>

#include "selection.h"
#include "tap.h"

#define MAX_CAND 24
#define FARMS 200000

static uint64_t rng = 20261127;

static int
draw(int n)
{
	return (int) (allot_random_uniform(&rng) * n);
}

/* The sums assign_workload's glue forms: by engine (as groups would),
 * throughputs summed backwards, lowest ratio as count x threads / tp. */
static RepeatVerdict
verdict_by_sums(const Candidate *c, int n, const int *engine_counts, int last,
				const SelectionParams *p)
{
	double		requester = p->count_requester ? p->requester_threads : 0;
	RepeatSums	s = {requester, 0, 0, 0};
	bool		any = false;

	for (int i = n - 1; i >= 0; i--)
	{
		double		count = p->balance_engines ? engine_counts[c[i].engine] : 1;
		double		low = (c[i].threads + requester) / c[i].throughput * count;

		s.sum_threads += c[i].threads;
		s.sum_throughput += c[i].throughput / count;
		if (!any || low < s.min_ratio)
			s.min_ratio = low;
		any = true;
	}
	{
		double		count = p->balance_engines ? engine_counts[c[last].engine] : 1;

		s.last_ratio = (c[last].threads + requester) / (c[last].throughput / count);
	}
	return allot_repeat_from_sums(&s, p);
}

static int	yes,
			unsure,
			on_bound,
			repeats;

/* One random farm; false when the two disagree. */
static bool
one_farm(bool steer)
{
	static const double tps[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 1000, 0.3, 2.5};
	Candidate	c[MAX_CAND];
	int			engine_counts[4] = {0};
	int			n = 1 + draw(MAX_CAND);
	int			last = draw(n);
	SelectionParams p;
	Selection	sel;
	RepeatVerdict v;

	memset(&p, 0, sizeof(p));
	p.balance_engines = draw(3) == 0;
	p.repeat_threshold = 0.75;
	p.repeat_upper = draw(2) ? 1.25 : 0;
	p.count_requester = draw(2) == 0;
	p.requester_threads = 1 + draw(16);
	p.draw = allot_random_uniform(&rng);
	memset(c, 0, sizeof(c));
	for (int i = 0; i < n; i++)
	{
		c[i].workload_id = i + 1;
		c[i].engine = draw(4);
		c[i].throughput = tps[draw(sizeof(tps) / sizeof(tps[0]))];
		c[i].threads = draw(40);
		c[i].status = CANDIDATE;
		engine_counts[c[i].engine]++;
	}
	/* On the lower bound: two candidates of one throughput, threads 3 : 5. */
	if (steer && n >= 2)
	{
		n = 2;
		last = 1;
		p.balance_engines = false;
		p.count_requester = false;
		c[0].throughput = c[1].throughput = tps[draw(12)];
		c[0].threads = 3 * (1 + draw(5));
		c[1].threads = c[0].threads / 3 * 5;
		on_bound++;
	}
	p.last_workload_id = c[last].workload_id;

	v = verdict_by_sums(c, n, engine_counts, last, &p);
	allot_select(c, n, 4, engine_counts, &p, &sel);
	yes += v == REPEAT_YES;
	unsure += v == REPEAT_UNSURE;
	repeats += sel.repeated;
	return (v != REPEAT_YES || sel.repeated) && (!sel.repeated || v != REPEAT_NO);
}

static bool
t_sums_agree_with_select(void)
{
	for (int f = 0; f < FARMS; f++)
		if (!one_farm(f % 10 == 0))
			return false;
	printf("# %d farms: %d repeats, %d decided by sums, %d unsure (%d put on the 3/4 bound)\n",
		   FARMS, repeats, yes, unsure, on_bound);
	/* Most repeats are decided by the sums; the bound's go to allot_select. */
	return yes > repeats * 9 / 10 && unsure >= on_bound && on_bound > 0;
}

/* Exactly on the bound: 3 and 5 threads, equal throughputs: 3 / 4 = 0.75. */
static bool
t_bound_is_unsure(void)
{
	RepeatSums	s = {8, 2, 3, 5};
	SelectionParams p;

	memset(&p, 0, sizeof(p));
	p.repeat_threshold = 0.75;
	return allot_repeat_from_sums(&s, &p) == REPEAT_UNSURE;
}

/* Nothing counted anywhere: no repeat (a draw), as allot_select decides. */
static bool
t_nothing_counted_is_no(void)
{
	RepeatSums	s = {0, 3, 0, 0};
	SelectionParams p;

	memset(&p, 0, sizeof(p));
	p.repeat_threshold = 0.75;
	return allot_repeat_from_sums(&s, &p) == REPEAT_NO;
}

int
main(void)
{
	static const UnitTest tests[] = {
		{"a repeat decided by sums is allot_select's, on random farms and bounds", t_sums_agree_with_select},
		{"a quotient exactly on the bound is left to allot_select", t_bound_is_unsure},
		{"nothing counted: no repeat", t_nothing_counted_is_no},
	};

	return run_tests(tests, sizeof(tests) / sizeof(tests[0]));
}
