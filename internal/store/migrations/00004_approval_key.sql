-- +goose Up
-- A caller's idempotency_key must hold for calls routed to approval too.
ALTER TABLE approval_queue ADD COLUMN idempotency_key TEXT;
CREATE INDEX idx_approval_key ON approval_queue(account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- +goose Down
DROP INDEX idx_approval_key;
ALTER TABLE approval_queue DROP COLUMN idempotency_key;
