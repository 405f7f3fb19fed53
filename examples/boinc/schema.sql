-- The BOINC front end's own tables, in its own schema "boinc".  The server
-- creates them at start (every statement is idempotent), logged in as the
-- schema's owner; allot's tables stay allot's.  Operators (members of
-- allot_admin) get the rows through the grants at the end, for admin.js.

-- Volunteers.  The authenticator is 128 random bits, given to the volunteer
-- once; only its SHA-256 is kept (a fast hash is enough for a random key
-- of that size, and a lookup by hash leaks nothing through timing).
CREATE TABLE IF NOT EXISTS boinc.account (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                 text NOT NULL CHECK (length(name) BETWEEN 1 AND 254),
    authenticator_sha256 bytea NOT NULL UNIQUE CHECK (length(authenticator_sha256) = 32),
    created_at           timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE boinc.account IS 'Volunteer accounts; a client names its account by its authenticator';

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

-- Each time a job is sent: a BOINC result with an unguessable name.
CREATE TABLE IF NOT EXISTS boinc.result (
    name           text PRIMARY KEY,
    job_id         bigint NOT NULL,
    host_id        bigint NOT NULL REFERENCES boinc.host ON DELETE CASCADE,
    app_version_id bigint NOT NULL,
    app_units      double precision NOT NULL,
    sent_at        timestamptz NOT NULL DEFAULT now(),
    deadline       timestamptz,
    reported_at    timestamptz,
    outcome        text CHECK (outcome IN ('success', 'error', 'aborted', 'refused')),
    detail         text
);
CREATE INDEX IF NOT EXISTS result_job_idx ON boinc.result (job_id);
CREATE INDEX IF NOT EXISTS result_host_idx ON boinc.result (host_id);
COMMENT ON TABLE boinc.result IS 'Jobs as sent to hosts, and how their reports were judged';

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
