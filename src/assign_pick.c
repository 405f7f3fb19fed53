/*
 * assign_pick.c: seed 000's steps 1 to 7 for one host.
 *
 * assign_workload (0.6.0 on) takes the candidates group by group
 * (workload_cache.h: workloads of one priority with the same needs and dev
 * engine, which a host can run all of or none), and decides a repeat from
 * each group's sums (allot_repeat_from_sums) without visiting every
 * candidate.  Whatever the sums leave unsure, and every switch, goes
 * through allot_select over the candidates in cache order, as
 * explain_assignment's path does (allot_select_for_host): the two choose
 * alike (test/pgtap/41_openbench_model.sql compares them).
 */
#include "postgres.h"

#include "assign.h"
#include "credit.h"
#include "fairness.h"

/* Picks again of a switch that meets usage rows other requests are changing. */
#define BUSY_TRIES 4

/* What an assignment is worth: its threads for one assignment_ttl. */
double
allot_assignment_credit(const AssignHost *host)
{
	return (double) host->offer.threads * allot_assignment_ttl;
}

/* The settings of steps 3 to 7 for this host, and its draw. */
static void
selection_params(const AssignHost *host, int mode, double u, SelectionParams *params)
{
	memset(params, 0, sizeof(*params));
	params->balance_engines = allot_balance_engine_throughputs;
	params->repeat_threshold = allot_repeat_threshold;
	params->repeat_upper = allot_repeat_upper;
	params->count_requester = allot_count_requester;
	params->requester_threads = host->offer.threads;
	params->last_workload_id = host->last_workload_id;
	params->draw = u;
	params->by_debt = mode == FAIRNESS_DEBT;
	params->debt_slack = allot_assignment_credit(host);
}

static bool
excluded(const int64 *ids, int n, int64 id)
{
	return n > 0 && bsearch(&id, ids, n, sizeof(int64), allot_compare_int64) != NULL;
}

/*
 * Seed 000, steps 1 to 7, over every active assignment workload: what
 * explain_assignment shows, and the choice of a request with an exclude
 * list or on a schema without the usage copy.  The caller is connected to
 * SPI.
 */
void
allot_select_for_host(AssignSelection *rs, const AssignHost *host,
					  const int64 *exclude, int n_exclude, TimestampTz now,
					  double u, bool read_only)
{
	const WorkloadCache *cache = allot_workload_cache();
	TimestampTz cutoff = allot_assignment_cutoff(now);
	int			mode = allot_fairness_mode();
	SelectionParams params;
	int		   *engine_counts;

	rs->cache = cache;
	rs->fairness = mode;
	rs->n = 0;
	rs->cand = palloc0(sizeof(Candidate) * (cache->n_workloads + 1));
	rs->cache_index = palloc(sizeof(int) * (cache->n_workloads + 1));
	rs->unfit = palloc0(sizeof(Unfit) * (cache->n_workloads + 1));
	rs->unfit_engine = palloc0(sizeof(EngineNeeds *) * (cache->n_workloads + 1));

	/*
	 * Step 1: capability.  Workloads come by priority, highest first: once
	 * one fits, a lower priority can never be a candidate, so a request stops
	 * there (explain_assignment goes on: it says why of every workload).
	 */
	for (int i = 0; i < cache->n_workloads; i++)
	{
		const CachedWorkload *w = &cache->workloads[i];
		Candidate  *c;

		if (!read_only && rs->n > 0 && w->priority < rs->cand[0].priority)
			break;
		if (excluded(exclude, n_exclude, w->id))
			rs->unfit[i] = UNFIT_EXCLUDED;
		else
			rs->unfit[i] = allot_host_unfit(&host->offer, &w->needs,
											&rs->unfit_engine[i]);
		if (rs->unfit[i] != FIT)
			continue;

		c = &rs->cand[rs->n];
		rs->cache_index[rs->n++] = i;
		c->workload_id = w->id;
		c->priority = w->priority;
		c->engine = w->engine;
		c->throughput = w->throughput;
		for (int f = 0; f < host->offer.focus.count; f++)
			if (strcmp(host->offer.focus.names[f], w->engine_name) == 0)
				c->focus = true;
	}

	/* Step 1: priority, then focus. */
	allot_refine_candidates(rs->cand, rs->n);

	/* Step 2: threads on each candidate, or what replaces them over time. */
	allot_read_candidate_usage(rs, host, cutoff, !read_only);
	if (mode != FAIRNESS_CURRENT)
		allot_read_candidate_credit(rs, now, mode);

	/* Steps 3 to 7. */
	selection_params(host, mode, u, &params);
	engine_counts = palloc(sizeof(int) * (cache->n_engines + 1));
	allot_select(rs->cand, rs->n, cache->n_engines, engine_counts, &params,
				 &rs->selection);
}

