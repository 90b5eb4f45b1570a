-- +goose Up
-- A call's intent key names what it does on X whatever tool spelled it; the
-- SQLite migration 00014_intent_key says why and how existing rows take
-- their parameters hash as their key. PostgreSQL has no implied row id in
-- an index, so the id is the last column (00003).
ALTER TABLE mutation_audit ADD COLUMN intent_key TEXT;
ALTER TABLE approval_queue ADD COLUMN intent_key TEXT;
UPDATE mutation_audit SET intent_key = params_hash;
UPDATE approval_queue SET intent_key = params_hash;
DROP INDEX idx_mutation_audit_hash;
DROP INDEX idx_approval_pending_hash;
CREATE INDEX idx_mutation_audit_intent ON mutation_audit(account_id, intent_key, id);
CREATE INDEX idx_approval_pending_intent ON approval_queue(account_id, intent_key, id) WHERE status = 'pending';

-- +goose Down
DROP INDEX idx_approval_pending_intent;
DROP INDEX idx_mutation_audit_intent;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, params_hash, id);
CREATE INDEX idx_approval_pending_hash ON approval_queue(account_id, params_hash, id) WHERE status = 'pending';
ALTER TABLE approval_queue DROP COLUMN intent_key;
ALTER TABLE mutation_audit DROP COLUMN intent_key;
