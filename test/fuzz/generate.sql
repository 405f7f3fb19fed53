-- test/fuzz/generate.sql: the calls of the fuzz test (test/pgtap/40_fuzz.sql),
-- which includes it with \ir.  Every random choice is drawn from random()
-- after the test's setseed(), before anything runs, so one seed always gives
-- the same calls; the choices that depend on the state (a job in progress,
-- a report to repeat) are made at run time from a drawn number ("pick").

-- One case.  The numbers its run-time picks use are drawn now.
CREATE FUNCTION pg_temp.add(batch text, fn text, note text, host bigint DEFAULT NULL, job bigint DEFAULT NULL,
                            txt text DEFAULT NULL, js jsonb DEFAULT NULL, f1 float8 DEFAULT NULL,
                            f2 float8 DEFAULT NULL, f3 float8 DEFAULT NULL, ts timestamptz DEFAULT NULL,
                            ids bigint[] DEFAULT NULL, vals float8[] DEFAULT NULL, flag boolean DEFAULT NULL,
                            seed bigint DEFAULT NULL, pick text DEFAULT NULL) RETURNS void
    LANGUAGE sql AS $fn$
    INSERT INTO fuzz_case (batch, fn, note, host, job, txt, js, f1, f2, f3, ts, ids, vals, flag, seed,
                           pick, pick_r, pick_r2)
    VALUES (batch, fn, note, host, job, txt, js, f1, f2, f3, ts, ids, vals, flag, seed, pick, random(), random())
$fn$;

-- ---------------------------------------------------------------------------
-- Value pools.

-- One element of an array, uniformly.
CREATE FUNCTION pg_temp.any_of(a anyarray) RETURNS anyelement LANGUAGE sql VOLATILE AS $fn$
    SELECT a[array_lower(a, 1) + floor(random() * cardinality(a))::int]
$fn$;

-- Text that looks like SQL, format directives, escapes, control and
-- multibyte characters, long strings, and words that are almost right.
CREATE FUNCTION pg_temp.nasty_text() RETURNS text LANGUAGE sql VOLATILE AS $fn$
    SELECT pg_temp.any_of(ARRAY[
        '', ' ', 'cpu', 'CPU', ' cpu', 'nvidia', 'gpu', 'success', 'SUCCESS', 'success ',
        'timed_out', '3600', '-1', 'NaN', 'Infinity', 'true', 'null', '[]', '{}',
        $s$'; DROP TABLE allot.job; --$s$, $s$" OR "1"="1$s$, '$$', '$q$ SELECT 1 $q$',
        'Robert''); DROP TABLE students;--', '\', '\\u0000', '\x00', E'\\0', chr(1) || chr(31),
        '%s%s%s%n', '%.100000d', 'ünïcödé', '☃', '𝄞𝄞', chr(8238) || 'rtl', 'ｃｐｕ', '１１',
        E'tab\there', E'new\nline', 'a' || repeat('é', 40), repeat('x', 300), repeat('ü', 5000),
        '"quoted"'])
$fn$;

-- The fixture's hosts, from plain to hostile.
CREATE FUNCTION pg_temp.some_host() RETURNS bigint LANGUAGE sql VOLATILE AS $fn$
    SELECT pg_temp.any_of(ARRAY[101, 102, 103, 104, 105, 106, 107, 108]::bigint[])
$fn$;

-- Ids no host or job has, at the edges of bigint and int.
CREATE FUNCTION pg_temp.unknown_id() RETURNS bigint LANGUAGE sql VOLATILE AS $fn$
    SELECT pg_temp.any_of(ARRAY[0, -1, 424242, 9223372036854775807, -9223372036854775808,
                                2147483648, -2147483649, 99999999]::bigint[])
$fn$;

-- Instants at the edges: infinite, the first and last finite ones, epochs.
CREATE FUNCTION pg_temp.edge_time() RETURNS timestamptz LANGUAGE sql VOLATILE AS $fn$
    SELECT pg_temp.any_of(ARRAY['infinity', '-infinity', '4714-11-24 00:00:00+00 BC',
        '294276-12-31 23:59:59.999999+00', '294276-12-30 00:00:00+00', '1999-12-31 23:59:59.999999+00',
        '2000-01-01 00:00:00+00', '1970-01-01 00:00:00+00', '0001-01-01 00:00:00+00 BC',
        '9999-12-31 23:59:59+00', '2025-12-31 23:59:59.999999+00']::timestamptz[])
