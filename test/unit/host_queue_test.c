/*
 * host_queue_test.c: unit tests of src/host_queue.c (seed 002's queue
 * simulation), without PostgreSQL.  Prints TAP.  Build and run: make -C
 * test/unit (or test/unit/run.sh).
 *
 * Every hand-worked case writes its timeline as "[a,b) X" for "job X runs
 * from a to b", and the outputs as idle / shortfall / saturated / busy /
 * misses.  Unless a case says otherwise, deadlines are far away.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "host_queue.h"
#include "tap.h"

#define FAR 1e9					/* a deadline nobody misses */
#define MAX_JOBS 200000

static double scratch[3 * MAX_JOBS];
static QueueJob jobs_buf[MAX_JOBS];

/* ---------------------------------------------------------------- helpers */

static bool
near(double got, double want)
{
	double		diff = got - want;
	double		scale = want < 0 ? -want : want;

	if (got == want)			/* also both infinite */
		return true;
	if (diff < 0)
		diff = -diff;
	return diff <= 1e-9 * (scale > 1 ? scale : 1);
}

static bool
is_nan(double x)
{
	return x != x;
}

static QueueJob
job(int resource, double usage, double remaining, double deadline, double order)
{
	QueueJob	j;

	j.resource = resource;
	j.usage = usage;
	j.remaining_secs = remaining;
	j.deadline_secs = deadline;
	j.order = order;
	return j;
}

static QueueResource
resource(double ninstances)
{
	QueueResource r;

	memset(&r, 0, sizeof(r));
	r.ninstances = ninstances;
	/* Poison the outputs: the function must write every one. */
	r.idle_instances = -12345;
	r.shortfall_secs = -12345;
	r.saturated_secs = -12345;
	r.busy_secs = -12345;
	r.deadline_misses = -12345;
	return r;
}

static void
run(QueueJob *jobs, int n, QueueResource *res, int nres, double max_buf)
{
	allot_host_queue(jobs, n, res, nres, max_buf, n > 0 ? scratch : NULL);
}

/* Compare all five outputs; say what differs as a TAP diagnostic. */
static bool
expect(const char *what, const QueueResource *r, double idle, double shortfall,
	   double saturated, double busy, int misses)
{
	bool		good = near(r->idle_instances, idle) &&
		near(r->shortfall_secs, shortfall) &&
		near(r->saturated_secs, saturated) &&
		near(r->busy_secs, busy) &&
		r->deadline_misses == misses;

	if (!good)
		printf("# %s: got idle %.17g shortfall %.17g saturated %.17g busy %.17g misses %d\n"
			   "# %s: want idle %.17g shortfall %.17g saturated %.17g busy %.17g misses %d\n",
			   what, r->idle_instances, r->shortfall_secs, r->saturated_secs,
			   r->busy_secs, r->deadline_misses,
			   what, idle, shortfall, saturated, busy, misses);
	return good;
}

static bool
same_outputs(const QueueResource *a, const QueueResource *b)
{
	return a->idle_instances == b->idle_instances &&
		a->shortfall_secs == b->shortfall_secs &&
		a->saturated_secs == b->saturated_secs &&
		a->busy_secs == b->busy_secs &&
		a->deadline_misses == b->deadline_misses;
}

static bool
no_nan(const QueueResource *r)
{
	bool		good = !is_nan(r->idle_instances) && !is_nan(r->shortfall_secs) &&
		!is_nan(r->saturated_secs) && !is_nan(r->busy_secs) &&
		r->idle_instances >= 0 && r->shortfall_secs >= 0 &&
		r->saturated_secs >= 0 && r->busy_secs >= 0 && r->deadline_misses >= 0;

	if (!good)
		printf("# got idle %g shortfall %g saturated %g busy %g misses %d\n",
			   r->idle_instances, r->shortfall_secs, r->saturated_secs,
			   r->busy_secs, r->deadline_misses);
	return good;
}

/* ------------------------------------------------------------ hand cases */

/*
 * No jobs, 4 CPUs, max_buf 1000: all 4 idle, the whole buffer is short
 * (4 * 1000), and the resource is unsaturated now.
 */
static bool
t_empty_host(void)
{
	QueueResource r[1] = {resource(4)};

	run(NULL, 0, r, 1, 1000);
	return expect("cpu", &r[0], 4, 4000, 0, 0, 0);
}

