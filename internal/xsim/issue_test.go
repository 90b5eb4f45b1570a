package xsim

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
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

// TestRefreshValid: a refresh token counts as a working login only while
// X would still accept it for that user with every scope asked for.
func TestRefreshValid(t *testing.T) {
	e := newEnv(t)
	all := e.s.AllScopes()
	users := e.s.World().Users
	me, other := users[0].ID, users[1].ID
	fresh := e.s.IssueTokens([]string{me}, all)[0]
	used := e.s.IssueTokens([]string{me}, all)[0]
	revoked := e.s.IssueTokens([]string{me}, all)[0]
	narrow := e.s.IssueTokens([]string{me}, []string{"tweet.read", "users.read", "offline.access"})[0]
	wantStatus(t, e.tokenCall(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {used.Refresh}, "client_id": {DefaultClientID}}), 200)
	req, err := http.NewRequest("POST", e.base+"/2/oauth2/revoke", strings.NewReader(url.Values{"token": {revoked.Access}, "client_id": {DefaultClientID}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	wantStatus(t, e.send(req), 200)
	for _, tc := range []struct {
		name, user, refresh string
		scopes              []string
		want                bool
	}{
		{"fresh", me, fresh.Refresh, all, true},
		{"used by a refresh", me, used.Refresh, all, false},
		{"revoked with its access token", me, revoked.Refresh, all, false},
		{"another user's", other, fresh.Refresh, all, false},
		{"missing a scope", me, narrow.Refresh, all, false},
		{"enough scopes", me, narrow.Refresh, []string{"tweet.read"}, true},
		{"an access token", me, fresh.Access, all, false},
		{"unknown", me, "not-a-token", all, false},
		{"empty", me, "", all, false},
	} {
		if got := e.s.RefreshValid(tc.user, tc.refresh, tc.scopes); got != tc.want {
			t.Errorf("%s: RefreshValid = %v, want %v", tc.name, got, tc.want)
		}
	}
}
