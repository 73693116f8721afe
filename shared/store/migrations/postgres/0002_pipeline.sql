-- The durable pipeline: tenants and their tokens, one row per step of a review (its state,
-- attempts and lease generation), the outbox of jobs to push to the queue, and batches.
-- Postgres flavour; ../sqlite/0002_pipeline.sql must keep the same tables and meanings.

CREATE TABLE tenants (
    id                  TEXT PRIMARY KEY,
    name                TEXT NOT NULL UNIQUE,
    created_at          TEXT NOT NULL,
    max_running_reviews BIGINT NOT NULL DEFAULT 4
);

CREATE TABLE api_tokens (
    token_sha256 TEXT PRIMARY KEY,   -- tokens are stored hashed, never in clear
    tenant_id    TEXT NOT NULL REFERENCES tenants (id),
    created_at   TEXT NOT NULL,
    revoked_at   TEXT
);

CREATE TABLE batches (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT,
    created_at TEXT NOT NULL,
    total      BIGINT NOT NULL
);

ALTER TABLE reviews ADD COLUMN tenant_id TEXT;
ALTER TABLE reviews ADD COLUMN priority BIGINT NOT NULL DEFAULT 0;      -- 0 interactive, 1 re-review, 2 batch
ALTER TABLE reviews ADD COLUMN batch_id TEXT;
ALTER TABLE reviews ADD COLUMN pr_key TEXT;                             -- same pull request: a newer head supersedes
ALTER TABLE reviews ADD COLUMN request TEXT;                            -- the submitted request, JSON
ALTER TABLE reviews ADD COLUMN created_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN admitted_us BIGINT;
ALTER TABLE reviews ADD COLUMN deadline_us BIGINT;
ALTER TABLE reviews ADD COLUMN open_pipelines BIGINT NOT NULL DEFAULT 0; -- fan-in counter
ALTER TABLE reviews ADD COLUMN superseded_by TEXT;
CREATE INDEX reviews_admission ON reviews (admitted_us, priority, created_us);
CREATE INDEX reviews_by_tenant ON reviews (tenant_id, created_us);

CREATE TABLE steps (
    review_id      TEXT NOT NULL REFERENCES reviews (id) ON DELETE CASCADE,
    step           TEXT NOT NULL,
    key            TEXT NOT NULL,    -- '' for review-level steps; the finding pipeline's key otherwise
    queue          TEXT NOT NULL,    -- evidence, model, control, sandbox
    state          TEXT NOT NULL,    -- queued, running, done, failed, dead, cancelled
    attempts       BIGINT NOT NULL DEFAULT 0,
    lease_gen      BIGINT NOT NULL DEFAULT 0,
    lease_owner    TEXT,
    lease_until_us BIGINT,
    pushed_us      BIGINT,           -- last time a job for it went to the queue
    not_before_us  BIGINT NOT NULL DEFAULT 0,
    pipeline       BIGINT NOT NULL,  -- 1: its end closes one finding pipeline (fan-in)
    input          TEXT,
    result         TEXT,
    error          TEXT,
    created_us     BIGINT NOT NULL,
    updated_us     BIGINT NOT NULL,
    PRIMARY KEY (review_id, step, key)
);
CREATE INDEX steps_by_state ON steps (state, lease_until_us);

CREATE TABLE outbox (
    id            BIGSERIAL PRIMARY KEY,
    review_id     TEXT NOT NULL,
    step          TEXT NOT NULL,
    key           TEXT NOT NULL,
    queue         TEXT NOT NULL,
    not_before_us BIGINT NOT NULL,
    created_us    BIGINT NOT NULL
);
