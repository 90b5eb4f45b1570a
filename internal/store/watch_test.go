package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestWatchCommits: a watch hears each commit that changes what its probe
// reads, whichever connection made it: this DB's pool, or another
// process's (another DB on the same file, with connections of its own).
func TestWatchCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuitbot.db")
	watched := open(t, path, store.Options{})
	other := open(t, path, store.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	listening, heard := make(chan struct{}, 1), make(chan struct{}, 16)
	stopped := make(chan error, 1)
	go func() {
		stopped <- watched.WatchCommits(ctx, time.Millisecond, `SELECT COALESCE(MAX(id), 0) FROM action_log`,
			func() { listening <- struct{}{} }, func() { heard <- struct{}{} })
	}()
	defer func() {
		cancel()
		if err := <-stopped; err != context.Canceled {
			t.Errorf("WatchCommits stopped with %v, want context.Canceled", err)
		}
	}()
	select {
	case <-listening:
	case err := <-stopped:
		t.Fatalf("WatchCommits: %v", err)
	}
	for _, c := range []struct {
		name string
		db   *store.DB
	}{{"this pool", watched}, {"another process's", other}, {"this pool again", watched}} {
		if _, err := c.db.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('x', ?)", store.FormatTime(fixedNow)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-heard:
		case <-time.After(20 * time.Second):
			t.Fatalf("a commit by %s was not heard", c.name)
		}
	}
}
