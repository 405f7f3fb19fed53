/*
 * transitioner.c: run_transitioner and validate_job (seed 004).
 *
 * One call does bounded work (allot.transitioner_batch rows per step) in
 * four steps (five under allot.fairness = debt, where the fold comes first), each taking its rows FOR UPDATE SKIP LOCKED so that
 * concurrent calls, and dispatch, share the work instead of waiting:
 *
 *   time out   jobs in progress past their deadline go back to unsent for
 *              another host; the late host's quota drops by one, and its
 *              late report will be refused
 *   expire     assignments whose host went quiet stop counting
 *   estimate   each new successful report gives raw_flops_per_au =
 *              elapsed * raw_flops_per_sec / app_units, kept per app in a
 *              CPU or a GPU array; when an array holds allot.flops_sample_size
 *              values, its allot.flops_percentile (an O(N) selection) becomes
 *              that kind's figure; the app's estimate is the lesser of the
 *              CPU and GPU figures (a GPU-only app's GPU figure scaled by the
 *              GPU efficiency of apps that have both), averaged into
 *              app.est_flops_per_au with weight allot.flops_avg_weight
 *   credit     validated jobs get app.mean_app_units * est_flops_per_au in
 *              cobblestones, the same for every job of the app
 *   debts      under allot.fairness = debt, the credit handed out since the
 *              last call is folded into the long-term debts
 *              (allot.fold_debts; fairness.h has the formula)
 *
 * Each call then records what it did in allot.transitioner_run (0.5.0 and
 * later), for the status views: one upsert into a ring of 100 slots.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "entry.h"
#include "credit.h"
#include "percentile.h"

/* One cobblestone: 1/200 day of a 1 GFLOPS machine. */
#define FLOPS_PER_CREDIT (1e9 * 86400.0 / 200.0)

static SPIPlanPtr timeout_plan = NULL;
static SPIPlanPtr samples_plan = NULL;
static SPIPlanPtr apps_plan = NULL;
static SPIPlanPtr efficiency_plan = NULL;
static SPIPlanPtr app_update_plan = NULL;
static SPIPlanPtr sampled_plan = NULL;
static SPIPlanPtr credit_plan = NULL;
static SPIPlanPtr validate_plan = NULL;
static SPIPlanPtr fold_plan = NULL;
static SPIPlanPtr last_seen_plan = NULL;
static SPIPlanPtr record_plan = NULL;

/* Runs kept in allot.transitioner_run; its CHECK on slot says the same. */
#define TRANSITIONER_RUNS_KEPT 100

/* What one call did, in the order of its JSON reply. */
typedef struct TransitionerRun
{
	int64		timed_out;
	int64		expired;
	int64		jobs_read;
	int64		samples;
	int64		figures;
	int64		credited;
	int64		folded;
	int64		hosts_seen;
} TransitionerRun;

