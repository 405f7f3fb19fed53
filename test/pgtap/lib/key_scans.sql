-- Shared by the pgTAP files that check which way assign_workload read
-- (\ir lib/key_scans.sql): pg_temp.key_scans(host, at[, index]), the scans
-- of an index (allot.assignment_pkey by default, named as text so that it
-- is looked up at each call, after an extension reinstalled) that one
-- request of the host at that time makes, counted by PostgreSQL in this
-- transaction.
CREATE FUNCTION pg_temp.key_scans(host bigint, at timestamptz,
                                  key text DEFAULT 'allot.assignment_pkey') RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    before bigint := pg_stat_get_xact_numscans(key::regclass);
BEGIN
    PERFORM allot.assign_workload(host, at);
    RETURN pg_stat_get_xact_numscans(key::regclass) - before;
END
$$;
