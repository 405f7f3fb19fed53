-- test/fuzz/harness.sql: how the fuzz test (test/pgtap/40_fuzz.sql) runs a
-- call and judges it.  The test includes it with \ir inside its transaction;
-- everything here lives in pg_temp and goes with the ROLLBACK.
--
-- A case is one row of fuzz_case.  run_case() resolves its run-time picks,
-- asks the oracle (oracle.sql) what the manual (docs/functions.md, docs/errors.md) says should happen, calls the
-- function in a subtransaction, and records what went wrong, if anything, as
-- problems of these kinds:
--   undocumented  an SQLSTATE the manual does not give for this function
--   unexpected    another outcome than the oracle's (an error for a valid
--                 call, success for an invalid one, or another SQLSTATE)
--   reply         a reply that breaks the manual or disagrees with the tables
--   message       an error message that is not valid UTF-8
--   changed       a failed call that changed an allot table
-- verdict() turns the problems of a batch into one TAP test with examples.
-- state_problems() lists what is wrong with the tables after a batch, and
-- run_isolated() runs a batch and then undoes it.

-- Cases.  One row per call; the columns a function does not take stay NULL,
-- and NULL in a column it takes is passed as NULL.  "pick" chooses a host or
-- job from the state at run time (e.g. "a job in progress, with its host"),
-- so that late calls still find work to report; the choice is written back.
CREATE TEMP TABLE fuzz_case (
    id       int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    batch    text NOT NULL,
    fn       text NOT NULL,
    host     bigint,
    job      bigint,
    txt      text,
    js       jsonb,
    f1       float8,
    f2       float8,
    f3       float8,
    ts       timestamptz,
    ids      bigint[],
    vals     float8[],
    flag     boolean,
    seed     bigint,
    pick     text,
    pick_r   float8,
    pick_r2  float8,
    note     text,
    -- results of the run
    expected text,          -- 'ok' or the SQLSTATE the oracle predicts
    also     text[],        -- other documented outcomes the manual allows here
    got      text,          -- 'ok' or the SQLSTATE raised
    message  text,
    reply    jsonb,
    problems text[]         -- 'kind: detail'; NULL when the call behaved
) ON COMMIT DROP;

-- ---------------------------------------------------------------------------
-- Calls.

-- Set-returning functions come back as a JSON array of their rows;
-- a float8 Infinity or NaN in a reply becomes a JSON string, which the
-- checks refuse where a number is due.
CREATE FUNCTION pg_temp.call(c fuzz_case) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
    res jsonb;
BEGIN
    CASE c.fn
    WHEN 'request_work' THEN
        RETURN allot.request_work(c.host, c.js, c.ts, c.seed);
    WHEN 'report_job' THEN
        RETURN allot.report_job(c.host, c.job, c.txt, c.f1, c.f2, c.f3, c.ts);
    WHEN 'assign_workload' THEN
        SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') INTO res FROM allot.assign_workload(c.host, c.ts, c.ids, c.seed) r;
    WHEN 'explain_assignment' THEN
        SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') INTO res FROM allot.explain_assignment(c.host, c.ts, c.ids) r;
    WHEN 'heartbeat' THEN
        RETURN to_jsonb(allot.heartbeat(c.host, c.ts));
    WHEN 'release_assignment' THEN
        RETURN to_jsonb(allot.release_assignment(c.host));
    WHEN 'estimate_job' THEN
        SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') INTO res FROM allot.estimate_job(c.host, c.job) r;
    WHEN 'host_queue' THEN
        SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') INTO res FROM allot.host_queue(c.host, c.f1, c.f2, c.ts) r;
    WHEN 'validate_job' THEN
        RETURN to_jsonb(allot.validate_job(c.job, c.flag));
    WHEN 'percentile_disc' THEN
        RETURN coalesce(to_jsonb(allot.percentile_disc(c.vals, c.f1)), 'null');
    WHEN 'run_transitioner' THEN
        RETURN allot.run_transitioner(c.ts);
    WHEN 'expire_assignments' THEN
        RETURN to_jsonb(allot.expire_assignments(c.ts));
    END CASE;
    RETURN res;
END
$fn$;

-- A call as SQL, for the diagnostics: numbers plain, other literals quoted.
CREATE FUNCTION pg_temp.lit(v text) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT CASE WHEN v ~ '^-?[0-9][0-9.e+-]*$' THEN v
                WHEN length(quote_nullable(v)) <= 160 THEN quote_nullable(v)
                ELSE left(quote_nullable(v), 120) || format('...'' /* %s characters */', length(v)) END
$fn$;

