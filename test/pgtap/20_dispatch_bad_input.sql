-- Bad input to the job-workload functions and tables of 0.2.0 (docs/concepts.md "Job workloads" and
-- "Errors"): request_work, report_job, estimate_job, host_queue, and rows of
-- allot.resource, app_version, host_coproc and job.  Each is an ERROR with a
-- stable SQLSTATE and a message that names the value, and leaves no trace.
-- A repeated identical report is harmless; a repeated report with other
-- numbers is refused.
--
-- The harness runs this file in a fresh database with pgtap and allot
-- created.  "Unchanged" compares every row of every allot table, as text,
-- with a snapshot taken after the fixture (pg_temp.rejects: the error, then
-- that nothing changed).
--
-- Messages.  A JSON value in a message is named as it is when it is a
-- scalar (5, "cpu", null) and by its kind when it is a container (an
-- array, an object).
BEGIN;
SELECT plan(254);

-- ---------------------------------------------------------------------------
-- Fixture.  App 1 has a CPU version (11) and an nvidia version (12); job
-- workload 1 has jobs 101..110.  Host 101 (4 threads, one GPU) was sent jobs
-- 101 (GPU), 102 and 103 (CPU) and returned 101; host 102 (2 threads) holds
-- nothing.  Virtual time 2026-01-01 UTC.
INSERT INTO allot.app (id, name, est_flops_per_au) VALUES (1, 'crunch', 3.6e13);
INSERT INTO allot.app_version (id, app_id, resource, ncpus, ncoprocs) VALUES
    (11, 1, 'cpu', 1, 0),
    (12, 1, 'nvidia', 0.1, 1);
INSERT INTO allot.workload (id, name, engine, app_id) VALUES (1, 'crunch-a', 'crunch', 1);
INSERT INTO allot.job (id, workload_id) SELECT g, 1 FROM generate_series(101, 110) g;
INSERT INTO allot.host (id, name, threads, cpu_flops) VALUES
    (101, 'h1', 4, 1e10),
    (102, 'h2', 2, 1e10);
INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (101, 'nvidia', 1, 5e12);

CREATE TEMP TABLE fixture_sent ON COMMIT DROP AS
SELECT (j ->> 'job_id')::bigint AS job_id, j ->> 'resource' AS resource
  FROM jsonb_array_elements(allot.request_work(101,
           jsonb_build_object('resources', jsonb_build_object(
               'cpu', jsonb_build_object('req_instances', 2),
               'nvidia', jsonb_build_object('req_instances', 1))),
           '2026-01-01 00:00:00+00', 1) -> 'jobs') j;
CREATE TEMP TABLE fixture_report ON COMMIT DROP AS
SELECT allot.report_job(101, 101, 'success', 1, 3000, NULL, '2026-01-01 01:00:00+00') AS reply;

SELECT is((SELECT string_agg(job_id || ' ' || resource, ', ' ORDER BY job_id) FROM fixture_sent),
          '101 nvidia, 102 cpu, 103 cpu', 'fixture: host 101 was sent jobs 101 (GPU), 102 and 103');
SELECT is((SELECT string_agg(id || ' ' || state || ' ' || coalesce(host_id::text, '-'), ', ' ORDER BY id)
             FROM allot.job WHERE id <= 104),
          '101 done 101, 102 in_progress 101, 103 in_progress 101, 104 unsent -',
          'fixture: job 101 done, 102 and 103 in progress on host 101, 104 unsent');

-- Every row of every allot table, and unchanged(description).
\ir lib/state.sql

-- The error, then that nothing changed: two tests.
CREATE FUNCTION pg_temp.rejects(sql text, code char(5), message text, description text)
    RETURNS SETOF text LANGUAGE plpgsql AS $f$
BEGIN
    RETURN NEXT throws_ok(sql, code, message, description);
    RETURN NEXT pg_temp.unchanged(description || ': nothing changed');
END
$f$;

-- request_work(101, <request>) at 02:00, seed 1.
CREATE FUNCTION pg_temp.rw(request text) RETURNS text LANGUAGE sql AS $f$
    SELECT format('SELECT allot.request_work(101, %L::jsonb, %L, 1)', request, '2026-01-01 02:00:00+00')
$f$;

-- The messages PostgreSQL gives for CHECK and foreign key violations.
CREATE FUNCTION pg_temp.violates(tab text, con text) RETURNS text LANGUAGE sql AS $f$
    SELECT format('new row for relation "%s" violates check constraint "%s"', tab, con)
