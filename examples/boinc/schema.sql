-- The BOINC front end's own tables, in its own schema "boinc".  The server
-- creates them at start (every statement is idempotent, and brings the
-- tables of an older front end up to date), logged in as the schema's
-- owner; allot's tables stay allot's.  Operators (members of allot_admin)
-- get the rows through the grants at the end, for admin.js.

-- Volunteers.  An account made with a password (create_account.php) keeps
-- it only as scrypt of the MD5 the client sends (accounts.js); one made by
-- admin.js may have neither email nor password.
CREATE TABLE IF NOT EXISTS boinc.account (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                 text NOT NULL CHECK (length(name) BETWEEN 1 AND 254),
    created_at           timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE boinc.account
    ADD COLUMN IF NOT EXISTS email_addr text UNIQUE
        CHECK (length(email_addr) <= 254 AND email_addr = lower(email_addr)),
    ADD COLUMN IF NOT EXISTS passwd_scrypt text,
    -- BOINC's cross-project id: the stats exports give md5(this || email),
    -- which statistics sites match across projects.
    ADD COLUMN IF NOT EXISTS cross_project_id text NOT NULL
        DEFAULT replace(gen_random_uuid()::text, '-', '') CHECK (cross_project_id ~ '^[0-9a-f]{32}$');
-- What the volunteer chose (the preferences page, an account manager's
-- am_set_info.php): the project's share of her computers, sent to each of
-- them as <project_preferences> (BOINC's default 100).
ALTER TABLE boinc.account
    ADD COLUMN IF NOT EXISTS resource_share double precision NOT NULL DEFAULT 100
        CHECK (resource_share >= 0 AND resource_share <= 1e6);
COMMENT ON TABLE boinc.account IS 'Volunteer accounts; a client names its account by one of its keys (boinc.account_key)';

-- An account's keys (BOINC's authenticators): 128 random bits each, given
-- to the volunteer once; only their SHA-256 is kept (a fast hash is enough
-- for a random key of that size, and a lookup by hash leaks nothing through
-- timing).  admin.js and create_account.php make the first; each
-- lookup_account.php with the right password makes another (the front end
-- cannot give back one it does not have), up to a cap per account, the one
-- used longest ago making way.
CREATE TABLE IF NOT EXISTS boinc.account_key (
    key_sha256 bytea PRIMARY KEY CHECK (length(key_sha256) = 32),
    account_id bigint NOT NULL REFERENCES boinc.account ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    used_at    timestamptz              -- its last scheduler request, to the hour
);
CREATE INDEX IF NOT EXISTS account_key_account_idx ON boinc.account_key (account_id);
COMMENT ON TABLE boinc.account_key IS 'The SHA-256 of each key (authenticator) of an account, and when it was last used';

-- Web sessions (web_pages.js): a browser that logged in with the password
-- holds a cookie of 128 random bits; only its SHA-256 is kept, with the
-- token its forms must carry (against cross-site requests).  A session
-- lasts SESSION_SECS from the login; a password reset ends them all.
CREATE TABLE IF NOT EXISTS boinc.web_session (
    key_sha256 bytea PRIMARY KEY CHECK (length(key_sha256) = 32),
    account_id bigint NOT NULL REFERENCES boinc.account ON DELETE CASCADE,
    form_token text NOT NULL CHECK (form_token ~ '^[0-9a-f]{32}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS web_session_account_idx ON boinc.web_session (account_id);
COMMENT ON TABLE boinc.web_session IS 'Logins of the web pages: the SHA-256 of each session cookie, its account and its form token';

-- Password resets: one token per account (128 random bits, kept as their
-- SHA-256), mailed by the operator's MAIL_COMMAND, valid for an hour, used
-- once.
CREATE TABLE IF NOT EXISTS boinc.password_reset (
    token_sha256 bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
    account_id   bigint PRIMARY KEY REFERENCES boinc.account ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
COMMENT ON TABLE boinc.password_reset IS 'The SHA-256 of the password reset token last mailed to each account, and until when it is good';

-- Notices, as the client reads them (notices.php, RSS): the project's news
-- (account_id NULL, posted with admin.js notice) and an account's own (its
-- password or email address changed).  Clients show those of the last 30
-- days.
CREATE TABLE IF NOT EXISTS boinc.notice (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id bigint REFERENCES boinc.account ON DELETE CASCADE,
    title      text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    body       text NOT NULL CHECK (length(body) BETWEEN 1 AND 4000),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS notice_account_idx ON boinc.notice (account_id, created_at);
COMMENT ON TABLE boinc.notice IS 'Notices for the clients: the project''s news (no account) and each account''s own';

-- The front end before issue 21 kept one key per account, in the account.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'boinc.account'::regclass
                                          AND attname = 'authenticator_sha256' AND NOT attisdropped) THEN
        INSERT INTO boinc.account_key (key_sha256, account_id, created_at)
        SELECT authenticator_sha256, id, created_at FROM boinc.account;
        ALTER TABLE boinc.account DROP COLUMN authenticator_sha256;
    END IF;
END
$$;

-- Hosts, keyed by their allot host id (the <hostid> the client is given).
CREATE TABLE IF NOT EXISTS boinc.host (
    host_id     bigint PRIMARY KEY,
    account_id  bigint NOT NULL REFERENCES boinc.account ON DELETE CASCADE,
    host_cpid   text,
    domain_name text,
    os_name     text,
    os_version  text,
    platform    text,
    p_ncpus     int,
    p_fpops     double precision,
    created_at  timestamptz NOT NULL DEFAULT now(),
    last_rpc_at timestamptz,
    rpc_seqno   bigint
);
CREATE INDEX IF NOT EXISTS host_account_idx ON boinc.host (account_id);
-- A client that attached again is known by its account and host_cpid.
CREATE INDEX IF NOT EXISTS host_cpid_idx ON boinc.host (account_id, host_cpid);
COMMENT ON TABLE boinc.host IS 'Hosts of the accounts: allot host id, and what the client said of itself';
-- What the host last stated to allot.register_host (its name, platform, CPU
-- flags, CPUs, FLOPS and coprocessors, as the front end passed them):
-- register_host runs only when a request states something else.  NULL:
-- not known, so the next request registers again.
ALTER TABLE boinc.host ADD COLUMN IF NOT EXISTS stated text;

-- The executable of an allot app version, as BOINC clients fetch it.
CREATE TABLE IF NOT EXISTS boinc.app_version (
    app_version_id    bigint PRIMARY KEY,      -- allot.app_version.id
    app_name          text NOT NULL CHECK (app_name ~ '^[A-Za-z0-9_.-]{1,64}$'),
    version_num       int NOT NULL CHECK (version_num >= 0),
    platform          text NOT NULL CHECK (platform ~ '^[A-Za-z0-9_.-]{1,64}$'),
    api_version       text NOT NULL DEFAULT '7.20.5' CHECK (api_version ~ '^[0-9]{1,3}(\.[0-9]{1,3}){0,2}$'),
    coproc_type       text,                    -- BOINC's name of its GPU type; NULL for CPU versions
    ncoprocs          double precision NOT NULL DEFAULT 0,
    file_name         text NOT NULL UNIQUE CHECK (file_name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$'),
    nbytes            bigint NOT NULL,
    md5               text NOT NULL CHECK (md5 ~ '^[0-9a-f]{32}$'),
    signature         text NOT NULL,
    output_names      text[] NOT NULL DEFAULT '{out}',
    output_max_nbytes bigint NOT NULL DEFAULT 16777216 CHECK (output_max_nbytes > 0),
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (app_name, platform, version_num)
);
COMMENT ON TABLE boinc.app_version IS 'The signed executable of each allot app version, and its output files';

-- What a job needs beyond allot's row: its command line.
CREATE TABLE IF NOT EXISTS boinc.workunit (
    job_id       bigint PRIMARY KEY,          -- allot.job.id
    command_line text NOT NULL DEFAULT '' CHECK (length(command_line) <= 4096)
);
COMMENT ON TABLE boinc.workunit IS 'Per allot job: the command line its app is started with';

-- Each sending of a job: a BOINC result, named job{J}_{S}_{96 random bits}.
-- Its outcome, once the front end is done with it:
--   success, error, aborted  the client reported it, and allot took the report
--   refused                  the client reported it, and allot refused it (a
--                            sending allot had moved on from)
--   lost                     the client no longer had it (<other_results>)
--   superseded               allot moved on before the client reported it
--                            (timed out, requeued)
--   invalid                  a success the validator refused
CREATE TABLE IF NOT EXISTS boinc.result (
    name           text PRIMARY KEY,
    job_id         bigint NOT NULL,
    host_id        bigint NOT NULL REFERENCES boinc.host ON DELETE CASCADE,
    app_version_id bigint NOT NULL,
    app_units      double precision NOT NULL,
    sent_at        timestamptz NOT NULL DEFAULT now(),
    deadline       timestamptz,
    reported_at    timestamptz,             -- when the front end was done with it
    outcome        text CONSTRAINT result_outcome_known
        CHECK (outcome IN ('success', 'error', 'aborted', 'refused', 'lost', 'superseded', 'invalid')),
    detail         text
);
-- allot's number of the sending (allot.job.sending); NULL: sent by the
-- front end before issue 21, which named results job{J}_{token}.
ALTER TABLE boinc.result ADD COLUMN IF NOT EXISTS sending int CHECK (sending >= 1);
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'boinc.result'::regclass
                                           AND conname = 'result_outcome_check') THEN
        ALTER TABLE boinc.result DROP CONSTRAINT result_outcome_check,
            ADD CONSTRAINT result_outcome_known
                CHECK (outcome IN ('success', 'error', 'aborted', 'refused', 'lost', 'superseded', 'invalid'));
    END IF;
END
$$;
CREATE INDEX IF NOT EXISTS result_job_idx ON boinc.result (job_id);
CREATE INDEX IF NOT EXISTS result_host_idx ON boinc.result (host_id);
-- What each scheduler request compares with the client's list.
CREATE INDEX IF NOT EXISTS result_open_idx ON boinc.result (host_id) WHERE outcome IS NULL;
COMMENT ON TABLE boinc.result IS 'Sendings of jobs to hosts, and how each ended';

-- Output files: where uploads may go, and what was checked at the report.
CREATE TABLE IF NOT EXISTS boinc.output_file (
    name        text PRIMARY KEY,
    result_name text NOT NULL REFERENCES boinc.result ON DELETE CASCADE,
    job_id      bigint NOT NULL,
    open_name   text NOT NULL,
    max_nbytes  bigint NOT NULL,
    nbytes      bigint,
    md5         text
);
CREATE INDEX IF NOT EXISTS output_file_result_idx ON boinc.output_file (result_name);
COMMENT ON TABLE boinc.output_file IS 'Output files of results: upload names, size limits, and the size and MD5 checked at the report';

-- ---------------------------------------------------------------------------
-- A scheduler request's statements, each one round trip (scheduler.js,
-- hosts.js, results.js).  They run with the caller's rights (the front
-- end's login) and name every object with its schema.

-- A known host's contact: host p_host of account p_account.
-- allot.register_host is called only when what the host states to allot
-- (p_stated, the arguments as text) is not what it last stated; else this
-- reads and writes nothing more (what the client says of itself is noted by
-- boinc.send_work or boinc.note, in the request's last transaction).
-- Returns the host's creation time (Unix seconds) and whether it
-- registered, or no row when the account has no such host; with p_compare,
-- also both sides of the client's list (results.js reconcile): the host's
-- results the front end has not closed, and the sendings allot has in
-- progress on it (allot.host_jobs).
-- The host belongs to allot owner p_owner (its account); a host that had
-- no owner in allot (registered before owners) is given it, and keeps
-- working without one if that would pass the account's limit.
DROP FUNCTION IF EXISTS boinc.contact(bigint, bigint, text, text, text, text[], int, double precision, jsonb, boolean);
CREATE OR REPLACE FUNCTION boinc.contact(
        p_host bigint, p_account bigint, p_stated text,
        p_name text, p_os text, p_cpu_flags text[], p_threads int, p_cpu_flops double precision, p_coprocs jsonb,
        p_compare boolean, p_owner text)
    RETURNS TABLE (created bigint, registered boolean, open json, current json)
    LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    was text;
BEGIN
    SELECT extract(epoch FROM h.created_at)::bigint, h.stated INTO created, was
      FROM boinc.host h WHERE h.host_id = p_host AND h.account_id = p_account;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    registered := was IS DISTINCT FROM p_stated;
    IF registered THEN
        BEGIN
            PERFORM allot.register_host(p_host, p_name, p_os, p_cpu_flags, p_threads, p_cpu_flops, p_coprocs, p_owner);
        EXCEPTION WHEN configuration_limit_exceeded THEN
            PERFORM allot.register_host(p_host, p_name, p_os, p_cpu_flags, p_threads, p_cpu_flops, p_coprocs);
        END;
        UPDATE boinc.host SET stated = p_stated WHERE host_id = p_host;
    END IF;
    IF p_compare THEN
        SELECT (SELECT coalesce(json_agg(json_build_object('name', r.name, 'job_id', r.job_id, 'sending', r.sending)
                                         ORDER BY r.name), '[]')
                  FROM boinc.result r WHERE r.host_id = p_host AND r.outcome IS NULL),
               (SELECT coalesce(json_agg(json_build_object('job_id', j.job_id, 'sending', j.sending,
                                                           'deadline', extract(epoch FROM j.deadline))), '[]')
                  FROM allot.host_jobs(p_host) j)
          INTO open, current;
    END IF;
    RETURN NEXT;
END
$$;

-- What the client says of itself in a request, and that it asked: noted
-- on host p_host (p_details: host_cpid, domain_name, os_name, os_version,
-- platform, p_ncpus, p_fpops, rpc_seqno, as text).
-- (plpgsql, so that its plan is kept: a SQL function's is made afresh on
-- every call.)
CREATE OR REPLACE FUNCTION boinc.note(p_host bigint, p_details text[])
    RETURNS void
    LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    UPDATE boinc.host
       SET host_cpid = p_details[1], domain_name = p_details[2], os_name = p_details[3], os_version = p_details[4],
           platform = p_details[5], p_ncpus = p_details[6]::int, p_fpops = p_details[7]::double precision,
           rpc_seqno = p_details[8]::bigint, last_rpc_at = now()
     WHERE host_id = p_host;
END
$$;

-- One allot.request_work for host p_host and, in the same transaction, the
-- front end's rows for what it sent: a result per job, named
-- job{J}_{S}_{96 random bits} (from gen_random_uuid, PostgreSQL's strong
-- random source: the version and variant digits left out), and its output
-- files.  Workloads in p_exclude are not asked for.  A job whose app
-- version has no executable here is never sent: the call fails with
-- SQLSTATE BX001 naming the workloads of such jobs in its detail (a JSON
-- array), and nothing is changed; the caller asks again without them.
-- Returns allot's reply, the results' names and command lines in the order
-- of its jobs, the app versions they use (their rows of boinc.app_version,
-- by id), and the host's credit (allot.host_credit).  What the client says
-- of itself is noted first (boinc.note, p_details), in the same transaction.
CREATE OR REPLACE FUNCTION boinc.send_work(p_host bigint, p_request jsonb, p_exclude bigint[], p_details text[])
    RETURNS TABLE (reply jsonb, names text[], command_lines text[], versions jsonb,
                   total_credit double precision, expavg_credit double precision)
    LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    missing bigint[];
    workloads bigint[];
BEGIN
    IF p_details IS NOT NULL THEN   -- NULL: a new host, its row just made
        PERFORM boinc.note(p_host, p_details);
    END IF;
    reply := allot.request_work(p_host, CASE WHEN cardinality(p_exclude) > 0
                                             THEN p_request || jsonb_build_object('exclude', to_jsonb(p_exclude))
                                             ELSE p_request END);
    IF jsonb_array_length(coalesce(reply -> 'jobs', '[]')) > 0 THEN
        WITH job AS MATERIALIZED (
            SELECT (j ->> 'job_id')::bigint AS job_id, (j ->> 'sending')::int AS sending,
                   -- a replica's workunit is its job's
                   coalesce((j ->> 'replica_of')::bigint, (j ->> 'job_id')::bigint) AS workunit_id,
                   (j ->> 'workload_id')::bigint AS workload_id,
                   (j ->> 'app_version_id')::bigint AS app_version_id,
                   coalesce((j ->> 'predicted_app_units')::double precision, 1) AS app_units,
                   coalesce((j ->> 'deadline')::timestamptz, now() + interval '7 days') AS deadline, n,
                   replace(gen_random_uuid()::text, '-', '') AS u   -- one each
              FROM jsonb_array_elements(reply -> 'jobs') WITH ORDINALITY AS t (j, n)),
        named AS MATERIALIZED (
            SELECT job.*, format('job%s_%s_%s', job.job_id, job.sending,
                                 substr(u, 1, 12) || substr(u, 14, 3) || substr(u, 18, 9)) AS name,
                   to_jsonb(v) AS version, v.output_names, v.output_max_nbytes
              FROM job LEFT JOIN boinc.app_version v ON v.app_version_id = job.app_version_id),
        result AS (
            INSERT INTO boinc.result (name, job_id, sending, host_id, app_version_id, app_units, deadline)
            SELECT name, job_id, sending, p_host, app_version_id, app_units, deadline FROM named
             WHERE version IS NOT NULL),
        output AS (
            INSERT INTO boinc.output_file (name, result_name, job_id, open_name, max_nbytes)
            SELECT named.name || '_' || (o.k - 1), named.name, named.job_id, o.open_name, named.output_max_nbytes
              FROM named, unnest(named.output_names) WITH ORDINALITY AS o (open_name, k)
             WHERE named.version IS NOT NULL)
        SELECT array_agg(named.name ORDER BY named.n), array_agg(coalesce(w.command_line, '') ORDER BY named.n),
               jsonb_object_agg(named.app_version_id, named.version) FILTER (WHERE named.version IS NOT NULL),
               array_agg(DISTINCT named.app_version_id) FILTER (WHERE named.version IS NULL),
               array_agg(DISTINCT named.workload_id) FILTER (WHERE named.version IS NULL)
          INTO names, command_lines, versions, missing, workloads
          FROM named LEFT JOIN boinc.workunit w ON w.job_id = named.workunit_id;
        IF missing IS NOT NULL THEN
            -- Undoes allot's choice and the rows above: the whole call fails.
            RAISE EXCEPTION 'allot app version(s) % have no executable', array_to_string(missing, ', ')
                USING ERRCODE = 'BX001', DETAIL = to_jsonb(workloads)::text,
                      HINT = 'node admin.js add-app-version';
        END IF;
    END IF;
    SELECT c.total_credit, c.expavg_credit INTO total_credit, expavg_credit
      FROM allot.host_credit(ARRAY[p_host]) c;
    RETURN NEXT;
END
$$;

GRANT USAGE ON SCHEMA boinc TO allot_admin;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA boinc TO allot_admin;
