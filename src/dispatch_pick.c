/*
 * dispatch_pick.c: request_work's picks (dispatch.h, stage "pick"; seeds
 * 001 and 003, "Scheduler changes").
 *
 * Per requested resource, coprocessors first and the CPU last, while the
 * host still wants seconds or instances of it:
 *
 *   candidates  the active job workloads with unsent jobs, not excluded,
 *               not refused here by the deadline check, with an app version
 *               for the resource that runs on the host within its daily
 *               quota (the highest projected FLOPS among them)
 *   selection   seed 000 steps 1 to 7 over them (selection.c), with usage
 *               the peak MFLOPS in progress, or credit over time
 *   job         the chosen workload's oldest unsent job that no other
 *               request holds, taken FOR UPDATE SKIP LOCKED, one at a time:
 *               a request locks the jobs it sends and no more (the one
 *               exception: a job the deadline check refuses stays locked,
 *               kept for this request's other resources).  The search starts
 *               where the backend last found the oldest unsent job (its
 *               hint, search_start), not at the start of the workload's
 *               jobs, whose index entries of jobs sent are dead until
 *               VACUUM and would otherwise be stepped over at every pick
 *   charge      its estimate (seed 004) against the resource's seconds,
 *               instances and queue (work_request.h); it counts at once for
 *               the next pick
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/timestamp.h"

#include "dispatch.h"
#include "entry.h"
#include "selection.h"

/* How long a backend trusts where it last found a workload's oldest unsent job. */
#define PICK_HINT_USECS USECS_PER_SEC

static SPIPlanPtr take_plan[2] = {NULL, NULL};	/* before 0.7.0; one replica per owner */
static SPIPlanPtr replica_take_plan = NULL;
static SPIPlanPtr oldest_plan = NULL;

/*
 * From 0.7.0: host $3 never had job j, or the job is unsendable and the
 * operator lets it go back to a host that failed it once
 * (allot.retry_failed_hosts; the transitioner sets resend_to_failed).
 */
#define NEVER_FAILED_HERE_SQL \
	"(NOT EXISTS (SELECT FROM allot.job_report r" \
	"              WHERE r.job_id = j.id AND r.host_id = $3 OFFSET 0)" \
	"  OR j.resend_to_failed AND (SELECT count(*) FROM allot.job_report r" \
	"                              WHERE r.job_id = j.id AND r.host_id = $3) < 2)"

static void
prepare_plans(bool voices)
{
	Oid			take_args[4] = {INT8OID, INT8OID, INT8OID, INT8OID};

	if (take_plan[voices] != NULL)
		return;
	/* The workload's oldest unsent job, held by another request or not. */
	oldest_plan = allot_prepare(
								"SELECT id FROM allot.job"
								" WHERE workload_id = $1 AND state = 'unsent'"
								" ORDER BY id LIMIT 1",
								1, take_args);

	/*
	 * The workload's oldest unsent job after the last one this request took
	 * that host $3 never had (BOINC's one result per host: a host that
	 * errored, aborted, lost or let time out a job, or was found invalid,
	 * never gets it again; every sending that ended has a report).  Each
	 * job looked at costs one probe of the reports' key: OFFSET 0 keeps the
	 * test a subplan run per job, where the planner would otherwise make an
	 * anti-join of it, which, in a generic plan, reads every report.
	 */
	if (!voices)
		take_plan[0] = allot_prepare(
									 "SELECT j.id, j.predicted_app_units, j.id, false, 0::float8 FROM allot.job j"
									 " WHERE j.workload_id = $1 AND j.state = 'unsent' AND j.id > $2"
									 "   AND NOT EXISTS (SELECT FROM allot.job_report r"
									 "                    WHERE r.job_id = j.id AND r.host_id = $3 OFFSET 0)"
									 " ORDER BY j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED",
									 3, take_args);

	/*
	 * From 0.7.0 also: a job with replicas (quorum.h) goes to no owner that
	 * had any of them (voice $4, allot.job_voice); a job without (quorum 1,
	 * one result) pays no probe for it.  With the job's own id, the id of
	 * the job it replicates, and whether it has replicas.
	 */
	else
		take_plan[1] = allot_prepare(
									 "SELECT j.id, j.predicted_app_units, coalesce(j.replica_of, j.id),"
									 "       j.replica_of IS NOT NULL OR j.target_nresults > 1 OR j.min_quorum > 1,"
									 "       coalesce(j.bound_factor, 0)"
									 "  FROM allot.job j"
									 " WHERE j.workload_id = $1 AND j.state = 'unsent' AND j.id > $2"
									 "   AND " NEVER_FAILED_HERE_SQL
									 "   AND (j.replica_of IS NULL AND j.target_nresults = 1 AND j.min_quorum = 1"
									 "        OR NOT EXISTS (SELECT FROM allot.job_voice v"
									 "                        WHERE v.group_id = coalesce(j.replica_of, j.id)"
									 "                          AND v.voice = $4 OFFSET 0))"
									 " ORDER BY j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED",
									 4, take_args);

	/*
	 * Replicas first: one made when its job was sent (adaptive replication)
	 * or when owners disagreed has a higher id than the workload's older
	 * jobs, and would otherwise wait for all of them; the job's decision,
	 * its credit and its hosts' reliability wait for it.  Through the
	 * partial index of unsent replicas, which is empty on a farm without
	 * replication.
	 */
	if (voices)
		replica_take_plan = allot_prepare(
										  "SELECT j.id, j.predicted_app_units, j.replica_of, true,"
										  "       coalesce(j.bound_factor, 0)"
										  "  FROM allot.job j"
										  " WHERE j.workload_id = $1 AND j.state = 'unsent'"
										  "   AND j.replica_of IS NOT NULL AND j.id > $2"
										  "   AND " NEVER_FAILED_HERE_SQL
										  "   AND NOT EXISTS (SELECT FROM allot.job_voice v"
										  "                    WHERE v.group_id = j.replica_of AND v.voice = $4 OFFSET 0)"
										  " ORDER BY j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED",
										  4, take_args);
}

