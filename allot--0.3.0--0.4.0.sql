/* allot 0.3.0 -> 0.4.0: fairness over time (allot.fairness = recent and
 * debt; seeds 001, 002, 003).
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.4.0'" to load this file. \quit

/* ---------------------------------------------------------------------------
 * Credit per (workload, resource): what was handed out, for the recent and
 * debt fairness modes (src/fairness.h has the formulas).  Written only while
 * allot.fairness is recent or debt: a request adds the credit of each job or
 * assignment it hands out, the transitioner folds `sent` into `debt`.
 * Credit is in FLOPs for job workloads (est_secs x peak FLOPS) and in
 * thread-seconds for assignment workloads (threads x assignment_ttl); the
 * two kinds are never compared.
 * ------------------------------------------------------------------------- */
CREATE TABLE allot.workload_credit (
    workload_id bigint NOT NULL REFERENCES allot.workload (id) ON DELETE CASCADE,
    resource    text NOT NULL REFERENCES allot.resource (name),
    rec         double precision NOT NULL DEFAULT 0,  -- recent estimated credit at rec_at
    rec_at      timestamptz NOT NULL,
    debt        double precision NOT NULL DEFAULT 0,  -- long-term debt as of the last fold
    sent        double precision NOT NULL DEFAULT 0,  -- credit handed out since the last fold
    PRIMARY KEY (workload_id, resource),
    CONSTRAINT workload_credit_finite
        CHECK (rec >= 0 AND rec < 'Infinity' AND sent >= 0 AND sent < 'Infinity'
               AND debt > '-Infinity' AND debt < 'Infinity')
) WITH (fillfactor = 50);

COMMENT ON TABLE allot.workload_credit IS
    'Recent estimated credit and long-term debt per (workload, resource), for allot.fairness = recent and debt';

/* value * 2^(-age / half_life); no decay for a negative age; 0 past 1000
 * half-lives or below 1e-6, so that the product can never underflow (which
 * is an error in SQL).  src/fairness.c computes the same. */
