/*
 * dispatch_read.c: what request_work's picks need, read once per request
 * (dispatch.h, stage "read"):
 *
 *   the host's app versions   what it said of them (seconds per app unit,
 *                             FLOPS) and its quota, under a fresh snapshot
 *                             so that an earlier request of the host counts
 *   job workloads             every active one from the backend cache, with
 *                             its unsent and in-progress jobs and its usage
 *                             (the sums of allot.job_usage's shards)
 *   apps                      their statistics, for estimates (seed 004)
 *   credit                    recent credit or debts (allot.fairness)
 *
 * Lookups by id go through the cache's sorted indexes: the cost is the rows
 * read, times a logarithm.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"

#include "credit.h"
#include "dispatch.h"
#include "entry.h"

static SPIPlanPtr host_versions_plan = NULL;
static SPIPlanPtr usage_plan = NULL;
static SPIPlanPtr usage_plan_050 = NULL;
static SPIPlanPtr app_stats_plan[2] = {NULL, NULL};

static void
prepare_plans(bool voices)
{
	Oid			id_time[2] = {INT8OID, TIMESTAMPTZOID};
	Oid			ids[1] = {INT8ARRAYOID};

	/* From 0.7.0 also the floor of the bound (estimate.h). */
	if (app_stats_plan[voices] == NULL)
		app_stats_plan[voices] = allot_prepare(psprintf("SELECT id, %s%s FROM allot.app WHERE id = ANY ($1)",
														ALLOT_APP_STATS_COLUMNS(voices)),
											   1, ids);
	if (host_versions_plan != NULL)
		return;
	host_versions_plan = allot_prepare(
									   "SELECT app_version_id, coalesce(seconds_per_app_unit, 0),"
									   "       coalesce(raw_flops_per_sec, 0), quota,"
									   "       CASE WHEN quota_day = ($2 AT TIME ZONE 'UTC')::date"
									   "            THEN jobs_today ELSE 0 END"
									   "  FROM allot.host_app_version WHERE host_id = $1",
									   2, id_time);
}