/*
 * One job of 100 s on a 1-CPU host, deadline 200, max_buf 300:
 * [0,100) J.  idle 0; shortfall (300 - 100) * 1 = 200; saturated 100 (the
 * CPU frees at 100); no miss (100 <= 200), so busy = saturated = 100.
 */
static bool
t_one_job(void)
{
	QueueJob	j[1] = {job(0, 1, 100, 200, 0)};
	QueueResource r[1] = {resource(1)};

	run(j, 1, r, 1, 300);
	return expect("cpu", &r[0], 0, 200, 100, 100, 0);
}

/*
 * 4 jobs of 1 CPU on 2 CPUs, FIFO A(100) B(300) C(200) D(50), given in the
 * scrambled input order D B A C (the order keys put them right):
 *   [0,100) A      [0,300) B
 *   [100,300) C    (C starts when A ends)
 *   [300,350) D    (B and C both end at 300; D starts)
 * idle 0; both CPUs busy until 300, then one: saturated 300.  Shortfall to
 * max_buf 1000: [300,350) 1 CPU = 50, [350,1000) 2 CPUs = 1300; total 1350.
 * No misses, busy 300.  The jobs come back sorted A B C D.
 */
static bool
t_four_jobs_two_cpus(void)
{
	QueueJob	j[4] = {
		job(0, 1, 50, FAR, 4),	/* D */
		job(0, 1, 300, FAR, 2), /* B */
		job(0, 1, 100, FAR, 1), /* A */
		job(0, 1, 200, FAR, 3), /* C */
	};
	QueueResource r[1] = {resource(2)};
	bool		sorted;

	run(j, 4, r, 1, 1000);
	sorted = j[0].order == 1 && j[1].order == 2 && j[2].order == 3 &&
		j[3].order == 4 && j[0].remaining_secs == 100 &&
		j[3].remaining_secs == 50;
	if (!sorted)
		printf("# jobs not sorted by order\n");
	return expect("cpu", &r[0], 0, 1350, 300, 300, 0) && sorted;
}

/*
 * Fractional usage.
 * (a) 1 CPU, three 0.5-CPU jobs J1(100) J2(200) J3(100), max_buf 400:
 *     [0,100) J1, [0,200) J2, [100,200) J3: full until 200.
 *     idle 0, saturated 200, shortfall [200,400) * 1 = 200.
 * (b) 2 CPUs, three 0.5-CPU jobs of 100 s, max_buf 200: 1.5 CPUs used, so
 *     idle 0.5 and never full: saturated 0.  Shortfall [0,100) 0.5 = 50,
 *     [100,200) 2 = 200; total 250.
 * (c) 1 CPU, ten 0.1-CPU jobs of 100 s, max_buf 150: their sum is
 *     0.9999999999999999 in doubles, full within the tolerance: idle 0,
 *     saturated 100, shortfall [100,150) 1 = 50.
 * (d) 1 CPU, jobs of 0.2, 0.4, 0.3 and 0.1 CPU, 100 s each, max_buf 100:
 *     their sum is 1.0000000000000002 in doubles, still within the
 *     tolerance, so all four start at 0: [0,100) full, idle 0, saturated
 *     100, shortfall 0 (without the tolerance the 0.1 job would wait and
 *     saturated would be 0).
 */
static bool
t_fractional(void)
{
	QueueJob	a[3] = {job(0, 0.5, 100, FAR, 1), job(0, 0.5, 200, FAR, 2),
	job(0, 0.5, 100, FAR, 3)};
	QueueJob	b[3] = {job(0, 0.5, 100, FAR, 1), job(0, 0.5, 100, FAR, 2),
	job(0, 0.5, 100, FAR, 3)};
	QueueJob	c[10];
	QueueResource ra[1] = {resource(1)};
	QueueResource rb[1] = {resource(2)};
	QueueJob	d[4] = {job(0, 0.2, 100, FAR, 1), job(0, 0.4, 100, FAR, 2),
	job(0, 0.3, 100, FAR, 3), job(0, 0.1, 100, FAR, 4)};
	QueueResource rc[1] = {resource(1)};
	QueueResource rd[1] = {resource(1)};
	bool		good = true;

	for (int i = 0; i < 10; i++)
		c[i] = job(0, 0.1, 100, FAR, i);
	run(a, 3, ra, 1, 400);
	run(b, 3, rb, 1, 200);
	run(c, 10, rc, 1, 150);
	good &= expect("a", &ra[0], 0, 200, 200, 200, 0);
	good &= expect("b", &rb[0], 0.5, 250, 0, 0, 0);
	run(d, 4, rd, 1, 100);
	good &= expect("c", &rc[0], 0, 50, 100, 100, 0);
	good &= expect("d", &rd[0], 0, 0, 100, 100, 0);
	return good;
}

