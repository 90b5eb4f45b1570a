-- +goose Up
-- A draft placed in the posting queue holds its slot (the scheduled time,
-- stored like every timestamp). The unique index is what keeps two callers
-- from taking one slot: the second insert fails inside its transaction.
-- Items scheduled at a chosen time leave it empty; an item that stops
-- being scheduled (back to a draft, deleted, failed) frees its slot.
ALTER TABLE drafts ADD COLUMN queue_slot TEXT COLLATE "C";
CREATE UNIQUE INDEX idx_drafts_queue_slot ON drafts(account_id, queue_slot) WHERE queue_slot IS NOT NULL AND status NOT IN ('draft', 'deleted', 'failed');
-- Finding free slots reads what is booked in a time range, in time order;
-- with the status in the index the read never visits the table.
CREATE INDEX idx_drafts_when ON drafts(account_id, scheduled_for, status);

-- +goose Down
DROP INDEX idx_drafts_when;
DROP INDEX idx_drafts_queue_slot;
ALTER TABLE drafts DROP COLUMN queue_slot;
