/*
 * dispatch.c: request_work, the BOINC-style front door (seeds 001, 003).
 *
 * One request is one path through the stages of dispatch.h: the host's
 * locks (entry.h), the backend cache of workloads, apps and versions, then
 * parse, read, pick and commit.
 */
#include "postgres.h"

#include "fmgr.h"
#include "port.h"
#include "utils/jsonb.h"

#include "credit.h"
#include "dispatch.h"
#include "entry.h"

PG_FUNCTION_INFO_V1(allot_request_work);

/*
 * request_work(host_id, request, now, seed): fill the host's requests with
 * jobs.  See docs/functions.md "request_work" for the request and reply formats.
 */
Datum
allot_request_work(PG_FUNCTION_ARGS)
{
	Dispatch	d;
	int64		host_id;
	Jsonb	   *request;
	Datum		reply;

	allot_check_settings();
	allot_require_writable("allot.request_work");
	allot_require_arg(fcinfo, 0, "host_id");
	allot_require_arg(fcinfo, 1, "request");
	host_id = PG_GETARG_INT64(0);
	request = PG_GETARG_JSONB_P(1);
	memset(&d, 0, sizeof(d));
	d.now = allot_now_arg(fcinfo, 2);
	d.rng = PG_ARGISNULL(3) ? allot_random_seed() : (uint64) PG_GETARG_INT64(3);

	SPI_connect();
	allot_begin_host_request(host_id, "job");
	d.cache = allot_workload_cache();
	d.fairness = allot_fairness_mode();
	if (d.cache->n_resources == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("request_work needs allot 0.2.0 or later"),
				 errhint("Run ALTER EXTENSION allot UPDATE.")));
	allot_read_dispatch_host(&d.host, d.cache, host_id, true);

	allot_parse_request(&d, request);
	allot_read_for_picks(&d);
	allot_pick_jobs(&d);
	reply = allot_commit_request(&d);

	SPI_finish();
	PG_RETURN_DATUM(reply);
}