/*
 * A GPU beside the CPU: resource 0 = 2 CPUs, resource 1 = 1 GPU, max_buf
 * 1000, jobs interleaved in the input:
 *   G0 gpu 500 s, C1 cpu 100 s, G2 gpu 200 s deadline 600.
 * cpu: [0,100) C1: idle 1, saturated 0, shortfall 100*1 + 900*2 = 1900.
 * gpu: [0,500) G0, [500,700) G2: idle 0, saturated 700, shortfall 300;
 *      G2 ends at 700 > 600: 1 miss.  EDF: [0,200) G2, [200,700) G0: busy
 *      700 (one instance, same total).
 * Each resource alone gives the same numbers.
 */
static bool
t_gpu_beside_cpu(void)
{
	QueueJob	j[3] = {job(1, 1, 500, FAR, 1), job(0, 1, 100, FAR, 2),
	job(1, 1, 200, 600, 3)};
	QueueJob	cpu_only[1] = {job(0, 1, 100, FAR, 2)};
	QueueJob	gpu_only[2] = {job(0, 1, 500, FAR, 1), job(0, 1, 200, 600, 3)};
	QueueResource r[2] = {resource(2), resource(1)};
	QueueResource rc[1] = {resource(2)};
	QueueResource rg[1] = {resource(1)};
	bool		good = true;

	run(j, 3, r, 2, 1000);
	run(cpu_only, 1, rc, 1, 1000);
	run(gpu_only, 2, rg, 1, 1000);
	good &= expect("cpu", &r[0], 1, 1900, 0, 0, 0);
	good &= expect("gpu", &r[1], 0, 300, 700, 700, 1);
	if (!same_outputs(&r[0], &rc[0]) || !same_outputs(&r[1], &rg[0]))
	{
		printf("# a resource depends on the other one's jobs\n");
		good = false;
	}
	return good;
}

/*
 * max_buf shorter than the queue: 1 CPU, three 100 s jobs, max_buf 250:
 * [0,300) busy, so nothing is short (shortfall 0) and saturated is 300,
 * past max_buf (it is not clipped).
 */
static bool
t_short_buffer(void)
{
	QueueJob	j[3] = {job(0, 1, 100, FAR, 1), job(0, 1, 100, FAR, 2),
	job(0, 1, 100, FAR, 3)};
	QueueResource r[1] = {resource(1)};

	run(j, 3, r, 1, 250);
	return expect("cpu", &r[0], 0, 0, 300, 300, 0);
}

/*
 * A job longer than max_buf.
 * (a) 2 CPUs, one 5000 s job, max_buf 1000: idle 1, one CPU idle for the
 *     whole buffer: shortfall 1000, saturated 0.
 * (b) 2 CPUs, two 5000 s jobs: full until 5000: shortfall 0, saturated
 *     5000.
 */
static bool
t_long_job(void)
{
	QueueJob	a[1] = {job(0, 1, 5000, FAR, 1)};
	QueueJob	b[2] = {job(0, 1, 5000, FAR, 1), job(0, 1, 5000, FAR, 2)};
	QueueResource ra[1] = {resource(2)};
	QueueResource rb[1] = {resource(2)};
	bool		good = true;

	run(a, 1, ra, 1, 1000);
	run(b, 2, rb, 1, 1000);
	good &= expect("a", &ra[0], 1, 1000, 0, 0, 0);
	good &= expect("b", &rb[0], 0, 0, 5000, 5000, 0);
	return good;
}

/*
 * Deadline misses: 1 CPU, FIFO J1(100, dl 150) J2(100, dl 150)
 * J3(100, dl 250) J4(50, dl 1000), max_buf 400:
 *   [0,100) J1, [100,200) J2, [200,300) J3, [300,350) J4.
 * J2 ends at 200 > 150 and J3 at 300 > 250: 2 misses.  idle 0, saturated
 * 350, shortfall 50.  EDF runs J2 J3 J1 J4: still 350 s of work on one CPU,
 * busy 350.
 */
static bool
t_deadline_misses(void)
{
	QueueJob	j[4] = {job(0, 1, 100, 150, 1), job(0, 1, 100, 150, 2),
	job(0, 1, 100, 250, 3), job(0, 1, 50, 1000, 4)};
	QueueResource r[1] = {resource(1)};

	run(j, 4, r, 1, 400);
	return expect("cpu", &r[0], 0, 50, 350, 350, 2);
}

