-- bench/transitioner.sh: call allot.run_transitioner() until it reads no
-- more reports, each call in its own transaction (as pg_cron runs it), and
-- time each call including its COMMIT.  One row per call goes to the table
-- public.transitioner_calls, which the caller has created (written after the
-- call's COMMIT, so it rides along with the next call's); a NOTICE every 10
-- calls shows progress.  psql variable max_calls stops a runaway loop (psql
-- does not substitute inside the dollar quotes, hence the setting).
SET bench.max_calls = :'max_calls';
DO $$
DECLARE
    max_calls constant int := current_setting('bench.max_calls')::int;
    n      int := 0;
    r      jsonb;
    t0     timestamptz;
    ms     double precision;
    read   bigint := 0;
    t_all  timestamptz := clock_timestamp();
BEGIN
    LOOP
        t0 := clock_timestamp();
        r := allot.run_transitioner();
        COMMIT;
        ms := 1000 * extract(epoch FROM clock_timestamp() - t0);
        n := n + 1;
        read := read + (r ->> 'reports_read')::bigint;
        INSERT INTO transitioner_calls (call, ms, result) VALUES (n, ms, r);
        IF n % 10 = 0 THEN
            RAISE NOTICE 'call %: % ms, % reports read so far (% s)', n, round(ms::numeric, 1), read,
                round(extract(epoch FROM clock_timestamp() - t_all)::numeric, 1);
        END IF;
        EXIT WHEN (r ->> 'reports_read')::bigint = 0;
        IF n >= max_calls THEN
            RAISE EXCEPTION 'still % reports after % calls', r ->> 'reports_read', n;
        END IF;
    END LOOP;
    COMMIT;
END
$$;
