package xsim

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
)

// worldTexts reads the state file as a successor would and returns its
// posts' texts.
func worldTexts(t *testing.T, path string) []string {
	t.Helper()
	w, err := LoadWorld(path)
	if err != nil {
		t.Fatalf("load the state file: %v", err)
	}
	var out []string
	for _, tw := range w.Tweets {
		out = append(out, tw.Text)
	}
	return out
}

// TestStateFileHoldsEveryAnsweredChange: with a StateFile, a change is on
// disk by the time its answer arrives, so a process that loads the file
// right after (the emulator's process may have died) sees it; and tokens
// handed out before any request are there too.
func TestStateFileHoldsEveryAnsweredChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "world.json")
	e := newEnv(t, func(o *Options) { o.StateFile = path })

	// The token newEnv issued is in the file: a successor accepts it.
	succ := httptest.NewServer(New(Options{World: mustLoad(t, path), Now: e.clock.Now}).Handler())
	defer succ.Close()
	req, _ := http.NewRequest("GET", succ.URL+"/2/users/me", nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	if r := e.send(req); r.status != 200 {
		t.Fatalf("a server loaded from the state file answers %d to the token issued before any request", r.status)
	}

	r := e.do("POST", "/2/tweets", map[string]any{"text": "saved before the answer"})
	wantStatus(t, r, 201)
	if !slices.Contains(worldTexts(t, path), "saved before the answer") {
		t.Fatal("the created post is not in the state file when the answer arrives")
	}
	id := r.data()["id"].(string)
	wantStatus(t, e.do("DELETE", "/2/tweets/"+id, nil), 200)
	if slices.Contains(worldTexts(t, path), "saved before the answer") {
		t.Fatal("the deleted post is still in the state file when the answer arrives")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %o, want 600", st.Mode().Perm())
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".xsim-world-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left beside the state file: %v", leftovers)
	}

	// A read that changes nothing does not rewrite the file, nor add to
	// its log.
	e.get("/2/users/me")
	before, _ := os.Stat(path)
	logBefore, _ := os.Stat(WorldLogPath(path))
	wantStatus(t, e.get("/2/users/me"), 200)
	after, _ := os.Stat(path)
	logAfter, _ := os.Stat(WorldLogPath(path))
	if !os.SameFile(before, after) {
		t.Error("a read that changed nothing rewrote the state file")
	}
	if logBefore == nil || logAfter == nil || logAfter.Size() != logBefore.Size() {
		t.Error("a read that changed nothing wrote to the state file's log")
	}
	if st, err := os.Stat(WorldLogPath(path)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("state file log: %v, mode %v, want 600", err, st)
	}

	// After Close nothing writes the file any more: a successor owns it.
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	closed, _ := os.Stat(path)
	if _, err := e.s.PostAs(e.me, "after close", ""); err != nil {
		t.Fatal(err)
	}
	now, _ := os.Stat(path)
	if !os.SameFile(closed, now) || slices.Contains(worldTexts(t, path), "after close") {
		t.Error("a change after Close rewrote the state file")
	}
}

func mustLoad(t *testing.T, path string) *World {
	t.Helper()
	w, err := LoadWorld(path)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestStateFileIsCompact: the file is written without indentation, which
// took half the time of every write.
func TestStateFileIsCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "world.json")
	e := newEnv(t, func(o *Options) { o.StateFile = path })
	e.post("compact")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 1 {
		t.Errorf("the state file has %d lines; want one compact line", n)
	}
}

// TestCoalescedSavesCloseLosesNothing: with SaveEvery, answers do not wait
// for the file, and Close writes every change that was answered, however
// many clients made them at once.
func TestCoalescedSavesCloseLosesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "world.json")
	// Long enough that no timed write happens during the test: only Close
	// can have written the changes.
	e := newEnv(t, func(o *Options) { o.StateFile = path; o.SaveEvery = time.Hour })
	if err := e.s.Save(); err != nil {
		t.Fatal(err)
	}
	const clients, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := e.s.PostAs(e.me, fmt.Sprintf("client %d post %d", c, i), ""); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Through HTTP too: the request path coalesces as well.
	wantStatus(t, e.do("POST", "/2/tweets", map[string]any{"text": "over http"}), 201)
	if texts := worldTexts(t, path); slices.Contains(texts, "over http") || slices.Contains(texts, "client 0 post 0") {
		t.Fatal("with SaveEvery an answer waited for the state file")
	}
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	texts := worldTexts(t, path)
	for c := range clients {
		for i := range each {
			if want := fmt.Sprintf("client %d post %d", c, i); !slices.Contains(texts, want) {
				t.Errorf("%q answered before Close but missing from the state file", want)
			}
		}
	}
	if !slices.Contains(texts, "over http") {
		t.Error(`"over http" answered before Close but missing from the state file`)
	}
}

// TestCoalescedSaveHappensWithoutClose: a change is written within
// SaveEvery on its own, so another process sees it while this one runs.
func TestCoalescedSaveHappensWithoutClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "world.json")
	saved := make(chan struct{}, 16)
	e := newEnv(t, func(o *Options) {
		o.StateFile = path
		o.SaveEvery = time.Millisecond
		o.afterSave = func() { saved <- struct{}{} }
	})
	wantStatus(t, e.do("POST", "/2/tweets", map[string]any{"text": "timed write"}), 201)
	for {
		select {
		case <-saved:
		case <-time.After(10 * time.Second):
			t.Fatal("no timed write of the change")
		}
		if slices.Contains(worldTexts(t, path), "timed write") {
			return
		}
	}
}

// TestCloseWritesOnlyWhatTheFileLacks: Close writes the world durably
// unless the state file already holds it so; a sandbox that starts and
// stops without changing its world costs no encoding and no disk wait.
func TestCloseWritesOnlyWhatTheFileLacks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		act   func(s *Server)
		saves int // after act, and then after Close
		final int
	}{
		{"loaded and unchanged", func(*Server) {}, 0, 0},
		{"saved durably", func(s *Server) { _ = s.Save() }, 1, 1},
		{"changed since", func(s *Server) { s.IssueToken("", s.AllScopes()) }, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "world.json")
			if err := SaveWorld(path, DemoWorldAt(42, testEpoch)); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			opts := DefaultOptions()
			opts.Now = clock.NewFake(testEpoch.Add(time.Hour)).Now
			opts.World = mustLoad(t, path)
			opts.StateFile = path
			saves := 0
			opts.afterSave = func() { saves++ }
			s := New(opts)
			tc.act(s)
			if saves != tc.saves {
				t.Errorf("%d writes before Close, want %d", saves, tc.saves)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if saves != tc.final {
				t.Errorf("%d writes after Close, want %d", saves, tc.final)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if unchanged := bytes.Equal(after, before); unchanged != (tc.final == 0) {
				t.Errorf("file unchanged: %t, want %t", unchanged, tc.final == 0)
			}
		})
	}
}
