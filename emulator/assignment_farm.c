/*
 * assignment_farm.c: an OpenBench-style farm in virtual time.
 *
 * A host that is on calls assign_workload every assign_interval (with a
 * seeded jitter, so hosts do not ask in lockstep), and runs what it got
 * with all its threads until its next call: a workload, or nothing when
 * zero rows came back.  A host that goes off stops at once and calls
 * nothing; allot stops counting it when allot.assignment_ttl has passed
 * (set the TTL above the interval, as an OpenBench server would).  When it
 * comes back it asks at once.  The work measured is thread-seconds.
 */
#include "emulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ASSIGN_SQL =
"SELECT workload_id FROM allot.assign_workload($1, to_timestamp($2::float8), '{}', $3)";

/* Account what host h ran since work_since, up to t. */
static void
stop_work(Emulator *em, Host *h, double t)
{
	if (h->workload >= 0 && t > h->work_since)
	{
		metrics_work(em, h->workload, h->threads, h->work_since, t);
		metrics_busy(em, h->workload, 0, h->threads, h->work_since, t);
	}
	h->workload = -1;
	h->work_since = t;
}

static void
start_work(Emulator *em, Host *h, int w, double t)
{
	stop_work(em, h, t);
	h->workload = w;
	h->work_since = t;
	if (w < 0 || w == h->run_workload)
		return;
	/* Monotony: a run ends when the host starts another workload. */
	if (h->run_workload >= 0)
		metrics_run(em, h->run_start, t, true);
	h->run_workload = w;
	h->run_start = t;
}

/* Run host h's availability up to t. */
static void
advance(Emulator *em, Host *h, double t)
{
	while (h->next_toggle <= t)
	{
		const ScnHostGroup *g = &em->scn.groups[h->group];
		double		at = h->next_toggle;

		if (h->online)
		{
			stop_work(em, h, at);
			metrics_avail(em, 0, h->threads, h->online_since, at);
			h->online = false;
			h->next_toggle = at + rng_exponential(&h->avail, g->on_mean * (1 - g->availability) / g->availability);
		}
		else
		{
			h->online = true;
			h->online_since = at;
			h->next_assign = at;	/* back: ask at once */
			h->next_toggle = at + rng_exponential(&h->avail, g->on_mean);
		}
	}
}

static void
on_result(void *ctx, Contact *c, Call *call, PGresult *res)
{
	Emulator   *em = ctx;
	Host	   *h = c->host;
	int			w = -1;

	(void) call;
	if (PQntuples(res) == 1)
	{
		w = atoi(PQgetvalue(res, 0, 0)) - 1;
		if (w < 0 || w >= em->scn.nworkloads)
		{
			fprintf(stderr, "assign_workload returned unknown workload %s\n", PQgetvalue(res, 0, 0));
			exit(2);
		}
	}
	h->assigned = w;
	start_work(em, h, w, em->now);
}

bool
assignment_farm_run(Emulator *em)
{
	const Scenario *s = &em->scn;
	double		next_transitioner = s->transitioner_interval > 0 ? s->transitioner_interval : INFINITY;
	int			bucket = 0;
	Host	  **due = malloc(sizeof(Host *) * (size_t) (em->nhosts + 1));

	if (due == NULL || !prepare_all(em, "assign", ASSIGN_SQL, 0))
		return false;
	for (int i = 0; i < em->nhosts; i++)
	{
		Host	   *h = &em->hosts[i];

		h->next_assign = 0;
		h->wake = h->online ? 0 : h->next_toggle;
		heap_push(em, h);
	}

	em->now = 0;
	for (;;)
	{
		double		t = ceil(heap_min(em) / s->tick) * s->tick;
		double		next_event = next_event_at(em);
		int			ndue = 0;
		Host	   *h;

		t = fmin(t, fmin(next_transitioner, fmin((bucket + 1) * s->bucket, next_event)));
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
				advance(em, h, t);
				due[ndue++] = h;
				if (h->online && h->next_assign <= t)
				{
					Contact    *c = contact_begin(em, h);
					Call	   *call = contact_call(em, c, "assign");
					Rng			rng = rng_stream(s->seed, RNG_SQL_SEED,
												 (uint64_t) h->id * 1000003u + (uint64_t) t);

					call->nparams = 3;
					call->values[0] = arena_printf(em, "%lld", (long long) h->id);
					call->values[1] = arena_printf(em, "%.6f", VIRTUAL_EPOCH + t);
					call->values[2] = arena_printf(em, "%lld", (long long) (rng_next(&rng) >> 2));
					h->next_assign = t + s->assign_interval *
						(1 + s->assign_jitter * (2 * rng_uniform(&h->jitter) - 1));
					em->m.requests_all++;
					if (t >= s->measure_from)
						em->m.requests++;
				}
			}
			if (!run_contacts(em, on_result))
				return false;
			for (int i = 0; i < ndue; i++)
			{
				h = due[i];
				h->wake = h->online ? fmin(h->next_assign, h->next_toggle) : h->next_toggle;
				if (h->wake < t + s->tick)
					h->wake = t + s->tick;
				heap_push(em, h);
			}
		}
		if (!end_of_tick(em, t, &next_transitioner, &bucket))
			return false;
		if (t >= s->length)
			break;
	}
	if (bucket < em->m.nbuckets && !sample_bucket(em, bucket))
		return false;
	for (int i = 0; i < em->nhosts; i++)
	{
		Host	   *h = &em->hosts[i];

		advance(em, h, s->length);
		stop_work(em, h, s->length);
		if (h->online)
			metrics_avail(em, 0, h->threads, h->online_since, s->length);
		if (h->run_workload >= 0)
			metrics_run(em, h->run_start, s->length, false);
	}
	free(due);
	return true;
}
