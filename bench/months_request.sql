-- bench/months.sh: one request of a random host for 8 CPU instances and
-- 1 NVIDIA instance at the simulated day's noon (pgbench -D now=...);
-- returns how many jobs it was sent.  The jobs it sends are reported after
-- the run, untimed, at the same instant (bench/months.sh), so that each
-- request run finds the farm as a day of the months left it.
\set id random(1, :nhosts)
SELECT jsonb_array_length(allot.request_work(:id, '{"resources": {"cpu": {"req_instances": 8}, "nvidia": {"req_instances": 1}}}', :now) -> 'jobs');