$fn$;

-- Numbers at the edges of float8 (and beyond int4 and int8).
CREATE FUNCTION pg_temp.edge_float() RETURNS float8 LANGUAGE sql VOLATILE AS $fn$
    SELECT pg_temp.any_of(ARRAY['0', '-0', '-1', 'NaN', 'Infinity', '-Infinity', '5e-324', '1e-300',
        '1e300', '1e308', '1.7976931348623157e308', '-1e308', '2147483648', '9.3e18', '1', '0.5']::float8[])
$fn$;

-- A random seed for the tie draws (never NULL: a NULL seed draws truly at
-- random, and the run would not repeat).
CREATE FUNCTION pg_temp.some_seed() RETURNS bigint LANGUAGE sql VOLATILE AS $fn$
    SELECT CASE WHEN random() < 0.05
                THEN pg_temp.any_of(ARRAY[0, -1, 9223372036854775807, -9223372036854775808]::bigint[])
                ELSE floor((random() * 2 - 1) * 9.2e18)::bigint END
$fn$;

-- ---------------------------------------------------------------------------
-- JSON for request_work.

-- A value under `levels` nested arrays.
CREATE FUNCTION pg_temp.deep_json(levels int, inner_value jsonb) RETURNS jsonb LANGUAGE sql AS $fn$
    SELECT (repeat('[', levels) || inner_value::text || repeat(']', levels))::jsonb
$fn$;

-- Any JSON value: scalars, containers, and now and then a monster.
CREATE FUNCTION pg_temp.any_json(depth int) RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    k int := floor(random() * (CASE WHEN depth <= 0 THEN 6 ELSE 10 END))::int;
    v jsonb;
BEGIN
    CASE
        WHEN k = 0 THEN RETURN 'null';
        WHEN k = 1 THEN RETURN to_jsonb(random() < 0.5);
        WHEN k IN (2, 3) THEN RETURN pg_temp.any_of(ARRAY['0', '-0', '1', '-1', '0.5', '3600', '1e-400',
            '1e309', '-1e309', '1e308', '2147483648', '9223372036854775808', '12.0'])::jsonb;
        WHEN k IN (4, 5) THEN RETURN to_jsonb(pg_temp.nasty_text());
        WHEN k IN (6, 7) THEN
            SELECT coalesce(jsonb_agg(pg_temp.any_json(depth - 1)), '[]') INTO v
              FROM generate_series(1, floor(random() * 4)::int);
            RETURN v;
        WHEN k = 8 THEN
            SELECT coalesce(jsonb_object_agg(pg_temp.nasty_text(), pg_temp.any_json(depth - 1)), '{}') INTO v
              FROM generate_series(1, floor(random() * 4)::int);
            RETURN v;
        ELSE
            RETURN pg_temp.monster_json();
    END CASE;
END
$fn$;

-- Big or deep values (the 100,000-element ones are in the hand list).
CREATE FUNCTION pg_temp.monster_json() RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v jsonb;
BEGIN
    CASE floor(random() * 4)::int
        WHEN 0 THEN RETURN pg_temp.deep_json(1 + floor(random() * 2000)::int, '{"req_secs": 1}');
        WHEN 1 THEN SELECT jsonb_agg(g) INTO v FROM generate_series(1, 1000) g; RETURN v;
        WHEN 2 THEN SELECT jsonb_object_agg('k' || g, g) INTO v FROM generate_series(1, 1000) g; RETURN v;
        ELSE RETURN to_jsonb(repeat('ä', 20000));
    END CASE;
END
$fn$;

-- A non-negative finite amount (what docs/functions.md asks of seconds, instances,
-- delays and figures), mostly realistic, sometimes at the edges.
CREATE FUNCTION pg_temp.good_amount() RETURNS jsonb LANGUAGE sql VOLATILE AS $fn$
    SELECT CASE WHEN random() < 0.8
        THEN pg_temp.any_of(ARRAY['0', '1', '2', '4', '8', '600', '3600', '7200', '0.5', '86400'])::jsonb
        ELSE pg_temp.any_of(ARRAY['-0', '1e-400', '-1e-400', '1e-300', '1e308', '1.7976931348623157e308',
            '2147483648', '9223372036854775808', '0.000001', '123456789012345678901234567890.123'])::jsonb
    END
