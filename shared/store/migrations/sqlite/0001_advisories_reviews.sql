-- Advisory data (OSV, KEV, EPSS) and reviews with their traces. SQLite flavour; the
-- Postgres flavour in ../postgres must keep the same tables, columns and meanings.

CREATE TABLE advisories (
    id          TEXT PRIMARY KEY,
    modified    TEXT,
    modified_us BIGINT,            -- modified as microseconds since the epoch, for "newer"
    published   TEXT,
    withdrawn   TEXT,
    summary     TEXT,
    aliases     TEXT NOT NULL,     -- JSON array of strings
    severity    TEXT NOT NULL,     -- JSON array of OSV severity objects
    digest      TEXT NOT NULL,     -- sha256 of the record text as imported
    origin      TEXT NOT NULL,     -- file (and line) it was imported from
    record      TEXT NOT NULL      -- the OSV record, whole
);

-- One row per affected[] entry, keyed for the match query.
CREATE TABLE affected_packages (
    advisory_id     TEXT NOT NULL REFERENCES advisories (id) ON DELETE CASCADE,
    idx             INTEGER NOT NULL,
    ecosystem       TEXT NOT NULL, -- OSV ecosystem without its ":suffix"
    name            TEXT NOT NULL,
    normalized_name TEXT NOT NULL,
    withdrawn       BOOLEAN NOT NULL,
    affected        TEXT NOT NULL, -- the affected[] entry, JSON
    PRIMARY KEY (advisory_id, idx)
);
CREATE INDEX affected_by_package ON affected_packages (ecosystem, normalized_name);

CREATE TABLE kev (
    cve        TEXT PRIMARY KEY,
    vendor     TEXT,
    product    TEXT,
    name       TEXT,
    date_added TEXT,
    ransomware TEXT,
    catalog    TEXT,               -- catalogue version it came from
    entry      TEXT NOT NULL       -- the row, JSON
);

CREATE TABLE epss (
    cve         TEXT PRIMARY KEY,
    probability DOUBLE PRECISION NOT NULL,
    percentile  DOUBLE PRECISION NOT NULL,
    score_date  TEXT
);

-- One row per import run: what was read and what changed (provenance of the tables above).
CREATE TABLE imports (
    id          TEXT PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    source      TEXT NOT NULL,
    summary     TEXT NOT NULL      -- JSON counts
);

CREATE TABLE reviews (
    id          TEXT PRIMARY KEY,
    created_at  TEXT NOT NULL,
    finished_at TEXT,
    repository  TEXT NOT NULL,
    base_rev    TEXT NOT NULL,
    head_rev    TEXT NOT NULL,
    base_commit TEXT,
    head_commit TEXT,
    status      TEXT NOT NULL,     -- running, complete, incomplete, failed
    result      TEXT               -- the review result document, JSON
);

-- Append-only; the id orders a review's lines (concurrent writers never collide on it).
CREATE TABLE trace_events (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    review_id TEXT NOT NULL REFERENCES reviews (id) ON DELETE CASCADE,
    at        TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    kind      TEXT NOT NULL,
    event     TEXT NOT NULL        -- JSON object
);
CREATE INDEX trace_by_review ON trace_events (review_id, id);
