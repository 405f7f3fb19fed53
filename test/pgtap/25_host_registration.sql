-- Hosts that register themselves (the BOINC front end): register_host and
-- host_credit.  A new host gets an id and exactly the figures it stated; a
-- later call updates them (and its coprocessors), and writes nothing when
-- nothing changed; an operator's host is never touched.  Every hostile
-- value is an ERROR with its own SQLSTATE and a message naming it, and
-- leaves every allot table as it was.  host_credit sums the credit the
-- transitioner granted, and decays it by a week's half-life.
--
-- Run in a fresh database with pgtap and allot created, as a superuser.
BEGIN;
SELECT plan(130);

CREATE ROLE allot_test_reg_web LOGIN IN ROLE allot_web;

-- ---------------------------------------------------------------------------
-- Registration.

SELECT allot.register_host(NULL, 'box-1', 'x86_64-pc-linux-gnu', '{sse2,avx2,sse2,fpu}', 2, 1e9,
                           '{"nvidia": {"count": 2, "peak_flops": 1.2e13}}') AS h1 \gset
SELECT is((SELECT name || '|' || os || '|' || cpu_flags::text || '|' || threads || '|' || cpu_flops
             FROM allot.host WHERE id = :h1),
          'box-1|x86_64-pc-linux-gnu|{avx2,fpu,sse2}|2|1000000000',
          'a new host is stored with what it stated, its CPU flags sorted without duplicates');
SELECT is((SELECT registered_at FROM allot.host WHERE id = :h1), now(),
          'and marked as registered now');
SELECT is((SELECT string_agg(resource || ' ' || count || ' ' || peak_flops, ', ') FROM allot.host_coproc
            WHERE host_id = :h1),
          'nvidia 2 12000000000000', 'with its coprocessors');
SELECT is((SELECT sockets || '|' || coalesce(physical_cores::text, '-') || '|' || noisy
             FROM allot.host WHERE id = :h1),
          '1|-|false', 'what it did not state keeps the column defaults');
SELECT allot.register_host(NULL, NULL, NULL, '{}', 1, NULL) AS h2 \gset
SELECT isnt(:h2::bigint, :h1::bigint, 'a second registration is a second host');
SELECT is((SELECT (name IS NULL AND os IS NULL AND cpu_flops IS NULL)::text || cpu_flags::text
             FROM allot.host WHERE id = :h2),
          'true{}', 'a host that states nothing but its threads is registered with NULLs');
SELECT is((SELECT count(*)::int FROM allot.host_coproc WHERE host_id = :h2), 0,
          'coprocs defaults to none');

-- Ids the operator inserted by hand, just ahead of the identity sequence,
-- are stepped over.
INSERT INTO allot.host (id, threads) SELECT :h2 + g, 1 FROM generate_series(1, 3) g;
SELECT is(allot.register_host(NULL, 'after', NULL, '{}', 1, NULL), :h2::bigint + 4,
          'a registration steps over ids the operator took by hand');
DELETE FROM allot.host WHERE id BETWEEN :h2 + 1 AND :h2 + 4;

-- An update: new figures, a coprocessor type gone, another new.
SELECT is(allot.register_host(:h1, 'box-1b', 'x86_64-pc-linux-gnu', '{avx512f}', 8, 2e9,
                              '{"amd": {"count": 1, "peak_flops": 5e12}}'),
          :h1::bigint, 'register_host with the host''s id returns that id');
SELECT is((SELECT name || '|' || cpu_flags::text || '|' || threads || '|' || cpu_flops
             FROM allot.host WHERE id = :h1),
          'box-1b|{avx512f}|8|2000000000', 'the host''s figures are updated');
SELECT is((SELECT string_agg(resource || ' ' || count || ' ' || peak_flops, ', ') FROM allot.host_coproc
            WHERE host_id = :h1),
          'amd 1 5000000000000', 'its coprocessors are replaced by the stated ones');
SELECT allot.register_host(:h1, 'box-1b', 'x86_64-pc-linux-gnu', '{avx512f}', 8, 2e9,
                           '{"amd": {"count": 3, "peak_flops": 5e12}}');
SELECT is((SELECT count::text FROM allot.host_coproc WHERE host_id = :h1 AND resource = 'amd'), '3',
          'a coprocessor count changes in place');

