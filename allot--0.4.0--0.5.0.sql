/* allot 0.4.0 -> 0.5.0: untrusted web roles and hosts, self-registering
 * hosts, status views, OpenBench to the letter, and catalog comments.
 */

\echo Use "ALTER EXTENSION allot UPDATE TO '0.5.0'" to load this file. \quit

/* ---------------------------------------------------------------------------
 * Policy, ownership and untrusted input.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * OpenBench to the letter.
 * ------------------------------------------------------------------------- */

/*
 * Several compilers per engine.  OpenBench's engine configurations list the
 * compilers an engine builds with, any one of which will do, each with an
 * optional minimum version: ["g++>=11.0.0", "clang++>=16.0.0"].  compilers
 * holds that list, written the same way.  The single compiler/compiler_min
 * pair keeps working as one more alternative, so existing scripts and rows
 * need no change; this update moves existing pairs into the list, so that
 * each requirement has one place.
 */
ALTER TABLE allot.engine ADD COLUMN compilers text[];

-- Each element is a compiler name without blanks, '<', '>' or '=', then
-- optionally '>=' and a dotted version.  Blank-free names let the elements
-- be checked joined by a blank.  An empty list would mean no compiler
-- fits; NULL says "none needed" instead.
ALTER TABLE allot.engine ADD CONSTRAINT engine_compilers_format
    CHECK (compilers IS NULL OR
           (array_ndims(compilers) = 1 AND array_position(compilers, NULL) IS NULL AND
            array_to_string(compilers, ' ') ~
              '^[^[:space:]<>=]+(>=[0-9]+(\.[0-9]+)*)?( [^[:space:]<>=]+(>=[0-9]+(\.[0-9]+)*)?)*$'));

-- A pair whose name would not make a list element (blanks, '>=') stays a
-- pair: it still works as before.
UPDATE allot.engine
   SET compilers = coalesce(compilers, '{}') ||
                   (compiler || coalesce('>=' || compiler_min, '')),
       compiler = NULL,
       compiler_min = NULL
 WHERE compiler ~ '^[^[:space:]<>=]+$';

-- A minimum without a compiler was ignored; from now on it is refused,
-- so that setting compiler_min on an engine whose pair was moved into the
-- list fails loudly instead of doing nothing.
UPDATE allot.engine SET compiler_min = NULL WHERE compiler IS NULL AND compiler_min IS NOT NULL;
ALTER TABLE allot.engine ADD CONSTRAINT engine_compiler_min_needs_compiler
    CHECK (compiler_min IS NULL OR compiler IS NOT NULL);

/* ---------------------------------------------------------------------------
 * Hosts that register themselves (the BOINC front end).
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Status views and the allot_monitor role.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Catalog comments.
 * ------------------------------------------------------------------------- */
/*
 * Every table and column, so that \d+ explains the schema.  Units are SI
 * (seconds, FLOPs, FLOPS = FLOPs per second) unless a comment says
 * otherwise; "allot writes" marks what operators only read.
 */

COMMENT ON TABLE allot.engine IS
    'What a host needs to build and run an engine (OpenBench''s engine configuration). An engine with no row needs nothing';
COMMENT ON COLUMN allot.engine.name IS
    'Engine name, as workload.engine and workload.base_engine name it';
COMMENT ON COLUMN allot.engine.systems IS
    'Operating systems it runs on, compared with host.os. NULL: any';
COMMENT ON COLUMN allot.engine.cpu_flags IS
    'CPU flags a host must all have (host.cpu_flags)';
COMMENT ON COLUMN allot.engine.compiler IS
    'Single form of compilers: one compiler a public engine builds with, an alternative to those listed in compilers. NULL: none';
COMMENT ON COLUMN allot.engine.compiler_min IS
    'Minimum version of compiler, dotted numbers (10.2); a missing component counts as 0. NULL: any version';
COMMENT ON COLUMN allot.engine.private IS
    'A private engine needs its name in host.tokens instead of a compiler';
COMMENT ON COLUMN allot.engine.compilers IS
    'Public engines: the compilers it builds with, any one of which will do, as OpenBench writes them: {g++>=11.0.0,clang++}. NULL: none needed';

