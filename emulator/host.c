/*
 * host.c: one emulated host, as its own client sees it.
 *
 * - Availability: on and off periods of exponential length whose means
 *   give the scenario's fraction of time on (seeded per host).  While off a
 *   host computes nothing and contacts nobody.
 * - Running jobs: per resource, jobs start in the order they were received
 *   (FIFO) while they fit in the free instances, run at their true speed
 *   without preemption, and pause while the host is off.  A job that has
 *   not started by its deadline is dropped (BOINC aborts such jobs) and
 *   reported as aborted.
 * - Work fetch: the host simulates its own queue with allot's estimates
 *   (seed 002's round-robin simulation, FIFO here): per resource, the
 *   instances idle now, the saturated time (until an instance goes idle)
 *   and the shortfall (idle instance-seconds before max_buffer).  It asks
 *   when an instance is idle or the saturated time is below min_buffer, for
 *   every resource with a shortfall that is not backed off (seed 001).
 */
#include "emulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Availability.
 */
static void
draw_toggle(Emulator *em, Host *h, double from)
{
	const ScnHostGroup *g = &em->scn.groups[h->group];
	double		off_mean;

	if (g->availability >= 1)
	{
		h->next_toggle = INFINITY;
		return;
	}
	off_mean = g->on_mean * (1 - g->availability) / g->availability;
	h->next_toggle = from + rng_exponential(&h->avail, h->online ? g->on_mean : off_mean);
}

void
host_init_availability(Emulator *em, Host *h)
{
	const ScnHostGroup *g = &em->scn.groups[h->group];

	h->avail = rng_stream(em->scn.seed, RNG_AVAILABILITY, (uint64_t) h->id);
	/* Start in the stationary state: on with probability availability, and
	 * by memorylessness the rest of the period is a fresh draw. */
	h->online = g->availability >= 1 || rng_uniform(&h->avail) < g->availability;
	h->online_since = 0;
	draw_toggle(em, h, 0);
}

/* ---------------------------------------------------------------------------
 * Running jobs.
 */
static double
job_end(const Job *j)
{
	return j->seg_start + (j->true_secs - j->ran);
}

/* Account a running segment [t1, t2] of a job. */
static void
account_segment(Emulator *em, Host *h, Job *j, double t1, double t2)
{
	if (t2 <= t1)
		return;
	metrics_work(em, j->workload, j->flops / j->true_secs, t1, t2);
	metrics_busy(em, j->workload, h->res[j->res].global, j->usage, t1, t2);
}

/* Monotony: a run on a host resource ends when it starts another workload. */
static void
note_start(Emulator *em, HostRes *r, int workload, double t)
{
	if (r->run_workload == workload)
		return;
	if (r->run_workload >= 0)
		metrics_run(em, r->run_start, t, true);
	r->run_workload = workload;
	r->run_start = t;
}

void
host_start_jobs(Emulator *em, Host *h, double t)
{
	bool		blocked[2] = {false, false};

	if (!h->online)
		return;
	for (int i = 0; i < h->njobs; i++)
	{
		Job		   *j = &h->jobs[i];
		HostRes    *r = &h->res[j->res];

		if (j->state != JOB_QUEUED || blocked[j->res])
			continue;
		if (j->ran == 0 && j->deadline <= t)
		{
			j->state = JOB_DROPPED;
			if (t >= em->scn.measure_from)
				em->m.jobs_dropped++;
			continue;
		}
		if (j->usage > r->n - r->used + EPS)
		{
			blocked[j->res] = true;	/* FIFO: the head waits, so do the others */
			continue;
		}
		j->state = JOB_RUNNING;
		j->seg_start = t;
		r->used += j->usage;
		note_start(em, r, j->workload, t);
	}
}

static void
finish_job(Emulator *em, Host *h, Job *j, double t)
{
	account_segment(em, h, j, j->seg_start, t);
	h->res[j->res].used -= j->usage;
	if (h->res[j->res].used < EPS)
		h->res[j->res].used = 0;
	j->ran = j->true_secs;
	j->state = JOB_FINISHED;
	j->finished_at = t;
	if (t >= em->scn.measure_from)
	{
		em->m.jobs_completed++;
		em->m.flops_completed += j->flops;
		if (t > j->deadline)
		{
			em->m.jobs_late++;
			em->m.flops_late += j->flops;
		}
	}
}

