-- H-MEM is per tenant: a refutation one organisation's review proved never silences
-- another organisation's finding, even in the same repository. `repository` now holds
-- the repository's normalised identity (every spelling of one address shares it).
-- Records written before this migration belong to no tenant ('').
ALTER TABLE memory ADD COLUMN tenant_id TEXT NOT NULL DEFAULT '';
CREATE INDEX memory_by_scope ON memory (tenant_id, repository, fingerprint);
