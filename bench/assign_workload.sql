-- bench/assign.sh: one assign_workload request from a random host.
\set id random(1, :nhosts)
SELECT * FROM allot.assign_workload(:id);