static void
go_offline(Emulator *em, Host *h, double t)
{
	for (int i = 0; i < h->njobs; i++)
	{
		Job		   *j = &h->jobs[i];

		if (j->state != JOB_RUNNING)
			continue;
		account_segment(em, h, j, j->seg_start, t);
		j->ran += t - j->seg_start;
		j->state = JOB_QUEUED;	/* resumes first: it is earlier in the queue */
	}
	for (int r = 0; r < h->nres; r++)
	{
		h->res[r].used = 0;
		metrics_avail(em, h->res[r].global, h->res[r].n, h->online_since, t);
	}
	h->online = false;
}

double
host_next_finish(const Host *h)
{
	double		next = INFINITY;

	if (!h->online)
		return next;
	for (int i = 0; i < h->njobs; i++)
		if (h->jobs[i].state == JOB_RUNNING && job_end(&h->jobs[i]) < next)
			next = job_end(&h->jobs[i]);
	return next;
}

/*
 * Run the host up to time t, handling every finish and on/off switch in
 * time order.  Paused jobs keep their place and resume first (the queue is
 * in arrival order, and they arrived earlier); a paused job is "queued"
 * with ran > 0 and is not dropped at its deadline, since it has started.
 */
void
host_advance(Emulator *em, Host *h, double t)
{
	for (;;)
	{
		double		finish = host_next_finish(h);
		double		next = finish < h->next_toggle ? finish : h->next_toggle;

		if (next > t)
			break;
		if (finish <= h->next_toggle)
		{
			for (int i = 0; i < h->njobs; i++)
				if (h->jobs[i].state == JOB_RUNNING && job_end(&h->jobs[i]) <= finish)
					finish_job(em, h, &h->jobs[i], job_end(&h->jobs[i]));
			host_start_jobs(em, h, finish);
		}
		else if (h->online)
		{
			go_offline(em, h, h->next_toggle);
			draw_toggle(em, h, h->next_toggle);
		}
		else
		{
			h->online = true;
			h->online_since = h->next_toggle;
			draw_toggle(em, h, h->next_toggle);
			host_start_jobs(em, h, h->online_since);
		}
	}
}

/* At the end of the run: account what is still running, and close runs. */
void
host_finish_run(Emulator *em, Host *h)
{
	double		end = em->scn.length;

	if (h->online)
	{
		for (int i = 0; i < h->njobs; i++)
			if (h->jobs[i].state == JOB_RUNNING)
				account_segment(em, h, &h->jobs[i], h->jobs[i].seg_start, end);
		for (int r = 0; r < h->nres; r++)
			metrics_avail(em, h->res[r].global, h->res[r].n, h->online_since, end);
	}
	for (int r = 0; r < h->nres; r++)
		if (h->res[r].run_workload >= 0)
			metrics_run(em, h->res[r].run_start, end, false);
}

/* ---------------------------------------------------------------------------
 * Receiving a job.
 */