$fn$;

-- Anything but a non-negative finite amount.
CREATE FUNCTION pg_temp.bad_amount() RETURNS jsonb LANGUAGE sql VOLATILE AS $fn$
    SELECT CASE floor(random() * 3)::int
        WHEN 0 THEN pg_temp.any_of(ARRAY['-1', '-1e-300', '-3600', '1e309', '-1e309',
            '1' || repeat('0', 400), '-2147483649', '-9223372036854775809'])::jsonb
        WHEN 1 THEN pg_temp.any_of(ARRAY['null', 'true', 'false', '"3600"', '"NaN"', '"Infinity"', '[]',
            '[3600]', '{}', '{"req_secs": 1}'])::jsonb
        ELSE pg_temp.any_of(ARRAY[to_jsonb(pg_temp.nasty_text()), pg_temp.deep_json(100, '1'),
            to_jsonb('a' || repeat('é', 40))])
    END
$fn$;

-- Either of the two.
CREATE FUNCTION pg_temp.amount(good boolean) RETURNS jsonb LANGUAGE sql VOLATILE AS $fn$
    SELECT CASE WHEN good THEN pg_temp.good_amount() ELSE pg_temp.bad_amount() END
$fn$;

-- Any JSON value that is not of the given JSON type.
CREATE FUNCTION pg_temp.not_a(kind text) RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v jsonb;
BEGIN
    LOOP
        v := pg_temp.any_json(2);
        EXIT WHEN jsonb_typeof(v) <> kind;
    END LOOP;
    RETURN v;
END
$fn$;

-- request.resources; not good: with one bad entry.
CREATE FUNCTION pg_temp.gen_resources(good boolean) RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    r jsonb := '{}';
    name text;
    spec jsonb;
    bad int := CASE WHEN good THEN -1 ELSE floor(random() * 3)::int END;
BEGIN
    FOREACH name IN ARRAY ARRAY['cpu', 'nvidia', 'amd', 'intel'] LOOP
        CONTINUE WHEN random() < 0.4;
        spec := '{}';
        IF random() < 0.6 THEN spec := spec || jsonb_build_object('req_instances', pg_temp.good_amount()); END IF;
        IF random() < 0.6 THEN spec := spec || jsonb_build_object('req_secs', pg_temp.good_amount()); END IF;
        IF random() < 0.3 THEN spec := spec || jsonb_build_object('estimated_delay', pg_temp.good_amount()); END IF;
        IF random() < 0.1 THEN spec := spec || jsonb_build_object(pg_temp.nasty_text(), pg_temp.any_json(2)); END IF;
        r := r || jsonb_build_object(name, spec);
    END LOOP;
    CASE bad
        WHEN 0 THEN   -- an unknown resource
            r := r || jsonb_build_object(pg_temp.any_of(ARRAY['gpu', 'CPU', '', ' cpu', 'ｃｐｕ', 'cpu ',
                'nvidia2', pg_temp.nasty_text()]), '{"req_secs": 1}'::jsonb);
            IF r ? 'cpu' AND random() < 0.5 THEN r := r - 'cpu'; END IF;
        WHEN 1 THEN   -- an entry that is not an object
            r := r || jsonb_build_object(pg_temp.any_of(ARRAY['cpu', 'nvidia', 'amd', 'intel']), pg_temp.not_a('object'));
        WHEN 2 THEN   -- an amount that is not one
            r := r || jsonb_build_object(pg_temp.any_of(ARRAY['cpu', 'nvidia', 'amd', 'intel']),
                jsonb_build_object(pg_temp.any_of(ARRAY['req_secs', 'req_instances', 'estimated_delay']),
                                   pg_temp.bad_amount()));
        ELSE NULL;
    END CASE;
    RETURN r;
END
$fn$;

