/* allot 0.2.0 -> 0.3.0: FLOPS per app unit, credit and the transitioner
 * (seed 004).
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.3.0'" to load this file. \quit

/* Per app: the raw FLOPS per app unit collected since the last percentile,
 * separately for CPU and GPU versions, and the last percentile of each. */
ALTER TABLE allot.app
    ADD COLUMN reference_jobs boolean NOT NULL DEFAULT false,  -- only reference jobs feed the estimate
    ADD COLUMN cpu_samples double precision[] NOT NULL DEFAULT '{}',
    ADD COLUMN gpu_samples double precision[] NOT NULL DEFAULT '{}',
    ADD COLUMN cpu_flops_per_au double precision,   -- last CPU percentile
    ADD COLUMN gpu_flops_per_au double precision;   -- last GPU percentile

ALTER TABLE allot.job
    ADD COLUMN reference boolean NOT NULL DEFAULT false,  -- a reference job (seed 004 note 3)
    ADD COLUMN sampled boolean NOT NULL DEFAULT false;    -- its FLOPS per app unit was taken

-- The transitioner's work lists, each an index over what is left to do.
CREATE INDEX job_to_sample_idx ON allot.job (id) WHERE state = 'done' AND NOT sampled;
CREATE INDEX job_to_credit_idx ON allot.job (id) WHERE validated AND credit IS NULL;

CREATE FUNCTION allot.run_transitioner(now timestamptz DEFAULT now())
    RETURNS jsonb
    LANGUAGE c VOLATILE CALLED ON NULL INPUT
    AS 'MODULE_PATHNAME', 'allot_run_transitioner';

COMMENT ON FUNCTION allot.run_transitioner(timestamptz) IS
    'Time out late jobs, expire stale assignments, turn reports into FLOPS-per-app-unit estimates and grant credit; bounded work per call, safe to run concurrently; returns what it did';

CREATE FUNCTION allot.validate_job(job_id bigint, valid boolean)
    RETURNS boolean
    LANGUAGE c VOLATILE CALLED ON NULL INPUT
    AS 'MODULE_PATHNAME', 'allot_validate_job';

COMMENT ON FUNCTION allot.validate_job(bigint, boolean) IS
    'The project''s validator''s verdict on a done job; valid jobs are credited by the transitioner';

CREATE FUNCTION allot.percentile_disc(values_ double precision[], fraction double precision)
    RETURNS double precision
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'allot_percentile_disc_sql';

COMMENT ON FUNCTION allot.percentile_disc(double precision[], double precision) IS
    'percentile_disc(fraction) of an array by O(N) selection, as the transitioner computes it';

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA allot FROM PUBLIC;