/* Has this request taken a replica of that job already?  (One per owner.) */
static bool
group_taken(const Dispatch *d, int64 group_id)
{
	for (int i = 0; i < d->n_picks; i++)
		if (d->picks[i].replicated && d->picks[i].group_id == group_id)
			return true;
	return false;
}

/* Projected FLOPS: what the client says it gets, at most the peak. */
static double
projected_flops(const Dispatch *d, int v)
{
	return allot_projected_flops(&d->hv[v],
								 allot_version_peak_flops(&d->cache->versions[v], &d->host, d->cache));
}

/*
 * The app version a job of this workload would use for resource r: among
 * the app's versions for r that run on the host and are within their daily
 * quota, the one with the highest projected FLOPS.  -1: none.
 */
static int
best_version(const Dispatch *d, const JobWorkload *j, int r)
{
	int			best = -1;
	double		best_flops = -1;

	for (int k = 0; k < j->app->n_versions; k++)
	{
		int			v = j->app->first_version + k;
		const CachedVersion *cv = &d->cache->versions[v];
		int			quota = d->hv[v].quota > 0 ? d->hv[v].quota : allot_daily_quota;
		double		flops;

		if (cv->resource != r || !allot_version_runs_on(cv, &d->host, d->cache))
			continue;
		if (d->hv[v].jobs_today >= quota)
			continue;
		flops = projected_flops(d, v);
		if (flops > best_flops)
		{
			best = v;
			best_flops = flops;
		}
	}
	return best;
}

static void
estimate_pick(const Dispatch *d, const JobWorkload *j, int v, double predicted,
			  double job_bound_factor, double *est, double *bound, double *peak)
{
	EstimateInput in;

	*peak = allot_version_peak_flops(&d->cache->versions[v], &d->host, d->cache);
	in.seconds_per_app_unit = d->hv[v].seconds_per_app_unit;
	in.est_flops_per_au = j->app->est_flops_per_au;
	in.peak_flops = projected_flops(d, v);
	in.predicted_app_units = predicted;
	in.default_seconds_per_app_unit = allot_default_seconds_per_app_unit;
	in.run_flops_bound = allot_app_run_flops_bound(j->app, allot_bound_min_reports);
	in.default_bound_factor = allot_default_bound_factor;
	/* The operator's floors, the app's and the job's: the greater counts. */
	in.bound_factor = Max(j->app->bound_factor, job_bound_factor);
	allot_estimate(&in, &j->stats, est, bound);
}

/*
 * A job's delay bound: its workload's, or allot.default_delay_bound, so that
 * every job sent has a deadline and a host that vanishes gives it back.
 */
static double
delay_bound(const CachedWorkload *w)
{
	return w->delay_bound_secs > 0 ? w->delay_bound_secs : (double) allot_default_delay_bound;
}

/*
 * The id after which the workload's first pick of this request looks: no
 * job up to it is unsent.  The backend's hint when it is under a second old
 * and no job of the workload has come back to unsent since it was set (the
 * workload's job_usage.reopened, read by this request, has not moved); else
 * a fresh look at the workload's oldest unsent job, locked or not, which
 * becomes the hint.  Jobs that are unsent below a hint: those that come
 * back to unsent (reopened), those this backend makes unsent (the job
 * trigger lowers the hint, allot_pick_hint_lower), and those another
 * backend inserts with ids below the hint (a transaction that took its ids
 * before another's and commits after it, or ids given by hand): those wait
 * at most PICK_HINT_USECS, and then go first.
 */
