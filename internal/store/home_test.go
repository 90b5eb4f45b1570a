package store_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// homeOpts opens the database of a home at dir, as the application does.
func homeOpts(dir string) store.Options {
	return store.Options{Now: clock, HomeIDFile: filepath.Join(dir, "home.id")}
}

// makeHome creates a home at dir whose database holds one row, and
// returns the home's id.
func makeHome(t *testing.T, dir string) string {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(dir, "tuitbot.db"), homeOpts(dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO action_log (action_type, message, created_at) VALUES ('probe', ?, ?)", dir, store.FormatTime(fixedNow)); err != nil {
		t.Fatal(err)
	}
	id := db.HomeID
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return id
}

func homesOf(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SELECT home_id FROM db_homes ORDER BY home_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestDatabaseBoundToHome: the database records the home that uses it
// (home.id, kept in the home rather than beside the database), so a
// database copied from another home is refused even with its identity
// file, and the named fix binds it to this home.
func TestDatabaseBoundToHome(t *testing.T) {
	for _, tc := range []struct {
		name string
		// prepare leaves the home at dir as the case needs it.
		prepare func(t *testing.T, dir string)
		// refused names the reason Open must give; empty means it opens.
		refused string
		// keepsHome means the home id from before prepare stays.
		keepsHome bool
	}{
		{name: "fresh home", prepare: func(*testing.T, string) {}},
		{name: "reopen", keepsHome: true, prepare: func(t *testing.T, dir string) { makeHome(t, dir) }},
		{name: "another home's database with its identity file", refused: "belongs to another tuitbot home", keepsHome: true,
			prepare: func(t *testing.T, dir string) {
				makeHome(t, dir)
				other := t.TempDir()
				makeHome(t, other)
				for _, name := range []string{"tuitbot.db", "tuitbot.db.id"} {
					b, err := os.ReadFile(filepath.Join(other, name))
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}},
		{name: "home.id lost", refused: "has no", prepare: func(t *testing.T, dir string) {
			makeHome(t, dir)
			if err := os.Remove(filepath.Join(dir, "home.id")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "home.id damaged", refused: "unreadable", prepare: func(t *testing.T, dir string) {
			makeHome(t, dir)
			if err := os.WriteFile(filepath.Join(dir, "home.id"), []byte("not an id\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "database deleted", refused: "home.id exists", keepsHome: true, prepare: func(t *testing.T, dir string) {
			makeHome(t, dir)
			path := filepath.Join(dir, "tuitbot.db")
			removeDB(t, path)
			if err := os.Remove(store.IdentityPath(path)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "home from before home ids", prepare: func(t *testing.T, dir string) {
			// Opened without a home: the database is bound to none, and
			// home.id does not exist.
			db, err := store.Open(context.Background(), filepath.Join(dir, "tuitbot.db"), store.Options{Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
		}},
		{name: "database from before homes were recorded", keepsHome: true, prepare: func(t *testing.T, dir string) {
			makeHome(t, dir)
			rollBackLatest(t, filepath.Join(dir, "tuitbot.db"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "tuitbot.db")
			idFile := filepath.Join(dir, "home.id")
			tc.prepare(t, dir)
			before := readFile(t, idFile)
			dbBefore, _ := os.ReadFile(path)
			opts := homeOpts(dir)
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
				if readFile(t, idFile) != before {
					t.Error("a refused open changed home.id")
				}
				opts.AcceptNew = true
				db, err = store.Open(context.Background(), path, opts)
				if err != nil {
					t.Fatalf("Open with AcceptNew: %v", err)
				}
				if db.IdentityNote == "" {
					t.Error("binding the database to this home left no note for the log")
				}
			} else if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer db.Close()
			id := readFile(t, idFile)
			if id == "" || db.HomeID != id {
				t.Fatalf("home.id holds %q, the database was opened as home %q", id, db.HomeID)
			}
			if tc.keepsHome && before != "" && id != before {
				t.Errorf("home id changed from %s to %s", before, id)
			}
			if st, err := os.Stat(idFile); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("home.id: %v, mode %v; want 0600", err, st.Mode().Perm())
			}
			if got := homesOf(t, db.DB); !slices.Equal(got, []string{id}) {
				t.Errorf("the database is bound to %v, want only this home %s", got, id)
			}
		})
	}
}

// TestCopyIsBoundWhereItIsOpened: db export and import move history, not
// the binding: the copy belongs to the home that opens it next.
func TestCopyIsBoundWhereItIsOpened(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	makeHome(t, from)
	src := open(t, filepath.Join(from, "tuitbot.db"), homeOpts(from))
	dst := open(t, filepath.Join(t.TempDir(), "export.db"), store.Options{})
	if _, err := store.Copy(context.Background(), src, dst); err != nil {
		t.Fatal(err)
	}
	if got := homesOf(t, dst.DB); len(got) != 0 {
		t.Fatalf("the copy carries the source's homes %v", got)
	}
	dst.Close()
	for from, name := range map[string]string{dst.Path: "tuitbot.db", store.IdentityPath(dst.Path): "tuitbot.db.id"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db := open(t, filepath.Join(to, "tuitbot.db"), homeOpts(to))
	if got := homesOf(t, db.DB); !slices.Equal(got, []string{db.HomeID}) {
		t.Errorf("the imported copy is bound to %v, want the home that opened it (%s)", got, db.HomeID)
	}
}

// TestPostgresRecordsEveryHome: the hosts of a team share one PostgreSQL
// database, each with its own home. Every home is recorded and none is
// refused for being new; each keeps its own home.id.
func TestPostgresRecordsEveryHome(t *testing.T) {
	url := pgtest.NewDatabase(t, "")
	var ids []string
	for range 3 {
		dir := t.TempDir()
		db, err := store.Open(context.Background(), url, homeOpts(dir))
		if err != nil {
			t.Fatalf("a host's home was refused: %v", err)
		}
		if db.HomeID == "" || readFile(t, filepath.Join(dir, "home.id")) != db.HomeID {
			t.Errorf("home.id %q, opened as %q", readFile(t, filepath.Join(dir, "home.id")), db.HomeID)
		}
		ids = append(ids, db.HomeID)
		db.Close()
		// Reopening records nothing new.
		db, err = store.Open(context.Background(), url, homeOpts(dir))
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	db, err := store.Open(context.Background(), url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	slices.Sort(ids)
	if got := homesOf(t, db.DB); !slices.Equal(got, ids) {
		t.Errorf("recorded homes %v, want %v", got, ids)
	}
}