$f$;
CREATE FUNCTION pg_temp.fk(tab text, con text) RETURNS text LANGUAGE sql AS $f$
    SELECT format('insert or update on table "%s" violates foreign key constraint "%s"', tab, con)
$f$;

SELECT is_empty('SELECT * FROM allot.check_invariants()', 'fixture: invariants hold');

-- ---------------------------------------------------------------------------
-- request_work: the request is not a JSON object (22023).
SELECT pg_temp.rejects(pg_temp.rw('[1, 2]'), '22023',
    'request must be a JSON object, not an array', 'request_work: request is an array');
SELECT pg_temp.rejects(pg_temp.rw('3'), '22023',
    'request must be a JSON object, not 3', 'request_work: request is a number');
SELECT pg_temp.rejects(pg_temp.rw('"work please"'), '22023',
    'request must be a JSON object, not "work please"', 'request_work: request is a string');
SELECT pg_temp.rejects(pg_temp.rw('null'), '22023',
    'request must be a JSON object, not null', 'request_work: request is JSON null');

-- request.resources and its entries.
SELECT pg_temp.rejects(pg_temp.rw('{"resources": [1]}'), '22023',
    'request.resources must be a JSON object, not an array', 'request_work: resources is an array');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": "cpu"}'), '22023',
    'request.resources must be a JSON object, not "cpu"', 'request_work: resources is a string');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"cpu": 5}}'), '22023',
    'request.resources.cpu must be a JSON object, not 5', 'request_work: a resource entry is a number');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"cpu": [3600]}}'), '22023',
    'request.resources.cpu must be a JSON object, not an array', 'request_work: a resource entry is an array');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"gpu": {"req_secs": 3600}}}'), '22023',
    'unknown resource "gpu" in request.resources', 'request_work: unknown resource gpu');

SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"cpu": {"req_secs": -1}}}'), '22023',
    'request.resources.cpu.req_secs must be a non-negative number, not -1', 'request_work: negative req_secs');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"cpu": {"req_secs": "3600"}}}'), '22023',
    'request.resources.cpu.req_secs must be a non-negative number, not "3600"', 'request_work: req_secs a string');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"cpu": {"req_secs": null}}}'), '22023',
    'request.resources.cpu.req_secs must be a non-negative number, not null', 'request_work: req_secs null');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"cpu": {"req_instances": -2}}}'), '22023',
    'request.resources.cpu.req_instances must be a non-negative number, not -2', 'request_work: negative req_instances');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"cpu": {"req_instances": "2"}}}'), '22023',
    'request.resources.cpu.req_instances must be a non-negative number, not "2"', 'request_work: req_instances a string');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"cpu": {"req_instances": null}}}'), '22023',
    'request.resources.cpu.req_instances must be a non-negative number, not null', 'request_work: req_instances null');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"nvidia": {"req_secs": 600, "estimated_delay": -600}}}'), '22023',
    'request.resources.nvidia.estimated_delay must be a non-negative number, not -600',
    'request_work: negative estimated_delay');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"nvidia": {"req_secs": 600, "estimated_delay": "600"}}}'), '22023',
    'request.resources.nvidia.estimated_delay must be a non-negative number, not "600"',
    'request_work: estimated_delay a string');
SELECT pg_temp.rejects(pg_temp.rw('{"resources": {"nvidia": {"req_secs": 600, "estimated_delay": null}}}'), '22023',
    'request.resources.nvidia.estimated_delay must be a non-negative number, not null',
    'request_work: estimated_delay null');
SELECT pg_temp.rejects(pg_temp.rw('{"work_req_seconds": -5}'), '22023',
    'request.work_req_seconds must be a non-negative number, not -5', 'request_work: negative work_req_seconds');

-- no_gpus, exclude.
SELECT pg_temp.rejects(pg_temp.rw('{"no_gpus": "yes"}'), '22023',
    'request.no_gpus must be true or false, not "yes"', 'request_work: no_gpus a string');
SELECT pg_temp.rejects(pg_temp.rw('{"no_gpus": 1}'), '22023',
    'request.no_gpus must be true or false, not 1', 'request_work: no_gpus a number');
SELECT pg_temp.rejects(pg_temp.rw('{"no_gpus": null}'), '22023',
    'request.no_gpus must be true or false, not null', 'request_work: no_gpus null');