-- An unchanged update writes no row: the rows keep their physical place.
SELECT (SELECT ctid::text FROM allot.host WHERE id = :h1) AS host_ctid,
       (SELECT ctid::text FROM allot.host_coproc WHERE host_id = :h1) AS coproc_ctid \gset
SELECT allot.register_host(:h1, 'box-1b', 'x86_64-pc-linux-gnu', '{avx512f,avx512f}', 8, 2e9,
                           '{"amd": {"count": 3, "peak_flops": 5e12}}');
SELECT is((SELECT ctid::text FROM allot.host WHERE id = :h1) || ' ' ||
          (SELECT ctid::text FROM allot.host_coproc WHERE host_id = :h1),
          :'host_ctid' || ' ' || :'coproc_ctid',
          'the same figures again write neither the host nor its coprocessor row');

-- Fewer threads than the operator's sockets or physical cores: those follow.
UPDATE allot.host SET sockets = 4, physical_cores = 6 WHERE id = :h1;
SELECT allot.register_host(:h1, 'box-1b', 'x86_64-pc-linux-gnu', '{avx512f}', 2, 2e9,
                           '{"amd": {"count": 3, "peak_flops": 5e12}}');
SELECT is((SELECT threads || '|' || sockets || '|' || coalesce(physical_cores::text, '-')
             FROM allot.host WHERE id = :h1),
          '2|2|-', 'a host that now states 2 threads gets at most 2 sockets, and unknown physical cores');

-- The registered host gets work on its stated figures.
INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'crunch', 4.32e11);
INSERT INTO allot.app_version (id, app_id, platform, resource, ncpus) VALUES
    (11, 1, 'x86_64-pc-linux-gnu', 'cpu', 1);
