package xsim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadedServer is an emulator serving the world in the state file at
// path, as a sandbox runs one: loaded from the file, keeping it, without a
// listener. Nothing closes it: see abandon.
func loadedServer(t *testing.T, path string) *Server {
	t.Helper()
	opts := DefaultOptions()
	opts.RateLimits = false
	opts.World = mustLoad(t, path)
	opts.StateFile = path
	return New(opts)
}

// abandon stops s writing its files without the last write of Close, as
// if its process had been killed.
func abandon(s *Server) {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.stopSaving = true
	s.closeLog()
}

// newStateFile writes the test world to a new state file.
func newStateFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "world.json")
	if err := SaveWorld(path, DemoWorldAt(42, testEpoch)); err != nil {
		t.Fatal(err)
	}
	return path
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func texts(w *World) []string {
	var out []string
	for _, t := range w.Tweets {
		out = append(out, t.Text)
	}
	return out
}

// TestWorldLogDropsATornLastLine: a last line that a killed writer left
// cut short or garbled was never answered. Loading drops it and keeps
// every line before it, and the next emulator carries the log on after
// them, so a later load sees its changes too.
func TestWorldLogDropsATornLastLine(t *testing.T) {
	line, err := encodeLogLine(&logRecord{Tweets: []Tweet{{ID: "2", AuthorID: "1", Text: "torn"}}, Sequence: 2})
	if err != nil {
		t.Fatal(err)
	}
	garbled := slices.Clone(line)
	garbled[len(garbled)/2] ^= 0x20
	for _, tc := range []struct {
		name string
		tail []byte
	}{
		{"cut in the middle", line[:len(line)/2]},
		{"cut before its newline", line[:len(line)-1]},
		{"cut inside its checksum", line[:3]},
		{"whole but garbled", garbled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := newStateFile(t)
			s := loadedServer(t, path)
			for _, text := range []string{"kept one", "kept two"} {
				if _, err := s.PostAs(s.DemoUserID(), text, ""); err != nil {
					t.Fatal(err)
				}
			}
			want := s.World()
			abandon(s)
			appendFile(t, WorldLogPath(path), tc.tail)

			got, err := LoadWorld(path)
			if err != nil {
				t.Fatalf("load with a torn last line: %v", err)
			}
			wantSameWorld(t, "the world loaded past a torn line", want, got)
			if slices.Contains(texts(got), "torn") {
				t.Fatal("the torn line was applied")
			}

			next := loadedServer(t, path)
			if _, err := next.PostAs(next.DemoUserID(), "after the cut", ""); err != nil {
				t.Fatal(err)
			}
			want = next.World()
			abandon(next)
			got, err = LoadWorld(path)
			if err != nil {
				t.Fatalf("load after the next emulator carried the log on: %v", err)
			}
			wantSameWorld(t, "the world the next emulator logged", want, got)
			for _, text := range []string{"kept one", "kept two", "after the cut"} {
				if !slices.Contains(texts(got), text) {
					t.Errorf("%q is not in the world loaded at the end", text)
				}
			}
		})
	}
}

// TestWorldLogDamageIsAnError: a bad line with whole lines after it is
// not a write cut short: loading refuses, naming the line, rather than
// drop answered changes silently.
func TestWorldLogDamageIsAnError(t *testing.T) {
	path := newStateFile(t)
	s := loadedServer(t, path)
	for _, text := range []string{"one", "two", "three"} {
		if _, err := s.PostAs(s.DemoUserID(), text, ""); err != nil {
			t.Fatal(err)
		}
	}
	abandon(s)
	b, err := os.ReadFile(WorldLogPath(path))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines[1][20] ^= 0x01 // the first change, with two after it
	if err := os.WriteFile(WorldLogPath(path), bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadWorld(path)
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "world.json.log") {
		t.Fatalf("load of a log damaged in the middle: %v, want an error naming the log and line 2", err)
	}
}

