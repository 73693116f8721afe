-- Tenants treated fairly (SQLite flavour; ../postgres/0007_tenant_fairness.sql keeps the same
-- meaning). Admission reads each tenant's oldest pending reviews (a window per tenant) and
-- the cap on queued reviews counts a tenant's unfinished ones: both stay index reads however
-- long another tenant's queue or history grows.
CREATE INDEX reviews_pending_by_tenant ON reviews (tenant_id, priority, created_us) WHERE admitted_us IS NULL;
CREATE INDEX reviews_unfinished_by_tenant ON reviews (tenant_id, status);
