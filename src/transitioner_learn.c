/*
 * transitioner_learn.c: the transitioner's step that learns from validated
 * successes (seed 004), one voice per host, from 0.7.0 per owner (voices.h):
 * a job's voice is its host's owner's, or the host's own, and the window's
 * statistics and each FLOPS figure are screened first.
 *
 * A claim becomes a fact through validation: only jobs the project's
 * validator accepted (validate_job) are read, each once (job.sampled).  For
 * each job's app:
 *
 *   FLOPS per app unit  elapsed * raw_flops_per_sec / app_units, the app
 *                       units counted up to the app's bound (below), goes
 *                       into the app's CPU or GPU array with its host; every
 *                       allot.flops_sample_size values give a figure, the
 *                       allot.flops_percentile of the values with each
 *                       host one voice (allot_percentile_voices): a host
 *                       that sent twenty of the values weighs what a host
 *                       that sent one does, and a fraction p of the voices
 *                       can lie below the figure without setting it.  The
 *                       app's estimate is the lesser of the CPU and GPU
 *                       figures (a GPU-only app's scaled by the GPU
 *                       efficiency of apps that have both), averaged into
 *                       est_flops_per_au with weight allot.flops_avg_weight
 *   app units           (host, actual, predicted) joins the app's window
 *                       of its last allot.app_unit_window validated
 *                       successes, and the app's statistics are computed
 *                       from the window again (app_unit_stats.c), with the
 *                       ratio up to which a report counts in full.  This
 *                       comes first: a claim of 1e6 app units would
 *                       otherwise make a FLOPS value a millionth of the
 *                       truth, and enough such hosts would set the figure
 *
 * Before 0.6.0 the app has no host arrays and no window: each value is a
 * voice of its own, and the statistics are left as they are.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "app_unit_stats.h"
#include "entry.h"
#include "percentile.h"
#include "transitioner.h"
#include "voices.h"

static SPIPlanPtr samples_plan[2] = {NULL, NULL};	/* before 0.7.0; by owner */
static SPIPlanPtr efficiency_plan = NULL;
static SPIPlanPtr sampled_plan = NULL;
/* Per schema: before 0.6.0; 0.6.0's windows; 0.7.0's, with FLOPS claims. */
static SPIPlanPtr apps_plan[3] = {NULL, NULL, NULL};
static SPIPlanPtr app_update_plan[3] = {NULL, NULL, NULL};

/* A validated success, as read. */
typedef struct LearnJob
{
	int64		id;
	int64		app_id;
	int64		voice;			/* its host's voice (voices.h) */
	bool		gpu;
	bool		reference;
	double		flops;			/* elapsed x raw FLOPS; NaN: says nothing of FLOPS */
	double		actual;
	double		predicted;
} LearnJob;

/* Values with the host of each. */
typedef struct Voices
{
	double	   *v;
	int64	   *host;
	int			n;
} Voices;