SELECT pg_temp.rejects(pg_temp.rw('{"exclude": 1}'), '22023',
    'request.exclude must be an array of workload ids, not 1', 'request_work: exclude a number');
SELECT pg_temp.rejects(pg_temp.rw('{"exclude": {"1": true}}'), '22023',
    'request.exclude must be an array of workload ids, not an object', 'request_work: exclude an object');
SELECT pg_temp.rejects(pg_temp.rw('{"exclude": [1, "x"]}'), '22023',
    'request.exclude[] must be a non-negative number, not "x"', 'request_work: exclude with a string');
SELECT pg_temp.rejects(pg_temp.rw('{"exclude": [1.5]}'), '22023',
    'request.exclude[] must be a whole number, not 1.5', 'request_work: exclude with a fraction');
SELECT pg_temp.rejects(pg_temp.rw('{"exclude": [-1]}'), '22023',
    'request.exclude[] must be a non-negative number, not -1', 'request_work: exclude with a negative id');
SELECT pg_temp.rejects(pg_temp.rw('{"exclude": [null]}'), '22023',
    'request.exclude[] must be a non-negative number, not null', 'request_work: exclude with null');

-- app_versions.
SELECT pg_temp.rejects(pg_temp.rw('{"app_versions": [11]}'), '22023',
    'request.app_versions must be a JSON object, not an array', 'request_work: app_versions an array');
SELECT pg_temp.rejects(pg_temp.rw('{"app_versions": {"abc": {}}}'), '22023',
    'request.app_versions keys must be app version ids, not "abc"', 'request_work: app_versions key not a number');
SELECT pg_temp.rejects(pg_temp.rw('{"app_versions": {"-11": {}}}'), '22023',
    'request.app_versions keys must be app version ids, not "-11"', 'request_work: app_versions key negative');
SELECT pg_temp.rejects(pg_temp.rw('{"app_versions": {"999": {}}}'), '22023',
    'unknown app version 999 in request.app_versions', 'request_work: unknown app version 999');
-- Keys are ids as written by a client: "011" is not another spelling of 11.
SELECT pg_temp.rejects(pg_temp.rw('{"app_versions": {"11": {}, "011": {}}}'), '22023',
    'request.app_versions keys must be app version ids, not "011"', 'request_work: app version 11 twice');
SELECT pg_temp.rejects(pg_temp.rw('{"app_versions": {"11": 5}}'), '22023',
    'request.app_versions.11 must be a JSON object, not 5', 'request_work: app_versions entry a number');
SELECT pg_temp.rejects(pg_temp.rw('{"app_versions": {"11": {"seconds_per_app_unit": -12.5}}}'), '22023',
    'request.app_versions.11.seconds_per_app_unit must be a non-negative number, not -12.5',
    'request_work: negative seconds_per_app_unit');
SELECT pg_temp.rejects(pg_temp.rw('{"app_versions": {"11": {"seconds_per_app_unit": "fast"}}}'), '22023',
    'request.app_versions.11.seconds_per_app_unit must be a non-negative number, not "fast"',
    'request_work: seconds_per_app_unit a string');
SELECT pg_temp.rejects(pg_temp.rw('{"app_versions": {"11": {"raw_flops_per_sec": -3e9}}}'), '22023',
    'request.app_versions.11.raw_flops_per_sec must be a non-negative number, not -3000000000',
    'request_work: negative raw_flops_per_sec');

-- buffer.
SELECT pg_temp.rejects(pg_temp.rw('{"buffer": 3600}'), '22023',
    'request.buffer must be a JSON object, not 3600', 'request_work: buffer a number');
SELECT pg_temp.rejects(pg_temp.rw('{"buffer": [3600, 86400]}'), '22023',
    'request.buffer must be a JSON object, not an array', 'request_work: buffer an array');
SELECT pg_temp.rejects(pg_temp.rw('{"buffer": {"min_secs": -1}}'), '22023',
    'request.buffer.min_secs must be a non-negative number, not -1', 'request_work: negative buffer.min_secs');
SELECT pg_temp.rejects(pg_temp.rw('{"buffer": {"max_secs": "a day"}}'), '22023',
    'request.buffer.max_secs must be a non-negative number, not "a day"', 'request_work: buffer.max_secs a string');

-- NULL and unknown arguments.
SELECT pg_temp.rejects($$SELECT allot.request_work(NULL, '{}', '2026-01-01 02:00:00+00', 1)$$, '22004',
    'host_id must not be NULL', 'request_work: NULL host_id');
