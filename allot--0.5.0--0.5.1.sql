/* allot 0.5.0 -> 0.5.1: the trigger that keeps allot.job_usage in C, and
 * the count of jobs that came back to unsent that lets request_work start
 * its search for a workload's oldest unsent job where it last found it.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.5.1'" to load this file. \quit

/* The statement trigger on allot.job counts each statement's change per
 * workload in C, from the transition tables, and adds it to the writing
 * backend's shard of allot.job_usage in one upsert, in workload id order;
 * allot.host_credit is written only by statements whose rows carry credit.
 * Same counts as the PL/pgSQL of 0.5.0, for less CPU.  Still SECURITY
 * INVOKER, with the search_path pinned. */
CREATE OR REPLACE FUNCTION allot.job_usage_trigger() RETURNS trigger
    LANGUAGE c
    SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'allot_job_usage_trigger';

COMMENT ON FUNCTION allot.job_usage_trigger() IS
    'Statement trigger on allot.job: adds each statement''s change in unsent, in-progress, done and errored jobs and in MFLOPS in progress to this backend''s shard of allot.job_usage, and credit to allot.host_credit';

/* Jobs that came back to unsent, counted per workload: request_work starts
 * its search for a workload's oldest unsent job where its backend last found
 * it, and looks again from the start when this count moves. */
ALTER TABLE allot.job_usage ADD COLUMN reopened bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN allot.job_usage.reopened IS
    'Jobs that came back to unsent (timed out, or given back by their host), a running count of this shard; request_work looks for the workload''s oldest unsent job from the start again when the sum moves';
