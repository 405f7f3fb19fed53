/*
 * selection.c: seed 000's workload selection, as plain C.
 *
 * The glue calls, per request:
 *   allot_host_unfit()          step 1, capability, once per active workload
 *   allot_refine_candidates()   step 1, highest priority, then focus
 *   allot_select()              steps 2 to 7
 *   allot_concurrency()         the settings returned with the choice
 */
#include <stddef.h>
#include <string.h>

#include "selection.h"

static bool
name_in(const NameList *list, const char *name)
{
	if (name == NULL)
		return false;
	for (int i = 0; i < list->count; i++)
		if (strcmp(list->names[i], name) == 0)
			return true;
	return false;
}

static bool
all_names_in(const NameList *needed, const NameList *have)
{
	for (int i = 0; i < needed->count; i++)
		if (!name_in(have, needed->names[i]))
			return false;
	return true;
}

/*
 * Compare dotted version numbers ("12.2.0" against "10"): component by
 * component, a missing component counts as 0, and each component is its
 * leading digits ("0-14" is 0).  Returns <0, 0 or >0 like strcmp.
 *
 * OpenBench's client compares integer tuples, where (10, 2) < (10, 2, 0), so
 * a host reporting gcc "10.2" fails a "10.2.0" minimum there; here it passes,
 * since both name the same release.
 */
int
allot_compare_versions(const char *a, const char *b)
{
	while (*a != '\0' || *b != '\0')
	{
		unsigned long long x = 0,
					y = 0;

		/* Saturate instead of overflowing on absurdly long components. */
		for (; *a >= '0' && *a <= '9'; a++)
			x = x > 1000000000000ULL ? x : x * 10 + (unsigned) (*a - '0');
		for (; *b >= '0' && *b <= '9'; b++)
			y = y > 1000000000000ULL ? y : y * 10 + (unsigned) (*b - '0');
		if (x != y)
			return x < y ? -1 : 1;
		/* Skip the rest of this component, then its dot. */
		while (*a != '\0' && *a != '.')
			a++;
		while (*b != '\0' && *b != '.')
			b++;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
	}
	return 0;
}

/*
 * A public engine's compilers: any one of them, at its minimum version or
 * later, will do (OpenBench's engine configurations list several, and its
 * client builds with the first one it finds).
 */
static bool
has_compiler(const HostOffer *host, const EngineNeeds *e)
{
	for (int k = 0; k < e->n_compilers; k++)
	{
		const CompilerNeed *need = &e->compilers[k];

		for (int i = 0; i < host->compiler_names.count; i++)
			if (strcmp(host->compiler_names.names[i], need->name) == 0 &&
				(need->min_version == NULL ||
				 allot_compare_versions(host->compiler_versions.names[i],
										need->min_version) >= 0))
				return true;
	}
	return false;
}

/* Seed 000 step 1 for one engine: OS, CPU flags, then token or compiler. */
Unfit
allot_engine_unfit(const HostOffer *host, const EngineNeeds *e)
{
	if (e == NULL)
		return FIT;
	if (!e->any_system && !name_in(&e->systems, host->os))
		return UNFIT_OS;
	if (!all_names_in(&e->cpu_flags, &host->cpu_flags))
		return UNFIT_CPU_FLAGS;
	if (e->is_private)
		return name_in(&host->tokens, e->name) ? FIT : UNFIT_TOKEN;
	if (e->n_compilers > 0 && !has_compiler(host, e))
		return UNFIT_COMPILER;
	return FIT;
}

/*
 * The threads a host can give a workload: its threads, halved on a
 * hyperthreaded host when the workload is "core odds" (the two engines use
 * different thread counts), so that each engine thread has a core.
 */
static int
usable_threads(const HostOffer *host, bool core_odds)
{
	bool		hyperthreaded = host->physical_cores < host->threads;

	if (hyperthreaded && core_odds)
		return host->threads / 2;
	return host->threads;
}

