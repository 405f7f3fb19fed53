-- bench/dispatch.sh: one request of a random host for 8 CPU instances and
-- 1 NVIDIA instance; returns how many jobs it was sent.
\set id random(1, :nhosts)
SELECT jsonb_array_length(allot.request_work(:id, '{"resources": {"cpu": {"req_instances": 8}, "nvidia": {"req_instances": 1}}}') -> 'jobs');