-- No SET clause, so that it is inlined; hence the qualified names.
CREATE FUNCTION allot.decay(value double precision, age_secs double precision,
                            half_life_secs double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN age_secs <= 0 THEN value
                WHEN age_secs >= 1000 * half_life_secs OR value < 1e-6 THEN 0
                ELSE value * pg_catalog.power(0.5::double precision, age_secs / half_life_secs) END
$$;

/* The (workload, resource) pairs that accrue debt now: active, and with work
 * for the resource or given some of it since the last fold (seed 001: "if P
 * supplies a job for R").  Requests project debts between folds over the
 * same pairs (src/fairness.c, allot_overall_debts).  jobs: a job workload
 * (FLOPs), else an assignment workload (thread-seconds on the CPU). */
CREATE FUNCTION allot.debt_eligible()
    RETURNS TABLE (workload_id bigint, resource text, throughput double precision, jobs boolean)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT w.id, 'cpu', w.throughput, false
      FROM allot.workload w
     WHERE w.state = 'active' AND w.app_id IS NULL
    UNION
    SELECT w.id, v.resource, w.throughput, true
      FROM allot.workload w
      JOIN allot.job_usage u ON u.workload_id = w.id AND u.unsent > 0
      JOIN allot.app_version v ON v.app_id = w.app_id
     WHERE w.state = 'active'
    UNION
    SELECT w.id, c.resource, w.throughput, w.app_id IS NOT NULL
      FROM allot.workload_credit c
      JOIN allot.workload w ON w.id = c.workload_id
     WHERE c.sent > 0 AND w.state = 'active'
$$;

/*
 * The transitioner's fold (allot.fairness = debt), per resource and kind:
 *   1. eligible rows share what the eligible rows got, by throughput, so the
 *      net change is zero;
 *   2. what ineligible rows got is nobody's debt;
 *   3. newly eligible pairs get a row at the largest debt;
 *   4. the largest debt is shifted to 0, where a new workload starts.
 * Rows are locked in (workload_id, resource) order, as requests lock them.
 */
CREATE FUNCTION allot.fold_debts(now timestamptz) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    folded bigint;
BEGIN
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

COMMENT ON FUNCTION allot.fold_debts(timestamptz) IS
    'Fold the credit handed out since the last call into the long-term debts (run_transitioner calls it when allot.fairness = debt)';

/* What the operator looks at: each row with its REC decayed to now.  (In a
 * session that has not loaded allot's library yet the setting is unknown:
 * its default, 10 days, applies.) */
CREATE FUNCTION allot.fairness_state(now timestamptz DEFAULT now())
    RETURNS TABLE (workload_id bigint, resource text, rec double precision,
                   debt double precision, sent double precision)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT c.workload_id, c.resource,
           allot.decay(c.rec, extract(epoch FROM now - c.rec_at)::double precision,
                       extract(epoch FROM coalesce(current_setting('allot.rec_half_life', true), '10d')::interval)
                           ::double precision),
           c.debt, c.sent
      FROM allot.workload_credit c
     ORDER BY 1, 2
$$;

COMMENT ON FUNCTION allot.fairness_state(timestamptz) IS
    'Recent estimated credit (decayed to now), long-term debt as of the last fold, and credit sent since, per (workload, resource)';

/* ---------------------------------------------------------------------------
 * Ranges (README "Errors"): magnitudes far beyond any real farm, but within
 * which every product, sum and deadline allot forms stays finite, in range of
 * bigint (job_usage.mflops) and a valid timestamp.  The C functions check
 * the same ranges on their arguments (allot.h).  NOT VALID: rows an older
 * version accepted are left alone; new and changed rows are checked.
 * ------------------------------------------------------------------------- */
ALTER TABLE allot.host
    ADD CONSTRAINT host_cpu_flops_range
        CHECK (cpu_flops IS NULL OR cpu_flops BETWEEN 1 AND 1e18) NOT VALID;
ALTER TABLE allot.host_coproc
    ADD CONSTRAINT host_coproc_peak_flops_range
        CHECK (peak_flops BETWEEN 1 AND 1e18) NOT VALID,
    ADD CONSTRAINT host_coproc_count_range CHECK (count <= 1024) NOT VALID;
ALTER TABLE allot.app_version
    ADD CONSTRAINT app_version_usage_range CHECK (ncpus <= 1024 AND ncoprocs <= 1024) NOT VALID;
ALTER TABLE allot.job
    ADD CONSTRAINT job_predicted_app_units_range
        CHECK (predicted_app_units BETWEEN 1e-9 AND 1e12) NOT VALID;
ALTER TABLE allot.workload
    ADD CONSTRAINT workload_delay_bound_range
        CHECK (delay_bound <= interval '100 years') NOT VALID;

/* ---------------------------------------------------------------------------
 * Privileges (README "Privileges").
 *
 *   allot_web    the web layer: EXECUTE on the five functions a host's
 *                requests go through, nothing else; no table, no view of
 *                another host beyond what a reply carries.
 *   allot_admin  operators: rows of every table, every function.  It also
 *                owns the SECURITY DEFINER functions, so they run with an
 *                operator's rights, never a superuser's.
 *
 * Both are NOLOGIN group roles: GRANT them to login roles.  Roles belong to
 * the cluster, not to a database, so they are created only if missing and
 * stay when the extension is dropped.  An existing role of either name that
 * can log in, or is a superuser, is refused rather than trusted.
 * Every function gets a pinned search_path, so that the queries the C
 * functions prepare resolve operators and functions in pg_catalog only.
 * ------------------------------------------------------------------------- */
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['allot_admin', 'allot_web'] LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            EXECUTE pg_catalog.format('CREATE ROLE %I NOLOGIN', r);
        ELSIF EXISTS (SELECT FROM pg_catalog.pg_roles
                       WHERE rolname = r AND (rolcanlogin OR rolsuper)) THEN
            RAISE EXCEPTION 'role "%" exists and can log in or is a superuser', r
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'allot uses it as a NOLOGIN group role; rename or alter it first.';
        END IF;
    END LOOP;
END
$$;

REVOKE ALL ON ALL TABLES IN SCHEMA allot FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA allot FROM PUBLIC;

ALTER FUNCTION allot.expire_assignments(timestamptz) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.percentile_disc(double precision[], double precision)
    SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.workload_cache_invalidate() SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.explain_assignment(bigint, timestamptz, bigint[])
    SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.estimate_job(bigint, bigint) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.host_queue(bigint, double precision, double precision, timestamptz)
    SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.run_transitioner(timestamptz) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.validate_job(bigint, boolean) SET search_path = pg_catalog, pg_temp;

-- What the web layer calls, and the triggers that keep the counters: run
-- as allot_admin, whoever calls.
ALTER FUNCTION allot.assign_workload(bigint, timestamptz, bigint[], bigint)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.heartbeat(bigint, timestamptz)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.release_assignment(bigint)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.request_work(bigint, jsonb, timestamptz, bigint)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.report_job(bigint, bigint, text, double precision, double precision,
                                double precision, timestamptz)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.assignment_usage_trigger()
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.assignment_truncate_trigger()
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION allot.job_usage_trigger() SECURITY DEFINER;
ALTER FUNCTION allot.job_truncate_trigger() SECURITY DEFINER;

ALTER FUNCTION allot.assign_workload(bigint, timestamptz, bigint[], bigint) OWNER TO allot_admin;
ALTER FUNCTION allot.heartbeat(bigint, timestamptz) OWNER TO allot_admin;
ALTER FUNCTION allot.release_assignment(bigint) OWNER TO allot_admin;
ALTER FUNCTION allot.request_work(bigint, jsonb, timestamptz, bigint) OWNER TO allot_admin;
ALTER FUNCTION allot.report_job(bigint, bigint, text, double precision, double precision,
                                double precision, timestamptz) OWNER TO allot_admin;
ALTER FUNCTION allot.assignment_usage_trigger() OWNER TO allot_admin;
ALTER FUNCTION allot.assignment_truncate_trigger() OWNER TO allot_admin;
ALTER FUNCTION allot.job_usage_trigger() OWNER TO allot_admin;
ALTER FUNCTION allot.job_truncate_trigger() OWNER TO allot_admin;

GRANT USAGE ON SCHEMA allot TO allot_admin, allot_web;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA allot TO allot_admin;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA allot TO allot_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA allot TO allot_admin;
GRANT EXECUTE ON FUNCTION
    allot.assign_workload(bigint, timestamptz, bigint[], bigint),
    allot.heartbeat(bigint, timestamptz),
    allot.release_assignment(bigint),
    allot.request_work(bigint, jsonb, timestamptz, bigint),
    allot.report_job(bigint, bigint, text, double precision, double precision,
                     double precision, timestamptz)
    TO allot_web;

/* Debts are long-term state: pg_dump keeps them. */
SELECT pg_catalog.pg_extension_config_dump('allot.workload_credit', '');

/* pg_dump keeps where the identity sequences stand, so that a restored farm
 * goes on numbering where it left off. */
SELECT pg_catalog.pg_extension_config_dump('allot.workload_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('allot.host_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('allot.app_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('allot.app_version_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('allot.job_id_seq', '');
