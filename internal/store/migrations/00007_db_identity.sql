-- +goose Up
-- The database's identity: a random id written when the database is
-- created and kept in a file beside it too, so a replaced or emptied
-- database is noticed instead of silently starting over.
CREATE TABLE db_identity (
    singleton  INTEGER PRIMARY KEY CHECK (singleton = 1),
    id         TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- +goose Down
DROP TABLE db_identity;
