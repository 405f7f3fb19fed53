/*
 * dispatch.c: request_work, the BOINC-style front door (seeds 001, 003).
 *
 * One request is one path:
 *
 *   request in    parse and check the JSON; take the host's lock (a host's
 *                 requests are serialised) and read its coprocessors,
 *                 quotas and what it said of its app versions
 *   candidates    job workloads from the backend cache that have unsent jobs
 *                 and an app version usable on this host, with their usage
 *                 (peak MFLOPS of jobs in progress, from allot.job_usage)
 *   pick          per requested resource, coprocessors first and CPU last,
 *                 while the host still wants seconds or instances: the seed
 *                 000 selection (selection.c) chooses a workload, and one of
 *                 its unsent jobs is taken FOR UPDATE SKIP LOCKED, so that
 *                 concurrent requests never take the same job; each job
 *                 taken counts at once for the next pick
 *   commit        one statement marks the jobs in progress, charges quotas,
 *                 sets backoff hints and builds the reply; the statement
 *                 trigger on allot.job then updates each workload's usage
 *                 row once, in workload id order (no deadlocks)
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "lib/stringinfo.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "entry.h"
#include "credit.h"
#include "dispatch.h"
#include "fairness.h"
#include "host_queue.h"
#include "selection.h"
#include "work_request.h"
#include "workload_cache.h"

static SPIPlanPtr host_read_plan = NULL;
static SPIPlanPtr median_plan = NULL;
static SPIPlanPtr host_versions_plan = NULL;
static SPIPlanPtr host_version_plan = NULL;
static SPIPlanPtr usage_plan = NULL;
static SPIPlanPtr app_stats_plan = NULL;
static SPIPlanPtr take_plan = NULL;
static SPIPlanPtr commit_plan = NULL;

/* Fleet median of cpu_flops, recomputed at most every 5 minutes. */
static double fleet_median_flops = 0;
static TimestampTz fleet_median_at = 0;

#define DEFAULT_CPU_FLOPS 1e9	/* when no host states its FLOPS */

#define DISPATCH_HOST_QUERY \
	"SELECT h.os, h.cpu_flags, h.focus, h.threads, h.cpu_flops," \
	"       ARRAY(SELECT c.resource FROM allot.host_coproc c" \
	"              WHERE c.host_id = h.id ORDER BY c.resource)," \
	"       ARRAY(SELECT c.count::float8 FROM allot.host_coproc c" \
	"              WHERE c.host_id = h.id ORDER BY c.resource)," \
	"       ARRAY(SELECT c.peak_flops FROM allot.host_coproc c" \
	"              WHERE c.host_id = h.id ORDER BY c.resource)" \
	"  FROM allot.host h WHERE h.id = $1"

