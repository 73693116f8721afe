-- `/ui` sessions: the browser's cookie holds an opaque random id, never an API token. Only
-- the id's hash is kept (as tokens are); a session lives until it expires, its token is
-- revoked, or the person logs out (the row is deleted).
CREATE TABLE ui_sessions (
    id_sha256    TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL REFERENCES api_tokens (token_sha256),
    created_at   TEXT NOT NULL,
    expires_at   BIGINT NOT NULL      -- seconds since the epoch
);
CREATE INDEX ui_sessions_expiry ON ui_sessions (expires_at);
