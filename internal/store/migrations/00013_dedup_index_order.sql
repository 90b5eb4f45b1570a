-- +goose Up
-- Every mutation looks up its latest identical call newest first. The
-- parameters hash already names the tool (it is taken over the tool name and
-- the parameters), so the lookup is by account and hash alone, and the
-- index ends there: SQLite's implied row id then gives the order. With
-- created_at at the end of the old (account, tool, hash) index, SQLite
-- preferred the (account, tool) index for its order and read every earlier
-- call of the tool on each mutation. The approval queue gets the same for
-- pending items, which were sorted after a scan of the tool's pending rows.
DROP INDEX idx_mutation_audit_hash;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, params_hash);
CREATE INDEX idx_approval_pending_hash ON approval_queue(account_id, params_hash) WHERE status = 'pending';

-- +goose Down
DROP INDEX idx_approval_pending_hash;
DROP INDEX idx_mutation_audit_hash;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, tool_name, params_hash, created_at);
