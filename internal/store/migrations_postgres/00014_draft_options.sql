-- +goose Up
-- The post settings (reply_settings, poll, community_id, disclosures) an
-- item placed in the queue carries to the post the publisher sends, as
-- the JSON object x_post_tweet takes as "options". Empty: none.
ALTER TABLE drafts ADD COLUMN options TEXT;

-- +goose Down
ALTER TABLE drafts DROP COLUMN options;
