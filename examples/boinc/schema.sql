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

GRANT USAGE ON SCHEMA boinc TO allot_admin;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA boinc TO allot_admin;
