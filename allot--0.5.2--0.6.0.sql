/* allot 0.5.2 -> 0.6.0: one host, one voice.  Statistics that liars cannot
 * skew and honest variance does not break; claims bounded by what the farm
 * makes plausible; counters whose types agree end to end; jobs in progress
 * that cannot vanish; names that show what they are.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.6.0'" to load this file. \quit

/* ---------------------------------------------------------------------------
 * An app's statistics, from its validated reports, one voice per host.
 *
 * Until 0.5.2 every successful report moved the app's means and variances
 * at once, validated or not, each report counted, its app units clamped to
 * twice the mean ratio so far: one host could move them by reporting often,
 * and an honest app whose long jobs take ten times their prediction was
 * learnt as if they took two, so that their bound cut them off.  From 0.6.0
 * the transitioner learns from validated successes only, keeping each app's
 * last allot.app_unit_window of them (host, actual and predicted app units,
 * oldest first), and computes the statistics from that window
 * (src/app_unit_stats.c): each host one voice, each report counted up to
 * the seed's own bound.  The columns n_reports .. au_ratio_m2 keep their
 * meaning for every reader: the window's count, weighted means, and sums of
 * squared deviations such that m2 / (n - 1) is the variance.
 * ------------------------------------------------------------------------- */
ALTER TABLE allot.app
    ADD COLUMN au_hosts bigint[] NOT NULL DEFAULT '{}',
    ADD COLUMN au_actual double precision[] NOT NULL DEFAULT '{}',
    ADD COLUMN au_predicted double precision[] NOT NULL DEFAULT '{}',
    ADD COLUMN au_ratio_bound double precision,
    ADD COLUMN cpu_sample_hosts bigint[] NOT NULL DEFAULT '{}',
    ADD COLUMN gpu_sample_hosts bigint[] NOT NULL DEFAULT '{}';

COMMENT ON COLUMN allot.app.au_hosts IS
    'Allot writes: the hosts of the validated successes its statistics come from, oldest first (at most allot.app_unit_window)';
COMMENT ON COLUMN allot.app.au_actual IS
    'Allot writes: the app units those reports claimed, in the same order as au_hosts';
COMMENT ON COLUMN allot.app.au_predicted IS
    'Allot writes: the app units those jobs predicted, in the same order as au_hosts';
COMMENT ON COLUMN allot.app.au_ratio_bound IS
    'Allot writes: the ratio of actual to predicted app units up to which a report counts in full (the mean plus 4 standard deviations of the counted ratios); NULL before the first validated report';
COMMENT ON COLUMN allot.app.cpu_sample_hosts IS
    'Allot writes: the host of each value of cpu_samples, in the same order (negative: a value kept from before 0.6.0, a voice of its own)';
COMMENT ON COLUMN allot.app.gpu_sample_hosts IS
    'Allot writes: the host of each value of gpu_samples, in the same order (negative: a value kept from before 0.6.0, a voice of its own)';
COMMENT ON COLUMN allot.app.n_reports IS
    'Validated successful reports in its statistics'' window (au_hosts)';
COMMENT ON COLUMN allot.app.actual_au_mean IS
    'Mean app units of a validated success, each host one voice, each report counted up to au_ratio_bound times its prediction';
COMMENT ON COLUMN allot.app.actual_au_m2 IS
    'Variance of those app units times (n_reports - 1)';
COMMENT ON COLUMN allot.app.predicted_au_mean IS
    'Mean predicted app units of those reports, each host one voice';
COMMENT ON COLUMN allot.app.predicted_au_m2 IS
    'Variance of the predicted app units times (n_reports - 1)';
COMMENT ON COLUMN allot.app.au_ratio_mean IS
    'Mean of actual / predicted app units, each host one voice, each ratio counted up to au_ratio_bound';
COMMENT ON COLUMN allot.app.au_ratio_m2 IS
    'Variance of actual / predicted app units times (n_reports - 1)';

/* The values kept from before have no host: each stays a voice of its own. */
UPDATE allot.app
   SET cpu_sample_hosts = ARRAY(SELECT -g FROM pg_catalog.generate_series(1, pg_catalog.cardinality(cpu_samples)) g),
       gpu_sample_hosts = ARRAY(SELECT -g FROM pg_catalog.generate_series(1, pg_catalog.cardinality(gpu_samples)) g);

/* The statistics of a window, as the transitioner computes them. */
CREATE FUNCTION allot.app_unit_statistics(
        hosts bigint[], actual double precision[], predicted double precision[],
        OUT n_reports bigint, OUT actual_au_mean double precision, OUT actual_au_m2 double precision,
        OUT predicted_au_mean double precision, OUT predicted_au_m2 double precision,
        OUT au_ratio_mean double precision, OUT au_ratio_m2 double precision,
        OUT au_ratio_bound double precision)
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_app_unit_statistics_sql';

