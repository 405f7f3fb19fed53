/* allot 0.6.0 -> 0.7.0.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.7.0'" to load this file. \quit

/* ---------------------------------------------------------------------------
 * Retention: finished jobs leave the hot tables (src/retention.c).
 *
 * Until 0.6.0 nothing ever left allot.job: with five million finished jobs
 * the table held 1.4 GB, about 280 bytes a job before its reports, and a
 * farm of a million jobs a day grows by gigabytes a day for ever.  From
 * 0.7.0 the transitioner's last step moves finished jobs (done, error)
 * that ended more than allot.retention_period ago (30 days unless set; 0
 * keeps them) out of allot.job and their rows out of allot.job_report, at
 * most allot.retention_batch per run, oldest first: into allot.job_archive
 * (allot.retention_archive, on unless set), or nowhere.
 *
 * What the farm knows of them stays: a workload's counts of done and
 * errored jobs (job_usage), a host's credit and decayed credit
 * (host_credit) are left as they were, and the purged jobs are added to
 * allot.purged_jobs and allot.purged_credit, which check_invariants()
 * counts with the jobs still there.  A change to a purged total made by
 * anything but a purge (a restore, merge_host, an operator's edit) moves
 * those counters by its trigger, as a change to jobs does: the purged
 * totals are dumped, the counters are not, and a restore rebuilds them from
 * both.  An app's statistics, quotas and debts never read old jobs.
 * ------------------------------------------------------------------------- */

CREATE TABLE allot.purged_jobs (
    workload_id bigint PRIMARY KEY,
    done        bigint NOT NULL DEFAULT 0,
    error       bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 50);
COMMENT ON TABLE allot.purged_jobs IS
    'Allot writes: per workload, the finished jobs retention removed from allot.job; allot.job_usage still counts them';
COMMENT ON COLUMN allot.purged_jobs.workload_id IS 'The workload (no foreign key: the counts outlive it, as job_usage''s do)';
COMMENT ON COLUMN allot.purged_jobs.done IS 'Jobs done that were purged';
COMMENT ON COLUMN allot.purged_jobs.error IS 'Jobs in error (or the old timed_out) that were purged';

CREATE TABLE allot.purged_credit (
    host_id    bigint PRIMARY KEY,
    credit     numeric NOT NULL DEFAULT 0,
    jobs       bigint NOT NULL DEFAULT 0,
    decayed    double precision NOT NULL DEFAULT 0,
    decayed_at timestamptz NOT NULL
) WITH (fillfactor = 50);
COMMENT ON TABLE allot.purged_credit IS
    'Allot writes: per host, the credit of its jobs retention removed from allot.job; allot.host_credit still counts it';
COMMENT ON COLUMN allot.purged_credit.host_id IS 'The host (no foreign key, as allot.host_credit)';
COMMENT ON COLUMN allot.purged_credit.credit IS 'Sum of the credit of its purged jobs, in cobblestones';
COMMENT ON COLUMN allot.purged_credit.jobs IS 'Its purged jobs that had credit';
COMMENT ON COLUMN allot.purged_credit.decayed IS
    'Their credit decayed with a half-life of one week from their return to decayed_at';
COMMENT ON COLUMN allot.purged_credit.decayed_at IS 'The instant decayed is taken at: the latest return purged';

/* The archive: one row per purge, the jobs it moved as a JSON array, each
 * {"job": its row of allot.job, "reports": its rows of allot.job_report}.
 * JSON, so that a column a later release adds to either table is archived
 * without a change here; text JSON (cast it to jsonb to query it), which
 * is built and compressed three times faster than jsonb; a whole purge in
 * one value, so that TOAST compresses the names that repeat from one job
 * to the next: about 160 bytes a job, where a job alone as jsonb takes
 * 1.1 kB.  The operator looks a job up by its id (first_job_id ..
 * last_job_id), and exports and deletes by day (docs/production.md,
 * "Retention"). */