static void
prepare_plans(void)
{
	Oid			time_limit[3] = {TIMESTAMPTZOID, INT4OID, INT4OID};
	Oid			limit[1] = {INT4OID};
	Oid			ids[1] = {INT8ARRAYOID};
	Oid			app_args[7] = {INT8OID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8OID,
	FLOAT8OID, FLOAT8OID, BOOLOID};
	Oid			validate_args[2] = {INT8OID, BOOLOID};

	if (validate_plan != NULL)
		return;

	/*
	 * Late jobs back to unsent.  Quotas are charged in (host, version)
	 * order, the order dispatch takes them in, so the two cannot deadlock.
	 */
	timeout_plan = allot_prepare(
						   "WITH late AS ("
						   "  SELECT id, host_id, app_version_id, sent_at FROM allot.job"
						   "   WHERE state = 'in_progress' AND deadline < $1"
						   "   ORDER BY deadline LIMIT $2 FOR UPDATE SKIP LOCKED),"
						   " back AS ("
						   "  UPDATE allot.job j"
						   "     SET state = 'unsent', host_id = NULL, app_version_id = NULL,"
						   "         sent_at = NULL, deadline = NULL, est_secs = NULL,"
						   "         peak_flops_per_sec = NULL"
						   "    FROM late WHERE j.id = late.id RETURNING j.id),"
						   " quota AS ("
						   "  INSERT INTO allot.host_app_version AS hv"
						   "         (host_id, app_version_id, quota, n_error)"
						   "  SELECT host_id, app_version_id, greatest($3 - n, 1), n"
						   "    FROM (SELECT host_id, app_version_id, count(*)::int AS n"
						   "            FROM late GROUP BY host_id, app_version_id) l"
						   "   ORDER BY host_id, app_version_id"
						   "  ON CONFLICT (host_id, app_version_id) DO UPDATE"
						   "     SET quota = greatest(hv.quota - excluded.n_error, 1),"
						   "         n_error = hv.n_error + excluded.n_error),"
						   " record AS ("
						   "  INSERT INTO allot.job_report"
						   "         (job_id, host_id, sent_at, outcome, reported_at, reply)"
						   "  SELECT id, host_id, sent_at, 'timed_out', $1,"
						   "         jsonb_build_object('job_id', id, 'outcome', 'timed_out',"
						   "                            'state', 'unsent')"
						   "    FROM late ON CONFLICT DO NOTHING)"
						   "SELECT count(*) FROM back",
						   3, time_limit);

	samples_plan = allot_prepare(
						   "SELECT j.id, v.app_id, v.resource <> 'cpu', j.reference,"
						   "       j.elapsed_secs * j.raw_flops_per_sec / j.app_units"
						   "  FROM allot.job j JOIN allot.app_version v ON v.id = j.app_version_id"
						   " WHERE j.state = 'done' AND NOT j.sampled"
						   " ORDER BY j.id LIMIT $1 FOR UPDATE OF j SKIP LOCKED",
						   1, limit);
	/*
	 * Locked in id order; the locking read returns each app's latest row.
	 * An app another transaction holds (a report updating its statistics)
	 * is skipped, and its jobs stay unsampled for the next call: waiting
	 * for it, with job_usage rows already held, could deadlock.
	 */
	apps_plan = allot_prepare(
						"SELECT a.id, a.reference_jobs, a.cpu_samples, a.gpu_samples,"
						"       a.cpu_flops_per_au, a.gpu_flops_per_au, a.est_flops_per_au,"
						"       EXISTS (SELECT FROM allot.app_version v"
						"                WHERE v.app_id = a.id AND v.resource = 'cpu')"
						"  FROM allot.app a WHERE a.id = ANY ($1) ORDER BY a.id FOR UPDATE SKIP LOCKED",
						1, ids);
	/* Seed 004 note 2: how efficient GPUs are, seen on apps with both. */
	efficiency_plan = allot_prepare(
							  "SELECT avg(cpu_flops_per_au / gpu_flops_per_au) FROM allot.app"
							  " WHERE cpu_flops_per_au > 0 AND gpu_flops_per_au > 0",
							  0, NULL);
	app_update_plan = allot_prepare(
							  "UPDATE allot.app SET cpu_samples = $2, gpu_samples = $3,"
							  "       cpu_flops_per_au = $4, gpu_flops_per_au = $5,"
							  "       est_flops_per_au = CASE WHEN $7 THEN $6 ELSE est_flops_per_au END"
							  " WHERE id = $1",
							  7, app_args);
	sampled_plan = allot_prepare(
						   "UPDATE allot.job SET sampled = true WHERE id = ANY ($1)",
						   1, ids);
	credit_plan = allot_prepare(
						  "WITH todo AS ("
						  "  SELECT j.id FROM allot.job j"
						  "    JOIN allot.workload w ON w.id = j.workload_id"
						  "    JOIN allot.app a ON a.id = w.app_id"
						  "   WHERE j.validated AND j.credit IS NULL AND a.est_flops_per_au IS NOT NULL"
						  "   ORDER BY j.id LIMIT $1 FOR UPDATE OF j SKIP LOCKED)"
						  "UPDATE allot.job j"
						  "   SET credit = a.actual_au_mean * a.est_flops_per_au / "
						  CppAsString2(FLOPS_PER_CREDIT)
						  "  FROM todo, allot.workload w, allot.app a"
						  " WHERE j.id = todo.id AND w.id = j.workload_id AND a.id = w.app_id"
						  "   AND a.est_flops_per_au IS NOT NULL",
						  1, limit);
	validate_plan = allot_prepare(
							"UPDATE allot.job SET validated = $2, credit = CASE WHEN $2 THEN credit END"
							" WHERE id = $1 AND state = 'done' RETURNING 1",
							2, validate_args);

}

