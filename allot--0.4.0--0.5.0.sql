/* allot 0.4.0 -> 0.5.0: untrusted web roles and hosts, self-registering
 * hosts, status views, OpenBench to the letter, and catalog comments.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.5.0'" to load this file. \quit

/* ---------------------------------------------------------------------------
 * Policy, ownership and untrusted input.
 * ------------------------------------------------------------------------- */

/* Settings are farm policy: from 0.5.0 the library defines every allot.*
 * setting as operator-only (PGC_SUSET), so a web login cannot SET them.
 * Superusers can; on PostgreSQL 15 and later so can allot_admin, through
 * SET privileges on the parameters (older servers have no such privilege:
 * there, only superusers set policy). */
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::int >= 150000 THEN
        EXECUTE 'GRANT SET ON PARAMETER
                     allot.balance_engine_throughputs, allot.repeat_threshold,
                     allot.repeat_upper, allot.count_requester, allot.assignment_ttl,
                     allot.fairness, allot.rec_half_life, allot.daily_quota,
                     allot.default_seconds_per_app_unit, allot.default_delay_bound,
                     allot.max_jobs_per_request, allot.flops_sample_size,
                     allot.flops_percentile, allot.flops_avg_weight,
                     allot.gpu_efficiency, allot.transitioner_batch
                 TO allot_admin';
    END IF;
END
$$;

/* No allot object may let an operator run code as another role.  0.4.0
 * had allot_admin own the SECURITY DEFINER functions and the triggers, so a
 * member could redefine a trigger that a superuser's write (a pg_cron
 * transitioner run) would then execute.  From 0.5.0:
 *   - the triggers run as whoever writes the table (SECURITY INVOKER: every
 *     writer of allot's tables may write the usage tables too) and belong to
 *     the extension's owner;
 *   - the SECURITY DEFINER functions belong to allot_owner, a NOLOGIN role
 *     with no members and no more rights than the functions need (the
 *     section "Ownership" at the end of this script).
 * allot_admin owns nothing, so it can alter nothing.  (On PostgreSQL 15 and
 * older a CREATEROLE role can grant itself any non-superuser role; such a
 * role is an administrator of the cluster, not an operator of allot.) */
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'allot_owner') THEN
        CREATE ROLE allot_owner NOLOGIN;
    ELSIF EXISTS (SELECT FROM pg_catalog.pg_roles
                   WHERE rolname = 'allot_owner' AND (rolcanlogin OR rolsuper))
       OR EXISTS (SELECT FROM pg_catalog.pg_auth_members m
                    JOIN pg_catalog.pg_roles r ON r.oid = m.roleid
                   WHERE r.rolname = 'allot_owner') THEN
        RAISE EXCEPTION 'role "allot_owner" exists and can log in, is a superuser or has members'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'allot has it own its SECURITY DEFINER functions and nothing else; drop or rename it first.';
    END IF;
END
$$;

ALTER FUNCTION allot.assignment_usage_trigger() SECURITY INVOKER;
ALTER FUNCTION allot.assignment_truncate_trigger() SECURITY INVOKER;
ALTER FUNCTION allot.job_usage_trigger() SECURITY INVOKER;
ALTER FUNCTION allot.job_truncate_trigger() SECURITY INVOKER;
ALTER FUNCTION allot.assignment_usage_trigger() OWNER TO CURRENT_USER;
ALTER FUNCTION allot.assignment_truncate_trigger() OWNER TO CURRENT_USER;
ALTER FUNCTION allot.job_usage_trigger() OWNER TO CURRENT_USER;
ALTER FUNCTION allot.job_truncate_trigger() OWNER TO CURRENT_USER;

/* Functions without a SET clause (so that they are inlined) name every
 * operator by schema, so that no caller's search_path can reach into them. */
