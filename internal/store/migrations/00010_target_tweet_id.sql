-- +goose Up
-- The post a call acts on (replied to, quoted, liked, deleted...), so that
-- "was this post already answered" is an indexed lookup instead of a
-- substring search of the parameters' JSON.
ALTER TABLE mutation_audit ADD COLUMN target_tweet_id TEXT;
ALTER TABLE approval_queue ADD COLUMN target_tweet_id TEXT;
CREATE INDEX idx_mutation_audit_target ON mutation_audit(account_id, target_tweet_id);
CREATE INDEX idx_approval_target ON approval_queue(account_id, target_tweet_id);

-- Existing rows of the typed tools take it from their parameters: the
-- whole request (kept since 00008) or else the summary, which is the
-- parameters themselves unless truncated (then it is not valid JSON and
-- the row stays without a target).
UPDATE mutation_audit SET target_tweet_id = NULLIF(json_extract(
        CASE WHEN json_valid(request_json) THEN request_json ELSE params_summary END,
        CASE tool_name WHEN 'x_reply_to_tweet' THEN '$.in_reply_to_id' WHEN 'x_quote_tweet' THEN '$.quoted_tweet_id' ELSE '$.tweet_id' END), '')
    WHERE tool_name IN ('x_reply_to_tweet', 'x_quote_tweet', 'x_like_tweet', 'x_unlike_tweet', 'x_retweet', 'x_unretweet',
                        'x_bookmark_tweet', 'x_unbookmark_tweet', 'x_delete_tweet')
      AND (json_valid(request_json) OR json_valid(params_summary));
UPDATE approval_queue SET target_tweet_id = NULLIF(json_extract(params_json,
        CASE tool_name WHEN 'x_reply_to_tweet' THEN '$.in_reply_to_id' WHEN 'x_quote_tweet' THEN '$.quoted_tweet_id' ELSE '$.tweet_id' END), '')
    WHERE tool_name IN ('x_reply_to_tweet', 'x_quote_tweet', 'x_like_tweet', 'x_unlike_tweet', 'x_retweet', 'x_unretweet',
                        'x_bookmark_tweet', 'x_unbookmark_tweet', 'x_delete_tweet')
      AND json_valid(params_json);

-- +goose Down
DROP INDEX idx_approval_target;
DROP INDEX idx_mutation_audit_target;
ALTER TABLE approval_queue DROP COLUMN target_tweet_id;
ALTER TABLE mutation_audit DROP COLUMN target_tweet_id;