void
host_add_job(Emulator *em, Host *h, int64_t job_id, int workload, int version_id,
			 double est_secs, double deadline)
{
	const ScnWorkload *w = &em->scn.workloads[workload];
	const ScnApp *app;
	const ScnVersion *v;
	Job		   *j;
	Rng			rng;
	double		device_flops;
	int			res = -1;

	if (version_id < 1 || version_id > em->max_version_id || em->version_app[version_id] < 0)
	{
		fprintf(stderr, "allot sent job %lld with unknown app version %d\n",
				(long long) job_id, version_id);
		exit(2);
	}
	app = &em->scn.apps[em->version_app[version_id]];
	v = &app->versions[em->version_idx[version_id]];
	for (int r = 0; r < h->nres; r++)
		if (!strcmp(em->resources[h->res[r].global], v->resource))
			res = r;
	if (res < 0)
	{
		fprintf(stderr, "allot sent job %lld for %s to host %lld, which has none\n",
				(long long) job_id, v->resource, (long long) h->id);
		exit(2);
	}
	if (h->njobs == h->jobs_cap)
	{
		h->jobs_cap = h->jobs_cap ? 2 * h->jobs_cap : 16;
		h->jobs = realloc(h->jobs, sizeof(Job) * (size_t) h->jobs_cap);
		if (h->jobs == NULL)
		{
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
	}
	j = &h->jobs[h->njobs++];
	memset(j, 0, sizeof(*j));
	j->id = job_id;
	j->workload = workload;
	j->res = res;
	j->state = JOB_QUEUED;
	j->usage = res == 0 ? v->ncpus : v->ncoprocs;
	j->est_secs = est_secs;
	j->sent_at = em->now;
	j->deadline = deadline;

	/* The job's app units depend on the job only: the same whichever host
	 * runs it.  The noise of its run time depends on the host too. */
	rng = rng_stream(em->scn.seed, RNG_JOB, (uint64_t) job_id);
	switch (w->app_units.kind)
	{
		case DIST_FIXED:
			j->app_units = w->app_units.a;
			break;
		case DIST_UNIFORM:
			j->app_units = w->app_units.a + (w->app_units.b - w->app_units.a) * rng_uniform(&rng);
			break;
		case DIST_LOGNORMAL:
			{
				double		s = w->app_units.b;

				j->app_units = w->app_units.a * exp(s * rng_normal(&rng) - s * s / 2);
				break;
			}
	}
	j->flops = j->app_units * app->flops_per_au;
	device_flops = j->usage * h->res[res].instance_flops * v->efficiency;
	rng = rng_stream(em->scn.seed ^ (uint64_t) h->id, RNG_JOB, (uint64_t) job_id);
	j->true_secs = j->flops / device_flops * (1 + em->scn.noise * (2 * rng_uniform(&rng) - 1));
	if (j->true_secs < 1)
		j->true_secs = 1;
}

/* ---------------------------------------------------------------------------
 * Work fetch.
 */
typedef struct BufferState
{
	double		idle_now;		/* instances idle now */
	double		saturated;		/* until an instance goes idle */
	double		shortfall;		/* idle instance-seconds before max_buffer */
} BufferState;

/* A min-heap of (end time, usage) pairs in em->scratch. */
static void
ends_push(double *heap, int *n, double t, double usage)
{
	int			i = (*n)++;

	while (i > 0 && heap[2 * ((i - 1) / 2)] > t)
	{
		heap[2 * i] = heap[2 * ((i - 1) / 2)];
		heap[2 * i + 1] = heap[2 * ((i - 1) / 2) + 1];
		i = (i - 1) / 2;
	}
	heap[2 * i] = t;
	heap[2 * i + 1] = usage;
}

static void
ends_pop(double *heap, int *n, double *t, double *usage)
{
	double		lt,
				lu;
	int			i = 0;

	*t = heap[0];
	*usage = heap[1];
	(*n)--;
	lt = heap[2 * *n];
	lu = heap[2 * *n + 1];
	for (;;)
	{
		int			c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && heap[2 * (c + 1)] < heap[2 * c])
			c++;
		if (heap[2 * c] >= lt)
			break;
		heap[2 * i] = heap[2 * c];
		heap[2 * i + 1] = heap[2 * c + 1];
		i = c;
	}
	heap[2 * i] = lt;
	heap[2 * i + 1] = lu;
}

/*
 * Simulate resource r's queue with allot's estimates: running jobs for what
 * remains of their estimate, then queued jobs in order as instances free.
 */
static BufferState
simulate_buffer(Emulator *em, Host *h, int r, double now)
{
	HostRes    *hr = &h->res[r];
	BufferState b = {0, 0, 0};
	double		free_ = hr->n - hr->used;
	double		t = 0;
	double		horizon = em->scn.max_buffer;
	double	   *heap;
	int			n = 0;
	int			q;

	if (2 * h->njobs + 2 > em->scratch_cap)
	{
		em->scratch_cap = 2 * h->njobs + 64;
		em->scratch = realloc(em->scratch, sizeof(double) * (size_t) em->scratch_cap);
		if (em->scratch == NULL)
			exit(2);
	}
	heap = em->scratch;
	for (int i = 0; i < h->njobs; i++)
	{
		Job		   *j = &h->jobs[i];
		double		left;

		if (j->res != r || j->state != JOB_RUNNING)
			continue;
		left = j->est_secs - (j->ran + now - j->seg_start);
		ends_push(heap, &n, left > 0 ? left : 0, j->usage);
	}
	/* Queued jobs start in order whenever they fit. */
	q = 0;
	for (;;)
	{
		while (q < h->njobs)
		{
			Job		   *j = &h->jobs[q];

			if (j->res != r || j->state != JOB_QUEUED)
			{
				q++;
				continue;
			}
			if (j->usage > free_ + EPS)
				break;
			ends_push(heap, &n, t + (j->est_secs - j->ran > 0 ? j->est_secs - j->ran : 0), j->usage);
			free_ -= j->usage;
			q++;
		}
		if (q >= h->njobs || n == 0)
			break;
		{
			double		et,
						eu;

			ends_pop(heap, &n, &et, &eu);
			t = et;
			free_ += eu;
		}
	}
	/* The queue is empty from time t on: free capacity grows as jobs end. */
	if (t == 0)
		b.idle_now = free_ > EPS ? free_ : 0;
	b.saturated = free_ > EPS ? t : INFINITY;
	while (t < horizon)
	{
		double		next = horizon;
		double		et = 0,
					eu = 0;

		if (n > 0 && heap[0] < horizon)
			next = heap[0];
		if (free_ > EPS)
		{
			b.shortfall += free_ * (next - t);
			if (b.saturated > t)
				b.saturated = t;
		}
		if (next >= horizon)
			break;
		ends_pop(heap, &n, &et, &eu);
		free_ += eu;
		t = et;
	}
	if (!isfinite(b.saturated))
		b.saturated = horizon;	/* busy past the horizon: as good as full */
	return b;
}