COMMENT ON FUNCTION allot.app_unit_statistics(bigint[], double precision[], double precision[]) IS
    'An app''s statistics from a window of validated reports (hosts, actual and predicted app units): each host one voice, each report counted up to the seed''s bound (mean + 4 standard deviations), a host''s mean held within what chance allows its number of reports';

/* Seed each window from the validated successes already there, newest
 * allot.app_unit_window of them, and compute the statistics from it.  Apps
 * without any keep their statistics until their first validated report. */
WITH recent AS (
    SELECT v.app_id, j.host_id, j.app_units, j.predicted_app_units, j.returned_at, j.id,
           pg_catalog.row_number() OVER (PARTITION BY v.app_id
                                         ORDER BY j.returned_at DESC, j.id DESC) AS age
      FROM allot.job j JOIN allot.app_version v ON v.id = j.app_version_id
     WHERE j.state = 'done' AND j.validated AND j.app_units IS NOT NULL AND j.host_id IS NOT NULL),
window_ AS (
    SELECT app_id,
           pg_catalog.array_agg(host_id ORDER BY returned_at, id) AS hosts,
           pg_catalog.array_agg(app_units ORDER BY returned_at, id) AS actual,
           pg_catalog.array_agg(predicted_app_units ORDER BY returned_at, id) AS predicted
      FROM recent
     WHERE age <= coalesce((SELECT s.setting::int FROM pg_catalog.pg_settings s
                             WHERE s.name = 'allot.app_unit_window'), 1000)
     GROUP BY app_id)
UPDATE allot.app a
   SET au_hosts = w.hosts, au_actual = w.actual, au_predicted = w.predicted,
       (n_reports, actual_au_mean, actual_au_m2, predicted_au_mean, predicted_au_m2,
        au_ratio_mean, au_ratio_m2, au_ratio_bound)
           = (SELECT s.n_reports, s.actual_au_mean, s.actual_au_m2, s.predicted_au_mean,
                     s.predicted_au_m2, s.au_ratio_mean, s.au_ratio_m2, s.au_ratio_bound
                FROM allot.app_unit_statistics(w.hosts, w.actual, w.predicted) s)
  FROM window_ w
 WHERE w.app_id = a.id;

/* The transitioner learns from validated successes only: the jobs it has
 * still to read are those. */
DROP INDEX allot.job_to_sample_idx;
CREATE INDEX job_to_sample_idx ON allot.job (id) WHERE state = 'done' AND validated AND NOT sampled;

COMMENT ON COLUMN allot.job.sampled IS
    'Allot writes: the transitioner has learnt from it (its FLOPs per app unit, its app units); only validated successes are read';
COMMENT ON COLUMN allot.job.app_units IS
    'Allot writes: app units reported on success, as claimed; the app''s statistics count them up to its au_ratio_bound, one voice per host';
COMMENT ON COLUMN allot.job.elapsed_secs IS
    'Allot writes: run time reported, in seconds, counted at most as the time since it was sent (allot.job_report keeps the claim). NULL: not reported';

/* ---------------------------------------------------------------------------
 * What a host claims of its hardware counts within what the farm makes
 * plausible.  A host's CPU FLOPS and each coprocessor's peak FLOPS are its
 * own claims (register_host, a BOINC client's p_fpops): one host claiming
 * 1e18 FLOPS made its workload look like the whole farm under fairness =
 * current and got a hundred jobs estimated at microseconds.  From 0.6.0 the
 * transitioner keeps each resource type's median FLOPS per instance over
 * the hosts that have one (over the hosts that have earned credit, once ten
 * of them have: a claim becomes a fact through validation), and dispatch
 * counts an instance at most allot's plausible spread (10) times that
 * median: for usage, estimates, the peak FLOPS a job is sent with, and so
 * for how many jobs fill a request.  Only changes of more than 1% are
 * written, so that the backends' caches are seldom rebuilt for them.
 * ------------------------------------------------------------------------- */
ALTER TABLE allot.resource
    ADD COLUMN median_flops double precision,
    ADD COLUMN median_hosts bigint,
    ADD CONSTRAINT resource_median_flops_positive_finite
        CHECK (median_flops IS NULL OR (median_flops > 0 AND median_flops < 'Infinity'));
COMMENT ON COLUMN allot.resource.median_flops IS
    'Allot writes (the transitioner): median peak FLOPS of one instance over the hosts that have it (those with credit, once ten have); dispatch counts an instance at most 10 times this. NULL: not known yet, no bound';
COMMENT ON COLUMN allot.resource.median_hosts IS
    'Allot writes: how many hosts median_flops was taken over';

