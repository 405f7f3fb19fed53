/*
 * dispatch_host.c: a host as job dispatch sees it (see dispatch_host.h).
 *
 * A host that states no CPU FLOPS counts as the fleet's median, which is
 * computed at most every 5 minutes per backend: it is the only state here
 * outside the tables, and it is harmless when hosts state their FLOPS.
 * From 0.7.0 that median is the proven hosts' (the resource's
 * median_flops), or the operator's hosts' before there is one: hosts that
 * registered themselves cannot move it.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "dispatch_host.h"
#include "entry.h"

#define DEFAULT_CPU_FLOPS 1e9	/* when no host states its FLOPS */

static SPIPlanPtr host_read_plan[2] = {NULL, NULL};	/* before 0.7.0; with voices */
static SPIPlanPtr median_plan[2] = {NULL, NULL};
static SPIPlanPtr app_stats_plan[2] = {NULL, NULL};
static SPIPlanPtr host_version_plan = NULL;

/* Fleet median of cpu_flops, recomputed at most every 5 minutes. */
static double fleet_median_flops = 0;
static TimestampTz fleet_median_at = 0;

/* The host and its coprocessors, by resource name, in one index scan each. */
#define HOST_READ_SQL(extra_columns, extra_joins) \
	"SELECT h.os, h.cpu_flags, h.focus, h.threads, h.cpu_flops," \
	"       c.resources, c.counts, c.peaks" extra_columns \
	"  FROM allot.host h" extra_joins \
	"  LEFT JOIN LATERAL (" \
	"       SELECT array_agg(resource ORDER BY resource) AS resources," \
	"              array_agg(count::float8 ORDER BY resource) AS counts," \
	"              array_agg(peak_flops ORDER BY resource) AS peaks" \
	"         FROM allot.host_coproc WHERE host_id = h.id) c ON true" \
	" WHERE h.id = $1"

static void
prepare_plans(bool voices)
{
	Oid			id_only[1] = {INT8OID};
	Oid			id_id[2] = {INT8OID, INT8OID};

	if (host_read_plan[voices] == NULL)
	{
		/*
		 * From 0.7.0 also its voice, whether the operator vouches for it
		 * (added it, or trusts its owner), whether it has proven work, and
		 * its record (reliability.h).
		 */
		host_read_plan[voices] = allot_prepare(voices ?
											   HOST_READ_SQL(",  CASE WHEN h.owner_id IS NULL THEN h.id ELSE -h.owner_id END,"
															 "    h.registered_at IS NULL OR coalesce(o.trusted, false),"
															 "    r.proven_at IS NOT NULL,"
															 "    coalesce(r.consecutive_valid, 0), coalesce(r.error_rate, 0),"
															 "    r.backoff_until, coalesce(r.error_streak, 0)",
															 "  LEFT JOIN allot.owner o ON o.id = h.owner_id"
															 "  LEFT JOIN allot.host_reliability r ON r.host_id = h.id") :
											   HOST_READ_SQL("", ""),
											   1, id_only);
		median_plan[voices] = allot_prepare(voices ?
											"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY cpu_flops)"
											"  FROM allot.host WHERE cpu_flops IS NOT NULL AND registered_at IS NULL" :
											"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY cpu_flops)"
											"  FROM allot.host WHERE cpu_flops IS NOT NULL",
											0, NULL);
	}
	if (app_stats_plan[voices] == NULL)
		app_stats_plan[voices] = allot_prepare(psprintf("SELECT %s%s FROM allot.app WHERE id = $1",
														ALLOT_APP_STATS_COLUMNS(voices)),
											   1, id_only);
	if (host_version_plan != NULL)
		return;
	host_version_plan = allot_prepare(
									  "SELECT coalesce(seconds_per_app_unit, 0), coalesce(raw_flops_per_sec, 0)"
									  "  FROM allot.host_app_version"
									  " WHERE host_id = $1 AND app_version_id = $2",
									  2, id_id);
}

static double *
float8_array(Datum d, bool isnull, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	double	   *values;

	*n = 0;
	if (isnull)
		return NULL;
	deconstruct_array(DatumGetArrayTypeP(d), FLOAT8OID, 8, FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &elems, &nulls, n);
	values = palloc(sizeof(double) * (*n > 0 ? *n : 1));
	for (int i = 0; i < *n; i++)
		values[i] = nulls[i] ? 0 : DatumGetFloat8(elems[i]);
	return values;
}

