-- +goose Up
-- The typed tool a universal request (x_post, x_put, x_delete) does the work
-- of, whose policy applied to it as well; NULL for typed tools and for
-- universal writes no typed tool covers.
ALTER TABLE mutation_audit ADD COLUMN equivalent_tool TEXT;
ALTER TABLE approval_queue ADD COLUMN equivalent_tool TEXT;

-- +goose Down
ALTER TABLE approval_queue DROP COLUMN equivalent_tool;
ALTER TABLE mutation_audit DROP COLUMN equivalent_tool;
