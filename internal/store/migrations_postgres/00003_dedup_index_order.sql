-- +goose Up
-- The latest identical call, newest first, by account and parameters hash
-- (the SQLite migration 00013_dedup_index_order says why). Leaving the tool
-- out matters here too: a prepared statement's generic plan, made before
-- the table has statistics, cannot tell (account, tool, hash) from the
-- (account, tool, id) index of the audit page and took the latter, reading
-- every earlier call of the tool. PostgreSQL has no implied row id in an
-- index, so the id is the last column.
DROP INDEX idx_mutation_audit_hash;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, params_hash, id);
CREATE INDEX idx_approval_pending_hash ON approval_queue(account_id, params_hash, id) WHERE status = 'pending';
-- The same for a caller's idempotency key: its latest use, newest first.
DROP INDEX idx_mutation_audit_key;
CREATE INDEX idx_mutation_audit_key ON mutation_audit(account_id, idempotency_key, id) WHERE idempotency_key IS NOT NULL;

-- +goose Down
DROP INDEX idx_mutation_audit_key;
CREATE INDEX idx_mutation_audit_key ON mutation_audit(account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
DROP INDEX idx_approval_pending_hash;
DROP INDEX idx_mutation_audit_hash;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, tool_name, params_hash, created_at);