/*
 * The CPU FLOPS of a host that states none: the proven hosts' median (the
 * cpu resource's median_flops) once there is one, else the median of the
 * hosts' own figures (from 0.7.0, of the hosts the operator added), else
 * allot's default, 1e9.
 */
static double
fleet_median(const WorkloadCache *cache)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		isnull;

	if (cache->voices && cache->cpu >= 0 && cache->median_flops[cache->cpu] > 0)
		return cache->median_flops[cache->cpu];
	if (fleet_median_flops > 0 &&
		now - fleet_median_at < 300 * USECS_PER_SEC)
		return fleet_median_flops;
	if (SPI_execute_plan(median_plan[cache->voices], NULL, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.host");
	fleet_median_flops = DEFAULT_CPU_FLOPS;
	if (SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			fleet_median_flops = DatumGetFloat8(d);
	}
	fleet_median_at = now;
	return fleet_median_flops;
}

/*
 * What one instance of resource r counts for at most on this host, or 0
 * for no bound (dispatch_host.h): 0.6.0 bounded every claim by 10 times
 * the median, and nothing before there was one.  From 0.7.0 a host that
 * has proven nothing counts for at most the median, or before there is
 * one the configured default; a proven host for at most 10 times the
 * median, and one the operator vouches for without a bound while there is
 * none (its figures are the operator's).
 */
static double
instance_bound(const WorkloadCache *cache, const DispatchHost *host, int r)
{
	double		median = cache->median_flops[r];
	double		fallback = r == cache->cpu ? allot_unproven_cpu_flops : allot_unproven_coproc_flops;

	if (!cache->voices)
		return ALLOT_PLAUSIBLE_SPREAD * median;
	if (!host->proven)
		return median > 0 ? median : fallback;
	if (median > 0)
		return ALLOT_PLAUSIBLE_SPREAD * median;
	return host->trust.vouched ? 0 : ALLOT_PLAUSIBLE_SPREAD * fallback;
}

/*
 * Read the host; errors if it does not exist.  To dispatch (fresh), after
 * allot_begin_host_request, under a snapshot taken after it.
 */
void
allot_read_dispatch_host(DispatchHost *host, const WorkloadCache *cache,
						 int64 host_id, bool fresh)
{
	Datum		args[1] = {Int64GetDatum(host_id)};
	HeapTuple	t;
	TupleDesc	d;
	bool		isnull;
	Datum		v;
	NameList	coprocs = {NULL, 0};
	double	   *counts,
			   *peaks;
	int			n;

	prepare_plans(cache->voices);
	t = allot_read_host_row(host_read_plan[cache->voices], args, host_id, fresh, &d);
	memset(host, 0, sizeof(*host));
	host->id = host_id;
	host->voice = host_id;
	host->proven = true;		/* before 0.7.0 every claim counted alike */
	if (cache->voices)
	{
		host->voice = DatumGetInt64(SPI_getbinval(t, d, 9, &isnull));
		host->trust.vouched = DatumGetBool(SPI_getbinval(t, d, 10, &isnull));
		host->proven = host->trust.vouched || DatumGetBool(SPI_getbinval(t, d, 11, &isnull));
		host->trust.consecutive_valid = DatumGetInt32(SPI_getbinval(t, d, 12, &isnull));
		host->trust.error_rate = DatumGetFloat8(SPI_getbinval(t, d, 13, &isnull));
		v = SPI_getbinval(t, d, 14, &isnull);
		host->backoff_until = isnull ? 0 : DatumGetTimestampTz(v);
		host->error_streak = DatumGetInt32(SPI_getbinval(t, d, 15, &isnull));
	}
	v = SPI_getbinval(t, d, 1, &isnull);
	host->os = isnull ? NULL : TextDatumGetCString(v);
	allot_text_list(SPI_getbinval(t, d, 2, &isnull), &host->cpu_flags);
	allot_text_list(SPI_getbinval(t, d, 3, &isnull), &host->focus);
	host->threads = DatumGetInt32(SPI_getbinval(t, d, 4, &isnull));
	v = SPI_getbinval(t, d, 5, &isnull);
	host->cpu_flops = isnull ? 0 : DatumGetFloat8(v);
	v = SPI_getbinval(t, d, 6, &isnull);
	if (!isnull)
		allot_text_list(v, &coprocs);
	v = SPI_getbinval(t, d, 7, &isnull);
	counts = float8_array(v, isnull, &n);
	v = SPI_getbinval(t, d, 8, &isnull);
	peaks = float8_array(v, isnull, &n);

	host->coproc_count = palloc0(sizeof(double) * (cache->n_resources + 1));
	host->coproc_peak = palloc0(sizeof(double) * (cache->n_resources + 1));
	for (int i = 0; i < coprocs.count; i++)
	{
		int			r = allot_resource_index(cache, coprocs.names[i]);

		if (r >= 0)
		{
			host->coproc_count[r] = counts[i];
			host->coproc_peak[r] = peaks[i];
		}
	}
	/* A missing cpu_flops counts as the fleet median. */
	if (host->cpu_flops <= 0)
		host->cpu_flops = fleet_median(cache);

	/* A claim counts within what the farm makes plausible (0.6.0 on). */
	for (int r = 0; r < cache->n_resources; r++)
	{
		double		bound = instance_bound(cache, host, r);
		double	   *flops = r == cache->cpu ? &host->cpu_flops : &host->coproc_peak[r];

		if (bound > 0 && *flops > bound)
			*flops = bound;
	}
}

bool
allot_has_name(const NameList *list, const char *name)
{
	for (int i = 0; i < list->count; i++)
		if (strcmp(list->names[i], name) == 0)
			return true;
	return false;
}

/* Platform, CPU flags and device counts allow the version on this host. */
bool
allot_version_runs_on(const CachedVersion *v, const DispatchHost *host,
					  const WorkloadCache *cache)
{
	if (v->resource < 0)
		return false;
	if (v->platform != NULL && (host->os == NULL || strcmp(v->platform, host->os) != 0))
		return false;
	for (int i = 0; i < v->cpu_flags.count; i++)
		if (!allot_has_name(&host->cpu_flags, v->cpu_flags.names[i]))
			return false;
	if (v->ncpus > host->threads)
		return false;
	if (v->resource != cache->cpu && v->ncoprocs > host->coproc_count[v->resource])
		return false;
	return true;
}

/* peak_flops_per_sec (seed 004): device counts times their peak FLOPS. */
double
allot_version_peak_flops(const CachedVersion *v, const DispatchHost *host,
						 const WorkloadCache *cache)
{
	double		peak = v->ncpus * host->cpu_flops;

	if (v->resource != cache->cpu && v->resource >= 0)
		peak += v->ncoprocs * host->coproc_peak[v->resource];
	return peak;
}

/*
 * An app's statistics from a row holding n_reports, actual_au_mean,
 * actual_au_m2, predicted_au_mean, predicted_au_m2, au_ratio_mean and
 * au_ratio_m2 from column `first` on, and au_ratio_tail after them when
 * the row has it (0.7.0).
 */
void
allot_app_stats_from_row(AppStats *s, HeapTuple t, TupleDesc d, int first)
{
	bool		isnull;

	s->n = DatumGetInt64(SPI_getbinval(t, d, first, &isnull));
	s->actual_au_mean = DatumGetFloat8(SPI_getbinval(t, d, first + 1, &isnull));
	s->actual_au_m2 = DatumGetFloat8(SPI_getbinval(t, d, first + 2, &isnull));
	s->predicted_au_mean = DatumGetFloat8(SPI_getbinval(t, d, first + 3, &isnull));
	s->predicted_au_m2 = DatumGetFloat8(SPI_getbinval(t, d, first + 4, &isnull));
	s->au_ratio_mean = DatumGetFloat8(SPI_getbinval(t, d, first + 5, &isnull));
	s->au_ratio_m2 = DatumGetFloat8(SPI_getbinval(t, d, first + 6, &isnull));
	s->au_ratio_tail = d->natts > first + 6 ?
		DatumGetFloat8(SPI_getbinval(t, d, first + 7, &isnull)) : 0;
}

void
allot_read_app_stats(AppStats *stats, int64 app_id, bool voices)
{
	Datum		args[1] = {Int64GetDatum(app_id)};

	prepare_plans(voices);
	memset(stats, 0, sizeof(*stats));
	if (SPI_execute_plan(app_stats_plan[voices], args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.app");
	if (SPI_processed == 1)
		allot_app_stats_from_row(stats, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

void
allot_read_host_version(HostVersion *hv, int64 host_id, int64 version_id)
{
	Datum		args[2] = {Int64GetDatum(host_id), Int64GetDatum(version_id)};
	bool		isnull;

	prepare_plans(false);
	memset(hv, 0, sizeof(*hv));
	if (SPI_execute_plan(host_version_plan, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.host_app_version");
	if (SPI_processed == 1)
	{
		hv->seconds_per_app_unit = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0],
																SPI_tuptable->tupdesc, 1, &isnull));
		hv->raw_flops_per_sec = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0],
															 SPI_tuptable->tupdesc, 2, &isnull));
	}
}
