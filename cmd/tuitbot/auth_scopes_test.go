package main

import (
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAuthScopes: `tuitbot auth` without --scopes asks X for exactly the
// scopes it asked for before optional scope groups existed; --scopes +dm
// (repeated or in a comma list) adds the direct-message scopes and nothing
// else; an unknown group is a usage error naming the known ones.
func TestAuthScopes(t *testing.T) {
	plain := []string{"bookmark.read", "bookmark.write", "follows.read", "follows.write", "like.read", "like.write",
		"media.write", "mute.write", "offline.access", "tweet.read", "tweet.write", "users.read"}
	withDM := slices.Sorted(slices.Values(append(slices.Clone(plain), "dm.read", "dm.write")))
	for _, tc := range []struct {
		name  string
		flags []string
		want  []string
	}{
		{"no flag", nil, plain},
		{"+dm", []string{"--scopes", "+dm"}, withDM},
		{"a comma list", []string{"--scopes", "+dm,+dm"}, withDM},
		{"repeated", []string{"--scopes", "+dm", "--scopes=+dm"}, withDM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := requestedScopes(t, tc.flags...); !slices.Equal(got, tc.want) {
				t.Fatalf("auth %v asks for %v, want %v", tc.flags, got, tc.want)
			}
		})
	}
	h := newHome(t)
	for _, bad := range []string{"+nope", "dm", "+dm,lists"} {
		r := h.fails(t, "auth", "--scopes", bad)
		if r.code != 2 || !strings.Contains(r.stderr, "+dm") || !strings.Contains(r.stderr, "scope group") {
			t.Errorf("auth --scopes %s: exit %d, stderr %q; want 2 naming the known group +dm", bad, r.code, r.stderr)
		}
	}
}

// requestedScopes starts `tuitbot auth` with flags against a local
// authorize URL and returns the scopes of the URL it prints, sorted.
func requestedScopes(t *testing.T, flags ...string) []string {
	t.Helper()
	h := newHome(t)
	auth := exec.Command(binPath, append([]string{"auth", "--timeout", "30s"}, flags...)...)
	env := append(append([]string{}, h.env...),
		"TUITBOT_X_API__CLIENT_ID=scope-test-client",
		"TUITBOT_X_API__AUTHORIZE_URL=http://127.0.0.1:9/i/oauth2/authorize",
		"TUITBOT_X_API__TOKEN_URL=http://127.0.0.1:9/2/oauth2/token",
		"TUITBOT_X_API__CALLBACK_ADDR=127.0.0.1:0")
	out := startServer(t, auth, env)
	m := out.waitFor(authorizeURL, 20*time.Second)
	if m == nil {
		t.Fatalf("auth printed no authorize URL:\n%s", out)
	}
	u, err := url.Parse(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(slices.Values(strings.Fields(u.Query().Get("scope"))))
}
