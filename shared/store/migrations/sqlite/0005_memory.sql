-- H-MEM: what reviews refuted, so a refuted finding does not come back. Append-only: a
-- newer record for the same fingerprint supersedes the older one (superseded_by), which is
-- kept; refutations are never deleted.
CREATE TABLE memory (
    id            TEXT PRIMARY KEY,
    repository    TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    kind          TEXT NOT NULL,
    path          TEXT NOT NULL,
    symbol        TEXT,
    claim         TEXT NOT NULL,
    refutation    TEXT NOT NULL,     -- JSON: the Skeptic's reason and the runs that showed it
    provenance    TEXT NOT NULL,     -- JSON: review id, models, run ids
    confidence    DOUBLE PRECISION NOT NULL,
    created_at    TEXT NOT NULL,
    superseded_by TEXT
);
CREATE INDEX memory_by_fingerprint ON memory (repository, fingerprint);
