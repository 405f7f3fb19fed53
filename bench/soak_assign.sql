-- bench/soak.sh: an OpenBench host asks for a workload (any of them,
-- including the quiet ones that never heartbeat: their assignments expire
-- and the transitioner sweeps them).  Two clients may pick the same host at
-- once; allot serialises one host's requests.
\set h random(:ob_first, :ob_last)
SELECT workload_id FROM allot.assign_workload(:h);
