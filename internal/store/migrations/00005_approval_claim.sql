-- +goose Up
-- The process that claimed an item for approval, so an item claimed by a
-- process that died before sending anything can go back to the queue.
ALTER TABLE approval_queue ADD COLUMN claimed_by TEXT;

-- +goose Down
ALTER TABLE approval_queue DROP COLUMN claimed_by;
