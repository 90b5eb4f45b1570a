-- +goose Up
-- The PostgreSQL form of the SQLite migration 00029_dm_senders (which says why).
CREATE TABLE dm_senders (
    account_id    TEXT NOT NULL DEFAULT 'default',
    user_id       TEXT NOT NULL,
    dm_event_id   TEXT NOT NULL,
    first_seen_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, user_id)
);

-- +goose Down
DROP TABLE dm_senders;