static void
prepare_plans(void)
{
	Oid			id_only[1] = {INT8OID};
	Oid			id_time[2] = {INT8OID, TIMESTAMPTZOID};
	Oid			id_id[2] = {INT8OID, INT8OID};
	Oid			ids[1] = {INT8ARRAYOID};
	Oid			take_args[3] = {INT8OID, INT8ARRAYOID, INT4OID};
	Oid			commit_args[22] = {
		INT8OID, TIMESTAMPTZOID,
		INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, TEXTARRAYOID,
		FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID,
		FLOAT8ARRAYOID, FLOAT8ARRAYOID, TIMESTAMPTZARRAYOID,
		TEXTARRAYOID, TEXTARRAYOID, INT4ARRAYOID,
		INT8ARRAYOID, FLOAT8ARRAYOID,
		INT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID,
		INT4OID
	};

	if (commit_plan != NULL)
		return;

	host_read_plan = allot_prepare(DISPATCH_HOST_QUERY, 1, id_only);
	median_plan = allot_prepare(
						  "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY cpu_flops)"
						  "  FROM allot.host WHERE cpu_flops IS NOT NULL", 0, NULL);
	host_versions_plan = allot_prepare(
								 "SELECT app_version_id, coalesce(seconds_per_app_unit, 0),"
								 "       coalesce(raw_flops_per_sec, 0), quota,"
								 "       CASE WHEN quota_day = ($2 AT TIME ZONE 'UTC')::date"
								 "            THEN jobs_today ELSE 0 END"
								 "  FROM allot.host_app_version WHERE host_id = $1",
								 2, id_time);
	host_version_plan = allot_prepare(
								"SELECT coalesce(seconds_per_app_unit, 0), coalesce(raw_flops_per_sec, 0)"
								"  FROM allot.host_app_version"
								" WHERE host_id = $1 AND app_version_id = $2",
								2, id_id);
	usage_plan = allot_prepare(
						 "SELECT workload_id, unsent, mflops, in_progress FROM allot.job_usage"
						 " WHERE workload_id = ANY ($1) AND unsent > 0",
						 1, ids);
	app_stats_plan = allot_prepare(
							 "SELECT id, n_reports, actual_au_mean, actual_au_m2, predicted_au_mean,"
							 "       predicted_au_m2, au_ratio_mean, au_ratio_m2"
							 "  FROM allot.app WHERE id = ANY ($1)",
							 1, ids);
	/* Unsent jobs of one workload that no one else holds, oldest first. */
	take_plan = allot_prepare(
							  "SELECT id, predicted_app_units FROM allot.job"
							  " WHERE workload_id = $1 AND state = 'unsent' AND id <> ALL ($2)"
							  " ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED",
							  3, take_args);

	/*
	 * All writes of a request, and its reply, in one statement.  $3..$13:
	 * the jobs taken; $14..$16: the requested resources, their status and
	 * jobs sent; $17, $18: apps of the jobs; $19..$21: what the client said
	 * of its app versions; $22: the daily quota of a new (host, version).
	 */
	commit_plan = allot_prepare(
						  "WITH picked AS ("
						  "  SELECT * FROM unnest($3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
						  "         WITH ORDINALITY AS p(job_id, workload_id, version_id, resource,"
						  "              ncpus, ncoprocs, predicted, est, bound, peak, deadline, ord)),"
						  " sent AS ("
						  "  UPDATE allot.job j"
						  "     SET state = 'in_progress', host_id = $1, app_version_id = p.version_id,"
						  "         sent_at = $2, deadline = p.deadline, est_secs = p.est,"
						  "         peak_flops_per_sec = p.peak, returned_at = NULL, outcome = NULL,"
						  "         app_units = NULL, elapsed_secs = NULL, raw_flops_per_sec = NULL"
						  "    FROM picked p WHERE j.id = p.job_id),"
						  " quota AS ("
						  "  INSERT INTO allot.host_app_version AS hv"
						  "         (host_id, app_version_id, seconds_per_app_unit, raw_flops_per_sec,"
						  "          quota, quota_day, jobs_today)"
						  "  SELECT $1, v.id, c.spau, c.raw, $22,"
						  "         ($2 AT TIME ZONE 'UTC')::date, coalesce(n.jobs, 0)"
						  "    FROM (SELECT DISTINCT x AS id FROM unnest($5 || $19) x) v"
						  "    LEFT JOIN (SELECT version_id, count(*)::int AS jobs FROM picked"
						  "                GROUP BY version_id) n ON n.version_id = v.id"
						  "    LEFT JOIN unnest($19, $20, $21) c(id, spau, raw) ON c.id = v.id"
						  "   ORDER BY v.id"
						  "  ON CONFLICT (host_id, app_version_id) DO UPDATE"
						  "     SET jobs_today = CASE WHEN hv.quota_day = excluded.quota_day"
						  "                           THEN hv.jobs_today + excluded.jobs_today"
						  "                           ELSE excluded.jobs_today END,"
						  "         quota_day = excluded.quota_day,"
						  "         seconds_per_app_unit = coalesce(excluded.seconds_per_app_unit,"
						  "                                         hv.seconds_per_app_unit),"
						  "         raw_flops_per_sec = coalesce(excluded.raw_flops_per_sec,"
						  "                                      hv.raw_flops_per_sec)),"
						  " backoff AS ("
						  "  INSERT INTO allot.host_resource AS hr (host_id, resource, backoff_secs)"
						  "  SELECT $1, r.name, CASE WHEN r.jobs > 0 THEN 0 ELSE 600 END"
						  "    FROM unnest($14, $16) r(name, jobs)"
						  "  ON CONFLICT (host_id, resource) DO UPDATE"
						  "     SET backoff_secs = CASE WHEN excluded.backoff_secs = 0 THEN 0"
						  "                             WHEN hr.backoff_secs = 0 THEN 600"
						  "                             ELSE least(hr.backoff_secs * 2, 86400) END"
						  "  RETURNING resource, backoff_secs),"
						  " seen AS (UPDATE allot.host SET last_seen = $2"
						  "           WHERE id = $1 AND (last_seen IS NULL"
						  "                              OR last_seen <= $2 - interval '1 minute'))"
						  "SELECT jsonb_build_object("
						  "  'jobs', coalesce((SELECT jsonb_agg(jsonb_build_object("
						  "            'job_id', p.job_id, 'workload_id', p.workload_id,"
						  "            'app_version_id', p.version_id, 'resource', p.resource,"
						  "            'ncpus', p.ncpus, 'ncoprocs', p.ncoprocs,"
						  "            'predicted_app_units', p.predicted, 'est_secs', p.est,"
						  "            'bound_secs', p.bound, 'peak_flops_per_sec', p.peak,"
						  "            'deadline', p.deadline) ORDER BY p.ord) FROM picked p), '[]'),"
						  "  'resources', coalesce((SELECT jsonb_object_agg(s.name, jsonb_build_object("
						  "            'status', s.status, 'backoff_secs', b.backoff_secs))"
						  "          FROM unnest($14, $15) s(name, status)"
						  "          JOIN backoff b ON b.resource = s.name), '{}'),"
						  "  'apps', coalesce((SELECT jsonb_object_agg(a.id::text, jsonb_build_object("
						  "            'est_flops_per_au', a.est)) FROM unnest($17, $18) a(id, est)), '{}'))",
						  22, commit_args);
}

/* ---------------------------------------------------------------------------
 * The host.
 * ------------------------------------------------------------------------- */

static NameList
text_array_names(Datum d)
{
	NameList	list;

	allot_text_list(d, &list);
	return list;
}

static double *
float8_array(Datum d, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	double	   *values;

	deconstruct_array(DatumGetArrayTypeP(d), FLOAT8OID, 8, FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &elems, &nulls, n);
	values = palloc(sizeof(double) * (*n > 0 ? *n : 1));
	for (int i = 0; i < *n; i++)
		values[i] = nulls[i] ? 0 : DatumGetFloat8(elems[i]);
	return values;
}

static double
fleet_median(void)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		isnull;

	if (fleet_median_flops > 0 &&
		now - fleet_median_at < 300 * USECS_PER_SEC)
		return fleet_median_flops;
	if (SPI_execute_plan(median_plan, NULL, NULL, true, 1) != SPI_OK_SELECT)
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
	NameList	coprocs;
	double	   *counts,
			   *peaks;
	int			n;

	prepare_plans();

	t = allot_read_host_row(host_read_plan, args, host_id, fresh, &d);
	memset(host, 0, sizeof(*host));
	host->id = host_id;
	v = SPI_getbinval(t, d, 1, &isnull);
	host->os = isnull ? NULL : TextDatumGetCString(v);
	host->cpu_flags = text_array_names(SPI_getbinval(t, d, 2, &isnull));
	host->focus = text_array_names(SPI_getbinval(t, d, 3, &isnull));
	host->threads = DatumGetInt32(SPI_getbinval(t, d, 4, &isnull));
	v = SPI_getbinval(t, d, 5, &isnull);
	host->cpu_flops = isnull ? 0 : DatumGetFloat8(v);
	coprocs = text_array_names(SPI_getbinval(t, d, 6, &isnull));
	counts = float8_array(SPI_getbinval(t, d, 7, &isnull), &n);
	peaks = float8_array(SPI_getbinval(t, d, 8, &isnull), &n);

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
	/* A missing cpu_flops counts as the fleet median (SPEC 3). */
	if (host->cpu_flops <= 0)
		host->cpu_flops = fleet_median();
}