COMMENT ON TABLE allot.workload IS
    'A test or tune. app_id NULL: an assignment workload, served whole to one host at a time by assign_workload; else a job workload, served job by job by request_work';
COMMENT ON COLUMN allot.workload.id IS 'Workload id';
COMMENT ON COLUMN allot.workload.name IS 'Free text for people; allot does not read it';
COMMENT ON COLUMN allot.workload.engine IS
    'Dev engine: checked against allot.engine, and the key of engine balancing and host focus';
COMMENT ON COLUMN allot.workload.base_engine IS
    'Base engine, checked against allot.engine like engine. NULL: none';
COMMENT ON COLUMN allot.workload.app_id IS
    'The app whose jobs make a job workload. NULL: an assignment workload';
COMMENT ON COLUMN allot.workload.priority IS
    'Only the highest priority a host can run is considered; may be negative';
COMMENT ON COLUMN allot.workload.throughput IS
    'Share weight, > 0: candidates get threads (or usage) in proportion to it';
COMMENT ON COLUMN allot.workload.state IS
    'active (served), paused or finished (not served)';
COMMENT ON COLUMN allot.workload.dev_threads IS
    'Threads each game gives the dev engine';
COMMENT ON COLUMN allot.workload.base_threads IS
    'Threads each game gives the base engine; differing from dev_threads makes it core odds';
COMMENT ON COLUMN allot.workload.syzygy IS
    'Syzygy tablebase size needed, in pieces (0: none); a host needs syzygy_max >= this';
COMMENT ON COLUMN allot.workload.time_based IS
    'Games play on a clock, so noisy hosts are refused';
COMMENT ON COLUMN allot.workload.mode IS
    'games, spsa_single or spsa_multiple: SPSA needs twice the threads and changes the concurrency settings';
COMMENT ON COLUMN allot.workload.workload_size IS
    'Game pairs per concurrent game in one assignment (games_per_cutechess = 2 x workload_size x concurrency_per)';
COMMENT ON COLUMN allot.workload.delay_bound IS
    'Job workloads: a job''s deadline is its sent time plus this. NULL: no deadline';

COMMENT ON TABLE allot.host IS
    'A worker machine: what it offers, and its last workload';
COMMENT ON COLUMN allot.host.id IS 'Host id, as every function takes it';
COMMENT ON COLUMN allot.host.name IS 'Free text for people; allot does not read it';
COMMENT ON COLUMN allot.host.os IS
    'Operating system, compared with engine.systems and app_version.platform. NULL: unknown, fits only engines and versions for any OS';
COMMENT ON COLUMN allot.host.cpu_flags IS 'CPU flags it has';
COMMENT ON COLUMN allot.host.compilers IS
    'Compilers it has, name to version: {"gcc": "12.2.0"}. Versions compare as dotted numbers';
COMMENT ON COLUMN allot.host.tokens IS
    'Private engines it may build (engine names)';
COMMENT ON COLUMN allot.host.threads IS
    'Threads (OpenBench concurrency): what an assignment counts, and the CPUs request_work may fill';
COMMENT ON COLUMN allot.host.physical_cores IS
    'Physical cores; fewer than threads means hyperthreaded, which halves the threads core-odds workloads may use. NULL: same as threads';
COMMENT ON COLUMN allot.host.sockets IS
    'CPU sockets: separate cutechess copies for single-threaded workloads';
COMMENT ON COLUMN allot.host.syzygy_max IS
    'Largest Syzygy tablebases it has, in pieces (0: none)';
COMMENT ON COLUMN allot.host.noisy IS
    'Its timing is unreliable: it takes no time_based workload';
COMMENT ON COLUMN allot.host.focus IS
    'Engines it prefers (OpenBench --focus): when one is runnable, only those are candidates';
COMMENT ON COLUMN allot.host.cpu_flops IS
    'Peak FLOPS of one CPU (thread), for job usage and estimates. NULL: the fleet median';