/*
 * Step 1 group by group: the groups of the highest priority the host can
 * run, then only the focused engines' groups if any.  The engines' checks
 * (the costly part: names and versions) are made once per engine.
 */
void
allot_pick_groups(Assign *a)
{
	const WorkloadCache *cache = a->cache;
	const AssignHost *host = &a->host;
	GroupPick  *gp = &a->groups;
	Unfit	   *verdict = palloc(sizeof(Unfit) * (cache->n_engine_needs + 1));
	bool	   *judged = palloc0(sizeof(bool) * (cache->n_engine_needs + 1));
	bool	   *focus = palloc0(sizeof(bool) * (cache->n_groups + 1));
	bool		found = false;

	gp->chosen = palloc0(sizeof(bool) * (cache->n_groups + 1));
	gp->engine_count = palloc0(sizeof(int) * (cache->n_engines + 1));
	gp->focus_assigned = false;
	gp->n_candidates = 0;
	gp->top = 0;

	/* Groups come by priority, highest first: stop below the first that fits. */
	for (int g = 0; g < cache->n_groups; g++)
	{
		const AssignGroup *grp = &cache->groups[g];
		Unfit		dev = FIT,
					base = FIT;
		const EngineNeeds *engine;
		int			e;

		if (found && grp->priority < gp->top)
			break;
		if ((e = grp->dev_needs) >= 0)
		{
			if (!judged[e])
				verdict[e] = allot_engine_unfit(&host->offer, &cache->engine_needs[e]);
			judged[e] = true;
			dev = verdict[e];
		}
		if (dev == FIT && (e = grp->base_needs) >= 0)
		{
			if (!judged[e])
				verdict[e] = allot_engine_unfit(&host->offer, &cache->engine_needs[e]);
			judged[e] = true;
			base = verdict[e];
		}
		if (allot_fit_unfit(&host->offer, &grp->fit, dev, base, &engine) != FIT)
			continue;
		found = true;
		gp->top = grp->priority;
		gp->chosen[g] = true;
		for (int f = 0; f < host->offer.focus.count; f++)
			if (strcmp(host->offer.focus.names[f], grp->engine_name) == 0)
				focus[g] = gp->focus_assigned = true;
	}

	/* Step 1's focus: only the focused engines' groups, if any. */
	for (int g = 0; g < cache->n_groups; g++)
	{
		if (gp->focus_assigned && !focus[g])
			gp->chosen[g] = false;
		if (gp->chosen[g])
		{
			gp->engine_count[cache->groups[g].engine] += cache->groups[g].n;
			gp->n_candidates += cache->groups[g].n;
		}
	}
}

/*
 * Step 6 from the groups' sums; REPEAT_YES means allot_select would repeat
 * the host's last workload (selection.h).
 */