static bool
has_name(const NameList *list, const char *name)
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
		if (!has_name(&host->cpu_flags, v->cpu_flags.names[i]))
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

static void
fill_app_stats(AppStats *s, HeapTuple t, TupleDesc d)
{
	bool		isnull;

	s->n = DatumGetInt64(SPI_getbinval(t, d, 2, &isnull));
	s->actual_au_mean = DatumGetFloat8(SPI_getbinval(t, d, 3, &isnull));
	s->actual_au_m2 = DatumGetFloat8(SPI_getbinval(t, d, 4, &isnull));
	s->predicted_au_mean = DatumGetFloat8(SPI_getbinval(t, d, 5, &isnull));
	s->predicted_au_m2 = DatumGetFloat8(SPI_getbinval(t, d, 6, &isnull));
	s->au_ratio_mean = DatumGetFloat8(SPI_getbinval(t, d, 7, &isnull));
	s->au_ratio_m2 = DatumGetFloat8(SPI_getbinval(t, d, 8, &isnull));
}

void
allot_read_app_stats(AppStats *stats, int64 app_id)
{
	Datum		id = Int64GetDatum(app_id);
	Datum		args[1];

	prepare_plans();
	memset(stats, 0, sizeof(*stats));
	args[0] = PointerGetDatum(construct_array(&id, 1, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	if (SPI_execute_plan(app_stats_plan, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.app");
	if (SPI_processed == 1)
		fill_app_stats(stats, SPI_tuptable->vals[0], SPI_tuptable->tupdesc);
}

void
allot_read_host_version(HostVersion *hv, int64 host_id, int64 version_id)
{
	Datum		args[2] = {Int64GetDatum(host_id), Int64GetDatum(version_id)};
	bool		isnull;

	prepare_plans();
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

/* ---------------------------------------------------------------------------
 * The request.
 * ------------------------------------------------------------------------- */

typedef struct ClientVersion
{
	int64		version_id;
	double		seconds_per_app_unit;	/* 0: not stated */
	double		raw_flops_per_sec;	/* 0: not stated */
} ClientVersion;

typedef struct Request
{
	ResourceRequest *rsc;		/* per cache resource */
	bool		shared_seconds; /* old client: one work_req_seconds for all */
	bool		no_gpus;
	bool		has_buffer;
	double		min_buf_secs;
	double		max_buf_secs;
	int64	   *exclude;
	int			n_exclude;
	ClientVersion *client;
	int			n_client;
} Request;

static void
bad_request(const char *fmt, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg(fmt, what),
			 errhint("See the request format of allot.request_work in the README.")));
}

static const char *
json_value_text(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			/* Cut at a character boundary: the message must stay valid text. */
			return psprintf("\"%.*s\"",
							pg_mbcliplen(v->val.string.val, v->val.string.len, 64),
							v->val.string.val);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(v->val.numeric)));
		case jbvBool:
			return v->val.boolean ? "true" : "false";
		case jbvBinary:
			return JsonContainerIsArray(v->val.binary.data) ? "an array" : "an object";
		default:
			return "an array or object";
	}
}

/* A non-negative finite number at `path`, at most `max`. */
static double
json_amount(const JsonbValue *v, const char *path, double max)
{
	double		d;

	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a non-negative number, not %s", path, json_value_text(v))));
	/* Huge numbers become infinity here, and are refused below by name. */
	d = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
										   NumericGetDatum(v->val.numeric)));
	if (!isfinite(d) || d < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a non-negative number, not %s", path, json_value_text(v))));
	if (d > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at most %g, not %s", path, max, json_value_text(v))));
	return d;
}

static int64
json_id(const JsonbValue *v, const char *path)
{
	double		d = json_amount(v, path, 9.2e18);

	if (d != floor(d))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a whole number, not %s", path, json_value_text(v))));
	return (int64) d;
}

static JsonbContainer *
json_object_at(const JsonbValue *v, const char *path)
{
	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object, not %s", path, json_value_text(v))));
	return v->val.binary.data;
}

static bool
json_key(JsonbContainer *c, const char *key, JsonbValue *out)
{
	return getKeyJsonValueFromContainer(c, key, strlen(key), out) != NULL;
}

/*
 * An object may hold only the keys its place in the request allows: a key
 * misspelt by a client would otherwise be ignored, and the request answered
 * as if it had asked for nothing.
 */
static void
json_only_keys(JsonbContainer *c, const char *path, const char *const *allowed)
{
	JsonbIterator *it = JsonbIteratorInit(c);
	JsonbValue	key;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		bool		known = false;
		StringInfoData list;

		if (tok != WJB_KEY)
			continue;
		for (int i = 0; allowed[i] != NULL && !known; i++)
			known = strlen(allowed[i]) == (size_t) key.val.string.len &&
				memcmp(allowed[i], key.val.string.val, key.val.string.len) == 0;
		if (known)
			continue;
		initStringInfo(&list);
		for (int i = 0; allowed[i] != NULL; i++)
			appendStringInfo(&list, "%s%s", i > 0 ? ", " : "", allowed[i]);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown key %s in %s", json_value_text(&key), path),
				 errhint("%s takes: %s.", path, list.data)));
	}
}

static const char *const request_keys[] = {
	"resources", "work_req_seconds", "no_gpus", "exclude", "buffer", "app_versions", NULL
};
static const char *const resource_keys[] = {
	"req_secs", "req_instances", "estimated_delay", NULL
};
static const char *const buffer_keys[] = {"min_secs", "max_secs", NULL};
static const char *const client_version_keys[] = {
	"seconds_per_app_unit", "raw_flops_per_sec", NULL
};

/* Walk the members of an object: calls back with each key and value. */
typedef void (*MemberFn) (const char *key, JsonbValue *value, void *arg);

static void
json_members(JsonbContainer *c, MemberFn fn, void *arg)
{
	JsonbIterator *it = JsonbIteratorInit(c);
	JsonbValue	key,
				value;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		char	   *name;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(key.val.string.val, key.val.string.len);
		if (JsonbIteratorNext(&it, &value, true) != WJB_VALUE)
			elog(ERROR, "malformed jsonb object");
		fn(name, &value, arg);
	}
}

