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
CREATE OR REPLACE FUNCTION allot.job_mflops(peak_flops_per_sec double precision) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(pg_catalog.round(peak_flops_per_sec OPERATOR(pg_catalog./)
                                     1e6::double precision)::bigint, 0)
$$;

/* Operator edits that take away what a request may be using wait for the
 * requests in flight and hold new ones back until they commit: every
 * request takes the row-writing lock of allot.job or allot.assignment
 * before it reads workloads, apps, versions or its host, and these edits
 * lock both tables in EXCLUSIVE mode before they remove anything (the lock
 * order is written out in src/entry.h).  The mode conflicts with every
 * writer and row locker and with itself, and lets only plain reads through:
 * two edits, whose cascades then write those tables, take turns, and an
 * edit never waits at a row for a transaction that has yet to take its
 * table lock (one that locked a job FOR UPDATE before it called allot).  A
 * request never meets a workload, version or host that vanished under it,
 * so it never fails on a foreign key; an edit waits at most for the
 * requests in flight. */
CREATE FUNCTION allot.edit_lock() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE allot.job, allot.assignment IN EXCLUSIVE MODE;
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

/* Assignments without an index on seen_at, so that a repeat, which moves
 * only seen_at, is a HOT update (src/assignment_usage.c): the lapsed
 * counted assignments a request subtracts are found through a watch list,
 * rebuilt with one scan whenever requests' cutoff passes its horizon. */
DROP INDEX allot.assignment_expiry_idx;
ALTER TABLE allot.assignment SET (fillfactor = 80);

