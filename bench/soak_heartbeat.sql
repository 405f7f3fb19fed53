-- bench/soak.sh: an OpenBench host that is still running reports in.  Only
-- hosts ob_first .. ob_live_last heartbeat; the rest go quiet after each
-- assignment.
\set h random(:ob_first, :ob_live_last)
SELECT allot.heartbeat(:h);
