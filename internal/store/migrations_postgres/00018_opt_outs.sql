-- +goose Up
-- The PostgreSQL form of the SQLite migration 00028_opt_outs (which says why).
CREATE TABLE opt_outs (
    account_id TEXT NOT NULL DEFAULT 'default',
    user_id    TEXT NOT NULL,
    username   TEXT NOT NULL DEFAULT '',
    phrase     TEXT NOT NULL DEFAULT '',
    source_id  TEXT NOT NULL DEFAULT '',
    text       TEXT NOT NULL DEFAULT '',
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, user_id)
);
CREATE INDEX idx_opt_outs_username ON opt_outs(account_id, username);

-- +goose Down
DROP TABLE opt_outs;
