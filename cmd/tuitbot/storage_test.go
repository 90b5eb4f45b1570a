package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestServeExitsWithoutDatabase: a server that cannot open its database
// must exit with the reason, not stay up answering db_error forever.
func TestServeExitsWithoutDatabase(t *testing.T) {
	h := newHome(t)
	if err := os.WriteFile(h.path("tuitbot.db"), []byte(strings.Repeat("not a database\n", 300)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startStdio(t, h, "--profile", "workflow")
	// stdin stays open: only the missing database may end the process.
	done := make(chan error, 1)
	go func() {
		for range p.lines {
		}
		done <- p.cmd.Wait()
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("server exited 0 without its database\nstderr:\n%s", p.stderr)
		}
		mustContain(t, "stderr", p.stderr.String(), "cannot open the database", h.path("tuitbot.db"))
	case <-time.After(20 * time.Second):
		t.Fatalf("the server kept running without its database\nstderr:\n%s", p.stderr)
	}
}

// TestEmptiedDatabaseIsRefused: a home that had a database refuses a 0-byte
// one and names the fix, which then works.
func TestEmptiedDatabaseIsRefused(t *testing.T) {
	h := newHome(t)
	h.ok(t, "approve", "list")
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(h.path("tuitbot.db" + suffix)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(h.path("tuitbot.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.fails(t, "approve", "list")
	mustContain(t, "stderr", r.stderr, "new or empty", "--accept-new-database")
	if st, err := os.Stat(h.path("tuitbot.db")); err != nil || st.Size() != 0 {
		t.Errorf("the refused database was written to (stat %v, %v)", st, err)
	}
	h.ok(t, "--accept-new-database", "approve", "list")
	h.ok(t, "approve", "list")
}