static RepeatVerdict
repeat_by_sums(const Assign *a, const SelectionParams *params)
{
	const WorkloadCache *cache = a->cache;
	const UsageCache *usage = a->usage;
	const GroupPick *gp = &a->groups;
	const Corrections *corr = &a->corrections;
	bool		with_focus = gp->focus_assigned;
	int			last = a->host.last_workload_id ?
		allot_find_workload(cache, a->host.last_workload_id) : -1;
	double		requester = params->count_requester ? params->requester_threads : 0;
	RepeatSums	sums = {requester, 0, 0, 0};
	bool		any = false;

	if (last < 0 || !gp->chosen[cache->workload_group[last]])
		return REPEAT_NO;		/* the last workload is not a candidate */

	for (int g = 0; g < cache->n_groups; g++)
	{
		const AssignGroup *grp = &cache->groups[g];
		double		count;
		double		low;

		if (!gp->chosen[g])
			continue;
		count = params->balance_engines ? gp->engine_count[grp->engine] : 1;
		sums.sum_threads += allot_group_threads(cache, g, with_focus);
		sums.sum_throughput += grp->sum_throughput / count;
		low = allot_group_min_ratio(cache, g, requester, with_focus) * count;
		if (!any || low < sums.min_ratio)
			sums.min_ratio = low;
		any = true;
	}

	/* Less the corrections: fewer threads, and those workloads' ratios lower. */
	for (int k = 0; k < corr->n; k++)
	{
		int			i = corr->d[k].workload;
		const CachedWorkload *w = &cache->workloads[i];
		double		less = corr->d[k].threads + (with_focus ? corr->d[k].focus_threads : 0);
		double		counted;
		double		count;
		double		ratio;

		if (w->priority != gp->top || !gp->chosen[cache->workload_group[i]])
			continue;
		count = params->balance_engines ? gp->engine_count[w->engine] : 1;
		counted = usage->threads[i] + (with_focus ? usage->focus_threads[i] : 0) - less;
		sums.sum_threads -= less;
		ratio = (counted + requester) / (w->throughput / count);
		if (ratio < sums.min_ratio)
			sums.min_ratio = ratio;
	}

	/* The last workload's ratio, exactly as allot_select computes it. */
	{
		const CachedWorkload *w = &cache->workloads[last];
		const UsageDelta *c = allot_correction_of(corr, last);
		double		count = params->balance_engines ? gp->engine_count[w->engine] : 1;
		double		threads = usage->threads[last] - (c ? c->threads : 0);
		double		focus_threads = usage->focus_threads[last] - (c ? c->focus_threads : 0);
		double		counted = threads + (with_focus ? focus_threads : 0);

		sums.last_ratio = (counted + requester) / (w->throughput / count);
	}
	return allot_repeat_from_sums(&sums, params);
}

/*
 * Steps 2 to 7 over every candidate of the chosen groups, in cache order
 * (as explain_assignment orders them, so that a seeded draw picks alike).
 */
