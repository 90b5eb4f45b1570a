-- +goose Up
-- A draft's post options (reply settings, poll, community, disclosures) as
-- the JSON object the post tools take; empty when it has none. Publishing
-- or queueing the draft sends them with its text.
ALTER TABLE drafts ADD COLUMN options TEXT;

-- +goose Down
ALTER TABLE drafts DROP COLUMN options;
