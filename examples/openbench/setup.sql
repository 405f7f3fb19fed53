-- The OpenBench front end's own schema: accounts, engines, books, networks,
-- tests and their results, the machines and their session secrets, and the
-- five narrow functions through which the front end's login reaches what
-- allot keeps for operators.  Run it once per farm database, as the
-- operator (a member of allot_admin, not a superuser), naming the front
-- end's login:
--
--     psql -d farm -v web=openbench_web -f examples/openbench/setup.sql
--
-- Schema openbench must exist and belong to the operator (a superuser:
-- CREATE SCHEMA openbench AUTHORIZATION farm_admin).  Running it again
-- changes nothing but the functions' bodies and the grants, and brings a
-- farm set up by an older version up to date (the web site's columns and
-- tables are added).
--
-- Why the operator owns it all: the front end's login sits on a server
-- that faces every worker and browser, so it owns nothing.  It reads and
-- writes the rows it needs, and calls register_host, explain_assignment,
-- finish_test, create_test and sync_workload below, which run with the
-- operator's rights (SECURITY DEFINER) and do one checked thing each.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;

\if :{?web}
SELECT set_config('openbench.setup_web_role', :'web', false) AS web_role \gset
\else
DO $$ BEGIN
    RAISE EXCEPTION 'setup.sql needs the front end''s login: psql -v web=ROLE -f setup.sql';
END $$;
\endif

DO $$
DECLARE
    web text := current_setting('openbench.setup_web_role');
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION 'run setup.sql as the operator, not as the superuser %', current_user
            USING HINT = 'Its functions run with their owner''s rights: the owner must be an operator (a member of allot_admin).';
    END IF;
    IF NOT pg_has_role(current_user, 'allot_admin', 'USAGE') THEN
        RAISE EXCEPTION 'role % is not a member of allot_admin', current_user
            USING HINT = 'Run setup.sql as an operator: CREATE ROLE farm_admin LOGIN IN ROLE allot_admin.';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_namespace WHERE nspname = 'openbench'
                                              AND nspowner = current_user::regrole) THEN
        RAISE EXCEPTION 'schema openbench must exist and belong to %', current_user
            USING HINT = format('As a superuser: CREATE SCHEMA openbench AUTHORIZATION %I;', current_user);
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = web) THEN
        RAISE EXCEPTION 'the front end''s login % does not exist', web
            USING HINT = format('CREATE ROLE %I LOGIN IN ROLE allot_web;', web);
    END IF;
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = web)
       OR pg_has_role(web, 'allot_admin', 'USAGE') OR NOT pg_has_role(web, 'allot_web', 'USAGE') THEN
        RAISE EXCEPTION 'the front end''s login % must be a member of allot_web, and neither a superuser nor an operator', web;
    END IF;
END $$;

COMMENT ON SCHEMA openbench IS
    'allot''s OpenBench front end (examples/openbench): accounts, engines, books, tests, machines and results';

