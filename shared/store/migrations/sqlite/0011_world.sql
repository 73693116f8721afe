-- The World Model (see the Postgres migration). SQLite writes one transaction at a time
-- (Proven's write transactions take the lock up front), so the chain rule is enforced by
-- the writer's check inside its transaction; the interval rule by a CHECK.
CREATE TABLE world_entities (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    attrs TEXT NOT NULL DEFAULT '{}',
    source TEXT NOT NULL,
    first_seen BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE world_edges (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    from_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    context TEXT NOT NULL,
    to_id TEXT NOT NULL,
    valid_from BIGINT NOT NULL,
    valid_to BIGINT,
    source TEXT NOT NULL,
    PRIMARY KEY (tenant_id, id),
    CHECK (valid_to IS NULL OR valid_to > valid_from)
);
CREATE INDEX world_edges_chain ON world_edges (tenant_id, from_id, kind, context, valid_from);
CREATE INDEX world_edges_to ON world_edges (tenant_id, to_id);
