/*
 * job_farm.c: a BOINC-style farm in virtual time.
 *
 * Each tick, the hosts that need attention run up to the tick (finishing
 * and starting jobs at their exact times) and contact allot: one
 * transaction with a report_job call per job finished or dropped, and a
 * request_work call if the host's buffer is low.  The replies' jobs join
 * the hosts' queues.  Between ticks the control connection applies
 * scenario events, runs the transitioner on its interval and samples each
 * bucket's end.  Every call passes the virtual time as `now`.
 */
#include "emulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A report is sent only if allot still has the job in progress on this host
 * from this sending: a job the transitioner timed out (and maybe sent to
 * another host) would make report_job raise "its report comes too late",
 * and the host learns the same from getting no row back.  Only this host's
 * contacts and the transitioner (never concurrent with contacts) change
 * such a row, so the check cannot race.  The farm's validator accepts
 * every success at once (the emulated hosts are honest): allot learns from
 * validated results only.  Each verdict passes the virtual time, at which
 * allot 0.7.0 notes when a host became reliable; the replicas of a job
 * (allot 0.7.0) agree, their digests being equal (NULL: one class).
 */
#define REPORT_SQL(validate) \
"SELECT CASE WHEN allot.report_job(j.host_id, j.id, $3, $4::float8, $5::float8, NULL," \
"                                  to_timestamp($6::float8)) ->> 'state' = 'done'" \
"            THEN " validate " END" \
" FROM allot.job j" \
" WHERE j.id = $2 AND j.host_id = $1 AND j.state = 'in_progress' AND j.sent_at = to_timestamp($7::float8)"
static const char *const REPORT_SQL_060 = REPORT_SQL("allot.validate_job(j.id, true)");
static const char *const REPORT_SQL_070 = REPORT_SQL("true");

/*
 * From allot 0.7.0 the validator runs after each tick on the control
 * connection, as BOINC's validator daemon runs beside its scheduler: a
 * verdict on a replicated job takes that job's verdict lock until its
 * transaction ends, and the contacts of one tick, each reporting several
 * jobs, would otherwise wait for each other's.  The virtual time of the
 * tick is the verdicts' now (allot notes when a host became reliable).
 */
static const char *const VALIDATE_SQL =
"SELECT count(allot.validate_job(id, true, NULL, NULL, to_timestamp($1::float8)))"
"  FROM unnest($2::bigint[]) id";

/* Note a job reported done in this tick, for the validator. */
static bool
note_success(Emulator *em, const char *job_id)
{
	size_t		need = em->to_validate_len + strlen(job_id) + 3;

	if (need > em->to_validate_cap)
	{
		size_t		cap = need * 2 + 64;
		char	   *p = realloc(em->to_validate, cap);

		if (p == NULL)
			return false;
		em->to_validate = p;
		em->to_validate_cap = cap;
	}
	em->to_validate_len += (size_t) sprintf(em->to_validate + em->to_validate_len, "%s%s",
											em->to_validate_len == 0 ? "{" : ",", job_id);
	return true;
}

/* The reply, flattened to two text columns the emulator splits:
 * "job_id workload_id app_version_id est_secs deadline_epoch;..." and
 * "resource status backoff_secs;...". */
static const char *const REQUEST_SQL =
"SELECT coalesce((SELECT string_agg(concat_ws(' ', j->>'job_id', j->>'workload_id',"
"                 j->>'app_version_id', j->>'est_secs',"
"                 extract(epoch FROM (j->>'deadline')::timestamptz)), ';')"
"                   FROM jsonb_array_elements(r->'jobs') j), ''),"
"       coalesce((SELECT string_agg(concat_ws(' ', k, v->>'status', v->>'backoff_secs'), ';')"
"                   FROM jsonb_each(r->'resources') e(k, v)), '')"
"  FROM allot.request_work($1, $2::jsonb, to_timestamp($3::float8), $4) r";

