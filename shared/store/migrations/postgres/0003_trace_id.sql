-- The trace id of the request that submitted a review: every job of the review carries it,
-- so each step's span joins the request's trace.
ALTER TABLE reviews ADD COLUMN trace_id TEXT;