CREATE TABLE allot.job_archive (
    archived_at   timestamptz NOT NULL,
    job_count     int NOT NULL,
    first_job_id  bigint NOT NULL,
    last_job_id   bigint NOT NULL,
    finished_from timestamptz NOT NULL,
    finished_to   timestamptz NOT NULL,
    jobs          json NOT NULL,
    CONSTRAINT job_archive_ids_ordered CHECK (first_job_id <= last_job_id),
    CONSTRAINT job_archive_count_positive CHECK (job_count >= 1)
);
CREATE INDEX job_archive_first_job_idx ON allot.job_archive (first_job_id);
CREATE INDEX job_archive_archived_at_idx ON allot.job_archive (archived_at);
COMMENT ON TABLE allot.job_archive IS
    'Allot writes: finished jobs retention moved out of allot.job (allot.retention_archive on), one row per purge; the operator deletes what it no longer needs';
COMMENT ON COLUMN allot.job_archive.archived_at IS 'The now of the purge';
COMMENT ON COLUMN allot.job_archive.job_count IS 'Jobs in jobs';
COMMENT ON COLUMN allot.job_archive.first_job_id IS 'The least job id in jobs';
COMMENT ON COLUMN allot.job_archive.last_job_id IS 'The greatest job id in jobs';
COMMENT ON COLUMN allot.job_archive.finished_from IS
    'When the first of them finished (its last report, or the deadline of the sending it gave up at)';
COMMENT ON COLUMN allot.job_archive.finished_to IS 'When the last of them finished';
COMMENT ON COLUMN allot.job_archive.jobs IS
    'The jobs, by id, a JSON array: each {"job": its row of allot.job, every column, "reports": its rows of allot.job_report, every sending that ended, oldest first}';

/* What a purge takes, oldest first: the finished jobs the transitioner is
 * done with (not validated, or validated and both learnt from and
 * credited), by the instant they finished.  Its expression and predicate
 * are those of the purge's query (src/retention.c).  Built by this update,
 * in one read of allot.job, while writes to the table wait. */
CREATE INDEX job_finished_idx ON allot.job ((coalesce(returned_at, deadline)))
    WHERE state IN ('done', 'error', 'timed_out')
      AND (validated IS NOT TRUE OR (sampled AND credit IS NOT NULL));

CREATE FUNCTION allot.retention_purging() RETURNS boolean
    LANGUAGE c VOLATILE
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_retention_purging_sql';
COMMENT ON FUNCTION allot.retention_purging() IS
    'True while this session''s purge removes jobs: the counters then keep what they count';

CREATE FUNCTION allot.purge_finished(now timestamptz DEFAULT now(), batch int DEFAULT NULL)
    RETURNS jsonb
    LANGUAGE c VOLATILE CALLED ON NULL INPUT
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_purge_finished_sql';
COMMENT ON FUNCTION allot.purge_finished(timestamptz, int) IS
    'Move at most batch (NULL: allot.retention_batch) finished jobs that ended more than allot.retention_period before now, oldest first, and their reports out of allot.job and allot.job_report, into allot.job_archive when allot.retention_archive is on; their counts and credit stay. run_transitioner does the same as its last step';

/* A purged total changed by anything but a purge moves the counters it
 * stands for, as a change of jobs moves them (the job trigger): in this
 * backend's shard of job_usage, per workload, and in host_credit, per
 * host, with its decayed credit merged at the later of the two instants.
 * The statement's rows are gathered by kind of statement (a transition
 * table exists only for the events that have it), then added in one
 * upsert, in id order, as every writer of the counters takes their rows. */
CREATE FUNCTION allot.purged_totals_trigger() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ids      bigint[];
    credit   numeric[];
    jobs     bigint[];
    done     bigint[];
    error    bigint[];
    decayed  double precision[];
    at       timestamptz[];
