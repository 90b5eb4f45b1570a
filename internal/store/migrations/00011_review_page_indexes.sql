-- +goose Up
-- The audit trail filtered by tool, newest first (the review page, `audit
-- recent --tool`): with the row id implied at the end of the index, SQLite
-- walks the newest matching rows instead of sorting every row of the tool.
CREATE INDEX idx_mutation_audit_tool ON mutation_audit(account_id, tool_name);
-- Its "outcome unknown" list (status unknown or interrupted, newest
-- first) the same way, instead of walking every row from the newest.
CREATE INDEX idx_mutation_audit_account_status ON mutation_audit(account_id, status);
-- The review page counts the pending items by tool and caller on every
-- load; covering those columns, the count reads the index alone.
CREATE INDEX idx_approval_pending_facets ON approval_queue(account_id, status, tool_name, caller, expires_at);

-- +goose Down
DROP INDEX idx_approval_pending_facets;
DROP INDEX idx_mutation_audit_account_status;
DROP INDEX idx_mutation_audit_tool;