static void
prepare_plans(int version, bool owners)
{
	bool		windows = version > 0;
	Oid			limit[1] = {INT4OID};
	Oid			ids[1] = {INT8ARRAYOID};

	/*
	 * Each job with its host's voice: from 0.7.0 its owner's, when it has
	 * one (voices.h).  The host row is read, not locked.
	 */
	if (samples_plan[owners] == NULL)
		samples_plan[owners] = allot_prepare(owners ?
											 "SELECT j.id, v.app_id,"
											 "       CASE WHEN h.owner_id IS NULL THEN j.host_id ELSE -h.owner_id END,"
											 "       v.resource <> 'cpu', j.reference,"
											 "       j.elapsed_secs * j.raw_flops_per_sec,"
											 "       j.app_units, j.predicted_app_units"
											 "  FROM allot.job j JOIN allot.app_version v ON v.id = j.app_version_id"
											 "  LEFT JOIN allot.host h ON h.id = j.host_id"
											 " WHERE j.state = 'done' AND j.validated AND NOT j.sampled"
											 " ORDER BY j.id LIMIT $1 FOR UPDATE OF j SKIP LOCKED" :
											 "SELECT j.id, v.app_id, j.host_id, v.resource <> 'cpu', j.reference,"
											 "       j.elapsed_secs * j.raw_flops_per_sec,"
											 "       j.app_units, j.predicted_app_units"
											 "  FROM allot.job j JOIN allot.app_version v ON v.id = j.app_version_id"
											 " WHERE j.state = 'done' AND j.validated AND NOT j.sampled"
											 " ORDER BY j.id LIMIT $1 FOR UPDATE OF j SKIP LOCKED",
											 1, limit);
	if (efficiency_plan == NULL)
	{
		/* Seed 004 note 2: how efficient GPUs are, seen on apps with both. */
		efficiency_plan = allot_prepare(
										"SELECT avg(cpu_flops_per_au / gpu_flops_per_au) FROM allot.app"
										" WHERE cpu_flops_per_au > 0 AND gpu_flops_per_au > 0",
										0, NULL);
		sampled_plan = allot_prepare(
									 "UPDATE allot.job SET sampled = true WHERE id = ANY ($1)",
									 1, ids);
	}
	if (apps_plan[version] != NULL)
		return;

	/*
	 * Locked in id order; the locking read returns each app's latest row.
	 * An app another transaction holds (an operator's edit) is skipped, and
	 * its jobs stay unread for the next call: waiting for it, with
	 * job_usage rows already held, could deadlock.
	 */
	apps_plan[version] = allot_prepare(windows ? psprintf(
									   "SELECT a.id, a.reference_jobs, a.cpu_samples, a.gpu_samples,"
									   "       a.cpu_flops_per_au, a.gpu_flops_per_au, a.est_flops_per_au,"
									   "       EXISTS (SELECT FROM allot.app_version v"
									   "                WHERE v.app_id = a.id AND v.resource = 'cpu'),"
									   "       a.cpu_sample_hosts, a.gpu_sample_hosts,"
									   "       a.au_hosts, a.au_actual, a.au_predicted, %s"
									   "  FROM allot.app a WHERE a.id = ANY ($1) ORDER BY a.id FOR UPDATE SKIP LOCKED",
									   version == 2 ? "a.au_flops" : "'{}'::float8[]") :
									   "SELECT a.id, a.reference_jobs, a.cpu_samples, a.gpu_samples,"
									   "       a.cpu_flops_per_au, a.gpu_flops_per_au, a.est_flops_per_au,"
									   "       EXISTS (SELECT FROM allot.app_version v"
									   "                WHERE v.app_id = a.id AND v.resource = 'cpu')"
									   "  FROM allot.app a WHERE a.id = ANY ($1) ORDER BY a.id FOR UPDATE SKIP LOCKED",
									   1, ids);
	if (windows)
	{
		Oid			types[24] = {INT8OID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8OID, FLOAT8OID,
			FLOAT8OID, BOOLOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, FLOAT8ARRAYOID,
			FLOAT8ARRAYOID, INT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID,
		FLOAT8OID, FLOAT8OID, FLOAT8ARRAYOID, INT8OID, FLOAT8OID, FLOAT8OID};

		app_update_plan[version] = allot_prepare(psprintf(
										   "UPDATE allot.app SET cpu_samples = $2, gpu_samples = $3,"
										   "       cpu_flops_per_au = $4, gpu_flops_per_au = $5,"
										   "       est_flops_per_au = CASE WHEN $7 THEN $6 ELSE est_flops_per_au END,"
										   "       cpu_sample_hosts = $8, gpu_sample_hosts = $9,"
										   "       au_hosts = $10, au_actual = $11, au_predicted = $12,"
										   "       n_reports = $13, actual_au_mean = $14, actual_au_m2 = $15,"
										   "       predicted_au_mean = $16, predicted_au_m2 = $17,"
										   "       au_ratio_mean = $18, au_ratio_m2 = $19, au_ratio_bound = $20%s"
										   " WHERE id = $1",
										   version == 2 ? ", au_flops = $21, run_flops_n = $22, run_flops_bound = $23,"
										   "       au_ratio_tail = nullif($24, 0)" : ""),
										   24, types);
	}
	else
	{
		Oid			types[7] = {INT8OID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8OID, FLOAT8OID,
		FLOAT8OID, BOOLOID};

		app_update_plan[0] = allot_prepare(
										   "UPDATE allot.app SET cpu_samples = $2, gpu_samples = $3,"
										   "       cpu_flops_per_au = $4, gpu_flops_per_au = $5,"
										   "       est_flops_per_au = CASE WHEN $7 THEN $6 ELSE est_flops_per_au END"
										   " WHERE id = $1",
										   7, types);
	}
}

