-- +goose Up
-- The latest identical call, newest first, read from one index (the SQLite
-- migration 00013_dedup_index_order says why). PostgreSQL has no implied
-- row id in an index, so the id is its last column.
DROP INDEX idx_mutation_audit_hash;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, tool_name, params_hash, id);
CREATE INDEX idx_approval_pending_hash ON approval_queue(account_id, tool_name, params_hash, id) WHERE status = 'pending';

-- +goose Down
DROP INDEX idx_approval_pending_hash;
DROP INDEX idx_mutation_audit_hash;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, tool_name, params_hash, created_at);