typedef struct ParseState
{
	Request    *req;
	const WorkloadCache *cache;
} ParseState;

static void
parse_resource(const char *name, JsonbValue *value, void *arg)
{
	ParseState *ps = arg;
	int			r = allot_resource_index(ps->cache, name);
	JsonbContainer *obj;
	JsonbValue	v;
	ResourceRequest *rr;

	if (r < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown resource \"%s\" in request.resources", name),
				 errhint("Resource types are the rows of allot.resource.")));
	obj = json_object_at(value, psprintf("request.resources.%s", name));
	json_only_keys(obj, psprintf("request.resources.%s", name), resource_keys);
	rr = &ps->req->rsc[r];
	if (json_key(obj, "req_secs", &v))
		rr->secs = json_amount(&v, psprintf("request.resources.%s.req_secs", name),
							   ALLOT_MAX_SECS);
	if (json_key(obj, "req_instances", &v))
		rr->instances = json_amount(&v, psprintf("request.resources.%s.req_instances", name),
									ALLOT_MAX_INSTANCES);
	if (json_key(obj, "estimated_delay", &v))
		rr->delay = json_amount(&v, psprintf("request.resources.%s.estimated_delay", name),
								ALLOT_MAX_SECS);
	/* A resource is served only if something of it is asked for (seed 001). */
	rr->requested = rr->secs > 0 || rr->instances > 0;
}

static void
parse_client_version(const char *name, JsonbValue *value, void *arg)
{
	ParseState *ps = arg;
	ClientVersion *cv = &ps->req->client[ps->req->n_client];
	JsonbContainer *obj;
	JsonbValue	v;
	char	   *end;
	long long	id = strtoll(name, &end, 10);
	bool		known = false;

	/* Only the plain decimal form: "011" or " 11" would name 11 twice. */
	if (*name == '\0' || *end != '\0' || id <= 0 ||
		strcmp(name, psprintf("%lld", id)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request.app_versions keys must be app version ids, not \"%s\"", name)));
	for (int i = 0; i < ps->cache->n_versions; i++)
		if (ps->cache->versions[i].id == id)
			known = true;
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown app version %lld in request.app_versions", id)));
	obj = json_object_at(value, psprintf("request.app_versions.%s", name));
	json_only_keys(obj, psprintf("request.app_versions.%s", name), client_version_keys);
	memset(cv, 0, sizeof(*cv));
	cv->version_id = id;
	/* 0 means "not stated"; anything else must be in range. */
	if (json_key(obj, "seconds_per_app_unit", &v))
	{
		char	   *path = psprintf("request.app_versions.%s.seconds_per_app_unit", name);

		cv->seconds_per_app_unit = json_amount(&v, path, ALLOT_MAX_SECS);
		if (cv->seconds_per_app_unit != 0)
			allot_check_range(cv->seconds_per_app_unit, ALLOT_MIN_SECS, ALLOT_MAX_SECS, path);
	}
	if (json_key(obj, "raw_flops_per_sec", &v))
	{
		char	   *path = psprintf("request.app_versions.%s.raw_flops_per_sec", name);

		cv->raw_flops_per_sec = json_amount(&v, path, ALLOT_MAX_FLOPS);
		if (cv->raw_flops_per_sec != 0)
			allot_check_range(cv->raw_flops_per_sec, ALLOT_MIN_FLOPS, ALLOT_MAX_FLOPS, path);
	}
	ps->req->n_client++;
}

static void
parse_request(Request *req, Jsonb *json, const WorkloadCache *cache,
			  const DispatchHost *host)
{
	JsonbContainer *root = &json->root;
	JsonbValue	v;
	ParseState	ps = {req, cache};

	if (JB_ROOT_IS_SCALAR(json))
	{
		JsonbValue	scalar;

		JsonbExtractScalar(root, &scalar);
		bad_request("request must be a JSON object, not %s", json_value_text(&scalar));
	}
	if (!JB_ROOT_IS_OBJECT(json))
		bad_request("request must be a JSON object, not %s", "an array");
	json_only_keys(root, "request", request_keys);

	memset(req, 0, sizeof(*req));
	req->rsc = palloc0(sizeof(ResourceRequest) * (cache->n_resources + 1));
	for (int r = 0; r < cache->n_resources; r++)
		req->rsc[r].ninstances = r == cache->cpu ? host->threads : host->coproc_count[r];

	if (json_key(root, "no_gpus", &v))
	{
		if (v.type != jbvBool)
			bad_request("request.no_gpus must be true or false, not %s", json_value_text(&v));
		req->no_gpus = v.val.boolean;
	}
	if (json_key(root, "exclude", &v))
	{
		JsonbIterator *it;
		JsonbValue	e;
		JsonbIteratorToken tok;
		int			cap;

		if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
			bad_request("request.exclude must be an array of workload ids, not %s",
						json_value_text(&v));
		cap = JsonContainerSize(v.val.binary.data);
		req->exclude = palloc(sizeof(int64) * (cap > 0 ? cap : 1));
		it = JsonbIteratorInit(v.val.binary.data);
		while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
			if (tok == WJB_ELEM)
				req->exclude[req->n_exclude++] = json_id(&e, "request.exclude[]");
	}
	if (json_key(root, "app_versions", &v))
	{
		JsonbContainer *obj = json_object_at(&v, "request.app_versions");

		req->client = palloc0(sizeof(ClientVersion) * (JsonContainerSize(obj) + 1));
		json_members(obj, parse_client_version, &ps);
	}
	if (json_key(root, "resources", &v))
		json_members(json_object_at(&v, "request.resources"), parse_resource, &ps);
	else if (json_key(root, "work_req_seconds", &v))
	{
		/* An old client: one pool of seconds, any resource the host has. */
		double		secs = json_amount(&v, "request.work_req_seconds", ALLOT_MAX_SECS);

		req->shared_seconds = true;
		for (int r = 0; r < cache->n_resources; r++)
		{
			req->rsc[r].secs = secs;
			req->rsc[r].requested = secs > 0 && req->rsc[r].ninstances > 0;
		}
	}
	if (json_key(root, "buffer", &v))
	{
		JsonbContainer *obj = json_object_at(&v, "request.buffer");
		JsonbValue	b;

		json_only_keys(obj, "request.buffer", buffer_keys);
		req->has_buffer = true;
		if (json_key(obj, "min_secs", &b))
			req->min_buf_secs = json_amount(&b, "request.buffer.min_secs", ALLOT_MAX_SECS);
		if (json_key(obj, "max_secs", &b))
			req->max_buf_secs = json_amount(&b, "request.buffer.max_secs", ALLOT_MAX_SECS);
		if (req->max_buf_secs < req->min_buf_secs)
			req->max_buf_secs = req->min_buf_secs;
	}
	if (req->no_gpus)
		for (int r = 0; r < cache->n_resources; r++)
			if (r != cache->cpu)
				req->rsc[r].requested = false;
}