BEGIN
    IF allot.retention_purging() THEN
        RETURN NULL;    -- a purge: the jobs' counts never left the counters
    END IF;
    IF TG_TABLE_NAME = 'purged_jobs' THEN
        IF TG_OP = 'INSERT' THEN
            SELECT array_agg(n.workload_id), array_agg(n.done), array_agg(n.error)
              INTO ids, done, error FROM new_rows n;
        ELSIF TG_OP = 'DELETE' THEN
            SELECT array_agg(o.workload_id), array_agg(-o.done), array_agg(-o.error)
              INTO ids, done, error FROM old_rows o;
        ELSE
            SELECT array_agg(d.workload_id), array_agg(d.done), array_agg(d.error)
              INTO ids, done, error
              FROM (SELECT n.workload_id, n.done, n.error FROM new_rows n
                    UNION ALL
                    SELECT o.workload_id, -o.done, -o.error FROM old_rows o) d;
        END IF;
        INSERT INTO allot.job_usage AS u (workload_id, shard, done, error)
        SELECT d.id, allot.usage_shard(), sum(d.done), sum(d.error)
          FROM unnest(ids, done, error) AS d (id, done, error)
         GROUP BY d.id HAVING sum(d.done) <> 0 OR sum(d.error) <> 0
         ORDER BY d.id
        ON CONFLICT (workload_id, shard) DO UPDATE
           SET done = u.done + excluded.done, error = u.error + excluded.error;
    ELSE
        IF TG_OP = 'INSERT' THEN
            SELECT array_agg(n.host_id), array_agg(n.credit), array_agg(n.jobs),
                   array_agg(n.decayed), array_agg(n.decayed_at)
              INTO ids, credit, jobs, decayed, at FROM new_rows n;
        ELSIF TG_OP = 'DELETE' THEN
            SELECT array_agg(o.host_id), array_agg(-o.credit), array_agg(-o.jobs),
                   array_agg(-o.decayed), array_agg(o.decayed_at)
              INTO ids, credit, jobs, decayed, at FROM old_rows o;
        ELSE
            SELECT array_agg(d.host_id), array_agg(d.credit), array_agg(d.jobs),
                   array_agg(d.decayed), array_agg(d.decayed_at)
              INTO ids, credit, jobs, decayed, at
              FROM (SELECT n.host_id, n.credit, n.jobs, n.decayed, n.decayed_at FROM new_rows n
                    UNION ALL
                    SELECT o.host_id, -o.credit, -o.jobs, -o.decayed, o.decayed_at FROM old_rows o) d;
        END IF;
        INSERT INTO allot.host_credit AS c (host_id, credit, jobs, decayed, decayed_at)
        SELECT d.id, sum(d.credit), sum(d.jobs),
               sum(allot.credit_decay(d.decayed, extract(epoch FROM d.t - d.at)::double precision)), d.t
          FROM (SELECT x.*, max(x.at) OVER (PARTITION BY x.id) AS t
                  FROM unnest(ids, credit, jobs, decayed, at) AS x (id, credit, jobs, decayed, at)) d
         GROUP BY d.id, d.t
        HAVING sum(d.credit) <> 0 OR sum(d.jobs) <> 0
         ORDER BY d.id
        ON CONFLICT (host_id) DO UPDATE
           SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs,
               decayed = allot.credit_decay(c.decayed, extract(epoch FROM
                             greatest(c.decayed_at, excluded.decayed_at) - c.decayed_at)::double precision)
                       + allot.credit_decay(excluded.decayed, extract(epoch FROM
                             greatest(c.decayed_at, excluded.decayed_at) - excluded.decayed_at)::double precision),
               decayed_at = greatest(c.decayed_at, excluded.decayed_at);
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION allot.purged_totals_trigger() IS
    'Statement trigger on allot.purged_jobs and allot.purged_credit: a change made by anything but a purge (a restore, merge_host, an edit) is added to allot.job_usage and allot.host_credit, as a change of jobs is';

