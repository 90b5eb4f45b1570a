-- +goose Up
-- The notification outbox (owned by internal/notify): one row per event and
-- channel, written in the transaction that changes the approval item, and
-- delivered later by a dispatcher in a long-lived process. A row is claimed
-- by a lease (lease_owner, lease_until) so exactly one process sends it;
-- dedup_key makes the same event for the same channel one row, whoever
-- notices it first. batch_id names the row whose message carried this one
-- (a digest); message_ref is what the channel answered (a Telegram message
-- id, to edit it once the item is decided).
CREATE TABLE notify_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      TEXT NOT NULL DEFAULT 'default',
    channel         TEXT NOT NULL,
    event           TEXT NOT NULL,
    dedup_key       TEXT NOT NULL,
    item_id         INTEGER,
    payload         TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    lease_owner     TEXT,
    lease_until     TEXT,
    last_error      TEXT,
    created_at      TEXT NOT NULL,
    sent_at         TEXT,
    batch_id        INTEGER,
    message_ref     TEXT
);
CREATE UNIQUE INDEX idx_notify_outbox_dedup ON notify_outbox(account_id, channel, dedup_key);
CREATE INDEX idx_notify_outbox_due ON notify_outbox(status, next_attempt_at);
CREATE INDEX idx_notify_outbox_item ON notify_outbox(account_id, item_id);
CREATE INDEX idx_notify_outbox_sent ON notify_outbox(channel, sent_at);

-- Signed one-time approval links (owned by internal/approvallink): a row per
-- link issued, keyed by the link's random nonce. used_at is written in the
-- transaction that decides the item, so a link acts at most once.
CREATE TABLE approval_links (
    nonce      TEXT PRIMARY KEY,
    account_id TEXT NOT NULL DEFAULT 'default',
    item_id    INTEGER NOT NULL,
    action     TEXT NOT NULL,
    channel    TEXT NOT NULL,
    -- The item's content hash when the link was issued; the MAC covers it,
    -- and a link whose item no longer has it is dead.
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT,
    used_by    TEXT,
    revoked_at TEXT
);
CREATE INDEX idx_approval_links_item ON approval_links(account_id, item_id);

-- +goose Down
DROP TABLE approval_links;
DROP TABLE notify_outbox;
