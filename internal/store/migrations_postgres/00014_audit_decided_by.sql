-- +goose Up
-- Who decided a call that waited for a person (cli, web, mcp_agent,
-- link:<channel>, telegram:<user id>), beside caller, who asked for it: an
-- approved call's row keeps the caller of the queued call (the agent, the
-- autopilot loop, the CLI) instead of naming "approval". NULL for a call
-- no person decided (the policy allowed it). Rows written before name
-- "approval" as their caller: both facts are read back from the item they
-- replayed, when it is still kept.
ALTER TABLE mutation_audit ADD COLUMN decided_by TEXT;
UPDATE mutation_audit SET
	caller = COALESCE((SELECT NULLIF(q.caller, '') FROM approval_queue q WHERE q.id = mutation_audit.approval_id), caller),
	decided_by = (SELECT q.reviewed_by FROM approval_queue q WHERE q.id = mutation_audit.approval_id)
	WHERE caller = 'approval' AND approval_id IS NOT NULL;

-- +goose Down
UPDATE mutation_audit SET caller = 'approval' WHERE approval_id IS NOT NULL;
ALTER TABLE mutation_audit DROP COLUMN decided_by;
