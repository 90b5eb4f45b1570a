-- +goose Up
-- The account's own posts measured at fixed ages (checkpoint_hours 1, 24
-- and 168), one row per post and checkpoint: the unique key is what makes a
-- capture happen once however often, and by however many processes, the
-- analytics loop runs. posted_unix (seconds) is the post's creation time,
-- kept as a number so the best-time query reads and buckets it cheaply;
-- kind says original, reply, quote or repost. impressions is NULL when X
-- did not say. source is analytics (GET /2/tweets/analytics) or public
-- (public_metrics). latest marks each post's most recent checkpoint.
CREATE TABLE post_metrics (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL,
    tweet_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    posted_unix INTEGER NOT NULL,
    checkpoint_hours INTEGER NOT NULL,
    captured_at TEXT NOT NULL,
    impressions INTEGER,
    likes INTEGER NOT NULL DEFAULT 0,
    reposts INTEGER NOT NULL DEFAULT 0,
    replies INTEGER NOT NULL DEFAULT 0,
    quotes INTEGER NOT NULL DEFAULT 0,
    bookmarks INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL,
    -- 1 on the post's latest checkpoint, 0 on the rows it supersedes: the
    -- best-time query reads one row per post without sorting them out.
    latest INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX idx_post_metrics_checkpoint ON post_metrics(account_id, tweet_id, checkpoint_hours);
-- The best-time query reads the latest row of one account's posts of one
-- kind in a time range.
CREATE INDEX idx_post_metrics_posted ON post_metrics(account_id, kind, latest, posted_unix);

-- +goose Down
DROP INDEX idx_post_metrics_posted;
DROP INDEX idx_post_metrics_checkpoint;
DROP TABLE post_metrics;
