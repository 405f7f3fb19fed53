-- Shared set-up for the pg_regress suite: the extension and two helpers.
CREATE EXTENSION allot;

-- Empty every table an operator or allot writes (the TRUNCATE triggers
-- empty the usage tables); resource types stay.
CREATE FUNCTION reset_farm() RETURNS void LANGUAGE sql AS $$
    TRUNCATE allot.assignment, allot.job_report, allot.job, allot.host_app_version,
             allot.host_resource, allot.host_coproc, allot.host, allot.workload_credit,
             allot.workload,
             allot.app_version, allot.app, allot.engine RESTART IDENTITY;
$$;

-- Put a host on a workload as a past assign_workload would have, seen at
-- `seen` (virtual time), not focus-assigned.
CREATE FUNCTION put(p_host bigint, p_workload bigint,
                    p_seen timestamptz DEFAULT '2026-01-01 00:00:00+00')
RETURNS void LANGUAGE sql AS $$
    INSERT INTO allot.assignment (host_id, workload_id, threads, focus, assigned_at, seen_at)
    SELECT h.id, p_workload, h.threads, false, p_seen, p_seen FROM allot.host h WHERE h.id = p_host;
$$;

-- explain_assignment, compactly.
CREATE FUNCTION odds(p_host bigint, p_exclude bigint[] DEFAULT '{}')
RETURNS TABLE (w bigint, cand boolean, reason text, threads float8, eff_tp float8,
               ratio float8, fair float8, p float8)
LANGUAGE sql AS $$
    SELECT workload_id, candidate, reason, threads, effective_throughput, ratio,
           fair_ratio, round(probability::numeric, 6)::float8
      FROM allot.explain_assignment(p_host, '2026-01-01 00:00:00+00', p_exclude)
     ORDER BY workload_id;
$$;

SELECT extname, extversion FROM pg_extension WHERE extname = 'allot';
