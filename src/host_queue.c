/*
 * host_queue.c: seed 002's queue simulation of one host, as plain C.
 *
 * The glue calls allot_host_queue() once per host.  It sorts the jobs by
 * resource and FIFO order, then simulates every resource on its own (seed
 * 002 gives every output "for each processor type"; a GPU job's CPU share is
 * not modelled, as the request accounting (docs/concepts.md "Job workloads") does not decrement the CPU
 * request for a GPU job either):
 *
 *   1. FIFO: jobs start in order while they fit in the free instances; a job
 *      that does not fit yet holds back every later one.  Time jumps from
 *      one completion to the next.  This gives the idle instances, the
 *      shortfall, the saturated time and each job's completion time, hence
 *      the deadline misses.
 *   2. EDF: the same, with the jobs that missed their deadline moved to the
 *      front in order of increasing deadline.  This gives the busy time.
 *
 * Cost: O(n log n) for n jobs (a heap sort, and a heap of running jobs in
 * each simulation); no allocation, the caller's scratch holds three arrays
 * of n doubles.  Job positions are kept in doubles, exact up to 2^53.
 */
#include <stddef.h>
#include <stdbool.h>

#include "host_queue.h"

/* What one simulation of one resource yields. */
typedef struct SimResult
{
	double		idle;			/* free instances during the first interval */
	double		shortfall;		/* free instance-seconds before max_buf */
	double		saturated;		/* first time not all instances are busy */
} SimResult;

/*
 * A total order on doubles, NaN last, so that the sort stays consistent
 * whatever the glue lets through.
 */
static int
compare_double(double a, double b)
{
	bool		a_nan = a != a;
	bool		b_nan = b != b;

	if (a_nan || b_nan)
		return (int) a_nan - (int) b_nan;
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	return 0;
}

/* FIFO order: by resource, then order, then input position (determinism). */
static int
compare_fifo(const QueueJob *jobs, int a, int b)
{
	int			c;

	if (jobs[a].resource != jobs[b].resource)
		return jobs[a].resource < jobs[b].resource ? -1 : 1;
	if ((c = compare_double(jobs[a].order, jobs[b].order)) != 0)
		return c;
	return (a > b) - (a < b);
}

/* EDF order (seed 002): by deadline, then FIFO position. */
static int
compare_edf(const QueueJob *jobs, int a, int b)
{
	int			c;

	if ((c = compare_double(jobs[a].deadline_secs, jobs[b].deadline_secs)) != 0)
		return c;
	return (a > b) - (a < b);
}

typedef int (*JobCompare) (const QueueJob *jobs, int a, int b);

static void
sift_down(double *idx, int root, int n, const QueueJob *jobs, JobCompare cmp)
{
	for (;;)
	{
		int			child = 2 * root + 1;
		double		tmp;

		if (child >= n)
			return;
		if (child + 1 < n &&
			cmp(jobs, (int) idx[child + 1], (int) idx[child]) > 0)
			child++;
		if (cmp(jobs, (int) idx[child], (int) idx[root]) <= 0)
			return;
		tmp = idx[root];
		idx[root] = idx[child];
		idx[child] = tmp;
		root = child;
	}
}

/*
 * Heap sort of job positions: O(n log n) without extra space.  It is not
 * stable, so every comparison ends on the positions themselves.
 */
static void
sort_positions(double *idx, int n, const QueueJob *jobs, JobCompare cmp)
{
	for (int i = n / 2 - 1; i >= 0; i--)
		sift_down(idx, i, n, jobs, cmp);
	for (int end = n - 1; end > 0; end--)
	{
		double		tmp = idx[0];

		idx[0] = idx[end];
		idx[end] = tmp;
		sift_down(idx, 0, end, jobs, cmp);
	}
}

/*
 * Move the jobs so that position k holds the job that was at perm[k],
 * following each cycle once; perm is destroyed (-1 marks a placed job).
 */
static void
apply_permutation(QueueJob *jobs, double *perm, int n)
{
	for (int k = 0; k < n; k++)
	{
		QueueJob	tmp;
		int			j = k;

		if (perm[k] < 0)
			continue;
		tmp = jobs[k];
		for (;;)
		{
			int			src = (int) perm[j];

			perm[j] = -1;
			if (src == k)
			{
				jobs[j] = tmp;
				break;
			}
			jobs[j] = jobs[src];
			j = src;
		}
	}
}

/* Min-heap of running jobs (segment positions), keyed by completion time. */
static bool
finishes_before(const double *finish, int a, int b)
{
	return finish[a] < finish[b] || (finish[a] == finish[b] && a < b);
}

