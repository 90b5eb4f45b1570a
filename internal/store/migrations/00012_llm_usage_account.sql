-- +goose Up
-- LLM calls are recorded per account, like the X cost ledger, so one
-- brand's drafting spend is never counted against another's. Rows written
-- before several accounts existed were the default account's.
ALTER TABLE llm_usage ADD COLUMN account_id TEXT NOT NULL DEFAULT 'default';
CREATE INDEX idx_llm_usage_account ON llm_usage(account_id, created_at);

-- +goose Down
DROP INDEX idx_llm_usage_account;
ALTER TABLE llm_usage DROP COLUMN account_id;
