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
-- Until the end-of-script re-owning of every SECURITY DEFINER function:
-- never a superuser's.
ALTER FUNCTION allot.register_host(bigint, text, text, text[], int, double precision, jsonb) OWNER TO allot_admin;
ALTER FUNCTION allot.host_credit(bigint[]) OWNER TO allot_admin;

/* ---------------------------------------------------------------------------
 * Status views and the allot_monitor role.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Catalog comments.
 * ------------------------------------------------------------------------- */
