-- The World Model's audit: every mutation of an entity or an edge, in the order it was
-- written (Meterless's World Model, audit-001); seq comes from one sequence, inside the
-- writing transaction.
CREATE TABLE world_audit (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    at_us BIGINT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    source TEXT NOT NULL
);
CREATE INDEX world_audit_tenant ON world_audit (tenant_id, seq);
