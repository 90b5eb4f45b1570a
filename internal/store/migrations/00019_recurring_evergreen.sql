-- +goose Up
-- A recurring rule makes one scheduled draft per occurrence. The texts are
-- a JSON array used in rotation (the text, then vary's variants).
CREATE TABLE recurring_posts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    TEXT NOT NULL DEFAULT 'default',
    texts         TEXT NOT NULL,
    every_n       INTEGER NOT NULL,
    every_unit    TEXT NOT NULL,
    weekdays      TEXT NOT NULL DEFAULT '',
    at_time       TEXT NOT NULL,
    starts_on     TEXT NOT NULL,
    ends_after    INTEGER NOT NULL DEFAULT 0,
    ends_on       TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL DEFAULT 'active',
    created_count INTEGER NOT NULL DEFAULT 0,
    last_at       TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX idx_recurring_posts_account ON recurring_posts(account_id, status);
-- One draft per occurrence of a rule, whichever process made it: the
-- second insert of an occurrence does nothing.
ALTER TABLE drafts ADD COLUMN recurring_id INTEGER;
ALTER TABLE drafts ADD COLUMN occurrence_at TEXT;
CREATE UNIQUE INDEX idx_drafts_occurrence ON drafts(recurring_id, occurrence_at) WHERE recurring_id IS NOT NULL;

-- Posts of the account kept for recycling into empty queue slots.
CREATE TABLE evergreen_posts (
    account_id       TEXT NOT NULL DEFAULT 'default',
    tweet_id         TEXT NOT NULL,
    text             TEXT NOT NULL DEFAULT '',
    variants         TEXT NOT NULL DEFAULT '[]',
    engagement       INTEGER NOT NULL DEFAULT 0,
    metrics_at       TEXT NOT NULL,
    recycles         INTEGER NOT NULL DEFAULT 0,
    last_recycled_at TEXT,
    status           TEXT NOT NULL DEFAULT 'active',
    marked_at        TEXT NOT NULL,
    PRIMARY KEY (account_id, tweet_id)
);
-- A draft that recycles an evergreen post names it, so that publishing it
-- takes the right tool and a post gone from X is marked.
ALTER TABLE drafts ADD COLUMN evergreen_tweet_id TEXT;

-- +goose Down
ALTER TABLE drafts DROP COLUMN evergreen_tweet_id;
DROP TABLE evergreen_posts;
DROP INDEX idx_drafts_occurrence;
ALTER TABLE drafts DROP COLUMN occurrence_at;
ALTER TABLE drafts DROP COLUMN recurring_id;
DROP INDEX idx_recurring_posts_account;
DROP TABLE recurring_posts;