CREATE FUNCTION pg_temp.show(c fuzz_case) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT format('#%s SELECT allot.%s(%s)', c.id, c.fn, CASE c.fn
        WHEN 'request_work' THEN concat_ws(', ', pg_temp.lit(c.host::text), pg_temp.lit(c.js::text) || '::jsonb',
                                           pg_temp.lit(c.ts::text), pg_temp.lit(c.seed::text))
        WHEN 'report_job' THEN concat_ws(', ', pg_temp.lit(c.host::text), pg_temp.lit(c.job::text), pg_temp.lit(c.txt),
                                         pg_temp.lit(c.f1::text), pg_temp.lit(c.f2::text), pg_temp.lit(c.f3::text),
                                         pg_temp.lit(c.ts::text))
        WHEN 'assign_workload' THEN concat_ws(', ', pg_temp.lit(c.host::text), pg_temp.lit(c.ts::text),
                                              pg_temp.lit(c.ids::text), pg_temp.lit(c.seed::text))
        WHEN 'explain_assignment' THEN concat_ws(', ', pg_temp.lit(c.host::text), pg_temp.lit(c.ts::text),
                                                 pg_temp.lit(c.ids::text))
        WHEN 'heartbeat' THEN concat_ws(', ', pg_temp.lit(c.host::text), pg_temp.lit(c.ts::text))
        WHEN 'release_assignment' THEN pg_temp.lit(c.host::text)
        WHEN 'estimate_job' THEN concat_ws(', ', pg_temp.lit(c.host::text), pg_temp.lit(c.job::text))
        WHEN 'host_queue' THEN concat_ws(', ', pg_temp.lit(c.host::text), pg_temp.lit(c.f1::text),
                                         pg_temp.lit(c.f2::text), pg_temp.lit(c.ts::text))
        WHEN 'validate_job' THEN concat_ws(', ', pg_temp.lit(c.job::text), pg_temp.lit(c.flag::text))
        WHEN 'percentile_disc' THEN concat_ws(', ', pg_temp.lit(c.vals::text), pg_temp.lit(c.f1::text))
        ELSE pg_temp.lit(c.ts::text) END)
$fn$;

-- ---------------------------------------------------------------------------
-- The state: fingerprints, and what must hold after a batch.

-- Every allot table, one md5 each, rows in the order of their text.
CREATE FUNCTION pg_temp.fingerprint() RETURNS text LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    t regclass;
    h text;
    acc text := '';
BEGIN
    FOR t IN SELECT c.oid FROM pg_class c
              WHERE c.relnamespace = 'allot'::regnamespace AND c.relkind IN ('r', 'p')
              ORDER BY c.relname LOOP
        EXECUTE format('SELECT md5(coalesce(string_agg(x::text, E''\n'' ORDER BY x::text), '''')) FROM %s x', t)
           INTO h;
        acc := acc || t::text || '=' || left(h, 8) || ' ';
    END LOOP;
    RETURN acc;
END
$fn$;

-- What must hold of the state after a batch: the usage tables agree with
-- their rows (check_invariants), every row reads back from its text form
-- (pg_dump and COPY need that: a timestamptz beyond the year 294276 does not),
-- and every job in progress has a finite estimate and a deadline.
CREATE FUNCTION pg_temp.state_problems() RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE
    t regclass;
    m text;
BEGIN
    RETURN QUERY SELECT 'check_invariants(): ' || x FROM allot.check_invariants() x;
    FOR t IN SELECT c.oid FROM pg_class c
              WHERE c.relnamespace = 'allot'::regnamespace AND c.relkind IN ('r', 'p') ORDER BY c.relname LOOP
        BEGIN
            EXECUTE format('SELECT count(*) FROM %1$s x WHERE (x::text)::%1$s IS NULL', t);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS m = MESSAGE_TEXT;
            RETURN NEXT format('%s: a row does not read back from its text: %s', t, m);
        END;
    END LOOP;
    RETURN QUERY
    SELECT format('job %s in progress: est_secs %s, deadline %s', j.id, j.est_secs, j.deadline::text)
      FROM allot.job j JOIN allot.workload w ON w.id = j.workload_id
     WHERE j.state = 'in_progress'
       AND (NOT (j.est_secs >= 0 AND j.est_secs < 'Infinity')
            OR j.deadline IS NULL
            OR j.deadline > '294276-12-31 23:59:59.999999+00')
     ORDER BY j.id LIMIT 10;
END
$fn$;

-- Is this message text valid in the database encoding (UTF8)?  A client
-- decoding it would fail otherwise.
CREATE FUNCTION pg_temp.valid_text(m text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $fn$
BEGIN
    PERFORM convert_to(m, 'UTF8');
    RETURN true;
EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
    RETURN false;
END
$fn$;

-- ---------------------------------------------------------------------------
-- Host and job choices made at run time from the state (see "pick").

-- The job at fraction r of the jobs that match cond, in id order; NULL if none.
CREATE FUNCTION pg_temp.nth_job(cond text, r float8) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
    n bigint;
    jid bigint;
BEGIN
    EXECUTE 'SELECT count(*) FROM allot.job WHERE ' || cond INTO n;
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    EXECUTE format('SELECT id FROM allot.job WHERE %s ORDER BY id OFFSET %s LIMIT 1', cond, floor(r * n)::bigint)
       INTO jid;
    RETURN jid;
END
$fn$;

CREATE FUNCTION pg_temp.resolve(c_id int) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
    c fuzz_case;
    jid bigint;
    rep record;
    n bigint;
BEGIN
    SELECT * INTO c FROM fuzz_case fc WHERE fc.id = c_id;
    CASE c.pick
    WHEN 'mine', 'other' THEN   -- a job in progress, reported by its host or by another one
        jid := pg_temp.nth_job('state = ''in_progress''', c.pick_r);
        IF jid IS NOT NULL THEN
            UPDATE fuzz_case fc SET job = jid,
                   host = CASE WHEN c.pick = 'mine' THEN j.host_id
                               ELSE (SELECT h.id FROM allot.host h WHERE h.id <> j.host_id
                                      ORDER BY h.id OFFSET floor(c.pick_r2 * 7) LIMIT 1) END
              FROM allot.job j WHERE j.id = jid AND fc.id = c_id;
        END IF;
    WHEN 'done', 'unsent', 'error' THEN
        jid := pg_temp.nth_job(format('state = %L', c.pick), c.pick_r);
        IF jid IS NOT NULL THEN
            UPDATE fuzz_case fc SET job = jid WHERE fc.id = c_id;
        END IF;
    WHEN 'any' THEN
        UPDATE fuzz_case fc SET job = pg_temp.nth_job('true', c.pick_r) WHERE fc.id = c_id;
    WHEN 'repeat', 'repeat_changed', 'late' THEN
        -- a report again, the same or with other app units; a report after a timeout
        SELECT count(*) INTO n FROM allot.job_report WHERE (outcome = 'timed_out') = (c.pick = 'late');
        IF n > 0 THEN
            SELECT * INTO rep FROM allot.job_report
             WHERE (outcome = 'timed_out') = (c.pick = 'late')
             ORDER BY job_id, host_id, sent_at OFFSET floor(c.pick_r * n) LIMIT 1;
            IF c.pick = 'late' THEN
                UPDATE fuzz_case fc SET job = rep.job_id, host = rep.host_id WHERE fc.id = c_id;
            ELSE
                UPDATE fuzz_case fc SET job = rep.job_id, host = rep.host_id, txt = rep.outcome,
                       -- other app units, without overflow or underflow
                       f1 = CASE WHEN c.pick = 'repeat' THEN rep.app_units
                                 WHEN rep.app_units > 1 THEN rep.app_units / 2 ELSE rep.app_units * 2 END,
                       f2 = rep.elapsed_secs, f3 = rep.raw_flops_per_sec
                 WHERE fc.id = c_id;
            END IF;
        END IF;
    ELSE
        NULL;
    END CASE;