/* ---------------------------------------------------------------------------
 * Estimates.
 * ------------------------------------------------------------------------- */

typedef struct AppSamples
{
	int64		app_id;
	double	   *cpu;			/* new values */
	int			ncpu;
	double	   *gpu;
	int			ngpu;
	double	   *cpu_ref;		/* of reference jobs only */
	int			ncpu_ref;
	double	   *gpu_ref;
	int			ngpu_ref;
	bool		locked;			/* its row was locked and updated this call */
} AppSamples;

static AppSamples *
app_samples(AppSamples *apps, int *napps, int cap, int64 app_id)
{
	for (int i = 0; i < *napps; i++)
		if (apps[i].app_id == app_id)
			return &apps[i];
	apps[*napps].app_id = app_id;
	apps[*napps].cpu = palloc(sizeof(double) * cap);
	apps[*napps].gpu = palloc(sizeof(double) * cap);
	apps[*napps].cpu_ref = palloc(sizeof(double) * cap);
	apps[*napps].gpu_ref = palloc(sizeof(double) * cap);
	return &apps[(*napps)++];
}

static double *
float8_array_values(Datum d, int extra, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	double	   *values;

	deconstruct_array(DatumGetArrayTypeP(d), FLOAT8OID, 8, FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &elems, &nulls, n);
	values = palloc(sizeof(double) * (*n + extra + 1));
	for (int i = 0; i < *n; i++)
		values[i] = DatumGetFloat8(elems[i]);
	return values;
}

