-- +goose Up
-- The audit trail filtered by tool, newest first (the review page, `audit
-- recent --tool`): with the row id implied at the end of the index, SQLite
-- walks the newest matching rows instead of sorting every row of the tool.
CREATE INDEX idx_mutation_audit_tool ON mutation_audit(account_id, tool_name);

-- +goose Down
DROP INDEX idx_mutation_audit_tool;
