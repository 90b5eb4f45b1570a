-- +goose Up
-- The homes that use this database (the SQLite migration 00014_db_homes
-- says why). Every host of a team has its own home and is recorded here;
-- none is refused for being new.
CREATE TABLE db_homes (
    home_id  TEXT PRIMARY KEY,
    host     TEXT NOT NULL,
    bound_at TEXT COLLATE "C" NOT NULL
);

-- +goose Down
DROP TABLE db_homes;