static void
heap_push(double *heap, int *size, const double *finish, int job)
{
	int			i = (*size)++;

	while (i > 0)
	{
		int			parent = (i - 1) / 2;

		if (!finishes_before(finish, job, (int) heap[parent]))
			break;
		heap[i] = heap[parent];
		i = parent;
	}
	heap[i] = job;
}

static int
heap_pop(double *heap, int *size, const double *finish)
{
	int			top = (int) heap[0];
	int			last = (int) heap[--(*size)];
	int			i = 0;

	for (;;)
	{
		int			child = 2 * i + 1;

		if (child >= *size)
			break;
		if (child + 1 < *size &&
			finishes_before(finish, (int) heap[child + 1], (int) heap[child]))
			child++;
		if (!finishes_before(finish, (int) heap[child], last))
			break;
		heap[i] = heap[child];
		i = child;
	}
	if (*size > 0)
		heap[i] = last;
	return top;
}

/*
 * Instances a job takes.  A job that asks for more than the host has (an
 * app version for 4 GPUs on a 2-GPU host) runs alone, when the resource is
 * otherwise empty, and occupies all of it: counting it as the whole
 * resource makes exactly that happen below.  Bad usage (not > 0) takes
 * nothing.
 */
static double
job_usage(const QueueJob *job, double ninstances)
{
	if (!(job->usage > 0))
		return 0;
	return job->usage > ninstances ? ninstances : job->usage;
}

/* Remaining time, with anything not > 0 (also NaN) as already done. */
static double
job_remaining(const QueueJob *job)
{
	return job->remaining_secs > 0 ? job->remaining_secs : 0;
}

/* Free instances, with rounding noise below the tolerance as none. */
static double
free_instances(double ninstances, double used)
{
	double		spare = ninstances - used;

	return spare > ALLOT_QUEUE_EPSILON ? spare : 0;
}

/*
 * One simulation of one resource with ninstances > 0 (seed 002's "simulating
 * the execution of existing tasks in FIFO order").  Jobs start in the order
 * seq gives (NULL: their order in the array), strictly: BOINC's round-robin
 * simulation of a single project runs its tasks in FIFO order, so a job that
 * does not fit waits and holds back the later ones, even small ones.
 * Writes each job's completion time into finish.
 *
 * Every pass of the loop retires at least one running job, and an empty
 * resource admits any job, so the loop ends after at most n passes.
 */
static void
simulate(const QueueJob *jobs, const double *seq, int n, double ninstances,
		 double max_buf, double *finish, double *heap, SimResult *out)
{
	double		t = 0;
	double		used = 0;
	int			next = 0;
	int			running = 0;
	bool		idle_known = false;
	bool		saturated_known = false;

	out->idle = 0;
	out->shortfall = 0;
	out->saturated = 0;

	for (;;)
	{
		double		t_next;
		double		end;
		double		spare;

		/* Start jobs, in order, while the next one fits. */
		while (next < n)
		{
			int			j = seq != NULL ? (int) seq[next] : next;
			double		u = job_usage(&jobs[j], ninstances);

			if (used + u > ninstances + ALLOT_QUEUE_EPSILON)
				break;
			used += u;
			finish[j] = t + job_remaining(&jobs[j]);
			heap_push(heap, &running, finish, j);
			next++;
		}

		spare = free_instances(ninstances, used);

		/*
		 * Nothing running: everything has started (an empty resource admits
		 * any job) and finished.  The rest of the buffer is idle.
		 */
		if (running == 0)
		{
			if (!idle_known)
				out->idle = ninstances;
			if (!saturated_known)
				out->saturated = t;
			if (max_buf > t)
				out->shortfall += ninstances * (max_buf - t);
			return;
		}

		t_next = finish[(int) heap[0]];

		/*
		 * The state between t and t_next, when time moves on.  Jobs that
		 * complete at the very moment they start (no time left) hold their
		 * instances for no time at all, so they are retired before the
		 * state counts: a zero-length job must neither hide an idle
		 * instance nor, by holding back a bigger job for an instant, make
		 * the resource look unsaturated.
		 */
		if (t_next > t)
		{
			/* Idle instances: those free as time first moves on from now. */
			if (!idle_known)
			{
				out->idle = spare;
				idle_known = true;
			}

			/*
			 * Saturated time: the start of the first stretch during which
			 * some instance is free.  With fractional usage a resource may
			 * never be full, and then this is 0.
			 */
			if (!saturated_known && spare > 0)
			{
				out->saturated = t;
				saturated_known = true;
			}
		}

		/*
		 * Shortfall (seed 002: "additional instance-seconds needed to keep
		 * all instances busy until max_buffer"): the free instances times the
		 * part of [t, t_next) before max_buf.  Only spare > 0 is added, so
		 * that infinite times never make 0 * inf.
		 */
		end = t_next < max_buf ? t_next : max_buf;
		if (spare > 0 && end > t)
			out->shortfall += spare * (end - t);

		/* Retire every job that completes at t_next. */
		t = t_next;
		do
		{
			int			j = heap_pop(heap, &running, finish);

			used -= job_usage(&jobs[j], ninstances);
		} while (running > 0 && !(finish[(int) heap[0]] > t));

		/* Rounding drift must not keep an empty resource partly used. */
		if (running == 0)
			used = 0;
	}
}

