/*
 * dispatch_commit.c: request_work's one writing statement and its reply
 * (dispatch.h, stage "commit").
 *
 * Credit first (allot.fairness = recent or debt; credit.c), in the order the
 * transitioner's fold takes those rows.  Then one statement: the jobs taken
 * go in progress on the host with their estimates and deadlines, the host's
 * quotas and what it said of its versions are kept, each requested
 * resource's backoff hint is set, and the reply is built from what was
 * written.  The statement trigger on allot.job then adds the request's
 * usage to this backend's shard of each workload's allot.job_usage row, so
 * concurrent requests do not queue behind each other's usage rows.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "credit.h"
#include "dispatch.h"
#include "entry.h"
#include "reliability.h"

/* Why a host backing off gets nothing: $25 its failures in a row. */
#define BACKOFF_REASON_SQL \
	"CASE WHEN $25 = 1 THEN 'its last task failed'" \
	" ELSE pg_catalog.format('its last %%s tasks failed', $25) END"

/* Plans per schema: before 0.6.0; with sendings; with replicas (0.7.0). */
static SPIPlanPtr commit_plan[3] = {NULL, NULL, NULL};
static SPIPlanPtr voice_plan = NULL;
static SPIPlanPtr voice_history_plan = NULL;

static void
prepare_plans(int version)
{
	bool		sendings = version > 0;
	Oid			commit_args[25] = {
		INT8OID, TIMESTAMPTZOID,
		INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, TEXTARRAYOID,
		FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID,
		FLOAT8ARRAYOID, FLOAT8ARRAYOID, TIMESTAMPTZARRAYOID,
		TEXTARRAYOID, TEXTARRAYOID, INT4ARRAYOID,
		INT8ARRAYOID, FLOAT8ARRAYOID,
		INT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID,
		INT4OID, BOOLARRAYOID, FLOAT8OID, INT4OID
	};

	if (commit_plan[version] != NULL)
		return;

	/*
	 * All writes of a request, and its reply, in one statement.  $3..$13:
	 * the jobs taken; $14..$16: the requested resources, their status and
	 * jobs sent; $17, $18: apps of the jobs; $19..$21: what the client said
	 * of its app versions; $22: the daily quota of a new (host, version).
	 * The host row is not written: when it last asked is kept with its
	 * backoffs (host_resource.asked_at), and the transitioner brings
	 * host.last_seen up to date.  From 0.6.0 each job counts the sending
	 * (its number goes in the reply, so that a report can name it) and the
	 * try.  From 0.7.0 a job's first sending makes its replicas, unsent,
	 * for other owners, when its target_nresults is above 1; a job that
	 * adaptive replication replicates ($23) gets a quorum of 2 and a replica
	 * (reliability.h); the reply names the job a replica replicates.
	 */
	commit_plan[version] = allot_prepare(psprintf(
						  "WITH picked AS ("
						  "  SELECT * FROM unnest($3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $23)"
						  "         WITH ORDINALITY AS p(job_id, workload_id, version_id, resource,"
						  "              ncpus, ncoprocs, predicted, est, bound, peak, deadline, replicate, ord)),"
						  " sent AS ("
						  "  UPDATE allot.job j"
						  "     SET state = 'in_progress', host_id = $1, app_version_id = p.version_id,"
						  "         sent_at = $2, deadline = p.deadline, est_secs = p.est,"
						  "         peak_flops_per_sec = p.peak, returned_at = NULL, outcome = NULL,"
						  "         app_units = NULL, elapsed_secs = NULL, raw_flops_per_sec = NULL%s%s"
						  "    FROM picked p WHERE j.id = p.job_id RETURNING j.id, %s AS sending, %s AS replica_of),%s"
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
						  "  INSERT INTO allot.host_resource AS hr (host_id, resource, backoff_secs, asked_at)"
						  "  SELECT $1, r.name, CASE WHEN r.jobs > 0 THEN 0 ELSE 600 END, $2"
						  "    FROM unnest($14, $16) r(name, jobs)"
						  "  ON CONFLICT (host_id, resource) DO UPDATE"
						  "     SET backoff_secs = CASE WHEN excluded.backoff_secs = 0 THEN 0"
						  "                             WHEN hr.backoff_secs = 0 THEN 600"
						  "                             ELSE least(hr.backoff_secs * 2, 86400) END,"
						  "         asked_at = excluded.asked_at"
						  "  RETURNING resource, backoff_secs)"
						  "SELECT jsonb_build_object("
						  "  'jobs', coalesce((SELECT jsonb_agg(jsonb_build_object("
						  "            'job_id', p.job_id, 'workload_id', p.workload_id,"
						  "            'app_version_id', p.version_id, 'resource', p.resource,"
						  "            'ncpus', p.ncpus, 'ncoprocs', p.ncoprocs,"
						  "            'predicted_app_units', p.predicted, 'est_secs', p.est,"
						  "            'bound_secs', p.bound, 'peak_flops_per_sec', p.peak,"
						  "            'deadline', p.deadline%s)%s ORDER BY p.ord)"
						  "            FROM picked p JOIN sent s ON s.id = p.job_id), '[]'),"
						  "  'resources', coalesce((SELECT jsonb_object_agg(s.name, jsonb_build_object("
						  "            'status', s.status, 'backoff_secs', b.backoff_secs)"
						  "            || CASE WHEN $24 > 0 THEN jsonb_build_object('reason', " BACKOFF_REASON_SQL ")"
						  "               ELSE '{}' END)"
						  "          FROM unnest($14, $15) s(name, status)"
						  "          JOIN backoff b ON b.resource = s.name), '{}'),"
						  "  'apps', coalesce((SELECT jsonb_object_agg(a.id::text, jsonb_build_object("
						  "            'est_flops_per_au', a.est)) FROM unnest($17, $18) a(id, est)), '{}'))"
						  " || CASE WHEN $24 > 0 THEN jsonb_build_object('request_delay', $24,"
						  "         'reason', " BACKOFF_REASON_SQL ") ELSE '{}' END",
						  sendings ? ", sending = j.sending + 1, tries = j.tries + 1" : "",
						  version < 2 ? "" :
						  ", min_quorum = CASE WHEN p.replicate THEN " CppAsString2(ALLOT_ADAPTIVE_QUORUM)
						  "                    ELSE j.min_quorum END,"
						  "  target_nresults = CASE WHEN p.replicate"
						  "                         THEN greatest(j.target_nresults, " CppAsString2(ALLOT_ADAPTIVE_QUORUM) ")"
						  "                         ELSE j.target_nresults END",
						  sendings ? "j.sending" : "NULL::int",
						  version < 2 ? "NULL::bigint" : "j.replica_of",
						  version < 2 ? "" :
						  " replicas AS ("
						  "  INSERT INTO allot.job (workload_id, predicted_app_units, reference, max_error_results,"
						  "         max_total_results, min_quorum, target_nresults, replica_of)"
						  "  SELECT j.workload_id, j.predicted_app_units, j.reference, j.max_error_results,"
						  "         j.max_total_results, q.quorum, q.target, j.id"
						  "    FROM picked p JOIN allot.job j ON j.id = p.job_id,"
						  "         LATERAL (SELECT CASE WHEN p.replicate"
						  "                              THEN " CppAsString2(ALLOT_ADAPTIVE_QUORUM) " ELSE j.min_quorum END AS quorum,"
						  "                         CASE WHEN p.replicate"
						  "                              THEN greatest(j.target_nresults, " CppAsString2(ALLOT_ADAPTIVE_QUORUM) ")"
						  "                              ELSE j.target_nresults END AS target) q"
						  "    CROSS JOIN generate_series(2, q.target)"
						  "   WHERE j.replica_of IS NULL AND (p.replicate OR (j.target_nresults > 1 AND j.sending = 0))"
						  "   ORDER BY j.id),",
						  sendings ? ", 'sending', s.sending" : "",
						  version < 2 ? "" :
						  " || CASE WHEN s.replica_of IS NULL THEN '{}'::jsonb"
						  "         ELSE jsonb_build_object('replica_of', s.replica_of) END"),
						  25, commit_args);

	/*
	 * The owners each replicated job now went to (allot.job_voice): one
	 * row per (job, voice), so that none gets a second replica.  A row
	 * another transaction holds is waited for; if it committed, this
	 * request took a second replica for one owner (two of its hosts asking
	 * at once) and must be retried.  A job replicated now also records the
	 * owners that had it before, alone.
	 */
	if (version == 2 && voice_plan == NULL)
	{
		Oid			voice_args[3] = {INT8ARRAYOID, INT8OID, TIMESTAMPTZOID};
		Oid			history_args[2] = {INT8ARRAYOID, TIMESTAMPTZOID};

		voice_plan = allot_prepare(
								   "INSERT INTO allot.job_voice (group_id, voice, sent_at)"
								   "SELECT DISTINCT g, $2, $3 FROM unnest($1) g ORDER BY g "
								   "ON CONFLICT (group_id, voice) DO NOTHING",
								   3, voice_args);
		voice_history_plan = allot_prepare(
										   "INSERT INTO allot.job_voice (group_id, voice, sent_at)"
										   "SELECT DISTINCT r.job_id,"
										   "       CASE WHEN h.owner_id IS NULL THEN r.host_id ELSE -h.owner_id END, $2"
										   "  FROM allot.job_report r JOIN allot.host h ON h.id = r.host_id"
										   " WHERE r.job_id = ANY ($1) "
										   "ON CONFLICT (group_id, voice) DO NOTHING",
										   2, history_args);
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

/* The owners the replicated jobs went to (voice_plan). */
static void
record_voices(const Dispatch *d)
{
	Datum	   *groups = palloc(sizeof(Datum) * (d->n_picks + 1));
	Datum	   *fresh = palloc(sizeof(Datum) * (d->n_picks + 1));
	int			ng = 0,
				nf = 0;
	Datum		args[3];

	for (int i = 0; i < d->n_picks; i++)
	{
		if (!d->picks[i].replicated)
			continue;
		groups[ng++] = Int64GetDatum(d->picks[i].group_id);
		if (d->picks[i].replicate)
			fresh[nf++] = Int64GetDatum(d->picks[i].job_id);
	}
	if (ng == 0)
		return;
	args[0] = PointerGetDatum(construct_array(groups, ng, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[1] = Int64GetDatum(d->host.voice);
	args[2] = TimestampTzGetDatum(d->now);
	if (SPI_execute_plan(voice_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the owners of replicated jobs");
	if ((int) SPI_processed != ng)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("host %lld's owner was sent a replica of the same job by another of its hosts at the same time",
						(long long) d->host.id),
				 errdetail("No owner gets two replicas of one job."),
				 errhint("Send the request again.")));
	if (nf > 0)
	{
		args[0] = PointerGetDatum(construct_array(fresh, nf, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		args[1] = TimestampTzGetDatum(d->now);
		if (SPI_execute_plan(voice_history_plan, args, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not record the owners of replicated jobs");
	}
}

/* The one writing statement; returns the reply. */
Datum
allot_commit_request(Dispatch *d)
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
	Datum		args[25];
	Datum	   *replicate = palloc(sizeof(Datum) * (n + 1));
	int			dims[1];
	int			lbs[1] = {1};
	bool		isnull;
	Datum		reply;
	int			version = cache->voices ? 2 : cache->job_sendings ? 1 : 0;

	prepare_plans(version);

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
		replicate[i] = BoolGetDatum(p->replicate);
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
	args[12] = PointerGetDatum(construct_md_array(deadline, NULL, 1, dims, lbs,
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
	args[22] = PointerGetDatum(construct_array(replicate, n, BOOLOID, 1, true, TYPALIGN_CHAR));
	/*
	 * A host backing off is told how long to wait, and why (error_backoff.h):
	 * at most the longest backoff, whatever clock the failures were
	 * reported at.
	 */
	args[23] = Float8GetDatum(d->host.backoff_until > d->now ?
							  Min(ceil((double) (d->host.backoff_until - d->now) / USECS_PER_SEC),
								  (double) allot_max_error_backoff) : 0);
	args[24] = Int32GetDatum(d->host.error_streak);

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

	if (SPI_execute_plan(commit_plan[version], args, NULL, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not record the work sent to host %lld", (long long) d->host.id);
	reply = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull),
							  false, -1);
	if (version == 2)
		record_voices(d);
	return reply;
}

