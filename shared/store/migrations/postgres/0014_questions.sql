-- `proven ask` over HTTP (POST /v1/questions): each question a durable job of its own. A
-- worker of the model family claims it under a lease; one whose worker died is claimed
-- again when its lease ends; the answer (or the error) is kept with it.
CREATE TABLE questions (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    repository  TEXT NOT NULL,
    rev         TEXT NOT NULL,
    question    TEXT NOT NULL,
    status      TEXT NOT NULL,          -- queued, running, done, failed
    attempts    INTEGER NOT NULL DEFAULT 0,
    lease_until BIGINT,                 -- seconds since the epoch, while running
    answer      TEXT,                   -- the answer document (JSON), when done
    error       TEXT,                   -- why it failed, when failed
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX questions_open ON questions (status, created_at);
CREATE INDEX questions_tenant ON questions (tenant_id, created_at);
