-- bench/months.sh: the end of a simulated day (psql variables day and
-- day0): SELECT allot.purge_finished(now) at the day's last minute, each
-- call in its own transaction, until a call purges fewer than
-- allot.retention_batch jobs (at once without retention).  It is the last
-- step of run_transitioner, called on its own so that what it costs is all
-- that is measured (the other steps have nothing to do on this history).
-- One row per call goes to public.months_calls, with its time including its
-- COMMIT and what it purged.
LOAD 'allot';
SET bench.day = :'day';
SET bench.day0 = :'day0';
DO $$
DECLARE
    day   constant int := current_setting('bench.day')::int;
    now_  constant timestamptz := current_setting('bench.day0')::timestamptz
                                  + day * interval '1 day' - interval '1 minute';
    batch constant int := current_setting('allot.retention_batch')::int;
    n     int := 0;
    r     jsonb;
    t0    timestamptz;
BEGIN
    LOOP
        t0 := clock_timestamp();
        r := allot.purge_finished(now_);
        COMMIT;
        n := n + 1;
        INSERT INTO public.months_calls (day, call, ms, purged)
        VALUES (day, n, 1000 * extract(epoch FROM clock_timestamp() - t0), (r ->> 'purged')::bigint);
        COMMIT;
        EXIT WHEN (r ->> 'purged')::bigint < batch;
        IF n >= 1000 THEN
            RAISE EXCEPTION 'day %: still purging after % calls', day, n;
        END IF;
    END LOOP;
END
$$;
