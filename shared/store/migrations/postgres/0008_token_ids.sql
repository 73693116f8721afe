-- Each API token gets an id (Postgres flavour; ../sqlite/0008_token_ids.sql keeps the same
-- meaning), so tokens can be listed, revoked and rotated without ever being shown: the id is
-- a prefix of the token's hash, which already reveals nothing of the token.
ALTER TABLE api_tokens ADD COLUMN id TEXT;
UPDATE api_tokens SET id = 'tok_' || substr(token_sha256, 1, 16) WHERE id IS NULL;
CREATE UNIQUE INDEX api_tokens_id ON api_tokens (id);