SELECT pg_temp.rejects($$SELECT allot.request_work(101, NULL, '2026-01-01 02:00:00+00', 1)$$, '22004',
    'request must not be NULL', 'request_work: NULL request');
SELECT pg_temp.rejects($$SELECT allot.request_work(101, '{}', NULL, 1)$$, '22004',
    'now must not be NULL', 'request_work: NULL now');
SELECT pg_temp.rejects($$SELECT allot.request_work(424242, '{"work_req_seconds": 3600}', '2026-01-01 02:00:00+00', 1)$$,
    'P0002', 'host 424242 does not exist', 'request_work: unknown host');
SELECT pg_temp.rejects($$SELECT allot.request_work(101, '{}', 'infinity', 1)$$, '22023',
    'now must be a timestamp between 1970-01-01 and 9999-12-31, not infinity', 'request_work: now infinity');
SELECT pg_temp.rejects($$SELECT allot.request_work(101, '{}', '-infinity', 1)$$, '22023',
    'now must be a timestamp between 1970-01-01 and 9999-12-31, not -infinity', 'request_work: now -infinity');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'request_work: bad requests, invariants hold');

-- ---------------------------------------------------------------------------
-- report_job.  Unknown host or job: P0002; a job in progress on another
-- host: 42501; a job not in progress: 55000.
SELECT pg_temp.rejects($$SELECT allot.report_job(424242, 102, 'success', 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    'P0002', 'host 424242 does not exist', 'report_job: unknown host');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 424242, 'success', 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    'P0002', 'job 424242 does not exist', 'report_job: unknown job');
SELECT pg_temp.rejects($$SELECT allot.report_job(102, 102, 'success', 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '42501', 'job 102 was not sent to host 102', 'report_job: a job in progress on another host');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 104, 'success', 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '55000', 'job 104 is not in progress on host 101', 'report_job: an unsent job');
SELECT pg_temp.rejects($$SELECT allot.report_job(102, 101, 'success', 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '55000', 'job 101 is not in progress on host 102', 'report_job: a job done by another host');

-- Outcome and measurements: 22023; NULL: 22004.
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'finished', 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'unknown outcome "finished"', 'report_job: unknown outcome');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'SUCCESS', 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'unknown outcome "SUCCESS"', 'report_job: outcome in capitals');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 'NaN', 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'app_units must be a positive finite number, not NaN', 'report_job: app_units NaN');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 'Infinity', 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'app_units must be a positive finite number, not Infinity', 'report_job: app_units infinite');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 0, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'app_units must be a positive finite number, not 0', 'report_job: app_units zero');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', -1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'app_units must be a positive finite number, not -1', 'report_job: app_units negative');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', NULL, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22004', 'app_units must not be NULL', 'report_job: app_units NULL');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, 'NaN', NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'elapsed_secs must be a positive finite number, not NaN', 'report_job: elapsed_secs NaN');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, 'Infinity', NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'elapsed_secs must be a positive finite number, not Infinity', 'report_job: elapsed_secs infinite');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, 0, NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'elapsed_secs must be a positive finite number, not 0', 'report_job: elapsed_secs zero');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, -5, NULL, '2026-01-01 02:00:00+00')$$,
    '22023', 'elapsed_secs must be a positive finite number, not -5', 'report_job: elapsed_secs negative');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, 3000, 'NaN', '2026-01-01 02:00:00+00')$$,
    '22023', 'raw_flops_per_sec must be a positive finite number, not NaN', 'report_job: raw_flops_per_sec NaN');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, 3000, '-Infinity', '2026-01-01 02:00:00+00')$$,
    '22023', 'raw_flops_per_sec must be a positive finite number, not -Infinity', 'report_job: raw_flops_per_sec infinite');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, 3000, 0, '2026-01-01 02:00:00+00')$$,
    '22023', 'raw_flops_per_sec must be a positive finite number, not 0', 'report_job: raw_flops_per_sec zero');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, 3000, -3e9, '2026-01-01 02:00:00+00')$$,
    '22023', 'raw_flops_per_sec must be a positive finite number, not -3e+09', 'report_job: raw_flops_per_sec negative');
