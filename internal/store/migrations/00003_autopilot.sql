-- +goose Up
-- What the status command reports beside the scheduling columns of 00002.
ALTER TABLE loop_state ADD COLUMN state TEXT NOT NULL DEFAULT 'idle';
ALTER TABLE loop_state ADD COLUMN last_result TEXT NOT NULL DEFAULT '';
ALTER TABLE loop_state ADD COLUMN runs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE loop_state ADD COLUMN errors INTEGER NOT NULL DEFAULT 0;
ALTER TABLE loop_state ADD COLUMN breaker_opened_at TEXT;

-- Every reply, tweet and thread an autopilot loop sent to the gateway, with
-- what the safety checks need and the gateway does not keep: the author of a
-- queued reply, whether it mentions the product, the topic of a post.
CREATE TABLE autopilot_actions (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id       TEXT NOT NULL DEFAULT 'default',
    loop_name        TEXT NOT NULL,
    kind             TEXT NOT NULL,
    target_tweet_id  TEXT NOT NULL DEFAULT '',
    author_id        TEXT NOT NULL DEFAULT '',
    author_username  TEXT NOT NULL DEFAULT '',
    content          TEXT NOT NULL DEFAULT '',
    topic            TEXT NOT NULL DEFAULT '',
    mentions_product INTEGER NOT NULL DEFAULT 0,
    status           TEXT NOT NULL,
    approval_id      INTEGER,
    correlation_id   TEXT NOT NULL DEFAULT '',
    tweet_id         TEXT NOT NULL DEFAULT '',
    error_code       TEXT NOT NULL DEFAULT '',
    reason           TEXT NOT NULL DEFAULT '',
    created_at       TEXT NOT NULL
);
CREATE INDEX idx_autopilot_actions_created ON autopilot_actions(account_id, kind, created_at);
CREATE INDEX idx_autopilot_actions_target ON autopilot_actions(account_id, target_tweet_id);

-- +goose Down
DROP TABLE autopilot_actions;
ALTER TABLE loop_state DROP COLUMN breaker_opened_at;
ALTER TABLE loop_state DROP COLUMN errors;
ALTER TABLE loop_state DROP COLUMN runs;
ALTER TABLE loop_state DROP COLUMN last_result;
ALTER TABLE loop_state DROP COLUMN state;