COMMENT ON COLUMN allot.host.last_workload_id IS
    'Its most recent assignment workload, for the repeat rule; kept when released, may be changed or cleared. NULL: none';
COMMENT ON COLUMN allot.host.last_seen IS
    'When assign_workload or heartbeat last saw it (assign_workload refreshes it to the minute). NULL: never';

COMMENT ON TABLE allot.assignment IS
    'Allot writes: the assignment workload each host works on now, one row per host';
COMMENT ON COLUMN allot.assignment.host_id IS 'The host';
COMMENT ON COLUMN allot.assignment.workload_id IS 'The workload it works on';
COMMENT ON COLUMN allot.assignment.threads IS
    'The host''s threads when assigned: what it counts toward the workload';
COMMENT ON COLUMN allot.assignment.focus IS
    'Focus-assigned: the workload''s engine is in the host''s focus, so it counts only for focused requesters';
COMMENT ON COLUMN allot.assignment.assigned_at IS
    'When the host was given this workload (repeats keep it)';
COMMENT ON COLUMN allot.assignment.seen_at IS
    'Last request or heartbeat; the row counts while seen within allot.assignment_ttl';
COMMENT ON COLUMN allot.assignment.counted IS
    'Counted in workload_usage; false once its host was not seen within allot.assignment_ttl (a heartbeat counts it again)';

COMMENT ON TABLE allot.workload_usage IS
    'Allot writes: counted assignments per workload, kept by a trigger on allot.assignment; no row means none';
COMMENT ON COLUMN allot.workload_usage.workload_id IS 'The workload';
COMMENT ON COLUMN allot.workload_usage.threads IS
    'Threads of counted hosts that are not focus-assigned';
COMMENT ON COLUMN allot.workload_usage.focus_threads IS
    'Threads of counted focus-assigned hosts';
COMMENT ON COLUMN allot.workload_usage.hosts IS 'Counted hosts';

COMMENT ON TABLE allot.resource IS
    'Resource types: cpu (always) and coprocessor types (nvidia, amd, intel, ...)';
COMMENT ON COLUMN allot.resource.name IS
    'Type name: lower case letters, digits and _, up to 32 characters';

COMMENT ON TABLE allot.app IS
    'An application whose jobs job workloads hold, with the statistics of its successful jobs (Welford: mean and sum of squared deviations)';
COMMENT ON COLUMN allot.app.id IS 'App id';
COMMENT ON COLUMN allot.app.name IS 'Unique name';
COMMENT ON COLUMN allot.app.est_flops_per_au IS
    'Estimated FLOPs per app unit, learnt by the transitioner. NULL: not known yet';
COMMENT ON COLUMN allot.app.n_reports IS 'Successful reports in the statistics';
COMMENT ON COLUMN allot.app.actual_au_mean IS 'Mean of reported app units';
COMMENT ON COLUMN allot.app.actual_au_m2 IS
    'Sum of squared deviations of reported app units (variance = m2 / n_reports)';
COMMENT ON COLUMN allot.app.predicted_au_mean IS 'Mean of predicted app units';
COMMENT ON COLUMN allot.app.predicted_au_m2 IS
    'Sum of squared deviations of predicted app units';
COMMENT ON COLUMN allot.app.au_ratio_mean IS 'Mean of reported / predicted app units';
COMMENT ON COLUMN allot.app.au_ratio_m2 IS
    'Sum of squared deviations of reported / predicted app units';
COMMENT ON COLUMN allot.app.reference_jobs IS
    'Learn FLOPs per app unit only from jobs marked reference';
COMMENT ON COLUMN allot.app.cpu_samples IS
    'Allot writes: FLOPs per app unit of successful CPU jobs since the last percentile';
COMMENT ON COLUMN allot.app.gpu_samples IS
    'Allot writes: FLOPs per app unit of successful coprocessor jobs since the last percentile';
COMMENT ON COLUMN allot.app.cpu_flops_per_au IS
    'Last percentile of the CPU samples, FLOPs per app unit. NULL: none yet';
COMMENT ON COLUMN allot.app.gpu_flops_per_au IS
    'Last percentile of the coprocessor samples, FLOPs per app unit. NULL: none yet';