SELECT pg_temp.rejects($$SELECT allot.report_job(NULL, 102, 'success', 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22004', 'host_id must not be NULL', 'report_job: NULL host_id');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, NULL, 'success', 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22004', 'job_id must not be NULL', 'report_job: NULL job_id');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, NULL, 1, 3000, NULL, '2026-01-01 02:00:00+00')$$,
    '22004', 'outcome must not be NULL', 'report_job: NULL outcome');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, 3000, NULL, NULL)$$,
    '22004', 'now must not be NULL', 'report_job: NULL now');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 102, 'success', 1, 3000, NULL, 'infinity')$$,
    '22023', 'now must be a timestamp between 1970-01-01 and 9999-12-31, not infinity', 'report_job: now infinity');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'report_job: bad reports, invariants hold');

-- A repeated identical report (here of job 101, returned at 01:00) gets the
-- same reply and changes nothing, even when it comes later.
SELECT is(allot.report_job(101, 101, 'success', 1, 3000, NULL, '2026-01-01 01:00:00+00'),
          (SELECT reply FROM fixture_report), 'report_job repeated: the same reply');
SELECT pg_temp.unchanged('report_job repeated: nothing changed');
SELECT is(allot.report_job(101, 101, 'success', 1, 3000, NULL, '2026-01-02 00:00:00+00'),
          (SELECT reply FROM fixture_report), 'report_job repeated a day later: the same reply');
SELECT pg_temp.unchanged('report_job repeated a day later: nothing changed');

-- A repeated report with another result: 55000.
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 101, 'success', 2, 3000, NULL, '2026-01-01 01:00:00+00')$$,
    '55000', 'job 101 was already reported by host 101 with a different result',
    'report_job repeated with other app units');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 101, 'success', 1, 3001, NULL, '2026-01-01 01:00:00+00')$$,
    '55000', 'job 101 was already reported by host 101 with a different result',
    'report_job repeated with another elapsed time');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 101, 'success', 1, NULL, NULL, '2026-01-01 01:00:00+00')$$,
    '55000', 'job 101 was already reported by host 101 with a different result',
    'report_job repeated without its elapsed time');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 101, 'success', 1, 3000, 1e9, '2026-01-01 01:00:00+00')$$,
    '55000', 'job 101 was already reported by host 101 with a different result',
    'report_job repeated with FLOPS it did not state');
SELECT pg_temp.rejects($$SELECT allot.report_job(101, 101, 'error', 1, 3000, NULL, '2026-01-01 01:00:00+00')$$,
    '55000', 'job 101 was already reported by host 101 with a different result',
    'report_job repeated with another outcome');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'report_job: repeated reports, invariants hold');

-- ---------------------------------------------------------------------------
-- estimate_job and host_queue (read-only).
SELECT pg_temp.rejects($$SELECT * FROM allot.estimate_job(424242, 104)$$,
    'P0002', 'host 424242 does not exist', 'estimate_job: unknown host');
SELECT pg_temp.rejects($$SELECT * FROM allot.estimate_job(101, 424242)$$,
    'P0002', 'job 424242 does not exist', 'estimate_job: unknown job');
SELECT pg_temp.rejects($$SELECT * FROM allot.estimate_job(NULL, 104)$$,
    '22004', 'host_id must not be NULL', 'estimate_job: NULL host_id');
SELECT pg_temp.rejects($$SELECT * FROM allot.estimate_job(101, NULL)$$,
    '22004', 'job_id must not be NULL', 'estimate_job: NULL job_id');

SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(424242, 3600, 86400, '2026-01-01 02:00:00+00')$$,
    'P0002', 'host 424242 does not exist', 'host_queue: unknown host');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(NULL, 3600, 86400, '2026-01-01 02:00:00+00')$$,
    '22004', 'host_id must not be NULL', 'host_queue: NULL host_id');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(101, NULL, 86400, '2026-01-01 02:00:00+00')$$,
    '22004', 'min_buf_secs must not be NULL', 'host_queue: NULL min_buf_secs');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(101, 3600, NULL, '2026-01-01 02:00:00+00')$$,
    '22004', 'max_buf_secs must not be NULL', 'host_queue: NULL max_buf_secs');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(101, 3600, 86400, NULL)$$,
    '22004', 'now must not be NULL', 'host_queue: NULL now');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(101, 3600, 86400, 'infinity')$$,
    '22023', 'now must be a timestamp between 1970-01-01 and 9999-12-31, not infinity', 'host_queue: now infinity');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(101, -1, 86400, '2026-01-01 02:00:00+00')$$,
    '22023', 'min_buf_secs must be a non-negative finite number of seconds, not -1', 'host_queue: negative min_buf_secs');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(101, 3600, -1, '2026-01-01 02:00:00+00')$$,
    '22023', 'max_buf_secs must be a non-negative finite number of seconds, not -1', 'host_queue: negative max_buf_secs');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(101, 'NaN', 86400, '2026-01-01 02:00:00+00')$$,
    '22023', 'min_buf_secs must be a non-negative finite number of seconds, not NaN', 'host_queue: min_buf_secs NaN');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(101, 3600, 'NaN', '2026-01-01 02:00:00+00')$$,
    '22023', 'max_buf_secs must be a non-negative finite number of seconds, not NaN', 'host_queue: max_buf_secs NaN');
