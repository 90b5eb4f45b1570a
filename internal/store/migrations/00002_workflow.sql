-- +goose Up
CREATE TABLE drafts (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      TEXT NOT NULL DEFAULT 'default',
    content_type    TEXT NOT NULL DEFAULT 'tweet',
    content         TEXT NOT NULL,
    topic           TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL DEFAULT 'mcp',
    status          TEXT NOT NULL DEFAULT 'draft',
    scheduled_for   TEXT,
    approval_id     INTEGER,
    posted_tweet_id TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX idx_drafts_status ON drafts(account_id, status, scheduled_for);

CREATE TABLE discovered_tweets (
    tweet_id         TEXT NOT NULL,
    account_id       TEXT NOT NULL DEFAULT 'default',
    author_id        TEXT NOT NULL DEFAULT '',
    author_username  TEXT NOT NULL DEFAULT '',
    author_followers INTEGER NOT NULL DEFAULT 0,
    content          TEXT NOT NULL,
    tweet_created_at TEXT NOT NULL DEFAULT '',
    like_count       INTEGER NOT NULL DEFAULT 0,
    retweet_count    INTEGER NOT NULL DEFAULT 0,
    reply_count      INTEGER NOT NULL DEFAULT 0,
    quote_count      INTEGER NOT NULL DEFAULT 0,
    impression_count INTEGER NOT NULL DEFAULT 0,
    has_media        INTEGER NOT NULL DEFAULT 0,
    is_quote         INTEGER NOT NULL DEFAULT 0,
    relevance_score  REAL NOT NULL DEFAULT 0,
    score_breakdown  TEXT NOT NULL DEFAULT '{}',
    matched_keywords TEXT NOT NULL DEFAULT '[]',
    query            TEXT NOT NULL DEFAULT '',
    discovered_at    TEXT NOT NULL,
    replied_to       INTEGER NOT NULL DEFAULT 0,
    reply_tweet_id   TEXT,
    PRIMARY KEY (account_id, tweet_id)
);
CREATE INDEX idx_discovered_score ON discovered_tweets(account_id, replied_to, relevance_score);

CREATE TABLE replies_sent (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      TEXT NOT NULL DEFAULT 'default',
    target_tweet_id TEXT NOT NULL,
    reply_tweet_id  TEXT NOT NULL,
    author_id       TEXT NOT NULL DEFAULT '',
    author_username TEXT NOT NULL DEFAULT '',
    content         TEXT NOT NULL,
    mentions_product INTEGER NOT NULL DEFAULT 0,
    caller          TEXT NOT NULL DEFAULT 'mcp',
    created_at      TEXT NOT NULL
);
CREATE INDEX idx_replies_created ON replies_sent(account_id, created_at);

CREATE TABLE original_tweets (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL DEFAULT 'default',
    tweet_id   TEXT NOT NULL,
    kind       TEXT NOT NULL DEFAULT 'tweet',
    content    TEXT NOT NULL,
    topic      TEXT NOT NULL DEFAULT '',
    caller     TEXT NOT NULL DEFAULT 'mcp',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_original_created ON original_tweets(account_id, created_at);

CREATE TABLE cursors (
    account_id TEXT NOT NULL DEFAULT 'default',
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (account_id, key)
);

CREATE TABLE target_accounts (
    account_id TEXT NOT NULL DEFAULT 'default',
    username   TEXT NOT NULL,
    user_id    TEXT NOT NULL DEFAULT '',
    added_at   TEXT NOT NULL,
    PRIMARY KEY (account_id, username)
);

CREATE TABLE follower_snapshots (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      TEXT NOT NULL DEFAULT 'default',
    followers_count INTEGER NOT NULL,
    following_count INTEGER NOT NULL,
    tweet_count     INTEGER NOT NULL,
    taken_at        TEXT NOT NULL
);

CREATE TABLE tweet_performance (
    tweet_id    TEXT NOT NULL,
    account_id  TEXT NOT NULL DEFAULT 'default',
    kind        TEXT NOT NULL,
    topic       TEXT NOT NULL DEFAULT '',
    likes       INTEGER NOT NULL DEFAULT 0,
    retweets    INTEGER NOT NULL DEFAULT 0,
    replies     INTEGER NOT NULL DEFAULT 0,
    impressions INTEGER NOT NULL DEFAULT 0,
    score       REAL NOT NULL DEFAULT 0,
    measured_at TEXT NOT NULL,
    PRIMARY KEY (account_id, tweet_id)
);

CREATE TABLE media_uploads (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  TEXT NOT NULL DEFAULT 'default',
    file_hash   TEXT NOT NULL,
    file_name   TEXT NOT NULL,
    size_bytes  INTEGER NOT NULL,
    media_type  TEXT NOT NULL,
    x_media_id  TEXT NOT NULL,
    alt_text    TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);
CREATE INDEX idx_media_hash ON media_uploads(account_id, file_hash, expires_at);

CREATE TABLE loop_state (
    account_id         TEXT NOT NULL DEFAULT 'default',
    name               TEXT NOT NULL,
    last_run           TEXT,
    next_run           TEXT,
    consecutive_errors INTEGER NOT NULL DEFAULT 0,
    paused_until       TEXT,
    last_error         TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (account_id, name)
);

-- +goose Down
DROP TABLE loop_state;
DROP TABLE media_uploads;
DROP TABLE tweet_performance;
DROP TABLE follower_snapshots;
DROP TABLE target_accounts;
DROP TABLE cursors;
DROP TABLE original_tweets;
DROP TABLE replies_sent;
DROP TABLE discovered_tweets;
DROP TABLE drafts;