INSERT INTO allot.workload (id, name, engine, app_id, delay_bound) VALUES (1, 'crunch', 'crunch', 1, '1 day');
INSERT INTO allot.job (id, workload_id) SELECT g, 1 FROM generate_series(101, 110) g;
-- Its threads count as stated; its 2e9 FLOPS, a claim it has not proven,
-- for at most allot.unproven_cpu_flops (1e9) while the farm has no median
-- (issue 30: "a registration that has proven nothing counts as the
-- fleet's median at most, and before any median exists a conservative
-- default").  Once the operator vouches for its owner, as stated.
SELECT is((SELECT string_agg((j ->> 'job_id') || ' ' || (j ->> 'peak_flops_per_sec'), ', ')
             FROM jsonb_array_elements(allot.request_work(:h1, '{"resources": {"cpu": {"req_instances": 2}}}')
                                       -> 'jobs') j),
          '101 1000000000, 102 1000000000',
          'request_work serves a registered host by its stated threads, its unproven CPU FLOPS within allot.unproven_cpu_flops');
INSERT INTO allot.owner (key, trusted) VALUES ('the operator', true);
UPDATE allot.host SET owner_id = (SELECT id FROM allot.owner WHERE key = 'the operator') WHERE id = :h1;
SELECT is((SELECT string_agg((j ->> 'job_id') || ' ' || (j ->> 'peak_flops_per_sec'), ', ')
             FROM jsonb_array_elements(allot.request_work(:h1, '{"resources": {"cpu": {"req_instances": 2}}}')
                                       -> 'jobs') j),
          '103 2000000000, 104 2000000000',
          'a host of an owner the operator trusts counts its CPU FLOPS as stated');
SELECT is(allot.request_work(:h2, '{"resources": {"cpu": {"req_instances": 1}}}') #>> '{resources,cpu,status}',
          'unsupported', 'a host whose os is unknown cannot run a version tied to a platform');

-- Every row of every allot table, and unchanged(description).
\ir lib/state.sql

CREATE FUNCTION pg_temp.rejects(sql text, code char(5), message text, description text)
    RETURNS SETOF text LANGUAGE plpgsql AS $f$
BEGIN
    RETURN NEXT throws_ok(sql, code, message, description);
    RETURN NEXT pg_temp.unchanged(description || ': nothing changed');
END
$f$;

-- A call with every argument good but one; $1 is replaced by the bad one.
CREATE FUNCTION pg_temp.reg(host text, name_ text, os text, flags text, threads text, flops text,
                            coprocs text) RETURNS text LANGUAGE sql AS $f$
    SELECT format('SELECT allot.register_host(%s, %s, %s, %s, %s, %s, %s)',
                  host, name_, os, flags, threads, flops, coprocs)
$f$;
CREATE FUNCTION pg_temp.bad_threads(v text) RETURNS text LANGUAGE sql AS $f$
    SELECT pg_temp.reg('NULL', '''x''', '''Linux''', '''{}''', v, '1e9', '''{}''')
$f$;
CREATE FUNCTION pg_temp.bad_flops(v text) RETURNS text LANGUAGE sql AS $f$
    SELECT pg_temp.reg('NULL', '''x''', '''Linux''', '''{}''', '2', v, '''{}''')
$f$;
CREATE FUNCTION pg_temp.bad_name(v text) RETURNS text LANGUAGE sql AS $f$
    SELECT pg_temp.reg('NULL', v, '''Linux''', '''{}''', '2', '1e9', '''{}''')
$f$;
CREATE FUNCTION pg_temp.bad_os(v text) RETURNS text LANGUAGE sql AS $f$
    SELECT pg_temp.reg('NULL', '''x''', v, '''{}''', '2', '1e9', '''{}''')
$f$;
CREATE FUNCTION pg_temp.bad_flags(v text) RETURNS text LANGUAGE sql AS $f$
    SELECT pg_temp.reg('NULL', '''x''', '''Linux''', v, '2', '1e9', '''{}''')
$f$;
SELECT set_config('allot_test.h1', :'h1', false);
CREATE FUNCTION pg_temp.bad_coprocs(v text) RETURNS text LANGUAGE sql AS $f$
    SELECT pg_temp.reg(current_setting('allot_test.h1'), '''x''', '''Linux''', '''{}''', '2', '1e9',
                       quote_literal(v))
$f$;

-- threads
SELECT pg_temp.rejects(pg_temp.bad_threads('NULL'), '22004', 'threads must not be NULL', 'threads NULL');
SELECT pg_temp.rejects(pg_temp.bad_threads('0'), '22023', 'threads must be between 1 and 4096, not 0', 'threads 0');
SELECT pg_temp.rejects(pg_temp.bad_threads('-2147483648'), '22023',
                       'threads must be between 1 and 4096, not -2147483648', 'threads of the smallest int');
SELECT pg_temp.rejects(pg_temp.bad_threads('4097'), '22023', 'threads must be between 1 and 4096, not 4097',
                       'threads 4097');

-- cpu_flops
SELECT pg_temp.rejects(pg_temp.bad_flops('0'), '22023', 'cpu_flops must be between 1 and 1e+18, not 0', 'cpu_flops 0');
SELECT pg_temp.rejects(pg_temp.bad_flops('-1e9'), '22023', 'cpu_flops must be between 1 and 1e+18, not -1000000000',
                       'negative cpu_flops');
SELECT pg_temp.rejects(pg_temp.bad_flops('''NaN'''), '22023', 'cpu_flops must be between 1 and 1e+18, not NaN',
                       'cpu_flops NaN');
SELECT pg_temp.rejects(pg_temp.bad_flops('''Infinity'''), '22023',
                       'cpu_flops must be between 1 and 1e+18, not Infinity', 'cpu_flops infinite');
SELECT pg_temp.rejects(pg_temp.bad_flops('1.5e18'), '22023', 'cpu_flops must be between 1 and 1e+18, not 1.5e+18',
                       'cpu_flops above 1e18');

-- name
SELECT pg_temp.rejects(pg_temp.bad_name(quote_literal(repeat('a', 256))), '22023',
                       'name must be at most 255 printable characters, not "' || repeat('a', 40) || '..."',
                       'a name of 256 characters');
SELECT pg_temp.rejects(pg_temp.bad_name(quote_literal(E'box\n<scheduler_reply>')), '22023',
                       'name must be at most 255 printable characters, not "box\n<scheduler_reply>"',
                       'a name with a newline');
SELECT pg_temp.rejects(pg_temp.bad_name(quote_literal(E'box\x1b[2J')), '22023',
                       'name must be at most 255 printable characters, not "box\u001b[2J"',
                       'a name with a terminal escape');

-- os
SELECT pg_temp.rejects(pg_temp.bad_os('''Linux; DROP TABLE allot.job'''), '22023',
                       'os must be at most 64 letters, digits, spaces and "_.+-", not "Linux; DROP TABLE allot.job"',
                       'an os with a semicolon');
SELECT pg_temp.rejects(pg_temp.bad_os('''../../etc/passwd'''), '22023',
                       'os must be at most 64 letters, digits, spaces and "_.+-", not "../../etc/passwd"',
                       'an os that is a path');
SELECT pg_temp.rejects(pg_temp.bad_os(''''''), '22023',
                       'os must be at most 64 letters, digits, spaces and "_.+-", not ""', 'an empty os');
SELECT pg_temp.rejects(pg_temp.bad_os(''' Linux'''), '22023',
                       'os must be at most 64 letters, digits, spaces and "_.+-", not " Linux"',
                       'an os starting with a space');
SELECT pg_temp.rejects(pg_temp.bad_os(quote_literal(repeat('x', 65))), '22023',
                       'os must be at most 64 letters, digits, spaces and "_.+-", not "' || repeat('x', 40) || '..."',
                       'an os of 65 characters');
SELECT pg_temp.rejects(pg_temp.bad_os('''Lïnux'''), '22023',
                       'os must be at most 64 letters, digits, spaces and "_.+-", not "Lïnux"',
                       'an os with a non-ASCII letter');

-- cpu_flags
SELECT pg_temp.rejects(pg_temp.bad_flags('NULL'), '22004', 'cpu_flags must not be NULL', 'cpu_flags NULL');
SELECT pg_temp.rejects(pg_temp.bad_flags('''{{a,b},{c,d}}'''), '2202E',
                       'cpu_flags must be a one-dimensional array, not 2-dimensional', 'cpu_flags of two dimensions');
SELECT pg_temp.rejects(pg_temp.bad_flags('''{sse2,NULL}'''), '22004', 'cpu_flags must not contain NULL',
                       'a NULL cpu flag');
SELECT pg_temp.rejects(pg_temp.bad_flags(quote_literal(array_fill('f'::text, ARRAY[1025]))), '22023',
                       'cpu_flags must hold at most 1024 flags, not 1025', '1025 cpu flags');
SELECT pg_temp.rejects(pg_temp.bad_flags('''{""}'''), '22023', 'cpu flag "" is not 1 to 64 letters, digits or "_.+-"',
                       'an empty cpu flag');
SELECT pg_temp.rejects(pg_temp.bad_flags('''{"avx2 sse2"}'''), '22023',
                       'cpu flag "avx2 sse2" is not 1 to 64 letters, digits or "_.+-"', 'a cpu flag with a space');
SELECT pg_temp.rejects(pg_temp.bad_flags(quote_literal(ARRAY[repeat('f', 65)])), '22023',
                       'cpu flag "' || repeat('f', 40) || '..." is not 1 to 64 letters, digits or "_.+-"',
                       'a cpu flag of 65 characters');

-- coprocs
SELECT pg_temp.rejects(pg_temp.bad_coprocs('[1, 2]'), '22023', 'coprocs must be a JSON object, not [1, 2]',
                       'coprocs as an array');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('"nvidia"'), '22023', 'coprocs must be a JSON object, not "nvidia"',
                       'coprocs as a string');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"cpu": {"count": 1, "peak_flops": 1e9}}'), '22023',
                       'unknown coprocessor type "cpu" in coprocs', 'the CPU as a coprocessor');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"gpu": {"count": 1, "peak_flops": 1e9}}'), '22023',
                       'unknown coprocessor type "gpu" in coprocs', 'an unknown coprocessor type');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia'' OR ''1''=''1": {"count": 1, "peak_flops": 1e9}}'), '22023',
                       'unknown coprocessor type "nvidia'' OR ''1''=''1" in coprocs',
                       'a coprocessor type that looks like SQL');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": 2}'), '22023',
                       'coprocs.nvidia must be an object with count and peak_flops, not 2', 'a coprocessor as a number');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": 1, "peak_flops": 1e9, "ram": 8}}'), '22023',
                       'unknown key "ram" in coprocs.nvidia', 'an unknown key in a coprocessor');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"peak_flops": 1e9}}'), '22023',
                       'coprocs.nvidia.count must be an integer between 1 and 1024, not missing',
                       'a coprocessor without count');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": 0, "peak_flops": 1e9}}'), '22023',
                       'coprocs.nvidia.count must be an integer between 1 and 1024, not 0', 'a count of 0');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": 1025, "peak_flops": 1e9}}'), '22023',
                       'coprocs.nvidia.count must be an integer between 1 and 1024, not 1025', 'a count of 1025');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": 1.5, "peak_flops": 1e9}}'), '22023',
                       'coprocs.nvidia.count must be an integer between 1 and 1024, not 1.5', 'a fractional count');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": "1", "peak_flops": 1e9}}'), '22023',
                       'coprocs.nvidia.count must be an integer between 1 and 1024, not "1"', 'a count as a string');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": 1e400, "peak_flops": 1e9}}'), '22023',
                       'coprocs.nvidia.count must be an integer between 1 and 1024, not ' || left('1e400'::jsonb::text, 40),
                       'a count of 1e400');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": 1}}'), '22023',
                       'coprocs.nvidia.peak_flops must be a number between 1 and 1e+18, not missing',
                       'a coprocessor without peak_flops');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": 1, "peak_flops": 0}}'), '22023',
                       'coprocs.nvidia.peak_flops must be a number between 1 and 1e+18, not 0', 'peak_flops 0');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": 1, "peak_flops": 2e18}}'), '22023',
                       'coprocs.nvidia.peak_flops must be a number between 1 and 1e+18, not 2000000000000000000',
                       'peak_flops above 1e18');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"nvidia": {"count": 1, "peak_flops": null}}'), '22023',
                       'coprocs.nvidia.peak_flops must be a number between 1 and 1e+18, not null', 'peak_flops null');
