/*
 * host_queue_glue.c: SQL glue for the seed 002 simulation (host_queue.c).
 *
 * The jobs in progress on a host, with the estimate they were sent with, are
 * replayed in FIFO order of sending per resource: what is idle now, how many
 * instance-seconds will stand idle before max_buf, how long every instance
 * stays busy, and which jobs will miss their deadlines.  request_work's
 * buffer form turns this into a request.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "entry.h"
#include "dispatch_host.h"
#include "host_queue_glue.h"
#include "host_queue.h"
#include "workload_cache.h"

static SPIPlanPtr jobs_plan = NULL;

void
allot_simulate_host_queue(const WorkloadCache *cache, int64 host_id,
						  double max_buf_secs, TimestampTz now, QueueResource *out)
{
	DispatchHost host;
	Datum		args[1] = {Int64GetDatum(host_id)};
	QueueJob   *jobs;
	double	   *scratch;
	int			n = 0;

	if (jobs_plan == NULL)
	{
		Oid			types[1] = {INT8OID};

		jobs_plan = SPI_prepare(
								"SELECT v.resource,"
								"       CASE WHEN v.resource = 'cpu' THEN v.ncpus ELSE v.ncoprocs END,"
								"       coalesce(j.est_secs, 0), j.sent_at, j.deadline"
								"  FROM allot.job j JOIN allot.app_version v ON v.id = j.app_version_id"
								" WHERE j.host_id = $1 AND j.state = 'in_progress'",
								1, types);
		if (jobs_plan == NULL)
			elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		SPI_keepplan(jobs_plan);
	}

	allot_read_dispatch_host(&host, cache, host_id, false);
	for (int r = 0; r < cache->n_resources; r++)
	{
		memset(&out[r], 0, sizeof(QueueResource));
		out[r].ninstances = r == cache->cpu ? host.threads : host.coproc_count[r];
	}

	if (SPI_execute_plan(jobs_plan, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the jobs of host %lld", (long long) host_id);
	jobs = palloc(sizeof(QueueJob) * (SPI_processed + 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull,
					no_sent_at,
					no_deadline;
		double		est;
		TimestampTz sent_at,
					deadline;

		jobs[n].resource = allot_resource_index(cache,
												TextDatumGetCString(SPI_getbinval(t, d, 1, &isnull)));
		jobs[n].usage = DatumGetFloat8(SPI_getbinval(t, d, 2, &isnull));
		est = DatumGetFloat8(SPI_getbinval(t, d, 3, &isnull));
		sent_at = DatumGetTimestampTz(SPI_getbinval(t, d, 4, &no_sent_at));
		deadline = DatumGetTimestampTz(SPI_getbinval(t, d, 5, &no_deadline));
		jobs[n].remaining_secs = no_sent_at ? 0 : Max(est - allot_secs_between(sent_at, now), 0);
		jobs[n].deadline_secs = no_deadline ? 1e300 : allot_secs_between(now, deadline);
		jobs[n].order = no_sent_at ? 0 : allot_secs_between(now, sent_at);
		n++;
	}
	scratch = palloc(sizeof(double) * (ALLOT_HOST_QUEUE_SCRATCH(n) + 1));
	allot_host_queue(jobs, n, out, cache->n_resources, max_buf_secs, scratch);
}

static double
buffer_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	double		v;

	allot_require_arg(fcinfo, argno, name);
	v = PG_GETARG_FLOAT8(argno);
	if (!isfinite(v) || v < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a non-negative finite number of seconds, not %g", name, v)));
	/* Beyond this, shortfalls (instances x seconds) stop being finite. */
	if (v > ALLOT_MAX_SECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at most %g seconds, not %g", name, ALLOT_MAX_SECS, v)));
	return v;
}

PG_FUNCTION_INFO_V1(allot_host_queue_sql);

/*
 * host_queue(host_id, min_buf_secs, max_buf_secs, now): one row per
 * resource the host has.  min_buf_secs is checked but only request_work
 * uses it (to decide which resources to ask for).
 */
Datum
allot_host_queue_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Tuplestorestate *store;
	TupleDesc	desc;
	MemoryContext old;
	int64		host_id;
	double		max_buf;
	TimestampTz now;
	const WorkloadCache *cache;
	QueueResource *out;

	allot_check_settings();
	allot_require_arg(fcinfo, 0, "host_id");
	host_id = PG_GETARG_INT64(0);
	(void) buffer_arg(fcinfo, 1, "min_buf_secs");
	max_buf = buffer_arg(fcinfo, 2, "max_buf_secs");
	now = allot_now_arg(fcinfo, 3);

	store = allot_materialize(fcinfo, &desc);

	SPI_connect();
	cache = allot_workload_cache();
	if (cache->n_resources == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("host_queue needs allot 0.2.0 or later"),
				 errhint("Run ALTER EXTENSION allot UPDATE.")));
	out = palloc0(sizeof(QueueResource) * (cache->n_resources + 1));
	allot_simulate_host_queue(cache, host_id, max_buf, now, out);

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	for (int r = 0; r < cache->n_resources; r++)
	{
		Datum		values[7];
		bool		nulls[7] = {false};

		if (out[r].ninstances <= 0)
			continue;
		values[0] = CStringGetTextDatum(cache->resources[r]);
		values[1] = Float8GetDatum(out[r].ninstances);
		values[2] = Float8GetDatum(out[r].idle_instances);
		values[3] = Float8GetDatum(out[r].shortfall_secs);
		values[4] = Float8GetDatum(out[r].saturated_secs);
		values[5] = Float8GetDatum(out[r].busy_secs);
		values[6] = Int32GetDatum(out[r].deadline_misses);
		tuplestore_putvalues(store, desc, values, nulls);
	}
	MemoryContextSwitchTo(old);
	SPI_finish();
	return (Datum) 0;
}