SELECT pg_temp.rejects($$SELECT * FROM allot.host_queue(101, 3600, 'Infinity', '2026-01-01 02:00:00+00')$$,
    '22023', 'max_buf_secs must be a non-negative finite number of seconds, not Infinity', 'host_queue: max_buf_secs infinite');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'estimate_job and host_queue: invariants hold');

-- ---------------------------------------------------------------------------
-- Rows of the 0.2.0 tables: CHECK violations are 23514, unknown resources
-- 23503 (foreign key), on INSERT and on UPDATE.
SELECT pg_temp.rejects($$INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs) VALUES (1, 'cpu', 1, 1)$$,
    '23514', pg_temp.violates('app_version', 'app_version_usage_matches_resource'),
    'app_version: a CPU version with a coprocessor');
SELECT pg_temp.rejects($$UPDATE allot.app_version SET ncoprocs = 1 WHERE id = 11$$,
    '23514', pg_temp.violates('app_version', 'app_version_usage_matches_resource'),
    'app_version: a coprocessor given to the CPU version');
SELECT pg_temp.rejects($$INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs) VALUES (1, 'cpu', 0, 0)$$,
    '23514', pg_temp.violates('app_version', 'app_version_usage_matches_resource'),
    'app_version: a CPU version using no CPU');
SELECT pg_temp.rejects($$INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs) VALUES (1, 'nvidia', 0.1, 0)$$,
    '23514', pg_temp.violates('app_version', 'app_version_usage_matches_resource'),
    'app_version: a GPU version with ncoprocs 0');
SELECT pg_temp.rejects($$UPDATE allot.app_version SET ncoprocs = 0 WHERE id = 12$$,
    '23514', pg_temp.violates('app_version', 'app_version_usage_matches_resource'),
    'app_version: the GPU version set to ncoprocs 0');
SELECT pg_temp.rejects($$INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs) VALUES (1, 'nvidia', 'NaN', 1)$$,
    '23514', pg_temp.violates('app_version', 'app_version_ncpus_range'), 'app_version: ncpus NaN');
SELECT pg_temp.rejects($$INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs) VALUES (1, 'nvidia', 0.1, 'Infinity')$$,
    '23514', pg_temp.violates('app_version', 'app_version_ncoprocs_range'), 'app_version: ncoprocs infinite');
SELECT pg_temp.rejects($$INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs) VALUES (1, 'gpu', 0.1, 1)$$,
    '23503', pg_temp.fk('app_version', 'app_version_resource_fkey'), 'app_version: unknown resource gpu');
SELECT pg_temp.rejects($$UPDATE allot.app_version SET resource = 'gpu' WHERE id = 12$$,
    '23503', pg_temp.fk('app_version', 'app_version_resource_fkey'), 'app_version: resource changed to gpu');
SELECT pg_temp.rejects($$INSERT INTO allot.app_version (app_id, resource, ncpus, ncoprocs) VALUES (424242, 'cpu', 1, 0)$$,
    '23503', pg_temp.fk('app_version', 'app_version_app_id_fkey'), 'app_version: unknown app');

SELECT pg_temp.rejects($$INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (102, 'gpu', 1, 5e12)$$,
    '23503', pg_temp.fk('host_coproc', 'host_coproc_resource_fkey'), 'host_coproc: unknown resource gpu');
SELECT pg_temp.rejects($$INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (424242, 'nvidia', 1, 5e12)$$,
    '23503', pg_temp.fk('host_coproc', 'host_coproc_host_id_fkey'), 'host_coproc: unknown host');
