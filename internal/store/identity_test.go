package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// makeDB creates a database at path with one user row and closes it.
func makeDB(t *testing.T, path string) string {
	t.Helper()
	db, err := store.Open(context.Background(), path, store.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('probe', ?)", store.FormatTime(fixedNow)); err != nil {
		t.Fatal(err)
	}
	id := db.ID
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return id
}

func readID(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(store.IdentityPath(path))
	if err != nil {
		t.Fatalf("identity file: %v", err)
	}
	return strings.TrimSpace(string(b))
}

func removeDB(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

func TestDatabaseIdentity(t *testing.T) {
	for _, tc := range []struct {
		name string
		// prepare leaves a home at dir whose database is path; tokens is the
		// history file the caller passes.
		prepare func(t *testing.T, path, tokens string)
		// refused names the reason Open must give; empty means it opens.
		refused string
		// keepsID means the identity from before prepare must survive.
		keepsID bool
	}{
		{name: "fresh home", prepare: func(*testing.T, string, string) {}},
		{name: "reopen", prepare: func(t *testing.T, path, _ string) { makeDB(t, path) }, keepsID: true},
		{name: "emptied to 0 bytes", refused: "new or empty", prepare: func(t *testing.T, path, _ string) {
			makeDB(t, path)
			removeDB(t, path)
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "deleted", refused: "new or empty", prepare: func(t *testing.T, path, _ string) {
			makeDB(t, path)
			removeDB(t, path)
		}},
		{name: "new database beside a token file", refused: "tokens.json exists", prepare: func(t *testing.T, _, tokens string) {
			if err := os.WriteFile(tokens, []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "replaced by another database", refused: "was replaced", prepare: func(t *testing.T, path, _ string) {
			makeDB(t, path)
			other := filepath.Join(t.TempDir(), "other.db")
			makeDB(t, other)
			removeDB(t, path)
			b, err := os.ReadFile(other)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "identity row deleted", refused: "has no identity", prepare: func(t *testing.T, path, _ string) {
			makeDB(t, path)
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec("DELETE FROM db_identity"); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "identity file lost", keepsID: true, prepare: func(t *testing.T, path, _ string) {
			makeDB(t, path)
			if err := os.Remove(store.IdentityPath(path)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "database from before identities", prepare: func(t *testing.T, path, tokens string) {
			makeDB(t, path)
			rollBackLatest(t, path) // also removes the identity file
			if err := os.WriteFile(tokens, []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "tuitbot.db")
			tokens := filepath.Join(dir, "tokens.json")
			tc.prepare(t, path, tokens)
			before := ""
			if b, err := os.ReadFile(store.IdentityPath(path)); err == nil {
				before = strings.TrimSpace(string(b))
			}
			dbBefore, _ := os.ReadFile(path)
			opts := store.Options{Now: clock, HistoryFiles: []string{tokens}}
			db, err := store.Open(context.Background(), path, opts)
			if tc.refused != "" {
				if err == nil {
					db.Close()
					t.Fatal("Open accepted a database that is not this home's")
				}
				var ie *store.IdentityError
				if !errors.As(err, &ie) {
					t.Fatalf("error %v is not an IdentityError", err)
				}
				assertErr(t, err, path, tc.refused, store.AcceptNewDatabaseFlag)
				if got, _ := os.ReadFile(path); string(got) != string(dbBefore) {
					t.Error("a refused database was modified")
				}
				if before != "" && readID(t, path) != before {
					t.Error("a refused open changed the identity file")
				}
				// The named fix works and records the adopted identity.
				opts.AcceptNew = true
				db, err = store.Open(context.Background(), path, opts)
				if err != nil {
					t.Fatalf("Open with AcceptNew: %v", err)
				}
				defer db.Close()
				if db.IdentityNote == "" {
					t.Error("adopting a database left no note for the log")
				}
			} else {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer db.Close()
			}
			if db.ID == "" || readID(t, path) != db.ID {
				t.Errorf("identity file %q does not match the database's %q", readID(t, path), db.ID)
			}
			if tc.keepsID && db.ID != before && before != "" {
				t.Errorf("identity changed from %s to %s", before, db.ID)
			}
			var inDB string
			if err := db.QueryRow("SELECT id FROM db_identity").Scan(&inDB); err != nil || inDB != db.ID {
				t.Errorf("stored identity %q (%v), want %q", inDB, err, db.ID)
			}
		})
	}
}

func TestOpenChecksSchema(t *testing.T) {
	for _, tc := range []struct {
		name, sql, want string
	}{
		{"table dropped", "DROP TABLE approval_queue", "approval_queue"},
		{"newer schema", "INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)", "schema version 9999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tuitbot.db")
			makeDB(t, path)
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(tc.sql); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			db, err := store.Open(context.Background(), path, store.Options{Now: clock})
			if err == nil {
				db.Close()
				t.Fatal("Open accepted a database with a damaged schema")
			}
			assertErr(t, err, path, tc.want)
		})
	}
}

func TestCheckFilesNoticesDeletedOrReplacedFiles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, path string)
		want   string
	}{
		{"untouched after writes and a checkpoint", func(*testing.T, string) {}, ""},
		{"wal and shm deleted", func(t *testing.T, path string) {
			for _, p := range []string{path + "-wal", path + "-shm"} {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		}, "-wal was deleted"},
		{"wal replaced by another process's", func(t *testing.T, path string) {
			os.Remove(path + "-wal")
			if err := os.WriteFile(path+"-wal", nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "-wal was replaced"},
		{"database replaced", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "tuitbot.db was replaced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tuitbot.db")
			db := open(t, path, store.Options{})
			if err := db.CheckFiles(context.Background()); err != nil {
				t.Fatalf("fresh database: %v", err)
			}
			for range 50 {
				if _, err := db.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('x', ?)", store.FormatTime(fixedNow)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				t.Fatal(err)
			}
			tc.tamper(t, path)
			err := db.CheckFiles(context.Background())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckFiles on untouched files: %v", err)
				}
				return
			}
			assertErr(t, err, tc.want, "start again")
		})
	}
}

// TestOpenRefusesWhileDeletedWALIsInUse deletes -wal and -shm while a
// handle (standing in for a running process) has the database open. A new
// open must refuse rather than start from a view without that handle's
// writes; once the handle closes, its writes are in the database.
func TestOpenRefusesWhileDeletedWALIsInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuitbot.db")
	running, err := store.Open(context.Background(), path, store.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := running.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('row', ?)", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil {
			t.Fatal(err)
		}
	}
	db, err := store.Open(context.Background(), path, store.Options{Now: clock})
	if err == nil {
		db.Close()
		t.Fatal("Open accepted a database whose -wal was deleted under a running process")
	}
	assertErr(t, err, "deleted while another tuitbot process has the database open", "stop every tuitbot process")
	if err := running.CheckFiles(context.Background()); err == nil {
		t.Error("the running handle did not notice its files were deleted")
	}
	if err := running.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, path, store.Options{})
	var n int
	if err := db.QueryRow("SELECT count(*) FROM action_log WHERE action_type = 'row'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 30 {
		t.Errorf("%d of 30 rows survived a deleted -wal and a clean restart", n)
	}
}
