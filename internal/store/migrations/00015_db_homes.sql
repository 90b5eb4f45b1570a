-- +goose Up
-- The homes that use this database, each named by the random id in its own
-- home.id file (kept in the home directory, not beside the database). A
-- SQLite database belongs to one home: a copy of another home's database,
-- even with its identity file, is refused. A PostgreSQL database is shared
-- by the hosts of a team, each with its own home, and records them all.
CREATE TABLE db_homes (
    home_id  TEXT PRIMARY KEY,
    host     TEXT NOT NULL,
    bound_at TEXT NOT NULL
);

-- +goose Down
DROP TABLE db_homes;