/* ---------------------------------------------------------------------------
 * Counters whose types agree end to end.
 *
 * job_usage.mflops is numeric (0.5.0), and request_work reads it as a
 * bigint (0.5.1): an operator's edits could grow a shard past a bigint one
 * statement at a time, and every request_work then failed.  From 0.6.0 a
 * shard holds at most a bigint, so the write that would pass it is refused
 * (23514, naming the workload), and a job's peak FLOPS are held to what a
 * job can have: at most 1024 CPUs and 1024 coprocessors of 1e18 FLOPS each.
 * ------------------------------------------------------------------------- */
DO $$
DECLARE
    w bigint;
BEGIN
    SELECT u.workload_id INTO w FROM allot.job_usage u
     WHERE u.mflops NOT BETWEEN -9223372036854775808 AND 9223372036854775807
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'allot.job_usage of workload % holds MFLOPS beyond a bigint', w
            USING ERRCODE = 'numeric_value_out_of_range',
                  HINT = 'Bring the peak_flops_per_sec of that workload''s jobs in progress back within 2.048e21, then update again.';
    END IF;
END
$$;
ALTER TABLE allot.job_usage ADD CONSTRAINT job_usage_mflops_range
    CHECK (mflops BETWEEN -9223372036854775808 AND 9223372036854775807);
COMMENT ON COLUMN allot.job_usage.mflops IS
    'Peak FLOPS of its jobs in progress, in whole MFLOPS: exact (numeric), and within a bigint (a write beyond is refused), as requests read it';

ALTER TABLE allot.job ADD CONSTRAINT job_peak_flops_range
    CHECK (peak_flops_per_sec IS NULL OR (peak_flops_per_sec >= 0 AND peak_flops_per_sec <= 2.048e21))
    NOT VALID;

/* Jobs in progress cannot vanish under their host: a DELETE of one is
 * refused by the job trigger (55000, src/usage.c), as a DELETE of a
 * workload with jobs in progress is.  (TRUNCATE, which wipes a whole farm,
 * is left to the operator who means it.) */

/* ---------------------------------------------------------------------------
 * Names shown to people show what they are: no control, format (bidi),
 * zero-width or other invisible character in the names of hosts, apps and
 * workloads (src/names.c), 22023 naming the character and where it is.
 * ------------------------------------------------------------------------- */
CREATE FUNCTION allot.name_problem(name text) RETURNS text
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_name_problem';
COMMENT ON FUNCTION allot.name_problem(text) IS
    'What is wrong with a name shown to people (a control, format or invisible character, and where), or NULL';

CREATE FUNCTION allot.check_name(kind text, name text) RETURNS text
    LANGUAGE c IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_check_name';
COMMENT ON FUNCTION allot.check_name(text, text) IS
    'Returns the name, or refuses it (22023) when allot.name_problem finds something wrong: for front ends'' own names, such as accounts';

CREATE FUNCTION allot.name_check_trigger() RETURNS trigger
    LANGUAGE c
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_name_check_trigger';
COMMENT ON FUNCTION allot.name_check_trigger() IS
    'Row trigger: refuses a new name that allot.name_problem finds something wrong with';

CREATE TRIGGER host_name_check BEFORE INSERT OR UPDATE OF name ON allot.host
    FOR EACH ROW EXECUTE FUNCTION allot.name_check_trigger('host name');
CREATE TRIGGER app_name_check BEFORE INSERT OR UPDATE OF name ON allot.app
    FOR EACH ROW EXECUTE FUNCTION allot.name_check_trigger('app name');
CREATE TRIGGER workload_name_check BEFORE INSERT OR UPDATE OF name ON allot.workload
    FOR EACH ROW EXECUTE FUNCTION allot.name_check_trigger('workload name');

REVOKE ALL ON FUNCTION allot.app_unit_statistics(bigint[], double precision[], double precision[]),
                       allot.name_problem(text),
                       allot.check_name(text, text), allot.name_check_trigger() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.app_unit_statistics(bigint[], double precision[], double precision[]),
                          allot.name_problem(text), allot.check_name(text, text),
                          allot.name_check_trigger() TO allot_admin;
GRANT EXECUTE ON FUNCTION allot.check_name(text, text) TO allot_web;

/* ---------------------------------------------------------------------------
 * Jobs only where they can be sent: a workload without an app is an
 * assignment workload, which request_work never serves.  0.5.2 accepted jobs
 * for one, and they sat unsent for ever.  An INSERT of such jobs is refused
 * by the job trigger (23514, in C: one lookup per inserting statement); an
 * UPDATE that moves jobs there, or takes the app from a workload that has
 * jobs, by these row triggers.
 * ------------------------------------------------------------------------- */
