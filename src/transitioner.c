/*
 * transitioner.c: run_transitioner (seed 004); the validator's verdicts,
 * which it acts on, come through validate_job (validate.c).
 *
 * One call does bounded work (allot.transitioner_batch rows per step) in
 * four steps (five under allot.fairness = debt, where the fold comes first), each taking its rows FOR UPDATE SKIP LOCKED so that
 * concurrent calls, and dispatch, share the work instead of waiting:
 *
 *   time out   jobs in progress past their deadline go back to unsent for
 *              another host; the late host's quota drops by one, and its
 *              late report will be refused
 *   expire     assignments whose host went quiet stop counting
 *   learn      each validated success not read yet feeds its app's FLOPS
 *              per app unit (a percentile over hosts) and its app-unit
 *              statistics (a window of validated reports), each owner one
 *              voice (transitioner_learn.c)
 *   credit     validated jobs get app.mean_app_units * est_flops_per_au in
 *              cobblestones, the same for every job of the app
 *   debts      under allot.fairness = debt, the credit handed out since the
 *              last call is folded into the long-term debts
 *              (allot.fold_debts; fairness.h has the formula)
 *
 * Then (0.7.0 and later) it samples each workload's share against its fair
 * share for the status page's history, a sample a minute, and deletes the
 * samples past their retention (share_history.c), and moves finished jobs
 * older than allot.retention_period out of the hot tables (retention.c).
 * Each call records what it did in allot.transitioner_run (0.5.0 and later), for the status views:
 * one upsert into a ring of 100 slots.
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
#include "job_retry.h"
#include "percentile.h"
#include "reliability.h"
#include "retention.h"
#include "transitioner.h"
#include "voices.h"
#include "workload_cache.h"

/* One cobblestone: 1/200 day of a 1 GFLOPS machine. */
#define FLOPS_PER_CREDIT (1e9 * 86400.0 / 200.0)

static SPIPlanPtr timeout_plan[3][2];	/* [schema: before 0.6.0, sendings, reliability][by host] */
static SPIPlanPtr credit_plan = NULL;
static SPIPlanPtr fold_plan = NULL;
static SPIPlanPtr last_seen_plan = NULL;
static SPIPlanPtr usage_drop_plan = NULL;
static SPIPlanPtr usage_unused_plan = NULL;
static SPIPlanPtr medians_plan = NULL;
static SPIPlanPtr medians_plan_060 = NULL;
static SPIPlanPtr record_plan[2] = {NULL, NULL};	/* 0.5.0; 0.7.0 (history, purge) */

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
	int64		shares_recorded;
	int64		shares_deleted;
	int64		purged;
} TransitionerRun;

static void
prepare_plans(void)
{
	Oid			limit[1] = {INT4OID};

	if (credit_plan != NULL)
		return;

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

}

/*
 * Jobs in progress past their deadline (or, for time_out_host, every job
 * in progress on host $4): each sending ends as timed out, its host's quota
 * drops by one, the late report it may still send will be refused, and the
 * job goes back to unsent for another host, or from 0.6.0 gives up when its
 * limits say so (job_retry.h).  $1 now, $2 how many at most, $3
 * the quota ceiling.  Quotas are charged in (host, version) order, the
 * order dispatch takes them in, so the two cannot deadlock.  A host's
 * reliability row (0.7.0) comes after its quota rows, as in a report: rel
 * reads quota, so that quota runs first (an unread data-modifying CTE runs
 * at the statement's end, in no order a report could share), and a report
 * of the same host cannot hold one while waiting for the other.
 */
