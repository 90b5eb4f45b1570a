package xsim

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestIssueTokensWritesTheWorldOnce: a sandbox logs in all its accounts as
// it starts; their tokens are minted together and the state file is
// written once for all of them, before any is handed out, so a successor
// that loads it accepts every one.
func TestIssueTokensWritesTheWorldOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "world.json")
	var writes atomic.Int32
	e := newEnv(t, func(o *Options) {
		o.StateFile = path
		o.afterSave = func() { writes.Add(1) }
	})
	var users []string
	for _, u := range e.s.World().Users[:3] {
		users = append(users, u.ID)
	}
	writes.Store(0)
	got := e.s.IssueTokens(users, e.s.AllScopes())
	if n := writes.Load(); n != 1 {
		t.Errorf("IssueTokens for %d users wrote the state file %d times, want 1", len(users), n)
	}
	if len(got) != len(users) {
		t.Fatalf("IssueTokens returned %d answers for %d users", len(got), len(users))
	}
	succ := httptest.NewServer(New(Options{World: mustLoad(t, path), Now: e.clock.Now}).Handler())
	defer succ.Close()
	for i, tok := range got {
		if tok.Refresh == "" || tok.ExpiresIn != DefaultTokenTTL {
			t.Errorf("user %s: refresh %q, expires in %v; want a refresh token (offline.access) and %v", users[i], tok.Refresh, tok.ExpiresIn, DefaultTokenTTL)
		}
		for _, base := range []string{e.base, succ.URL} {
			req, err := http.NewRequest("GET", base+"/2/users/me", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tok.Access)
			r := e.send(req)
			wantStatus(t, r, 200)
			if id := r.data()["id"]; id != users[i] {
				t.Errorf("%s: token %d acts as %v, want %s", base, i, id, users[i])
			}
		}
	}
}