END
$fn$;

-- ---------------------------------------------------------------------------
-- Checks of replies.

-- What a reply is checked against: the state just before the call.
CREATE FUNCTION pg_temp.before(c fuzz_case) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
    b jsonb := '{}';
BEGIN
    CASE c.fn
    WHEN 'request_work' THEN
        b := jsonb_build_object('unsent', (SELECT coalesce(jsonb_agg(id), '[]') FROM allot.job WHERE state = 'unsent'));
    WHEN 'report_job' THEN
        b := jsonb_build_object(
            'fresh', EXISTS (SELECT FROM allot.job WHERE id = c.job AND state = 'in_progress' AND host_id = c.host),
            'sent_at', (SELECT sent_at FROM allot.job WHERE id = c.job),
            'previous', (SELECT reply FROM allot.job_report WHERE job_id = c.job AND host_id = c.host
                          ORDER BY sent_at DESC LIMIT 1));
    WHEN 'assign_workload' THEN
        -- the workloads explain_assignment gives a chance, in the same state
        BEGIN
            b := jsonb_build_object('possible',
                (SELECT coalesce(jsonb_agg(workload_id), '[]')
                   FROM allot.explain_assignment(c.host, c.ts, c.ids) WHERE probability > 0));
        EXCEPTION WHEN OTHERS THEN
            b := '{}';
        END;
    WHEN 'release_assignment' THEN
        b := jsonb_build_object('had', EXISTS (SELECT FROM allot.assignment WHERE host_id = c.host));
    ELSE
        NULL;
    END CASE;
    RETURN b;
END
$fn$;

