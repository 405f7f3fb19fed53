-- bench/dispatch.sh baseline: a one-row UPDATE transaction on a random host.
\set id random(1, :nhosts)
UPDATE allot.host SET last_seen = now() WHERE id = :id;