static SPIPlanPtr
timeout_plan_for(int version, bool by_host)
{
	Oid			types[4] = {TIMESTAMPTZOID, INT4OID, INT4OID, INT8OID};
	bool		sendings = version > 0;

	if (timeout_plan[version][by_host] != NULL)
		return timeout_plan[version][by_host];
	timeout_plan[version][by_host] = allot_prepare(psprintf(
															 "WITH late AS ("
															 "  SELECT j.id, j.host_id, j.app_version_id, j.sent_at, %s AS sending,"
															 "         %s AS next"
															 "    FROM allot.job j"
															 "   WHERE j.state = 'in_progress' AND %s"
															 "   ORDER BY j.deadline LIMIT $2 FOR UPDATE SKIP LOCKED),"
															 " back AS ("
															 "  UPDATE allot.job j"
															 "     SET state = late.next%s,"
															 "         host_id = CASE WHEN late.next = 'unsent' THEN NULL ELSE j.host_id END,"
															 "         app_version_id = CASE WHEN late.next = 'unsent' THEN NULL"
															 "                               ELSE j.app_version_id END,"
															 "         sent_at = CASE WHEN late.next = 'unsent' THEN NULL ELSE j.sent_at END,"
															 "         deadline = CASE WHEN late.next = 'unsent' THEN NULL ELSE j.deadline END,"
															 "         est_secs = CASE WHEN late.next = 'unsent' THEN NULL ELSE j.est_secs END,"
															 "         peak_flops_per_sec = CASE WHEN late.next = 'unsent' THEN NULL"
															 "                                   ELSE j.peak_flops_per_sec END"
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
															 "         n_error = hv.n_error + excluded.n_error"
															 "  RETURNING hv.host_id),%s"
															 " record AS ("
															 "  INSERT INTO allot.job_report"
															 "         (job_id, host_id, sent_at, outcome, reported_at, reply%s)"
															 "  SELECT id, host_id, sent_at, 'timed_out', $1,"
															 "         jsonb_build_object('job_id', id, 'outcome', 'timed_out',"
															 "                            'state', next)%s"
															 "    FROM late ON CONFLICT DO NOTHING)"
															 "SELECT count(*) FROM back",
															 sendings ? "j.sending" : "NULL::int",
															 sendings ? ALLOT_STATE_AFTER_FAILURE_SQL : "'unsent'::text",
															 by_host ? "j.host_id = $4" : "j.deadline < $1 AND $4::bigint IS NULL",
															 sendings ? ", failures = j.failures + 1" : "",
															 version < 2 ? "" :
															 " rel AS ("
															 "  INSERT INTO allot.host_reliability AS r (host_id, failed_sendings, error_rate)"
															 "  SELECT host_id, n, " ALLOT_ERROR_RATE_AFTER_FAILURES_SQL("0", "n")
															 "    FROM (SELECT host_id, count(*)::int AS n FROM late GROUP BY host_id) l"
															 "   WHERE EXISTS (SELECT FROM allot.host h WHERE h.id = l.host_id)"
															 "     AND EXISTS (SELECT FROM quota q WHERE q.host_id = l.host_id)"
															 "   ORDER BY host_id"
															 "  ON CONFLICT (host_id) DO UPDATE"
															 "     SET failed_sendings = r.failed_sendings + excluded.failed_sendings,"
															 "         consecutive_valid = 0, reliable_at = NULL,"
															 "         error_rate = " ALLOT_ERROR_RATE_AFTER_FAILURES_SQL("r.error_rate", "excluded.failed_sendings") "),",
															 sendings ? ", sending" : "",
															 sendings ? ", sending" : ""),
													4, types);
	return timeout_plan[version][by_host];
}

/*
 * Time jobs out (timeout_plan_for): those past their deadline, or all of
 * *host_id's when it is not NULL.  Returns how many.
 */