CREATE FUNCTION allot.job_workload_check() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_TABLE_NAME = 'job' THEN
        IF NEW.workload_id IS DISTINCT FROM OLD.workload_id
           AND EXISTS (SELECT FROM allot.workload w WHERE w.id = NEW.workload_id AND w.app_id IS NULL) THEN
            RAISE EXCEPTION 'workload % has no app: only a job workload (one with an app) has jobs', NEW.workload_id
                USING ERRCODE = 'check_violation',
                      DETAIL = format('Job %s was being moved to it.', NEW.id),
                      HINT = 'Jobs are for workloads with an app_id; assignment workloads are served by assign_workload.';
        END IF;
    ELSIF NEW.app_id IS NULL AND OLD.app_id IS NOT NULL
          AND EXISTS (SELECT FROM allot.job j WHERE j.workload_id = NEW.id) THEN
        RAISE EXCEPTION 'workload % has jobs: its app cannot be taken away', NEW.id
            USING ERRCODE = 'check_violation',
                  HINT = 'Only a job workload (one with an app) has jobs; delete its jobs first, or give it another app.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION allot.job_workload_check() IS
    'Row trigger: a job cannot move to a workload without an app, and a workload with jobs keeps an app';
CREATE TRIGGER job_workload_check BEFORE UPDATE OF workload_id ON allot.job
    FOR EACH ROW EXECUTE FUNCTION allot.job_workload_check();
CREATE TRIGGER workload_app_check BEFORE UPDATE OF app_id ON allot.workload
    FOR EACH ROW EXECUTE FUNCTION allot.job_workload_check();
REVOKE ALL ON FUNCTION allot.job_workload_check() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.job_workload_check() TO allot_admin;

/* ---------------------------------------------------------------------------
 * Names the README treats as names are unique: a workload's among the
 * workloads not finished (a finished test's name may be used again), a
 * host's among the hosts the operator added (hosts that register
 * themselves name themselves, and two volunteers may both call theirs
 * "desktop"); an app's already was.  Duplicates from before are reported,
 * not dropped: the update stops and names them.
 * ------------------------------------------------------------------------- */
DO $$
DECLARE
    dup text;
BEGIN
    SELECT string_agg(format('workload name %s (workloads %s)', to_json(name), ids), '; ') INTO dup
      FROM (SELECT name, string_agg(id::text, ', ' ORDER BY id) AS ids FROM allot.workload
             WHERE name IS NOT NULL AND state <> 'finished' GROUP BY name HAVING count(*) > 1) d;
    IF dup IS NULL THEN
        SELECT string_agg(format('host name %s (hosts %s)', to_json(name), ids), '; ') INTO dup
          FROM (SELECT name, string_agg(id::text, ', ' ORDER BY id) AS ids FROM allot.host
                 WHERE name IS NOT NULL AND registered_at IS NULL GROUP BY name HAVING count(*) > 1) d;
    END IF;
    IF dup IS NOT NULL THEN
        RAISE EXCEPTION 'allot 0.6.0 makes names unique, and some are not: %', dup
            USING ERRCODE = 'unique_violation',
                  HINT = 'Rename or finish the duplicates (UPDATE allot.workload SET name = ... WHERE id = ...), then update again.';
    END IF;
END
$$;
CREATE UNIQUE INDEX workload_name_key ON allot.workload (name)
    WHERE name IS NOT NULL AND state <> 'finished';
CREATE UNIQUE INDEX host_name_key ON allot.host (name)
    WHERE name IS NOT NULL AND registered_at IS NULL;
COMMENT ON COLUMN allot.workload.name IS
    'Name shown to people: unique among the workloads not finished, with no hidden characters';
COMMENT ON COLUMN allot.host.name IS
    'Name shown to people, with no hidden characters; unique among the hosts the operator added (hosts that register themselves may share one)';

/* ---------------------------------------------------------------------------
 * Settings.
 * ------------------------------------------------------------------------- */
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::int >= 150000 THEN
        EXECUTE 'GRANT SET ON PARAMETER allot.app_unit_window TO allot_admin';
    END IF;
END
$$;

/* ---------------------------------------------------------------------------
 * status_app shows what the statistics learn from.
 * ------------------------------------------------------------------------- */
