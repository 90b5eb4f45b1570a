package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// writeRows starts the WAL afresh and commits n rows into it, so that the
// file holds exactly the frames SQLite counts as committed.
func writeRows(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := db.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('x', ?)", store.FormatTime(fixedNow)); err != nil {
			t.Fatal(err)
		}
	}
}

// pageSize is the database's page size, which sets the WAL's frame size.
func pageSize(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow("PRAGMA page_size").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// overwriteAt writes b over path at off without replacing the file.
func overwriteAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestCheckFilesNoticesWALChangedInPlace changes the WAL under a running
// handle without deleting or renaming it: the file stays the same, so only
// its contents can show that it is no longer what SQLite wrote.
func TestCheckFilesNoticesWALChangedInPlace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, wal string, frame int64)
		want   string
	}{
		{"untouched", func(*testing.T, string, int64) {}, ""},
		{"truncated to nothing", func(t *testing.T, wal string, _ int64) {
			if err := os.Truncate(wal, 0); err != nil {
				t.Fatal(err)
			}
		}, "truncated to"},
		{"truncated to its header", func(t *testing.T, wal string, _ int64) {
			if err := os.Truncate(wal, 32); err != nil {
				t.Fatal(err)
			}
		}, "truncated to"},
		{"last frame cut off", func(t *testing.T, wal string, frame int64) {
			if err := os.Truncate(wal, fileSize(t, wal)-frame); err != nil {
				t.Fatal(err)
			}
		}, "truncated to"},
		{"header overwritten with zeros", func(t *testing.T, wal string, _ int64) {
			overwriteAt(t, wal, 0, make([]byte, 32))
		}, "overwritten:"},
		{"last frame overwritten", func(t *testing.T, wal string, frame int64) {
			junk := make([]byte, frame)
			for i := range junk {
				junk[i] = byte(i * 7)
			}
			overwriteAt(t, wal, fileSize(t, wal)-frame, junk)
		}, "overwritten:"},
		{"replaced in place by another database's WAL", func(t *testing.T, wal string, _ int64) {
			other := open(t, filepath.Join(t.TempDir(), "other.db"), store.Options{})
			writeRows(t, other.DB, 20)
			b, err := os.ReadFile(other.Path + "-wal")
			if err != nil {
				t.Fatal(err)
			}
			// WriteFile truncates and rewrites the same file.
			if err := os.WriteFile(wal, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "while tuitbot was running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tuitbot.db")
			db := open(t, path, store.Options{})
			writeRows(t, db.DB, 20)
			if err := db.CheckFiles(context.Background()); err != nil {
				t.Fatalf("before tampering: %v", err)
			}
			tc.tamper(t, path+"-wal", 24+pageSize(t, db.DB))
			err := db.CheckFiles(context.Background())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckFiles on an untouched WAL: %v", err)
				}
				return
			}
			assertErr(t, err, "-wal was changed in place", tc.want, "start again")
		})
	}
}

// TestCheckFilesQuietWhileOthersWriteAndCheckpoint runs the check while
// another connection commits and checkpoints in every mode, restarting and
// truncating the WAL: what SQLite itself does to the file is never taken
// for tampering.
func TestCheckFilesQuietWhileOthersWriteAndCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuitbot.db")
	db := open(t, path, store.Options{})
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	done := make(chan error, 1)
	go func() {
		modes := []string{"PASSIVE", "FULL", "RESTART", "TRUNCATE"}
		for i := range 200 {
			if _, err := other.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('w', ?)", store.FormatTime(fixedNow)); err != nil {
				done <- err
				return
			}
			if i%5 == 0 {
				if _, err := other.Exec("PRAGMA wal_checkpoint(" + modes[(i/5)%len(modes)] + ")"); err != nil {
					done <- err
					return
				}
			}
		}
		done <- nil
	}()
	checks := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			if err := db.CheckFiles(context.Background()); err != nil {
				t.Fatalf("after the writer finished: %v", err)
			}
			t.Logf("%d checks ran beside the writer", checks)
			return
		default:
		}
		if err := db.CheckFiles(context.Background()); err != nil {
			t.Fatalf("check %d while another connection writes: %v", checks, err)
		}
		checks++
	}
}

// BenchmarkCheckFiles is the cost the gateway pays before every send.
func BenchmarkCheckFiles(b *testing.B) {
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "tuitbot.db"), store.Options{Now: clock})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for range 20 {
		if _, err := db.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('x', ?)", store.FormatTime(fixedNow)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if err := db.CheckFiles(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