/*
 * EDF makes busy later than saturated.  2 CPUs, max_buf 300:
 *   A 1 CPU 100 s, then B 2 CPUs 100 s with deadline 150.
 * FIFO: [0,100) A; B needs both CPUs and waits (strict FIFO), so one CPU
 * idles from the start: idle 1, saturated 0.  [100,200) B, ending at 200 >
 * 150: 1 miss.  Shortfall [0,100) 1 = 100, [200,300) 2 = 200; total 300.
 * EDF: the late B first: [0,100) B fills both CPUs, [100,200) A leaves one
 * free: busy 100.  This is the multi-threaded job case: in FIFO an instance
 * idles while the wide job waits for the narrow one to end.
 */
static bool
t_edf_later(void)
{
	QueueJob	j[2] = {job(0, 1, 100, FAR, 1), job(0, 2, 100, 150, 2)};
	QueueResource r[1] = {resource(2)};

	run(j, 2, r, 1, 300);
	return expect("cpu", &r[0], 1, 300, 0, 100, 1);
}

/*
 * EDF makes busy earlier than saturated.  2 CPUs, max_buf 1000:
 *   A 100 s, B 300 s, C 10 s with deadline 100 (all 1 CPU).
 * FIFO: [0,100) A, [0,300) B, [100,110) C: full until 110, saturated 110.
 * C ends at 110 > 100: 1 miss.  Shortfall [110,300) 1 = 190, [300,1000)
 * 2 = 1400; total 1590.  EDF runs C A B: [0,10) C, [0,100) A, [10,310) B:
 * at 100 only B is left, busy 100.
 */
static bool
t_edf_earlier(void)
{
	QueueJob	j[3] = {job(0, 1, 100, FAR, 1), job(0, 1, 300, FAR, 2),
	job(0, 1, 10, 100, 3)};
	QueueResource r[1] = {resource(2)};

	run(j, 3, r, 1, 1000);
	return expect("cpu", &r[0], 0, 1590, 110, 100, 1);
}

/*
 * The misses run by increasing deadline, not in FIFO order.  2 CPUs, max_buf
 * 2000:
 *   X 1 CPU 1000 s, P 1 CPU 100 s deadline 60, Q 2 CPUs 100 s deadline 50.
 * FIFO: [0,1000) X, [0,100) P; Q waits for both CPUs: [1000,1100) Q.
 * Saturated 100; P (100 > 60) and Q (1100 > 50) miss: 2.  Shortfall
 * [100,1000) 1 = 900, [1100,2000) 2 = 1800; total 2700.
 * EDF: Q (dl 50), P (dl 60), X: [0,100) Q full, [100,200) P, [100,1100) X
 * full, then P ends: busy 200.  (Misses in FIFO order, P Q X, would give
 * [0,100) P with Q waiting: busy 0.)
 */
static bool
t_edf_order(void)
{
	QueueJob	j[3] = {job(0, 1, 1000, FAR, 1), job(0, 1, 100, 60, 2),
	job(0, 2, 100, 50, 3)};
	QueueResource r[1] = {resource(2)};

	run(j, 3, r, 1, 2000);
	return expect("cpu", &r[0], 0, 2700, 100, 200, 2);
}

/*
 * A job wider than the host: it runs alone, holding all of it.
 * (a) 2 CPUs, A 1 CPU 100 s, B 4 CPUs 100 s, C 1 CPU 50 s, max_buf 300:
 *     [0,100) A; B waits for an empty host and C waits behind B: idle 1,
 *     saturated 0.  [100,200) B holds both, [200,250) C.  Shortfall
 *     [0,100) 1 = 100, [200,250) 1 = 50, [250,300) 2 = 100; total 250.
 * (b) 2 CPUs, only B: [0,100) B full: idle 0, saturated 100, shortfall
 *     [100,300) 2 = 400.
 */
static bool
t_too_wide(void)
{
	QueueJob	a[3] = {job(0, 1, 100, FAR, 1), job(0, 4, 100, FAR, 2),
	job(0, 1, 50, FAR, 3)};
	QueueJob	b[1] = {job(0, 4, 100, FAR, 1)};
	QueueResource ra[1] = {resource(2)};
	QueueResource rb[1] = {resource(2)};
	bool		good = true;

	run(a, 3, ra, 1, 300);
	run(b, 1, rb, 1, 300);
	good &= expect("a", &ra[0], 1, 250, 0, 0, 0);
	good &= expect("b", &rb[0], 0, 400, 100, 100, 0);
	return good;
}