CREATE OR REPLACE VIEW allot.status_app AS
SELECT a.id AS app_id, a.name,
       (SELECT pg_catalog.array_agg(DISTINCT v.resource ORDER BY v.resource)
          FROM allot.app_version v WHERE v.app_id = a.id) AS resources,
       (SELECT count(*) FROM allot.workload w WHERE w.app_id = a.id) AS workloads,
       a.n_reports, a.est_flops_per_au, a.cpu_flops_per_au, a.gpu_flops_per_au,
       pg_catalog.cardinality(a.cpu_samples) + pg_catalog.cardinality(a.gpu_samples)
           AS samples_pending,
       a.actual_au_mean,
       a.actual_au_mean * a.est_flops_per_au / (1e9 * 86400 / 200) AS credit_per_job,
       u.unsent AS jobs_unsent, u.in_progress AS jobs_in_progress,
       u.done AS jobs_done, u.error AS jobs_error,
       (SELECT count(DISTINCT h) FROM pg_catalog.unnest(a.au_hosts) h) AS voices,
       a.au_ratio_bound
  FROM allot.app a
  LEFT JOIN LATERAL (
      SELECT coalesce(sum(ju.unsent), 0) AS unsent, coalesce(sum(ju.in_progress), 0) AS in_progress,
             coalesce(sum(ju.done), 0) AS done, coalesce(sum(ju.error), 0) AS error
        FROM allot.workload w JOIN allot.job_usage ju ON ju.workload_id = w.id
       WHERE w.app_id = a.id) u ON true;

COMMENT ON VIEW allot.status_app IS
    'One row per app: its versions'' resources, its FLOPS-per-app-unit estimate, the credit a job earns, and its jobs. '
    'Cost: O(apps + workloads + the apps'' windows): the app rows with their sample arrays, their versions, and one job_usage row per workload';
COMMENT ON COLUMN allot.status_app.n_reports IS 'Validated successful reports its statistics learn from (its window)';
COMMENT ON COLUMN allot.status_app.actual_au_mean IS 'Mean app units of a validated success, each host one voice';
COMMENT ON COLUMN allot.status_app.voices IS 'Hosts among those reports: each one voice, however many it sent';
COMMENT ON COLUMN allot.status_app.au_ratio_bound IS 'Ratio of actual to predicted app units up to which a report counts in full';
GRANT SELECT ON allot.status_app TO allot_monitor;

/* ---------------------------------------------------------------------------
 * A host's recent average credit from one row.  host_credit() summed the
 * decayed credit of every job a host was ever credited for, on every call:
 * a scheduler asks for it at every contact, and a host's jobs only grow.
 * allot.host_credit now also keeps that sum as its value at decayed_at (the
 * latest return counted); the job trigger adds each statement's credit to
 * it (src/usage.c).
 * ------------------------------------------------------------------------- */

/* value * 2^(-age / one week), for a value of either sign (a withdrawn
 * credit is subtracted); no decay for a negative age; 0 past 1000 weeks or
 * below 1e-6 in size, so that the product cannot underflow. */
-- No SET clause, so that it is inlined; hence the qualified names.
CREATE FUNCTION allot.credit_decay(value double precision, age_secs double precision)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN age_secs <= 0 THEN value
                WHEN age_secs >= 1000 * 604800 OR pg_catalog.abs(value) < 1e-6 THEN 0
                ELSE value * pg_catalog.power(0.5::double precision, age_secs / 604800) END
$$;
COMMENT ON FUNCTION allot.credit_decay(double precision, double precision) IS
    'value x 2^(-age / one week), for credit of either sign: no decay for a negative age, 0 past 1000 weeks or below 1e-6';

ALTER TABLE allot.host_credit
    ADD COLUMN decayed double precision NOT NULL DEFAULT 0,
    ADD COLUMN decayed_at timestamptz;
UPDATE allot.host_credit c
   SET decayed = d.decayed, decayed_at = d.t
  FROM (SELECT host_id, t,
               sum(allot.credit_decay(credit, extract(epoch FROM t - r)::double precision)) AS decayed
          FROM (SELECT host_id, credit, coalesce(returned_at, now()) AS r,
                       max(coalesce(returned_at, now())) OVER (PARTITION BY host_id) AS t
                  FROM allot.job WHERE credit IS NOT NULL AND host_id IS NOT NULL) j
         GROUP BY host_id, t) d
 WHERE d.host_id = c.host_id;
UPDATE allot.host_credit SET decayed_at = now() WHERE decayed_at IS NULL;
ALTER TABLE allot.host_credit ALTER COLUMN decayed_at SET NOT NULL;
COMMENT ON COLUMN allot.host_credit.decayed IS
    'Sum of its jobs'' credit decayed with a half-life of one week from their return to decayed_at';
COMMENT ON COLUMN allot.host_credit.decayed_at IS
    'The instant decayed is taken at: the latest return counted';

CREATE OR REPLACE FUNCTION allot.host_credit(host_ids bigint[])
    RETURNS TABLE (host_id bigint, total_credit double precision, expavg_credit double precision)
    LANGUAGE plpgsql STABLE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    max_hosts CONSTANT int := 10000;
