-- The example web layer's own schema: the hosts' keys, as slow salted hashes.
-- Run it once per farm database, as its owner or a superuser, after
-- CREATE EXTENSION allot (it uses allot's roles):
--
--     psql -d farm -f examples/web/setup.sql
--
-- allot's tables hold nothing of this: host authentication is the web
-- layer's business, and another web layer may do it another way.  Running
-- it again changes nothing.

\set ON_ERROR_STOP 1

CREATE SCHEMA IF NOT EXISTS web;
COMMENT ON SCHEMA web IS
    'allot''s example web layer (examples/web): the keys its hosts authenticate with';

CREATE TABLE IF NOT EXISTS web.host_key (
    host_id   bigint PRIMARY KEY REFERENCES allot.host (id) ON DELETE CASCADE,
    salt      bytea NOT NULL CHECK (length(salt) >= 16),
    hash      bytea NOT NULL CHECK (length(hash) = 32),
    -- scrypt's cost parameters, bounded so that one check stays under a
    -- second and 1 GiB: the server runs whatever a row says
    scrypt_n  integer NOT NULL CHECK (scrypt_n BETWEEN 16384 AND 1048576
                                      AND scrypt_n & (scrypt_n - 1) = 0),
    scrypt_r  integer NOT NULL CHECK (scrypt_r BETWEEN 1 AND 32),
    scrypt_p  integer NOT NULL CHECK (scrypt_p BETWEEN 1 AND 16),
    issued_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE web.host_key IS
    'One key per host, issued by the operator with examples/web/host-key.js; the key itself is never stored';
COMMENT ON COLUMN web.host_key.host_id IS 'the allot.host the key speaks for; deleting the host deletes its key';
COMMENT ON COLUMN web.host_key.salt IS 'random salt of the hash, 16 bytes';
COMMENT ON COLUMN web.host_key.hash IS 'scrypt(key, salt), 32 bytes';
COMMENT ON COLUMN web.host_key.scrypt_n IS 'scrypt CPU/memory cost N (a power of 2) the hash was made with';
COMMENT ON COLUMN web.host_key.scrypt_r IS 'scrypt block size r the hash was made with';
COMMENT ON COLUMN web.host_key.scrypt_p IS 'scrypt parallelisation p the hash was made with';
COMMENT ON COLUMN web.host_key.issued_at IS 'when the key was issued; a new key replaces the old one';

-- The web login (a member of allot_web) reads the hashes to check keys;
-- operators (allot_admin) issue and revoke them.  Nobody else sees them.
REVOKE ALL ON SCHEMA web FROM PUBLIC;
REVOKE ALL ON web.host_key FROM PUBLIC;
GRANT USAGE ON SCHEMA web TO allot_web, allot_admin;
GRANT SELECT ON web.host_key TO allot_web;
GRANT SELECT, INSERT, UPDATE, DELETE ON web.host_key TO allot_admin;