CREATE TRIGGER purged_jobs_insert AFTER INSERT ON allot.purged_jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_jobs_update AFTER UPDATE ON allot.purged_jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_jobs_delete AFTER DELETE ON allot.purged_jobs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_credit_insert AFTER INSERT ON allot.purged_credit
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_credit_update AFTER UPDATE ON allot.purged_credit
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();
CREATE TRIGGER purged_credit_delete AFTER DELETE ON allot.purged_credit
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.purged_totals_trigger();

/* The runs of the transitioner record what retention purged. */
ALTER TABLE allot.transitioner_run ADD COLUMN purged bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN allot.transitioner_run.purged IS
    'Finished jobs moved out of allot.job by retention (0 before 0.7.0)';

CREATE OR REPLACE VIEW allot.status_transitioner AS
SELECT r.run, r.started_at, r.finished_at,
       extract(epoch FROM r.finished_at - r.started_at)::float8 * 1000 AS duration_ms,
       r.now_given, r.fairness, r.timed_out, r.expired_assignments, r.reports_read,
       r.flops_samples, r.flops_estimates, r.credited, r.debts_folded, r.hosts_seen,
       r.purged
  FROM allot.transitioner_run r
 ORDER BY r.run DESC;
COMMENT ON COLUMN allot.status_transitioner.purged IS
    'Finished jobs moved out of allot.job by retention';

/* TRUNCATE of the jobs empties the counters (0.5.0): the farm's jobs never
 * were.  The purged jobs' totals go with them, first, while there are
 * counters for their triggers to subtract from. */
CREATE OR REPLACE FUNCTION allot.job_truncate_trigger() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM allot.purged_jobs;
    DELETE FROM allot.purged_credit;
    DELETE FROM allot.job_usage;
    DELETE FROM allot.host_credit;
    RETURN NULL;
END
$$;