COMMENT ON TABLE allot.app_version IS
    'A build of an app for one resource type, and what one of its jobs uses';
COMMENT ON COLUMN allot.app_version.id IS 'App version id';
COMMENT ON COLUMN allot.app_version.app_id IS 'Its app';
COMMENT ON COLUMN allot.app_version.platform IS
    'Operating system it runs on, compared with host.os. NULL: any';
COMMENT ON COLUMN allot.app_version.resource IS
    'Resource type it runs on (allot.resource)';
COMMENT ON COLUMN allot.app_version.ncpus IS
    'CPUs a job uses, possibly fractional (> 0 on cpu)';
COMMENT ON COLUMN allot.app_version.ncoprocs IS
    'Coprocessor instances a job uses (0 on cpu, > 0 otherwise)';
COMMENT ON COLUMN allot.app_version.cpu_flags IS
    'CPU flags a host must all have';

COMMENT ON TABLE allot.host_coproc IS
    'Coprocessors of a host, one row per type';
COMMENT ON COLUMN allot.host_coproc.host_id IS 'The host';
COMMENT ON COLUMN allot.host_coproc.resource IS 'Coprocessor type (not cpu)';
COMMENT ON COLUMN allot.host_coproc.count IS 'Instances';
COMMENT ON COLUMN allot.host_coproc.peak_flops IS 'Peak FLOPS of one instance';

COMMENT ON TABLE allot.job IS
    'A unit of work of a job workload: unsent, in progress on one host, or finished';
COMMENT ON COLUMN allot.job.id IS 'Job id';
COMMENT ON COLUMN allot.job.workload_id IS 'Its job workload';
COMMENT ON COLUMN allot.job.state IS
    'unsent, in_progress, done (reported success) or error (reported error). An abort or a timeout makes it unsent again';
COMMENT ON COLUMN allot.job.host_id IS
    'Allot writes: the host it was sent to. NULL while unsent';
COMMENT ON COLUMN allot.job.app_version_id IS
    'Allot writes: the app version it was sent for. NULL while unsent';
COMMENT ON COLUMN allot.job.predicted_app_units IS
    'Work in app units the project expects it to take (> 0)';
COMMENT ON COLUMN allot.job.sent_at IS 'Allot writes: when it was sent. NULL while unsent';
COMMENT ON COLUMN allot.job.deadline IS
    'Allot writes: sent_at + workload.delay_bound, after which it goes back to unsent. NULL: unsent, or no deadline';
COMMENT ON COLUMN allot.job.est_secs IS
    'Allot writes: the run-time estimate it was sent with, in seconds. NULL while unsent';
COMMENT ON COLUMN allot.job.returned_at IS
    'Allot writes: when its last report came. NULL: none since sent';
COMMENT ON COLUMN allot.job.outcome IS
    'Allot writes: the last report, success, error or aborted. NULL: none since sent';
COMMENT ON COLUMN allot.job.app_units IS
    'Allot writes: app units reported on success. NULL otherwise';
COMMENT ON COLUMN allot.job.elapsed_secs IS
    'Allot writes: run time reported, in seconds. NULL: not reported';
COMMENT ON COLUMN allot.job.raw_flops_per_sec IS
    'Allot writes: FLOPS reported on success, else peak_flops_per_sec. NULL otherwise';
COMMENT ON COLUMN allot.job.peak_flops_per_sec IS
    'Allot writes: peak FLOPS of the devices it was sent to use (its usage while in progress). NULL while unsent';
COMMENT ON COLUMN allot.job.validated IS
    'The validator''s verdict (validate_job). NULL: not validated yet';
COMMENT ON COLUMN allot.job.credit IS
    'Allot writes: credit granted, in cobblestones (1/200 day of a 1 GFLOPS machine). NULL: not granted';
COMMENT ON COLUMN allot.job.reference IS
    'A reference job: the only kind an app with reference_jobs learns from';
COMMENT ON COLUMN allot.job.sampled IS
    'Allot writes: the transitioner has taken its FLOPs per app unit';

