-- +goose Up
-- Every mutation looks up its latest identical call (same account, tool and
-- parameters) newest first. With created_at at the end of the index its
-- entries were not in row order, so SQLite preferred the tool index, whose
-- implied row id gives the order, and read every audit row of the tool:
-- each like cost a scan of all earlier likes. Ending the index at
-- params_hash puts the row id right after it, which serves both the
-- equality and the order. The approval queue gets the same for pending
-- items, which were sorted after a scan of the tool's pending rows.
DROP INDEX idx_mutation_audit_hash;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, tool_name, params_hash);
CREATE INDEX idx_approval_pending_hash ON approval_queue(account_id, tool_name, params_hash) WHERE status = 'pending';

-- +goose Down
DROP INDEX idx_approval_pending_hash;
DROP INDEX idx_mutation_audit_hash;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, tool_name, params_hash, created_at);