SELECT pg_temp.rejects(pg_temp.bad_coprocs('{"amd": {"count": 1, "peak_flops": 1e9}, "nvidia": {"count": 0, "peak_flops": 1e9}}'),
                       '22023', 'coprocs.nvidia.count must be an integer between 1 and 1024, not 0',
                       'one good and one bad coprocessor: the good one is not stored either');

-- Whose host.
SELECT pg_temp.rejects(pg_temp.reg('424242', '''x''', '''Linux''', '''{}''', '2', '1e9', '''{}'''), 'P0002',
                       'host 424242 does not exist', 'an unknown host');
INSERT INTO allot.host (id, name, os, threads, cpu_flops) VALUES (900, 'operator''s', 'Linux', 64, 5e9);
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (900, 'nvidia', 4, 1e13);
-- a new snapshot with host 900 in it
UPDATE snapshot SET state = pg_temp.allot_state();
SELECT pg_temp.rejects(pg_temp.reg('900', '''mine now''', '''Linux''', '''{}''', '1', '1', '''{}'''), '42501',
                       'host 900 was added by the operator: register_host does not change it',
                       'a host the operator added');

-- ---------------------------------------------------------------------------
-- The web role.

SET ROLE allot_test_reg_web;
SELECT allot.register_host(NULL, 'web-box', 'x86_64-pc-linux-gnu', '{sse2}', 4, 3e9) AS h3 \gset
SELECT lives_ok(format($$SELECT allot.register_host(%s, 'web-box', 'x86_64-pc-linux-gnu', '{sse2}', 8, 3e9)$$, :h3),
                'allot_web registers a host and updates it');
