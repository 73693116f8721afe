-- Times a step was put back because a service rate-limited it (not attempts: a rate limit
-- does not spend one). Capped, so a service that never stops refusing ends the step by name.
ALTER TABLE steps ADD COLUMN deferrals BIGINT NOT NULL DEFAULT 0;
