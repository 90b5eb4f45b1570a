package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// BuildingPath is where Open builds a new SQLite database before moving it
// into place at path. A file left there by a start that died half way is
// removed by the next.
func BuildingPath(path string) string { return path + ".building" }

// createAside creates the new SQLite database at path, when there is none
// yet in a home with no history, the way a file is replaced atomically:
// it builds the baseline schema in BuildingPath(path) with no journal and
// no syncs (nothing reads that file, and a crash only leaves it to be
// removed), switches it to WAL, syncs it once and renames it into place.
// A start that dies half way therefore leaves either no database or a
// whole one, and the start costs two syncs instead of the eight that
// creating it in place takes (four of them for the switch to WAL). The
// caller holds the open lock. It reports whether it created the
// database; when it cannot, the caller creates it in place as before,
// which reports the reason.
func createAside(ctx context.Context, path string, opts Options) bool {
	if homeHistory(path, opts) != "" {
		return false
	}
	if st, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) && (err != nil || st.Size() > 0) {
		return false
	}
	// Sidecars beside a missing or empty database are another's: leave
	// them to the checks of the path in place.
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Lstat(path + suffix); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	tmp := BuildingPath(path)
	removeBuilding(tmp)
	if err := buildAside(ctx, tmp); err != nil {
		removeBuilding(tmp)
		return false
	}
	if err := os.Rename(tmp, path); err != nil {
		removeBuilding(tmp)
		return false
	}
	// The rename is durable once the directory is synced; without it a
	// crash could lose the database the identity files are written for.
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		_ = dir.Sync()
		dir.Close()
	}
	return true
}

// removeBuilding removes a database being built and its sidecars.
func removeBuilding(tmp string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		_ = os.Remove(tmp + suffix)
	}
}

// buildAside writes the baseline schema into the new file tmp in one
// transaction, switches it to WAL and syncs it.
func buildAside(ctx context.Context, tmp string) error {
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	db, err := sql.Open("sqlite", "file:"+uriPath(tmp)+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	bl, err := baselineOf(SQLite)
	if err != nil {
		return err
	}
	d := &DB{DB: db, Path: tmp, Dialect: SQLite}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := d.writeBaseline(ctx, tx, bl); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode %q, want wal", mode)
	}
	// Closing the only connection folds the WAL into the file and removes
	// it; then one sync makes the whole file durable before the rename.
	if err := db.Close(); err != nil {
		return err
	}
	if _, err := os.Stat(tmp + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s-wal left after closing", tmp)
	}
	return f.Sync()
}
