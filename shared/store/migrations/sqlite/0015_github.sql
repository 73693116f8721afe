-- Proven as a GitHub App. Each webhook delivery is kept by its X-GitHub-Delivery id and
-- the SHA-256 of its body: a redelivery, or the same signed body sent again under another
-- id, creates nothing. An installation's account is its tenant. A publication is the
-- durable job that posts a review on its pull request (the check run first, then the PR
-- review found again by its marker, the check's conclusion, SARIF), claimed by a worker
-- under a lease; what it posted is recorded as it goes, so a publish that dies halfway
-- resumes instead of posting twice.
CREATE TABLE github_deliveries (
    delivery_id TEXT PRIMARY KEY,
    body_sha256 TEXT NOT NULL UNIQUE,
    event       TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    received_at TEXT NOT NULL
);
CREATE TABLE github_installations (
    installation_id BIGINT PRIMARY KEY,
    account         TEXT NOT NULL,
    tenant_id       TEXT NOT NULL,
    removed_at      TEXT,
    updated_at      TEXT NOT NULL
);
CREATE TABLE github_repositories (
    installation_id BIGINT NOT NULL,
    full_name       TEXT NOT NULL,
    added_at        TEXT NOT NULL,
    PRIMARY KEY (installation_id, full_name)
);
CREATE TABLE github_publications (
    review_id       TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL,
    installation_id BIGINT NOT NULL,
    repository      TEXT NOT NULL,          -- owner/name
    pull_number     BIGINT NOT NULL,
    head_sha        TEXT NOT NULL,
    state           TEXT NOT NULL,          -- pending, cancelling, done, failed, superseded
    attempts        INTEGER NOT NULL DEFAULT 0,
    not_before      BIGINT NOT NULL,        -- seconds since the epoch
    lease_until     BIGINT,
    check_run_id    BIGINT,
    comment_id      BIGINT,
    sarif           TEXT,                   -- uploaded, not allowed
    error           TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX github_publications_open ON github_publications (state, not_before);
CREATE INDEX github_publications_head ON github_publications (repository, head_sha);