int
allot_usable_threads(const HostOffer *host, const WorkloadNeeds *w)
{
	return usable_threads(host, w->dev_threads != w->base_threads);
}

void
allot_fit_needs(const WorkloadNeeds *w, FitNeeds *out)
{
	/* SPSA plays a game pair at a time, so it needs twice the threads. */
	int			spsa_factor = w->mode == MODE_GAMES ? 1 : 2;
	int			max_threads = w->dev_threads > w->base_threads ?
		w->dev_threads : w->base_threads;

	out->dev = w->dev;
	out->base = w->base;
	out->threads = spsa_factor * max_threads;
	out->core_odds = w->dev_threads != w->base_threads;
	out->syzygy = w->syzygy;
	out->time_based = w->time_based;
}

/*
 * Seed 000 step 1: can this host run a workload with these needs at all,
 * given its verdicts on the two engines?  Returns the first failed check;
 * *engine is the engine that failed an engine check.  (The exclude list is
 * the glue's, before this is called.)
 */
Unfit
allot_fit_unfit(const HostOffer *host, const FitNeeds *f, Unfit dev, Unfit base,
				const EngineNeeds **engine)
{
	*engine = NULL;
	if (dev != FIT)
	{
		*engine = f->dev;
		return dev;
	}
	if (base != FIT)
	{
		*engine = f->base;
		return base;
	}
	if (f->syzygy > host->syzygy_max)
		return UNFIT_SYZYGY;
	if (f->threads > usable_threads(host, f->core_odds))
		return UNFIT_THREADS;
	if (host->noisy && f->time_based)
		return UNFIT_NOISY;
	return FIT;
}

Unfit
allot_host_unfit(const HostOffer *host, const WorkloadNeeds *w, const EngineNeeds **engine)
{
	FitNeeds	f;
	Unfit		dev;

	allot_fit_needs(w, &f);
	dev = allot_engine_unfit(host, f.dev);
	return allot_fit_unfit(host, &f, dev, dev == FIT ? allot_engine_unfit(host, f.base) : FIT,
						   engine);
}

const char *
allot_unfit_text(Unfit unfit)
{
	switch (unfit)
	{
		case FIT:
			return "fits";
		case UNFIT_EXCLUDED:
			return "excluded by the request";
		case UNFIT_OS:
			return "operating system not supported";
		case UNFIT_CPU_FLAGS:
			return "CPU flags missing";
		case UNFIT_TOKEN:
			return "no token for private engine";
		case UNFIT_COMPILER:
			return "compiler missing or too old";
		case UNFIT_SYZYGY:
			return "syzygy tables too small";
		case UNFIT_THREADS:
			return "not enough threads";
		case UNFIT_NOISY:
			return "noisy host, time-based workload";
	}
	return "unknown";
}

/*
 * Seed 000 step 1, second half: keep only the highest priority, then, if any
 * of those has an engine in the host's focus, only those.  Marks the others;
 * returns whether the host is going to be focus-assigned.
 */
bool
allot_refine_candidates(Candidate *c, int n)
{
	int32_t		top = INT32_MIN;
	bool		focus = false;

	for (int i = 0; i < n; i++)
		if (c[i].priority > top)
			top = c[i].priority;
	for (int i = 0; i < n; i++)
	{
		c[i].status = c[i].priority == top ? CANDIDATE : LOWER_PRIORITY;
		if (c[i].status == CANDIDATE && c[i].focus)
			focus = true;
	}
	if (focus)
		for (int i = 0; i < n; i++)
			if (c[i].status == CANDIDATE && !c[i].focus)
				c[i].status = NOT_FOCUSED;
	return focus;
}

