-- One record per sandbox job: the first runner to finish a job records it; a redelivered
-- job finds the record and does not run again.
CREATE TABLE sandbox_runs (
    job_key    TEXT PRIMARY KEY,
    record     TEXT NOT NULL,      -- the run record, JSON
    created_at TEXT NOT NULL
);