COMMENT ON TABLE allot.job_report IS
    'Allot writes: every accepted report and every timeout, with its reply, so that a repeated report gets the same answer and a late one is told apart';
COMMENT ON COLUMN allot.job_report.job_id IS 'The job';
COMMENT ON COLUMN allot.job_report.host_id IS 'The reporting host';
COMMENT ON COLUMN allot.job_report.sent_at IS 'When the job was sent on the run reported';
COMMENT ON COLUMN allot.job_report.outcome IS 'success, error, aborted, or timed_out (written by the transitioner)';
COMMENT ON COLUMN allot.job_report.app_units IS 'App units reported. NULL: a timeout';
COMMENT ON COLUMN allot.job_report.elapsed_secs IS 'Run time reported, in seconds. NULL: not reported';
COMMENT ON COLUMN allot.job_report.raw_flops_per_sec IS 'FLOPS reported. NULL: not reported';
COMMENT ON COLUMN allot.job_report.reported_at IS 'When the report came';
COMMENT ON COLUMN allot.job_report.reply IS 'What report_job returned (for a timeout, what a late report is told)';

COMMENT ON TABLE allot.job_usage IS
    'Allot writes: jobs per job workload, kept by statement triggers on allot.job';
COMMENT ON COLUMN allot.job_usage.workload_id IS 'The workload';
COMMENT ON COLUMN allot.job_usage.unsent IS 'Unsent jobs';
COMMENT ON COLUMN allot.job_usage.in_progress IS 'Jobs in progress';
COMMENT ON COLUMN allot.job_usage.mflops IS
    'Peak FLOPS of its jobs in progress, in whole MFLOPS (so that sums stay exact)';

COMMENT ON TABLE allot.host_app_version IS
    'Allot writes: what a host has shown with an app version: speed, daily quota, counts';
COMMENT ON COLUMN allot.host_app_version.host_id IS 'The host';
COMMENT ON COLUMN allot.host_app_version.app_version_id IS 'The app version';
COMMENT ON COLUMN allot.host_app_version.seconds_per_app_unit IS
    'Seconds per app unit: the client''s figure, else the average of its successes (weight 0.1 each). NULL: not known';
COMMENT ON COLUMN allot.host_app_version.raw_flops_per_sec IS
    'FLOPS the client states for this version. NULL: not stated';
COMMENT ON COLUMN allot.host_app_version.quota IS
    'Jobs per day it may be sent (>= 1): one less per error, doubled per success up to allot.daily_quota';
COMMENT ON COLUMN allot.host_app_version.quota_day IS
    'The UTC day jobs_today counts. NULL: none yet';
COMMENT ON COLUMN allot.host_app_version.jobs_today IS 'Jobs sent on quota_day';
COMMENT ON COLUMN allot.host_app_version.n_success IS 'Successful reports';
COMMENT ON COLUMN allot.host_app_version.n_error IS 'Errors, aborts and timeouts';

COMMENT ON TABLE allot.host_resource IS
    'Allot writes: per host and resource type, how long to wait after an empty answer';
COMMENT ON COLUMN allot.host_resource.host_id IS 'The host';
COMMENT ON COLUMN allot.host_resource.resource IS 'The resource type';
COMMENT ON COLUMN allot.host_resource.backoff_secs IS
    'Back-off hint in seconds: 0 after work was sent, else 600 doubling to 86400';

COMMENT ON COLUMN allot.workload_credit.workload_id IS 'The workload';
COMMENT ON COLUMN allot.workload_credit.resource IS 'The resource type';
COMMENT ON COLUMN allot.workload_credit.rec IS
    'Recent estimated credit at rec_at, decayed with allot.rec_half_life: FLOPs for job workloads, thread-seconds for assignment workloads';
COMMENT ON COLUMN allot.workload_credit.rec_at IS 'When rec was last brought up to date';
COMMENT ON COLUMN allot.workload_credit.debt IS
    'Long-term debt as of the last fold (0 for the most owed, negative below), in rec''s unit';
COMMENT ON COLUMN allot.workload_credit.sent IS
    'Credit handed out since the last fold, in rec''s unit';
