-- +goose Up
-- A call's intent key names what it does on X whatever tool spelled it
-- (x_post_tweet, x_post to /2/tweets on either host, a thread of one post),
-- so the duplicate window, the in-flight check, the unknown-outcome block
-- and the approval queue treat every spelling of one effect as one call.
-- params_hash stays the hash of the call as given.
ALTER TABLE mutation_audit ADD COLUMN intent_key TEXT;
ALTER TABLE approval_queue ADD COLUMN intent_key TEXT;

-- Rows written before the key take their parameters hash as their key. The
-- gateway looks each call up by its intent key and by its parameters hash,
-- so an older unknown attempt keeps blocking the same call made with the
-- same tool (only a resolution lifts it), as it did before.
UPDATE mutation_audit SET intent_key = params_hash;
UPDATE approval_queue SET intent_key = params_hash;

-- The duplicate lookups go by intent key now (00013 says why the index ends
-- there); nothing looks calls up by parameters hash any more.
DROP INDEX idx_mutation_audit_hash;
DROP INDEX idx_approval_pending_hash;
CREATE INDEX idx_mutation_audit_intent ON mutation_audit(account_id, intent_key);
CREATE INDEX idx_approval_pending_intent ON approval_queue(account_id, intent_key) WHERE status = 'pending';

-- +goose Down
DROP INDEX idx_approval_pending_intent;
DROP INDEX idx_mutation_audit_intent;
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, params_hash);
CREATE INDEX idx_approval_pending_hash ON approval_queue(account_id, params_hash) WHERE status = 'pending';
ALTER TABLE approval_queue DROP COLUMN intent_key;
ALTER TABLE mutation_audit DROP COLUMN intent_key;