int64
allot_time_out_jobs(TimestampTz now, const int64 *host_id, int limit)
{
	const WorkloadCache *cache = allot_workload_cache();
	int			version = cache->voices ? 2 : cache->job_sendings ? 1 : 0;
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', host_id != NULL ? ' ' : 'n'};
	bool		isnull;

	args[0] = TimestampTzGetDatum(now);
	args[1] = Int32GetDatum(limit);
	args[2] = Int32GetDatum(allot_daily_quota);
	args[3] = Int64GetDatum(host_id != NULL ? *host_id : 0);
	if (SPI_execute_plan(timeout_plan_for(version, host_id != NULL), args, nulls, false, 0) !=
		SPI_OK_SELECT)
		elog(ERROR, "could not time jobs out");
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
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
 * Each resource type's median FLOPS per instance (0.6.0 on), which bounds
 * what a host's claim counts for in dispatch (dispatch_host.h).  0.6.0
 * took it over the hosts that had earned credit once ten had, else over
 * every host: thirty fresh registrations claiming 1e18 made it 1e18.  From
 * 0.7.0 it is taken over proven hosts only (the operator's, a trusted
 * owner's, or with a valid result in a decided job), each owner one voice
 * (voices.h): the lower weighted median, so that of two voices the lesser
 * claim holds it.  No proven host: no median (dispatch then bounds the
 * unproven by allot.unproven_cpu_flops and allot.unproven_coproc_flops).
 * Written only where it moved by more than 1%: each write makes every
 * backend rebuild its cache.  Rows another transaction holds are left for
 * the next run.
 */
static SPIPlanPtr median_write_plan = NULL;

static void
update_medians_060(void)
{
	if (medians_plan_060 == NULL)
		medians_plan_060 = allot_prepare(
									 "WITH proven AS ("
									 "  SELECT host_id FROM allot.host_credit WHERE credit > 0),"
									 " instance AS ("
									 "  SELECT 'cpu'::text AS resource, h.cpu_flops AS flops,"
									 "         p.host_id IS NOT NULL AS proven"
									 "    FROM allot.host h LEFT JOIN proven p ON p.host_id = h.id"
									 "   WHERE h.cpu_flops IS NOT NULL"
									 "  UNION ALL"
									 "  SELECT c.resource, c.peak_flops, p.host_id IS NOT NULL"
									 "    FROM allot.host_coproc c LEFT JOIN proven p ON p.host_id = c.host_id),"
									 " median AS ("
									 "  SELECT resource,"
									 "         CASE WHEN count(*) FILTER (WHERE proven) >= 10"
									 "              THEN percentile_disc(0.5) WITHIN GROUP (ORDER BY flops)"
									 "                   FILTER (WHERE proven)"
									 "              ELSE percentile_disc(0.5) WITHIN GROUP (ORDER BY flops) END AS flops,"
									 "         CASE WHEN count(*) FILTER (WHERE proven) >= 10"
									 "              THEN count(*) FILTER (WHERE proven) ELSE count(*) END AS hosts"
									 "    FROM instance GROUP BY resource),"
									 " moved AS ("
									 "  SELECT r.name, m.flops, m.hosts FROM allot.resource r"
									 "    LEFT JOIN median m ON m.resource = r.name"
									 "   WHERE r.median_flops IS DISTINCT FROM m.flops"
									 "     AND (r.median_flops IS NULL OR m.flops IS NULL"
									 "          OR abs(m.flops - r.median_flops) > 0.01 * r.median_flops)"
									 "   ORDER BY r.name FOR NO KEY UPDATE OF r SKIP LOCKED)"
									 "UPDATE allot.resource r SET median_flops = moved.flops, median_hosts = moved.hosts"
									 "  FROM moved WHERE r.name = moved.name",
									 0, NULL);
	if (SPI_execute_plan(medians_plan_060, NULL, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update the resources' median FLOPS");
}

/* The lower weighted median of rows [from, to) of the instances read. */
static double
median_of(SPITupleTable *rows, uint64 from, uint64 to, int *voices)
{
	int			n = (int) (to - from);
	double	   *v = palloc(sizeof(double) * (n + 1));
	double	   *w = palloc(sizeof(double) * (n + 1));
	int64	   *voice = palloc(sizeof(int64) * (n + 1));
	int64	   *work = palloc(sizeof(int64) * (n + 1));
	bool		isnull;

	for (int i = 0; i < n; i++)
	{
		v[i] = DatumGetFloat8(SPI_getbinval(rows->vals[from + i], rows->tupdesc, 2, &isnull));
		voice[i] = DatumGetInt64(SPI_getbinval(rows->vals[from + i], rows->tupdesc, 3, &isnull));
	}
	*voices = allot_voice_weights(voice, n, w, work);
	return allot_median_voices(v, w, n);
}

static void
update_medians(void)
{
	Oid			resource = get_relname_relid("resource", get_namespace_oid("allot", false));
	SPITupleTable *rows;
	uint64		nrows;
	Datum	   *names,
			   *flops,
			   *voices;
	bool	   *nulls;
	int			nres = 0;
	Datum		args[3];
	Oid			types[3] = {TEXTARRAYOID, FLOAT8ARRAYOID, INT8ARRAYOID};

	if (!OidIsValid(resource) || get_attnum(resource, "median_flops") == InvalidAttrNumber)
		return;
	if (!allot_workload_cache()->voices)
	{
		update_medians_060();
		return;
	}
	if (medians_plan == NULL)
	{
		/* Every resource, with its proven instances' FLOPS and voices. */
		medians_plan = allot_prepare(
									 "WITH proven AS ("
									 "  SELECT h.id, h.cpu_flops,"
									 "         CASE WHEN h.owner_id IS NULL THEN h.id ELSE -h.owner_id END AS voice"
									 "    FROM allot.host h"
									 "    LEFT JOIN allot.owner o ON o.id = h.owner_id"
									 "    LEFT JOIN allot.host_reliability r ON r.host_id = h.id"
									 "   WHERE h.registered_at IS NULL OR o.trusted OR r.proven_at IS NOT NULL)"
									 "SELECT r.name, i.flops, i.voice FROM allot.resource r"
									 "  LEFT JOIN (SELECT 'cpu'::text AS resource, p.cpu_flops AS flops, p.voice"
									 "               FROM proven p WHERE p.cpu_flops IS NOT NULL"
									 "             UNION ALL"
									 "             SELECT c.resource, c.peak_flops, p.voice"
									 "               FROM proven p JOIN allot.host_coproc c ON c.host_id = p.id) i"
									 "         ON i.resource = r.name"
									 " ORDER BY r.name",
									 0, NULL);
		median_write_plan = allot_prepare(
										  "WITH median AS ("
										  "  SELECT * FROM unnest($1, $2, $3) m(name, flops, voices)),"
										  " moved AS ("
										  "  SELECT r.name, m.flops, m.voices FROM allot.resource r"
										  "    JOIN median m ON m.name = r.name"
										  "   WHERE r.median_flops IS DISTINCT FROM m.flops"
										  "     AND (r.median_flops IS NULL OR m.flops IS NULL"
										  "          OR abs(m.flops - r.median_flops) > 0.01 * r.median_flops)"
										  "   ORDER BY r.name FOR NO KEY UPDATE OF r SKIP LOCKED)"
										  "UPDATE allot.resource r SET median_flops = moved.flops, median_hosts = moved.voices"
										  "  FROM moved WHERE r.name = moved.name",
										  3, types);
	}
	if (SPI_execute_plan(medians_plan, NULL, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the hosts' FLOPS");
	rows = SPI_tuptable;
	nrows = SPI_processed;
	names = palloc(sizeof(Datum) * (nrows + 1));
	flops = palloc(sizeof(Datum) * (nrows + 1));
	voices = palloc(sizeof(Datum) * (nrows + 1));
	nulls = palloc0(sizeof(bool) * (nrows + 1));
	for (uint64 i = 0; i < nrows;)
	{
		uint64		j = i;
		bool		isnull;
		char	   *name = SPI_getvalue(rows->vals[i], rows->tupdesc, 1);
		int			nvoices = 0;

		while (j < nrows && strcmp(SPI_getvalue(rows->vals[j], rows->tupdesc, 1), name) == 0)
			j++;
		names[nres] = CStringGetTextDatum(name);
		(void) SPI_getbinval(rows->vals[i], rows->tupdesc, 2, &isnull);
		if (isnull)				/* the LEFT JOIN's row: no proven instance */
		{
			nulls[nres] = true;
			flops[nres] = Float8GetDatum(0);
		}
		else
			flops[nres] = Float8GetDatum(median_of(rows, i, j, &nvoices));
		voices[nres] = Int64GetDatum(nvoices);
		nres++;
		i = j;
	}
	{
		int			dims[1] = {nres};
		int			lbs[1] = {1};

		args[0] = PointerGetDatum(construct_array(names, nres, TEXTOID, -1, false, TYPALIGN_INT));
		args[1] = PointerGetDatum(construct_md_array(flops, nulls, 1, dims, lbs, FLOAT8OID, 8,
													 FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		args[2] = PointerGetDatum(construct_array(voices, nres, INT8OID, 8, FLOAT8PASSBYVAL,
												  TYPALIGN_DOUBLE));
	}
	if (SPI_execute_plan(median_write_plan, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update the resources' median FLOPS");
}

/*
 * Record a run for allot.status_transitioner: run n overwrites slot
 * n % TRANSITIONER_RUNS_KEPT, so the history stays bounded and costs one
 * upsert per run.  The SQL side is older than 0.5.0 when the table is
 * missing; then nothing is recorded (one C library serves every version).
 * From 0.7.0 the row also counts what the run did to the share history
 * and how many finished jobs it purged (the three columns came together).
 */
static void
record_run(TimestampTz started, TimestampTz now, const TransitionerRun *r)
{
	Oid			types[14] = {TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT8OID,
		INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID};
	Datum		args[14];
	Oid			table = get_relname_relid("transitioner_run", get_namespace_oid("allot", false));
	bool		shares;

	if (!OidIsValid(table))
		return;
	shares = get_attnum(table, "shares_recorded") != InvalidAttrNumber &&
		get_attnum(table, "purged") != InvalidAttrNumber;
	if (record_plan[shares] == NULL)
		record_plan[shares] = allot_prepare(psprintf(
													 "INSERT INTO allot.transitioner_run AS r"
													 "       (slot, run, started_at, finished_at, now_given, fairness,"
													 "        timed_out, expired_assignments, reports_read, flops_samples,"
													 "        flops_estimates, credited, debts_folded, hosts_seen%s)"
													 "SELECT n %% " CppAsString2(TRANSITIONER_RUNS_KEPT) ", n, $1, $2, $3,"
													 "       current_setting('allot.fairness'), $4, $5, $6, $7, $8, $9, $10, $11%s"
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
													 "       hosts_seen = excluded.hosts_seen%s",
													 shares ? ", shares_recorded, shares_deleted, purged" : "",
													 shares ? ", $12, $13, $14" : "",
													 shares ? ", shares_recorded = excluded.shares_recorded,"
													 " shares_deleted = excluded.shares_deleted,"
													 " purged = excluded.purged" : ""),
											shares ? 14 : 11, types);
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
	args[11] = Int64GetDatum(r->shares_recorded);
	args[12] = Int64GetDatum(r->shares_deleted);
	args[13] = Int64GetDatum(r->purged);
	if (SPI_execute_plan(record_plan[shares], args, NULL, false, 0) != SPI_OK_INSERT)
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
	allot_require_writable("allot.run_transitioner");
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

	r.timed_out = allot_time_out_jobs(now, NULL, allot_transitioner_batch);

	r.expired = allot_expire_assignments_upto(allot_assignment_cutoff(now),
											  allot_transitioner_batch);

	r.jobs_read = allot_learn_from_reports(&r.samples, &r.figures);

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

	/*
	 * The usage rows of workloads no longer active that no host counts on
	 * (requests keep a row whose hosts fall to 0: usage.c); last, and
	 * without waiting for a row a request holds.  Only when there is one:
	 * a DELETE fires the usage table's statement trigger whether it deletes
	 * anything or not, and its signal made every backend read its usage
	 * copy again once a minute (0.6.0).
	 */
	if (usage_drop_plan == NULL)
	{
		usage_drop_plan = allot_prepare(
										"DELETE FROM allot.workload_usage u"
										" USING (SELECT x.workload_id FROM allot.workload_usage x"
										"         WHERE x.hosts = 0"
										"           AND NOT EXISTS (SELECT FROM allot.workload w"
										"                            WHERE w.id = x.workload_id AND w.state = 'active')"
										"         FOR UPDATE OF x SKIP LOCKED) d"
										" WHERE u.workload_id = d.workload_id AND u.hosts = 0",
										0, NULL);
		usage_unused_plan = allot_prepare(
										  "SELECT FROM allot.workload_usage x"
										  " WHERE x.hosts = 0"
										  "   AND NOT EXISTS (SELECT FROM allot.workload w"
										  "                    WHERE w.id = x.workload_id AND w.state = 'active')"
										  " LIMIT 1",
										  0, NULL);
	}
	if (SPI_execute_plan(usage_unused_plan, NULL, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.workload_usage");
	if (SPI_processed > 0 &&
		SPI_execute_plan(usage_drop_plan, NULL, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not drop unused workload_usage rows");

	update_medians();

	/* Last, so that the sample sees the assignments this run expired. */
	r.shares_recorded = allot_record_shares(now, &r.shares_deleted);

	/*
	 * Finished jobs older than allot.retention_period leave the hot tables,
	 * at most allot.retention_batch of them (retention.c); last, as it holds
	 * only rows nobody waits for.
	 */
	{
		RetentionRun purge;

		allot_purge_finished(now, allot_retention_batch, &purge);
		r.purged = purge.purged;
	}
	record_run(started, now, &r);

	SPI_finish();
	json = psprintf("{\"timed_out\": %lld, \"expired_assignments\": %lld,"
					" \"reports_read\": %lld, \"flops_samples\": %lld,"
					" \"flops_estimates\": %lld, \"credited\": %lld,"
					" \"debts_folded\": %lld, \"hosts_seen\": %lld,"
					" \"shares_recorded\": %lld, \"shares_deleted\": %lld, \"purged\": %lld}",
					(long long) r.timed_out, (long long) r.expired, (long long) r.jobs_read,
					(long long) r.samples, (long long) r.figures, (long long) r.credited,
					(long long) r.folded, (long long) r.hosts_seen,
					(long long) r.shares_recorded, (long long) r.shares_deleted, (long long) r.purged);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
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