static void
select_over_candidates(Assign *a, SelectionParams *params)
{
	const WorkloadCache *cache = a->cache;
	const UsageCache *usage = a->usage;
	const GroupPick *gp = &a->groups;
	AssignSelection rs;
	int		   *engine_counts;
	int			k = 0;

	memset(&rs, 0, sizeof(rs));
	rs.cache = cache;
	rs.fairness = a->fairness;
	rs.cand = palloc0(sizeof(Candidate) * (gp->n_candidates + 1));
	rs.cache_index = palloc(sizeof(int) * (gp->n_candidates + 1));
	for (int i = 0; i < cache->n_workloads && cache->workloads[i].priority >= gp->top; i++)
	{
		const CachedWorkload *w = &cache->workloads[i];
		const UsageDelta *c;
		Candidate  *cand;

		if (w->priority != gp->top || !gp->chosen[cache->workload_group[i]])
			continue;
		cand = &rs.cand[k];
		rs.cache_index[k++] = i;
		cand->workload_id = w->id;
		cand->priority = w->priority;
		cand->engine = w->engine;
		cand->focus = gp->focus_assigned;	/* only focused groups are left then */
		cand->throughput = w->throughput;
		cand->status = CANDIDATE;
		cand->threads = usage->threads[i];
		cand->focus_threads = usage->focus_threads[i];
		if ((c = allot_correction_of(&a->corrections, i)) != NULL)
		{
			cand->threads -= c->threads;
			cand->focus_threads -= c->focus_threads;
		}
	}
	rs.n = k;
	if (a->fairness != FAIRNESS_CURRENT)
	{
		allot_assign_sql(a);
		allot_read_candidate_credit(&rs, a->now, a->fairness);
	}
	engine_counts = palloc(sizeof(int) * (cache->n_engines + 1));
	allot_select(rs.cand, rs.n, cache->n_engines, engine_counts, params, &rs.selection);

	/*
	 * Requests in flight at once read the same usage.  On a farm where most
	 * requests switch they would all pick the same least-served workload
	 * and queue on its usage row, each waiting for the one before it to
	 * commit, and the hosts of the most-served workload would all leave it
	 * at once and queue on that row.  So a switch looks at the two rows it
	 * would write (allot.fairness = current, where threads decide):
	 *   - onto a workload whose row another transaction is changing, it
	 *     counts a host like this one there, as if that change had
	 *     committed, and picks again (a few times, then it waits);
	 *   - off its own workload while another transaction changes that row,
	 *     it stays until its next request: most likely another host is
	 *     leaving it, after which this one would have stayed.
	 * What the requests would have chosen one after the other, without
	 * waiting for each other (specs/busy_rows.spec).
	 */
	if (a->fairness == FAIRNESS_CURRENT)
	{
		Candidate  *own = NULL;

		for (int k = 0; k < rs.n && a->host.assigned_workload != 0; k++)
			if (rs.cand[k].workload_id == a->host.assigned_workload)
				own = &rs.cand[k];
		for (int tries = 0; tries < BUSY_TRIES; tries++)
		{
			Candidate  *c = rs.selection.chosen >= 0 ? &rs.cand[rs.selection.chosen] : NULL;

			if (c == NULL || rs.selection.repeated || c == own)
				break;
			if (allot_usage_row_busy(c->workload_id))
			{
				c->threads += a->host.offer.threads;
				allot_select(rs.cand, rs.n, cache->n_engines, engine_counts, params,
							 &rs.selection);
				continue;
			}
			if (own != NULL && allot_usage_row_busy(own->workload_id))
				rs.selection.chosen = own - rs.cand;
			break;
		}
	}
	a->chosen = rs.selection.chosen >= 0 ? rs.cache_index[rs.selection.chosen] : -1;
	a->focus_assigned = rs.selection.focus_assigned;
	a->repeated = rs.selection.repeated;
}

/*
 * Steps 2 to 7 for the request: from the groups' sums when they decide a
 * repeat, else over the candidates.  Without the usage copy (an exclude
 * list, a schema before 0.6.0), over every workload with their usage read
 * whole.
 */
void
allot_pick_assignment(Assign *a)
{
	SelectionParams params;

	a->chosen = -1;
	a->focus_assigned = false;
	a->repeated = false;
	if (a->usage == NULL)
	{
		AssignSelection rs;

		allot_assign_sql(a);
		allot_select_for_host(&rs, &a->host, a->exclude, a->n_exclude, a->now, a->draw,
							  false);
		a->cache = rs.cache;
		a->chosen = rs.selection.chosen >= 0 ? rs.cache_index[rs.selection.chosen] : -1;
		a->focus_assigned = rs.selection.focus_assigned;
		a->repeated = rs.selection.repeated;
		a->found = rs.found;
		a->lapsed = rs.lapsed;
		return;
	}
	if (a->groups.n_candidates == 0)
		return;					/* nothing fits */

	selection_params(&a->host, a->fairness, a->draw, &params);
	if (a->fairness == FAIRNESS_CURRENT &&
		repeat_by_sums(a, &params) == REPEAT_YES)
	{
		a->chosen = allot_find_workload(a->cache, a->host.last_workload_id);
		a->focus_assigned = a->groups.focus_assigned;
		a->repeated = true;
		return;
	}
	select_over_candidates(a, &params);
}