-- request.exclude; not good: not an array, or with one bad element.
CREATE FUNCTION pg_temp.gen_exclude(good boolean) RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v jsonb;
BEGIN
    SELECT coalesce(jsonb_agg(pg_temp.any_of(ARRAY['21', '22', '23', '24', '25', '11', '0', '999999',
               '9200000000000000000', '-0', '1e-400', '12.0']::jsonb[])), '[]') INTO v
      FROM generate_series(1, floor(random() * 4)::int);
    IF NOT good THEN
        IF random() < 0.25 THEN
            RETURN pg_temp.not_a('array');
        END IF;
        v := v || jsonb_build_array(pg_temp.any_of(ARRAY['-1', '1.5', '"x"', 'null', '1e19', '1e400', '[21]',
            '{}', 'true', '-1e-300', '9223372036854775807', '"21"']::jsonb[]));
    END IF;
    RETURN v;
END
$fn$;

-- request.app_versions, whose figures may be extreme but valid; not good:
-- with one bad key, entry or figure, or thousands of unknown versions.
CREATE FUNCTION pg_temp.gen_app_versions(good boolean) RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    r jsonb := '{}';
    id text;
    spec jsonb;
BEGIN
    FOREACH id IN ARRAY ARRAY['11', '12', '21', '22', '31', '32', '41'] LOOP
        CONTINUE WHEN random() < 0.6;
        spec := '{}';
        IF random() < 0.5 THEN
            spec := spec || jsonb_build_object('seconds_per_app_unit', CASE WHEN random() < 0.8
                THEN to_jsonb(round((1 + random() * 5000)::numeric, 3))
                ELSE pg_temp.any_of(ARRAY['0', '-0', '1e308', '1e-300', '5e-324', '1e-400'])::jsonb END);
        END IF;
        IF random() < 0.5 THEN
            spec := spec || jsonb_build_object('raw_flops_per_sec', CASE WHEN random() < 0.8
                THEN to_jsonb(round((1e8 + random() * 1e13)::numeric))
                ELSE pg_temp.any_of(ARRAY['0', '-0', '1e308', '1e-300', '5e-324', '1e-400'])::jsonb END);
        END IF;
        r := r || jsonb_build_object(id, spec);
    END LOOP;
    IF NOT good THEN
        CASE floor(random() * 4)::int
            WHEN 0 THEN   -- a key that is not an id of an app version
                r := r || jsonb_build_object(pg_temp.any_of(ARRAY['011', '+11', ' 11', '11 ', '0', '-11', 'abc', '',
                    '9223372036854775808', '99', '1e1', '١١', '11.0', '0x0B', '１１', pg_temp.nasty_text()]), '{}'::jsonb);
            WHEN 1 THEN   -- an entry that is not an object
                r := r || jsonb_build_object(pg_temp.any_of(ARRAY['11', '12', '21', '41']), pg_temp.not_a('object'));
            WHEN 2 THEN   -- a figure that is not an amount
                r := r || jsonb_build_object(pg_temp.any_of(ARRAY['11', '12', '21', '41']),
                    jsonb_build_object(pg_temp.any_of(ARRAY['seconds_per_app_unit', 'raw_flops_per_sec']),
                                       pg_temp.bad_amount()));
            ELSE          -- thousands of unknown versions
                SELECT r || jsonb_object_agg(g::text, '{}'::jsonb) INTO r FROM generate_series(1000, 2999) g;
        END CASE;
    END IF;
    RETURN r;
END
$fn$;

-- A request for request_work.  p_bad: chance that a member is malformed.
CREATE FUNCTION pg_temp.gen_request(p_bad float8) RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    r jsonb := '{}';
    b jsonb := '{}';
