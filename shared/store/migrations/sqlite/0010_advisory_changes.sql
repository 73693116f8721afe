-- What each import or sync changed in the advisory data: a change set (`imports.change_set`;
-- one per `proven db import`, one for all sources of a `proven db sync`) and, per change,
-- the advisory or KEV entry and its kind: `new`, `modified`, `withdrawn` (a record that was
-- not withdrawn, or not there, now is) or `kev` (a CVE newly in the KEV catalogue).
-- Batch re-review reads it to find the repositories a change set newly affects.
ALTER TABLE imports ADD COLUMN change_set TEXT;
CREATE TABLE advisory_changes (
    change_set  TEXT NOT NULL,
    id          TEXT NOT NULL,     -- an advisory id, or a CVE for kind `kev`
    kind        TEXT NOT NULL,
    at          TEXT NOT NULL,
    PRIMARY KEY (change_set, kind, id)
);
CREATE INDEX advisory_changes_at ON advisory_changes (at);
