-- A publication's lease is fenced: each claim draws a token and every write of the
-- publication names it, so a worker whose lease ran out (paused, cut off) cannot record
-- over the worker that took the publication over. `claims` counts the claims: past the
-- first, a check run may exist that GitHub created and the store never recorded, so it is
-- looked for by its external id before another is created. `check_updates` counts the
-- check run's updates GitHub took (the conclusion, then one per 50 annotations): a publish
-- that resumes sends only the rest (annotations add up; sent twice, they show twice).
-- `head_at` is when GitHub last updated the pull request, as its delivery said (seconds
-- since the epoch): a delivery older than the newest head's (out of order, or replayed) or
-- a re-run of an older head cannot supersede the newer head's review.
-- An installation's tenant is keyed by its account's numeric id: a login can be renamed,
-- and then taken by another account.
ALTER TABLE github_publications ADD COLUMN lease_token TEXT;
ALTER TABLE github_publications ADD COLUMN claims INTEGER NOT NULL DEFAULT 0;
ALTER TABLE github_publications ADD COLUMN check_updates INTEGER NOT NULL DEFAULT 0;
ALTER TABLE github_publications ADD COLUMN head_at BIGINT;
ALTER TABLE github_installations ADD COLUMN account_id BIGINT;
CREATE INDEX github_publications_pull ON github_publications (repository, pull_number);
CREATE INDEX github_publications_check_run ON github_publications (installation_id, check_run_id);
CREATE INDEX github_installations_account ON github_installations (account_id);