static Datum
float8_array_datum(const double *values, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));

	for (int i = 0; i < n; i++)
		d[i] = Float8GetDatum(values[i]);
	return PointerGetDatum(construct_array(d, n, FLOAT8OID, 8, FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
}

/*
 * Add new values to a kind's array; every full allot.flops_sample_size of
 * them, oldest first, gives a figure: its allot.flops_percentile.  Returns
 * how many figures were made (in figures); the rest waits in the array.
 * Every report thus counts in exactly one figure.
 */
static int
absorb(double *array, int *n, const double *add, int nadd, double *figures)
{
	int			size = allot_flops_sample_size;
	int			made = 0,
				start = 0;

	for (int i = 0; i < nadd; i++)
		array[(*n)++] = add[i];
	while (*n - start >= size)
	{
		figures[made++] = allot_percentile_disc(array + start, size, allot_flops_percentile);
		start += size;
	}
	if (start > 0)
	{
		memmove(array, array + start, sizeof(double) * (*n - start));
		*n -= start;
	}
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

static int64
estimate_flops(int64 *samples_taken, int64 *figures_made)
{
	Datum		args[1];
	int			cap = allot_transitioner_batch;
	AppSamples *apps;
	int			napps = 0;
	Datum	   *job_ids;
	int64	   *job_app;
	Datum	   *app_ids;
	int			njobs,
				nsampled = 0;
	bool		isnull;
	double		efficiency = allot_gpu_efficiency;
	int64		updated = 0;

	args[0] = Int32GetDatum(cap);
	if (SPI_execute_plan(samples_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the jobs to sample");
	njobs = (int) SPI_processed;
	*samples_taken = 0;
	*figures_made = 0;
	if (njobs == 0)
		return 0;

	apps = palloc0(sizeof(AppSamples) * (njobs + 1));
	job_ids = palloc(sizeof(Datum) * (njobs + 1));
	job_app = palloc(sizeof(int64) * (njobs + 1));
	for (int i = 0; i < njobs; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		AppSamples *a;
		bool		gpu,
					reference;
		Datum		v;

		job_ids[i] = SPI_getbinval(t, d, 1, &isnull);
		job_app[i] = DatumGetInt64(SPI_getbinval(t, d, 2, &isnull));
		a = app_samples(apps, &napps, njobs + 1, job_app[i]);
		gpu = DatumGetBool(SPI_getbinval(t, d, 3, &isnull));
		reference = DatumGetBool(SPI_getbinval(t, d, 4, &isnull));
		v = SPI_getbinval(t, d, 5, &isnull);
		/* A report without elapsed time says nothing of FLOPS. */
		if (isnull || !isfinite(DatumGetFloat8(v)) || DatumGetFloat8(v) <= 0)
			continue;
		if (gpu)
			a->gpu[a->ngpu++] = DatumGetFloat8(v);
		else
			a->cpu[a->ncpu++] = DatumGetFloat8(v);
		if (reference && gpu)
			a->gpu_ref[a->ngpu_ref++] = DatumGetFloat8(v);
		else if (reference)
			a->cpu_ref[a->ncpu_ref++] = DatumGetFloat8(v);
	}

	if (SPI_execute_plan(efficiency_plan, NULL, NULL, false, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
	{
		Datum		e = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull && DatumGetFloat8(e) > 0)
			efficiency = DatumGetFloat8(e);
	}

	app_ids = palloc(sizeof(Datum) * (napps + 1));
	for (int i = 0; i < napps; i++)
		app_ids[i] = Int64GetDatum(apps[i].app_id);
	args[0] = PointerGetDatum(construct_array(app_ids, napps, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	if (SPI_execute_plan(apps_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the apps to estimate");
	{
		SPITupleTable *rows = SPI_tuptable;
		uint64		nrows = SPI_processed;

		for (uint64 r = 0; r < nrows; r++)
		{
			HeapTuple	t = rows->vals[r];
			TupleDesc	d = rows->tupdesc;
			int64		id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
			bool		reference_only = DatumGetBool(SPI_getbinval(t, d, 2, &isnull));
			AppSamples *a = app_samples(apps, &napps, njobs + 1, id);
			int			ncpu,
						ngpu;
			double	   *cpu,
					   *gpu;
			double		cpu_fig,
						gpu_fig,
						est,
						candidate;
			double	   *cpu_figs,
					   *gpu_figs;
			int			ncpu_figs,
						ngpu_figs;
			bool		has_cpu_fig,
						has_gpu_fig,
						has_est,
						has_cpu_versions,
						new_figure = false;
			Datum		uargs[7];
			char		unulls[7];

			cpu = float8_array_values(SPI_getbinval(t, d, 3, &isnull), a->ncpu, &ncpu);
			gpu = float8_array_values(SPI_getbinval(t, d, 4, &isnull), a->ngpu, &ngpu);
			cpu_fig = DatumGetFloat8(SPI_getbinval(t, d, 5, &has_cpu_fig));
			has_cpu_fig = !has_cpu_fig;
			gpu_fig = DatumGetFloat8(SPI_getbinval(t, d, 6, &has_gpu_fig));
			has_gpu_fig = !has_gpu_fig;
			est = DatumGetFloat8(SPI_getbinval(t, d, 7, &has_est));
			has_est = !has_est;
			has_cpu_versions = DatumGetBool(SPI_getbinval(t, d, 8, &isnull));

			/* Seed 004 note 3: an app with reference jobs learns from those only. */
			cpu_figs = palloc(sizeof(double) * ((ncpu + a->ncpu) / Max(allot_flops_sample_size, 1) + 1));
			gpu_figs = palloc(sizeof(double) * ((ngpu + a->ngpu) / Max(allot_flops_sample_size, 1) + 1));
			ncpu_figs = absorb(cpu, &ncpu, reference_only ? a->cpu_ref : a->cpu,
							   reference_only ? a->ncpu_ref : a->ncpu, cpu_figs);
			ngpu_figs = absorb(gpu, &ngpu, reference_only ? a->gpu_ref : a->gpu,
							   reference_only ? a->ngpu_ref : a->ngpu, gpu_figs);
			*samples_taken += reference_only ? a->ncpu_ref + a->ngpu_ref : a->ncpu + a->ngpu;

			/*
			 * Each figure in turn moves the estimate; the first one ever
			 * initialises it.
			 */
			for (int f = 0; f < ncpu_figs + ngpu_figs; f++)
			{
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

			uargs[0] = Int64GetDatum(id);
			uargs[1] = float8_array_datum(cpu, ncpu);
			uargs[2] = float8_array_datum(gpu, ngpu);
			uargs[3] = Float8GetDatum(cpu_fig);
			uargs[4] = Float8GetDatum(gpu_fig);
			uargs[5] = Float8GetDatum(est);
			uargs[6] = BoolGetDatum(new_figure);
			memset(unulls, ' ', sizeof(unulls));
			unulls[3] = has_cpu_fig ? ' ' : 'n';
			unulls[4] = has_gpu_fig ? ' ' : 'n';
			unulls[5] = has_est ? ' ' : 'n';
			if (SPI_execute_plan(app_update_plan, uargs, unulls, false, 0) != SPI_OK_UPDATE)
				elog(ERROR, "could not update app %lld", (long long) id);
			a->locked = true;
			updated++;
		}
	}

	/* Only the jobs of the apps updated are done with. */
	for (int i = 0; i < njobs; i++)
		if (app_samples(apps, &napps, njobs + 1, job_app[i])->locked)
			job_ids[nsampled++] = job_ids[i];
	args[0] = PointerGetDatum(construct_array(job_ids, nsampled, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	if (SPI_execute_plan(sampled_plan, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not mark jobs sampled");
	return nsampled;
}

static int64
count_result(SPIPlanPtr plan, Datum *args, int expected)
{
	bool		isnull;
	int			rc = SPI_execute_plan(plan, args, NULL, false, 0);

	if (rc != expected)
		elog(ERROR, "transitioner step failed: %s", SPI_result_code_string(rc));
	if (rc == SPI_OK_SELECT)
		return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return (int64) SPI_processed;
}

/*
 * Record a run for allot.status_transitioner: run n overwrites slot
 * n % TRANSITIONER_RUNS_KEPT, so the history stays bounded and costs one
 * upsert per run.  The SQL side is older than 0.5.0 when the table is
 * missing; then nothing is recorded (one C library serves every version).
 */
static void
record_run(TimestampTz started, TimestampTz now, const TransitionerRun *r)
{
	Oid			types[11] = {TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT8OID,
	INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID};
	Datum		args[11];

	if (!OidIsValid(get_relname_relid("transitioner_run", get_namespace_oid("allot", false))))
		return;
	if (record_plan == NULL)
		record_plan = allot_prepare(
							"INSERT INTO allot.transitioner_run AS r"
							"       (slot, run, started_at, finished_at, now_given, fairness,"
							"        timed_out, expired_assignments, reports_read, flops_samples,"
							"        flops_estimates, credited, debts_folded, hosts_seen)"
							"SELECT n % " CppAsString2(TRANSITIONER_RUNS_KEPT) ", n, $1, $2, $3,"
							"       current_setting('allot.fairness'), $4, $5, $6, $7, $8, $9, $10, $11"
							"  FROM nextval('allot.transitioner_run_seq') n "
							"ON CONFLICT (slot) DO UPDATE"
							"   SET run = excluded.run, started_at = excluded.started_at,"
							"       finished_at = excluded.finished_at, now_given = excluded.now_given,"
							"       fairness = excluded.fairness, timed_out = excluded.timed_out,"
							"       expired_assignments = excluded.expired_assignments,"
							"       reports_read = excluded.reports_read,"
							"       flops_samples = excluded.flops_samples,"
							"       flops_estimates = excluded.flops_estimates,"
							"       credited = excluded.credited, debts_folded = excluded.debts_folded,"
							"       hosts_seen = excluded.hosts_seen",
							11, types);
	args[0] = TimestampTzGetDatum(started);
	args[1] = TimestampTzGetDatum(GetCurrentTimestamp());
	args[2] = TimestampTzGetDatum(now);
	args[3] = Int64GetDatum(r->timed_out);
	args[4] = Int64GetDatum(r->expired);
	args[5] = Int64GetDatum(r->jobs_read);
	args[6] = Int64GetDatum(r->samples);
	args[7] = Int64GetDatum(r->figures);
	args[8] = Int64GetDatum(r->credited);
	args[9] = Int64GetDatum(r->folded);
	args[10] = Int64GetDatum(r->hosts_seen);
	if (SPI_execute_plan(record_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the transitioner run");
}

PG_FUNCTION_INFO_V1(allot_run_transitioner);

/* run_transitioner(now): one bounded round of the four steps. */
Datum
allot_run_transitioner(PG_FUNCTION_ARGS)
{
	TimestampTz now;
	TimestampTz started = GetCurrentTimestamp();
	Datum		args[3];
	TransitionerRun r = {0};
	char	   *json;

	allot_check_settings();
	now = allot_now_arg(fcinfo, 0);
	SPI_connect();
	/* The table locks every writer takes first (entry.h). */
	allot_lock_for_write("job");
	allot_lock_for_write("assignment");
	prepare_plans();

	/*
	 * Debts first: the fold locks credit rows, which requests lock before
	 * their usage rows; folding after the steps below, which hold usage
	 * rows, could deadlock with them.  The fold lock is taken first: the
	 * requests of this moment finish, the later ones wait for this
	 * transaction, and so does another transitioner (credit.h).
	 */
	if (allot_fairness_mode() == FAIRNESS_DEBT)
	{
		Oid			fold_args[1] = {TIMESTAMPTZOID};

		allot_lock_fold();
		if (fold_plan == NULL)
			fold_plan = allot_prepare("SELECT allot.fold_debts($1)", 1, fold_args);
		args[0] = TimestampTzGetDatum(now);
		r.folded = count_result(fold_plan, args, SPI_OK_SELECT);
	}

	args[0] = TimestampTzGetDatum(now);
	args[1] = Int32GetDatum(allot_transitioner_batch);
	args[2] = Int32GetDatum(allot_daily_quota);
	r.timed_out = count_result(timeout_plan, args, SPI_OK_SELECT);

	r.expired = allot_expire_assignments_upto(allot_assignment_cutoff(now),
											  allot_transitioner_batch);

	r.jobs_read = estimate_flops(&r.samples, &r.figures);

	args[0] = Int32GetDatum(allot_transitioner_batch);
	r.credited = count_result(credit_plan, args, SPI_OK_UPDATE);

	/*
	 * host.last_seen, to the minute, from what requests write instead of the
	 * host row since 0.5.0 (assignment.seen_at, host_resource.asked_at):
	 * requests stay one-row writes, and this runs once a minute.
	 */
	if (OidIsValid(get_relname_relid("assignment_horizon", get_namespace_oid("allot", false))))
	{
		Oid			limit[1] = {INT4OID};

		if (last_seen_plan == NULL)
			last_seen_plan = allot_prepare(
									   "WITH seen AS ("
									   "  SELECT s.host_id, max(s.seen) AS seen"
									   "    FROM (SELECT host_id, seen_at AS seen FROM allot.assignment"
									   "          UNION ALL"
									   "          SELECT host_id, asked_at FROM allot.host_resource"
									   "           WHERE asked_at IS NOT NULL) s"
									   "   GROUP BY s.host_id),"
									   " stale AS ("
									   "  SELECT h.id, seen.seen FROM seen JOIN allot.host h ON h.id = seen.host_id"
									   "   WHERE h.last_seen IS NULL OR h.last_seen <= seen.seen - interval '1 minute'"
									   "   ORDER BY h.id LIMIT $1 FOR NO KEY UPDATE OF h SKIP LOCKED)"
									   "UPDATE allot.host h SET last_seen = stale.seen FROM stale WHERE h.id = stale.id",
									   1, limit);
		r.hosts_seen = count_result(last_seen_plan, args, SPI_OK_UPDATE);
	}

	record_run(started, now, &r);

	SPI_finish();
	json = psprintf("{\"timed_out\": %lld, \"expired_assignments\": %lld,"
					" \"reports_read\": %lld, \"flops_samples\": %lld,"
					" \"flops_estimates\": %lld, \"credited\": %lld,"
					" \"debts_folded\": %lld, \"hosts_seen\": %lld}",
					(long long) r.timed_out, (long long) r.expired, (long long) r.jobs_read,
					(long long) r.samples, (long long) r.figures, (long long) r.credited,
					(long long) r.folded, (long long) r.hosts_seen);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

PG_FUNCTION_INFO_V1(allot_validate_job);

/* validate_job(job_id, valid): the project's validator's verdict. */
Datum
allot_validate_job(PG_FUNCTION_ARGS)
{
	int64		job_id;
	Datum		args[2];

	allot_check_settings();
	allot_require_arg(fcinfo, 0, "job_id");
	allot_require_arg(fcinfo, 1, "valid");
	job_id = PG_GETARG_INT64(0);
	args[0] = Int64GetDatum(job_id);
	args[1] = BoolGetDatum(PG_GETARG_BOOL(1));

	SPI_connect();
	prepare_plans();
	if (SPI_execute_plan(validate_plan, args, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "could not validate job %lld", (long long) job_id);
	if (SPI_processed == 0)
	{
		Oid			types[1] = {INT8OID};
		bool		isnull;

		if (SPI_execute_with_args("SELECT state FROM allot.job WHERE id = $1", 1, types,
								  args, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read allot.job");
		if (SPI_processed == 0)
			ereport(ERROR,
					(errcode(ERRCODE_NO_DATA_FOUND),
					 errmsg("job %lld does not exist", (long long) job_id)));
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("job %lld is not done, it is %s", (long long) job_id,
						TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
														  SPI_tuptable->tupdesc, 1, &isnull))),
				 errhint("Only a job reported successfully can be validated.")));
	}
	SPI_finish();
	PG_RETURN_BOOL(true);
}

PG_FUNCTION_INFO_V1(allot_percentile_disc_sql);

/* percentile_disc(values, fraction): the transitioner's selection, in SQL. */
Datum
allot_percentile_disc_sql(PG_FUNCTION_ARGS)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(0);
	double		p = PG_GETARG_FLOAT8(1);
	int			n;
	double	   *values;

	if (!(p >= 0 && p <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fraction must be between 0 and 1, not %.17g", p)));
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("values must be a one-dimensional array, not %d-dimensional",
						ARR_NDIM(array))));
	n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	if (n == 0)
		PG_RETURN_NULL();
	if (ARR_HASNULL(array))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("values must not contain NULL")));
	/*
	 * Without NULLs, a float8[] is its doubles, one after another, after the
	 * header (what ARR_DATA_PTR gives when there is no null bitmap): copy
	 * them rather than deconstruct the array into Datums.
	 */
	values = palloc(sizeof(double) * n);
	memcpy(values, (char *) array + ARR_OVERHEAD_NONULLS(ARR_NDIM(array)), sizeof(double) * n);
	for (int i = 0; i < n; i++)
		if (isnan(values[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("values must not contain NaN (element %d)", i + 1)));
	PG_RETURN_FLOAT8(allot_percentile_disc(values, n, p));
}