CREATE FUNCTION pg_temp.is_number(v jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS $fn$
    SELECT jsonb_typeof(v) IS NOT DISTINCT FROM 'number'
$fn$;

-- A timestamptz as text that reads back: the range ends before year 294277.
CREATE FUNCTION pg_temp.timestamp_or_null(v text) RETURNS timestamptz LANGUAGE plpgsql STABLE AS $fn$
BEGIN
    RETURN v::timestamptz;
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
    RETURN NULL;
END
$fn$;

-- request_work's reply against the manual and the database.
CREATE FUNCTION pg_temp.check_request_work(c fuzz_case, res jsonb, b jsonb) RETURNS text
    LANGUAGE plpgsql AS $fn$
DECLARE
    e jsonb;
    j record;
    k text;
    v jsonb;
    field text;
    deadline timestamptz;
BEGIN
    IF jsonb_typeof(res) IS DISTINCT FROM 'object' OR jsonb_typeof(res -> 'jobs') IS DISTINCT FROM 'array'
       OR jsonb_typeof(res -> 'resources') IS DISTINCT FROM 'object'
       OR jsonb_typeof(res -> 'apps') IS DISTINCT FROM 'object'
       OR EXISTS (SELECT FROM jsonb_object_keys(res) x
                   WHERE x NOT IN ('jobs', 'resources', 'apps', 'request_delay', 'reason')) THEN
        RETURN 'the reply is not {"jobs": [...], "resources": {...}, "apps": {...}}';
    END IF;
    -- A host backing off after its failures (0.7.0): nothing sent, a
    -- delay of at most allot.max_error_backoff, and why.
    IF res ? 'request_delay' AND NOT (pg_temp.is_number(res -> 'request_delay')
            AND (res ->> 'request_delay')::float8 > 0
            AND (res ->> 'request_delay')::float8
                <= extract(epoch FROM current_setting('allot.max_error_backoff')::interval)
            AND jsonb_array_length(res -> 'jobs') = 0
            AND jsonb_typeof(res -> 'reason') = 'string') THEN
        RETURN format('backing off: request_delay %s, reason %s, %s jobs sent', res -> 'request_delay',
                      res -> 'reason', jsonb_array_length(res -> 'jobs'));
    END IF;
    IF jsonb_array_length(res -> 'jobs') > current_setting('allot.max_jobs_per_request')::int THEN
        RETURN 'more jobs than allot.max_jobs_per_request';
    END IF;
    IF (SELECT count(DISTINCT x -> 'job_id') <> count(*) FROM jsonb_array_elements(res -> 'jobs') x) THEN
        RETURN 'a job is sent twice';
    END IF;
    FOR e IN SELECT x FROM jsonb_array_elements(res -> 'jobs') x LOOP
        FOREACH field IN ARRAY ARRAY['job_id', 'workload_id', 'app_version_id', 'ncpus', 'ncoprocs',
                                     'predicted_app_units', 'est_secs', 'bound_secs', 'peak_flops_per_sec'] LOOP
            IF NOT pg_temp.is_number(e -> field) THEN
                RETURN format('job %s: %s is %s, not a number', e -> 'job_id', field,
                              coalesce((e -> field)::text, 'missing'));
            END IF;
        END LOOP;
        IF NOT (b -> 'unsent') @> jsonb_build_array(e -> 'job_id') THEN
            RETURN format('job %s was not unsent', e -> 'job_id');
        END IF;
        SELECT jb.*, w.app_id, w.delay_bound, w.state AS wstate, v2.app_id AS vapp, v2.resource AS vresource,
               v2.ncpus AS vncpus, v2.ncoprocs AS vncoprocs
          INTO j
          FROM allot.job jb JOIN allot.workload w ON w.id = jb.workload_id
          LEFT JOIN allot.app_version v2 ON v2.id = jb.app_version_id
         WHERE jb.id = (e ->> 'job_id')::bigint;
        IF j.state IS DISTINCT FROM 'in_progress' OR j.host_id IS DISTINCT FROM c.host
           OR j.sent_at IS DISTINCT FROM c.ts OR j.app_version_id IS DISTINCT FROM (e ->> 'app_version_id')::bigint THEN
            RETURN format('job %s is not in progress on host %s since now with version %s', e -> 'job_id', c.host,
                          e -> 'app_version_id');
        END IF;
        IF j.workload_id <> (e ->> 'workload_id')::bigint OR j.wstate <> 'active' OR j.vapp IS DISTINCT FROM j.app_id
           OR j.vresource IS DISTINCT FROM e ->> 'resource' OR j.vncpus <> (e ->> 'ncpus')::float8
           OR j.vncoprocs <> (e ->> 'ncoprocs')::float8 THEN
            RETURN format('job %s: workload, version or resource do not match the database', e -> 'job_id');
        END IF;
        IF NOT ((e ->> 'est_secs')::float8 >= 0 AND (e ->> 'bound_secs')::float8 >= (e ->> 'est_secs')::float8
                AND (e ->> 'peak_flops_per_sec')::float8 > 0) THEN
            RETURN format('job %s: estimate %s, bound %s, peak %s', e -> 'job_id', e -> 'est_secs',
                          e -> 'bound_secs', e -> 'peak_flops_per_sec');
        END IF;
        -- every job has a deadline: now + its delay bound, or the default one
        deadline := pg_temp.timestamp_or_null(e ->> 'deadline');
        IF deadline IS NULL THEN
            RETURN format('job %s: deadline %s is not a timestamptz (out of range?)', e -> 'job_id', e -> 'deadline');
        END IF;
        IF extract(epoch FROM deadline) <> extract(epoch FROM c.ts)
                + extract(epoch FROM coalesce(j.delay_bound, current_setting('allot.default_delay_bound')::interval)) THEN
            RETURN format('job %s: deadline %s is not now + %s', e -> 'job_id', e -> 'deadline',
                          coalesce(j.delay_bound, current_setting('allot.default_delay_bound')::interval));
        END IF;
        IF jsonb_typeof(c.js -> 'exclude') = 'array' AND
           EXISTS (SELECT FROM jsonb_array_elements(c.js -> 'exclude') x
                    WHERE x::numeric = (e ->> 'workload_id')::numeric) THEN
            RETURN format('job %s of excluded workload %s', e -> 'job_id', e -> 'workload_id');
        END IF;
        IF c.js -> 'no_gpus' = 'true' AND e ->> 'resource' <> 'cpu' THEN
            RETURN format('job %s for %s despite no_gpus', e -> 'job_id', e -> 'resource');
        END IF;
        IF c.js ? 'resources' AND NOT coalesce(
               (c.js -> 'resources' -> (e ->> 'resource') -> 'req_secs')::numeric > 0 OR
               (c.js -> 'resources' -> (e ->> 'resource') -> 'req_instances')::numeric > 0, false) THEN
            RETURN format('job %s for %s, which was not asked for', e -> 'job_id', e -> 'resource');
        END IF;
    END LOOP;
    FOR k, v IN SELECT * FROM jsonb_each(res -> 'resources') LOOP
        IF NOT EXISTS (SELECT FROM allot.resource WHERE name = k)
           OR v ->> 'status' IS NULL OR v ->> 'status' NOT IN ('work', 'no_work', 'unsupported')
           OR NOT pg_temp.is_number(v -> 'backoff_secs')
           OR NOT (v ->> 'backoff_secs')::float8 BETWEEN 0 AND 86400 THEN
            RETURN format('resources.%s is %s', k, v);
        END IF;
        IF (v ->> 'status' = 'work') <> EXISTS (SELECT FROM jsonb_array_elements(res -> 'jobs') x
                                                 WHERE x ->> 'resource' = k) THEN
            RETURN format('resources.%s says %s, the jobs say otherwise', k, v ->> 'status');
        END IF;
    END LOOP;
    IF (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM jsonb_object_keys(res -> 'apps') x) <>
       (SELECT coalesce(array_agg(DISTINCT v2.app_id::text ORDER BY v2.app_id::text), '{}')
          FROM jsonb_array_elements(res -> 'jobs') x
          JOIN allot.app_version v2 ON v2.id = (x ->> 'app_version_id')::bigint) THEN
        RETURN 'apps does not list exactly the apps of the jobs';
    END IF;
    RETURN NULL;
END
$fn$;

-- Every other reply.
CREATE FUNCTION pg_temp.check_reply(c fuzz_case, res jsonb, b jsonb) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
    r jsonb;
    expected jsonb;
    n int;
    total float8;
BEGIN
    CASE c.fn
    WHEN 'request_work' THEN
        RETURN pg_temp.check_request_work(c, res, b);
    WHEN 'report_job' THEN
        IF NOT (b ->> 'fresh')::boolean THEN
            IF res IS DISTINCT FROM b -> 'previous' THEN
                RETURN format('a repeated report got %s, not its first reply %s', res, b -> 'previous');
            END IF;
            RETURN NULL;
        END IF;
        IF jsonb_typeof(res) IS DISTINCT FROM 'object'
           OR (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(res) x) <> '{job_id,outcome,quota,state}'
           OR res -> 'job_id' <> to_jsonb(c.job) OR res ->> 'outcome' <> c.txt
           -- a failed sending goes back to unsent, or gives up at its limits
           OR res ->> 'state' <> (SELECT CASE WHEN c.txt = 'success' THEN 'done'
                                              WHEN j.failures > j.max_error_results
                                                   OR j.tries >= j.max_total_results THEN 'error'
                                              ELSE 'unsent' END
                                    FROM allot.job j WHERE j.id = c.job)
           OR NOT pg_temp.is_number(res -> 'quota')
           OR NOT (res ->> 'quota')::numeric BETWEEN 1 AND current_setting('allot.daily_quota')::int THEN
            RETURN format('reply %s', res);
        END IF;
        IF (SELECT state FROM allot.job WHERE id = c.job) <> res ->> 'state'
           OR NOT EXISTS (SELECT FROM allot.job_report WHERE job_id = c.job AND host_id = c.host
                             AND sent_at = (b ->> 'sent_at')::timestamptz AND reply = res) THEN
            RETURN 'the job or its report row does not match the reply';
        END IF;
    WHEN 'assign_workload' THEN
        n := jsonb_array_length(res);
        IF n > 1 THEN
            RETURN 'more than one row';
        END IF;
        IF n = 0 THEN
            IF EXISTS (SELECT FROM allot.assignment WHERE host_id = c.host) THEN
                RETURN 'no workload, but the host still holds an assignment';
            END IF;
            IF jsonb_array_length(b -> 'possible') > 0 THEN
                RETURN format('no workload, but explain_assignment gave a chance to %s', b -> 'possible');
            END IF;
            RETURN NULL;
        END IF;
        r := res -> 0;
        IF NOT (b -> 'possible') @> jsonb_build_array(r -> 'workload_id') THEN
            RETURN format('workload %s had no chance in explain_assignment (%s)', r -> 'workload_id', b -> 'possible');
        END IF;
        IF (r ->> 'workload_id')::bigint = ANY (c.ids) THEN
            RETURN format('excluded workload %s', r -> 'workload_id');
        END IF;
        IF NOT EXISTS (SELECT FROM allot.assignment a JOIN allot.workload w ON w.id = a.workload_id
                        WHERE a.host_id = c.host AND a.workload_id = (r ->> 'workload_id')::bigint
                          AND a.counted AND a.seen_at = c.ts AND w.state = 'active' AND w.app_id IS NULL) THEN
            RETURN 'the assignment row does not match the reply';
        END IF;
        IF NOT ((r ->> 'cutechess_count')::int >= 1 AND (r ->> 'concurrency_per')::int >= 1
                AND (r ->> 'games_per_cutechess')::int >= 1) THEN
            RETURN format('settings %s', r);
        END IF;
    WHEN 'explain_assignment' THEN
        IF (SELECT coalesce(array_agg((x ->> 'workload_id')::bigint ORDER BY (x ->> 'workload_id')::bigint), '{}')
              FROM jsonb_array_elements(res) x) <>
           (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM allot.workload
             WHERE state = 'active' AND app_id IS NULL) THEN
            RETURN 'not one row per active assignment workload';
        END IF;
        IF EXISTS (SELECT FROM jsonb_array_elements(res) x
                    WHERE NOT pg_temp.is_number(x -> 'probability')
                       OR NOT (x ->> 'probability')::float8 BETWEEN 0 AND 1
                       OR (NOT (x ->> 'candidate')::boolean AND (x ->> 'probability')::float8 <> 0)
                       OR ((x ->> 'workload_id')::bigint = ANY (c.ids) AND (x ->> 'candidate')::boolean)
                       OR ((x ->> 'candidate')::boolean AND NOT (pg_temp.is_number(x -> 'threads')
                           AND pg_temp.is_number(x -> 'effective_throughput') AND pg_temp.is_number(x -> 'ratio')
                           AND pg_temp.is_number(x -> 'fair_ratio')))) THEN
            RETURN 'a row with a bad probability, candidate flag or figure';
        END IF;
        total := (SELECT sum((x ->> 'probability')::float8) FROM jsonb_array_elements(res) x);
        IF NOT (abs(total - 1) < 1e-9 OR (total = 0 AND NOT EXISTS (
                    SELECT FROM jsonb_array_elements(res) x WHERE (x ->> 'candidate')::boolean))) THEN
            RETURN format('the probabilities add up to %s', total);
        END IF;
    WHEN 'heartbeat' THEN
        IF res IS DISTINCT FROM to_jsonb(EXISTS (SELECT FROM allot.assignment WHERE host_id = c.host
                                                   AND counted AND seen_at >= c.ts)) THEN
            RETURN format('returned %s', res);
        END IF;
    WHEN 'release_assignment' THEN
        IF res IS DISTINCT FROM b -> 'had' OR EXISTS (SELECT FROM allot.assignment WHERE host_id = c.host) THEN
            RETURN format('returned %s, had %s', res, b -> 'had');
        END IF;
    WHEN 'estimate_job' THEN
        IF jsonb_array_length(res) > 1 THEN
            RETURN 'more than one row';
        END IF;
        r := res -> 0;
        IF r IS NOT NULL AND NOT (
               EXISTS (SELECT FROM allot.job jb JOIN allot.workload w ON w.id = jb.workload_id
                         JOIN allot.app_version v ON v.app_id = w.app_id
                        WHERE jb.id = c.job AND v.id = (r ->> 'app_version_id')::bigint)
               AND pg_temp.is_number(r -> 'est_secs') AND pg_temp.is_number(r -> 'bound_secs')
               AND pg_temp.is_number(r -> 'peak_flops_per_sec')
               AND (r ->> 'est_secs')::float8 >= 0 AND (r ->> 'bound_secs')::float8 >= (r ->> 'est_secs')::float8
               AND (r ->> 'peak_flops_per_sec')::float8 > 0) THEN
            RETURN format('row %s: a version of another app, or not 0 <= est_secs <= bound_secs and '
                          'peak_flops_per_sec > 0 as numbers', r);
        END IF;
    WHEN 'host_queue' THEN
        -- one row per resource of the host; figures may overflow to Infinity
        -- on absurd buffers, but never NaN or negative
        IF (SELECT coalesce(array_agg(x ->> 'resource' ORDER BY x ->> 'resource'), '{}')
              FROM jsonb_array_elements(res) x) <>
           (SELECT array_agg(r2 ORDER BY r2) FROM (SELECT 'cpu' AS r2
                UNION ALL SELECT resource FROM allot.host_coproc WHERE host_id = c.host) s) THEN
            RETURN 'not one row per resource of the host';
        END IF;
        IF EXISTS (SELECT FROM jsonb_array_elements(res) x, LATERAL (VALUES
                       (x -> 'idle_instances'), (x -> 'shortfall_secs'), (x -> 'saturated_secs'),
                       (x -> 'busy_secs'), (x -> 'deadline_misses')) f(v)
                    WHERE NOT (pg_temp.is_number(f.v) AND (f.v)::float8 >= 0) AND f.v <> '"Infinity"') THEN
            RETURN 'a figure is NaN or negative';
        END IF;
        IF EXISTS (SELECT FROM jsonb_array_elements(res) x
                    WHERE (x ->> 'ninstances')::float8 <> CASE WHEN x ->> 'resource' = 'cpu'
                              THEN (SELECT threads FROM allot.host WHERE id = c.host)
                              ELSE (SELECT count FROM allot.host_coproc
                                     WHERE host_id = c.host AND resource = x ->> 'resource') END
                       OR (x ->> 'idle_instances')::float8 > (x ->> 'ninstances')::float8) THEN
            RETURN 'instances do not match the host';
        END IF;
    WHEN 'validate_job' THEN
        -- valid: done and validated; invalid: a failed sending, back to
        -- unsent with no verdict, or given up (error) with its verdict
        IF res IS DISTINCT FROM 'true'
           OR NOT EXISTS (SELECT FROM allot.job j
                           WHERE j.id = c.job
                             AND CASE WHEN c.flag THEN j.state = 'done' AND j.validated
                                      WHEN j.state = 'unsent' THEN j.validated IS NULL AND j.host_id IS NULL
                                      ELSE j.state = 'error' AND NOT j.validated END) THEN
            RETURN format('returned %s', res);
        END IF;
    WHEN 'percentile_disc' THEN
        IF c.vals IS NULL OR c.f1 IS NULL THEN
            expected := 'null';
        ELSE
            expected := coalesce((SELECT to_jsonb(percentile_disc(c.f1) WITHIN GROUP (ORDER BY x))
                                    FROM unnest(c.vals) x), 'null');
        END IF;
        IF res IS DISTINCT FROM expected THEN
            RETURN format('%s, where percentile_disc WITHIN GROUP gives %s', res, expected);
        END IF;
    WHEN 'run_transitioner' THEN
        -- the manual's six counts (a later release may add more)
        IF jsonb_typeof(res) IS DISTINCT FROM 'object'
           OR NOT res ?& '{credited,expired_assignments,flops_estimates,flops_samples,reports_read,timed_out}'
           OR EXISTS (SELECT FROM jsonb_each(res) x WHERE NOT pg_temp.is_number(x.value)
                         OR (x.value)::numeric < 0 OR (x.value)::numeric <> trunc((x.value)::numeric)) THEN
            RETURN format('reply %s', res);
        END IF;
    WHEN 'expire_assignments' THEN
        IF NOT pg_temp.is_number(res) OR (res)::numeric < 0
           OR EXISTS (SELECT FROM allot.assignment WHERE counted AND extract(epoch FROM seen_at)
                         < extract(epoch FROM c.ts) - extract(epoch FROM current_setting('allot.assignment_ttl')::interval)) THEN
            RETURN format('returned %s, and a stale assignment still counts', res);
        END IF;
    END CASE;
    RETURN NULL;
END
$fn$;

-- ---------------------------------------------------------------------------
-- Running and judging.

-- Run one case: resolve its picks, ask the oracle, call in a subtransaction,
-- judge.  fp: compare fingerprints around the call when it fails.
CREATE FUNCTION pg_temp.run_case(c_id int, fp boolean) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
    c fuzz_case;
    o record;
    b jsonb;
    res jsonb;
    st text;
    msg text;
    fp0 text;
    bad text[] := '{}';
    why text;
BEGIN
    PERFORM pg_temp.resolve(c_id);
    SELECT * INTO c FROM fuzz_case fc WHERE fc.id = c_id;
    IF current_setting('fuzz.trace', true) = 'on' THEN
        RAISE NOTICE '%', pg_temp.show(c);
    END IF;
    o := pg_temp.oracle(c);
    b := pg_temp.before(c);
    IF fp THEN
        fp0 := pg_temp.fingerprint();
    END IF;
    BEGIN
        res := pg_temp.call(c);
        st := 'ok';
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    END;

    IF st <> 'ok' AND st <> ALL (pg_temp.documented(c.fn)) THEN
        bad := bad || format('undocumented: SQLSTATE %s', st);
    ELSIF st <> o.expected AND st <> ALL (o.also) THEN
        bad := bad || format('unexpected: expected %s, got %s', o.expected, st);
    END IF;
    IF st = 'ok' THEN
        BEGIN
            why := pg_temp.check_reply(c, res, b);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS why = MESSAGE_TEXT;
            why := 'checking it raised: ' || why;
        END;
        IF why IS NOT NULL THEN
            bad := bad || ('reply: ' || why);
        END IF;
    ELSE
        IF msg IS NULL OR msg = '' OR NOT pg_temp.valid_text(msg) THEN
            bad := bad || 'message: the error message is empty or not valid UTF-8'::text;
        END IF;
        IF fp AND pg_temp.fingerprint() <> fp0 THEN
            bad := bad || 'changed: the failed call changed allot tables'::text;
        END IF;
    END IF;
    UPDATE fuzz_case
       SET expected = o.expected, also = o.also, got = st,
           -- an invalid message is kept as escaped bytes, readable in a diagnostic
           message = CASE WHEN msg IS NULL OR pg_temp.valid_text(msg) THEN left(msg, 300)
                          ELSE encode(substring(textsend(msg) FROM 1 FOR 200), 'escape') END,
           reply = CASE WHEN cardinality(bad) > 0 THEN res END,
           problems = nullif(bad, '{}')
     WHERE fuzz_case.id = c_id;
END
$fn$;

CREATE FUNCTION pg_temp.run_batch(which text, fp_every int) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
    c_id int;
BEGIN
    FOR c_id IN SELECT fc.id FROM fuzz_case fc WHERE fc.batch = which ORDER BY fc.id LOOP
        PERFORM pg_temp.run_case(c_id, fp_every > 0 AND c_id % fp_every = 0);
    END LOOP;
END
$fn$;

-- Run a batch in a subtransaction that is rolled back once its results are
-- saved: the batch after it then meets the state from before.  Returns the
-- state_problems() the batch left.
CREATE FUNCTION pg_temp.run_isolated(which text) RETURNS text[] LANGUAGE plpgsql AS $fn$
DECLARE
    results jsonb;
    state text[];
BEGIN
    BEGIN
        PERFORM pg_temp.run_batch(which, 1);
        results := (SELECT jsonb_agg(to_jsonb(fc)) FROM fuzz_case fc WHERE fc.batch = which);
        state := ARRAY(SELECT pg_temp.state_problems());
        RAISE EXCEPTION 'undo the batch' USING ERRCODE = 'UA001';
    EXCEPTION WHEN SQLSTATE 'UA001' THEN
        NULL;
    END;
    UPDATE fuzz_case fc
       SET host = r.host, job = r.job, txt = r.txt, f1 = r.f1, f2 = r.f2, f3 = r.f3,
           expected = r.expected, also = r.also, got = r.got, message = r.message, reply = r.reply,
           problems = r.problems
      FROM jsonb_populate_recordset(NULL::fuzz_case, results) r
     WHERE fc.id = r.id;
    RETURN state;
END
$fn$;

-- A problem without the ids and values that vary from call to call, so that
-- alike problems are counted together.
CREATE FUNCTION pg_temp.problem_kind(p text) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT regexp_replace(regexp_replace(regexp_replace(p,
               '(job|workload|host|version) -?[0-9]+', '\1 N', 'g'),
               '[{[].*[]}]', '...', 'g'),
               '"[^"]*[0-9][^"]*"', '"..."', 'g')
$fn$;

-- One TAP test over the cases of a batch (and functions) with problems of
-- the given kinds, and diagnostics that show up to three calls per kind of
-- problem.
CREATE FUNCTION pg_temp.verdict(description text, which text, fns text[], kinds text[])
    RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE
    g record;
    n bigint;
BEGIN
    SELECT count(*) INTO n FROM fuzz_case
     WHERE batch = which AND fn = ANY (fns)
       AND EXISTS (SELECT FROM unnest(problems) p WHERE split_part(p, ':', 1) = ANY (kinds));
    RETURN NEXT ok(n = 0, description);
    FOR g IN
        SELECT (x.c).fn, x.kind, count(*) AS calls,
               string_agg(format('      %s%s%s', pg_temp.show(x.c),
                                 CASE WHEN (x.c).got <> 'ok'
                                      THEN E'\n        -> ' || (x.c).got || ': ' || (x.c).message
                                      ELSE E'\n        -> ' || x.p END,
                                 CASE WHEN (x.c).reply IS NOT NULL
                                      THEN E'\n        -> ' || pg_temp.lit((x.c).reply::text) ELSE '' END),
                          E'\n' ORDER BY (x.c).id) FILTER (WHERE x.rn <= 3) AS examples
          FROM (SELECT fc AS c, p, pg_temp.problem_kind(p) AS kind,
                       row_number() OVER (PARTITION BY fc.fn, pg_temp.problem_kind(p) ORDER BY fc.id) AS rn
                  FROM fuzz_case fc, unnest(fc.problems) p
                 WHERE fc.batch = which AND fc.fn = ANY (fns) AND split_part(p, ':', 1) = ANY (kinds)) x
         GROUP BY (x.c).fn, x.kind ORDER BY 1, 2
    LOOP
        RETURN NEXT diag(format(E'%s: %s (%s call%s), e.g.\n%s', g.fn, g.kind, g.calls,
                                CASE WHEN g.calls > 1 THEN 's' ELSE '' END, g.examples));
    END LOOP;
END
$fn$;