/*
 * Seed 000 step 6: stay on the last workload while every candidate gets more
 * than repeat_threshold of its fair share, and (with repeat_upper) the last
 * workload gets less than repeat_upper of it.  Written as OpenBench writes it
 * (get_workload.py: `min_ratio / fair_ratio > 0.75` and, since 2024,
 * `this_ratio / fair_ratio < 1.25`): quotients compared with the bound, both
 * strict, so that the two agree where the quotient is exactly 3/4 or 5/4 and
 * a product would round to the other side.
 *
 * A fair ratio of 0 means nothing is counted on any candidate: OpenBench
 * guards it with `thread_sum > 0`, and then draws at random (step 7), last
 * workload or not.  (With count_requester the requester's threads keep it
 * above 0.)
 */
static bool
repeat_rule_holds(double min_ratio, double last_ratio, double fair_ratio,
				  const SelectionParams *params)
{
	if (!(fair_ratio > 0))
		return false;
	if (!(min_ratio / fair_ratio > params->repeat_threshold))
		return false;
	return params->repeat_upper <= 0 ||
		last_ratio / fair_ratio < params->repeat_upper;
}

/* A quotient within ALLOT_REPEAT_MARGIN of its bound, relatively. */
static bool
near(double quotient, double bound)
{
	double		d = quotient - bound;

	return (d < 0 ? -d : d) <= ALLOT_REPEAT_MARGIN * (bound < 0 ? -bound : bound);
}

RepeatVerdict
allot_repeat_from_sums(const RepeatSums *s, const SelectionParams *params)
{
	double		fair = s->sum_threads / s->sum_throughput;
	double		low;

	if (!(fair > 0))
		return s->sum_threads == 0 ? REPEAT_NO : REPEAT_UNSURE;
	low = s->min_ratio / fair;
	if (near(low, params->repeat_threshold))
		return REPEAT_UNSURE;
	if (!(low > params->repeat_threshold))
		return REPEAT_NO;
	if (params->repeat_upper > 0)
	{
		double		last = s->last_ratio / fair;

		if (near(last, params->repeat_upper))
			return REPEAT_UNSURE;
		if (!(last < params->repeat_upper))
			return REPEAT_NO;
	}
	return REPEAT_YES;
}

/*
 * Seed 000 steps 2 to 7 over the candidates (status CANDIDATE) of a host.
 * engine_counts is scratch space for n_engines counters.  Fills each
 * candidate's counted threads, effective throughput, ratio and probability,
 * and out.  Call allot_refine_candidates() first.
 */
