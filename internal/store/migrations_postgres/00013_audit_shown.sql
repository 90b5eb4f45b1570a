-- +goose Up
-- What the audit page shows of a row, written with the row (owned by
-- internal/gateway), so a page of rows neither decodes parameters nor
-- describes them: the action's name, and the text the call posted or else
-- the id of the post or account it acted on (target_kind says which:
-- '' for text or nothing, 'post', 'user'). Rows written before have NULL
-- here and are described from their parameters when read.
ALTER TABLE mutation_audit ADD COLUMN action_name TEXT;
ALTER TABLE mutation_audit ADD COLUMN description TEXT;
ALTER TABLE mutation_audit ADD COLUMN target_kind TEXT;

-- +goose Down
ALTER TABLE mutation_audit DROP COLUMN target_kind;
ALTER TABLE mutation_audit DROP COLUMN description;
ALTER TABLE mutation_audit DROP COLUMN action_name;
