-- +goose Up
-- The account's suppression list (owned by internal/optouts): users who
-- wrote an opt-out phrase ("stop", "unsubscribe", …) to the account. X's
-- guidelines say "If a user says 'stop,' stop": no automated reply,
-- @mention or DM reaches them until a person clears the row. username is
-- lower-case (as X matches it); source_id is the mention or DM that said it.
CREATE TABLE opt_outs (
    account_id TEXT NOT NULL DEFAULT 'default',
    user_id    TEXT NOT NULL,
    username   TEXT NOT NULL DEFAULT '',
    phrase     TEXT NOT NULL DEFAULT '',
    source_id  TEXT NOT NULL DEFAULT '',
    text       TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (account_id, user_id)
);
CREATE INDEX idx_opt_outs_username ON opt_outs(account_id, username);

-- +goose Down
DROP TABLE opt_outs;
