-- +goose Up
-- The users who sent the account a direct message (owned by
-- internal/dmsenders). X's guidelines allow an automated DM "only after
-- the user DMs you first"; every read of the account's DM events records
-- their senders here (the account's own messages never), so that every
-- process of the home, and the next one after a restart, knows it without
-- reading X again. dm_event_id is the first message seen from the user,
-- first_seen_at when tuitbot read it.
CREATE TABLE dm_senders (
    account_id    TEXT NOT NULL DEFAULT 'default',
    user_id       TEXT NOT NULL,
    dm_event_id   TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    PRIMARY KEY (account_id, user_id)
);

-- +goose Down
DROP TABLE dm_senders;