/*
 * Zero instances (a GPU type the host no longer has).  Resources cpu 2,
 * nvidia 0, amd 0; max_buf 500; nvidia jobs: 100 s left (deadline 1000),
 * none left (deadline 10), none left (deadline -5).
 * nvidia: nothing idle, short or busy; the job with time left can never run
 * and misses, the one already late misses: 2.  amd: all 0.  cpu, no jobs:
 * idle 2, shortfall 1000.
 */
static bool
t_zero_instances(void)
{
	QueueJob	j[3] = {job(1, 1, 100, 1000, 1), job(1, 1, 0, 10, 2),
	job(1, 1, 0, -5, 3)};
	QueueResource r[3] = {resource(2), resource(0), resource(0)};
	bool		good = true;

	run(j, 3, r, 3, 500);
	good &= expect("cpu", &r[0], 2, 1000, 0, 0, 0);
	good &= expect("nvidia", &r[1], 0, 0, 0, 0, 2);
	good &= expect("amd", &r[2], 0, 0, 0, 0, 0);
	return good;
}

/*
 * Jobs with no time left finish at once and hold nothing.
 * (a) 2 CPUs, Z1 (dl 0), Z2 (dl -1, already late), Z3 (dl 5), all 1 CPU
 *     and 0 s, then A 1 CPU 100 s, max_buf 200: [0,100) A only: idle 1,
 *     saturated 0, shortfall 100 + 200 = 300.  Z2 ends at 0 > -1: 1 miss
 *     (Z1 ends at 0, not after its deadline 0).  Busy 0.
 * (b) 2 CPUs, Z 0.5 CPU 0 s, then B 2 CPUs 100 s, max_buf 100: Z is gone at
 *     once, [0,100) B full: idle 0, saturated 100 (not 0: B waits behind
 *     Z for no time), shortfall 0.
 */
static bool
t_zero_remaining(void)
{
	QueueJob	a[4] = {job(0, 1, 0, 0, 1), job(0, 1, 0, -1, 2),
	job(0, 1, 0, 5, 3), job(0, 1, 100, 1000, 4)};
	QueueJob	b[2] = {job(0, 0.5, 0, FAR, 1), job(0, 2, 100, FAR, 2)};
	QueueResource ra[1] = {resource(2)};
	QueueResource rb[1] = {resource(2)};
	bool		good = true;

	run(a, 4, ra, 1, 200);
	run(b, 2, rb, 1, 100);
	good &= expect("a", &ra[0], 1, 300, 0, 0, 1);
	good &= expect("b", &rb[0], 0, 0, 100, 100, 0);
	return good;
}

/*
 * Equal order keys: input position decides, so the result is the same on
 * every call.  1 CPU, X (100 s, dl 150) and Y (100 s, dl 1000), both order
 * 5.  Input X Y: [0,100) X, [100,200) Y: no miss.  Input Y X: [0,100) Y,
 * [100,200) X: X misses (200 > 150).  Calling again on the sorted output
 * changes nothing.
 */
static bool
t_equal_order(void)
{
	QueueJob	xy[2] = {job(0, 1, 100, 150, 5), job(0, 1, 100, 1000, 5)};
	QueueJob	yx[2] = {job(0, 1, 100, 1000, 5), job(0, 1, 100, 150, 5)};
	QueueResource r1[1] = {resource(1)};
	QueueResource r2[1] = {resource(1)};
	QueueResource again[1] = {resource(1)};
	bool		good = true;

	run(xy, 2, r1, 1, 100);
	run(yx, 2, r2, 1, 100);
	good &= expect("X Y", &r1[0], 0, 0, 200, 200, 0);
	good &= expect("Y X", &r2[0], 0, 0, 200, 200, 1);
	good &= xy[0].deadline_secs == 150 && yx[0].deadline_secs == 1000;
	run(yx, 2, again, 1, 100);
	good &= same_outputs(&r2[0], &again[0]);
	return good;
}

/*
 * Jobs of resources out of range are ignored: the same as without them.
 */