/*
 * A resource the host does not have (ninstances 0, or not a number): its
 * jobs cannot run, so a job with time left never completes and misses its
 * (finite) deadline, and a job with none completes now, late only if its
 * deadline is past; nothing is idle, short or busy.
 */
static void
no_instances(const QueueJob *jobs, int n, QueueResource *res)
{
	res->idle_instances = 0;
	res->shortfall_secs = 0;
	res->saturated_secs = 0;
	res->busy_secs = 0;
	res->deadline_misses = 0;
	for (int j = 0; j < n; j++)
		if (job_remaining(&jobs[j]) > 0 || jobs[j].deadline_secs < 0)
			res->deadline_misses++;
}

/*
 * Seed 002's two simulations of one resource, for its n jobs (already in
 * FIFO order).  seq, finish and heap have room for n doubles each.
 */
static void
simulate_resource(const QueueJob *jobs, int n, QueueResource *res,
				  double max_buf, double *seq, double *finish, double *heap)
{
	SimResult	fifo;
	SimResult	edf;
	int			nmiss = 0;

	if (!(res->ninstances > 0))
	{
		no_instances(jobs, n, res);
		return;
	}

	simulate(jobs, NULL, n, res->ninstances, max_buf, finish, heap, &fifo);
	res->idle_instances = fifo.idle;
	res->shortfall_secs = fifo.shortfall;
	res->saturated_secs = fifo.saturated;

	/* T.deadline_miss of seed 002: completion after the deadline. */
	for (int j = 0; j < n; j++)
		if (finish[j] > jobs[j].deadline_secs)
			seq[nmiss++] = j;
	res->deadline_misses = nmiss;

	/* Without a miss the second simulation would be the first one again. */
	if (nmiss == 0)
	{
		res->busy_secs = fifo.saturated;
		return;
	}

	/*
	 * Seed 002: "a second simulation is done in which tasks that missed
	 * their deadline are executed in EDF order": the misses first, by
	 * increasing deadline, then the others in FIFO order.  Its busy time is
	 * the earliest a new job could start.
	 */
	sort_positions(seq, nmiss, jobs, compare_edf);
	{
		int			k = nmiss;

		for (int j = 0; j < n; j++)
			if (!(finish[j] > jobs[j].deadline_secs))
				seq[k++] = j;
	}
	simulate(jobs, seq, n, res->ninstances, max_buf, finish, heap, &edf);
	res->busy_secs = edf.saturated;
}

void
allot_host_queue(QueueJob *jobs, int n_jobs, QueueResource *resources,
				 int n_resources, double max_buf_secs, double *scratch)
{
	double	   *perm = NULL;
	double	   *finish = NULL;
	double	   *heap = NULL;
	int			p = 0;

	if (n_jobs < 0)
		n_jobs = 0;
	if (n_jobs > 0)
	{
		perm = scratch;
		finish = scratch + n_jobs;
		heap = scratch + 2 * (size_t) n_jobs;

		/* Group by resource, each group in FIFO order. */
		for (int i = 0; i < n_jobs; i++)
			perm[i] = i;
		sort_positions(perm, n_jobs, jobs, compare_fifo);
		apply_permutation(jobs, perm, n_jobs);
	}

	for (int r = 0; r < n_resources; r++)
	{
		int			start;

		/* Skip jobs of resources out of range (below 0, or before r). */
		while (p < n_jobs && jobs[p].resource < r)
			p++;
		start = p;
		while (p < n_jobs && jobs[p].resource == r)
			p++;

		if (p > start)
			simulate_resource(jobs + start, p - start, &resources[r],
							  max_buf_secs, perm + start, finish + start,
							  heap + start);
		else
			simulate_resource(jobs, 0, &resources[r], max_buf_secs,
							  NULL, NULL, NULL);
	}
}
