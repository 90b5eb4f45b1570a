package xsim

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDemoWorldIsDeterministicAndRich(t *testing.T) {
	a, b := DemoWorldAt(9, testEpoch), DemoWorldAt(9, testEpoch)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed and time gave different worlds")
	}
	if c := DemoWorldAt(10, testEpoch); reflect.DeepEqual(a.Tweets, c.Tweets) {
		t.Fatal("different seeds gave the same posts")
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(a.Users) != 31+len(DemoBrands) || len(a.Tweets) != 300+historyPosts {
		t.Fatalf("users %d tweets %d", len(a.Users), len(a.Tweets))
	}
	// The sandbox runs at least three accounts, each its own user.
	if len(a.DemoAccounts) < 3 || a.DemoAccounts["default"] != a.DemoUserID {
		t.Fatalf("demo accounts %v: want at least three, default being the demo user %s", a.DemoAccounts, a.DemoUserID)
	}
	seenUser := map[string]bool{}
	for name, id := range a.DemoAccounts {
		if seenUser[id] {
			t.Fatalf("demo account %s shares user %s with another account", name, id)
		}
		seenUser[id] = true
	}
	var mentions, replies, retweets, links, demoPosts, history int
	for _, tw := range a.Tweets {
		if tw.CreatedAt.Before(testEpoch.Add(-7 * 24 * time.Hour)) {
			// Only the demo account's history, original posts within
			// 90 days, is older than the week.
			if tw.AuthorID != a.DemoUserID || tw.CreatedAt.Before(testEpoch.Add(-90*24*time.Hour)) ||
				tw.InReplyToTweetID != "" || tw.QuoteOf != "" || tw.RetweetOf != "" {
				t.Fatalf("post %s at %v is outside the last 7 days and not of the demo account's history", tw.ID, tw.CreatedAt)
			}
			history++
			continue
		}
		if tw.CreatedAt.After(testEpoch) {
			t.Fatalf("post %s at %v is in the future", tw.ID, tw.CreatedAt)
		}
		if strings.Contains(tw.Text, "@"+DemoUsername) {
			mentions++
		}
		if tw.InReplyToTweetID != "" {
			replies++
		}
		if tw.RetweetOf != "" {
			retweets++
		}
		if hasLink(tw.Text) {
			links++
		}
		if tw.AuthorID == a.DemoUserID {
			demoPosts++
		}
	}
	if history != historyPosts {
		t.Errorf("%d posts of the demo account's history, want %d", history, historyPosts)
	}
	for name, n := range map[string]int{"mentions": mentions, "replies": replies, "retweets": retweets, "links": links, "demo posts": demoPosts, "follows": len(a.Follows), "likes": len(a.Likes), "bookmarks": len(a.Bookmarks)} {
		if n < 3 {
			t.Errorf("only %d %s", n, name)
		}
	}
}