static int64
search_start(const Dispatch *d, const JobWorkload *j)
{
	PickHint   *h = &d->cache->pick_hints[j - d->jw];
	TimestampTz now = GetCurrentTimestamp();
	Datum		arg = Int64GetDatum(j->w->id);
	bool		isnull;

	if (h->set_at != 0 && h->reopened == j->reopened &&
		now >= h->set_at && now - h->set_at < PICK_HINT_USECS)
		return h->after;
	if (SPI_execute_plan(oldest_plan, &arg, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.job");
	h->after = SPI_processed == 0 ? 0 :
		DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) - 1;
	h->reopened = j->reopened;
	h->set_at = now;
	return h->after;
}

/*
 * One unsent job of the workload, locked; false when none is free.  A
 * replica of a job this request took a replica of already is passed over
 * (it stays locked to this request, and unsent).
 */
static bool
take_job(const Dispatch *d, JobWorkload *j, int64 *job_id, double *predicted,
		 int64 *group_id, bool *replicated, double *bound_factor)
{
	Datum		args[4];
	bool		isnull;

	if (j->held_id != 0)
	{
		*job_id = j->held_id;
		*predicted = j->held_predicted;
		*group_id = j->held_group;
		*replicated = j->held_replicated;
		*bound_factor = j->held_bound_factor;
		j->held_id = 0;
		return true;
	}
	for (;;)
	{
		HeapTuple	t;
		TupleDesc	td;
		bool		replica = d->cache->voices && !j->no_replicas;

		args[0] = Int64GetDatum(j->w->id);
		args[1] = Int64GetDatum(replica ? j->last_replica :
								j->last_taken != 0 || !d->hints ? j->last_taken : search_start(d, j));
		args[2] = Int64GetDatum(d->host.id);
		args[3] = Int64GetDatum(d->host.voice);
		if (SPI_execute_plan(replica ? replica_take_plan : take_plan[d->cache->voices], args, NULL,
							 false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read allot.job");
		if (SPI_processed == 0)
		{
			if (!replica)
				return false;
			j->no_replicas = true;
			continue;
		}
		t = SPI_tuptable->vals[0];
		td = SPI_tuptable->tupdesc;
		*job_id = DatumGetInt64(SPI_getbinval(t, td, 1, &isnull));
		*predicted = DatumGetFloat8(SPI_getbinval(t, td, 2, &isnull));
		*group_id = DatumGetInt64(SPI_getbinval(t, td, 3, &isnull));
		*replicated = DatumGetBool(SPI_getbinval(t, td, 4, &isnull));
		*bound_factor = DatumGetFloat8(SPI_getbinval(t, td, 5, &isnull));
		if (replica)
			j->last_replica = *job_id;
		else
			j->last_taken = *job_id;
		if (!*replicated || !group_taken(d, *group_id))
			return true;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * One pick for resource r: choose a workload by the seed 000 selection over
 * its usage, take one of its jobs.  Returns false when no job can be sent
 * for r any more.
 */
static bool
pick_one(Dispatch *d, int r, Candidate *cand, int *index, int *version, int *engine_counts)
{
	const WorkloadCache *cache = d->cache;
	ResourceRequest *rr = &d->req.rsc[r];
	SelectionParams params;
	Selection	sel;

	for (;;)
	{
		int			n = 0;
		JobWorkload *j;
		const CachedVersion *cv;
		int64		job_id,
					group_id;
		bool		replicated;
		double		predicted,
					est,
					bound,
					peak,
					usage,
					bound_factor;
		Pick	   *p;

		if (d->fairness == FAIRNESS_DEBT)
			allot_overall_debts(d->jw[0].debt, d->share, cache->n_job_workloads,
								cache->n_resources, d->overall);
		for (int i = 0; i < cache->n_job_workloads; i++)
		{
			JobWorkload *c = &d->jw[i];
			int			v;

			if (c->excluded || c->exhausted || c->unsent <= 0 || c->blocked[r])
				continue;
			v = best_version(d, c, r);
			if (v < 0)
				continue;
			index[n] = i;
			version[n] = v;
			memset(&cand[n], 0, sizeof(Candidate));
			cand[n].workload_id = c->w->id;
			cand[n].priority = c->w->priority;
			cand[n].engine = c->w->engine;
			cand[n].focus = allot_has_name(&d->host.focus, c->w->engine_name);
			cand[n].throughput = c->w->throughput;
			/* usage: peak MFLOPS in progress, or recent credit */
			cand[n].threads = d->fairness == FAIRNESS_RECENT ? c->rec : c->mflops;
			cand[n].debt = d->fairness == FAIRNESS_DEBT ? d->overall[i] : 0;
			n++;
		}
		if (n == 0)
			return false;

		/* Seed 000 steps 1 (priority, focus) to 7, without the repeat rule. */
		allot_refine_candidates(cand, n);
		memset(&params, 0, sizeof(params));
		params.balance_engines = allot_balance_engine_throughputs;
		params.repeat_threshold = allot_repeat_threshold;
		params.by_debt = d->fairness == FAIRNESS_DEBT;
		params.draw = allot_random_uniform(&d->rng);
		allot_select(cand, n, cache->n_engines, engine_counts, &params, &sel);
		if (sel.chosen < 0)
			return false;

		j = &d->jw[index[sel.chosen]];
		cv = &cache->versions[version[sel.chosen]];
		usage = r == cache->cpu ? cv->ncpus : cv->ncoprocs;
		if (!take_job(d, j, &job_id, &predicted, &group_id, &replicated, &bound_factor))
		{
			/* Others hold or took them all: look elsewhere. */
			j->exhausted = true;
			continue;
		}
		estimate_pick(d, j, version[sel.chosen], predicted, bound_factor, &est, &bound, &peak);
		if (!allot_request_meets_deadline(rr, est, delay_bound(j->w)) &&
			!allot_request_may_probe(rr, j->in_progress))
		{
			/* It would miss its deadline here: keep it for another resource
			 * of this request, or leave it for an idler host. */
			j->held_id = job_id;
			j->held_predicted = predicted;
			j->held_group = group_id;
			j->held_replicated = replicated;
			j->held_bound_factor = bound_factor;
			j->blocked[r] = true;
			continue;
		}

		p = &d->picks[d->n_picks++];
		p->job_id = job_id;
		p->workload_id = j->w->id;
		p->version_id = cv->id;
		p->resource = r;
		p->ncpus = cv->ncpus;
		p->ncoprocs = cv->ncoprocs;
		p->predicted = predicted;
		p->est = est;
		p->bound = bound;
		p->peak = peak;
		p->deadline = d->now + (TimestampTz) (delay_bound(j->w) * USECS_PER_SEC);
		p->app_id = j->app->id;
		p->est_flops_per_au = j->app->est_flops_per_au;
		p->credit = allot_sent_credit(est, peak, delay_bound(j->w));
		p->group_id = group_id;
		p->replicated = replicated;
		p->replicate = false;

		/*
		 * Adaptive replication (reliability.h): a job sent alone so far is
		 * replicated when this host is not reliable, or as a spot check.
		 */
		if (!replicated && j->w->adaptive_replication)
		{
			TrustPolicy policy = {allot_reliable_after, allot_reliable_max_error_rate,
			allot_reliable_alone_probability};

			p->replicate = allot_replicate_sending(&d->host.trust, &policy,
												   allot_random_uniform(&d->rng));
			p->replicated = p->replicate;
		}

		/* The job counts at once for the next pick of this request. */
		j->mflops += rint(peak / 1e6);
		if (d->fairness == FAIRNESS_RECENT)
			j->rec += p->credit;
		else if (d->fairness == FAIRNESS_DEBT)
		{
			j->debt[r].sent += p->credit;
			j->debt[r].eligible = true;
		}
		j->unsent--;
		j->in_progress++;
		d->hv[version[sel.chosen]].jobs_today++;
		allot_request_charge(rr, est, usage);
		if (d->req.shared_seconds)
			for (int q = 0; q < cache->n_resources; q++)
				d->req.rsc[q].secs = rr->secs;
		return true;
	}
}

void
allot_pick_jobs(Dispatch *d)
{
	const WorkloadCache *cache = d->cache;
	int			nw = cache->n_job_workloads;
	Candidate  *cand = palloc(sizeof(Candidate) * (nw + 1));
	int		   *index = palloc(sizeof(int) * (nw + 1));
	int		   *version = palloc(sizeof(int) * (nw + 1));
	int		   *engine_counts = palloc(sizeof(int) * (cache->n_engines + 1));

	prepare_plans(cache->voices);
	d->max_picks = allot_max_jobs_per_request;
	d->picks = palloc(sizeof(Pick) * (d->max_picks + 1));

	/* Coprocessors first (they are faster, hence more important), CPU last. */
	for (int r = 0; r < cache->n_resources; r++)
	{
		/* An old client's shared seconds may run out before r's turn. */
		d->req.rsc[r].tried = allot_request_needs(&d->req.rsc[r]);
		/* A host backing off after its failures is sent nothing (error_backoff.h). */
		if (d->host.backoff_until > d->now)
			continue;
		while (d->n_picks < d->max_picks && allot_request_needs(&d->req.rsc[r]) &&
			   pick_one(d, r, cand, index, version, engine_counts))
			CHECK_FOR_INTERRUPTS();
	}
}