CREATE TABLE allot.assignment_horizon (
    only_row      boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    generation    bigint NOT NULL DEFAULT 0,
    watched_below timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO allot.assignment_horizon DEFAULT VALUES;

CREATE TABLE allot.assignment_watch (
    generation bigint NOT NULL,
    host_id    bigint NOT NULL,
    seen_at    timestamptz NOT NULL,
    PRIMARY KEY (generation, host_id)
);
CREATE INDEX assignment_watch_seen_idx ON allot.assignment_watch (generation, seen_at);

COMMENT ON TABLE allot.assignment_horizon IS
    'Allot writes: one row, how far the watch list of lapsing assignments reaches';
COMMENT ON COLUMN allot.assignment_horizon.only_row IS 'Always true: the table has one row';
COMMENT ON COLUMN allot.assignment_horizon.generation IS 'The generation of allot.assignment_watch in use';
COMMENT ON COLUMN allot.assignment_horizon.watched_below IS
    'Every assignment counted and seen before this when the list was built is in allot.assignment_watch';
COMMENT ON TABLE allot.assignment_watch IS
    'Allot writes: assignments whose hosts had gone quiet when the list was built, the suspects of lapsing (src/assignment_usage.c)';
COMMENT ON COLUMN allot.assignment_watch.generation IS 'The list it belongs to; older ones are deleted as a new one is built';
COMMENT ON COLUMN allot.assignment_watch.seen_at IS
    'The assignment''s seen_at when it was listed, or earlier: never later than its seen_at now';
COMMENT ON COLUMN allot.assignment_watch.host_id IS 'The host of the assignment';

/* An assignment counted with a seen_at the watch list should hold but might
 * not (one written after the list was built with a time before its
 * horizon: virtual time that runs backwards, a row an operator inserts or
 * edits, a heartbeat that counts a swept row again) is added to it.  The
 * conditions leave out what requests do in time order: a repeat or a
 * heartbeat moves seen_at forward, past the horizon, and fires nothing.
 * The horizon row is read FOR SHARE, so that a list being rebuilt is
 * waited for and the entry goes into the new one. */
CREATE FUNCTION allot.assignment_watch_trigger() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO allot.assignment_watch AS w (generation, host_id, seen_at)
    SELECT h.generation, NEW.host_id, NEW.seen_at
      FROM (SELECT generation, watched_below FROM allot.assignment_horizon FOR SHARE) h
     WHERE NEW.seen_at < h.watched_below
    ON CONFLICT (generation, host_id) DO UPDATE SET seen_at = excluded.seen_at
     WHERE excluded.seen_at < w.seen_at;
    RETURN NULL;
END
$$;

CREATE TRIGGER assignment_watch_insert AFTER INSERT ON allot.assignment
    FOR EACH ROW WHEN (NEW.counted)
    EXECUTE FUNCTION allot.assignment_watch_trigger();
CREATE TRIGGER assignment_watch_update AFTER UPDATE ON allot.assignment
    FOR EACH ROW WHEN (NEW.counted AND (NEW.seen_at < OLD.seen_at OR NOT OLD.counted))
    EXECUTE FUNCTION allot.assignment_watch_trigger();

/* The usage trigger fires on an update only when what the row counts for
 * changes: a repeat or a heartbeat moves seen_at and touches no usage row. */
DROP TRIGGER assignment_usage ON allot.assignment;
CREATE TRIGGER assignment_usage AFTER INSERT OR DELETE ON allot.assignment
    FOR EACH ROW EXECUTE FUNCTION allot.assignment_usage_trigger();
CREATE TRIGGER assignment_usage_change AFTER UPDATE ON allot.assignment
    FOR EACH ROW
    WHEN (OLD.workload_id IS DISTINCT FROM NEW.workload_id OR OLD.threads IS DISTINCT FROM NEW.threads
          OR OLD.focus IS DISTINCT FROM NEW.focus OR OLD.counted IS DISTINCT FROM NEW.counted)
    EXECUTE FUNCTION allot.assignment_usage_trigger();

/* When a host last asked for jobs, kept with its backoffs: a request then
 * writes no host row; the transitioner brings host.last_seen up to date. */
ALTER TABLE allot.host_resource ADD COLUMN asked_at timestamptz;

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

/* A web layer whose hosts are strangers (a BOINC scheduler) registers them
 * itself: allot_web may create a host and keep it up to date through
 * register_host, and read the credit hosts earned through host_credit.  It
 * still cannot read or write allot.host, and register_host changes only
 * hosts that registered themselves, never one the operator added. */
ALTER TABLE allot.host
    ADD COLUMN registered_at timestamptz;

COMMENT ON COLUMN allot.host.registered_at IS
    'When the host registered itself through allot.register_host; NULL for a host the operator added, which register_host never changes';

/* A host's credited jobs, for host_credit: an index-only scan per host. */
CREATE INDEX job_host_credit_idx ON allot.job (host_id) INCLUDE (credit, returned_at)
    WHERE credit > 0;

/* Every value a host states is checked here, whatever the web layer checked
 * before: the limits are the tables' own (threads and counts, FLOPS within
 * [1, 1e18]) plus lengths and characters that keep names printable. */
CREATE FUNCTION allot.register_host(
        host_id   bigint,
        name      text,
        os        text,
        cpu_flags text[],
        threads   int,
        cpu_flops double precision,
        coprocs   jsonb DEFAULT '{}')
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    max_flags   CONSTANT int := 1024;
    max_threads CONSTANT int := 4096;
    flag        text;
    flags       text[];
    registered  timestamptz;
    rsc         text;
    spec        jsonb;
    n           jsonb;
    given       text[] := '{}';
    counts      int[] := '{}';
    peaks       double precision[] := '{}';
    id_         bigint := host_id;
    attempt     int;
BEGIN
    -- The host's own figures.
    IF threads IS NULL THEN
        RAISE EXCEPTION 'threads must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass the number of CPUs the host offers (BOINC: p_ncpus).';
    END IF;
    IF threads < 1 OR threads > max_threads THEN
        RAISE EXCEPTION 'threads must be between 1 and %, not %', max_threads, threads
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF cpu_flops IS NOT NULL AND NOT (cpu_flops BETWEEN 1 AND 1e18) THEN
        RAISE EXCEPTION 'cpu_flops must be between 1 and 1e+18, not %', cpu_flops
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass NULL when the host does not know its speed: allot then uses the fleet median.';
    END IF;
    IF length(name) > 255 OR name ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'name must be at most 255 printable characters, not %',
                        to_json(left(name, 40) || CASE WHEN length(name) > 40 THEN '...' ELSE '' END)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF length(os) > 64 OR os !~ '^[A-Za-z0-9][A-Za-z0-9_.+ -]*$' THEN
        RAISE EXCEPTION 'os must be at most 64 letters, digits, spaces and "_.+-", not %',
                        to_json(left(os, 40) || CASE WHEN length(os) > 40 THEN '...' ELSE '' END)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'App versions name the os they run on in allot.app_version.platform.';
    END IF;

    -- CPU flags: a plain list of short names.
    IF cpu_flags IS NULL THEN
        RAISE EXCEPTION 'cpu_flags must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass ''{}'' for a host without flags.';
    END IF;
    IF array_ndims(cpu_flags) > 1 THEN
        RAISE EXCEPTION 'cpu_flags must be a one-dimensional array, not %-dimensional', array_ndims(cpu_flags)
            USING ERRCODE = 'array_subscript_error';
    END IF;
    IF cardinality(cpu_flags) > max_flags THEN
        RAISE EXCEPTION 'cpu_flags must hold at most % flags, not %', max_flags, cardinality(cpu_flags)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOREACH flag IN ARRAY cpu_flags LOOP
        IF flag IS NULL THEN
            RAISE EXCEPTION 'cpu_flags must not contain NULL'
                USING ERRCODE = 'null_value_not_allowed';
        END IF;
        IF flag !~ '^[A-Za-z0-9_.+-]{1,64}$' THEN
            RAISE EXCEPTION 'cpu flag % is not 1 to 64 letters, digits or "_.+-"',
                            to_json(left(flag, 40) || CASE WHEN length(flag) > 40 THEN '...' ELSE '' END)
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END LOOP;
    flags := ARRAY(SELECT DISTINCT f FROM unnest(cpu_flags) f ORDER BY f);

    -- Coprocessors: {"nvidia": {"count": 2, "peak_flops": 1.2e13}, ...}.
    coprocs := coalesce(coprocs, '{}');
    IF jsonb_typeof(coprocs) <> 'object' THEN
        RAISE EXCEPTION 'coprocs must be a JSON object, not %', left(coprocs::text, 40)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'For example {"nvidia": {"count": 1, "peak_flops": 1.2e13}}.';
    END IF;
    FOR rsc, spec IN SELECT key, value FROM jsonb_each(coprocs) ORDER BY key LOOP
        IF rsc = 'cpu' OR NOT EXISTS (SELECT FROM allot.resource r WHERE r.name = rsc) THEN
            RAISE EXCEPTION 'unknown coprocessor type % in coprocs', to_json(left(rsc, 40))
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Coprocessor types are the rows of allot.resource other than cpu.';
        END IF;
        IF jsonb_typeof(spec) <> 'object' THEN
            RAISE EXCEPTION 'coprocs.% must be an object with count and peak_flops, not %', rsc, left(spec::text, 40)
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF spec - 'count' - 'peak_flops' <> '{}' THEN
            RAISE EXCEPTION 'unknown key % in coprocs.%',
                            to_json(left((SELECT min(k) FROM jsonb_object_keys(spec - 'count' - 'peak_flops') k), 40)), rsc
                USING ERRCODE = 'invalid_parameter_value', HINT = 'A coprocessor has a count and a peak_flops.';
        END IF;
        n := spec -> 'count';
        IF jsonb_typeof(n) IS DISTINCT FROM 'number' OR n::numeric <> trunc(n::numeric)
           OR n::numeric NOT BETWEEN 1 AND 1024 THEN
            RAISE EXCEPTION 'coprocs.%.count must be an integer between 1 and 1024, not %', rsc,
                            coalesce(left(n::text, 40), 'missing')
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        counts := counts || n::numeric::int;
        n := spec -> 'peak_flops';
        IF jsonb_typeof(n) IS DISTINCT FROM 'number' OR n::numeric NOT BETWEEN 1 AND 1e18 THEN
            RAISE EXCEPTION 'coprocs.%.peak_flops must be a number between 1 and 1e+18, not %', rsc,
                            coalesce(left(n::text, 40), 'missing')
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        peaks := peaks || n::numeric::double precision;
        given := given || rsc;
    END LOOP;

    IF id_ IS NULL THEN
        -- Ids the operator inserted by hand do not advance the identity
        -- sequence: step over them rather than fail a stranger's request.
        FOR attempt IN 1..100 LOOP
            INSERT INTO allot.host (name, os, cpu_flags, threads, cpu_flops, registered_at)
            VALUES (name, os, flags, threads, cpu_flops, now())
            ON CONFLICT (id) DO NOTHING
            RETURNING id INTO id_;
            EXIT WHEN id_ IS NOT NULL;
        END LOOP;
        IF id_ IS NULL THEN
            RAISE EXCEPTION 'no free host id after 100 tries of the identity sequence of allot.host'
                USING ERRCODE = 'unique_violation',
                      HINT = 'Move the sequence past the ids inserted by hand: SELECT setval(pg_get_serial_sequence(''allot.host'', ''id''), max(id)) FROM allot.host;';
        END IF;
    ELSE
        -- The host row first, as request_work locks it: one host's calls
        -- are serialised and never deadlock with each other.
        SELECT h.registered_at INTO registered FROM allot.host h WHERE h.id = id_ FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'host % does not exist', id_
                USING ERRCODE = 'no_data_found';
        END IF;
        IF registered IS NULL THEN
            RAISE EXCEPTION 'host % was added by the operator: register_host does not change it', id_
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'register_host updates only hosts it registered itself.';
        END IF;
        -- Unchanged figures write nothing: a scheduler calls this on every
        -- contact.
        UPDATE allot.host h
           SET name = register_host.name, os = register_host.os, cpu_flags = flags,
               threads = register_host.threads, cpu_flops = register_host.cpu_flops,
               sockets = least(h.sockets, register_host.threads),
               physical_cores = CASE WHEN h.physical_cores > register_host.threads
                                     THEN NULL ELSE h.physical_cores END
         WHERE h.id = id_
           AND (h.name, h.os, h.cpu_flags, h.threads, h.cpu_flops)
               IS DISTINCT FROM (register_host.name, register_host.os, flags,
                                 register_host.threads, register_host.cpu_flops);
        DELETE FROM allot.host_coproc c WHERE c.host_id = id_ AND c.resource <> ALL (given);
    END IF;

    INSERT INTO allot.host_coproc AS c (host_id, resource, count, peak_flops)
    SELECT id_, g.resource, g.count, g.peak_flops
      FROM unnest(given, counts, peaks) AS g (resource, count, peak_flops)
     ORDER BY g.resource
    ON CONFLICT ON CONSTRAINT host_coproc_pkey DO UPDATE
       SET count = excluded.count, peak_flops = excluded.peak_flops
     WHERE (c.count, c.peak_flops) IS DISTINCT FROM (excluded.count, excluded.peak_flops);

    RETURN id_;
END
$$;

COMMENT ON FUNCTION allot.register_host(bigint, text, text, text[], int, double precision, jsonb) IS
    'A host registers itself (host_id NULL, returns its new id) or updates what it states about itself: name, os, CPU flags, threads, CPU FLOPS and coprocessors; only hosts it registered';

/* BOINC's recent average credit: credits per day, each credit decaying with
 * a half-life of one week from the time its job was returned.  A host that
 * earns c credits a day for weeks on end has an average of c. */
CREATE FUNCTION allot.host_credit(host_ids bigint[])
    RETURNS TABLE (host_id bigint, total_credit double precision, expavg_credit double precision)
    LANGUAGE plpgsql STABLE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    max_hosts CONSTANT int := 10000;
    week      CONSTANT double precision := 7 * 86400;
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

    RETURN QUERY
    SELECT h.id,
           coalesce(sum(j.credit), 0)::double precision,
           coalesce(sum(allot.decay(j.credit,
                                    extract(epoch FROM now() - coalesce(j.returned_at, now()))::double precision,
                                    week)), 0) * ln(2) / 7
      FROM allot.host h
      LEFT JOIN allot.job j ON j.host_id = h.id AND j.credit > 0
     WHERE h.id = ANY (host_ids)
     GROUP BY h.id
     ORDER BY h.id;
END
$$;

COMMENT ON FUNCTION allot.host_credit(bigint[]) IS
    'Total credit and recent average credit (credits per day, half-life one week) of each given host that exists';

REVOKE ALL ON FUNCTION allot.register_host(bigint, text, text, text[], int, double precision, jsonb),
                       allot.host_credit(bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION allot.register_host(bigint, text, text, text[], int, double precision, jsonb),
                          allot.host_credit(bigint[]) TO allot_web, allot_admin;

/* ---------------------------------------------------------------------------
 * Status views and the allot_monitor role.
 *
 * What a farm's status page shows, as views that psql reads as easily as a
 * page does: allot.status_farm (one row), status_workload, status_host,
 * status_app and status_transitioner.  A page refreshes every few seconds,
 * so the views read the counters allot keeps anyway (workload_usage,
 * job_usage) instead of counting jobs or assignments; each view's comment
 * says what it costs.  Three things were not kept before and are now:
 *   job_usage.done / .error  jobs finished per workload, by the same trigger
 *                            that counts unsent and in-progress jobs;
 *   allot.host_credit        credit granted per host, by that trigger too;
 *   allot.transitioner_run   the last 100 runs of run_transitioner, a ring
 *                            of slots that run_transitioner overwrites
 *                            (src/transitioner.c), so it never grows.
 *
 * allot_monitor is a NOLOGIN group role like allot_web and allot_admin: it
 * may read these views and nothing else, no table, no function.  The views
 * belong to the extension's owner and read the tables with its rights, so
 * they call no allot function (a caller needs EXECUTE on the functions a
 * view calls): REC is decayed inline, as allot.decay does it.  They show no
 * host secret (tokens, or anything a web layer keeps in allot.host), only
 * the columns named here.
 * ------------------------------------------------------------------------- */
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'allot_monitor') THEN
        CREATE ROLE allot_monitor NOLOGIN;
    ELSIF EXISTS (SELECT FROM pg_catalog.pg_roles
                   WHERE rolname = 'allot_monitor' AND (rolcanlogin OR rolsuper)) THEN
        RAISE EXCEPTION 'role "allot_monitor" exists and can log in or is a superuser'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'allot uses it as a NOLOGIN group role; rename or alter it first.';
    END IF;
END
$$;

/* Finished jobs per workload, next to the unsent and in-progress counts. */
ALTER TABLE allot.job_usage
    ADD COLUMN done bigint NOT NULL DEFAULT 0,
    ADD COLUMN error bigint NOT NULL DEFAULT 0;

COMMENT ON COLUMN allot.job_usage.done IS
    'Jobs of the workload in state done';
COMMENT ON COLUMN allot.job_usage.error IS
    'Jobs of the workload in state error or timed_out';

-- Existing jobs are counted into shard 0, beside what the shards hold.
INSERT INTO allot.job_usage AS u (workload_id, shard, done, error)
SELECT workload_id, 0, count(*) FILTER (WHERE state = 'done'),
       count(*) FILTER (WHERE state IN ('error', 'timed_out'))
  FROM allot.job GROUP BY workload_id
ON CONFLICT (workload_id, shard) DO UPDATE SET done = excluded.done, error = excluded.error;

/* Credit granted to the jobs a host did.  No foreign key, like job_usage:
 * its rows follow the jobs, which is what the trigger sees.  numeric, so
 * that a total is exactly the sum of its jobs' credits in any order. */
CREATE TABLE allot.host_credit (
    host_id bigint PRIMARY KEY,
    credit  numeric NOT NULL DEFAULT 0,
    jobs    bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 50);

COMMENT ON TABLE allot.host_credit IS
    'Credit granted per host: the sum of job.credit over the host''s jobs; kept by the trigger on allot.job';
COMMENT ON COLUMN allot.host_credit.host_id IS 'The host (allot.host.id)';
COMMENT ON COLUMN allot.host_credit.credit IS 'Sum of the credit of its jobs, in cobblestones';
COMMENT ON COLUMN allot.host_credit.jobs IS 'Its jobs that have credit';

INSERT INTO allot.host_credit (host_id, credit, jobs)
SELECT host_id, sum(credit::numeric), count(*)
  FROM allot.job WHERE credit IS NOT NULL AND host_id IS NOT NULL GROUP BY host_id;

/* The trigger of 0.2.0, counting done and errored jobs too, and a host's
 * credit, into the writing backend's shard of job_usage (the section
 * "Requests that cost what a one-row update costs").  Requests and reports
 * change no credit: their host_credit statement finds no row with credit and
 * writes nothing.  Rows are written in workload id, then host id order, so
 * that concurrent statements cannot deadlock over them. */
CREATE OR REPLACE FUNCTION allot.job_usage_trigger() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    my_shard int := allot.usage_shard();
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO allot.job_usage AS u (workload_id, shard, unsent, in_progress, mflops, done, error)
        SELECT workload_id, my_shard, count(*) FILTER (WHERE state = 'unsent'),
               count(*) FILTER (WHERE state = 'in_progress'),
               coalesce(sum(allot.job_mflops(peak_flops_per_sec)) FILTER (WHERE state = 'in_progress'), 0),
               count(*) FILTER (WHERE state = 'done'),
               count(*) FILTER (WHERE state IN ('error', 'timed_out'))
          FROM new_rows GROUP BY workload_id ORDER BY workload_id
        ON CONFLICT (workload_id, shard) DO UPDATE
           SET unsent = u.unsent + excluded.unsent,
               in_progress = u.in_progress + excluded.in_progress,
               mflops = u.mflops + excluded.mflops,
               done = u.done + excluded.done,
               error = u.error + excluded.error;
        INSERT INTO allot.host_credit AS c (host_id, credit, jobs)
        SELECT host_id, sum(credit::numeric), count(*)
          FROM new_rows WHERE credit IS NOT NULL AND host_id IS NOT NULL
         GROUP BY host_id ORDER BY host_id
        ON CONFLICT (host_id) DO UPDATE
           SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO allot.job_usage AS u (workload_id, shard, unsent, in_progress, mflops, done, error)
        SELECT workload_id, my_shard, sum(unsent), sum(in_progress), sum(mflops), sum(done), sum(error)
          FROM (SELECT workload_id, (state = 'unsent')::int AS unsent,
                       (state = 'in_progress')::int AS in_progress,
                       CASE WHEN state = 'in_progress'
                            THEN allot.job_mflops(peak_flops_per_sec) ELSE 0 END AS mflops,
                       (state = 'done')::int AS done,
                       (state IN ('error', 'timed_out'))::int AS error
                  FROM new_rows
                UNION ALL
                SELECT workload_id, -(state = 'unsent')::int, -(state = 'in_progress')::int,
                       CASE WHEN state = 'in_progress'
                            THEN -allot.job_mflops(peak_flops_per_sec) ELSE 0 END,
                       -(state = 'done')::int, -(state IN ('error', 'timed_out'))::int
                  FROM old_rows) d
         GROUP BY workload_id
        HAVING sum(unsent) <> 0 OR sum(in_progress) <> 0 OR sum(mflops) <> 0
            OR sum(done) <> 0 OR sum(error) <> 0
         ORDER BY workload_id
        ON CONFLICT (workload_id, shard) DO UPDATE
           SET unsent = u.unsent + excluded.unsent,
               in_progress = u.in_progress + excluded.in_progress,
               mflops = u.mflops + excluded.mflops,
               done = u.done + excluded.done,
               error = u.error + excluded.error;
        INSERT INTO allot.host_credit AS c (host_id, credit, jobs)
        SELECT host_id, sum(credit), sum(jobs)
          FROM (SELECT host_id, credit::numeric AS credit, 1 AS jobs
                  FROM new_rows WHERE credit IS NOT NULL AND host_id IS NOT NULL
                UNION ALL
                SELECT host_id, -credit::numeric, -1
                  FROM old_rows WHERE credit IS NOT NULL AND host_id IS NOT NULL) d
         GROUP BY host_id
        HAVING sum(credit) <> 0 OR sum(jobs) <> 0
         ORDER BY host_id
        ON CONFLICT (host_id) DO UPDATE
           SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs;
    ELSE
        INSERT INTO allot.job_usage AS u (workload_id, shard, unsent, in_progress, mflops, done, error)
        SELECT workload_id, my_shard, -count(*) FILTER (WHERE state = 'unsent'),
               -count(*) FILTER (WHERE state = 'in_progress'),
               -coalesce(sum(allot.job_mflops(peak_flops_per_sec)) FILTER (WHERE state = 'in_progress'), 0),
               -count(*) FILTER (WHERE state = 'done'),
               -count(*) FILTER (WHERE state IN ('error', 'timed_out'))
          FROM old_rows GROUP BY workload_id ORDER BY workload_id
        ON CONFLICT (workload_id, shard) DO UPDATE
           SET unsent = u.unsent + excluded.unsent,
               in_progress = u.in_progress + excluded.in_progress,
               mflops = u.mflops + excluded.mflops,
               done = u.done + excluded.done,
               error = u.error + excluded.error;
        INSERT INTO allot.host_credit AS c (host_id, credit, jobs)
        SELECT host_id, -sum(credit::numeric), -count(*)
          FROM old_rows WHERE credit IS NOT NULL AND host_id IS NOT NULL
         GROUP BY host_id ORDER BY host_id
        ON CONFLICT (host_id) DO UPDATE
           SET credit = c.credit + excluded.credit, jobs = c.jobs + excluded.jobs;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION allot.job_truncate_trigger() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM allot.job_usage;
    DELETE FROM allot.host_credit;
    RETURN NULL;
END
$$;

/* check_invariants: usage (summing job_usage's shards), finished-job counts,
 * host credit, and jobs that name a host or version that is gone. */
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

/* The last runs of run_transitioner: run n is written to slot n % 100, so
 * the table holds at most 100 rows and each run costs one upsert (a HOT
 * update once the ring is full).  The sequence numbers runs without a lock
 * between concurrent runs; a run that rolls back leaves a gap and no row.
 * Not dumped: it is this server's log, like pg_stat_*, not the farm. */
CREATE SEQUENCE allot.transitioner_run_seq;

CREATE TABLE allot.transitioner_run (
    slot                int PRIMARY KEY,
    run                 bigint NOT NULL,
    started_at          timestamptz NOT NULL,
    finished_at         timestamptz NOT NULL,
    now_given           timestamptz NOT NULL,
    fairness            text NOT NULL,
    timed_out           bigint NOT NULL,
    expired_assignments bigint NOT NULL,
    reports_read        bigint NOT NULL,
    flops_samples       bigint NOT NULL,
    flops_estimates     bigint NOT NULL,
    credited            bigint NOT NULL,
    debts_folded        bigint NOT NULL,
    hosts_seen          bigint NOT NULL,
    CONSTRAINT transitioner_run_slot_range CHECK (slot >= 0 AND slot < 100)
) WITH (fillfactor = 50);

COMMENT ON SEQUENCE allot.transitioner_run_seq IS
    'Numbers the runs of run_transitioner';
COMMENT ON TABLE allot.transitioner_run IS
    'The last 100 runs of run_transitioner, one row per slot (run % 100), written at the end of each run';
COMMENT ON COLUMN allot.transitioner_run.slot IS 'run % 100: where the run is kept';
COMMENT ON COLUMN allot.transitioner_run.run IS 'Run number, from allot.transitioner_run_seq';
COMMENT ON COLUMN allot.transitioner_run.started_at IS 'Wall-clock time the run started';
COMMENT ON COLUMN allot.transitioner_run.finished_at IS 'Wall-clock time the run finished (before its transaction committed)';
COMMENT ON COLUMN allot.transitioner_run.now_given IS 'The now the run was given: its clock for deadlines and expiry';
COMMENT ON COLUMN allot.transitioner_run.fairness IS 'allot.fairness during the run';
COMMENT ON COLUMN allot.transitioner_run.timed_out IS 'Jobs past their deadline sent back to unsent';
COMMENT ON COLUMN allot.transitioner_run.expired_assignments IS 'Assignments that stopped counting';
COMMENT ON COLUMN allot.transitioner_run.reports_read IS 'Successful reports read for FLOPS estimates';
COMMENT ON COLUMN allot.transitioner_run.flops_samples IS 'FLOPS-per-app-unit values added to the apps'' samples';
COMMENT ON COLUMN allot.transitioner_run.flops_estimates IS 'Percentiles taken, each moving an app''s estimate';
COMMENT ON COLUMN allot.transitioner_run.credited IS 'Validated jobs granted credit';
COMMENT ON COLUMN allot.transitioner_run.debts_folded IS 'Debt rows folded (allot.fairness = debt)';
COMMENT ON COLUMN allot.transitioner_run.hosts_seen IS 'Hosts whose last_seen it brought up to date';

/* Settings as a view reads them.  In a session that has not loaded allot's
 * library a setting is a placeholder (set for the database or the role) or
 * unknown; unknown ones take allot's defaults. */
CREATE VIEW allot.status_settings AS
SELECT coalesce(nullif(pg_catalog.current_setting('allot.fairness', true), ''), 'current')
           AS fairness,
       coalesce(nullif(pg_catalog.current_setting('allot.balance_engine_throughputs', true), ''),
                'off')::boolean AS balance_engine_throughputs,
       coalesce(nullif(pg_catalog.current_setting('allot.rec_half_life', true), ''), '10d')::interval
           AS rec_half_life,
       coalesce(nullif(pg_catalog.current_setting('allot.assignment_ttl', true), ''), '2min')::interval
           AS assignment_ttl;

COMMENT ON VIEW allot.status_settings IS
    'The allot settings the status views use, as this session sees them. Cost: none (no table)';
COMMENT ON COLUMN allot.status_settings.fairness IS 'allot.fairness: current, recent or debt';
COMMENT ON COLUMN allot.status_settings.balance_engine_throughputs IS 'allot.balance_engine_throughputs';
COMMENT ON COLUMN allot.status_settings.rec_half_life IS 'allot.rec_half_life, used to decay recent credit';
COMMENT ON COLUMN allot.status_settings.assignment_ttl IS 'allot.assignment_ttl';

/* Per workload.  Share and fair share compare workloads of one kind only
 * (assignment workloads in threads, job workloads in FLOPS), as the
 * selection does.  The workloads in contention are the active ones that
 * can be picked (an assignment workload, or a job workload with unsent
 * jobs) at the highest priority among those of their kind; fair share is
 * their effective throughput (seed 000 step 3; balancing does not apply
 * under debt) over the sum of theirs, and 0 for every other workload. */
CREATE VIEW allot.status_workload AS
WITH w AS (
    SELECT w.id, w.name, w.app_id IS NOT NULL AS jobs, w.engine, a.name AS app, w.priority,
           w.state, w.throughput,
           CASE WHEN w.app_id IS NULL THEN coalesce(wu.hosts, 0) END AS hosts,
           CASE WHEN w.app_id IS NULL THEN coalesce(wu.threads + wu.focus_threads, 0) END AS threads,
           CASE WHEN w.app_id IS NOT NULL THEN coalesce(ju.mflops, 0) * 1e6::float8 END AS peak_flops,
           ju.unsent, ju.in_progress, ju.done, ju.error, a.est_flops_per_au,
           cr.rec, cr.debt,
           w.state = 'active' AND (w.app_id IS NULL OR ju.unsent > 0) AS contending,
           s.fairness, s.balance_engine_throughputs AND s.fairness <> 'debt' AS balance
      FROM allot.workload w
     CROSS JOIN allot.status_settings s
      LEFT JOIN allot.workload_usage wu ON wu.workload_id = w.id
      LEFT JOIN LATERAL (
          -- job_usage keeps a row per shard: the workload's is their sum
          SELECT sum(u.unsent)::bigint AS unsent, sum(u.in_progress)::bigint AS in_progress,
                 sum(u.mflops) AS mflops, sum(u.done)::bigint AS done, sum(u.error)::bigint AS error
            FROM allot.job_usage u WHERE u.workload_id = w.id
          HAVING count(*) > 0) ju ON true
      LEFT JOIN allot.app a ON a.id = w.app_id
      LEFT JOIN LATERAL (
          -- REC decayed to now as allot.decay does: no decay for a negative
          -- age, 0 past 1000 half-lives or below 1e-6 (never an underflow).
          SELECT sum(CASE WHEN x.age <= 0 THEN c.rec
                          WHEN x.age >= 1000 * x.half_life OR c.rec < 1e-6 THEN 0
                          ELSE c.rec * pg_catalog.power(0.5::float8, x.age / x.half_life) END) AS rec,
                 sum(c.debt) AS debt
            FROM allot.workload_credit c,
                 LATERAL (SELECT extract(epoch FROM pg_catalog.now() - c.rec_at)::float8 AS age,
                                 extract(epoch FROM s.rec_half_life)::float8 AS half_life) x
           WHERE c.workload_id = w.id) cr ON true),
top AS (
    SELECT w.*,
           w.contending AND w.priority = max(w.priority) FILTER (WHERE w.contending)
                                             OVER (PARTITION BY w.jobs) AS fair_in
      FROM w),
effective AS (
    SELECT top.*,
           CASE WHEN NOT top.fair_in THEN 0
                WHEN top.balance
                THEN top.throughput / count(*) FILTER (WHERE top.fair_in)
                                         OVER (PARTITION BY top.jobs, top.engine)
                ELSE top.throughput END AS effective_throughput,
           CASE WHEN top.fairness = 'recent' THEN coalesce(top.rec, 0)
                WHEN top.jobs THEN top.peak_flops
                ELSE top.threads END AS usage
      FROM top)
SELECT e.id AS workload_id, e.name,
       CASE WHEN e.jobs THEN 'jobs' ELSE 'assignment' END AS kind,
       e.engine, e.app, e.priority, e.state, e.throughput,
       e.hosts, e.threads, e.peak_flops, e.fairness,
       coalesce(e.usage / nullif(sum(e.usage) OVER (PARTITION BY e.jobs), 0), 0) AS share,
       coalesce(e.effective_throughput
                    / nullif(sum(e.effective_throughput) OVER (PARTITION BY e.jobs), 0), 0)
           AS fair_share,
       e.rec, e.debt,
       e.unsent AS jobs_unsent, e.in_progress AS jobs_in_progress,
       e.done AS jobs_done, e.error AS jobs_error, e.est_flops_per_au
  FROM effective e
 ORDER BY e.jobs, e.priority DESC, e.id;

COMMENT ON VIEW allot.status_workload IS
    'One row per workload: what it is, what it holds, its share against its fair share under allot.fairness, and its jobs. '
    'Cost: O(workloads): one row of workload_usage, job_usage and app per workload and its workload_credit rows; no host, assignment or job is read';
COMMENT ON COLUMN allot.status_workload.workload_id IS 'allot.workload.id';
COMMENT ON COLUMN allot.status_workload.name IS 'allot.workload.name';
COMMENT ON COLUMN allot.status_workload.kind IS 'assignment (one host at a time, assign_workload) or jobs (an app''s jobs, request_work)';
COMMENT ON COLUMN allot.status_workload.engine IS 'Its engine: the balancing and focus key';
COMMENT ON COLUMN allot.status_workload.app IS 'Name of its app; NULL for an assignment workload';
COMMENT ON COLUMN allot.status_workload.priority IS 'Its priority: only the highest runnable priority is picked';
COMMENT ON COLUMN allot.status_workload.state IS 'active, paused or finished';
COMMENT ON COLUMN allot.status_workload.throughput IS 'Its throughput: its weight in the fair share';
COMMENT ON COLUMN allot.status_workload.hosts IS 'Assignment workloads: hosts whose assignment to it counts (as of the last sweep of stale ones). NULL for job workloads, whose hosts are not counted';
COMMENT ON COLUMN allot.status_workload.threads IS 'Assignment workloads: threads of those hosts. NULL for job workloads';
COMMENT ON COLUMN allot.status_workload.peak_flops IS 'Job workloads: peak FLOPS of its jobs in progress, on every resource. NULL for assignment workloads';
COMMENT ON COLUMN allot.status_workload.fairness IS 'allot.fairness, which decides what share measures';
COMMENT ON COLUMN allot.status_workload.share IS 'Its part (0 to 1) of what its kind uses: under current and debt, of the threads or peak FLOPS in use now; under recent, of the recent estimated credit';
COMMENT ON COLUMN allot.status_workload.fair_share IS 'Its fair part (0 to 1): its effective throughput over that of the workloads in contention of its kind, 0 when it is not in contention';
COMMENT ON COLUMN allot.status_workload.rec IS 'Recent estimated credit, decayed to now, summed over resources (FLOPs or thread-seconds); NULL when none was recorded';
COMMENT ON COLUMN allot.status_workload.debt IS 'Long-term debt as of the last fold, summed over resources (0 is the most owed); NULL when none was recorded';
COMMENT ON COLUMN allot.status_workload.jobs_unsent IS 'Job workloads: jobs waiting for a host';
COMMENT ON COLUMN allot.status_workload.jobs_in_progress IS 'Job workloads: jobs sent and not yet reported';
COMMENT ON COLUMN allot.status_workload.jobs_done IS 'Job workloads: jobs reported successfully';
COMMENT ON COLUMN allot.status_workload.jobs_error IS 'Job workloads: jobs that ended in error';
COMMENT ON COLUMN allot.status_workload.est_flops_per_au IS 'Job workloads: its app''s estimate of FLOPs per app unit';

/* Per host.  Read it with ORDER BY ... LIMIT: the jobs in progress are
 * counted per host through the index on them, for the rows returned. */
CREATE VIEW allot.status_host AS
SELECT h.id AS host_id, h.name, h.os, h.threads, h.cpu_flops,
       (SELECT pg_catalog.jsonb_object_agg(c.resource, c.count)
          FROM allot.host_coproc c WHERE c.host_id = h.id) AS coprocessors,
       -- requests do not write the host row: the last of what they did write
       greatest(h.last_seen, a.seen_at,
                (SELECT max(r.asked_at) FROM allot.host_resource r
                  WHERE r.host_id = h.id)) AS last_seen,
       a.workload_id, a.counted AS assignment_counted, a.seen_at AS assignment_seen_at,
       j.jobs_in_progress, j.peak_flops_in_progress,
       coalesce(hc.credit, 0)::float8 AS credit, coalesce(hc.jobs, 0) AS credited_jobs
  FROM allot.host h
  LEFT JOIN allot.assignment a ON a.host_id = h.id
  LEFT JOIN allot.host_credit hc ON hc.host_id = h.id
  LEFT JOIN LATERAL (
      SELECT count(*) AS jobs_in_progress,
             coalesce(sum(jb.peak_flops_per_sec), 0) AS peak_flops_in_progress
        FROM allot.job jb WHERE jb.host_id = h.id AND jb.state = 'in_progress') j ON true;

COMMENT ON VIEW allot.status_host IS
    'One row per host: when it was last seen, what it holds (its assignment, its jobs in progress) and its credit. '
    'Cost: O(hosts) for the whole view; with ORDER BY last_seen DESC LIMIT n, a sort of the host rows and index lookups for the n rows returned';
COMMENT ON COLUMN allot.status_host.host_id IS 'allot.host.id';
COMMENT ON COLUMN allot.status_host.name IS 'allot.host.name';
COMMENT ON COLUMN allot.status_host.os IS 'Its operating system';
COMMENT ON COLUMN allot.status_host.threads IS 'Its CPU threads';
COMMENT ON COLUMN allot.status_host.cpu_flops IS 'Peak FLOPS of one CPU, as stated; NULL when unknown';
COMMENT ON COLUMN allot.status_host.coprocessors IS 'Its coprocessors: {"resource": count}; NULL when it has none';
COMMENT ON COLUMN allot.status_host.last_seen IS 'When it last asked for work or checked in: the latest of host.last_seen, its assignment''s seen_at and host_resource.asked_at';
COMMENT ON COLUMN allot.status_host.workload_id IS 'The assignment workload it is assigned; NULL when none';
COMMENT ON COLUMN allot.status_host.assignment_counted IS 'Whether that assignment counts (its host was seen within allot.assignment_ttl at the last sweep)';
COMMENT ON COLUMN allot.status_host.assignment_seen_at IS 'When the host last confirmed that assignment';
COMMENT ON COLUMN allot.status_host.jobs_in_progress IS 'Jobs in progress on it';
COMMENT ON COLUMN allot.status_host.peak_flops_in_progress IS 'Peak FLOPS of those jobs';
COMMENT ON COLUMN allot.status_host.credit IS 'Credit granted for its jobs, in cobblestones';
COMMENT ON COLUMN allot.status_host.credited_jobs IS 'Its jobs that were granted credit';

/* Per app. */
CREATE VIEW allot.status_app AS
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
       u.done AS jobs_done, u.error AS jobs_error
  FROM allot.app a
  LEFT JOIN LATERAL (
      SELECT coalesce(sum(ju.unsent), 0) AS unsent, coalesce(sum(ju.in_progress), 0) AS in_progress,
             coalesce(sum(ju.done), 0) AS done, coalesce(sum(ju.error), 0) AS error
        FROM allot.workload w JOIN allot.job_usage ju ON ju.workload_id = w.id
       WHERE w.app_id = a.id) u ON true;

COMMENT ON VIEW allot.status_app IS
    'One row per app: its versions'' resources, its FLOPS-per-app-unit estimate, the credit a job earns, and its jobs. '
    'Cost: O(apps + workloads): the app rows with their sample arrays, their versions, and one job_usage row per workload';
COMMENT ON COLUMN allot.status_app.app_id IS 'allot.app.id';
COMMENT ON COLUMN allot.status_app.name IS 'allot.app.name';
COMMENT ON COLUMN allot.status_app.resources IS 'Resources its versions run on';
COMMENT ON COLUMN allot.status_app.workloads IS 'Workloads of the app';
COMMENT ON COLUMN allot.status_app.n_reports IS 'Successful reports its statistics learned from';
COMMENT ON COLUMN allot.status_app.est_flops_per_au IS 'Estimated FLOPs per app unit (the transitioner''s moving average); NULL until the first percentile';
COMMENT ON COLUMN allot.status_app.cpu_flops_per_au IS 'Last percentile of its CPU versions'' FLOPs per app unit';
COMMENT ON COLUMN allot.status_app.gpu_flops_per_au IS 'Last percentile of its GPU versions'' FLOPs per app unit';
COMMENT ON COLUMN allot.status_app.samples_pending IS 'Values collected toward the next percentile (allot.flops_sample_size per kind)';
COMMENT ON COLUMN allot.status_app.actual_au_mean IS 'Mean app units of a successful job';
COMMENT ON COLUMN allot.status_app.credit_per_job IS 'Credit a validated job earns now, in cobblestones (mean app units x estimate / 4.32e11); NULL without an estimate';
COMMENT ON COLUMN allot.status_app.jobs_unsent IS 'Unsent jobs of its workloads';
COMMENT ON COLUMN allot.status_app.jobs_in_progress IS 'Jobs of its workloads in progress';
COMMENT ON COLUMN allot.status_app.jobs_done IS 'Jobs of its workloads done';
COMMENT ON COLUMN allot.status_app.jobs_error IS 'Jobs of its workloads that ended in error';

/* The last runs of the transitioner, newest first. */
CREATE VIEW allot.status_transitioner AS
SELECT r.run, r.started_at, r.finished_at,
       extract(epoch FROM r.finished_at - r.started_at)::float8 * 1000 AS duration_ms,
       r.now_given, r.fairness, r.timed_out, r.expired_assignments, r.reports_read,
       r.flops_samples, r.flops_estimates, r.credited, r.debts_folded, r.hosts_seen
  FROM allot.transitioner_run r
 ORDER BY r.run DESC;

COMMENT ON VIEW allot.status_transitioner IS
    'The last 100 runs of run_transitioner that committed, newest first. Cost: at most 100 rows';
COMMENT ON COLUMN allot.status_transitioner.run IS 'Run number';
COMMENT ON COLUMN allot.status_transitioner.started_at IS 'Wall-clock time the run started';
COMMENT ON COLUMN allot.status_transitioner.finished_at IS 'Wall-clock time it finished';
COMMENT ON COLUMN allot.status_transitioner.duration_ms IS 'How long it took, in milliseconds';
COMMENT ON COLUMN allot.status_transitioner.now_given IS 'The now it was given';
COMMENT ON COLUMN allot.status_transitioner.fairness IS 'allot.fairness during the run';
COMMENT ON COLUMN allot.status_transitioner.timed_out IS 'Jobs past their deadline sent back to unsent';
COMMENT ON COLUMN allot.status_transitioner.expired_assignments IS 'Assignments that stopped counting';
COMMENT ON COLUMN allot.status_transitioner.reports_read IS 'Successful reports read for FLOPS estimates';
COMMENT ON COLUMN allot.status_transitioner.flops_samples IS 'FLOPS-per-app-unit values collected';
COMMENT ON COLUMN allot.status_transitioner.flops_estimates IS 'Percentiles taken';
COMMENT ON COLUMN allot.status_transitioner.credited IS 'Jobs granted credit';
COMMENT ON COLUMN allot.status_transitioner.debts_folded IS 'Debt rows folded';
COMMENT ON COLUMN allot.status_transitioner.hosts_seen IS 'Hosts whose last_seen it brought up to date';

/* The farm in one row. */
CREATE VIEW allot.status_farm AS
SELECT s.fairness, s.assignment_ttl, s.rec_half_life, s.balance_engine_throughputs,
       (SELECT count(*) FROM allot.host) AS hosts,
       (SELECT count(*) FROM allot.workload WHERE state = 'active') AS active_workloads,
       (SELECT coalesce(sum(hosts), 0) FROM allot.workload_usage) AS assigned_hosts,
       (SELECT coalesce(sum(threads + focus_threads), 0) FROM allot.workload_usage) AS threads_in_use,
       j.peak_flops_in_use, j.jobs_unsent, j.jobs_in_progress, j.jobs_done, j.jobs_error,
       (SELECT max(finished_at) FROM allot.transitioner_run) AS transitioner_last_run
  FROM allot.status_settings s,
       LATERAL (SELECT coalesce(sum(mflops), 0) * 1e6::float8 AS peak_flops_in_use,
                       coalesce(sum(unsent), 0) AS jobs_unsent,
                       coalesce(sum(in_progress), 0) AS jobs_in_progress,
                       coalesce(sum(done), 0) AS jobs_done,
                       coalesce(sum(error), 0) AS jobs_error
                  FROM allot.job_usage) j;

COMMENT ON VIEW allot.status_farm IS
    'The whole farm in one row: settings, hosts, what is in use, jobs, the last transitioner run. '
    'Cost: counting allot.host (an index-only scan, O(hosts)), the rows of workload, workload_usage and job_usage';
COMMENT ON COLUMN allot.status_farm.fairness IS 'allot.fairness';
COMMENT ON COLUMN allot.status_farm.assignment_ttl IS 'allot.assignment_ttl';
COMMENT ON COLUMN allot.status_farm.rec_half_life IS 'allot.rec_half_life';
COMMENT ON COLUMN allot.status_farm.balance_engine_throughputs IS 'allot.balance_engine_throughputs';
COMMENT ON COLUMN allot.status_farm.hosts IS 'Hosts (rows of allot.host)';
COMMENT ON COLUMN allot.status_farm.active_workloads IS 'Workloads in state active';
COMMENT ON COLUMN allot.status_farm.assigned_hosts IS 'Hosts whose assignment counts';
COMMENT ON COLUMN allot.status_farm.threads_in_use IS 'Their threads';
COMMENT ON COLUMN allot.status_farm.peak_flops_in_use IS 'Peak FLOPS of all jobs in progress';
COMMENT ON COLUMN allot.status_farm.jobs_unsent IS 'Jobs waiting for a host';
COMMENT ON COLUMN allot.status_farm.jobs_in_progress IS 'Jobs in progress';
COMMENT ON COLUMN allot.status_farm.jobs_done IS 'Jobs done';
COMMENT ON COLUMN allot.status_farm.jobs_error IS 'Jobs that ended in error';
COMMENT ON COLUMN allot.status_farm.transitioner_last_run IS 'When the last recorded transitioner run finished';

GRANT USAGE ON SCHEMA allot TO allot_monitor;
GRANT SELECT ON allot.status_settings, allot.status_farm, allot.status_workload,
                allot.status_host, allot.status_app, allot.status_transitioner
    TO allot_monitor, allot_admin;
-- Operators keep every table; the job trigger, which runs as its owner,
-- writes host_credit; run_transitioner writes the ring of runs.
GRANT SELECT, INSERT, UPDATE, DELETE ON allot.host_credit, allot.transitioner_run TO allot_admin;
GRANT USAGE, SELECT ON SEQUENCE allot.transitioner_run_seq TO allot_admin;


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
    'Job workloads: a job''s deadline is its sent time plus this. NULL: allot.default_delay_bound (7 days by default)';

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
    'When it was last seen (assign_workload, heartbeat, request_work), as of the last transitioner run: requests do not write the host row. NULL: never';

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
    'Allot writes: sent_at + the delay bound (the workload''s, or allot.default_delay_bound), after which it goes back to unsent. NULL: unsent';
COMMENT ON COLUMN allot.job.est_secs IS
    'Allot writes: the run-time estimate it was sent with, in seconds. NULL while unsent';
COMMENT ON COLUMN allot.job.returned_at IS
    'Allot writes: when its last report came. NULL: none since sent';
COMMENT ON COLUMN allot.job.outcome IS
    'Allot writes: the last report, success, error or aborted. NULL: none since sent';
COMMENT ON COLUMN allot.job.app_units IS
    'Allot writes: app units counted on success: the claim, bounded to twice the app''s mean ratio to the prediction either way (job_report keeps the claim). NULL otherwise';
COMMENT ON COLUMN allot.job.elapsed_secs IS
    'Allot writes: run time reported, in seconds. NULL: not reported';
COMMENT ON COLUMN allot.job.raw_flops_per_sec IS
    'Allot writes: FLOPS reported on success, at most peak_flops_per_sec, which is also the default. NULL otherwise';
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
    'Allot writes: jobs per job workload, kept by statement triggers on allot.job, one row per (workload, shard): the sum of the shards is the workload''s';
COMMENT ON COLUMN allot.job_usage.workload_id IS 'The workload';
COMMENT ON COLUMN allot.job_usage.shard IS
    'Which backends add here (allot.usage_shard()), so that concurrent requests do not wait for each other; counts of a shard may be negative';
COMMENT ON COLUMN allot.job_usage.unsent IS 'Unsent jobs';
COMMENT ON COLUMN allot.job_usage.in_progress IS 'Jobs in progress';
COMMENT ON COLUMN allot.job_usage.mflops IS
    'Peak FLOPS of its jobs in progress, in whole MFLOPS (so that sums stay exact; numeric, so that they cannot overflow)';

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
COMMENT ON COLUMN allot.host_resource.asked_at IS
    'When the host last asked for work of this resource. NULL: not since 0.5.0';

COMMENT ON COLUMN allot.workload_credit.workload_id IS 'The workload';
COMMENT ON COLUMN allot.workload_credit.resource IS 'The resource type';
COMMENT ON COLUMN allot.workload_credit.rec IS
    'Recent estimated credit at rec_at, decayed with allot.rec_half_life: FLOPs for job workloads, thread-seconds for assignment workloads';
COMMENT ON COLUMN allot.workload_credit.rec_at IS 'When rec was last brought up to date';
COMMENT ON COLUMN allot.workload_credit.debt IS
    'Long-term debt as of the last fold (0 for the most owed, negative below), in rec''s unit';
COMMENT ON COLUMN allot.workload_credit.sent IS
    'Credit handed out since the last fold, in rec''s unit';

/* Every job in progress has a deadline.  0.4.0 sent the jobs of a workload
 * without delay_bound with none; they get the deadline 0.5.0 would have
 * given them, so that the transitioner times them out if their host is
 * gone.  The library is loaded by now (this script creates C functions), so
 * pg_settings holds the operator's allot.default_delay_bound, in seconds. */
UPDATE allot.job j
   SET deadline = coalesce(j.sent_at, pg_catalog.now()) + coalesce(w.delay_bound,
           pg_catalog.make_interval(secs => coalesce(
               (SELECT s.setting::double precision FROM pg_catalog.pg_settings s
                 WHERE s.name = 'allot.default_delay_bound'), 604800)))
  FROM allot.workload w
 WHERE j.workload_id = w.id AND j.state = 'in_progress' AND j.deadline IS NULL;

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
