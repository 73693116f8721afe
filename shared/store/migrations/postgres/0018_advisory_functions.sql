-- The vulnerable functions RustSec's own advisory database names (`[affected.functions]`),
-- which its OSV export as the data kit ships it leaves out. Kept apart from the advisory's
-- record: reading them is an enrichment, not a change of the advisory (no `advisory_changes`
-- row, no new digest), and it survives a later import of the record in either order. The
-- match query adds them to the affected entry as OSV spells them
-- (`ecosystem_specific.affects.functions`) when the record has none.
CREATE TABLE advisory_functions (
    advisory_id     TEXT NOT NULL,
    ecosystem       TEXT NOT NULL, -- OSV ecosystem (`crates.io`)
    normalized_name TEXT NOT NULL,
    functions       TEXT NOT NULL, -- JSON array of paths from the crate's root
    origin          TEXT NOT NULL,
    PRIMARY KEY (advisory_id, ecosystem, normalized_name)
);