/* ---------------------------------------------------------------------------
 * Arrays in and out.
 * ------------------------------------------------------------------------- */

static void
float8_values(Datum d, int *n, double **out, int extra)
{
	Datum	   *elems;
	bool	   *nulls;

	deconstruct_array(DatumGetArrayTypeP(d), FLOAT8OID, 8, FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &elems, &nulls, n);
	*out = palloc(sizeof(double) * (*n + extra + 1));
	for (int i = 0; i < *n; i++)
		(*out)[i] = nulls[i] ? 0 : DatumGetFloat8(elems[i]);
}

static void
int8_values(Datum d, int *n, int64 **out, int extra)
{
	Datum	   *elems;
	bool	   *nulls;

	deconstruct_array(DatumGetArrayTypeP(d), INT8OID, 8, FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &elems, &nulls, n);
	*out = palloc(sizeof(int64) * (*n + extra + 1));
	for (int i = 0; i < *n; i++)
		(*out)[i] = nulls[i] ? 0 : DatumGetInt64(elems[i]);
}

static Datum
float8_datum(const double *values, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));

	for (int i = 0; i < n; i++)
		d[i] = Float8GetDatum(values[i]);
	return PointerGetDatum(construct_array(d, n, FLOAT8OID, 8, FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
}

static Datum
int8_datum(const int64 *values, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(values[i]);
	return PointerGetDatum(construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
}

/*
 * An app's array of values with their hosts.  Before 0.6.0 (hosts NULL), or
 * for values kept from then (fewer hosts than values), a value without a
 * host is a voice of its own: it gets a host id below any real one.
 */
/*
 * An app's statistics and bound as eight datums, in the order of the app
 * row's columns and of app_unit_statistics' result: n, the means and sums of
 * squares of actual, predicted and their ratio, then the bound.
 */
static void
stats_datums(const AppStats *stats, double bound, Datum *out)
{
	out[0] = Int64GetDatum(stats->n);
	out[1] = Float8GetDatum(stats->actual_au_mean);
	out[2] = Float8GetDatum(stats->actual_au_m2);
	out[3] = Float8GetDatum(stats->predicted_au_mean);
	out[4] = Float8GetDatum(stats->predicted_au_m2);
	out[5] = Float8GetDatum(stats->au_ratio_mean);
	out[6] = Float8GetDatum(stats->au_ratio_m2);
	out[7] = Float8GetDatum(bound);
}

static Voices
voices_from(Datum values, Datum hosts, bool has_hosts, int extra)
{
	Voices		vs;
	int			nh = 0;
	int64	   *h = NULL;

	float8_values(values, &vs.n, &vs.v, extra);
	if (has_hosts)
		int8_values(hosts, &nh, &h, 0);
	vs.host = palloc(sizeof(int64) * (vs.n + extra + 1));
	for (int i = 0; i < vs.n; i++)
		vs.host[i] = i < nh ? h[i] : PG_INT64_MIN + i;
	return vs;
}

/*
 * Add new values to a kind's array; every full allot.flops_sample_size of
 * them, oldest first, gives a figure (into figures): its
 * allot.flops_percentile by voices, from 0.7.0 after screening
 * (voices.h: a voice whose values lie a hundred times or more from the
 * voices' median does not set it).  The rest waits in the array.  Every
 * value counts in exactly one figure.  Returns how many figures were made.
 */
static int
absorb(Voices *array, const double *add, const int64 *add_hosts, int nadd, double *figures,
	   bool screened)
{
	int			size = allot_flops_sample_size;
	int			made = 0,
				start = 0;
	double	   *v = palloc(sizeof(double) * (size + 1));
	double	   *w = palloc(sizeof(double) * (size + 1));
	int64	   *work = palloc(sizeof(int64) * (size + 1));
	double	   *screen_work = palloc(sizeof(double) * (5 * size + 1));
	int64	   *screen_iwork = palloc(sizeof(int64) * (3 * size + 1));
	bool	   *screen_flags = palloc(sizeof(bool) * (2 * size + 1));

	for (int i = 0; i < nadd; i++)
	{
		array->v[array->n] = add[i];
		array->host[array->n++] = add_hosts[i];
	}
	while (array->n - start >= size)
	{
		memcpy(v, array->v + start, sizeof(double) * size);
		if (screened)
			figures[made++] = allot_percentile_screened(v, array->host + start, size,
														allot_flops_percentile, screen_work,
														screen_iwork, screen_flags);
		else
		{
			allot_voice_weights(array->host + start, size, w, work);
			figures[made++] = allot_percentile_voices(v, w, size, allot_flops_percentile);
		}
		start += size;
	}
	if (start > 0)
	{
		memmove(array->v, array->v + start, sizeof(double) * (array->n - start));
		memmove(array->host, array->host + start, sizeof(int64) * (array->n - start));
		array->n -= start;
	}
	pfree(v);
	pfree(w);
	pfree(work);
	return made;
}

/*
 * The app's candidate estimate from its figures: note 1, GPUs are less
 * efficient, so the lesser of the two; note 2, a GPU-only app borrows the
 * efficiency of apps that have both.
 */
static double
candidate_figure(bool has_cpu, double cpu, bool has_gpu, double gpu,
				 bool has_cpu_versions, double efficiency)
{
	if (has_cpu && has_gpu)
		return Min(cpu, gpu);
	if (has_cpu)
		return cpu;
	if (!has_cpu_versions)
		return gpu * efficiency;
	return gpu;
}

static int
learn_job_cmp(const void *a, const void *b)
{
	const LearnJob *x = a;
	const LearnJob *y = b;

	if (x->app_id != y->app_id)
		return (x->app_id > y->app_id) - (x->app_id < y->app_id);
	return (x->id > y->id) - (x->id < y->id);
}

/* The first job of app_id among jobs[0 .. n), sorted by app; n if none. */
static int
first_job_of(const LearnJob *jobs, int n, int64 app_id)
{
	int			lo = 0,
				hi = n;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (jobs[mid].app_id < app_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Does screening leave this job's FLOPS value out: its voice was left out
 * of the app's statistics, or its FLOPS per app unit as claimed lies
 * beyond the window's band?
 */
static bool
screen_leaves_out(const AppUnitScreen *screen, const LearnJob *j)
{
	double		per_au = j->flops / j->actual;

	for (int k = 0; k < screen->n_voices_out; k++)
		if (screen->voices_out[k] == j->voice)
			return true;
	return screen->flops.centre > 0 && (per_au < screen->flops.low || per_au > screen->flops.high);
}

/*
 * The spread of the window's run times (issue 32), for bounds when app
 * units say nothing of it (seed 004 note 3: "an app's jobs have variance
 * that is not reflected in app units"): each report's FLOPs (elapsed x raw
 * FLOPS, as its FLOPS per app unit times its app units) per predicted app
 * unit goes through the app-unit statistics' own machinery as a ratio, so
 * that it is screened, each voice counts once and its tail is found from
 * below (app_unit_stats.c); the figure is mean + ALLOT_BOUND_X standard
 * deviations, or the ratio the farm's tail reaches where that is more
 * (AppStats.au_ratio_tail).  Reports that said nothing of FLOPS are left
 * out.  Sets the app row's run_flops_n and run_flops_bound (NULL: no report
 * said).
 */
static void
run_time_spread(const int64 *voices, const double *actual, const double *predicted,
				const double *flops_per_au, int n, Datum *run_n, Datum *run_bound,
				char *run_bound_null)
{
	AppUnitReport *reports = palloc(sizeof(AppUnitReport) * (n + 1));
	double	   *work = palloc(sizeof(double) * ALLOT_APP_UNIT_WORK(n));
	AppUnitScreen screen = {{0, 0, 0}, {0, 0, 0}, NULL, 0};
	AppStats	stats;
	double		cap;
	int			m = 0;

	screen.voices_out = palloc(sizeof(int64) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		if (!(flops_per_au[i] > 0) || !(actual[i] > 0) || !(predicted[i] > 0))
			continue;
		reports[m].voice = voices[i];
		reports[m].actual = flops_per_au[i] * actual[i];
		reports[m].predicted = predicted[i];
		reports[m].flops_per_au = 0;	/* screened by the figure itself */
		m++;
	}
	allot_app_unit_stats(reports, m, work, &stats, &cap, &screen);
	*run_n = Int64GetDatum(stats.n);
	*run_bound = Float8GetDatum(fmax(stats.au_ratio_mean +
									 ALLOT_BOUND_X * allot_stdev(stats.n, stats.au_ratio_m2),
									 stats.au_ratio_tail));
	*run_bound_null = stats.n > 0 ? ' ' : 'n';
}

/* What one app learns from its jobs jobs[0 .. n); updates its row. */
static void
learn_app(HeapTuple t, TupleDesc d, int version, const LearnJob *jobs, int n,
		  double efficiency, int64 *samples_taken, int64 *figures_made)
{
	bool		isnull;
	int64		id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
	bool		reference_only = DatumGetBool(SPI_getbinval(t, d, 2, &isnull));
	bool		has_cpu_versions = DatumGetBool(SPI_getbinval(t, d, 8, &isnull));
	Voices		cpu = voices_from(SPI_getbinval(t, d, 3, &isnull),
								  version > 0 ? SPI_getbinval(t, d, 9, &isnull) : (Datum) 0,
								  version > 0, n);
	Voices		gpu = voices_from(SPI_getbinval(t, d, 4, &isnull),
								  version > 0 ? SPI_getbinval(t, d, 10, &isnull) : (Datum) 0,
								  version > 0, n);
	double	   *add_cpu = palloc(sizeof(double) * (n + 1));
	double	   *add_gpu = palloc(sizeof(double) * (n + 1));
	int64	   *add_cpu_hosts = palloc(sizeof(int64) * (n + 1));
	int64	   *add_gpu_hosts = palloc(sizeof(int64) * (n + 1));
	int			ncpu = 0,
				ngpu = 0;
	double	   *cpu_figs,
			   *gpu_figs;
	int			ncpu_figs,
				ngpu_figs;
	double		cpu_fig,
				gpu_fig,
				est;
	bool		has_cpu_fig,
				has_gpu_fig,
				has_est,
				new_figure = false;
	double		bound = INFINITY;
	bool		windows = version > 0;
	bool		screened = version == 2;
	AppUnitScreen screen = {{0, 0, 0}, {0, 0, 0}, NULL, 0, false};
	Datum		args[24];
	char		nulls[24];

	memset(nulls, ' ', sizeof(nulls));
	args[20] = (Datum) 0;		/* 0.7.0's au_flops */
	nulls[20] = 'n';
	args[21] = Int64GetDatum(0);	/* 0.7.0's run-time spread */
	args[22] = (Datum) 0;
	nulls[22] = 'n';
	args[23] = Float8GetDatum(0);	/* 0.7.0's floor of the bound */
	cpu_fig = DatumGetFloat8(SPI_getbinval(t, d, 5, &isnull));
	has_cpu_fig = !isnull;
	gpu_fig = DatumGetFloat8(SPI_getbinval(t, d, 6, &isnull));
	has_gpu_fig = !isnull;
	est = DatumGetFloat8(SPI_getbinval(t, d, 7, &isnull));
	has_est = !isnull;

	/*
	 * The window first: what it held, then these jobs, the newest kept; its
	 * statistics, and the ratio up to which a report counts in full, which
	 * bounds the app units a FLOPS sample is divided by as well.  Before
	 * 0.6.0 there is no window, and claims count as made.
	 */
	if (windows)
	{
		int64	   *hosts;
		double	   *actual,
				   *predicted;
		int			nh,
					na,
					np,
					total,
					drop;
		AppUnitReport *reports;
		double	   *work;
		AppStats	stats;

		double	   *flops;
		int			nf;

		int8_values(SPI_getbinval(t, d, 11, &isnull), &nh, &hosts, n);
		float8_values(SPI_getbinval(t, d, 12, &isnull), &na, &actual, n);
		float8_values(SPI_getbinval(t, d, 13, &isnull), &np, &predicted, n);
		/* 0.7.0: each report's FLOPS per app unit as claimed (0: none) */
		float8_values(SPI_getbinval(t, d, 14, &isnull), &nf, &flops, Max(nh, n) + n);
		total = Min(nh, Min(na, np));
		for (int i = nf; i < total; i++)
			flops[i] = 0;
		for (int i = 0; i < n; i++)
		{
			if (!(jobs[i].actual > 0))
				continue;
			hosts[total] = jobs[i].voice;
			actual[total] = jobs[i].actual;
			flops[total] = isnan(jobs[i].flops) ? 0 : jobs[i].flops / jobs[i].actual;
			predicted[total++] = jobs[i].predicted;
		}
		drop = total > allot_app_unit_window ? total - allot_app_unit_window : 0;
		hosts += drop;
		actual += drop;
		predicted += drop;
		flops += drop;
		total -= drop;

		reports = palloc(sizeof(AppUnitReport) * (total + 1));
		work = palloc(sizeof(double) * ALLOT_APP_UNIT_WORK(total));
		screen.voices_out = palloc(sizeof(int64) * (total + 1));
		for (int i = 0; i < total; i++)
		{
			reports[i].voice = hosts[i];
			reports[i].actual = actual[i];
			reports[i].predicted = predicted[i];
			reports[i].flops_per_au = screened ? flops[i] : 0;
		}
		allot_app_unit_stats(reports, total, work, &stats, &bound, screened ? &screen : NULL);

		args[9] = int8_datum(hosts, total);
		args[10] = float8_datum(actual, total);
		args[11] = float8_datum(predicted, total);
		args[20] = float8_datum(flops, total);
		nulls[20] = ' ';
		stats_datums(&stats, bound, &args[12]);
		nulls[19] = total > 0 ? ' ' : 'n';
		args[23] = Float8GetDatum(stats.au_ratio_tail);
		if (total == 0)
			bound = INFINITY;
		if (screened)
			run_time_spread(hosts, actual, predicted, flops, total, &args[21], &args[22],
							&nulls[22]);
	}

	/* Seed 004 note 3: an app with reference jobs learns FLOPS from those only. */
	for (int i = 0; i < n; i++)
	{
		const LearnJob *j = &jobs[i];
		double		units,
					per_au;

		/* A report without elapsed time says nothing of FLOPS. */
		if (isnan(j->flops) || !(j->actual > 0) || (reference_only && !j->reference))
			continue;
		/* 0.7.0: nor does one screening left out (voices.h). */
		if (screened && screen_leaves_out(&screen, j))
			continue;
		/* raw_flops_per_au, its app units counted up to the bound. */
		units = Min(j->actual, bound * j->predicted);
		per_au = j->flops / units;
		if (j->gpu)
		{
			add_gpu[ngpu] = per_au;
			add_gpu_hosts[ngpu++] = j->voice;
		}
		else
		{
			add_cpu[ncpu] = per_au;
			add_cpu_hosts[ncpu++] = j->voice;
		}
	}
	*samples_taken += ncpu + ngpu;
	cpu_figs = palloc(sizeof(double) * ((cpu.n + ncpu) / Max(allot_flops_sample_size, 1) + 1));
	gpu_figs = palloc(sizeof(double) * ((gpu.n + ngpu) / Max(allot_flops_sample_size, 1) + 1));
	ncpu_figs = absorb(&cpu, add_cpu, add_cpu_hosts, ncpu, cpu_figs, screened);
	ngpu_figs = absorb(&gpu, add_gpu, add_gpu_hosts, ngpu, gpu_figs, screened);

	/* Each figure in turn moves the estimate; the first one ever sets it. */
	for (int f = 0; f < ncpu_figs + ngpu_figs; f++)
	{
		double		candidate;

		if (f < ncpu_figs)
		{
			cpu_fig = cpu_figs[f];
			has_cpu_fig = true;
		}
		else
		{
			gpu_fig = gpu_figs[f - ncpu_figs];
			has_gpu_fig = true;
		}
		candidate = candidate_figure(has_cpu_fig, cpu_fig, has_gpu_fig, gpu_fig,
									 has_cpu_versions, efficiency);
		est = has_est ? est + allot_flops_avg_weight * (candidate - est) : candidate;
		has_est = true;
		new_figure = true;
		(*figures_made)++;
	}

	args[0] = Int64GetDatum(id);
	args[1] = float8_datum(cpu.v, cpu.n);
	args[2] = float8_datum(gpu.v, gpu.n);
	args[3] = Float8GetDatum(cpu_fig);
	nulls[3] = has_cpu_fig ? ' ' : 'n';
	args[4] = Float8GetDatum(gpu_fig);
	nulls[4] = has_gpu_fig ? ' ' : 'n';
	args[5] = Float8GetDatum(est);
	nulls[5] = has_est ? ' ' : 'n';
	args[6] = BoolGetDatum(new_figure);
	if (windows)
	{
		args[7] = int8_datum(cpu.host, cpu.n);
		args[8] = int8_datum(gpu.host, gpu.n);
	}

	if (SPI_execute_plan(app_update_plan[version], args, nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update app %lld", (long long) id);
}

/* Does allot.app have 0.6.0's windows? */
static bool
has_windows(void)
{
	Oid			app = get_relname_relid("app", get_namespace_oid("allot", false));

	return OidIsValid(app) && get_attnum(app, "au_hosts") != InvalidAttrNumber;
}

/* Do hosts have owners (0.7.0 on)? */
static bool
has_owners(void)
{
	Oid			host = get_relname_relid("host", get_namespace_oid("allot", false));

	return OidIsValid(host) && get_attnum(host, "owner_id") != InvalidAttrNumber;
}

int64
allot_learn_from_reports(int64 *samples_taken, int64 *figures_made)
{
	bool		owners = has_owners();
	int			version = owners ? 2 : has_windows() ? 1 : 0;
	Datum		args[1];
	LearnJob   *jobs;
	Datum	   *app_ids,
			   *done_ids;
	int			njobs,
				napps = 0,
				ndone = 0;
	double		efficiency = allot_gpu_efficiency;
	bool		isnull;

	prepare_plans(version, owners);
	*samples_taken = 0;
	*figures_made = 0;
	args[0] = Int32GetDatum(allot_transitioner_batch);
	if (SPI_execute_plan(samples_plan[owners], args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the jobs to learn from");
	njobs = (int) SPI_processed;
	if (njobs == 0)
		return 0;

	jobs = palloc(sizeof(LearnJob) * njobs);
	for (int i = 0; i < njobs; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		Datum		v;

		jobs[i].id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
		jobs[i].app_id = DatumGetInt64(SPI_getbinval(t, d, 2, &isnull));
		jobs[i].voice = DatumGetInt64(SPI_getbinval(t, d, 3, &isnull));
		jobs[i].gpu = DatumGetBool(SPI_getbinval(t, d, 4, &isnull));
		jobs[i].reference = DatumGetBool(SPI_getbinval(t, d, 5, &isnull));
		v = SPI_getbinval(t, d, 6, &isnull);
		jobs[i].flops = isnull || !isfinite(DatumGetFloat8(v)) || DatumGetFloat8(v) <= 0 ?
			NAN : DatumGetFloat8(v);
		/* A row an operator marked done, without a report: no app units. */
		v = SPI_getbinval(t, d, 7, &isnull);
		jobs[i].actual = isnull ? 0 : DatumGetFloat8(v);
		jobs[i].predicted = DatumGetFloat8(SPI_getbinval(t, d, 8, &isnull));
	}
	qsort(jobs, njobs, sizeof(LearnJob), learn_job_cmp);

	if (SPI_execute_plan(efficiency_plan, NULL, NULL, false, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
	{
		Datum		e = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull && DatumGetFloat8(e) > 0)
			efficiency = DatumGetFloat8(e);
	}

	app_ids = palloc(sizeof(Datum) * (njobs + 1));
	for (int i = 0; i < njobs; i++)
		if (i == 0 || jobs[i].app_id != jobs[i - 1].app_id)
			app_ids[napps++] = Int64GetDatum(jobs[i].app_id);
	args[0] = PointerGetDatum(construct_array(app_ids, napps, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	if (SPI_execute_plan(apps_plan[version], args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the apps to learn for");

	/* Only the jobs of the apps locked and updated are done with. */
	done_ids = palloc(sizeof(Datum) * (njobs + 1));
	{
		SPITupleTable *rows = SPI_tuptable;
		uint64		nrows = SPI_processed;

		for (uint64 r = 0; r < nrows; r++)
		{
			int64		app_id = DatumGetInt64(SPI_getbinval(rows->vals[r], rows->tupdesc, 1, &isnull));
			int			first = first_job_of(jobs, njobs, app_id),
						last = first;

			while (last < njobs && jobs[last].app_id == app_id)
				done_ids[ndone++] = Int64GetDatum(jobs[last++].id);
			learn_app(rows->vals[r], rows->tupdesc, version, jobs + first, last - first,
					  efficiency, samples_taken, figures_made);
		}
	}
	args[0] = PointerGetDatum(construct_array(done_ids, ndone, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	if (SPI_execute_plan(sampled_plan, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not mark jobs learnt from");
	return ndone;
}

PG_FUNCTION_INFO_V1(allot_app_unit_statistics_sql);

/*
 * app_unit_statistics(hosts, actual, predicted [, flops_per_au]): the
 * statistics the transitioner computes from a window, for the update
 * script, monitoring and check_invariants().  With the fourth array
 * (0.7.0), after screening (voices.h), as the transitioner of 0.7.0 does;
 * without it, as 0.6.0's did.
 */
Datum
allot_app_unit_statistics_sql(PG_FUNCTION_ARGS)
{
	int			narrays = PG_NARGS() > 3 ? 4 : 3;
	ArrayType  *arrays[4] = {PG_GETARG_ARRAYTYPE_P(0), PG_GETARG_ARRAYTYPE_P(1),
	PG_GETARG_ARRAYTYPE_P(2), narrays > 3 ? PG_GETARG_ARRAYTYPE_P(3) : NULL};
	const char *names[4] = {"voices", "actual", "predicted", "flops_per_au"};
	double	   *flops = NULL;
	int			n = -1;
	int64	   *hosts;
	double	   *actual,
			   *predicted;
	AppUnitReport *reports;
	double	   *work;
	AppStats	stats;
	double		bound;
	TupleDesc	desc;
	Datum		values[8];
	bool		nulls[8] = {false};

	for (int a = 0; a < narrays; a++)
	{
		int			len;

		if (ARR_NDIM(arrays[a]) > 1)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("%s must be a one-dimensional array, not %d-dimensional",
							names[a], ARR_NDIM(arrays[a]))));
		if (ARR_HASNULL(arrays[a]))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain NULL", names[a])));
		len = ArrayGetNItems(ARR_NDIM(arrays[a]), ARR_DIMS(arrays[a]));
		if (n >= 0 && len != n)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("hosts, actual and predicted must have as many elements each, not %d and %d",
							n, len)));
		n = len;
	}
	int8_values(PointerGetDatum(arrays[0]), &n, &hosts, 0);
	float8_values(PointerGetDatum(arrays[1]), &n, &actual, 0);
	float8_values(PointerGetDatum(arrays[2]), &n, &predicted, 0);
	if (narrays > 3)
		float8_values(PointerGetDatum(arrays[3]), &n, &flops, 0);
	reports = palloc(sizeof(AppUnitReport) * (n + 1));
	work = palloc(sizeof(double) * ALLOT_APP_UNIT_WORK(n));
	for (int i = 0; i < n; i++)
	{
		if (!(actual[i] > 0 && isfinite(actual[i])) || !(predicted[i] > 0 && isfinite(predicted[i])))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("app units must be positive finite numbers, not %g and %g (element %d)",
							actual[i], predicted[i], i + 1)));
		reports[i].voice = hosts[i];
		reports[i].actual = actual[i];
		reports[i].predicted = predicted[i];
		reports[i].flops_per_au = flops != NULL && isfinite(flops[i]) && flops[i] > 0 ? flops[i] : 0;
	}
	{
		AppUnitScreen screen = {{0, 0, 0}, {0, 0, 0}, NULL, 0, false};

		allot_app_unit_stats(reports, n, work, &stats, &bound, flops != NULL ? &screen : NULL);
	}

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "app_unit_statistics must return a record");
	stats_datums(&stats, bound, values);
	nulls[7] = stats.n == 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
