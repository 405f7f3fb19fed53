/*
 * share_history.c: the transitioner's samples of each workload's share
 * against its fair share (allot.share_history, from 0.7.0), which the
 * status page draws over time.  status_workload says what the shares are
 * now; nothing else allot keeps says what they were an hour ago.
 *
 * Each run_transitioner call, after its other steps (share_history.h has
 * the vocabulary):
 *
 *   forget   delete the samples taken before allot.share_history_retention,
 *            at most allot.transitioner_batch rows, skipping rows another
 *            transaction holds
 *   record   unless this minute has its sample: what status_workload says
 *            of each workload that is active or has a share or a fair
 *            share, at most allot.transitioner_batch rows (the largest
 *            shares first), in one INSERT, stamped with the minute of the
 *            run's now.  A later run in the minute reads nothing more
 *            than that the minute is sampled: pg_cron runs the
 *            transitioner once a minute, but a backlog or a test may run
 *            it many times, and the read of status_workload is the step's
 *            cost
 *
 * Concurrency: one transaction at a time does both.  It holds a
 * transaction-scoped advisory lock in allot's key space
 * (ALLOT_SHARE_HISTORY_LOCK_SPACE, entry.h) that other runs only try: a run
 * that finds it held skips the step rather than wait for the holder's
 * commit.  The holder records this minute; a holder given another now
 * leaves the skipped run's minute to the next run in it, or without a
 * sample, which the page shows as a gap.  The primary key (minute,
 * workload) with ON CONFLICT DO NOTHING keeps a minute's rows one per
 * workload all the same.
 *
 * Cost per call: one read of status_workload, O(workloads) as one load of
 * the status page, and at most 2 x allot.transitioner_batch rows written.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/lsyscache.h"

#include "entry.h"
#include "settings.h"
#include "share_history.h"
#include "transitioner.h"

static SPIPlanPtr forget_plan = NULL;
static SPIPlanPtr sampled_plan = NULL;
static SPIPlanPtr record_plan = NULL;

static void
prepare_plans(void)
{
	Oid			types[2] = {TIMESTAMPTZOID, INT4OID};

	if (record_plan != NULL)
		return;

	/*
	 * The oldest rows in the primary key's order, so that even the generic
	 * plan walks the key from its start and stops at the batch, and deleted
	 * by their ctid: a join back to the table would be planned as a scan
	 * of all of it.
	 */
	forget_plan = allot_prepare(
								"DELETE FROM allot.share_history"
								" WHERE ctid = ANY (ARRAY("
								"   SELECT o.ctid FROM allot.share_history o WHERE o.sampled_at < $1"
								"    ORDER BY o.sampled_at, o.workload_id LIMIT $2 FOR UPDATE SKIP LOCKED))",
								2, types);
	sampled_plan = allot_prepare(
								 "SELECT EXISTS (SELECT FROM allot.share_history WHERE sampled_at = $1)",
								 1, types);

	/*
	 * The shares as the status page shows them, so that the chart's last
	 * point and the page's bars say the same.  What a share is a part of
	 * follows allot.fairness, as status_workload's share does.
	 */
	record_plan = allot_prepare(
								"INSERT INTO allot.share_history"
								"       (sampled_at, workload_id, share, fair_share, used, jobs)"
								"SELECT $1, s.workload_id, s.share, s.fair_share,"
								"       CASE WHEN s.fairness = 'recent' THEN coalesce(s.rec, 0)"
								"            WHEN s.kind = 'jobs' THEN s.peak_flops"
								"            ELSE s.threads::float8 END,"
								"       s.kind = 'jobs'"
								"  FROM (SELECT w.* FROM allot.status_workload w"
								"         WHERE w.share > 0 OR w.fair_share > 0 OR w.state = 'active'"
								"         ORDER BY greatest(w.share, w.fair_share) DESC, w.workload_id"
								"         LIMIT $2) s "
								"ORDER BY s.workload_id "
								"ON CONFLICT DO NOTHING",
								2, types);
}

int64
allot_record_shares(TimestampTz now, int64 *deleted)
{
	LOCKTAG		tag;
	Datum		args[2];
	bool		isnull;

	*deleted = 0;
	/* before 0.7.0 there is no history: one library serves every version */
	if (!OidIsValid(get_relname_relid("share_history", get_namespace_oid("allot", false))))
		return 0;
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, 0, ALLOT_SHARE_HISTORY_LOCK_SPACE);
	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		return 0;
	prepare_plans();

	args[0] = TimestampTzGetDatum(allot_sample_cutoff(now, allot_share_history_retention));
	args[1] = Int32GetDatum(allot_transitioner_batch);
	if (SPI_execute_plan(forget_plan, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete old rows of allot.share_history");
	*deleted = (int64) SPI_processed;
	if (allot_share_history_retention == 0)
		return 0;

	args[0] = TimestampTzGetDatum(allot_sample_minute(now));
	if (SPI_execute_plan(sampled_plan, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read allot.share_history");
	if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		return 0;
	if (SPI_execute_plan(record_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write allot.share_history");
	return (int64) SPI_processed;
}