BEGIN
    IF random() < p_bad * 0.15 THEN
        RETURN pg_temp.not_a('object');
    END IF;
    IF random() < 0.8 THEN
        r := r || jsonb_build_object('resources', CASE WHEN random() < p_bad * 0.2
            THEN pg_temp.not_a('object') ELSE pg_temp.gen_resources(random() >= p_bad) END);
    END IF;
    IF random() < 0.2 THEN
        r := r || jsonb_build_object('work_req_seconds', pg_temp.amount(random() >= p_bad));
    END IF;
    IF random() < 0.25 THEN
        r := r || jsonb_build_object('no_gpus', CASE WHEN random() < p_bad THEN pg_temp.not_a('boolean')
                                                    ELSE to_jsonb(random() < 0.5) END);
    END IF;
    IF random() < 0.3 THEN
        r := r || jsonb_build_object('exclude', pg_temp.gen_exclude(random() >= p_bad));
    END IF;
    IF random() < 0.3 THEN
        r := r || jsonb_build_object('app_versions', CASE WHEN random() < p_bad * 0.2
            THEN pg_temp.not_a('object') ELSE pg_temp.gen_app_versions(random() >= p_bad) END);
    END IF;
    IF random() < 0.2 THEN
        IF random() < 0.5 THEN b := b || jsonb_build_object('min_secs', pg_temp.amount(random() >= p_bad)); END IF;
        IF random() < 0.5 THEN b := b || jsonb_build_object('max_secs', pg_temp.amount(random() >= p_bad)); END IF;
        r := r || jsonb_build_object('buffer', CASE WHEN random() < p_bad * 0.2 THEN pg_temp.not_a('object')
                                                   ELSE b END);
    END IF;
    IF random() < 0.15 THEN   -- members docs/functions.md does not know are ignored
        r := r || jsonb_build_object(pg_temp.nasty_text(), pg_temp.any_json(3));
    END IF;
    RETURN r;
END
$fn$;

-- ---------------------------------------------------------------------------
-- Arguments of the other functions.

-- An outcome of report_job; a bad one is never one of the three.
CREATE FUNCTION pg_temp.outcome(good boolean) RETURNS text LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    o text;
BEGIN
    IF good THEN
        RETURN pg_temp.any_of(ARRAY['success', 'success', 'success', 'error', 'aborted', 'lost']);
    END IF;
    LOOP
        o := pg_temp.any_of(ARRAY['SUCCESS', 'success ', ' success', '', E'success\n', 'timed_out', 'done',
                                  'requeued', 'succes', 'Success', 'abort', pg_temp.nasty_text(),
                                  repeat('x', 100000)]);
        EXIT WHEN o NOT IN ('success', 'error', 'aborted', 'lost');
    END LOOP;
    RETURN o;
END
$fn$;

-- exclude of assign_workload and explain_assignment; not good: NULLs or
-- more than one dimension.
CREATE FUNCTION pg_temp.exclude_ids(good boolean) RETURNS bigint[] LANGUAGE sql VOLATILE AS $fn$
    SELECT CASE WHEN good THEN pg_temp.any_of(ARRAY['{}', '{}', '{11}', '{12,13}', '{11,12,13,14,15,16}', NULL,
                         '{0,-1,9223372036854775807,-9223372036854775808}', '{11,11,11}', '[0:2]={11,12,13}',
                         '{424242}'])::bigint[]
                ELSE pg_temp.any_of(ARRAY['{NULL}', '{11,NULL}', '{{11,12},{13,14}}', '{{{11}}}',
                         '{{NULL}}', '{NULL,NULL,NULL}'])::bigint[] END
$fn$;

-- An array for percentile_disc: mostly 0 to 40 values over 40 orders of
-- magnitude, with infinities, duplicates, and now and then something bad.
CREATE FUNCTION pg_temp.gen_values(good boolean) RETURNS float8[] LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    n int := CASE WHEN random() < 0.03 THEN 5000 + floor(random() * 5000)::int ELSE floor(random() * 40)::int END;
    dup boolean := random() < 0.2;
    v float8[];
BEGIN
    SELECT coalesce(array_agg(CASE
               WHEN random() < 0.03 THEN 'Infinity'::float8
               WHEN random() < 0.03 THEN '-Infinity'::float8
               WHEN dup THEN floor(random() * 3)
               ELSE (random() * 2 - 1) * 10 ^ (floor(random() * 40) - 20) END), '{}')
      INTO v FROM generate_series(1, n);
    IF good THEN
        IF random() < 0.05 THEN
            v := '[-3:-1]={3,1,2}';
        END IF;
        RETURN v;
    END IF;
    CASE floor(random() * 4)::int
        WHEN 0 THEN RETURN v || ARRAY[NULL::float8];
        WHEN 1 THEN RETURN ARRAY['NaN'::float8] || v;
        WHEN 2 THEN RETURN '{{1,2},{3,4}}';
        ELSE RETURN '{{{NaN}}}';
    END CASE;