SELECT throws_ok($$SELECT allot.register_host(900, 'x', 'Linux', '{}', 1, 1)$$, '42501',
                 'host 900 was added by the operator: register_host does not change it',
                 'allot_web cannot change a host the operator added');
SELECT throws_ok($$SELECT * FROM allot.host$$, '42501', NULL, 'allot_web still cannot read allot.host');
SELECT throws_ok($$UPDATE allot.host SET threads = 1$$, '42501', NULL, 'nor write it');
SELECT throws_ok($$SELECT * FROM allot.host_coproc$$, '42501', NULL, 'nor read allot.host_coproc');
RESET ROLE;
SELECT is((SELECT threads || ' ' || (registered_at IS NOT NULL) FROM allot.host WHERE id = :h3), '8 true',
          'the web role''s host is registered with its latest figures');
SELECT is((SELECT threads || ' ' || cpu_flops || ' ' || (registered_at IS NULL) FROM allot.host WHERE id = 900),
          '64 5000000000 true', 'the operator''s host is as the operator left it');

-- ---------------------------------------------------------------------------
-- Credit.  Jobs 101 and 102 are in progress on host h1; h3 takes two more.
-- Each credited job earns actual_au_mean x est_flops_per_au / 4.32e11 = 1.

SELECT count(*) FROM jsonb_array_elements(
    allot.request_work(:h3, '{"resources": {"cpu": {"req_instances": 2}}}') -> 'jobs') \gset h3_jobs_