static bool
t_bad_resource_index(void)
{
	QueueJob	with[4] = {job(-1, 1, 500, 1, 0), job(0, 1, 100, FAR, 1),
	job(7, 1, 500, 1, 2), job(1, 1, 50, FAR, 3)};
	QueueJob	without[2] = {job(0, 1, 100, FAR, 1), job(1, 1, 50, FAR, 3)};
	QueueResource a[2] = {resource(1), resource(1)};
	QueueResource b[2] = {resource(1), resource(1)};

	run(with, 4, a, 2, 300);
	run(without, 2, b, 2, 300);
	return same_outputs(&a[0], &b[0]) && same_outputs(&a[1], &b[1]) &&
		expect("cpu", &a[0], 0, 200, 100, 100, 0);
}

/*
 * Absurd input does not loop or produce NaN.
 * (a) 1 CPU, two jobs of 1e308 s, max_buf 1e308: the second ends past the
 *     largest double (+inf): shortfall 0, saturated +inf, no NaN.
 * (b) an idle CPU with an infinite buffer: shortfall +inf, no NaN.
 * (c) NaN everywhere the glue should have refused it: usage, remaining,
 *     deadline, order, ninstances, max_buf: it ends, and outputs no NaN.
 */
static bool
t_absurd_values(void)
{
	double		inf = 1e308 * 10;
	double		nan = inf - inf;
	QueueJob	a[2] = {job(0, 1, 1e308, FAR, 1), job(0, 1, 1e308, FAR, 2)};
	QueueJob	c[5] = {job(0, nan, 100, FAR, 1), job(0, 1, nan, FAR, 2),
		job(0, 1, 100, nan, nan), job(0, -3, -100, -FAR, -1),
	job(1, 1, 100, FAR, 1)};
	QueueResource ra[1] = {resource(1)};
	QueueResource rb[1] = {resource(1)};
	QueueResource rc[2] = {resource(1), resource(nan)};
	QueueResource rd[1] = {resource(2)};
	bool		good = true;

	run(a, 2, ra, 1, 1e308);
	good &= no_nan(&ra[0]) && ra[0].shortfall_secs == 0 &&
		ra[0].saturated_secs == inf;
	run(NULL, 0, rb, 1, inf);
	good &= no_nan(&rb[0]) && rb[0].shortfall_secs == inf;
	run(c, 5, rc, 2, 1000);
	good &= no_nan(&rc[0]) && no_nan(&rc[1]);
	run(c, 5, rd, 1, nan);
	good &= no_nan(&rd[0]);
	return good;
}

/*
 * 1000 jobs of 1 CPU and 100 s on 4 CPUs, given in reverse order: 250
 * waves of 4, full until 25000: idle 0, saturated 25000, shortfall to
 * max_buf 30000 is 5000 * 4 = 20000.  Must take no measurable time.
 */
static bool
t_thousand_jobs(void)
{
	QueueResource r[1] = {resource(4)};
	clock_t		t0 = clock();
	double		secs;

	for (int i = 0; i < 1000; i++)
		jobs_buf[i] = job(0, 1, 100, FAR, 1000 - i);
	run(jobs_buf, 1000, r, 1, 30000);
	secs = (double) (clock() - t0) / CLOCKS_PER_SEC;
	printf("# 1000 jobs: %.6f s\n", secs);
	return expect("cpu", &r[0], 0, 20000, 25000, 25000, 0) && secs < 1.0;
}

/* Test-local splitmix64, for the generated cases. */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static int
random_int(uint64_t *state, int n)
{
	return (int) (next_random(state) % (uint64_t) n);
}

/*
 * 200000 jobs over a CPU (16) and a GPU (2), fractional and wide usage,
 * half of them late: the O(n log n) path must stay fast (well under a
 * second) and sane.
 */
static bool
t_many_jobs(void)
{
	static const double usages[] = {0.25, 0.5, 1, 1, 2, 4, 32};
	QueueResource r[2] = {resource(16), resource(2)};
	uint64_t	state = 42;
	clock_t		t0 = clock();
	double		secs;

	for (int i = 0; i < MAX_JOBS; i++)
		jobs_buf[i] = job(random_int(&state, 2), usages[random_int(&state, 7)],
						  random_int(&state, 3600),
						  random_int(&state, 2000000) - 1000000,
						  random_int(&state, 100000));
	t0 = clock();
	run(jobs_buf, MAX_JOBS, r, 2, 86400);
	secs = (double) (clock() - t0) / CLOCKS_PER_SEC;
	printf("# %d jobs: %.6f s, cpu saturated %.0f busy %.0f misses %d\n",
		   MAX_JOBS, secs, r[0].saturated_secs, r[0].busy_secs,
		   r[0].deadline_misses);
	return no_nan(&r[0]) && no_nan(&r[1]) && secs < 10.0 &&
		r[0].deadline_misses > 0 && r[1].deadline_misses > 0;
}