func TestSaveLoadWorldRoundTrip(t *testing.T) {
	e := newEnv(t)
	id := e.post("persist me")
	e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": e.someTweet()})
	dir := t.TempDir()
	path := filepath.Join(dir, "world.json")
	if err := SaveWorld(path, e.s.World()); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v", st.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), e.token) {
		t.Fatal("world file contains a bearer token")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
	w, err := LoadWorld(path)
	if err != nil {
		t.Fatal(err)
	}
	s2 := New(Options{World: w, Now: e.clock.Now})
	// The token issued before the save still works after a reload, since
	// grants persist (as hashes).
	e.s.Close()
	base, err := s2.Start(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	e.base = base
	r := e.get("/2/tweets/" + id)
	if r.data()["text"] != "persist me" {
		t.Fatalf("reloaded world lost the post: %s", r.raw)
	}
	if !reflect.DeepEqual(normalise(t, e.s.World()), normalise(t, s2.World())) {
		t.Fatal("world changed across save/load")
	}
}

func normalise(t *testing.T, w *World) map[string]any {
	t.Helper()
	w.SavedAt = time.Time{}
	w.Billing = nil
	w.Seen = nil
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoadWorldRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := DemoWorldAt(1, testEpoch)
	write := func(name string, mutate func(*World)) string {
		w := good.Clone()
		mutate(w)
		p := filepath.Join(dir, name)
		if err := SaveWorld(p, w); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]string{
		"version":        write("v.json", func(w *World) { w.Version = 99 }),
		"demo user":      write("d.json", func(w *World) { w.DemoUserID = "1" }),
		"bad user id":    write("u.json", func(w *World) { w.Users[1].ID = "abc" }),
		"dup username":   write("n.json", func(w *World) { w.Users[2].Username = w.Users[1].Username }),
		"orphan tweet":   write("t.json", func(w *World) { w.Tweets[0].AuthorID = "5" }),
		"dangling like":  write("l.json", func(w *World) { w.Likes[0].To = "5" }),
		"bad follow":     write("f.json", func(w *World) { w.Follows[0].To = "5" }),
		"bad username":   write("b.json", func(w *World) { w.Users[1].Username = "has space" }),
		"dup tweet":      write("dt.json", func(w *World) { w.Tweets[1].ID = w.Tweets[0].ID }),
		"dangling bmark": write("bm.json", func(w *World) { w.Bookmarks[0].From = "5" }),
	}
	for name, p := range cases {
		if _, err := LoadWorld(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	garbage := filepath.Join(dir, "g.json")
	_ = os.WriteFile(garbage, []byte("{not json"), 0o600)
	if _, err := LoadWorld(garbage); err == nil {
		t.Error("garbage loaded")
	}
	if _, err := LoadWorld(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file loaded")
	}
	if err := SaveWorld(filepath.Join(dir, "no", "such", "dir.json"), good); err == nil {
		t.Error("save into a missing directory succeeded")
	}
	if err := SaveWorld(filepath.Join(dir, "nil.json"), nil); err == nil {
		t.Error("nil world saved")
	}
}

func TestWorldSnapshotIsACopy(t *testing.T) {
	e := newEnv(t)
	w := e.s.World()
	w.Users[0].Name = "mutated"
	w.Tweets = nil
	if e.s.World().Users[0].Name == "mutated" || len(e.s.World().Tweets) == 0 {
		t.Fatal("World() aliases server state")
	}
	// The Options world is copied too.
	src := DemoWorldAt(3, testEpoch)
	s := New(Options{World: src, Now: func() time.Time { return testEpoch }})
	tok, _, _ := s.IssueToken("", s.AllScopes())
	_ = tok
	if len(src.Grants) != 0 {
		t.Fatal("New mutated the caller's world")
	}
}

func TestStartRefusesNonLoopback(t *testing.T) {
	s := New(Options{World: DemoWorldAt(1, testEpoch)})
	for _, addr := range []string{"0.0.0.0:0", "example.com:80", "10.0.0.1:0", "nonsense"} {
		if _, err := s.Start(t.Context(), addr); err == nil {
			t.Errorf("Start(%q) accepted", addr)
		}
	}
	base, err := s.Start(t.Context(), "127.0.0.1:0")
	if err != nil || !strings.HasPrefix(base, "http://127.0.0.1:") || s.URL() != base {
		t.Fatalf("start: %v %q %q", err, base, s.URL())
	}
	if _, err := s.Start(t.Context(), ""); err == nil {
		t.Error("second Start accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

func TestStartStopsWithContext(t *testing.T) {
	s := New(Options{World: DemoWorldAt(1, testEpoch)})
	ctx, cancel := context.WithCancel(context.Background())
	base, err := s.Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	// listenerDone closes once Serve has returned, i.e. the listener is
	// closed; only the context's end can get it there in this test.
	select {
	case <-s.listenerDone:
	case <-time.After(5 * time.Second):
		t.Fatal("server still serving after its context ended")
	}
	if res, err := http.Get(base + "/2/users/me"); err == nil {
		res.Body.Close()
		t.Fatal("server still answering after its context ended")
	}
}

func TestPostAsAndUserIDByUsername(t *testing.T) {
	e := newEnv(t)
	gabe := e.s.UserIDByUsername("GOPHER_GABE")
	if gabe == "" || e.s.UserIDByUsername("nobody_here") != "" {
		t.Fatal("UserIDByUsername")
	}
	id, err := e.s.PostAs(gabe, "@"+DemoUsername+" ping from a test", "")
	if err != nil {
		t.Fatal(err)
	}
	r := e.get("/2/users/" + e.me + "/mentions?max_results=5")
	if r.list()[0].(map[string]any)["id"] != id {
		t.Fatalf("newest mention is not the arranged post: %s", r.raw)
	}
	if _, err := e.s.PostAs(gabe, "reply", id); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][3]string{{"1", "x", ""}, {gabe, " ", ""}, {gabe, "x", "5"}} {
		if _, err := e.s.PostAs(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("PostAs%v accepted", bad)
		}
	}
	if e.counter(CountTweetsCreated) != 0 {
		t.Fatal("arranged posts counted as API side effects")
	}
}

func TestWorldSnapshotSlicesAreDeepCopies(t *testing.T) {
	e := newEnv(t)
	tok, _, _ := e.s.IssueToken("", []string{"tweet.read", "users.read"})
	w := e.s.World()
	for i := range w.Grants {
		for j := range w.Grants[i].Scopes {
			w.Grants[i].Scopes[j] = "tweet.write"
		}
	}
	wantProblem(t, e.doTok("POST", "/2/tweets", tok, map[string]any{"text": "escalated?"}), 403, typeBlank)
}

func TestCloneIsDeep(t *testing.T) {
	w := DemoWorldAt(5, testEpoch)
	w.Tweets[0].MediaKeys = []string{"3_1"}
	w.Media = []Media{{ID: "1", Segments: []int{0}, Head: []byte{1}}}
	w.Grants = []Grant{{Hash: "h", Scopes: []string{"tweet.read"}}}
	c := w.Clone()
	if !reflect.DeepEqual(w, c) {
		t.Fatal("clone differs")
	}
	c.Tweets[0].MediaKeys[0] = "x"
	c.Media[0].Segments[0] = 9
	c.Media[0].Head[0] = 9
	c.Grants[0].Scopes[0] = "x"
	c.Users[0].Name = "x"
	if w.Tweets[0].MediaKeys[0] != "3_1" || w.Media[0].Segments[0] != 0 || w.Media[0].Head[0] != 1 || w.Grants[0].Scopes[0] != "tweet.read" || w.Users[0].Name == "x" {
		t.Fatal("clone shares memory with the original")
	}
	if (*World)(nil).Clone() != nil {
		t.Fatal("nil clone")
	}
}
