-- +goose Up
-- The audit trail filtered by tool, newest first (the review page, `audit
-- recent --tool`): with the row id implied at the end of the index, SQLite
-- walks the newest rows of the tool instead of sorting all of them.
CREATE INDEX idx_mutation_audit_tool ON mutation_audit(account_id, tool_name);
-- The review page (tuitbot web) counts the pending items by tool and
-- caller on every load; covering those columns, the count reads the index
-- alone instead of every queued row.
CREATE INDEX idx_approval_pending_facets ON approval_queue(account_id, status, tool_name, caller, expires_at);

-- +goose Down
DROP INDEX idx_approval_pending_facets;
DROP INDEX idx_mutation_audit_tool;