// TestWorldLogOfAnotherWorldFileIsIgnored: a log whose header names an
// earlier world file (the process was killed after writing the world file
// and before starting the new log, or SaveWorld wrote one) adds nothing:
// the world file holds it all.
func TestWorldLogOfAnotherWorldFileIsIgnored(t *testing.T) {
	path := newStateFile(t)
	s := loadedServer(t, path)
	if _, err := s.PostAs(s.DemoUserID(), "in the log only", ""); err != nil {
		t.Fatal(err)
	}
	abandon(s)
	other := DemoWorldAt(7, testEpoch)
	if err := SaveWorld(path, other); err != nil {
		t.Fatal(err)
	}
	got := mustLoad(t, path)
	wantSameWorld(t, "a world saved over a log", other, got)
}

// TestALikeWritesWhatItTouched: with a state file, one like appends a
// short record to the log and leaves the world file alone, the same at a
// small world as at a large one: what a change costs does not grow with
// the world.
func TestALikeWritesWhatItTouched(t *testing.T) {
	var grew []int64
	for _, posts := range []int{1_000, 20_000} {
		path := filepath.Join(t.TempDir(), "world.json")
		w := grownWorld(posts)
		if err := SaveWorld(path, w); err != nil {
			t.Fatal(err)
		}
		s := loadedServer(t, path)
		t.Cleanup(func() { _ = s.Close() })
		tok, _, _ := s.IssueToken("", s.AllScopes())
		ids := likeTargets(w)
		before, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		logBefore, err := os.Stat(WorldLogPath(path))
		if err != nil {
			t.Fatalf("posts=%d: no log after a change: %v", posts, err)
		}
		req := httptest.NewRequest(http.MethodPost, "/2/users/"+s.DemoUserID()+"/likes", strings.NewReader(`{"tweet_id":"`+ids[len(ids)/2]+`"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("posts=%d: like: %d %s", posts, rec.Code, rec.Body)
		}
		after, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
			t.Errorf("posts=%d: a like rewrote the world file", posts)
		}
		logAfter, err := os.Stat(WorldLogPath(path))
		if err != nil {
			t.Fatal(err)
		}
		d := logAfter.Size() - logBefore.Size()
		if d <= 0 || d > 1024 {
			t.Errorf("posts=%d: a like grew the log by %d bytes, want a short record", posts, d)
		}
		if !slices.Contains(likeIDs(mustLoad(t, path), s.DemoUserID()), ids[len(ids)/2]) {
			t.Errorf("posts=%d: the like is not in the files", posts)
		}
		grew = append(grew, d)
	}
	if len(grew) == 2 && grew[1] > grew[0]+16 {
		t.Errorf("a like wrote %d bytes at the small world and %d at the large one: the cost grows with the world", grew[0], grew[1])
	}
}

func likeIDs(w *World, user string) []string {
	var out []string
	for _, e := range w.Likes {
		if e.From == user {
			out = append(out, e.To)
		}
	}
	return out
}

// TestWorldRewriteKeepsTheWorld: when the log grows past its limit the
// world file is rewritten with the log's changes and a new log started,
// and Close does it once more; at each step the files load as the world
// the server has, and the world after a reload is the world before it.
func TestWorldRewriteKeepsTheWorld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "world.json")
	e := newEnv(t, func(o *Options) { o.StateFile = path; o.rewriteLogAt = 4 << 10 })
	journal := func() string { return mustLoad(t, path).Journal }
	first := journal()
	changeTheWorld(t, e)
	if journal() == first {
		t.Fatal("the log grew past its limit and the world file was not rewritten")
	}
	wantFilesHold(t, e.s, path)

	want := e.s.World()
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(WorldLogPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if log, err := parseLog(b); err != nil || len(log.records) != 0 || log.journal != journal() {
		t.Errorf("after Close the log holds %d records for world file %q (%v), want none, for %q", len(log.records), log.journal, err, journal())
	}
	wantSameWorld(t, "the world file Close wrote", want, mustLoad(t, path))
}

// changeTheWorld makes one change of each kind through the API, a few
// times over.
func changeTheWorld(t *testing.T, e *env) {
	t.Helper()
	others := []string{}
	for _, u := range e.s.World().Users {
		if u.ID != e.me {
			others = append(others, u.ID)
		}
	}
	for round := range 4 {
		id := e.post(fmt.Sprintf("round %d of changes", round))
		target := e.someTweet()
		other := others[round%len(others)]
		wantStatus(t, e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": target}), 200)
		wantStatus(t, e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": id}), 200)
		wantStatus(t, e.do("POST", "/2/users/"+e.me+"/bookmarks", map[string]any{"tweet_id": target}), 200)
		wantStatus(t, e.do("POST", "/2/users/"+e.me+"/retweets", map[string]any{"tweet_id": target}), 200)
		wantStatus(t, e.do("POST", "/2/users/"+e.me+"/following", map[string]any{"target_user_id": other}), 200)
		wantStatus(t, e.do("POST", "/2/users/"+e.me+"/muting", map[string]any{"target_user_id": other}), 200)
		r := e.do("POST", "/2/lists", map[string]any{"name": fmt.Sprintf("list %d", round)})
		wantStatus(t, r, 201)
		wantStatus(t, e.do("POST", "/2/lists/"+r.data()["id"].(string)+"/members", map[string]any{"user_id": other}), 200)
		wantStatus(t, e.do("POST", "/2/media/upload/initialize", map[string]any{"media_type": "image/png", "total_bytes": 20}), 200)
		if round%2 == 1 {
			wantStatus(t, e.do("DELETE", "/2/tweets/"+id, nil), 200)
			wantStatus(t, e.do("DELETE", "/2/users/"+e.me+"/muting/"+other, nil), 200)
			wantStatus(t, e.do("DELETE", "/2/users/"+e.me+"/retweets/"+target, nil), 200)
		}
		e.s.SetSuspended(other, round%2 == 0)
	}
}

// envKilledOwner, set, makes TestKilledOwnerLosesNoAnsweredChange the
// emulator process it kills: it serves the world file named by the
// variable and waits to be killed.
const envKilledOwner = "XSIM_TEST_KILLED_OWNER"

// TestKilledOwnerLosesNoAnsweredChange: an emulator process serving a
// world file is killed (SIGKILL, no chance to clean up) right after its
// answers; the world loaded from the files has every answered change.
// A second process carries on from them and is killed in turn, and the
// changes of both are there.
func TestKilledOwnerLosesNoAnsweredChange(t *testing.T) {
	if path := os.Getenv(envKilledOwner); path != "" {
		serveUntilKilled(path)
		return
	}
	path := newStateFile(t)
	w := mustLoad(t, path)
	var others []string
	for _, u := range w.Users {
		if u.ID != w.DemoUserID {
			others = append(others, u.ID)
		}
	}
	targets := likeTargets(w)
	var posted, gone, liked []string
	for round := range 2 {
		c := startKilledOwner(t, path)
		for i := range 5 {
			status, data := c.do(t, "POST", "/2/tweets", map[string]any{"text": fmt.Sprintf("round %d post %d", round, i)})
			if status != 201 {
				t.Fatalf("post: %d", status)
			}
			posted = append(posted, data["id"].(string))
			tid := targets[round*5+i]
			if status, _ := c.do(t, "POST", "/2/users/"+w.DemoUserID+"/likes", map[string]any{"tweet_id": tid}); status != 200 {
				t.Fatalf("like: %d", status)
			}
			liked = append(liked, tid)
		}
		if status, _ := c.do(t, "POST", "/2/users/"+w.DemoUserID+"/following", map[string]any{"target_user_id": others[round]}); status != 200 {
			t.Fatalf("follow: %d", status)
		}
		if round == 1 {
			// A post of the first process, deleted by the second.
			if status, _ := c.do(t, "DELETE", "/2/tweets/"+posted[0], nil); status != 200 {
				t.Fatalf("delete: %d", status)
			}
			gone, posted = append(gone, posted[0]), posted[1:]
		}
		c.kill(t)

		got := mustLoad(t, path)
		live := map[string]bool{}
		for _, tw := range got.Tweets {
			live[tw.ID] = true
		}
		for _, id := range posted {
			if !live[id] {
				t.Errorf("round %d: answered post %s is not in the files", round, id)
			}
		}
		for _, id := range gone {
			if live[id] {
				t.Errorf("round %d: post %s, answered as deleted, is in the files", round, id)
			}
		}
		have := likeIDs(got, w.DemoUserID)
		for _, id := range liked {
			if !slices.Contains(have, id) {
				t.Errorf("round %d: answered like of %s is not in the files", round, id)
			}
		}
		for _, o := range others[:round+1] {
			if !slices.ContainsFunc(got.Follows, func(e Edge) bool { return e.From == w.DemoUserID && e.To == o }) {
				t.Errorf("round %d: answered follow of %s is not in the files", round, o)
			}
		}
	}
}

// killedOwner is an emulator process for TestKilledOwnerLosesNoAnsweredChange.
type killedOwner struct {
	cmd        *exec.Cmd
	base, tok  string
	hc         *http.Client
	stderr     *strings.Builder
	stdinGuard io.WriteCloser
}

func startKilledOwner(t *testing.T, path string) *killedOwner {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledOwnerLosesNoAnsweredChange$", "-test.count=1")
	cmd.Env = append(os.Environ(), envKilledOwner+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &killedOwner{cmd: cmd, stderr: &stderr, stdinGuard: stdin, hc: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if _, serr := fmt.Sscan(line, &c.base, &c.tok); err != nil || serr != nil {
		t.Fatalf("the emulator process did not start (%q, %v): %s", line, err, &stderr)
	}
	return c
}

func (c *killedOwner) do(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var out struct {
		Data map[string]any `json:"data"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Data
}

// kill ends the process with SIGKILL: no deferred write, no Close.
func (c *killedOwner) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the emulator process ended otherwise than killed: %v\n%s", c.cmd.ProcessState, c.stderr)
	}
}

// serveUntilKilled is the killed emulator process: it takes the world
// file's lock, serves the world as a sandbox does, says where, and waits
// for its kill (or its parent's end).
func serveUntilKilled(path string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	wl, err := LockWorld(path)
	if err != nil {
		fail(err)
	}
	w, err := LoadWorld(path)
	if err != nil {
		fail(err)
	}
	opts := DefaultOptions()
	opts.RateLimits = false
	opts.World, opts.StateFile, opts.WorldLock = w, path, wl
	s := New(opts)
	base, err := s.Start(context.Background(), "")
	if err != nil {
		fail(err)
	}
	tok, _, _ := s.IssueToken("", s.AllScopes())
	fmt.Println(base, tok)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(3)
}

// FuzzParseLog: the log is read from disk at every start, so it is
// untrusted input: whatever it holds, parsing neither panics nor claims
// more than it read, what it keeps re-reads the same, and replaying it
// onto a world does not panic (Validate judges the result).
func FuzzParseLog(f *testing.F) {
	head, _ := encodeLogLine(&logRecord{Journal: "j1"})
	rec, _ := encodeLogLine(&logRecord{Tweets: []Tweet{{ID: "2", AuthorID: "1", Text: "x"}},
		Likes: &edgeChanges{Set: []Edge{{From: "1", To: "2"}}, Gone: []Edge{{From: "1", To: "3"}}}, Billing: []Charge{{Kind: "k", Units: 1}},
		DMs: []DMEvent{{ID: "5", SenderID: "1", ParticipantIDs: []string{"1", "1"}}}, Settings: &logSettings{DemoUserID: "1"}, Sequence: 9})
	f.Add(slices.Concat(head, rec))
	f.Add(slices.Concat(head, rec, rec[:len(rec)/2]))
	f.Add(slices.Concat(head, []byte("00000000 {}\n"), rec))
	f.Add([]byte("\n\n\n"))
	base := DemoWorldAt(42, testEpoch)
	f.Fuzz(func(t *testing.T, b []byte) {
		log, err := parseLog(b)
		if err != nil {
			return
		}
		if log.valid < 0 || log.valid > int64(len(b)) || log.valid > 0 && b[log.valid-1] != '\n' {
			t.Fatalf("valid %d of %d bytes", log.valid, len(b))
		}
		again, err := parseLog(b[:log.valid])
		if err != nil || again.valid != log.valid || len(again.records) != len(log.records) || again.journal != log.journal {
			t.Fatalf("the kept part re-reads otherwise: %v", err)
		}
		w := base.Clone()
		replay(w, log.records)
		_ = w.Validate()
	})
}