/*
 * Does the host ask for work now?  If so write the request into json and
 * return true.  Either way set *wake to when it should look again (its
 * buffer running low, a backoff or the request interval ending).
 */
bool
host_request(Emulator *em, Host *h, char *json, size_t len, double *wake)
{
	const Scenario *s = &em->scn;
	double		now = em->now;
	BufferState b[2];
	bool		trigger = false;
	size_t		off;
	int			asked = 0;

	*wake = INFINITY;
	if (!h->online)
		return false;
	for (int r = 0; r < h->nres; r++)
	{
		b[r] = simulate_buffer(em, h, r, now);
		if (h->res[r].backoff_until > now)
		{
			if (h->res[r].backoff_until < *wake)
				*wake = h->res[r].backoff_until;
			continue;
		}
		if (b[r].idle_now > EPS || b[r].saturated < s->min_buffer)
			trigger = true;
		else if (now + b[r].saturated - s->min_buffer < *wake)
			*wake = now + b[r].saturated - s->min_buffer;
	}
	if (!trigger)
		return false;
	if (now < h->last_request + s->request_interval)
	{
		if (h->last_request + s->request_interval < *wake)
			*wake = h->last_request + s->request_interval;
		return false;
	}
	if (s->buffer_request)
	{
		snprintf(json, len, "{\"buffer\": {\"min_secs\": %.0f, \"max_secs\": %.0f}}",
				 s->min_buffer, s->max_buffer);
		return true;
	}
	off = (size_t) snprintf(json, len, "{\"resources\": {");
	for (int r = 0; r < h->nres; r++)
	{
		if (h->res[r].backoff_until > now || (b[r].shortfall <= EPS && b[r].idle_now <= EPS))
			continue;
		off += (size_t) snprintf(json + off, len - off,
								 "%s\"%s\": {\"req_secs\": %.0f, \"req_instances\": %.6g, \"estimated_delay\": %.0f}",
								 asked++ ? ", " : "", em->resources[h->res[r].global],
								 b[r].shortfall, b[r].idle_now,
								 isfinite(b[r].saturated) ? b[r].saturated : 0);
	}
	snprintf(json + off, len - off, "}}");
	return asked > 0;
}

/* ---------------------------------------------------------------------------
 * The hosts' heap, by wake time.
 */
static void
heap_swap(Emulator *em, int a, int b)
{
	Host	   *t = em->heap[a];

	em->heap[a] = em->heap[b];
	em->heap[b] = t;
	em->heap[a]->heap_pos = a;
	em->heap[b]->heap_pos = b;
}

void
heap_push(Emulator *em, Host *h)
{
	int			i = em->heap_len++;

	em->heap[i] = h;
	h->heap_pos = i;
	while (i > 0 && em->heap[(i - 1) / 2]->wake > em->heap[i]->wake)
	{
		heap_swap(em, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

double
heap_min(const Emulator *em)
{
	return em->heap_len > 0 ? em->heap[0]->wake : INFINITY;
}

Host *
heap_pop_due(Emulator *em, double t)
{
	Host	   *h;
	int			i = 0;

	if (em->heap_len == 0 || em->heap[0]->wake > t)
		return NULL;
	h = em->heap[0];
	em->heap_len--;
	if (em->heap_len > 0)
	{
		em->heap[0] = em->heap[em->heap_len];
		em->heap[0]->heap_pos = 0;
		for (;;)
		{
			int			c = 2 * i + 1;

			if (c >= em->heap_len)
				break;
			if (c + 1 < em->heap_len && em->heap[c + 1]->wake < em->heap[c]->wake)
				c++;
			if (em->heap[c]->wake >= em->heap[i]->wake)
				break;
			heap_swap(em, i, c);
			i = c;
		}
	}
	h->heap_pos = -1;
	return h;
}