BEGIN
    IF host_ids IS NULL THEN
        RAISE EXCEPTION 'host_ids must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass ''{}'' for no hosts.';
    END IF;
    IF array_ndims(host_ids) > 1 THEN
        RAISE EXCEPTION 'host_ids must be a one-dimensional array, not %-dimensional', array_ndims(host_ids)
            USING ERRCODE = 'array_subscript_error';
    END IF;
    IF cardinality(host_ids) > max_hosts THEN
        RAISE EXCEPTION 'host_ids must hold at most % ids, not %', max_hosts, cardinality(host_ids)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF array_position(host_ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'host_ids must not contain NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;

    -- One row each: the kept sums (the credit decayed to now, per day).
    -- The ids are joined as a list rather than tested with = ANY: a
    -- generic plan of that (its array unknown) costs more than a custom one,
    -- so every call planned the join afresh, 0.1 ms of a BOINC scheduler
    -- request's 0.15 ms here; this plan is kept.
    RETURN QUERY
    SELECT h.id, coalesce(c.credit, 0)::double precision,
           greatest(coalesce(allot.credit_decay(c.decayed,
                                                extract(epoch FROM now() - c.decayed_at)::double precision),
                             0), 0) * ln(2) / 7
      FROM (SELECT DISTINCT i.id FROM unnest(host_ids) AS i (id)) i
      JOIN allot.host h ON h.id = i.id
      LEFT JOIN allot.host_credit c ON c.host_id = h.id
     ORDER BY h.id;
END
$$;
ALTER FUNCTION allot.host_credit(bigint[]) OWNER TO allot_owner;
REVOKE ALL ON FUNCTION allot.credit_decay(double precision, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.credit_decay(double precision, double precision) TO allot_admin, allot_owner;

/* ---------------------------------------------------------------------------
 * check_invariants also reports what 0.6.0 refuses but older rows may hold:
 * counters out of range, names that hide characters, and windows whose
 * statistics are not what they hold.
 * ------------------------------------------------------------------------- */
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
                   ' its jobs hold %s, %s, %s, %s, %s',
                   coalesce(u.workload_id, j.workload_id),
                   coalesce(u.unsent, 0), coalesce(u.in_progress, 0), coalesce(u.mflops, 0),
                   coalesce(u.done, 0), coalesce(u.error, 0),
                   coalesce(j.unsent, 0), coalesce(j.in_progress, 0), coalesce(j.mflops, 0),
                   coalesce(j.done, 0), coalesce(j.error, 0))
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
         WHERE coalesce(u.unsent, 0) <> coalesce(j.unsent, 0)
            OR coalesce(u.in_progress, 0) <> coalesce(j.in_progress, 0)
            OR coalesce(u.mflops, 0) <> coalesce(j.mflops, 0)
            OR coalesce(u.done, 0) <> coalesce(j.done, 0)
            OR coalesce(u.error, 0) <> coalesce(j.error, 0)
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
                   'host %s: host_credit holds credit %s of %s jobs; its jobs hold %s of %s',
                   coalesce(c.host_id, j.host_id), coalesce(c.credit, 0), coalesce(c.jobs, 0),
                   coalesce(j.credit, 0), coalesce(j.jobs, 0))
          FROM allot.host_credit c
          FULL JOIN (SELECT host_id, sum(credit::numeric) AS credit, count(*) AS jobs
                       FROM allot.job
                      WHERE credit IS NOT NULL AND host_id IS NOT NULL
                      GROUP BY host_id) j ON j.host_id = c.host_id
         WHERE coalesce(c.credit, 0) <> coalesce(j.credit, 0)
            OR coalesce(c.jobs, 0) <> coalesce(j.jobs, 0)
        UNION ALL
        /* The decayed credit kept is what its jobs give at decayed_at. */
        SELECT pg_catalog.format('host %s: host_credit holds decayed credit %s at %s; its jobs give %s',
                                 c.host_id, c.decayed, c.decayed_at, coalesce(j.decayed, 0))
          FROM allot.host_credit c
          LEFT JOIN LATERAL (
              SELECT sum(allot.credit_decay(j.credit,
                         extract(epoch FROM c.decayed_at - coalesce(j.returned_at, c.decayed_at))::double precision))
                         AS decayed
                FROM allot.job j WHERE j.host_id = c.host_id AND j.credit IS NOT NULL) j ON true
         WHERE abs(c.decayed - coalesce(j.decayed, 0)) > 1e-6 * greatest(abs(c.decayed), 1)
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
    ) lines ORDER BY 1
$$;