static void
on_result(void *ctx, Contact *c, Call *call, PGresult *res)
{
	Emulator   *em = ctx;
	Host	   *h = c->host;

	(void) ctx;
	if (call->report)
	{
		em->m.reports_all++;
		if (PQntuples(res) == 0)
		{
			em->m.reports_refused++;
			return;
		}
		if (call->success)
		{
			if (em->voices && !note_success(em, call->values[1]))
			{
				fprintf(stderr, "out of memory\n");
				exit(2);
			}
			em->m.done_jobs[call->workload]++;
			em->m.done_app_units[call->workload] += call->app_units;
			em->m.done_flops[call->workload] += call->flops;
		}
		return;
	}

	/* request_work's reply */
	{
		char	   *jobs = PQgetvalue(res, 0, 0);
		char	   *rscs = PQgetvalue(res, 0, 1);
		char	   *save = NULL;

		for (char *tok = strtok_r(jobs, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		{
			long long	job_id;
			int			wid,
						vid;
			double		est,
						deadline;

			if (sscanf(tok, "%lld %d %d %lf %lf", &job_id, &wid, &vid, &est, &deadline) != 5 ||
				wid < 1 || wid > em->scn.nworkloads)
			{
				fprintf(stderr, "cannot read a job of request_work's reply: \"%s\"\n", tok);
				exit(2);
			}
			host_add_job(em, h, job_id, wid - 1, vid, est, deadline - VIRTUAL_EPOCH);
		}
		save = NULL;
		for (char *tok = strtok_r(rscs, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		{
			char		name[NAME_LEN],
						status[32];
			double		backoff;

			if (sscanf(tok, "%63s %31s %lf", name, status, &backoff) != 3)
				continue;
			for (int r = 0; r < h->nres; r++)
				if (!strcmp(em->resources[h->res[r].global], name))
					h->res[r].backoff_until = strcmp(status, "work") != 0 && backoff > 0
						? em->now + backoff : 0;
		}
	}
}

/* Build host h's contact for this tick, if it has anything to say. */
static void
build_contact(Emulator *em, Host *h)
{
	Contact    *c = NULL;
	char		json[1024];
	double		wake;
	int			kept = 0;
	const char *host_id = NULL;

	if (!h->online)
		return;
	for (int i = 0; i < h->njobs; i++)
	{
		Job		   *j = &h->jobs[i];
		Call	   *call;

		if (j->state != JOB_FINISHED && j->state != JOB_DROPPED)
		{
			h->jobs[kept++] = *j;
			continue;
		}
		if (c == NULL)
		{
			c = contact_begin(em, h);
			host_id = arena_printf(em, "%lld", (long long) h->id);
		}
		call = contact_call(em, c, "report");
		call->report = true;
		call->success = j->state == JOB_FINISHED;
		call->workload = j->workload;
		call->app_units = j->app_units;
		call->flops = j->flops;
		call->nparams = 7;
		call->values[0] = host_id;
		call->values[1] = arena_printf(em, "%lld", (long long) j->id);
		call->values[2] = call->success ? "success" : "aborted";
		call->values[3] = call->success ? arena_printf(em, "%.17g", j->app_units) : "1";
		call->values[4] = call->success ? arena_printf(em, "%.17g", j->true_secs) : NULL;
		call->values[5] = arena_printf(em, "%.6f", VIRTUAL_EPOCH + em->now);
		call->values[6] = arena_printf(em, "%.6f", VIRTUAL_EPOCH + j->sent_at);
	}
	h->njobs = kept;

	if (host_request(em, h, json, sizeof(json), &wake))
	{
		Call	   *call;
		Rng			rng = rng_stream(em->scn.seed, RNG_SQL_SEED,
									 (uint64_t) h->id * 1000003u + (uint64_t) em->now);

		if (c == NULL)
		{
			c = contact_begin(em, h);
			host_id = arena_printf(em, "%lld", (long long) h->id);
		}
		call = contact_call(em, c, "request");
		call->nparams = 4;
		call->values[0] = host_id;
		call->values[1] = arena_printf(em, "%s", json);
		call->values[2] = arena_printf(em, "%.6f", VIRTUAL_EPOCH + em->now);
		call->values[3] = arena_printf(em, "%lld", (long long) (rng_next(&rng) >> 2));
		h->last_request = em->now;
		em->m.requests_all++;
		if (em->now >= em->scn.measure_from)
			em->m.requests++;
	}
}

/* When host h next needs attention, after this tick's contact. */
static void
schedule(Emulator *em, Host *h)
{
	char		json[1024];
	double		wake = INFINITY;
	double		finish;

	host_start_jobs(em, h, em->now);
	if (h->online)
	{
		/* Still wanting work it could ask for now: look again next tick. */
		if (host_request(em, h, json, sizeof(json), &wake))
			wake = em->now;
		finish = host_next_finish(h);
		if (finish < wake)
			wake = finish;
	}
	if (h->next_toggle < wake)
		wake = h->next_toggle;
	/* Anything sooner is handled at the next tick anyway. */
	if (wake < em->now + em->scn.tick)
		wake = em->now + em->scn.tick;
	h->wake = wake;
	heap_push(em, h);
}

bool
job_farm_run(Emulator *em)
{
	const Scenario *s = &em->scn;
	double		next_transitioner = s->transitioner_interval > 0 ? s->transitioner_interval : INFINITY;
	int			bucket = 0;
	Host	  **due = malloc(sizeof(Host *) * (size_t) (em->nhosts + 1));

	if (due == NULL)
		return false;
	{
		PGresult   *res = control_query(em, "SELECT to_regclass('allot.host_reliability') IS NOT NULL", 0, NULL);

		if (res == NULL)
			return false;
		em->voices = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		PQclear(res);
	}
	if (!prepare_all(em, "report", em->voices ? REPORT_SQL_070 : REPORT_SQL_060, 0) ||
		!prepare_all(em, "request", REQUEST_SQL, 0))
		return false;
	for (int i = 0; i < em->nhosts; i++)
	{
		Host	   *h = &em->hosts[i];

		h->wake = h->online ? 0 : h->next_toggle;
		heap_push(em, h);
	}

	em->now = 0;
	for (;;)
	{
		double		t = ceil(heap_min(em) / s->tick) * s->tick;
		double		next_bucket = (bucket + 1) * s->bucket;
		double		next_event = next_event_at(em);
		int			ndue = 0;
		Host	   *h;

		if (next_transitioner < t)
			t = next_transitioner;
		if (next_bucket < t)
			t = next_bucket;
		if (next_event < t)
			t = next_event;
		if (t > s->length)
			t = s->length;
		em->now = t;

		if (!apply_events(em, t))
			return false;
		if (t < s->length)
		{
			tick_reset(em);
			while ((h = heap_pop_due(em, t)) != NULL)
			{
				host_advance(em, h, t);
				build_contact(em, h);
				due[ndue++] = h;
			}
			if (!run_contacts(em, on_result))
				return false;
			for (int i = 0; i < ndue; i++)
				schedule(em, due[i]);
			if (em->voices && em->to_validate_len > 0)
			{
				char		now[32];
				const char *values[2] = {now, em->to_validate};
				PGresult   *res;

				strcpy(em->to_validate + em->to_validate_len, "}");
				snprintf(now, sizeof(now), "%.6f", VIRTUAL_EPOCH + t);
				if ((res = control_query(em, VALIDATE_SQL, 2, values)) == NULL)
					return false;
				PQclear(res);
				em->to_validate_len = 0;
			}
		}
		if (!end_of_tick(em, t, &next_transitioner, &bucket))
			return false;
		if (t >= s->length)
			break;
	}
	/* The last, partial bucket is sampled at the end. */
	if (bucket < em->m.nbuckets && !sample_bucket(em, bucket))
		return false;
	for (int i = 0; i < em->nhosts; i++)
	{
		host_advance(em, &em->hosts[i], s->length);
		host_finish_run(em, &em->hosts[i]);
	}
	free(due);
	return true;
}
