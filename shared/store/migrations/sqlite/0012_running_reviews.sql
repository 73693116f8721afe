-- Admission counts the reviews running across all tenants at every pass: an index of the
-- running ones alone keeps that count to the running set, never the whole history.
CREATE INDEX reviews_running ON reviews (status) WHERE status = 'running';