SELECT pg_temp.rejects($$INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (102, 'nvidia', 0, 5e12)$$,
    '23514', pg_temp.violates('host_coproc', 'host_coproc_count_positive'), 'host_coproc: count 0');
SELECT pg_temp.rejects($$UPDATE allot.host_coproc SET count = 0 WHERE host_id = 101$$,
    '23514', pg_temp.violates('host_coproc', 'host_coproc_count_positive'), 'host_coproc: count set to 0');
SELECT pg_temp.rejects($$INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (102, 'nvidia', 1, 'NaN')$$,
    '23514', pg_temp.violates('host_coproc', 'host_coproc_peak_flops_positive_finite'), 'host_coproc: peak_flops NaN');
SELECT pg_temp.rejects($$INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (102, 'nvidia', 1, 0)$$,
    '23514', pg_temp.violates('host_coproc', 'host_coproc_peak_flops_positive_finite'), 'host_coproc: peak_flops 0');
SELECT pg_temp.rejects($$INSERT INTO allot.host_coproc (host_id, resource, count, peak_flops) VALUES (102, 'cpu', 1, 5e12)$$,
    '23514', pg_temp.violates('host_coproc', 'host_coproc_not_cpu'), 'host_coproc: the CPU as a coprocessor');

SELECT pg_temp.rejects($$INSERT INTO allot.job (workload_id, predicted_app_units) VALUES (1, 0)$$,
    '23514', pg_temp.violates('job', 'job_predicted_app_units_positive_finite'), 'job: predicted_app_units 0');
SELECT pg_temp.rejects($$INSERT INTO allot.job (workload_id, predicted_app_units) VALUES (1, 'NaN')$$,
    '23514', pg_temp.violates('job', 'job_predicted_app_units_positive_finite'), 'job: predicted_app_units NaN');
SELECT pg_temp.rejects($$UPDATE allot.job SET predicted_app_units = -1 WHERE id = 104$$,
    '23514', pg_temp.violates('job', 'job_predicted_app_units_positive_finite'), 'job: predicted_app_units set negative');
SELECT pg_temp.rejects($$INSERT INTO allot.job (workload_id, state) VALUES (1, 'running')$$,
    '23514', pg_temp.violates('job', 'job_state_known'), 'job: unknown state');
SELECT pg_temp.rejects($$UPDATE allot.job SET state = 'running' WHERE id = 102$$,
    '23514', pg_temp.violates('job', 'job_state_known'), 'job: state set to an unknown one');
SELECT pg_temp.rejects($$INSERT INTO allot.job (workload_id, state) VALUES (1, 'in_progress')$$,
    '23514', pg_temp.violates('job', 'job_in_progress_has_host'), 'job: in progress without a host');
SELECT pg_temp.rejects($$INSERT INTO allot.job (workload_id) VALUES (424242)$$,
    '23503', pg_temp.fk('job', 'job_workload_id_fkey'), 'job: unknown workload');

SELECT pg_temp.rejects($$INSERT INTO allot.resource (name) VALUES ('GPU!')$$,
    '23514', pg_temp.violates('resource', 'resource_name_plain'), 'resource: name GPU!');
SELECT pg_temp.rejects($$INSERT INTO allot.resource (name) VALUES ('')$$,
    '23514', pg_temp.violates('resource', 'resource_name_plain'), 'resource: empty name');
SELECT pg_temp.rejects($$UPDATE allot.resource SET name = 'Intel' WHERE name = 'intel'$$,
    '23514', pg_temp.violates('resource', 'resource_name_plain'), 'resource: renamed to Intel');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'bad rows: invariants hold');

-- ---------------------------------------------------------------------------
-- After all that, the functions still work.
SELECT is(jsonb_array_length(allot.request_work(102,
              jsonb_build_object('resources', jsonb_build_object('cpu', jsonb_build_object('req_instances', 2))),
              '2026-01-01 02:00:00+00', 2) -> 'jobs'),
          2, 'request_work: host 102 gets two jobs');
SELECT is(allot.report_job(101, 102, 'success', 1, 3500, NULL, '2026-01-01 02:00:00+00') ->> 'state',
          'done', 'report_job: host 101 returns job 102');
SELECT is((SELECT count(*) FROM allot.job WHERE state = 'in_progress'), 3::bigint,
          'jobs in progress: 103 on host 101, two on host 102');
SELECT is_empty('SELECT * FROM allot.check_invariants()', 'at the end: invariants hold');

SELECT * FROM finish();
ROLLBACK;