CREATE OR REPLACE FUNCTION allot.decay(value double precision, age_secs double precision,
                                       half_life_secs double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    -- OPERATOR() has one precedence for all: every operand is parenthesised.
    SELECT CASE WHEN (age_secs OPERATOR(pg_catalog.<=) 0) THEN value
                WHEN (age_secs OPERATOR(pg_catalog.>=) (1000 OPERATOR(pg_catalog.*) half_life_secs))
                  OR (value OPERATOR(pg_catalog.<) 1e-6) THEN 0
                ELSE value OPERATOR(pg_catalog.*)
                     pg_catalog.power(0.5::double precision,
                                      (age_secs OPERATOR(pg_catalog./) half_life_secs)) END
$$;

/* Operator edits that take away what a request may be using wait for the
 * requests in flight and hold new ones back until they commit: every
 * request takes the row-writing lock of allot.job or allot.assignment
 * before it reads workloads, apps, versions or its host, and these edits
 * take both tables in SHARE mode before they remove anything (the lock
 * order is written out in src/entry.h).  A request never meets a workload,
 * version or host that vanished under it, so it never fails on a foreign
 * key; an edit waits at most for the requests in flight. */
CREATE FUNCTION allot.edit_lock() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE allot.job, allot.assignment IN SHARE MODE;
    RETURN NULL;
END
$$;

CREATE TRIGGER workload_edit_lock BEFORE DELETE OR TRUNCATE ON allot.workload
    FOR EACH STATEMENT EXECUTE FUNCTION allot.edit_lock();
CREATE TRIGGER app_edit_lock BEFORE DELETE OR TRUNCATE ON allot.app
    FOR EACH STATEMENT EXECUTE FUNCTION allot.edit_lock();
CREATE TRIGGER app_version_edit_lock BEFORE DELETE OR TRUNCATE ON allot.app_version
    FOR EACH STATEMENT EXECUTE FUNCTION allot.edit_lock();
CREATE TRIGGER host_edit_lock BEFORE DELETE OR TRUNCATE ON allot.host
    FOR EACH STATEMENT EXECUTE FUNCTION allot.edit_lock();

/* A workload with jobs in progress is not deleted: its hosts would report
 * jobs that no longer exist.  Its operator finishes it first. */
CREATE FUNCTION allot.workload_delete_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    SELECT sum(u.in_progress) INTO n FROM allot.job_usage u WHERE u.workload_id = OLD.id;
    IF n > 0 THEN
        RAISE EXCEPTION 'workload % has % jobs in progress', OLD.id, n
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set its state to finished, and delete it once its jobs are reported or timed out.';
    END IF;
    RETURN OLD;
END
$$;

CREATE TRIGGER workload_delete_guard BEFORE DELETE ON allot.workload
    FOR EACH ROW EXECUTE FUNCTION allot.workload_delete_guard();

/* One fold at a time, and none while a request adds to debts (src/credit.h:
 * the same advisory lock, requests share it). */
CREATE OR REPLACE FUNCTION allot.fold_debts(now timestamptz) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    folded bigint;
BEGIN
    PERFORM pg_catalog.pg_advisory_xact_lock(1634495599, 1684366964);
    PERFORM FROM allot.workload_credit ORDER BY workload_id, resource FOR UPDATE;

    WITH eligible AS (SELECT * FROM allot.debt_eligible()),
    totals AS (
        SELECT e.resource, e.jobs, sum(c.sent) AS got, sum(e.throughput) AS shares
          FROM eligible e
          JOIN allot.workload_credit c USING (workload_id, resource)
         GROUP BY e.resource, e.jobs)
    UPDATE allot.workload_credit c
       SET debt = c.debt + e.throughput / t.shares * t.got - c.sent,
           sent = 0
      FROM eligible e
      JOIN totals t USING (resource, jobs)
     WHERE c.workload_id = e.workload_id AND c.resource = e.resource
       AND t.got > 0;
    GET DIAGNOSTICS folded = ROW_COUNT;

    UPDATE allot.workload_credit SET sent = 0 WHERE sent > 0;

    INSERT INTO allot.workload_credit (workload_id, resource, rec_at, debt)
    SELECT e.workload_id, e.resource, now,
           coalesce((SELECT max(c.debt)
                       FROM allot.workload_credit c
                       JOIN allot.workload w ON w.id = c.workload_id
                      WHERE c.resource = e.resource
                        AND (w.app_id IS NOT NULL) = e.jobs), 0)
      FROM allot.debt_eligible() e
     ORDER BY e.workload_id, e.resource
    ON CONFLICT (workload_id, resource) DO NOTHING;

    WITH top AS (
        SELECT c.resource, w.app_id IS NOT NULL AS jobs, max(c.debt) AS debt
          FROM allot.workload_credit c
          JOIN allot.workload w ON w.id = c.workload_id
         GROUP BY 1, 2)
    UPDATE allot.workload_credit c
       SET debt = c.debt - t.debt
      FROM allot.workload w, top t
     WHERE w.id = c.workload_id AND t.resource = c.resource
       AND t.jobs = (w.app_id IS NOT NULL) AND t.debt <> 0;

    RETURN folded;
END
$$;

/* ---------------------------------------------------------------------------
 * Requests that cost what a one-row update costs.
 * ------------------------------------------------------------------------- */

/* job_usage holds a row per (workload, shard): each backend adds to its own
 * shard (allot.usage_shard(), src/usage.c), so that concurrent requests do
 * not queue behind each other's usage rows, which they hold until they
 * commit.  The usage of a workload is the sum of its shards.  MFLOPS are
 * summed as numeric: within allot's ranges a job is at most about 2e15
 * MFLOPS, and no count of jobs overflows a numeric. */
CREATE FUNCTION allot.usage_shard() RETURNS int
    LANGUAGE c VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'allot_usage_shard';

COMMENT ON FUNCTION allot.usage_shard() IS
    'The shard of allot.job_usage this backend adds to';

ALTER TABLE allot.job_usage DROP CONSTRAINT job_usage_pkey;
ALTER TABLE allot.job_usage
    ADD COLUMN shard int NOT NULL DEFAULT 0,
    ALTER COLUMN mflops TYPE numeric,
    ADD PRIMARY KEY (workload_id, shard);

CREATE OR REPLACE FUNCTION allot.job_usage_trigger() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    my_shard int := allot.usage_shard();
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO allot.job_usage AS u (workload_id, shard, unsent, in_progress, mflops)
        SELECT workload_id, my_shard, count(*) FILTER (WHERE state = 'unsent'),
               count(*) FILTER (WHERE state = 'in_progress'),
               coalesce(sum(allot.job_mflops(peak_flops_per_sec)) FILTER (WHERE state = 'in_progress'), 0)
          FROM new_rows GROUP BY workload_id ORDER BY workload_id
        ON CONFLICT (workload_id, shard) DO UPDATE
           SET unsent = u.unsent + excluded.unsent,
               in_progress = u.in_progress + excluded.in_progress,
               mflops = u.mflops + excluded.mflops;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO allot.job_usage AS u (workload_id, shard, unsent, in_progress, mflops)
        SELECT workload_id, my_shard, sum(unsent), sum(in_progress), sum(mflops)
          FROM (SELECT workload_id, (state = 'unsent')::int AS unsent,
                       (state = 'in_progress')::int AS in_progress,
                       CASE WHEN state = 'in_progress'
                            THEN allot.job_mflops(peak_flops_per_sec) ELSE 0 END AS mflops
                  FROM new_rows
                UNION ALL
                SELECT workload_id, -(state = 'unsent')::int, -(state = 'in_progress')::int,
                       CASE WHEN state = 'in_progress'
                            THEN -allot.job_mflops(peak_flops_per_sec) ELSE 0 END
                  FROM old_rows) d
         GROUP BY workload_id
        HAVING sum(unsent) <> 0 OR sum(in_progress) <> 0 OR sum(mflops) <> 0
         ORDER BY workload_id
        ON CONFLICT (workload_id, shard) DO UPDATE
           SET unsent = u.unsent + excluded.unsent,
               in_progress = u.in_progress + excluded.in_progress,
               mflops = u.mflops + excluded.mflops;
    ELSE
        INSERT INTO allot.job_usage AS u (workload_id, shard, unsent, in_progress, mflops)
        SELECT workload_id, my_shard, -count(*) FILTER (WHERE state = 'unsent'),
               -count(*) FILTER (WHERE state = 'in_progress'),
               -coalesce(sum(allot.job_mflops(peak_flops_per_sec)) FILTER (WHERE state = 'in_progress'), 0)
          FROM old_rows GROUP BY workload_id ORDER BY workload_id
        ON CONFLICT (workload_id, shard) DO UPDATE
           SET unsent = u.unsent + excluded.unsent,
               in_progress = u.in_progress + excluded.in_progress,
               mflops = u.mflops + excluded.mflops;
    END IF;
    RETURN NULL;
END
$$;

/* A job's host and app version are written by requests, which take their
 * host's lock and allot.job's write lock before reading the version from
 * the cache (src/entry.h); an operator's DELETE of a host or version waits
 * for them (allot.edit_lock()).  So the foreign keys' per-row lookups, which
 * lock the referenced rows of every job sent, are not needed to keep jobs
 * from pointing nowhere: a statement trigger refuses the DELETE instead,
 * once per statement, as the keys' NO ACTION did. */
ALTER TABLE allot.job DROP CONSTRAINT job_host_id_fkey;
ALTER TABLE allot.job DROP CONSTRAINT job_app_version_id_fkey;

CREATE FUNCTION allot.job_reference_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    gone bigint;
    jobs bigint;
BEGIN
    IF TG_TABLE_NAME = 'host' THEN
        SELECT g.id, count(*) INTO gone, jobs
          FROM gone_rows g JOIN allot.job j ON j.host_id = g.id
         GROUP BY g.id ORDER BY g.id LIMIT 1;
    ELSE
        SELECT g.id, count(*) INTO gone, jobs
          FROM gone_rows g JOIN allot.job j ON j.app_version_id = g.id
         GROUP BY g.id ORDER BY g.id LIMIT 1;
    END IF;
    IF gone IS NOT NULL THEN
        RAISE EXCEPTION '% % is still referenced by % jobs', replace(TG_TABLE_NAME, '_', ' '), gone, jobs
            USING ERRCODE = 'foreign_key_violation',
                  HINT = 'Jobs keep the host and app version they were sent to; delete those jobs first, or keep the row.';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER host_job_reference_guard AFTER DELETE ON allot.host
    REFERENCING OLD TABLE AS gone_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.job_reference_guard();
CREATE TRIGGER app_version_job_reference_guard AFTER DELETE ON allot.app_version
    REFERENCING OLD TABLE AS gone_rows
    FOR EACH STATEMENT EXECUTE FUNCTION allot.job_reference_guard();

/* When a host last asked for jobs, kept with its backoffs: a request then
 * writes no host row; the transitioner brings host.last_seen up to date. */
ALTER TABLE allot.host_resource ADD COLUMN asked_at timestamptz;

/* check_invariants sums job_usage's shards. */
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
            OR u.hosts = 0
        UNION ALL
        SELECT pg_catalog.format(
                   'workload %s: job_usage holds unsent %s, in_progress %s, mflops %s;'
                   ' its jobs hold %s, %s, %s',
                   coalesce(u.workload_id, j.workload_id),
                   coalesce(u.unsent, 0), coalesce(u.in_progress, 0), coalesce(u.mflops, 0),
                   coalesce(j.unsent, 0), coalesce(j.in_progress, 0), coalesce(j.mflops, 0))
          FROM (SELECT workload_id, sum(unsent) AS unsent, sum(in_progress) AS in_progress,
                       sum(mflops) AS mflops
                  FROM allot.job_usage GROUP BY workload_id) u
          FULL JOIN (SELECT workload_id,
                            count(*) FILTER (WHERE state = 'unsent') AS unsent,
                            count(*) FILTER (WHERE state = 'in_progress') AS in_progress,
                            sum(allot.job_mflops(peak_flops_per_sec))
                                FILTER (WHERE state = 'in_progress') AS mflops
                       FROM allot.job
                      GROUP BY workload_id) j ON j.workload_id = u.workload_id
         WHERE coalesce(u.unsent, 0) <> coalesce(j.unsent, 0)
            OR coalesce(u.in_progress, 0) <> coalesce(j.in_progress, 0)
            OR coalesce(u.mflops, 0) <> coalesce(j.mflops, 0)
        UNION ALL
        SELECT pg_catalog.format('job %s names host %s, which does not exist', j.id, j.host_id)
          FROM allot.job j
         WHERE j.host_id IS NOT NULL AND NOT EXISTS (SELECT FROM allot.host h WHERE h.id = j.host_id)
        UNION ALL
        SELECT pg_catalog.format('job %s names app version %s, which does not exist', j.id, j.app_version_id)
          FROM allot.job j
         WHERE j.app_version_id IS NOT NULL
           AND NOT EXISTS (SELECT FROM allot.app_version v WHERE v.id = j.app_version_id)
    ) lines ORDER BY 1
$$;

/* ---------------------------------------------------------------------------
 * OpenBench to the letter.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Hosts that register themselves (the BOINC front end).
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Status views and the allot_monitor role.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Catalog comments.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Ownership and grants (keep this section last): every SECURITY DEFINER
 * function of schema allot belongs to allot_owner, which gets what they
 * need: the rows of allot's tables, its sequences and its functions.
 * allot_admin keeps every table's rows and every function (a change of
 * owner takes the old owner's rights with it); PUBLIC keeps nothing.
 * ------------------------------------------------------------------------- */
GRANT USAGE ON SCHEMA allot TO allot_owner;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA allot TO allot_owner;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA allot TO allot_owner;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA allot TO allot_owner;

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = 'allot'::regnamespace AND p.prosecdef
              ORDER BY p.oid LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO allot_owner', f);
    END LOOP;
END
$$;

REVOKE ALL ON ALL TABLES IN SCHEMA allot FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA allot FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA allot TO allot_admin;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA allot TO allot_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA allot TO allot_admin;