END
$fn$;

-- ---------------------------------------------------------------------------
-- The batches.

-- The must-fail batch: well-formed calls, each with a defect put in (one,
-- except in a malformed request, where the generator may put several).
-- Each branch sets the arguments its function takes; the rest stay NULL.
CREATE FUNCTION pg_temp.gen_must_fail(n int) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
    t timestamptz := '2026-01-01 00:30:00+00';   -- a fine now
    bad_t timestamptz;                            -- NULL or infinite
    bad_f float8;                                 -- not a positive finite number
    d int;                                        -- which defect
    fn text;
    note text;
    host bigint;
    job bigint;
    txt text;
    js jsonb;
    f1 float8;
    f2 float8;
    f3 float8;
    ts timestamptz;
    ids bigint[];
    vals float8[];
    flag boolean;
    pick text;
BEGIN
    FOR i IN 1 .. n LOOP
        fn := pg_temp.any_of(ARRAY['request_work', 'request_work', 'request_work', 'report_job', 'report_job',
            'assign_workload', 'explain_assignment', 'heartbeat', 'release_assignment', 'estimate_job',
            'host_queue', 'validate_job', 'percentile_disc', 'run_transitioner', 'expire_assignments']);
        d := floor(random() * 10)::int;
        bad_t := pg_temp.any_of(ARRAY[NULL, 'infinity', '-infinity']::timestamptz[]);
        bad_f := pg_temp.any_of(ARRAY['0', '-0', '-1', '-1e-300', '-1e9', 'NaN', 'Infinity', '-Infinity']::float8[]);
        host := pg_temp.some_host();
        job := NULL; txt := NULL; js := NULL; f1 := NULL; f2 := NULL; f3 := NULL;
        ts := t; ids := NULL; vals := NULL; flag := NULL; pick := NULL;
        CASE fn
        WHEN 'request_work' THEN
            js := pg_temp.gen_request(0);
            CASE d
                WHEN 0 THEN note := 'NULL host'; host := NULL;
                WHEN 1 THEN note := 'unknown host'; host := pg_temp.unknown_id();
                WHEN 2 THEN note := 'NULL request'; js := NULL;
                WHEN 3 THEN note := 'NULL or infinite now'; ts := bad_t;
                ELSE
                    -- draw until the oracle agrees the request is malformed
                    -- (twenty misses in a row would leave a NULL request, also a defect)
                    note := 'malformed request';
                    js := (SELECT r FROM (SELECT pg_temp.gen_request(1) AS r FROM generate_series(1, 20)) s
                            WHERE pg_temp.request_defect(r) IS NOT NULL LIMIT 1);
            END CASE;
        WHEN 'report_job' THEN
            -- by default the report of a job in progress by its host, which would succeed
            txt := pg_temp.outcome(true); f1 := 1; pick := 'mine';
            CASE d
                WHEN 0 THEN note := 'NULL host'; host := NULL; job := 1; pick := NULL;
                WHEN 1 THEN note := 'NULL or unknown outcome';
                    txt := CASE WHEN random() < 0.2 THEN NULL ELSE pg_temp.outcome(false) END;
                WHEN 2 THEN note := 'bad app_units'; f1 := CASE WHEN random() < 0.2 THEN NULL ELSE bad_f END;
                WHEN 3 THEN note := 'bad elapsed_secs or FLOPS';
                    IF random() < 0.5 THEN f2 := bad_f; ELSE f2 := 100; f3 := bad_f; END IF;
                WHEN 4 THEN note := 'NULL or infinite now'; ts := bad_t;
                WHEN 5 THEN note := 'unknown job'; job := pg_temp.unknown_id(); pick := NULL;
                WHEN 6 THEN note := 'unknown host'; host := pg_temp.unknown_id(); pick := 'any';
                WHEN 7 THEN note := 'another host''s job'; pick := 'other';
                WHEN 8 THEN note := 'a job not in progress'; pick := 'unsent';
                ELSE note := 'NULL job'; pick := NULL;
            END CASE;
        WHEN 'assign_workload', 'explain_assignment' THEN
            ids := '{}';
            CASE
                WHEN d < 2 THEN note := 'NULL host'; host := NULL;
                WHEN d < 4 THEN note := 'unknown host'; host := pg_temp.unknown_id(); ids := pg_temp.exclude_ids(true);
                WHEN d < 6 THEN note := 'NULL or infinite now'; ts := bad_t;
                ELSE note := 'bad exclude'; ids := pg_temp.exclude_ids(false);
            END CASE;
        WHEN 'heartbeat' THEN
            CASE
                WHEN d < 3 THEN note := 'NULL host'; host := NULL;
                WHEN d < 6 THEN note := 'unknown host'; host := pg_temp.unknown_id();
                ELSE note := 'NULL or infinite now'; ts := bad_t;
            END CASE;
        WHEN 'release_assignment' THEN
            note := 'NULL or unknown host';
            host := CASE WHEN d < 3 THEN NULL ELSE pg_temp.unknown_id() END;
        WHEN 'estimate_job' THEN
            job := pg_temp.unknown_id();
            CASE
                WHEN d < 3 THEN note := 'NULL host or job';
                    IF d = 0 THEN host := NULL; job := 1; ELSE job := NULL; END IF;
                WHEN d < 6 THEN note := 'unknown host'; host := pg_temp.unknown_id(); pick := 'any';
                ELSE note := 'unknown job';
            END CASE;
        WHEN 'host_queue' THEN
            f1 := 3600; f2 := 86400;
            bad_f := CASE WHEN bad_f = 0 THEN -1 ELSE bad_f END;   -- 0 is a fine buffer length
            CASE
                WHEN d < 2 THEN note := 'NULL or unknown host';
                    host := CASE WHEN d = 0 THEN NULL ELSE pg_temp.unknown_id() END;
                WHEN d < 4 THEN note := 'NULL or infinite now'; ts := bad_t;
                WHEN d < 7 THEN note := 'bad min_buf_secs'; f1 := CASE WHEN random() < 0.2 THEN NULL ELSE bad_f END;
                ELSE note := 'bad max_buf_secs'; f2 := CASE WHEN random() < 0.2 THEN NULL ELSE bad_f END;
            END CASE;
        WHEN 'validate_job' THEN
            flag := random() < 0.5;
            CASE
                WHEN d < 3 THEN note := 'NULL job or verdict';
                    IF d = 0 THEN job := NULL; ELSE job := 1; flag := NULL; END IF;
                WHEN d < 5 THEN note := 'unknown job'; job := pg_temp.unknown_id();
                ELSE note := 'a job that is not done'; pick := pg_temp.any_of(ARRAY['unsent', 'any']);
            END CASE;
        WHEN 'percentile_disc' THEN
            IF d < 4 THEN
                note := 'bad fraction';
                vals := pg_temp.gen_values(true) || ARRAY[1::float8];
                f1 := pg_temp.any_of(ARRAY['NaN', 'Infinity', '-Infinity', '-1e-300', '1.0000000000000002', '2',
                                           '-1']::float8[]);
            ELSE
                note := 'bad values'; vals := pg_temp.gen_values(false); f1 := random();
            END IF;
        ELSE
            note := 'NULL or infinite now'; ts := bad_t;
        END CASE;
        PERFORM pg_temp.add('must_fail', fn, note, host, job, txt, js, f1, f2, f3, ts, ids, vals, flag, i, pick);
    END LOOP;