/* The buffer form: the server works out what the host needs (seed 002). */
static void
request_from_buffer(Request *req, const WorkloadCache *cache, int64 host_id,
					TimestampTz now)
{
	QueueResource *need = palloc0(sizeof(QueueResource) * (cache->n_resources + 1));

	allot_simulate_host_queue(cache, host_id, req->max_buf_secs, now, need);
	for (int r = 0; r < cache->n_resources; r++)
	{
		ResourceRequest *rr = &req->rsc[r];

		if (need[r].ninstances <= 0 || (req->no_gpus && r != cache->cpu))
			continue;
		/* Fetch only for resources that will not stay busy for min_buf. */
		if (need[r].saturated_secs >= req->min_buf_secs)
			continue;
		rr->secs = need[r].shortfall_secs;
		rr->instances = floor(need[r].idle_instances + 1e-9);
		rr->delay = need[r].busy_secs;
		rr->requested = rr->secs > 0 || rr->instances > 0;
	}
}

/* ---------------------------------------------------------------------------
 * Candidates and picks.
 * ------------------------------------------------------------------------- */

typedef struct JobWorkload
{
	const CachedWorkload *w;
	const CachedApp *app;
	bool		excluded;		/* in the request's exclude list */
	bool		exhausted;		/* no unsent job could be taken */
	int64	   *reserve_id;		/* jobs taken (locked) but not yet sent */
	double	   *reserve_predicted;
	int			n_reserve;
	bool	   *blocked;		/* per resource: refused by the deadline check */
	int64		unsent;
	int64		in_progress;	/* here and on every other host */
	double		mflops;			/* usage: peak MFLOPS in progress */
	double		rec;			/* recent estimated credit at now (recent) */
	DebtCell   *debt;			/* per resource (debt) */
	AppStats	stats;
} JobWorkload;

typedef struct Pick
{
	int64		job_id;
	int64		workload_id;
	int64		version_id;
	int			resource;
	double		ncpus;
	double		ncoprocs;
	double		predicted;
	double		est;
	double		bound;
	double		peak;
	TimestampTz deadline;		/* 0: none */
	int64		app_id;
	double		est_flops_per_au;
	double		credit;			/* est_secs x peak FLOPS */
} Pick;

typedef struct Dispatch
{
	const WorkloadCache *cache;
	DispatchHost host;
	Request		req;
	HostVersion *hv;			/* per cache version */
	JobWorkload *jw;			/* per cache job workload */
	Pick	   *picks;
	int			n_picks;
	int			max_picks;
	TimestampTz now;
	uint64		rng;
	int			fairness;		/* allot.fairness */
	double	   *share;			/* per job workload: its throughput (debt) */
	double	   *overall;		/* per job workload: overall debt (debt) */
} Dispatch;

static bool
is_excluded(const Request *req, int64 id)
{
	for (int i = 0; i < req->n_exclude; i++)
		if (req->exclude[i] == id)
			return true;
	return false;
}

static const ClientVersion *
client_version(const Request *req, int64 version_id)
{
	for (int i = 0; i < req->n_client; i++)
		if (req->client[i].version_id == version_id)
			return &req->client[i];
	return NULL;
}