SELECT is(:h3_jobs_count::int, 2, 'host h3 takes two jobs');
SELECT allot.report_job(:h1, 101, 'success', 1, 5);                             -- returned now
SELECT allot.report_job(:h1, 102, 'success', 1, 5);
UPDATE allot.job SET returned_at = now() - interval '7 days' WHERE id = 102;  -- returned a week ago
SELECT allot.report_job(:h3, id, 'success', 1, 5) FROM allot.job WHERE host_id = :h3 ORDER BY id LIMIT 1;
SELECT allot.report_job(:h3, id, 'error') FROM allot.job WHERE host_id = :h3 AND state = 'in_progress';

SELECT is((SELECT array_agg(host_id || ':' || total_credit || ':' || expavg_credit ORDER BY host_id)
             FROM allot.host_credit(ARRAY[:h1, :h3]::bigint[]))::text,
          format('{%s:0:0,%s:0:0}', :h1, :h3),
          'before validation and the transitioner, no host has credit');
SELECT allot.validate_job(id, true) FROM allot.job WHERE state = 'done' ORDER BY id;
SELECT is((allot.run_transitioner() ->> 'credited')::int, 3, 'the transitioner credits the three valid jobs');
SELECT is((SELECT string_agg(id || ' ' || credit, ', ' ORDER BY id) FROM allot.job WHERE credit IS NOT NULL),
          (SELECT string_agg(id || ' 1', ', ' ORDER BY id) FROM allot.job WHERE state = 'done'),
          'each credited job earned 1');

SELECT is((SELECT total_credit FROM allot.host_credit(ARRAY[:h1]::bigint[])), 2::double precision,
          'host_credit: h1''s total is its two credited jobs');
-- The job returned now counts in full, the one returned a week ago half:
-- (1 + 0.5) x ln 2 / 7 credits per day.
SELECT ok(abs((SELECT expavg_credit FROM allot.host_credit(ARRAY[:h1]::bigint[])) - 1.5 * ln(2) / 7) < 1e-12,
          'host_credit: h1''s recent average decays the week-old credit by half');
SELECT is((SELECT total_credit || ' ' || round(expavg_credit::numeric, 12)
             FROM allot.host_credit(ARRAY[:h3]::bigint[])),
          '1 ' || round((ln(2) / 7)::numeric, 12),
          'host_credit: h3''s failed job earns nothing');
SELECT is((SELECT array_agg(host_id ORDER BY host_id) FROM allot.host_credit(ARRAY[:h3, 424242, :h1, :h3]::bigint[])),
          ARRAY[:h1, :h3]::bigint[], 'hosts that do not exist are left out, and each host comes once');
SELECT is((SELECT count(*)::int FROM allot.host_credit('{}')), 0, 'no hosts, no rows');
SELECT allot.validate_job(101, false);
SELECT is((SELECT total_credit FROM allot.host_credit(ARRAY[:h1]::bigint[])), 1::double precision,
          'a job found invalid afterwards no longer counts');

SET ROLE allot_test_reg_web;
SELECT is((SELECT total_credit FROM allot.host_credit(ARRAY[:h3]::bigint[])), 1::double precision,
          'allot_web reads hosts'' credit through host_credit');
RESET ROLE;

SELECT throws_ok($$SELECT * FROM allot.host_credit(NULL)$$, '22004', 'host_ids must not be NULL', 'host_ids NULL');
SELECT throws_ok($$SELECT * FROM allot.host_credit('{{1,2},{3,4}}')$$, '2202E',
                 'host_ids must be a one-dimensional array, not 2-dimensional', 'host_ids of two dimensions');
SELECT throws_ok($$SELECT * FROM allot.host_credit('{1,NULL}')$$, '22004', 'host_ids must not contain NULL',
                 'a NULL host id');
SELECT throws_ok($$SELECT * FROM allot.host_credit(array_fill(1::bigint, ARRAY[10001]))$$, '22023',
                 'host_ids must hold at most 10000 ids, not 10001', '10001 host ids');

SELECT is((SELECT count(*)::int FROM allot.check_invariants()), 0, 'check_invariants() is empty');

SELECT * FROM finish();
ROLLBACK;