END
$fn$;

-- The mixed batch: mostly well-formed calls on a virtual clock, each
-- argument with a small chance of a defect or an edge value.
CREATE FUNCTION pg_temp.gen_mixed(n int) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
    fn text;
    t timestamptz;
    host bigint;
BEGIN
    FOR i IN 1 .. n LOOP
        fn := pg_temp.any_of(ARRAY['request_work', 'request_work', 'request_work', 'request_work', 'request_work',
            'report_job', 'report_job', 'report_job', 'report_job', 'assign_workload', 'assign_workload',
            'explain_assignment', 'heartbeat', 'release_assignment', 'estimate_job', 'estimate_job',
            'host_queue', 'host_queue', 'validate_job', 'percentile_disc', 'percentile_disc', 'run_transitioner',
            'expire_assignments']);
        t := CASE WHEN random() < 0.05 THEN pg_temp.edge_time()
                  ELSE '2026-01-01 01:00:00+00'::timestamptz + i * interval '20 seconds' END;
        host := CASE WHEN random() < 0.9 THEN pg_temp.some_host()
                     WHEN random() < 0.5 THEN NULL ELSE pg_temp.unknown_id() END;
        CASE fn
        WHEN 'request_work' THEN
            PERFORM pg_temp.add('mixed', fn, NULL, host, js => CASE WHEN random() < 0.02 THEN NULL
                                                                   ELSE pg_temp.gen_request(0.15) END,
                                ts => t, seed => pg_temp.some_seed());
        WHEN 'report_job' THEN
            PERFORM pg_temp.add('mixed', fn, NULL, host, pg_temp.unknown_id(), pg_temp.outcome(random() < 0.9),
                f1 => CASE WHEN random() < 0.9 THEN 0.5 + random() ELSE pg_temp.edge_float() END,
                f2 => CASE WHEN random() < 0.2 THEN NULL WHEN random() < 0.9 THEN 1 + random() * 10000
                           ELSE pg_temp.edge_float() END,
                f3 => CASE WHEN random() < 0.5 THEN NULL WHEN random() < 0.9 THEN 1e9 + random() * 1e13
                           ELSE pg_temp.edge_float() END,
                ts => t,
                pick => pg_temp.any_of(ARRAY['mine', 'mine', 'mine', 'mine', 'mine', 'mine', 'mine', 'repeat',
                                             'repeat_changed', 'other', 'done', 'unsent', 'late', NULL]));
        WHEN 'assign_workload', 'explain_assignment' THEN
            PERFORM pg_temp.add('mixed', fn, NULL, host, ts => t, ids => pg_temp.exclude_ids(random() < 0.9),
                                seed => pg_temp.some_seed());
        WHEN 'heartbeat' THEN
            PERFORM pg_temp.add('mixed', fn, NULL, host, ts => t);
        WHEN 'release_assignment' THEN
            PERFORM pg_temp.add('mixed', fn, NULL, host);
        WHEN 'estimate_job' THEN
            PERFORM pg_temp.add('mixed', fn, NULL, host, pg_temp.unknown_id(),
                                pick => CASE WHEN random() < 0.9 THEN 'any' END);
        WHEN 'host_queue' THEN
            PERFORM pg_temp.add('mixed', fn, NULL, host,
                f1 => CASE WHEN random() < 0.9 THEN floor(random() * 7200) ELSE pg_temp.edge_float() END,
                f2 => CASE WHEN random() < 0.9 THEN floor(random() * 172800) ELSE pg_temp.edge_float() END,
                ts => t);
        WHEN 'validate_job' THEN
            PERFORM pg_temp.add('mixed', fn, NULL, job => pg_temp.unknown_id(),
                flag => CASE WHEN random() < 0.95 THEN random() < 0.7 END,
                pick => pg_temp.any_of(ARRAY['done', 'done', 'done', 'any', 'any', NULL]));
        WHEN 'percentile_disc' THEN
            PERFORM pg_temp.add('mixed', fn, NULL,
                vals => CASE WHEN random() < 0.02 THEN NULL ELSE pg_temp.gen_values(random() < 0.85) END,
                f1 => CASE WHEN random() < 0.8 THEN random() ELSE pg_temp.any_of(ARRAY[NULL, '0', '1', '-0', '0.05',
                    '0.5', '1e-300', '0.9999999999999999', '-1e-300', '1.0000000000000002', 'NaN', 'Infinity']::float8[]) END);
        ELSE
            -- the transitioner sometimes runs days ahead: jobs time out
            PERFORM pg_temp.add('mixed', fn, NULL, ts => CASE
                WHEN random() < 0.1 THEN pg_temp.any_of(ARRAY[NULL, 'infinity', '-infinity']::timestamptz[])
                WHEN t BETWEEN '2000-01-01' AND '3000-01-01' AND random() < 0.3
                THEN t + pg_temp.any_of(ARRAY['1 hour', '1 day', '4 days']::interval[]) ELSE t END);
        END CASE;
    END LOOP;
END
$fn$;
