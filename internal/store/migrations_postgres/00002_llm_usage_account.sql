-- +goose Up
-- LLM calls are recorded per account (the SQLite migration
-- 00012_llm_usage_account).
ALTER TABLE llm_usage ADD COLUMN account_id TEXT NOT NULL DEFAULT 'default';
CREATE INDEX idx_llm_usage_account ON llm_usage(account_id, created_at);

-- +goose Down
DROP INDEX idx_llm_usage_account;
ALTER TABLE llm_usage DROP COLUMN account_id;
