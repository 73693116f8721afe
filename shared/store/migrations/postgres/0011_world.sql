-- The World Model: the entities reviews have seen (repositories, packages at versions, ...)
-- and typed edges between them with validity intervals, per tenant. Times are microseconds
-- since the epoch; an edge is valid over [valid_from, valid_to), valid_to NULL while open.
-- An edge chain (tenant, from, kind, context) holds at most one valid edge at any instant:
-- the exclusion constraint enforces it whatever the writers do concurrently.
CREATE EXTENSION IF NOT EXISTS btree_gist;

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
    CONSTRAINT world_edge_interval CHECK (valid_to IS NULL OR valid_to > valid_from),
    CONSTRAINT world_edge_overlap EXCLUDE USING gist (
        tenant_id WITH =, from_id WITH =, kind WITH =, context WITH =,
        int8range(valid_from, valid_to) WITH &&
    )
);
CREATE INDEX world_edges_chain ON world_edges (tenant_id, from_id, kind, context, valid_from);
CREATE INDEX world_edges_to ON world_edges (tenant_id, to_id);