/* ------------------------------------------------------- reference model */

/*
 * A naive model written separately: a quadratic FIFO schedule giving each
 * job's start and end, then the outputs read off the schedule over every
 * stretch between two events.  Generated hosts must agree with it.
 */
#define REF_MAX 64
#define REF_EPS 1e-9

static double
ref_usage(const QueueJob *j, double ninst)
{
	return j->usage > ninst ? ninst : j->usage;
}

static void
ref_schedule(const QueueJob *jobs, const int *seq, int n, double ninst,
			 double *start, double *end)
{
	bool		running[REF_MAX] = {false};
	double		t = 0,
				used = 0;
	int			next = 0;

	for (;;)
	{
		int			nrun = 0;
		double		tmin = 0;

		while (next < n &&
			   used + ref_usage(&jobs[seq[next]], ninst) <= ninst + REF_EPS)
		{
			int			j = seq[next++];

			start[j] = t;
			end[j] = t + jobs[j].remaining_secs;
			running[j] = true;
			used += ref_usage(&jobs[j], ninst);
		}
		for (int j = 0; j < n; j++)
			if (running[j] && (nrun++ == 0 || end[j] < tmin))
				tmin = end[j];
		if (nrun == 0)
			return;
		t = tmin;
		for (int j = 0; j < n; j++)
			if (running[j] && end[j] <= t)
			{
				running[j] = false;
				used -= ref_usage(&jobs[j], ninst);
			}
		if (used < REF_EPS)
			used = 0;
	}
}

/* idle, shortfall, saturated of a schedule, stretch by stretch. */
static void
ref_measure(const QueueJob *jobs, int n, double ninst, double max_buf,
			const double *start, const double *end,
			double *idle, double *shortfall, double *saturated)
{
	double		points[2 * REF_MAX + 1];
	int			np = 0;
	bool		idle_known = false,
				saturated_known = false;

	points[np++] = 0;
	for (int j = 0; j < n; j++)
	{
		points[np++] = start[j];
		points[np++] = end[j];
	}
	/* insertion sort */
	for (int i = 1; i < np; i++)
		for (int k = i; k > 0 && points[k] < points[k - 1]; k--)
		{
			double		tmp = points[k];

			points[k] = points[k - 1];
			points[k - 1] = tmp;
		}
	*shortfall = 0;
	*idle = ninst;
	*saturated = points[np - 1];
	for (int i = 0; i < np; i++)
	{
		double		a = points[i];
		double		b = i + 1 < np ? points[i + 1] : 1e300;
		double		used = 0,
					free;

		if (!(b > a))
			continue;
		for (int j = 0; j < n; j++)
			if (start[j] <= a && end[j] >= b)
				used += ref_usage(&jobs[j], ninst);
		free = ninst - used > REF_EPS ? ninst - used : 0;
		if (!idle_known)
		{
			*idle = free;
			idle_known = true;
		}
		if (!saturated_known && free > 0)
		{
			*saturated = a;
			saturated_known = true;
		}
		if ((b < max_buf ? b : max_buf) > a)
			*shortfall += free * ((b < max_buf ? b : max_buf) - a);
	}
}

static void
ref_resource(const QueueJob *all, int nall, int r, double ninst, double max_buf,
			 QueueResource *out)
{
	QueueJob	jobs[REF_MAX];
	int			seq[REF_MAX];
	double		start[REF_MAX],
				end[REF_MAX];
	int			n = 0,
				nmiss = 0;
	double		ignore1,
				ignore2;

	/* this resource's jobs, stably sorted by order (insertion sort) */
	for (int i = 0; i < nall; i++)
		if (all[i].resource == r)
		{
			int			k = n++;

			while (k > 0 && jobs[k - 1].order > all[i].order)
			{
				jobs[k] = jobs[k - 1];
				k--;
			}
			jobs[k] = all[i];
		}
	if (ninst <= 0)
	{
		out->idle_instances = out->shortfall_secs = 0;
		out->saturated_secs = out->busy_secs = 0;
		out->deadline_misses = 0;
		for (int j = 0; j < n; j++)
			if (jobs[j].remaining_secs > 0 || jobs[j].deadline_secs < 0)
				out->deadline_misses++;
		return;
	}
	for (int j = 0; j < n; j++)
		seq[j] = j;
	ref_schedule(jobs, seq, n, ninst, start, end);
	ref_measure(jobs, n, ninst, max_buf, start, end, &out->idle_instances,
				&out->shortfall_secs, &out->saturated_secs);

	/* misses by deadline (stable), then the others */
	for (int j = 0; j < n; j++)
		if (end[j] > jobs[j].deadline_secs)
		{
			int			k = nmiss++;

			while (k > 0 && jobs[seq[k - 1]].deadline_secs > jobs[j].deadline_secs)
			{
				seq[k] = seq[k - 1];
				k--;
			}
			seq[k] = j;
		}
	out->deadline_misses = nmiss;
	{
		int			k = nmiss;

		for (int j = 0; j < n; j++)
			if (!(end[j] > jobs[j].deadline_secs))
				seq[k++] = j;
	}
	ref_schedule(jobs, seq, n, ninst, start, end);
	ref_measure(jobs, n, ninst, max_buf, start, end, &ignore1, &ignore2,
				&out->busy_secs);
}