/* ---------------------------------------------------------------------------
 * Each sending of a job is a sending of its own, as a BOINC result is.
 *
 * Until 0.5.2 a report named only (host, job): a job timed out and sent to
 * the same host again had two copies there, and the stale one's late report
 * was taken for the new one's.  Now:
 *   - job.sending numbers the job's sendings (1, 2, ...; it only grows); the
 *     reply of request_work gives it, and report_job may name it: a report
 *     of a sending the job has moved on from is refused;
 *   - a host is never sent a job it has had (BOINC's one result per host):
 *     every sending that ends leaves a row in job_report, and dispatch skips
 *     the jobs the asking host has a row for;
 *   - a failed sending (an error, an abort, a loss, a timeout, a result the
 *     validator finds invalid) sends the job to another host, up to the
 *     job's limits: more failures than max_error_results, or
 *     max_total_results sendings, and it gives up: state 'error';
 *   - the operator can start a job over (requeue_job), time out one host's
 *     jobs (time_out_host), and merge a host that came back under a new id
 *     into its old one (merge_host).
 * ------------------------------------------------------------------------- */
ALTER TABLE allot.job
    ADD COLUMN sending int NOT NULL DEFAULT 0,
    ADD COLUMN tries int NOT NULL DEFAULT 0,
    ADD COLUMN failures int NOT NULL DEFAULT 0,
    ADD COLUMN max_error_results int NOT NULL DEFAULT 3,
    ADD COLUMN max_total_results int NOT NULL DEFAULT 10,
    ADD CONSTRAINT job_counts_in_range
        CHECK (sending >= tries AND tries >= 0 AND failures >= 0),
    ADD CONSTRAINT job_result_limits_in_range
        CHECK (max_error_results BETWEEN 0 AND 1000 AND max_total_results BETWEEN 1 AND 1000),
    DROP CONSTRAINT job_outcome_known,
    ADD CONSTRAINT job_outcome_known
        CHECK (outcome IS NULL OR outcome IN ('success', 'error', 'aborted', 'lost'));

/* The sendings in progress now are each their job's first. */
UPDATE allot.job SET sending = 1, tries = 1 WHERE state = 'in_progress';

COMMENT ON COLUMN allot.job.sending IS
    'Allot writes: the number of the job''s latest sending (0: never sent); request_work''s reply gives it, and report_job checks it';
COMMENT ON COLUMN allot.job.tries IS
    'Allot writes: sendings since the job was made or requeued';
COMMENT ON COLUMN allot.job.failures IS
    'Allot writes: of those, the sendings that failed (error, aborted, lost, timed out, or found invalid)';
COMMENT ON COLUMN allot.job.max_error_results IS
    'The job gives up (state error) at more failed sendings than this (0 to 1000; 3 unless set)';
COMMENT ON COLUMN allot.job.max_total_results IS
    'The job gives up (state error) when a sending fails after this many (1 to 1000; 10 unless set)';
COMMENT ON COLUMN allot.job.outcome IS
    'Allot writes: outcome of the last report: success, error, aborted or lost';

ALTER TABLE allot.job_report ADD COLUMN sending int;
COMMENT ON COLUMN allot.job_report.sending IS
    'The sending reported (NULL: before 0.6.0)';
COMMENT ON COLUMN allot.job_report.outcome IS
    'success, error, aborted or lost (reported); timed_out (the transitioner, or time_out_host); requeued (requeue_job)';
COMMENT ON TABLE allot.job_report IS
    'How each sending of a job ended, one row per (job, host, sending time): the reports hosts made, with the reply each got, so that a repeat gets it again; timeouts and requeues, so that a late report is refused; and the hosts that had each job, which are not sent it again';

DROP FUNCTION allot.report_job(bigint, bigint, text, double precision, double precision,
                               double precision, timestamptz);
CREATE FUNCTION allot.report_job(
        host_id           bigint,
        job_id            bigint,
        outcome           text,
        app_units         double precision DEFAULT 1,
        elapsed_secs      double precision DEFAULT NULL,
        raw_flops_per_sec double precision DEFAULT NULL,
        now               timestamptz      DEFAULT now(),
        sending           int              DEFAULT NULL)
    RETURNS jsonb
    LANGUAGE c VOLATILE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'allot_report_job';
COMMENT ON FUNCTION allot.report_job(bigint, bigint, text, double precision, double precision,
                                     double precision, timestamptz, int) IS
    'A host returns a job: success, error, aborted or lost; naming the sending (request_work''s reply gives it) refuses a report of a sending the job has moved on from; a repeated identical report gets the same answer';

/* plpgsql, so that its plan is kept: a SQL function that cannot be inlined
 * (SECURITY DEFINER) is planned afresh on every call, 0.17 ms of a front
 * end's scheduler request. */
CREATE FUNCTION allot.host_jobs(host_id bigint)
    RETURNS TABLE (job_id bigint, sending int, sent_at timestamptz, deadline timestamptz)
    LANGUAGE plpgsql STABLE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT j.id, j.sending, j.sent_at, j.deadline
      FROM allot.job j
     WHERE j.host_id = host_jobs.host_id AND j.state = 'in_progress'
     ORDER BY j.id;
