-- +goose Up
-- Hand-offs (owned by internal/gateway): what X's API may not do for the
-- account (a like, follow or quote post on pay-per-use access, a reply to a
-- post that did not summon it) handed to a person, who does it on x.com
-- through X's Web Intent. correlation_id is the audit row, whose status is
-- handed_off. status is open until tuitbot's owned reads find it done
-- (done_by_person, with post_id: the reply or quote post made, the liked
-- post, the followed user) or due_at passes (not_done).
CREATE TABLE handoffs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id     TEXT NOT NULL DEFAULT 'default',
    correlation_id TEXT NOT NULL,
    effect         TEXT NOT NULL,
    tweet_id       TEXT NOT NULL DEFAULT '',
    target_user    TEXT NOT NULL DEFAULT '',
    text           TEXT NOT NULL DEFAULT '',
    intent_url     TEXT NOT NULL,
    reason         TEXT NOT NULL DEFAULT '',
    caller         TEXT NOT NULL DEFAULT '',
    loop_name      TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL DEFAULT 'open',
    post_id        TEXT,
    created_at     TEXT NOT NULL,
    due_at         TEXT NOT NULL,
    checked_at     TEXT,
    resolved_at    TEXT
);
CREATE INDEX idx_handoffs_status ON handoffs(account_id, status, id);

-- +goose Down
DROP TABLE handoffs;