/* check_invariants counts the purged totals with the jobs still there. */
CREATE OR REPLACE FUNCTION allot.check_invariants() RETURNS SETOF text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT line FROM (
        SELECT pg_catalog.format(
                   'workload %s: workload_usage holds threads %s, focus_threads %s, hosts %s;'
                   ' its counted assignments hold %s, %s, %s',
                   coalesce(u.workload_id, a.workload_id),
                   coalesce(u.threads, 0), coalesce(u.focus_threads, 0), coalesce(u.hosts, 0),
                   coalesce(a.threads, 0), coalesce(a.focus_threads, 0), coalesce(a.hosts, 0)) AS line
          FROM allot.workload_usage u
          FULL JOIN (SELECT workload_id,
                            sum(threads) FILTER (WHERE NOT focus) AS threads,
                            sum(threads) FILTER (WHERE focus) AS focus_threads,
                            count(*) AS hosts
                       FROM allot.assignment
                      WHERE counted
                      GROUP BY workload_id) a ON a.workload_id = u.workload_id
         WHERE coalesce(u.threads, 0) <> coalesce(a.threads, 0)
            OR coalesce(u.focus_threads, 0) <> coalesce(a.focus_threads, 0)
            OR coalesce(u.hosts, 0) <> coalesce(a.hosts, 0)
        UNION ALL
        SELECT pg_catalog.format(
                   'workload %s: job_usage holds unsent %s, in_progress %s, mflops %s, done %s, error %s;'
                   ' its jobs hold %s, %s, %s, %s, %s%s',
                   coalesce(u.workload_id, j.workload_id),
                   coalesce(u.unsent, 0), coalesce(u.in_progress, 0), coalesce(u.mflops, 0),
                   coalesce(u.done, 0), coalesce(u.error, 0),
                   coalesce(j.unsent, 0), coalesce(j.in_progress, 0), coalesce(j.mflops, 0),
                   coalesce(j.done, 0) + coalesce(p.done, 0), coalesce(j.error, 0) + coalesce(p.error, 0),
                   CASE WHEN p.workload_id IS NOT NULL
                        THEN pg_catalog.format(' (with the purged: done %s, error %s)', p.done, p.error)
                        ELSE '' END)
          FROM (SELECT workload_id, sum(unsent) AS unsent, sum(in_progress) AS in_progress,
                       sum(mflops) AS mflops, sum(done) AS done, sum(error) AS error
                  FROM allot.job_usage GROUP BY workload_id) u
          FULL JOIN (SELECT workload_id,
                            count(*) FILTER (WHERE state = 'unsent') AS unsent,
                            count(*) FILTER (WHERE state = 'in_progress') AS in_progress,
                            sum(allot.job_mflops(peak_flops_per_sec))
                                FILTER (WHERE state = 'in_progress') AS mflops,
                            count(*) FILTER (WHERE state = 'done') AS done,
                            count(*) FILTER (WHERE state IN ('error', 'timed_out')) AS error
                       FROM allot.job
                      GROUP BY workload_id) j ON j.workload_id = u.workload_id
          /* the finished jobs retention purged count on (0.7.0) */
          FULL JOIN allot.purged_jobs p ON p.workload_id = coalesce(u.workload_id, j.workload_id)
         WHERE coalesce(u.unsent, 0) <> coalesce(j.unsent, 0)
            OR coalesce(u.in_progress, 0) <> coalesce(j.in_progress, 0)
            OR coalesce(u.mflops, 0) <> coalesce(j.mflops, 0)
            OR coalesce(u.done, 0) <> coalesce(j.done, 0) + coalesce(p.done, 0)
            OR coalesce(u.error, 0) <> coalesce(j.error, 0) + coalesce(p.error, 0)
        UNION ALL
        /* Counters in range: no count may be negative (a shard's MFLOPS are
         * held within a bigint by a constraint, and requests add shards as
         * doubles). */
        SELECT pg_catalog.format(
                   'workload %s: job_usage holds a counter out of range (unsent %s, in_progress %s,'
                   ' mflops %s, done %s, error %s)',
                   workload_id, unsent, in_progress, mflops, done, error)
          FROM (SELECT workload_id, sum(unsent) AS unsent, sum(in_progress) AS in_progress,
                       sum(mflops) AS mflops, sum(done) AS done, sum(error) AS error
                  FROM allot.job_usage GROUP BY workload_id) u
         WHERE unsent < 0 OR in_progress < 0 OR done < 0 OR error < 0
            OR mflops < 0
        UNION ALL
        SELECT pg_catalog.format('job %s: peak_flops_per_sec %s is out of range (0 to 2.048e21)',
                                 j.id, j.peak_flops_per_sec)
          FROM allot.job j
         WHERE j.peak_flops_per_sec NOT BETWEEN 0 AND 2.048e21
        UNION ALL
        SELECT pg_catalog.format(
                   'host %s: host_credit holds credit %s of %s jobs; its jobs hold %s of %s%s',
                   coalesce(c.host_id, j.host_id, p.host_id), coalesce(c.credit, 0), coalesce(c.jobs, 0),
                   coalesce(j.credit, 0) + coalesce(p.credit, 0), coalesce(j.jobs, 0) + coalesce(p.jobs, 0),
                   CASE WHEN p.host_id IS NOT NULL
                        THEN pg_catalog.format(' (with the purged: %s of %s)', p.credit, p.jobs)
                        ELSE '' END)
          FROM allot.host_credit c
          FULL JOIN (SELECT host_id, sum(credit::numeric) AS credit, count(*) AS jobs
                       FROM allot.job
                      WHERE credit IS NOT NULL AND host_id IS NOT NULL
                      GROUP BY host_id) j ON j.host_id = c.host_id
          FULL JOIN allot.purged_credit p ON p.host_id = coalesce(c.host_id, j.host_id)
         WHERE coalesce(c.credit, 0) <> coalesce(j.credit, 0) + coalesce(p.credit, 0)
            OR coalesce(c.jobs, 0) <> coalesce(j.jobs, 0) + coalesce(p.jobs, 0)
        UNION ALL
        /* The decayed credit kept is what its jobs give at decayed_at,
         * with the purged total's, decayed from its own instant. */
        SELECT pg_catalog.format('host %s: host_credit holds decayed credit %s at %s; its jobs give %s',
                                 c.host_id, c.decayed, c.decayed_at, coalesce(j.decayed, 0) + coalesce(p.decayed, 0))
          FROM allot.host_credit c
          LEFT JOIN LATERAL (
              SELECT sum(allot.credit_decay(j.credit,
                         extract(epoch FROM c.decayed_at - coalesce(j.returned_at, c.decayed_at))::double precision))
                         AS decayed
                FROM allot.job j WHERE j.host_id = c.host_id AND j.credit IS NOT NULL) j ON true
          LEFT JOIN LATERAL (
              SELECT allot.credit_decay(p.decayed,
                         extract(epoch FROM c.decayed_at - p.decayed_at)::double precision) AS decayed
                FROM allot.purged_credit p WHERE p.host_id = c.host_id) p ON true
         WHERE abs(c.decayed - coalesce(j.decayed, 0) - coalesce(p.decayed, 0)) > 1e-6 * greatest(abs(c.decayed), 1)
        UNION ALL
        SELECT pg_catalog.format('job %s names host %s, which does not exist', j.id, j.host_id)
          FROM allot.job j
         WHERE j.host_id IS NOT NULL AND NOT EXISTS (SELECT FROM allot.host h WHERE h.id = j.host_id)
        UNION ALL
        SELECT pg_catalog.format('job %s names app version %s, which does not exist', j.id, j.app_version_id)
          FROM allot.job j
         WHERE j.app_version_id IS NOT NULL
           AND NOT EXISTS (SELECT FROM allot.app_version v WHERE v.id = j.app_version_id)
        UNION ALL
        SELECT pg_catalog.format('workload %s has %s jobs but no app: they can never be sent',
                                 w.id, (SELECT count(*) FROM allot.job j WHERE j.workload_id = w.id))
          FROM allot.workload w
         WHERE w.app_id IS NULL AND EXISTS (SELECT FROM allot.job j WHERE j.workload_id = w.id)
        UNION ALL
        /* Names written before 0.6.0 that it would refuse. */
        SELECT pg_catalog.format('host %s: its name %s', h.id, allot.name_problem(h.name))
          FROM allot.host h WHERE allot.name_problem(h.name) IS NOT NULL
        UNION ALL
        SELECT pg_catalog.format('app %s: its name %s', a.id, allot.name_problem(a.name))
          FROM allot.app a WHERE allot.name_problem(a.name) IS NOT NULL
        UNION ALL
        SELECT pg_catalog.format('workload %s: its name %s', w.id, allot.name_problem(w.name))
          FROM allot.workload w WHERE allot.name_problem(w.name) IS NOT NULL
        UNION ALL
        /* Each app's statistics are what its window gives. */
        SELECT pg_catalog.format('app %s: its statistics are not those of its window of %s reports',
                                 a.id, pg_catalog.cardinality(a.au_hosts))
          FROM allot.app a
         WHERE pg_catalog.cardinality(a.au_hosts) > 0
           AND (pg_catalog.cardinality(a.au_actual) <> pg_catalog.cardinality(a.au_hosts)
                OR pg_catalog.cardinality(a.au_predicted) <> pg_catalog.cardinality(a.au_hosts)
                OR EXISTS (SELECT FROM allot.app_unit_statistics(a.au_hosts, a.au_actual, a.au_predicted) s
                            WHERE s.n_reports <> a.n_reports
                               OR abs(s.au_ratio_mean - a.au_ratio_mean) > 1e-9 * greatest(abs(s.au_ratio_mean), 1)
                               OR abs(s.au_ratio_m2 - a.au_ratio_m2) > 1e-9 * greatest(abs(s.au_ratio_m2), 1)
                               OR abs(s.actual_au_mean - a.actual_au_mean) > 1e-9 * greatest(abs(s.actual_au_mean), 1)))
        UNION ALL
        SELECT pg_catalog.format('app %s: %s FLOPS samples but %s hosts for them', a.id,
                                 pg_catalog.cardinality(a.cpu_samples) + pg_catalog.cardinality(a.gpu_samples),
                                 pg_catalog.cardinality(a.cpu_sample_hosts) + pg_catalog.cardinality(a.gpu_sample_hosts))
          FROM allot.app a
         WHERE pg_catalog.cardinality(a.cpu_samples) <> pg_catalog.cardinality(a.cpu_sample_hosts)
            OR pg_catalog.cardinality(a.gpu_samples) <> pg_catalog.cardinality(a.gpu_sample_hosts)
        UNION ALL
        /* Purged totals only grow: a purge adds, nothing else subtracts
         * but an operator's edit. */
        SELECT pg_catalog.format('workload %s: purged_jobs holds done %s, error %s, below 0',
                                 p.workload_id, p.done, p.error)
          FROM allot.purged_jobs p WHERE p.done < 0 OR p.error < 0
        UNION ALL
        SELECT pg_catalog.format('host %s: purged_credit holds %s jobs, below 0', p.host_id, p.jobs)
          FROM allot.purged_credit p WHERE p.jobs < 0
    ) lines ORDER BY 1