END
$$;
COMMENT ON FUNCTION allot.host_jobs(bigint) IS
    'The jobs in progress on a host, with their sendings: what a front end compares with what the host says it has';

CREATE FUNCTION allot.requeue_job(job_id bigint, now timestamptz DEFAULT now())
    RETURNS jsonb
    LANGUAGE c VOLATILE CALLED ON NULL INPUT
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'allot_requeue_job';
COMMENT ON FUNCTION allot.requeue_job(bigint, timestamptz) IS
    'Start a job over (not a done one): unsent, its tries and failures forgotten; the host that has it in progress is refused its report; no host that had it is sent it again';

CREATE FUNCTION allot.time_out_host(host_id bigint, now timestamptz DEFAULT now())
    RETURNS bigint
    LANGUAGE c VOLATILE CALLED ON NULL INPUT
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'allot_time_out_host';
COMMENT ON FUNCTION allot.time_out_host(bigint, timestamptz) IS
    'Every job in progress on the host times out now, as at its deadline, without moving the farm''s clock; returns how many';

/* A host that came back under a new id (a client that lost its state and
 * attached again) merged into its old one: the new one's jobs, reports,
 * credit and per-version history become the old one's, and the new one is
 * deleted.  Its voice in the apps' windows stays a voice of its own until
 * the windows move on. */
CREATE FUNCTION allot.merge_host(keep bigint, gone bigint) RETURNS jsonb
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
    DELETE FROM allot.host h WHERE h.id = gone;
    DELETE FROM allot.host_credit c WHERE c.host_id = gone AND c.credit = 0 AND c.jobs = 0;
    RETURN pg_catalog.jsonb_build_object('host_id', keep, 'merged', gone,
                                         'jobs', jobs, 'reports', reports);
END
$$;
COMMENT ON FUNCTION allot.merge_host(bigint, bigint) IS
    'Merge host gone (one that came back under a new id) into host keep: its jobs (and so its credit), reports and per-version history; then delete it';

ALTER FUNCTION allot.report_job(bigint, bigint, text, double precision, double precision,
                                double precision, timestamptz, int) OWNER TO allot_owner;
ALTER FUNCTION allot.host_jobs(bigint) OWNER TO allot_owner;
REVOKE ALL ON FUNCTION allot.report_job(bigint, bigint, text, double precision, double precision,
                                        double precision, timestamptz, int),
                       allot.host_jobs(bigint),
                       allot.requeue_job(bigint, timestamptz),
                       allot.time_out_host(bigint, timestamptz),
                       allot.merge_host(bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.report_job(bigint, bigint, text, double precision, double precision,
                                           double precision, timestamptz, int),
                          allot.host_jobs(bigint),
                          allot.requeue_job(bigint, timestamptz),
                          allot.time_out_host(bigint, timestamptz),
                          allot.merge_host(bigint, bigint) TO allot_admin, allot_owner;
GRANT EXECUTE ON FUNCTION allot.report_job(bigint, bigint, text, double precision, double precision,
                                           double precision, timestamptz, int),
                          allot.host_jobs(bigint) TO allot_web;

/* ---------------------------------------------------------------------------
 * assign_workload keeps a copy of allot.workload_usage per backend, read
 * again after a change: each statement that changes the table queues a
 * relcache invalidation of allot.workload_usage_signal, which PostgreSQL
 * delivers to every backend when the change commits.  The signal's table
 * holds nothing and nobody opens it, so no backend rebuilds its relcache
 * entry for it (src/usage_cache.c).
 * ------------------------------------------------------------------------- */
CREATE TABLE allot.workload_usage_signal ();
COMMENT ON TABLE allot.workload_usage_signal IS
    'Holds no rows: a change to allot.workload_usage invalidates this table''s relcache entry, which tells every backend that its copy of the usage is stale';

CREATE FUNCTION allot.usage_signal_trigger() RETURNS trigger
    LANGUAGE c
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_usage_signal_trigger';
COMMENT ON FUNCTION allot.usage_signal_trigger() IS
    'Statement trigger on allot.workload_usage: its change, when it commits, makes every backend''s copy of the usage stale';
CREATE TRIGGER workload_usage_signal
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON allot.workload_usage
    FOR EACH STATEMENT EXECUTE FUNCTION allot.usage_signal_trigger();

REVOKE ALL ON allot.workload_usage_signal FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON allot.workload_usage_signal TO allot_admin;
REVOKE ALL ON FUNCTION allot.usage_signal_trigger() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.usage_signal_trigger() TO allot_admin;
