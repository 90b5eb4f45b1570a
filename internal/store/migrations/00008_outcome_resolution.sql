-- +goose Up
-- An unknown or interrupted attempt blocks identical repeats until someone
-- resolves it: happened (it reached X) or did_not_happen. resolved_by is
-- cli, mcp or auto (tuitbot read X and found the post).
ALTER TABLE mutation_audit ADD COLUMN resolution TEXT;
ALTER TABLE mutation_audit ADD COLUMN resolved_by TEXT;
ALTER TABLE mutation_audit ADD COLUMN resolved_at TEXT;
-- The canonical request of a universal write (method, host, path, query,
-- body; never header values), so a human can verify what was sent.
ALTER TABLE mutation_audit ADD COLUMN request_json TEXT;
CREATE INDEX idx_mutation_audit_unresolved ON mutation_audit(account_id, tool_name, params_hash)
    WHERE status IN ('unknown', 'interrupted') AND resolution IS NULL;

-- +goose Down
DROP INDEX idx_mutation_audit_unresolved;
ALTER TABLE mutation_audit DROP COLUMN request_json;
ALTER TABLE mutation_audit DROP COLUMN resolved_at;
ALTER TABLE mutation_audit DROP COLUMN resolved_by;
ALTER TABLE mutation_audit DROP COLUMN resolution;