$$;

/* merge_host moves the credit of the merged host's purged jobs too. */
CREATE OR REPLACE FUNCTION allot.merge_host(keep bigint, gone bigint) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    missing bigint;
    jobs bigint;
    reports bigint;
BEGIN
    /* As the C writers say it (allot_require_writable). */
    IF pg_catalog.pg_is_in_recovery() THEN
        RAISE EXCEPTION 'allot.merge_host cannot run on a standby: the server is in recovery, and read-only'
            USING ERRCODE = 'read_only_sql_transaction', DETAIL = 'allot.merge_host writes allot''s tables.',
                  HINT = 'Call it on the primary. A standby serves the status views and allot''s read-only functions.';
    END IF;
    IF pg_catalog.current_setting('transaction_read_only')::boolean THEN
        RAISE EXCEPTION 'allot.merge_host cannot run in a read-only transaction'
            USING ERRCODE = 'read_only_sql_transaction', DETAIL = 'allot.merge_host writes allot''s tables.',
                  HINT = 'Call it in a read-write transaction (transaction_read_only off).';
    END IF;
    IF keep IS NULL OR gone IS NULL THEN
        RAISE EXCEPTION 'keep and gone must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF keep = gone THEN
        RAISE EXCEPTION 'host % cannot be merged into itself', keep
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    /* What a DELETE of a host takes (allot.edit_lock), taken first: every
     * request, report and transitioner step waits until this commits. */
    LOCK TABLE allot.job, allot.assignment IN EXCLUSIVE MODE;
    PERFORM FROM allot.host h WHERE h.id IN (keep, gone) ORDER BY h.id FOR UPDATE;
    SELECT x INTO missing FROM pg_catalog.unnest(ARRAY[keep, gone]) x
     WHERE NOT EXISTS (SELECT FROM allot.host h WHERE h.id = x) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'host % does not exist', missing
            USING ERRCODE = 'no_data_found', HINT = 'Hosts are the rows of allot.host.';
    END IF;

    UPDATE allot.job j SET host_id = keep WHERE j.host_id = gone;
    GET DIAGNOSTICS jobs = ROW_COUNT;
    WITH moved AS (DELETE FROM allot.job_report r WHERE r.host_id = gone RETURNING r.*)
    INSERT INTO allot.job_report
           (job_id, host_id, sent_at, outcome, app_units, elapsed_secs, raw_flops_per_sec,
            reported_at, reply, sending)
    SELECT m.job_id, keep, m.sent_at, m.outcome, m.app_units, m.elapsed_secs, m.raw_flops_per_sec,
           m.reported_at, m.reply, m.sending
      FROM moved m
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS reports = ROW_COUNT;
    /* Per version: the counts add up; the lower quota, and the older
     * host's estimates where it has them. */
    INSERT INTO allot.host_app_version AS hv
           (host_id, app_version_id, seconds_per_app_unit, raw_flops_per_sec, quota,
            quota_day, jobs_today, n_success, n_error)
    SELECT keep, g.app_version_id, g.seconds_per_app_unit, g.raw_flops_per_sec, g.quota,
           g.quota_day, g.jobs_today, g.n_success, g.n_error
      FROM allot.host_app_version g WHERE g.host_id = gone
     ORDER BY g.app_version_id
    ON CONFLICT (host_id, app_version_id) DO UPDATE
       SET seconds_per_app_unit = coalesce(hv.seconds_per_app_unit, excluded.seconds_per_app_unit),
           raw_flops_per_sec = coalesce(hv.raw_flops_per_sec, excluded.raw_flops_per_sec),
           quota = least(hv.quota, excluded.quota),
           n_success = hv.n_success + excluded.n_success,
           n_error = hv.n_error + excluded.n_error;
    /* The credit of its jobs that retention purged (0.7.0): the triggers
     * of allot.purged_credit move it from the one host's total to the
     * other's, as the UPDATE above moved its jobs' credit. */
    WITH moved AS (DELETE FROM allot.purged_credit p WHERE p.host_id = gone RETURNING p.*)
    INSERT INTO allot.purged_credit AS p (host_id, credit, jobs, decayed, decayed_at)
    SELECT keep, m.credit, m.jobs, m.decayed, m.decayed_at FROM moved m
    ON CONFLICT (host_id) DO UPDATE
       SET credit = p.credit + excluded.credit, jobs = p.jobs + excluded.jobs,
           decayed = allot.credit_decay(p.decayed, extract(epoch FROM
                         greatest(p.decayed_at, excluded.decayed_at) - p.decayed_at)::double precision)
                   + allot.credit_decay(excluded.decayed, extract(epoch FROM
                         greatest(p.decayed_at, excluded.decayed_at) - excluded.decayed_at)::double precision),
           decayed_at = greatest(p.decayed_at, excluded.decayed_at);
    DELETE FROM allot.host h WHERE h.id = gone;
    DELETE FROM allot.host_credit c WHERE c.host_id = gone AND c.credit = 0 AND c.jobs = 0;
    RETURN pg_catalog.jsonb_build_object('host_id', keep, 'merged', gone,
                                         'jobs', jobs, 'reports', reports);
END
$$;

/* Settings, privileges and dumps. */
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::int >= 150000 THEN
        EXECUTE 'GRANT SET ON PARAMETER allot.retention_period, allot.retention_batch,
                     allot.retention_archive TO allot_admin';
    END IF;
END
$$;

REVOKE ALL ON allot.purged_jobs, allot.purged_credit, allot.job_archive FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON allot.purged_jobs, allot.purged_credit, allot.job_archive
    TO allot_admin;
REVOKE ALL ON FUNCTION allot.retention_purging(), allot.purge_finished(timestamptz, int),
                       allot.purged_totals_trigger() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.retention_purging(), allot.purge_finished(timestamptz, int),
                          allot.purged_totals_trigger() TO allot_admin;

/* The purged totals are the farm's history, like its jobs: dumped, and
 * added to the counters (not dumped) when restored.  So is the archive. */
SELECT pg_catalog.pg_extension_config_dump('allot.purged_jobs', '');
SELECT pg_catalog.pg_extension_config_dump('allot.purged_credit', '');
SELECT pg_catalog.pg_extension_config_dump('allot.job_archive', '');