static void
read_host_versions(Dispatch *d)
{
	Datum		args[2] = {Int64GetDatum(d->host.id), TimestampTzGetDatum(d->now)};

	d->hv = palloc0(sizeof(HostVersion) * (d->cache->n_versions + 1));
	/* A fresh snapshot: what an earlier request of this host committed while
	 * we waited for its row lock counts against the quota. */
	if (SPI_execute_plan(host_versions_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.host_app_version");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	td = SPI_tuptable->tupdesc;
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(t, td, 1, &isnull));

		for (int v = 0; v < d->cache->n_versions; v++)
			if (d->cache->versions[v].id == id)
			{
				d->hv[v].seconds_per_app_unit = DatumGetFloat8(SPI_getbinval(t, td, 2, &isnull));
				d->hv[v].raw_flops_per_sec = DatumGetFloat8(SPI_getbinval(t, td, 3, &isnull));
				d->hv[v].quota = DatumGetInt32(SPI_getbinval(t, td, 4, &isnull));
				d->hv[v].jobs_today = DatumGetInt32(SPI_getbinval(t, td, 5, &isnull));
			}
	}
	/* What the client states in this request takes precedence. */
	for (int v = 0; v < d->cache->n_versions; v++)
	{
		const ClientVersion *cv = client_version(&d->req, d->cache->versions[v].id);

		if (cv && cv->seconds_per_app_unit > 0)
			d->hv[v].seconds_per_app_unit = cv->seconds_per_app_unit;
		if (cv && cv->raw_flops_per_sec > 0)
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
	int64	   *ids = palloc(sizeof(int64) * (nw + 1));
	DebtCell   *cells = palloc0(sizeof(DebtCell) * (nw * nr + 1));
	CreditRow  *rows;
	int			nrows;

	d->share = palloc(sizeof(double) * (nw + 1));
	d->overall = palloc0(sizeof(double) * (nw + 1));
	for (int i = 0; i < nw; i++)
	{
		JobWorkload *j = &d->jw[i];

		ids[i] = j->w->id;
		d->share[i] = j->w->throughput;
		j->debt = &cells[i * nr];
		for (int k = 0; k < j->app->n_versions && j->unsent > 0; k++)
			j->debt[cache->versions[j->app->first_version + k].resource].eligible = true;
	}
	nrows = allot_read_credit(cache, ids, nw, d->now, &rows);
	for (int k = 0; k < nrows; k++)
		for (int i = 0; i < nw; i++)
			if (d->jw[i].w->id == rows[k].workload_id)
			{
				DebtCell   *c = &d->jw[i].debt[rows[k].resource];

				d->jw[i].rec += rows[k].rec;
				c->debt = rows[k].debt;
				c->sent = rows[k].sent;
				if (c->sent > 0)
					c->eligible = true;
				break;
			}
}

/* Usage and unsent counts of the job workloads, and their apps' statistics. */
static void
read_candidates(Dispatch *d)
{
	const WorkloadCache *cache = d->cache;
	Datum	   *ids = palloc(sizeof(Datum) * (cache->n_job_workloads + 1));
	Datum	   *apps = palloc(sizeof(Datum) * (cache->n_job_workloads + 1));
	int			n = 0,
				napps = 0;
	Datum		args[1];

	d->jw = palloc0(sizeof(JobWorkload) * (cache->n_job_workloads + 1));
	for (int i = 0; i < cache->n_job_workloads; i++)
	{
		JobWorkload *j = &d->jw[i];

		j->w = &cache->job_workloads[i];
		j->app = &cache->apps[j->w->app];
		j->blocked = palloc0(sizeof(bool) * (cache->n_resources + 1));
		/* Excluded ones too: their work and credit count in the debts. */
		ids[n++] = Int64GetDatum(j->w->id);
		j->excluded = is_excluded(&d->req, j->w->id);
		if (!j->excluded)
			apps[napps++] = Int64GetDatum(j->app->id);
	}
	if (n == 0)
		return;

	args[0] = PointerGetDatum(construct_array(ids, n, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	if (SPI_execute_plan(usage_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.job_usage");
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	t = SPI_tuptable->vals[r];
		TupleDesc	td = SPI_tuptable->tupdesc;
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(t, td, 1, &isnull));

		for (int i = 0; i < cache->n_job_workloads; i++)
			if (d->jw[i].w->id == id)
			{
				d->jw[i].unsent = DatumGetInt64(SPI_getbinval(t, td, 2, &isnull));
				d->jw[i].mflops = (double) DatumGetInt64(SPI_getbinval(t, td, 3, &isnull));
				d->jw[i].in_progress = DatumGetInt64(SPI_getbinval(t, td, 4, &isnull));
			}
	}
	if (d->fairness != FAIRNESS_CURRENT)
		read_credit(d);
	if (napps == 0)
		return;

	args[0] = PointerGetDatum(construct_array(apps, napps, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	if (SPI_execute_plan(app_stats_plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.app");
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		AppStats	s;
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r],
													 SPI_tuptable->tupdesc, 1, &isnull));

		fill_app_stats(&s, SPI_tuptable->vals[r], SPI_tuptable->tupdesc);
		for (int i = 0; i < cache->n_job_workloads; i++)
			if (d->jw[i].app->id == id)
				d->jw[i].stats = s;
	}
}

/* Projected FLOPS: what the client says it gets, else the peak. */
static double
projected_flops(const Dispatch *d, int v)
{
	if (d->hv[v].raw_flops_per_sec > 0)
		return d->hv[v].raw_flops_per_sec;
	return allot_version_peak_flops(&d->cache->versions[v], &d->host, d->cache);
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
			  double *est, double *bound, double *peak)
{
	EstimateInput in;

	*peak = allot_version_peak_flops(&d->cache->versions[v], &d->host, d->cache);
	in.seconds_per_app_unit = d->hv[v].seconds_per_app_unit;
	in.est_flops_per_au = j->app->est_flops_per_au;
	in.peak_flops = projected_flops(d, v);
	in.predicted_app_units = predicted;
	in.default_seconds_per_app_unit = allot_default_seconds_per_app_unit;
	allot_estimate(&in, &j->stats, est, bound);
}

/*
 * One unsent job of the workload; false when none is free.  Jobs are taken
 * `want` at a time, FOR UPDATE SKIP LOCKED, and kept in the workload's
 * reserve for the next picks of this request: a workload's usage barely
 * moves with one job, so the selection tends to choose it again.  Jobs left
 * in the reserve at the end stay unsent; their locks go with the
 * transaction.
 */
static bool
take_job(Dispatch *d, JobWorkload *j, int want, int64 *job_id, double *predicted)
{
	if (j->n_reserve == 0)
	{
		Datum	   *taken = palloc(sizeof(Datum) * (d->n_picks + 1));
		Datum		args[3];
		bool		isnull;

		for (int i = 0; i < d->n_picks; i++)
			taken[i] = Int64GetDatum(d->picks[i].job_id);
		args[0] = Int64GetDatum(j->w->id);
		args[1] = PointerGetDatum(construct_array(taken, d->n_picks, INT8OID, 8,
												  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		args[2] = Int32GetDatum(want);
		if (SPI_execute_plan(take_plan, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read allot.job");
		if (SPI_processed == 0)
			return false;
		j->reserve_id = palloc(sizeof(int64) * SPI_processed);
		j->reserve_predicted = palloc(sizeof(double) * SPI_processed);
		/* Kept newest first, so that the oldest is popped first. */
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			HeapTuple	t = SPI_tuptable->vals[SPI_processed - 1 - i];

			j->reserve_id[i] = DatumGetInt64(SPI_getbinval(t, SPI_tuptable->tupdesc, 1, &isnull));
			j->reserve_predicted[i] = DatumGetFloat8(SPI_getbinval(t, SPI_tuptable->tupdesc, 2, &isnull));
		}
		j->n_reserve = (int) SPI_processed;
	}
	j->n_reserve--;
	*job_id = j->reserve_id[j->n_reserve];
	*predicted = j->reserve_predicted[j->n_reserve];
	return true;
}

/* Put a job back on the reserve (it stays unsent, for another resource). */
static void
return_job(JobWorkload *j, int64 job_id, double predicted)
{
	j->reserve_id[j->n_reserve] = job_id;
	j->reserve_predicted[j->n_reserve] = predicted;
	j->n_reserve++;
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
 * One pick for resource r: choose a workload by the seed 000 selection over
 * FLOPS usage, take one of its jobs.  Returns false when no job can be sent
 * for r any more.
 */
static bool
pick_one(Dispatch *d, int r)
{
	const WorkloadCache *cache = d->cache;
	ResourceRequest *rr = &d->req.rsc[r];
	Candidate  *cand = palloc0(sizeof(Candidate) * (cache->n_job_workloads + 1));
	int		   *index = palloc(sizeof(int) * (cache->n_job_workloads + 1));
	int		   *version = palloc(sizeof(int) * (cache->n_job_workloads + 1));
	int		   *engine_counts = palloc(sizeof(int) * (cache->n_engines + 1));
	SelectionParams params;
	Selection	sel;

	for (;;)
	{
		int			n = 0;
		JobWorkload *j;
		DebtCell   *cell;
		const CachedVersion *cv;
		int64		job_id;
		double		predicted,
					est,
					bound,
					peak,
					usage;
		int			want;
		double		want_jobs;
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
			cand[n].workload_id = c->w->id;
			cand[n].priority = c->w->priority;
			cand[n].engine = c->w->engine;
			cand[n].focus = has_name(&d->host.focus, c->w->engine_name);
			cand[n].throughput = c->w->throughput;
			/* usage: peak MFLOPS in progress, or recent credit */
			cand[n].threads = d->fairness == FAIRNESS_RECENT ? c->rec : c->mflops;
			cand[n].focus_threads = 0;
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
		/* In double until it is small enough for an int. */
		want_jobs = rr->instances > 0 && usage > 0 ? ceil(rr->instances / usage) : 1;
		want = (int) Max(1, Min(want_jobs, Min(16, d->max_picks - d->n_picks)));
		if (!take_job(d, j, want, &job_id, &predicted))
		{
			/* Others hold or took them all: look elsewhere. */
			j->exhausted = true;
			continue;
		}
		estimate_pick(d, j, version[sel.chosen], predicted, &est, &bound, &peak);
		if (!allot_request_meets_deadline(rr, est, delay_bound(j->w)) &&
			!allot_request_may_probe(rr, j->in_progress))
		{
			/* It would miss its deadline here: leave it for an idler host. */
			return_job(j, job_id, predicted);
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
		p->credit = est * peak;

		/* The job counts at once for the next pick of this request. */
		j->mflops += rint(peak / 1e6);
		if (d->fairness == FAIRNESS_RECENT)
			j->rec += p->credit;
		else if (d->fairness == FAIRNESS_DEBT)
		{
			cell = &j->debt[r];
			cell->sent += p->credit;
			cell->eligible = true;
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

/* 'work', 'no_work' or 'unsupported' (seed 001's proposed 3-state reply). */
static const char *
resource_status(const Dispatch *d, int r)
{
	if (d->req.rsc[r].jobs > 0)
		return "work";
	for (int v = 0; v < d->cache->n_versions; v++)
		if (d->cache->versions[v].resource == r &&
			allot_version_runs_on(&d->cache->versions[v], &d->host, d->cache))
			return "no_work";
	return "unsupported";
}

static Datum
int8_array(const int64 *values, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(values[i]);
	return PointerGetDatum(construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static Datum
float8_datum_array(const double *values, const bool *nulls, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int i = 0; i < n; i++)
		d[i] = Float8GetDatum(values[i]);
	return PointerGetDatum(construct_md_array(d, (bool *) nulls, 1, dims, lbs, FLOAT8OID,
											  8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static Datum
text_datum_array(const char **values, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));

	for (int i = 0; i < n; i++)
		d[i] = CStringGetTextDatum(values[i]);
	return PointerGetDatum(construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* The one writing statement; returns the reply. */
static Datum
commit_request(Dispatch *d)
{
	const WorkloadCache *cache = d->cache;
	int			n = d->n_picks;
	int64	   *job = palloc(sizeof(int64) * (n + 1));
	int64	   *wl = palloc(sizeof(int64) * (n + 1));
	int64	   *ver = palloc(sizeof(int64) * (n + 1));
	const char **rsc = palloc(sizeof(char *) * (n + 1));
	double	   *ncpus = palloc(sizeof(double) * (n + 1));
	double	   *ncoprocs = palloc(sizeof(double) * (n + 1));
	double	   *predicted = palloc(sizeof(double) * (n + 1));
	double	   *est = palloc(sizeof(double) * (n + 1));
	double	   *bound = palloc(sizeof(double) * (n + 1));
	double	   *peak = palloc(sizeof(double) * (n + 1));
	Datum	   *deadline = palloc(sizeof(Datum) * (n + 1));
	bool	   *deadline_null = palloc0(sizeof(bool) * (n + 1));
	const char **req_names = palloc(sizeof(char *) * (cache->n_resources + 1));
	const char **req_status = palloc(sizeof(char *) * (cache->n_resources + 1));
	Datum	   *req_jobs = palloc(sizeof(Datum) * (cache->n_resources + 1));
	int			nreq = 0;
	int64	   *app = palloc(sizeof(int64) * (n + 1));
	double	   *app_est = palloc(sizeof(double) * (n + 1));
	bool	   *app_est_null = palloc0(sizeof(bool) * (n + 1));
	int			napps = 0;
	int64	   *cv_id = palloc(sizeof(int64) * (d->req.n_client + 1));
	double	   *cv_spau = palloc(sizeof(double) * (d->req.n_client + 1));
	bool	   *cv_spau_null = palloc0(sizeof(bool) * (d->req.n_client + 1));
	double	   *cv_raw = palloc(sizeof(double) * (d->req.n_client + 1));
	bool	   *cv_raw_null = palloc0(sizeof(bool) * (d->req.n_client + 1));
	Datum		args[22];
	int			dims[1];
	int			lbs[1] = {1};
	bool		isnull;
	Datum		reply;

	for (int i = 0; i < n; i++)
	{
		Pick	   *p = &d->picks[i];
		bool		seen = false;

		job[i] = p->job_id;
		wl[i] = p->workload_id;
		ver[i] = p->version_id;
		rsc[i] = cache->resources[p->resource];
		ncpus[i] = p->ncpus;
		ncoprocs[i] = p->ncoprocs;
		predicted[i] = p->predicted;
		est[i] = p->est;
		bound[i] = p->bound;
		peak[i] = p->peak;
		deadline[i] = TimestampTzGetDatum(p->deadline);
		deadline_null[i] = p->deadline == 0;
		for (int a = 0; a < napps; a++)
			if (app[a] == p->app_id)
				seen = true;
		if (!seen)
		{
			app[napps] = p->app_id;
			app_est[napps] = p->est_flops_per_au;
			app_est_null[napps] = p->est_flops_per_au <= 0;
			napps++;
		}
	}
	for (int r = 0; r < cache->n_resources; r++)
	{
		/*
		 * The reply, and the backoff, cover every resource the request asked
		 * for and that still wanted work when its turn came.
		 */
		if (!d->req.rsc[r].tried)
			continue;
		req_names[nreq] = cache->resources[r];
		req_status[nreq] = resource_status(d, r);
		req_jobs[nreq] = Int32GetDatum(d->req.rsc[r].jobs);
		nreq++;
	}
	for (int i = 0; i < d->req.n_client; i++)
	{
		cv_id[i] = d->req.client[i].version_id;
		cv_spau[i] = d->req.client[i].seconds_per_app_unit;
		cv_spau_null[i] = cv_spau[i] <= 0;
		cv_raw[i] = d->req.client[i].raw_flops_per_sec;
		cv_raw_null[i] = cv_raw[i] <= 0;
	}

	args[0] = Int64GetDatum(d->host.id);
	args[1] = TimestampTzGetDatum(d->now);
	args[2] = int8_array(job, n);
	args[3] = int8_array(wl, n);
	args[4] = int8_array(ver, n);
	args[5] = text_datum_array(rsc, n);
	args[6] = float8_datum_array(ncpus, NULL, n);
	args[7] = float8_datum_array(ncoprocs, NULL, n);
	args[8] = float8_datum_array(predicted, NULL, n);
	args[9] = float8_datum_array(est, NULL, n);
	args[10] = float8_datum_array(bound, NULL, n);
	args[11] = float8_datum_array(peak, NULL, n);
	dims[0] = n;
	args[12] = PointerGetDatum(construct_md_array(deadline, deadline_null, 1, dims, lbs,
												  TIMESTAMPTZOID, 8, FLOAT8PASSBYVAL,
												  TYPALIGN_DOUBLE));
	args[13] = text_datum_array(req_names, nreq);
	args[14] = text_datum_array(req_status, nreq);
	args[15] = PointerGetDatum(construct_array(req_jobs, nreq, INT4OID, 4, true, TYPALIGN_INT));
	args[16] = int8_array(app, napps);
	args[17] = float8_datum_array(app_est, app_est_null, napps);
	args[18] = int8_array(cv_id, d->req.n_client);
	args[19] = float8_datum_array(cv_spau, cv_spau_null, d->req.n_client);
	args[20] = float8_datum_array(cv_raw, cv_raw_null, d->req.n_client);
	args[21] = Int32GetDatum(allot_daily_quota);

	/* Credit rows first: the fold locks them before anything else too. */
	if (d->fairness != FAIRNESS_CURRENT)
	{
		const char **names = palloc(sizeof(char *) * (n + 1));
		double	   *credit = palloc(sizeof(double) * (n + 1));

		for (int i = 0; i < n; i++)
		{
			names[i] = cache->resources[d->picks[i].resource];
			credit[i] = d->picks[i].credit;
		}
		allot_add_credit(wl, names, credit, n, d->now, d->fairness);
	}

	if (SPI_execute_plan(commit_plan, args, NULL, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not record the work sent to host %lld", (long long) d->host.id);
	reply = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return SPI_datumTransfer(reply, false, -1);
}

PG_FUNCTION_INFO_V1(allot_request_work);

/*
 * request_work(host_id, request, now, seed): fill the host's requests with
 * jobs.  See README "request_work" for the request and reply formats.
 */
Datum
allot_request_work(PG_FUNCTION_ARGS)
{
	Dispatch	d;
	int64		host_id;
	Jsonb	   *request;
	Datum		reply;

	allot_check_settings();
	allot_require_arg(fcinfo, 0, "host_id");
	allot_require_arg(fcinfo, 1, "request");
	host_id = PG_GETARG_INT64(0);
	request = PG_GETARG_JSONB_P(1);
	memset(&d, 0, sizeof(d));
	d.now = allot_now_arg(fcinfo, 2);
	if (PG_ARGISNULL(3))
	{
		if (!pg_strong_random(&d.rng, sizeof(d.rng)))
			d.rng = (uint64) random() << 32 ^ (uint64) random();
	}
	else
		d.rng = (uint64) PG_GETARG_INT64(3);

	SPI_connect();
	prepare_plans();
	allot_begin_host_request(host_id, "job");
	d.cache = allot_workload_cache();
	d.fairness = allot_fairness_mode();
	if (d.cache->n_resources == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("request_work needs allot 0.2.0 or later"),
				 errhint("Run ALTER EXTENSION allot UPDATE.")));
	allot_read_dispatch_host(&d.host, d.cache, host_id, true);
	parse_request(&d.req, request, d.cache, &d.host);
	if (d.req.has_buffer && !d.req.shared_seconds &&
		!json_key(&request->root, "resources", &(JsonbValue) {0}))
		request_from_buffer(&d.req, d.cache, host_id, d.now);
	read_host_versions(&d);
	read_candidates(&d);

	d.max_picks = allot_max_jobs_per_request;
	d.picks = palloc(sizeof(Pick) * (d.max_picks + 1));

	/* Coprocessors first (they are faster, hence more important), CPU last. */
	for (int r = 0; r < d.cache->n_resources; r++)
	{
		/* An old client's shared seconds may run out before r's turn. */
		d.req.rsc[r].tried = allot_request_needs(&d.req.rsc[r]);
		while (d.n_picks < d.max_picks && allot_request_needs(&d.req.rsc[r]) &&
			   pick_one(&d, r))
			CHECK_FOR_INTERRUPTS();
	}

	reply = commit_request(&d);
	SPI_finish();
	PG_RETURN_DATUM(reply);
}