/*
 * 2000 generated hosts (up to 3 resources, 0 to 60 jobs, fractional, wide,
 * zero-length and late jobs, many equal order keys) against the model.
 */
static bool
t_against_model(void)
{
	static const double ninsts[] = {0, 0.5, 1, 2, 3, 4, 7.5};
	static const double usages[] = {0.1, 0.25, 0.5, 1, 1, 1, 2, 3, 5};
	uint64_t	state = 2024;
	int			bad = 0;

	for (int c = 0; c < 2000 && bad < 3; c++)
	{
		QueueJob	in[REF_MAX],
					work[REF_MAX];
		QueueResource got[3],
					want[3];
		int			nres = 1 + random_int(&state, 3);
		int			n = random_int(&state, 61);
		double		max_buf = random_int(&state, 2000);

		for (int r = 0; r < nres; r++)
			got[r] = want[r] = resource(ninsts[random_int(&state, 7)]);
		for (int i = 0; i < n; i++)
			in[i] = job(random_int(&state, nres), usages[random_int(&state, 9)],
						random_int(&state, 4) == 0 ? 0 : random_int(&state, 500),
						random_int(&state, 1600) - 100,
						random_int(&state, 20));
		memcpy(work, in, sizeof(QueueJob) * n);
		run(work, n, got, nres, max_buf);
		for (int r = 0; r < nres; r++)
		{
			char		what[64];

			ref_resource(in, n, r, want[r].ninstances, max_buf, &want[r]);
			snprintf(what, sizeof(what), "case %d resource %d", c, r);
			if (!expect(what, &got[r], want[r].idle_instances,
						want[r].shortfall_secs, want[r].saturated_secs,
						want[r].busy_secs, want[r].deadline_misses))
				bad++;
		}
	}
	return bad == 0;
}

/* ------------------------------------------------------------------ main */

static const UnitTest tests[] =
{
	{"empty host: all idle, whole buffer short, saturated 0", t_empty_host},
	{"one CPU job on a 1-CPU host", t_one_job},
	{"4 jobs of 1 CPU on 2 CPUs, scrambled input, worked timeline", t_four_jobs_two_cpus},
	{"fractional usage (0.5, 0.1 CPU jobs; sums within tolerance)", t_fractional},
	{"a GPU beside the CPU: resources are independent", t_gpu_beside_cpu},
	{"max_buf shorter than the queue: shortfall 0", t_short_buffer},
	{"a job longer than max_buf", t_long_job},
	{"deadline misses counted in the FIFO simulation", t_deadline_misses},
	{"EDF pass: wide late job first makes busy later than saturated", t_edf_later},
	{"EDF pass: short late job first makes busy earlier than saturated", t_edf_earlier},
	{"EDF pass orders the misses by deadline", t_edf_order},
	{"a job wider than the host runs alone", t_too_wide},
	{"zero instances: nothing idle, jobs with work left miss", t_zero_instances},
	{"jobs with no time left hold no instance", t_zero_remaining},
	{"equal order keys: input position decides, deterministically", t_equal_order},
	{"jobs of unknown resources are ignored", t_bad_resource_index},
	{"huge, infinite and NaN input: ends, no NaN", t_absurd_values},
	{"1000 jobs: worked totals, instant", t_thousand_jobs},
	{"200000 jobs: fast and sane", t_many_jobs},
	{"2000 generated hosts agree with a naive model", t_against_model},
};

int
main(void)
{
	return run_tests(tests, (int) (sizeof(tests) / sizeof(tests[0])));
}