static Datum
id_array(const Datum *ids, int n)
{
	return PointerGetDatum(construct_array((Datum *) ids, n, INT8OID, 8, FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
}

static bool
is_excluded(const Request *req, int64 id)
{
	for (int i = 0; i < req->n_exclude; i++)
		if (req->exclude[i] == id)
			return true;
	return false;
}

static void
read_host_versions(Dispatch *d)
{
	const WorkloadCache *cache = d->cache;
	Datum		args[2] = {Int64GetDatum(d->host.id), TimestampTzGetDatum(d->now)};

	d->hv = palloc0(sizeof(HostVersion) * (cache->n_versions + 1));
	/* A fresh snapshot: what an earlier request of this host committed while
	 * we waited for its lock counts against the quota. */
	if (SPI_execute_plan(host_versions_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.host_app_version");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	td = SPI_tuptable->tupdesc;
		bool		isnull;
		int			v = allot_find_version(cache, DatumGetInt64(SPI_getbinval(t, td, 1, &isnull)));

		if (v < 0)
			continue;			/* a version created after the cache was */
		d->hv[v].seconds_per_app_unit = DatumGetFloat8(SPI_getbinval(t, td, 2, &isnull));
		d->hv[v].raw_flops_per_sec = DatumGetFloat8(SPI_getbinval(t, td, 3, &isnull));
		d->hv[v].quota = DatumGetInt32(SPI_getbinval(t, td, 4, &isnull));
		d->hv[v].jobs_today = DatumGetInt32(SPI_getbinval(t, td, 5, &isnull));
	}
	/* What the client states in this request takes precedence. */
	for (int i = 0; i < d->req.n_client; i++)
	{
		const ClientVersion *cv = &d->req.client[i];
		int			v = allot_find_version(cache, cv->version_id);

		if (v < 0)
			continue;
		if (cv->seconds_per_app_unit > 0)
			d->hv[v].seconds_per_app_unit = cv->seconds_per_app_unit;
		if (cv->raw_flops_per_sec > 0)
			d->hv[v].raw_flops_per_sec = cv->raw_flops_per_sec;
	}
}

/*
 * Recent credit (recent) or debts (debt) of every active job workload.  A
 * workload is eligible for a resource's debt while it has work for it
 * there, or was sent some since the last fold.
 */
static void
read_credit(Dispatch *d)
{
	const WorkloadCache *cache = d->cache;
	int			nw = cache->n_job_workloads,
				nr = cache->n_resources;
	DebtCell   *cells = palloc0(sizeof(DebtCell) * (nw * nr + 1));
	CreditRow  *rows;
	int			nrows;

	d->share = palloc(sizeof(double) * (nw + 1));
	d->overall = palloc0(sizeof(double) * (nw + 1));
	for (int i = 0; i < nw; i++)
	{
		JobWorkload *j = &d->jw[i];

		d->share[i] = j->w->throughput;
		j->debt = &cells[i * nr];
		for (int k = 0; k < j->app->n_versions && j->unsent > 0; k++)
			j->debt[cache->versions[j->app->first_version + k].resource].eligible = true;
	}
	nrows = allot_read_credit(cache, true, d->now, &rows);
	for (int k = 0; k < nrows; k++)
	{
		int			i = allot_find_job_workload(cache, rows[k].workload_id);
		DebtCell   *c;

		if (i < 0)
			continue;
		c = &d->jw[i].debt[rows[k].resource];
		d->jw[i].rec += rows[k].rec;
		c->debt = rows[k].debt;
		c->sent = rows[k].sent;
		if (c->sent > 0)
			c->eligible = true;
	}
}

/*
 * job_usage keeps a row per (workload, shard): the sums are the usage, added
 * up in C as the rows come (add_usage_row), which costs less than grouping
 * them.  The rows of the job workloads' id range, looked up in the cache
 * (the range skips older, finished workloads' rows); not "= ANY ($1)",
 * which a generic plan tests element by element on every row.  mflops holds
 * whole MFLOPS: as int8, it is read without going through text as numeric
 * to float8 does.  Before 0.5.1 job_usage has no reopened column, and picks
 * take no hints (d->hints).
 */
static SPIPlanPtr
usage_read_plan(bool reopened)
{
	Oid			range[2] = {INT8OID, INT8OID};
	SPIPlanPtr *plan = reopened ? &usage_plan : &usage_plan_050;

	if (*plan == NULL)
		*plan = allot_prepare(reopened
							  ? "SELECT workload_id, unsent, in_progress, mflops::int8, reopened"
							  "  FROM allot.job_usage WHERE workload_id BETWEEN $1 AND $2"
							  : "SELECT workload_id, unsent, in_progress, mflops::int8, 0::int8"
							  "  FROM allot.job_usage WHERE workload_id BETWEEN $1 AND $2",
							  2, range);
	return *plan;
}

/* One shard's row of allot.job_usage: (workload_id, unsent, in_progress, mflops, reopened). */
static void
add_usage_row(void *arg, const Datum *v, const bool *isnull)
{
	Dispatch   *d = (Dispatch *) arg;
	int			i = allot_find_job_workload(d->cache, DatumGetInt64(v[0]));

	if (i < 0)
		return;
	d->jw[i].unsent += DatumGetInt64(v[1]);
	d->jw[i].in_progress += DatumGetInt64(v[2]);
	d->jw[i].mflops += (double) DatumGetInt64(v[3]);
	d->jw[i].reopened += DatumGetInt64(v[4]);
}

/* Usage and unsent counts of the job workloads, and their apps' statistics. */
static void
read_job_workloads(Dispatch *d)
{
	const WorkloadCache *cache = d->cache;
	Datum	   *apps = palloc(sizeof(Datum) * (cache->n_apps + 1));
	bool	   *app_wanted = palloc0(sizeof(bool) * (cache->n_apps + 1));
	int			napps = 0;
	int64		lo,
				hi;
	Datum		args[2];
	AppStats   *stats;

	d->jw = palloc0(sizeof(JobWorkload) * (cache->n_job_workloads + 1));
	for (int i = 0; i < cache->n_job_workloads; i++)
	{
		JobWorkload *j = &d->jw[i];

		j->w = &cache->job_workloads[i];
		j->app = &cache->apps[j->w->app];
		j->blocked = palloc0(sizeof(bool) * (cache->n_resources + 1));
		j->excluded = is_excluded(&d->req, j->w->id);
		if (!j->excluded && !app_wanted[j->w->app])
		{
			app_wanted[j->w->app] = true;
			apps[napps++] = Int64GetDatum(j->app->id);
		}
	}
	if (cache->n_job_workloads == 0)
		return;

	/* Every job workload, excluded ones too: their work counts in the debts. */
	allot_workload_id_range(cache, true, &lo, &hi);
	args[0] = Int64GetDatum(lo);
	args[1] = Int64GetDatum(hi);
	d->hints = cache->job_usage_reopened;
	allot_execute_rows(usage_read_plan(d->hints), args, false, add_usage_row, d,
					   "allot.job_usage");
	if (d->fairness != FAIRNESS_CURRENT)
		read_credit(d);
	if (napps == 0)
		return;

	args[0] = id_array(apps, napps);
	if (SPI_execute_plan(app_stats_plan[d->cache->voices], args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.app");
	stats = palloc0(sizeof(AppStats) * (cache->n_apps + 1));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int			a = allot_find_app(cache, DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r],
																		   SPI_tuptable->tupdesc, 1, &isnull)));

		if (a >= 0)
			allot_app_stats_from_row(&stats[a], SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2);
	}
	for (int i = 0; i < cache->n_job_workloads; i++)
		d->jw[i].stats = stats[d->jw[i].w->app];
}

void
allot_read_for_picks(Dispatch *d)
{
	prepare_plans(d->cache->voices);
	read_host_versions(d);
	read_job_workloads(d);
}
