-- +goose Up
-- What the queue knows without reading every booking (owned by
-- internal/workflow): hi is a time before which, from lo, no slot of the
-- queue described by policy is free, as of version. version moves on
-- every change that can free a slot (a booked item unscheduled, moved,
-- deleted or failed), so a stale frontier is never used; booking a slot
-- frees none and leaves it alone.
CREATE TABLE queue_state (
    account_id       TEXT COLLATE "C" PRIMARY KEY,
    version          BIGINT NOT NULL DEFAULT 0,
    policy           TEXT NOT NULL DEFAULT '',
    frontier_version BIGINT NOT NULL DEFAULT -1,
    lo               TEXT COLLATE "C" NOT NULL DEFAULT '',
    hi               TEXT COLLATE "C" NOT NULL DEFAULT '',
    -- The bookings a search from hi reads first, [win_lo, win_hi), are
    -- read with this row in one query.
    win_lo           TEXT COLLATE "C" NOT NULL DEFAULT '',
    win_hi           TEXT COLLATE "C" NOT NULL DEFAULT ''
);
-- +goose StatementBegin
CREATE FUNCTION queue_state_freed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE queue_state SET version = version + 1 WHERE account_id = OLD.account_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER drafts_queue_freed_update AFTER UPDATE OF account_id, status, scheduled_for ON drafts FOR EACH ROW
WHEN (OLD.scheduled_for IS NOT NULL AND OLD.status NOT IN ('draft', 'deleted', 'failed')
    AND (NEW.account_id <> OLD.account_id OR NEW.scheduled_for IS DISTINCT FROM OLD.scheduled_for OR NEW.status IN ('draft', 'deleted', 'failed')))
EXECUTE FUNCTION queue_state_freed();
CREATE TRIGGER drafts_queue_freed_delete AFTER DELETE ON drafts FOR EACH ROW
WHEN (OLD.scheduled_for IS NOT NULL AND OLD.status NOT IN ('draft', 'deleted', 'failed'))
EXECUTE FUNCTION queue_state_freed();

-- +goose Down
DROP TRIGGER drafts_queue_freed_delete ON drafts;
DROP TRIGGER drafts_queue_freed_update ON drafts;
DROP FUNCTION queue_state_freed();
DROP TABLE queue_state;