-- Workers log in with an account's name and password (OpenBench's
-- username and password); only scrypt(password, salt) is kept.
CREATE TABLE IF NOT EXISTS openbench.account (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    salt       bytea NOT NULL CHECK (length(salt) >= 16),
    hash       bytea NOT NULL CHECK (length(hash) = 32),
    scrypt_n   integer NOT NULL CHECK (scrypt_n BETWEEN 16384 AND 1048576 AND scrypt_n & (scrypt_n - 1) = 0),
    scrypt_r   integer NOT NULL CHECK (scrypt_r BETWEEN 1 AND 32),
    scrypt_p   integer NOT NULL CHECK (scrypt_p BETWEEN 1 AND 16),
    enabled    boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE openbench.account IS
    'Accounts workers log in with (admin.js add-user); the password itself is never stored';

-- How workers build an engine (OpenBench's engine configuration, "build").
-- admin.js add-engine writes the same engine's requirements to allot.engine,
-- where assign_workload checks them.
CREATE TABLE IF NOT EXISTS openbench.engine (
    name       text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$'),
    build_path text NOT NULL DEFAULT '' CHECK (build_path ~ '^([A-Za-z0-9_.+-]+(/[A-Za-z0-9_.+-]+)*)?$'
                                               AND build_path !~ '(^|/)\.\.?(/|$)'),
    compilers  text[] NOT NULL CHECK (cardinality(compilers) BETWEEN 1 AND 16),
    cpuflags   text[] NOT NULL DEFAULT '{}',
    systems    text[] NOT NULL DEFAULT '{Linux}' CHECK (cardinality(systems) >= 1),
    private    boolean NOT NULL DEFAULT false,
    scale_nps  bigint NOT NULL DEFAULT 1000000 CHECK (scale_nps BETWEEN 1 AND 1000000000000)
);
COMMENT ON TABLE openbench.engine IS
    'Engines: where make runs in the source, the compilers, CPU flags and systems it needs, private or not';

-- Opening books: workers download the zip at source and check the sha256
-- of the book inside it.
CREATE TABLE IF NOT EXISTS openbench.book (
    name       text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}\.(epd|pgn)$'),
    sha256     text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    source     text NOT NULL CHECK (length(source) <= 2000 AND source ~ '^https?://[^[:space:][:cntrl:]]+$'),
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE openbench.book IS 'Opening books: the URL of a zip holding the book, and the sha256 of the book';

-- Networks, served to workers by the front end from DATA_DIR/networks.
CREATE TABLE IF NOT EXISTS openbench.network (
    engine     text NOT NULL REFERENCES openbench.engine,
    name       text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{1,64}$'),
    sha        text NOT NULL CHECK (sha ~ '^[0-9A-F]{8}$'),
    bytes      bigint NOT NULL CHECK (bytes > 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (engine, sha),
    UNIQUE (engine, name)
);
COMMENT ON TABLE openbench.network IS
    'Neural networks: the first 8 hex digits of the sha256 name the file in DATA_DIR/networks/ENGINE/';

-- A test is an allot assignment workload (same id) with what workers need
-- to play it, and its results so far.
CREATE TABLE IF NOT EXISTS openbench.test (
    id                bigint PRIMARY KEY,               -- allot.workload.id
    type              text NOT NULL CHECK (type IN ('SPRT', 'GAMES')),
    dev_engine        text NOT NULL REFERENCES openbench.engine,
    dev_name          text NOT NULL CHECK (dev_name ~ '^[^[:cntrl:]]{1,128}$'),
    dev_source        text NOT NULL CHECK (length(dev_source) <= 2000 AND dev_source ~ '^https?://[^[:space:][:cntrl:]]+$'),
    dev_sha           text NOT NULL CHECK (dev_sha ~ '^[0-9a-f]{40}$'),
    dev_bench         bigint NOT NULL CHECK (dev_bench > 0),
    dev_options       text NOT NULL CHECK (length(dev_options) <= 1024 AND dev_options !~ '[[:cntrl:]]'),
    dev_network       text CHECK (dev_network ~ '^[0-9A-F]{8}$'),
    dev_netname       text,
    dev_time_control  text NOT NULL CHECK (dev_time_control ~ '^[A-Za-z0-9=/+.]{1,32}$'),
    base_engine       text NOT NULL REFERENCES openbench.engine,
    base_name         text NOT NULL CHECK (base_name ~ '^[^[:cntrl:]]{1,128}$'),
    base_source       text NOT NULL CHECK (length(base_source) <= 2000 AND base_source ~ '^https?://[^[:space:][:cntrl:]]+$'),
    base_sha          text NOT NULL CHECK (base_sha ~ '^[0-9a-f]{40}$'),
    base_bench        bigint NOT NULL CHECK (base_bench > 0),
    base_options      text NOT NULL CHECK (length(base_options) <= 1024 AND base_options !~ '[[:cntrl:]]'),
    base_network      text CHECK (base_network ~ '^[0-9A-F]{8}$'),
    base_netname      text,
    base_time_control text NOT NULL CHECK (base_time_control ~ '^[A-Za-z0-9=/+.]{1,32}$'),
    book_name         text NOT NULL REFERENCES openbench.book,
    upload_pgns       text NOT NULL DEFAULT 'COMPACT' CHECK (upload_pgns IN ('FALSE', 'COMPACT', 'VERBOSE')),
    scale_method      text NOT NULL DEFAULT 'BOTH' CHECK (scale_method IN ('DEV', 'BASE', 'BOTH')),
    scale_nps         bigint NOT NULL CHECK (scale_nps BETWEEN 1 AND 1000000000000),
    syzygy_adj        text NOT NULL DEFAULT 'OPTIONAL' CHECK (syzygy_adj ~ '^(OPTIONAL|DISABLED|[3-7]-MAN)$'),
    syzygy_wdl        text NOT NULL DEFAULT 'OPTIONAL' CHECK (syzygy_wdl ~ '^(OPTIONAL|DISABLED|[3-7]-MAN)$'),
    win_adj           text NOT NULL DEFAULT 'None' CHECK (win_adj ~ '^[A-Za-z0-9=. ]{1,64}$'),
    draw_adj          text NOT NULL DEFAULT 'None' CHECK (draw_adj ~ '^[A-Za-z0-9=. ]{1,64}$'),
    workload_size     integer NOT NULL CHECK (workload_size BETWEEN 1 AND 1024),
    use_penta         boolean NOT NULL DEFAULT true,
    elo_lower         double precision CHECK (elo_lower BETWEEN -500 AND 500),
    elo_upper         double precision CHECK (elo_upper BETWEEN -500 AND 500),
    alpha             double precision CHECK (alpha > 0 AND alpha < 0.5),
    beta              double precision CHECK (beta > 0 AND beta < 0.5),
    lower_llr         double precision,
    upper_llr         double precision,
    max_games         bigint CHECK (max_games BETWEEN 2 AND 1000000000),
    book_index        bigint NOT NULL DEFAULT 1 CHECK (book_index >= 1),
    games             bigint NOT NULL DEFAULT 0 CHECK (games >= 0),
    losses            bigint NOT NULL DEFAULT 0 CHECK (losses >= 0),
    draws             bigint NOT NULL DEFAULT 0 CHECK (draws >= 0),
    wins              bigint NOT NULL DEFAULT 0 CHECK (wins >= 0),
    ll                bigint NOT NULL DEFAULT 0 CHECK (ll >= 0),
    ld                bigint NOT NULL DEFAULT 0 CHECK (ld >= 0),
    dd                bigint NOT NULL DEFAULT 0 CHECK (dd >= 0),
    dw                bigint NOT NULL DEFAULT 0 CHECK (dw >= 0),
    ww                bigint NOT NULL DEFAULT 0 CHECK (ww >= 0),
    crashes           bigint NOT NULL DEFAULT 0 CHECK (crashes >= 0),
    timelosses        bigint NOT NULL DEFAULT 0 CHECK (timelosses >= 0),
    illegals          bigint NOT NULL DEFAULT 0 CHECK (illegals >= 0),
    llr               double precision NOT NULL DEFAULT 0,
    finished_at       timestamptz,
    finished_by       text CHECK (finished_by IN ('sprt', 'games', 'bench', 'operator')),
    passed            boolean,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CHECK ((type = 'SPRT') = (elo_lower IS NOT NULL AND elo_upper IS NOT NULL AND elo_lower < elo_upper
                              AND lower_llr < 0 AND upper_llr > 0)),
    CHECK ((type = 'GAMES') = (max_games IS NOT NULL)),
    CHECK ((finished_at IS NULL) = (finished_by IS NULL)),
    CHECK (games = losses + draws + wins),
    CHECK ((dev_network IS NULL) = (dev_netname IS NULL) AND (base_network IS NULL) = (base_netname IS NULL))
);
COMMENT ON TABLE openbench.test IS
    'Tests: allot assignment workloads (same id) with their engines, book and time control, and their results so far';

-- A worker's session: OpenBench makes a machine each time a worker
-- starts, and so does the front end, as an allot host (same id) that
-- registered itself.  The secret is scrypt-hashed like a password.
CREATE TABLE IF NOT EXISTS openbench.machine (
    host_id       bigint PRIMARY KEY,                 -- allot.host.id
    account_id    bigint NOT NULL REFERENCES openbench.account,
    salt          bytea NOT NULL CHECK (length(salt) >= 16),
    hash          bytea NOT NULL CHECK (length(hash) = 32),
    scrypt_n      integer NOT NULL CHECK (scrypt_n BETWEEN 16384 AND 1048576 AND scrypt_n & (scrypt_n - 1) = 0),
    scrypt_r      integer NOT NULL CHECK (scrypt_r BETWEEN 1 AND 32),
    scrypt_p      integer NOT NULL CHECK (scrypt_p BETWEEN 1 AND 16),
    client_ver    integer NOT NULL,
    info          jsonb NOT NULL CHECK (jsonb_typeof(info) = 'object'),
    registered_at timestamptz NOT NULL DEFAULT now(),
    last_seen     timestamptz NOT NULL DEFAULT now(),
    nps           bigint CHECK (nps >= 0),
    dev_nps       bigint CHECK (dev_nps >= 0),
    base_nps      bigint CHECK (base_nps >= 0)
);
CREATE INDEX IF NOT EXISTS machine_last_seen_idx ON openbench.machine (last_seen);
COMMENT ON TABLE openbench.machine IS
    'Worker sessions: an allot host each (same id), its account, the hash of its secret and what it said of itself';

-- One row per workload handed out (OpenBench's "result"): the distribution
-- and openings it got, why allot chose it, and the games reported for it.
CREATE TABLE IF NOT EXISTS openbench.result (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    test_id           bigint NOT NULL REFERENCES openbench.test,
    host_id           bigint NOT NULL REFERENCES openbench.machine,
    assigned_at       timestamptz NOT NULL DEFAULT now(),
    repeated          boolean NOT NULL,
    focus_assigned    boolean NOT NULL,
    runner_count      integer NOT NULL CHECK (runner_count >= 1),
    concurrency_per   integer NOT NULL CHECK (concurrency_per >= 1),
    rounds_per_runner integer NOT NULL CHECK (rounds_per_runner >= 1),
    book_index        bigint NOT NULL CHECK (book_index >= 1),
    explanation       jsonb NOT NULL,
    games             bigint NOT NULL DEFAULT 0 CHECK (games >= 0),
    losses            bigint NOT NULL DEFAULT 0 CHECK (losses >= 0),
    draws             bigint NOT NULL DEFAULT 0 CHECK (draws >= 0),
    wins              bigint NOT NULL DEFAULT 0 CHECK (wins >= 0),
    ll                bigint NOT NULL DEFAULT 0 CHECK (ll >= 0),
    ld                bigint NOT NULL DEFAULT 0 CHECK (ld >= 0),
    dd                bigint NOT NULL DEFAULT 0 CHECK (dd >= 0),
    dw                bigint NOT NULL DEFAULT 0 CHECK (dw >= 0),
    ww                bigint NOT NULL DEFAULT 0 CHECK (ww >= 0),
    crashes           bigint NOT NULL DEFAULT 0 CHECK (crashes >= 0),
    timelosses        bigint NOT NULL DEFAULT 0 CHECK (timelosses >= 0),
    illegals          bigint NOT NULL DEFAULT 0 CHECK (illegals >= 0),
    stop_sent_at      timestamptz,
    CHECK (games = losses + draws + wins),
    CHECK (games <= 2::bigint * runner_count * rounds_per_runner)
);
CREATE INDEX IF NOT EXISTS result_host_idx ON openbench.result (host_id, id);
CREATE INDEX IF NOT EXISTS result_test_idx ON openbench.result (test_id);
COMMENT ON TABLE openbench.result IS
    'Workloads handed out: machine, test, distribution, first opening, allot''s explanation, and the games counted for it';
COMMENT ON COLUMN openbench.result.explanation IS
    'allot.explain_assignment for the machine, in the transaction that assigned the workload: {"exclude": [...], "workloads": [...]}';

-- Every report of results, counted or not (a report after its test
-- stopped is answered with stop and not counted).
CREATE TABLE IF NOT EXISTS openbench.submission (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    result_id   bigint NOT NULL REFERENCES openbench.result ON DELETE CASCADE,
    received_at timestamptz NOT NULL DEFAULT now(),
    counted     boolean NOT NULL,
    losses      integer NOT NULL CHECK (losses >= 0),
    draws       integer NOT NULL CHECK (draws >= 0),
    wins        integer NOT NULL CHECK (wins >= 0),
    ll          integer NOT NULL CHECK (ll >= 0),
    ld          integer NOT NULL CHECK (ld >= 0),
    dd          integer NOT NULL CHECK (dd >= 0),
    dw          integer NOT NULL CHECK (dw >= 0),
    ww          integer NOT NULL CHECK (ww >= 0),
    crashes     integer NOT NULL CHECK (crashes >= 0),
    timelosses  integer NOT NULL CHECK (timelosses >= 0),
    illegals    integer NOT NULL CHECK (illegals >= 0)
);
CREATE INDEX IF NOT EXISTS submission_result_idx ON openbench.submission (result_id);
COMMENT ON TABLE openbench.submission IS 'Every report of results, and whether it was counted';

-- The games of a workload, as the worker uploaded them (bzip2), in
-- DATA_DIR/pgns/<test>.<result>.<book index>.pgn.bz2.
CREATE TABLE IF NOT EXISTS openbench.pgn (
    result_id   bigint PRIMARY KEY REFERENCES openbench.result ON DELETE CASCADE,
    test_id     bigint NOT NULL,
    book_index  bigint NOT NULL,
    file_name   text NOT NULL,
    bytes       bigint NOT NULL CHECK (bytes > 0),
    received_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE openbench.pgn IS 'PGN uploads: one per workload, stored in DATA_DIR/pgns';

-- Errors workers report: a build that failed, a crash or an illegal move
-- in a game, a bench that did not match.
CREATE TABLE IF NOT EXISTS openbench.event (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at       timestamptz NOT NULL DEFAULT now(),
    host_id  bigint NOT NULL,
    test_id  bigint NOT NULL,
    kind     text NOT NULL CHECK (kind IN ('error', 'bench')),
    message  text NOT NULL,
    logs     text NOT NULL DEFAULT ''
);
COMMENT ON TABLE openbench.event IS 'Errors reported by workers: failed builds, engine crashes, wrong benches';

/* ---------------------------------------------------------------------------
 * What the front end's login may do beyond allot_web's functions.  Each
 * runs as its owner, the operator, with search_path pinned, and checks
 * everything it is given.
 * ------------------------------------------------------------------------- */

-- A worker's machine becomes an allot host that registered itself
-- (allot.register_host does not take compilers, tokens, sockets, cores,
-- Syzygy, noisy or focus).  Always a new host: OpenBench makes a machine
-- per session.  Only inserts; the operator removes the hosts of machines
-- long gone (admin.js prune-hosts).
CREATE OR REPLACE FUNCTION openbench.register_host(
        name text, os text, cpu_flags text[], compilers jsonb, tokens text[],
        threads int, physical_cores int, sockets int, syzygy_max int, noisy boolean, focus text[])
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    word    CONSTANT text := '^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$';
    version CONSTANT text := '^[0-9]{1,9}(\.[0-9]{1,9}){0,3}$';
    k       text;
    v       jsonb;
    id_     bigint;
    attempt int;
BEGIN
    IF threads IS NULL OR sockets IS NULL OR syzygy_max IS NULL OR noisy IS NULL
       OR name IS NULL OR os IS NULL OR cpu_flags IS NULL OR compilers IS NULL
       OR tokens IS NULL OR focus IS NULL THEN
        RAISE EXCEPTION 'only physical_cores may be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF threads NOT BETWEEN 1 AND 4096 THEN
        RAISE EXCEPTION 'threads must be between 1 and 4096, not %', threads USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF physical_cores NOT BETWEEN 1 AND threads THEN
        RAISE EXCEPTION 'physical_cores must be between 1 and threads (%), not %', threads, physical_cores
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF sockets NOT BETWEEN 1 AND threads THEN
        RAISE EXCEPTION 'sockets must be between 1 and threads (%), not %', threads, sockets
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF syzygy_max NOT BETWEEN 0 AND 7 THEN
        RAISE EXCEPTION 'syzygy_max must be between 0 and 7, not %', syzygy_max USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF length(name) > 255 OR name ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'name must be at most 255 printable characters' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF os !~ word THEN
        RAISE EXCEPTION 'os must be 1 to 64 letters, digits and "_.+-", not %', to_json(left(os, 40))
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF array_ndims(cpu_flags) > 1 OR array_ndims(tokens) > 1 OR array_ndims(focus) > 1 THEN
        RAISE EXCEPTION 'cpu_flags, tokens and focus must be one-dimensional' USING ERRCODE = 'array_subscript_error';
    END IF;
    IF cardinality(cpu_flags) > 256 OR cardinality(tokens) > 256 OR cardinality(focus) > 256 THEN
        RAISE EXCEPTION 'cpu_flags, tokens and focus hold at most 256 names each' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF EXISTS (SELECT FROM unnest(cpu_flags || tokens || focus) x WHERE x IS NULL OR x !~ word) THEN
        RAISE EXCEPTION 'cpu_flags, tokens and focus hold names of 1 to 64 letters, digits and "_.+-"'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF jsonb_typeof(compilers) <> 'object' OR (SELECT count(*) FROM jsonb_object_keys(compilers)) > 64 THEN
        RAISE EXCEPTION 'compilers must be an object of at most 64 compilers' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR k, v IN SELECT key, value FROM jsonb_each(compilers) LOOP
        IF k !~ word OR jsonb_typeof(v) <> 'string' OR v #>> '{}' !~ version THEN
            RAISE EXCEPTION 'compilers must map names to dotted versions, not % to %', to_json(left(k, 40)), left(v::text, 40)
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END LOOP;

    -- Ids the operator inserted by hand do not advance the identity
    -- sequence: step over them (as allot.register_host does).
    FOR attempt IN 1..100 LOOP
        INSERT INTO allot.host (name, os, cpu_flags, compilers, tokens, threads, physical_cores, sockets,
                                syzygy_max, noisy, focus, registered_at)
        VALUES (name, os, ARRAY(SELECT DISTINCT f FROM unnest(cpu_flags) f ORDER BY f), compilers,
                ARRAY(SELECT DISTINCT t FROM unnest(tokens) t ORDER BY t), threads, physical_cores, sockets,
                syzygy_max, noisy, ARRAY(SELECT DISTINCT f FROM unnest(focus) f ORDER BY f), now())
        ON CONFLICT (id) DO NOTHING
        RETURNING id INTO id_;
        EXIT WHEN id_ IS NOT NULL;
    END LOOP;
    IF id_ IS NULL THEN
        RAISE EXCEPTION 'no free host id after 100 tries of the identity sequence of allot.host'
            USING ERRCODE = 'unique_violation';
    END IF;
    RETURN id_;
END
$$;
COMMENT ON FUNCTION openbench.register_host(text, text, text[], jsonb, text[], int, int, int, int, boolean, text[]) IS
    'A worker''s machine becomes a new allot host that registered itself, with every figure OpenBench''s selection reads; checked';

-- What allot would decide for a machine, for the log kept beside each
-- assignment.  Workloads that are not OpenBench tests (another front end's)
-- are added to the exclude list: a worker cannot play them.  The front end
-- passes the returned list to allot.assign_workload in the same
-- transaction.  Only for hosts that registered themselves.
CREATE OR REPLACE FUNCTION openbench.explain_assignment(host_id bigint, exclude bigint[])
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    excluded bigint[];
BEGIN
    IF host_id IS NULL OR exclude IS NULL THEN
        RAISE EXCEPTION 'host_id and exclude must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT EXISTS (SELECT FROM allot.host h WHERE h.id = explain_assignment.host_id) THEN
        RAISE EXCEPTION 'host % does not exist', host_id USING ERRCODE = 'no_data_found';
    END IF;
    IF NOT EXISTS (SELECT FROM allot.host h WHERE h.id = explain_assignment.host_id
                                              AND h.registered_at IS NOT NULL) THEN
        RAISE EXCEPTION 'host % did not register itself', host_id USING ERRCODE = 'insufficient_privilege';
    END IF;
    excluded := exclude || ARRAY(
        SELECT w.id FROM allot.workload w
         WHERE w.app_id IS NULL AND w.state = 'active'
           AND NOT EXISTS (SELECT FROM openbench.test t WHERE t.id = w.id)
         ORDER BY w.id);
    RETURN jsonb_build_object(
        'exclude', to_jsonb(excluded),
        'workloads', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                       'id', e.workload_id, 'candidate', e.candidate, 'reason', e.reason,
                       'threads', e.threads, 'ratio', e.ratio, 'fair_ratio', e.fair_ratio,
                       'probability', e.probability) ORDER BY e.workload_id)
              FROM allot.explain_assignment(explain_assignment.host_id, exclude => excluded) e
             WHERE EXISTS (SELECT FROM openbench.test t WHERE t.id = e.workload_id)), '[]'));
END
$$;
COMMENT ON FUNCTION openbench.explain_assignment(bigint, bigint[]) IS
    'allot.explain_assignment for a self-registered host, over OpenBench tests only, with the exclude list to assign with';

-- A test the front end has marked finished stops in allot too.
CREATE OR REPLACE FUNCTION openbench.finish_test(test_id bigint)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE allot.workload w SET state = 'finished'
     WHERE w.id = finish_test.test_id AND w.app_id IS NULL AND w.state <> 'finished'
       AND EXISTS (SELECT FROM openbench.test t WHERE t.id = finish_test.test_id AND t.finished_at IS NOT NULL);
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION openbench.finish_test(bigint) IS
    'Sets the allot workload of a test finished, once openbench.test says it is';

/* ---------------------------------------------------------------------------
 * The web site (server.js serves it beside the worker's calls): people log
 * in with the accounts workers use, developers create tests and tunes,
 * approvers approve them, operators enable accounts.  Added to a farm set up
 * before it by running this file again: columns are added, checks widened.
 * ------------------------------------------------------------------------- */

-- Roles: every enabled account is a developer (it may create tests, and
-- stop, restart, modify, delete and restore its own); an approver also
-- approves tests and acts on anyone's; an operator also enables and
-- disables accounts and makes approvers on the site.  Only admin.js (the
-- database's operator) makes operators.  The e-mail address is shown to
-- its owner only.
ALTER TABLE openbench.account
    ADD COLUMN IF NOT EXISTS email text
        CHECK (email IS NULL OR (length(email) <= 254 AND email ~ '^[^[:space:][:cntrl:]@<>"]+@[^[:space:][:cntrl:]@<>"]+$')),
    ADD COLUMN IF NOT EXISTS approver boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS operator boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN openbench.account.approver IS 'May approve tests and act on anyone''s (the web site)';
COMMENT ON COLUMN openbench.account.operator IS 'May enable accounts and make approvers on the web site; set by admin.js only';

-- A browser's login: the cookie holds a random token, the table only its
-- sha256.  Every form posted in the session carries its CSRF token.
CREATE TABLE IF NOT EXISTS openbench.session (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    account_id bigint NOT NULL REFERENCES openbench.account ON DELETE CASCADE,
    csrf       text NOT NULL CHECK (csrf ~ '^[A-Za-z0-9_-]{43}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    seen_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS session_account_idx ON openbench.session (account_id);
COMMENT ON TABLE openbench.session IS 'Web site logins: the sha256 of each session cookie, its account and CSRF token';

-- Where an engine's source is, for the site's test form (admin.js
-- add-engine --repo): the repository a developer's branches are looked up
-- in unless the form names a fork.
ALTER TABLE openbench.engine
    ADD COLUMN IF NOT EXISTS repository text
        CHECK (repository IS NULL OR (length(repository) <= 2000 AND repository ~ '^(https?|git)://[^[:space:][:cntrl:]]+$'));

-- Who made a test, whether an approver let it run, whether it was
-- deleted (hidden; restore brings it back), the commit message or the
-- author's note, and the repositories the two sides came from.  Tests made
-- with admin.js have no author and are approved.
ALTER TABLE openbench.test
    ADD COLUMN IF NOT EXISTS author_id bigint REFERENCES openbench.account,
    ADD COLUMN IF NOT EXISTS approved boolean NOT NULL DEFAULT true,
    ADD COLUMN IF NOT EXISTS deleted boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS info text NOT NULL DEFAULT '' CHECK (length(info) <= 4096),
    ADD COLUMN IF NOT EXISTS dev_repo text
        CHECK (dev_repo IS NULL OR (length(dev_repo) <= 2000 AND dev_repo ~ '^(https?|git)://[^[:space:][:cntrl:]]+$')),
    ADD COLUMN IF NOT EXISTS base_repo text
        CHECK (base_repo IS NULL OR (length(base_repo) <= 2000 AND base_repo ~ '^(https?|git)://[^[:space:][:cntrl:]]+$'));
-- SPSA tunes, and tunes stopped at their number of iterations; tests
-- stopped on the site ('user') rather than by admin.js ('operator').
ALTER TABLE openbench.test DROP CONSTRAINT IF EXISTS test_type_check;
ALTER TABLE openbench.test ADD CONSTRAINT test_type_check CHECK (type IN ('SPRT', 'GAMES', 'SPSA'));
ALTER TABLE openbench.test DROP CONSTRAINT IF EXISTS test_finished_by_check;
ALTER TABLE openbench.test ADD CONSTRAINT test_finished_by_check
    CHECK (finished_by IN ('sprt', 'games', 'spsa', 'bench', 'operator', 'user'));
CREATE INDEX IF NOT EXISTS test_author_idx ON openbench.test (author_id);

-- An SPSA tune (spsa.js): OpenBench's settings, and its parameters with
-- their current values.
CREATE TABLE IF NOT EXISTS openbench.spsa_run (
    test_id           bigint PRIMARY KEY REFERENCES openbench.test,
    reporting_type    text NOT NULL CHECK (reporting_type IN ('BULK', 'BATCHED')),
    distribution_type text NOT NULL CHECK (distribution_type IN ('SINGLE', 'MULTIPLE')),
    alpha             double precision NOT NULL CHECK (alpha > 0 AND alpha <= 10),
    gamma             double precision NOT NULL CHECK (gamma > 0 AND gamma <= 10),
    a_ratio           double precision NOT NULL CHECK (a_ratio > 0 AND a_ratio <= 1000),
    iterations        bigint NOT NULL CHECK (iterations BETWEEN 1 AND 100000000),
    pairs_per         integer NOT NULL CHECK (pairs_per BETWEEN 1 AND 1024)
);
COMMENT ON TABLE openbench.spsa_run IS 'SPSA tunes: OpenBench''s settings (alpha, gamma, A ratio, iterations, pairs per iteration)';

CREATE TABLE IF NOT EXISTS openbench.spsa_parameter (
    test_id   bigint NOT NULL REFERENCES openbench.spsa_run,
    index     integer NOT NULL CHECK (index BETWEEN 0 AND 127),
    name      text NOT NULL CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$'),
    is_float  boolean NOT NULL,
    value     double precision NOT NULL,
    start     double precision NOT NULL,
    min_value double precision NOT NULL,
    max_value double precision NOT NULL,
    c_end     double precision NOT NULL CHECK (c_end > 0 AND c_end < 'Infinity'),
    r_end     double precision NOT NULL CHECK (r_end > 0 AND r_end < 'Infinity'),
    c_value   double precision NOT NULL CHECK (c_value > 0 AND c_value < 'Infinity'),
    a_value   double precision NOT NULL CHECK (a_value > 0 AND a_value < 'Infinity'),
    PRIMARY KEY (test_id, index),
    UNIQUE (test_id, name),
    CHECK (min_value < max_value AND start BETWEEN min_value AND max_value AND value BETWEEN min_value AND max_value)
);
COMMENT ON TABLE openbench.spsa_parameter IS 'The parameters of SPSA tunes: start, bounds, c and r at the end, and the value now';

-- The perturbation an SPSA workload was given, to check its report
-- against; and each report's delta, for the history of a tune.
ALTER TABLE openbench.result ADD COLUMN IF NOT EXISTS spsa jsonb CHECK (spsa IS NULL OR jsonb_typeof(spsa) = 'object');
ALTER TABLE openbench.submission ADD COLUMN IF NOT EXISTS spsa_delta double precision[];

-- What people did on the site (OpenBench's events): created, approved,
-- stopped, modified... a test, enabled an account.
CREATE TABLE IF NOT EXISTS openbench.action (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    account_id bigint NOT NULL REFERENCES openbench.account,
    test_id    bigint REFERENCES openbench.test,
    summary    text NOT NULL CHECK (length(summary) BETWEEN 1 AND 200 AND summary !~ '[[:cntrl:]]')
);
COMMENT ON TABLE openbench.action IS 'What accounts did on the web site, for the events page';

-- allot's side of each test, for the site's pages: the front end's login
-- reads no allot table, and this view (its owner's rights) shows it the
-- rows of OpenBench tests only, with the hosts allot counts as playing.
CREATE OR REPLACE VIEW openbench.test_workload AS
SELECT w.id, w.name, w.priority, w.throughput, w.state, w.mode,
       ARRAY(SELECT a.host_id FROM allot.assignment a
              WHERE a.workload_id = w.id AND a.counted ORDER BY a.host_id) AS hosts
  FROM allot.workload w
 WHERE w.app_id IS NULL AND EXISTS (SELECT FROM openbench.test t WHERE t.id = w.id);
COMMENT ON VIEW openbench.test_workload IS
    'allot.workload of each OpenBench test (name, priority, throughput, state, mode) and the hosts allot counts on it';

-- A test's priority and throughput as people may set them (NULL: not
-- given); the same bounds as admin.js create-test.
CREATE OR REPLACE FUNCTION openbench.check_schedule(priority int, throughput double precision)
    RETURNS void
    LANGUAGE plpgsql IMMUTABLE CALLED ON NULL INPUT
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF priority NOT BETWEEN -1000 AND 1000 THEN
        RAISE EXCEPTION 'priority must be between -1000 and 1000, not %', priority USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT (throughput >= 1 AND throughput <= 1e9) THEN
        RAISE EXCEPTION 'throughput must be between 1 and 1000000000, not %', throughput USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

-- A test or a tune, made on the site or by admin.js: its allot workload
-- and its row, in one transaction.  spec holds openbench.test's columns
-- that describe a test (results and state start empty whatever it says);
-- spsa, for a tune, its settings and parameters (spsa.js).  The workload
-- is paused until the test is approved.
CREATE OR REPLACE FUNCTION openbench.create_test(spec jsonb, spsa jsonb, name text, priority int,
                                                 throughput double precision, approved boolean)
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t            openbench.test;
    threads      CONSTANT text := '(^|\s)Threads=([0-9]{1,4})(\s|$)';
    dev_threads  int;
    base_threads int;
    pieces       int;
    time_based   boolean;
    mode         text := 'games';
    id_          bigint;
    p            jsonb;
BEGIN
    IF spec IS NULL OR jsonb_typeof(spec) <> 'object' OR name IS NULL OR priority IS NULL
       OR throughput IS NULL OR approved IS NULL THEN
        RAISE EXCEPTION 'spec (an object), name, priority, throughput and approved are required'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM openbench.check_schedule(priority, throughput);
    t := jsonb_populate_record(NULL::openbench.test, spec);
    IF (t.type = 'SPSA') <> (spsa IS NOT NULL) THEN
        RAISE EXCEPTION 'a tune (type SPSA) and only a tune has SPSA settings' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    dev_threads := (regexp_match(t.dev_options, threads))[2]::int;
    base_threads := (regexp_match(t.base_options, threads))[2]::int;
    IF coalesce(dev_threads, 0) < 1 OR coalesce(base_threads, 0) < 1 THEN
        RAISE EXCEPTION 'each side''s options must set Threads=N (N at least 1): %, %', to_json(t.dev_options), to_json(t.base_options)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    pieces := greatest(coalesce((regexp_match(t.syzygy_adj, '^([3-7])-MAN$'))[1]::int, 0),
                       coalesce((regexp_match(t.syzygy_wdl, '^([3-7])-MAN$'))[1]::int, 0));
    time_based := t.upload_pgns = 'VERBOSE' OR t.dev_time_control !~ '^(N|D)=' OR t.base_time_control !~ '^(N|D)=';
    IF spsa IS NOT NULL THEN
        mode := CASE spsa ->> 'distribution_type' WHEN 'SINGLE' THEN 'spsa_single'
                                                  WHEN 'MULTIPLE' THEN 'spsa_multiple' END;
        IF mode IS NULL THEN
            RAISE EXCEPTION 'an SPSA distribution is SINGLE or MULTIPLE, not %', spsa -> 'distribution_type'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END IF;

    INSERT INTO allot.workload (name, engine, base_engine, priority, throughput, dev_threads, base_threads,
                                syzygy, time_based, mode, workload_size, state)
    VALUES (create_test.name, t.dev_engine, t.base_engine, create_test.priority, create_test.throughput,
            dev_threads, base_threads, pieces, time_based, mode, t.workload_size,
            CASE WHEN create_test.approved THEN 'active' ELSE 'paused' END)
    RETURNING id INTO id_;
    INSERT INTO openbench.test (id, type,
        dev_engine, dev_name, dev_source, dev_sha, dev_bench, dev_options, dev_network, dev_netname, dev_time_control,
        base_engine, base_name, base_source, base_sha, base_bench, base_options, base_network, base_netname, base_time_control,
        book_name, upload_pgns, scale_method, scale_nps, syzygy_adj, syzygy_wdl, win_adj, draw_adj, workload_size,
        use_penta, elo_lower, elo_upper, alpha, beta, lower_llr, upper_llr, max_games,
        author_id, approved, info, dev_repo, base_repo)
    VALUES (id_, t.type,
        t.dev_engine, t.dev_name, t.dev_source, t.dev_sha, t.dev_bench, t.dev_options, t.dev_network, t.dev_netname, t.dev_time_control,
        t.base_engine, t.base_name, t.base_source, t.base_sha, t.base_bench, t.base_options, t.base_network, t.base_netname, t.base_time_control,
        t.book_name, t.upload_pgns, t.scale_method, t.scale_nps, t.syzygy_adj, t.syzygy_wdl, t.win_adj, t.draw_adj, t.workload_size,
        coalesce(t.use_penta, true), t.elo_lower, t.elo_upper, t.alpha, t.beta, t.lower_llr, t.upper_llr, t.max_games,
        t.author_id, create_test.approved, coalesce(t.info, ''), t.dev_repo, t.base_repo);

    IF spsa IS NOT NULL THEN
        INSERT INTO openbench.spsa_run (test_id, reporting_type, distribution_type, alpha, gamma, a_ratio, iterations, pairs_per)
        SELECT id_, s.reporting_type, s.distribution_type, s.alpha, s.gamma, s.a_ratio, s.iterations, t.workload_size
          FROM jsonb_populate_record(NULL::openbench.spsa_run, spsa) s;
        IF jsonb_typeof(spsa -> 'parameters') <> 'array' OR jsonb_array_length(spsa -> 'parameters') NOT BETWEEN 1 AND 128 THEN
            RAISE EXCEPTION 'a tune has 1 to 128 parameters' USING ERRCODE = 'invalid_parameter_value';
        END IF;
        INSERT INTO openbench.spsa_parameter (test_id, index, name, is_float, value, start, min_value, max_value,
                                              c_end, r_end, c_value, a_value)
        SELECT id_, (o.n - 1)::int, x.name, x.is_float, x.start, x.start, x.min_value, x.max_value,
               x.c_end, x.r_end, x.c_value, x.a_value
          FROM jsonb_array_elements(spsa -> 'parameters') WITH ORDINALITY AS o(p, n),
               LATERAL jsonb_populate_record(NULL::openbench.spsa_parameter, o.p) x;
        IF EXISTS (SELECT FROM openbench.spsa_parameter x WHERE x.test_id = id_ AND NOT x.is_float
                      AND (x.start <> trunc(x.start) OR x.min_value <> trunc(x.min_value) OR x.max_value <> trunc(x.max_value))) THEN
            RAISE EXCEPTION 'an int parameter''s start, min and max must be whole numbers' USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END IF;
    RETURN id_;
END
$$;
COMMENT ON FUNCTION openbench.create_test(jsonb, jsonb, text, int, double precision, boolean) IS
    'A test or an SPSA tune: its allot workload (paused until approved) and its rows, checked by the tables';

-- allot's workload follows its test: finished when the test stopped or
-- was deleted, paused while it waits for approval, active otherwise; and
-- the priority and throughput given (NULL: unchanged).
CREATE OR REPLACE FUNCTION openbench.sync_workload(test_id bigint, priority int, throughput double precision)
    RETURNS text
    LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    state_ text;
BEGIN
    PERFORM openbench.check_schedule(priority, throughput);
    UPDATE allot.workload w
       SET state = CASE WHEN t.finished_at IS NOT NULL OR t.deleted THEN 'finished'
                        WHEN NOT t.approved THEN 'paused' ELSE 'active' END,
           priority = coalesce(sync_workload.priority, w.priority),
           throughput = coalesce(sync_workload.throughput, w.throughput)
      FROM openbench.test t
     WHERE t.id = sync_workload.test_id AND w.id = t.id AND w.app_id IS NULL
    RETURNING w.state INTO state_;
    IF state_ IS NULL THEN
        RAISE EXCEPTION 'no test %', test_id USING ERRCODE = 'no_data_found';
    END IF;
    RETURN state_;
END
$$;
COMMENT ON FUNCTION openbench.sync_workload(bigint, int, double precision) IS
    'Sets a test''s allot workload finished, paused or active from the test''s row, and its priority and throughput';

/* ---------------------------------------------------------------------------
 * Privileges: the operator owns everything; the front end's login reads
 * the operator's tables, writes its rows, and calls the five functions.
 * It may add accounts (the site's registration) and change their
 * password, e-mail, enabled and approver flags, but not make operators.
 * ------------------------------------------------------------------------- */
REVOKE ALL ON SCHEMA openbench FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA openbench FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA openbench FROM PUBLIC;
GRANT USAGE ON SCHEMA openbench TO :"web";
GRANT SELECT ON openbench.account, openbench.engine, openbench.book, openbench.network, openbench.test,
                openbench.spsa_run, openbench.spsa_parameter, openbench.test_workload TO :"web";
GRANT INSERT (name, email, salt, hash, scrypt_n, scrypt_r, scrypt_p, enabled) ON openbench.account TO :"web";
GRANT UPDATE (email, salt, hash, scrypt_n, scrypt_r, scrypt_p, enabled, approver) ON openbench.account TO :"web";
GRANT SELECT, INSERT, DELETE ON openbench.session TO :"web";
GRANT UPDATE (seen_at) ON openbench.session TO :"web";
GRANT UPDATE (book_index, games, losses, draws, wins, ll, ld, dd, dw, ww, crashes, timelosses, illegals,
              llr, finished_at, finished_by, passed, approved, deleted, info) ON openbench.test TO :"web";
GRANT UPDATE (value) ON openbench.spsa_parameter TO :"web";
GRANT SELECT, INSERT ON openbench.machine TO :"web";
GRANT UPDATE (last_seen, nps, dev_nps, base_nps) ON openbench.machine TO :"web";
GRANT SELECT, INSERT ON openbench.result TO :"web";
GRANT UPDATE (games, losses, draws, wins, ll, ld, dd, dw, ww, crashes, timelosses, illegals, stop_sent_at)
    ON openbench.result TO :"web";
GRANT SELECT, INSERT ON openbench.submission, openbench.pgn, openbench.event, openbench.action TO :"web";
GRANT EXECUTE ON FUNCTION openbench.register_host(text, text, text[], jsonb, text[], int, int, int, int, boolean, text[]),
                          openbench.explain_assignment(bigint, bigint[]),
                          openbench.finish_test(bigint),
                          openbench.create_test(jsonb, jsonb, text, int, double precision, boolean),
                          openbench.sync_workload(bigint, int, double precision)
    TO :"web";
