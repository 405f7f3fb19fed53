-- bench/transitioner.sh: allot.percentile_disc (an O(N) selection in C)
-- against PostgreSQL's percentile_disc ordered-set aggregate (a sort) over the
-- same arrays, in the same session.  Two sets of random arrays:
--   perc_arrays_100:  1,000 arrays of 100 values (allot.flops_sample_size)
--   perc_arrays_10k:    100 arrays of 10,000 values
-- Each query runs 5 times per set, the methods alternating; the median time
-- counts.  A third query, sum(a[1]), reads (and detoasts) the same arrays
-- without a percentile: its time is what both share, shown to give the
-- speed-up of the percentile itself too.  Both must return the same sum (percentile_disc returns an
-- element of the array, and the rows are summed in the same order).
-- Results go to the table public.perc_times for the caller.
\set ON_ERROR_STOP on
SELECT setseed(0.5);
CREATE TABLE public.perc_arrays_100 AS
SELECT i, ARRAY(SELECT 1e9 * random() FROM generate_series(1, 100) WHERE i > 0) AS a
  FROM generate_series(1, 1000) AS i;
CREATE TABLE public.perc_arrays_10k AS
SELECT i, ARRAY(SELECT 1e9 * random() FROM generate_series(1, 10000) WHERE i > 0) AS a
  FROM generate_series(1, 100) AS i;
ANALYZE perc_arrays_100, perc_arrays_10k;

CREATE TABLE public.perc_times (arrays text, method text, rep int, ms double precision, total double precision);

DO $$
DECLARE
    t      text;
    m      text;
    q      text;
    t0     timestamptz;
    total  double precision;
BEGIN
    FOREACH t IN ARRAY ARRAY['perc_arrays_100', 'perc_arrays_10k'] LOOP
        -- One untimed pass of each: the arrays are read (and detoasted) once
        -- before timing, so neither method pays for a cold read.
        EXECUTE format('SELECT sum(allot.percentile_disc(a, 0.05)) FROM %I', t) INTO total;
        EXECUTE format('SELECT sum((SELECT percentile_disc(0.05) WITHIN GROUP (ORDER BY x) FROM unnest(a) AS x)) FROM %I', t) INTO total;
        FOR rep IN 1 .. 5 LOOP
            FOREACH m IN ARRAY ARRAY['allot.percentile_disc', 'percentile_disc WITHIN GROUP', 'scan only'] LOOP
                q := CASE m
                    WHEN 'allot.percentile_disc' THEN
                        format('SELECT sum(allot.percentile_disc(a, 0.05)) FROM %I', t)
                    WHEN 'scan only' THEN
                        format('SELECT sum(a[1]) FROM %I', t)
                    ELSE
                        format('SELECT sum((SELECT percentile_disc(0.05) WITHIN GROUP (ORDER BY x) FROM unnest(a) AS x)) FROM %I', t)
                    END;
                t0 := clock_timestamp();
                EXECUTE q INTO total;
                INSERT INTO perc_times VALUES (t, m, rep, 1000 * extract(epoch FROM clock_timestamp() - t0), total);
            END LOOP;
        END LOOP;
    END LOOP;
END
$$;
