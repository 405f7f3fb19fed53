-- test/fuzz/oracle.sql: what the manual says a call to allot should do,
-- written from the manual (docs/functions.md and docs/errors.md) and from the
-- messages the bad-input tests pin down, independently of how the fuzz test
-- generates its calls.  Included by test/pgtap/40_fuzz.sql with \ir.
--
-- oracle(case) gives 'ok' or the SQLSTATE of the first check that fails, in
-- the order the functions check: NULL arguments, then argument values, then
-- lookups of hosts and jobs, then the state of the job.

-- The SQLSTATEs each function may raise: those of docs/errors.md whose
-- condition can arise in that function (22003 only where concurrency
-- settings are computed).  percentile_disc's three are raised by
-- transitioner.c for a bad fraction or NaN, a multi-dimensional array and a
-- NULL element; the manual names them in no table.  Anything else, XX000
-- included, is a failure.
CREATE FUNCTION pg_temp.documented(fn text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $fn$
    SELECT CASE fn
        WHEN 'request_work'       THEN '{P0002,22004,22023}'
        WHEN 'report_job'         THEN '{P0002,22004,22023,42501,55000}'
        WHEN 'assign_workload'    THEN '{P0002,22004,22023,2202E,22003}'
        WHEN 'explain_assignment' THEN '{P0002,22004,22023,2202E}'
        WHEN 'heartbeat'          THEN '{P0002,22004,22023}'
        WHEN 'release_assignment' THEN '{P0002,22004}'
        WHEN 'estimate_job'       THEN '{P0002,22004}'
        WHEN 'host_queue'         THEN '{P0002,22004,22023}'
        WHEN 'validate_job'       THEN '{P0002,22004,55000}'
        WHEN 'percentile_disc'    THEN '{22004,22023,2202E}'
        WHEN 'run_transitioner'   THEN '{22004,22023}'
        WHEN 'expire_assignments' THEN '{22004,22023}'
    END::text[]
$fn$;

-- ---------------------------------------------------------------------------
-- Requests of request_work: request_defect() gives the first way a request
-- breaks the format of docs/functions.md "request_work", or NULL when it is well-formed.

-- A non-negative finite amount.  Amounts are converted as a C double: beyond
-- 1.7976931348623157e308 they are infinite, and below about 1e-324 they are
-- zero (so -1e-400 is -0, not negative).  The generators keep numbers away
-- from the thin bands around both limits.
CREATE FUNCTION pg_temp.amount_defect(v jsonb, path text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE
    n numeric;
BEGIN
    IF jsonb_typeof(v) IS DISTINCT FROM 'number' THEN
        RETURN path || ' is not a number';
    END IF;
    n := v::numeric;
    IF abs(n) > 1.7976931348623157e308 THEN
        RETURN path || ' is not finite as a double';
    END IF;
    IF n <= -1e-330 THEN
        RETURN path || ' is negative';
    END IF;
    RETURN NULL;
END
$fn$;

-- A workload id in request.exclude: also whole, and at most 9.2e18 (the C
-- code refuses larger ones before converting to bigint).
CREATE FUNCTION pg_temp.id_defect(v jsonb, path text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE
    d float8;
BEGIN
    IF pg_temp.amount_defect(v, path) IS NOT NULL THEN
        RETURN pg_temp.amount_defect(v, path);
    END IF;
    d := CASE WHEN abs(v::numeric) < 1e-330 THEN 0 ELSE v::numeric::float8 END;
    IF d <> floor(d) OR d > 9.2e18 THEN
        RETURN path || ' is not a whole number';
    END IF;
    RETURN NULL;
END
$fn$;

-- A key its object does not take (docs/functions.md "request_work": unknown keys are refused).
CREATE FUNCTION pg_temp.stray_key(o jsonb, allowed text[], path text) RETURNS text
    LANGUAGE sql IMMUTABLE AS $fn$
    SELECT format('%s has the unknown key %s', path, min(k))
      FROM jsonb_object_keys(o) k WHERE k <> ALL (allowed) HAVING count(*) > 0
$fn$;

-- An amount above its documented maximum (seconds 1e10, instances 1e6).
CREATE FUNCTION pg_temp.too_big(v jsonb, max numeric, path text) RETURNS text
    LANGUAGE sql IMMUTABLE AS $fn$
    SELECT CASE WHEN v::numeric > max THEN path || ' is too big' END
$fn$;

-- The request as a whole, member by member as docs/functions.md "request_work" lists them.
CREATE FUNCTION pg_temp.request_defect(r jsonb) RETURNS text LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    k text;
    v jsonb;
    m text;
    field text;
BEGIN
    IF jsonb_typeof(r) <> 'object' THEN
        RETURN 'request is not an object';
    END IF;
    m := pg_temp.stray_key(r, ARRAY['resources', 'work_req_seconds', 'no_gpus', 'exclude',
                                    'buffer', 'app_versions'], 'request');
    IF m IS NOT NULL THEN RETURN m; END IF;
    IF r ? 'no_gpus' AND jsonb_typeof(r -> 'no_gpus') <> 'boolean' THEN
        RETURN 'no_gpus is not a boolean';
    END IF;
    IF r ? 'exclude' THEN
        IF jsonb_typeof(r -> 'exclude') <> 'array' THEN
            RETURN 'exclude is not an array';
        END IF;
        FOR v IN SELECT e FROM jsonb_array_elements(r -> 'exclude') e LOOP
            m := pg_temp.id_defect(v, 'exclude[]');
            IF m IS NOT NULL THEN RETURN m; END IF;
        END LOOP;
    END IF;
    IF r ? 'app_versions' THEN
        IF jsonb_typeof(r -> 'app_versions') <> 'object' THEN
            RETURN 'app_versions is not an object';
        END IF;
        FOR k, v IN SELECT * FROM jsonb_each(r -> 'app_versions') LOOP
            -- ids as a client writes them: plain decimal, no sign or zeros in front
            IF k !~ '^[1-9][0-9]{0,18}$' OR k::numeric > 9223372036854775807 THEN
                RETURN format('app_versions key %s is not an id', k);
            END IF;
            IF NOT EXISTS (SELECT FROM allot.app_version WHERE id = k::bigint) THEN
                RETURN format('app version %s is unknown', k);
            END IF;
            IF jsonb_typeof(v) <> 'object' THEN
                RETURN format('app_versions.%s is not an object', k);
            END IF;
            m := pg_temp.stray_key(v, ARRAY['seconds_per_app_unit', 'raw_flops_per_sec'],
                                   'app_versions.' || k);
            IF m IS NOT NULL THEN RETURN m; END IF;
            FOREACH field IN ARRAY ARRAY['seconds_per_app_unit', 'raw_flops_per_sec'] LOOP
                IF v ? field THEN
                    m := pg_temp.amount_defect(v -> field, format('app_versions.%s.%s', k, field));
                    IF m IS NOT NULL THEN RETURN m; END IF;
                    -- 0 is "not stated"; otherwise within docs/errors.md' ranges
                    -- (compared as numeric: below about 2.5e-324 a double is 0)
                    IF (v ->> field)::numeric >= 2.5e-324
                       AND NOT (v ->> field)::numeric
                           BETWEEN (CASE field WHEN 'seconds_per_app_unit' THEN 1e-6 ELSE 1 END)
                               AND (CASE field WHEN 'seconds_per_app_unit' THEN 1e10 ELSE 1e20 END) THEN
                        RETURN format('app_versions.%s.%s is out of range', k, field);
                    END IF;
                END IF;
            END LOOP;
        END LOOP;
    END IF;
    IF r ? 'resources' THEN
        IF jsonb_typeof(r -> 'resources') <> 'object' THEN
            RETURN 'resources is not an object';
        END IF;
        FOR k, v IN SELECT * FROM jsonb_each(r -> 'resources') LOOP
            IF NOT EXISTS (SELECT FROM allot.resource WHERE name = k) THEN
                RETURN format('resource %s is unknown', k);
            END IF;
            IF jsonb_typeof(v) <> 'object' THEN
                RETURN format('resources.%s is not an object', k);
            END IF;
            m := pg_temp.stray_key(v, ARRAY['req_secs', 'req_instances', 'estimated_delay'],
                                   'resources.' || k);
            IF m IS NOT NULL THEN RETURN m; END IF;
            FOREACH field IN ARRAY ARRAY['req_secs', 'req_instances', 'estimated_delay'] LOOP
                IF v ? field THEN
                    m := coalesce(pg_temp.amount_defect(v -> field, format('resources.%s.%s', k, field)),
                                  pg_temp.too_big(v -> field, CASE field WHEN 'req_instances' THEN 1e6 ELSE 1e10 END,
                                                  format('resources.%s.%s', k, field)));
                    IF m IS NOT NULL THEN RETURN m; END IF;
                END IF;
            END LOOP;
        END LOOP;
    ELSIF r ? 'work_req_seconds' THEN
        -- read only when there is no "resources" (an old client)
        m := coalesce(pg_temp.amount_defect(r -> 'work_req_seconds', 'work_req_seconds'),
                      pg_temp.too_big(r -> 'work_req_seconds', 1e10, 'work_req_seconds'));
        IF m IS NOT NULL THEN RETURN m; END IF;
    END IF;
    IF r ? 'buffer' THEN
        IF jsonb_typeof(r -> 'buffer') <> 'object' THEN
            RETURN 'buffer is not an object';
        END IF;
        m := pg_temp.stray_key(r -> 'buffer', ARRAY['min_secs', 'max_secs'], 'buffer');
        IF m IS NOT NULL THEN RETURN m; END IF;
        FOREACH field IN ARRAY ARRAY['min_secs', 'max_secs'] LOOP
            IF r -> 'buffer' ? field THEN
                m := coalesce(pg_temp.amount_defect(r -> 'buffer' -> field, 'buffer.' || field),
                              pg_temp.too_big(r -> 'buffer' -> field, 1e10, 'buffer.' || field));
                IF m IS NOT NULL THEN RETURN m; END IF;
            END IF;
        END LOOP;
    END IF;
    RETURN NULL;
END
$fn$;

-- ---------------------------------------------------------------------------
-- Calls.

-- now: NULL is 22004; one outside years 1970 to 9999 (infinite ones
-- included) 22023.
CREATE FUNCTION pg_temp.bad_now(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT CASE WHEN t IS NULL THEN '22004'
                WHEN NOT (t >= '1970-01-01 00:00+00' AND t < '10000-01-01 00:00+00') THEN '22023' END
$fn$;

-- A measurement outside its documented range [lo, hi] (NULL: not given).
CREATE FUNCTION pg_temp.out_of(x float8, lo float8, hi float8) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS $fn$
    SELECT x IS NOT NULL AND NOT (x >= lo AND x <= hi)
$fn$;

-- app units, elapsed time, FLOPS: positive and finite ('NaN' > 0 holds in SQL)
CREATE FUNCTION pg_temp.bad_measure(x float8) RETURNS boolean LANGUAGE sql IMMUTABLE AS $fn$
    SELECT NOT (x > 0 AND x < 'Infinity')
$fn$;

-- host_queue's buffer lengths: between 0 and 1e10 seconds.
CREATE FUNCTION pg_temp.bad_secs(x float8) RETURNS boolean LANGUAGE sql IMMUTABLE AS $fn$
    SELECT NOT (x >= 0 AND x <= 1e10)
$fn$;

CREATE FUNCTION pg_temp.host_exists(h bigint) RETURNS boolean LANGUAGE sql STABLE AS $fn$
    SELECT EXISTS (SELECT FROM allot.host WHERE id = h)
$fn$;

-- exclude of assign_workload and explain_assignment: one dimension, no NULL.
CREATE FUNCTION pg_temp.bad_exclude(ids bigint[]) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT CASE WHEN array_ndims(ids) > 1 THEN '2202E'
                WHEN array_position(ids, NULL) IS NOT NULL THEN '22004' END
$fn$;

-- The outcome the manual gives for this call in the current state, as 'ok'
-- or a SQLSTATE, plus documented alternatives.
CREATE FUNCTION pg_temp.oracle(c fuzz_case, OUT expected text, OUT also text[])
    LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    j record;
    prev record;
BEGIN
    also := '{}';
    CASE c.fn
    WHEN 'request_work' THEN
        expected := CASE
            WHEN c.host IS NULL OR c.js IS NULL THEN '22004'
            WHEN pg_temp.bad_now(c.ts) IS NOT NULL THEN pg_temp.bad_now(c.ts)
            WHEN NOT pg_temp.host_exists(c.host) THEN 'P0002'
            WHEN pg_temp.request_defect(c.js) IS NOT NULL THEN '22023'
            ELSE 'ok' END;
    WHEN 'report_job' THEN
        expected := CASE
            WHEN c.host IS NULL OR c.job IS NULL OR c.txt IS NULL THEN '22004'
            WHEN c.txt NOT IN ('success', 'error', 'aborted', 'lost') THEN '22023'
            WHEN c.f1 IS NULL THEN '22004'
            WHEN pg_temp.bad_measure(c.f1) OR pg_temp.bad_measure(c.f2) OR pg_temp.bad_measure(c.f3) THEN '22023'
            WHEN pg_temp.out_of(c.f1, 1e-9, 1e12) OR pg_temp.out_of(c.f2, 1e-6, 1e10)
                 OR pg_temp.out_of(c.f3, 1, 1e20) THEN '22023'
            WHEN pg_temp.bad_now(c.ts) IS NOT NULL THEN pg_temp.bad_now(c.ts)
            WHEN NOT EXISTS (SELECT FROM allot.job WHERE id = c.job) THEN 'P0002'
            WHEN NOT pg_temp.host_exists(c.host) THEN 'P0002' END;
        IF expected IS NULL THEN
            SELECT state, host_id INTO j FROM allot.job WHERE id = c.job;
            IF j.state = 'in_progress' AND j.host_id = c.host THEN
                expected := 'ok';
            ELSE
                -- not this host's job now: a repeat of an accepted report, or a mistake
                SELECT * INTO prev FROM allot.job_report
                 WHERE job_id = c.job AND host_id = c.host ORDER BY sent_at DESC LIMIT 1;
                IF FOUND THEN
                    expected := CASE
                        WHEN prev.outcome IN ('timed_out', 'requeued') THEN '55000'
                        WHEN prev.outcome = c.txt AND prev.app_units = c.f1
                             AND prev.elapsed_secs IS NOT DISTINCT FROM c.f2
                             AND prev.raw_flops_per_sec IS NOT DISTINCT FROM c.f3 THEN 'ok'
                        ELSE '55000' END;
                ELSE
                    expected := CASE WHEN j.state = 'in_progress' THEN '42501' ELSE '55000' END;
                END IF;
            END IF;
        END IF;
    WHEN 'assign_workload', 'explain_assignment' THEN
        expected := CASE
            WHEN c.host IS NULL THEN '22004'
            WHEN pg_temp.bad_now(c.ts) IS NOT NULL THEN pg_temp.bad_now(c.ts)
            WHEN pg_temp.bad_exclude(c.ids) IS NOT NULL THEN pg_temp.bad_exclude(c.ids)
            WHEN NOT pg_temp.host_exists(c.host) THEN 'P0002'
            ELSE 'ok' END;
        -- concurrency settings beyond int: documented, on a host of 2^31 - 1 threads
        IF c.fn = 'assign_workload' AND expected = 'ok'
           AND (SELECT threads FROM allot.host WHERE id = c.host) > 65535 THEN
            also := '{22003}';
        END IF;
    WHEN 'heartbeat' THEN
        expected := CASE
            WHEN c.host IS NULL THEN '22004'
            WHEN pg_temp.bad_now(c.ts) IS NOT NULL THEN pg_temp.bad_now(c.ts)
            WHEN NOT pg_temp.host_exists(c.host) THEN 'P0002'
            ELSE 'ok' END;
    WHEN 'release_assignment' THEN
        expected := CASE
            WHEN c.host IS NULL THEN '22004'
            WHEN NOT pg_temp.host_exists(c.host) THEN 'P0002'
            ELSE 'ok' END;
    WHEN 'estimate_job' THEN
        expected := CASE
            WHEN c.host IS NULL OR c.job IS NULL THEN '22004'
            WHEN NOT pg_temp.host_exists(c.host) THEN 'P0002'
            WHEN NOT EXISTS (SELECT FROM allot.job WHERE id = c.job) THEN 'P0002'
            ELSE 'ok' END;
    WHEN 'host_queue' THEN
        expected := CASE
            WHEN c.host IS NULL OR c.f1 IS NULL THEN '22004'
            WHEN pg_temp.bad_secs(c.f1) THEN '22023'
            WHEN c.f2 IS NULL THEN '22004'
            WHEN pg_temp.bad_secs(c.f2) THEN '22023'
            WHEN pg_temp.bad_now(c.ts) IS NOT NULL THEN pg_temp.bad_now(c.ts)
            WHEN NOT pg_temp.host_exists(c.host) THEN 'P0002'
            ELSE 'ok' END;
    WHEN 'validate_job' THEN
        expected := CASE
            WHEN c.job IS NULL OR c.flag IS NULL THEN '22004'
            WHEN NOT EXISTS (SELECT FROM allot.job WHERE id = c.job) THEN 'P0002'
            WHEN (SELECT state FROM allot.job WHERE id = c.job) <> 'done' THEN '55000'
            ELSE 'ok' END;
    WHEN 'percentile_disc' THEN
        -- STRICT: a NULL argument gives NULL
        expected := CASE
            WHEN c.vals IS NULL OR c.f1 IS NULL THEN 'ok'
            WHEN NOT (c.f1 >= 0 AND c.f1 <= 1) OR c.f1 = 'NaN' THEN '22023'
            WHEN array_ndims(c.vals) > 1 THEN '2202E'
            WHEN cardinality(c.vals) = 0 THEN 'ok'
            WHEN array_position(c.vals, NULL) IS NOT NULL THEN '22004'
            WHEN 'NaN' = ANY (c.vals) THEN '22023'
            ELSE 'ok' END;
    WHEN 'run_transitioner', 'expire_assignments' THEN
        expected := coalesce(pg_temp.bad_now(c.ts), 'ok');
    END CASE;
END
$fn$;