void
allot_select(Candidate *c, int n, int n_engines, int *engine_counts,
			 const SelectionParams *params, Selection *out)
{
	double		requester = params->count_requester ? params->requester_threads : 0;
	double		top_debt = 0;
	double		sum_threads = 0,
				sum_throughput = 0,
				tie_throughput = 0,
				min_ratio = 0,
				target;
	int			last = -1,
				ncand = 0;

	out->chosen = -1;
	out->repeated = false;
	out->fair_ratio = 0;
	out->min_ratio = 0;
	out->focus_assigned = false;

	for (int i = 0; i < n; i++)
	{
		c[i].probability = 0;
		if (c[i].status == CANDIDATE && c[i].focus)
			out->focus_assigned = true;
	}
	for (int e = 0; e < n_engines; e++)
		engine_counts[e] = 0;
	for (int i = 0; i < n; i++)
		if (c[i].status == CANDIDATE)
		{
			engine_counts[c[i].engine]++;
			ncand++;
		}
	if (ncand == 0)
		return;
	if (params->by_debt)
	{
		bool		first = true;

		for (int i = 0; i < n; i++)
			if (c[i].status == CANDIDATE && (first || c[i].debt > top_debt))
			{
				top_debt = c[i].debt;
				first = false;
			}
	}

	for (int i = 0; i < n; i++)
	{
		if (c[i].status != CANDIDATE)
			continue;

		/*
		 * Step 2: focus-assigned hosts count only when the requester is going
		 * to be focus-assigned too, so that a farm owner's own machines are a
		 * strict gain for the engines they focus on.
		 */
		c[i].counted_threads = c[i].threads +
			(out->focus_assigned ? c[i].focus_threads : 0);

		/* Step 3: balancing divides by the engine's candidates, not its workloads. */
		c[i].effective_throughput = c[i].throughput /
			(params->balance_engines ? engine_counts[c[i].engine] : 1);

		/* Step 4; under debt, how much less it is owed than the most-owed. */
		if (params->by_debt)
			c[i].ratio = top_debt - c[i].debt;
		else
			c[i].ratio = (c[i].counted_threads + requester) / c[i].effective_throughput;

		sum_threads += c[i].counted_threads;
		sum_throughput += c[i].effective_throughput;
		if (out->chosen < 0 || c[i].ratio < min_ratio)
		{
			min_ratio = c[i].ratio;
			out->chosen = i;
		}
		if (c[i].workload_id == params->last_workload_id)
			last = i;
	}

	/* Step 5. */
	out->fair_ratio = (sum_threads + requester) / sum_throughput;
	out->min_ratio = min_ratio;

	/* Step 6, repeat rule. */
	if (last >= 0 && params->by_debt)
	{
		if (c[last].ratio <= params->debt_slack)
		{
			out->chosen = last;
			out->repeated = true;
			c[last].probability = 1;
			return;
		}
	}
	else if (last >= 0 && repeat_rule_holds(min_ratio, c[last].ratio,
											out->fair_ratio, params))
	{
		out->chosen = last;
		out->repeated = true;
		c[last].probability = 1;
		return;
	}

	/*
	 * Step 7: the lowest ratio; near-equal ratios are ties, drawn at random
	 * weighted by effective throughput.  Candidates are visited in the
	 * caller's order, so a seeded draw picks the same one every time.
	 */
	for (int i = 0; i < n; i++)
		if (c[i].status == CANDIDATE &&
			c[i].ratio <= min_ratio + ALLOT_TIE_EPSILON * min_ratio)
			tie_throughput += c[i].effective_throughput;

	target = params->draw * tie_throughput;
	out->chosen = -1;
	for (int i = 0; i < n; i++)
	{
		if (c[i].status != CANDIDATE ||
			c[i].ratio > min_ratio + ALLOT_TIE_EPSILON * min_ratio)
			continue;
		c[i].probability = c[i].effective_throughput / tie_throughput;
		if (out->chosen < 0 && target < c[i].effective_throughput)
			out->chosen = i;
		target -= c[i].effective_throughput;
	}
	/* Rounding can leave the draw past the last tie: take the last one. */
	if (out->chosen < 0)
		for (int i = n - 1; i >= 0 && out->chosen < 0; i--)
			if (c[i].probability > 0)
				out->chosen = i;
}

/*
 * Concurrency settings (seed 000, end), integer division throughout.  T is
 * the usable threads, S the sockets (1 when an engine uses several threads),
 * M the larger engine thread count.
 */
ConcurrencySettings
allot_concurrency(const HostOffer *host, const WorkloadNeeds *w, int workload_size)
{
	ConcurrencySettings s;
	int			t = allot_usable_threads(host, w);
	int			m = w->dev_threads > w->base_threads ? w->dev_threads : w->base_threads;
	int			sockets = m > 1 ? 1 : host->sockets;

	if (w->mode == MODE_SPSA_MULTIPLE)
	{
		s.cutechess_count = (t / m) / 2;
		s.concurrency_per = 2;
		s.games_per_cutechess = (int64_t) 2 * workload_size;
	}
	else
	{
		s.cutechess_count = sockets;
		s.concurrency_per = (t / sockets) / m;
		s.games_per_cutechess = (int64_t) 2 * workload_size * s.concurrency_per;
	}
	return s;
}

/* splitmix64: tiny, well mixed, and the same on every platform. */
uint64_t
allot_random_next(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
double
allot_random_uniform(uint64_t *state)
{
	return (double) (allot_random_next(state) >> 11) * (1.0 / 9007199254740992.0);
}
