package xauth

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// FuzzLoadToken feeds arbitrary file contents to the token-file parser. It
// must never panic, must reject with a config error naming the file, and
// whatever it accepts must survive a write/read round trip unchanged.
func FuzzLoadToken(f *testing.F) {
	for _, s := range []string{
		`{"access_token":"a","refresh_token":"r","token_type":"bearer","expires_at":"2026-03-01T14:00:00Z","scopes":["tweet.read","offline.access"]}`,
		`{"access_token":"a"}`,
		`{"access_token":"a","expires_at":"2026-03-01T14:00:00+02:00"}`,
		`{"access_token":"a","expires_at":"not a time"}`,
		`{"access_token":""}`,
		`{"access_token":"a b"}`,
		`{"access_token":"a","token_type":"mac"}`,
		`{"access_token":"a","scopes":[""]}`,
		`{"access_token":"a","scopes":null}`,
		`{"access_token":"a"} trailing`,
		`[]`,
		`null`,
		``,
		`{`,
		"{\"access_token\":\"\\u00e9\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz-tokens.json"
		tok, err := parseToken(data, name)
		if err != nil {
			if apperr.CodeOf(err) != apperr.ConfigError || !strings.Contains(err.Error(), name) {
				t.Fatalf("rejection %v is not a config error naming the file", err)
			}
			return
		}
		if tok.AccessToken == "" {
			t.Fatal("accepted a token without access_token")
		}
		enc, err := encodeToken(tok)
		if err != nil {
			t.Fatalf("cannot encode an accepted token: %v", err)
		}
		back, err := parseToken(enc, name)
		if err != nil {
			t.Fatalf("re-parsing our own encoding failed: %v", err)
		}
		if back.AccessToken != tok.AccessToken || back.RefreshToken != tok.RefreshToken ||
			back.TokenType != tok.TokenType || !back.ExpiresAt.Equal(tok.ExpiresAt) ||
			!slices.Equal(back.Scopes, tok.Scopes) {
			t.Fatalf("round trip changed the token")
		}
		// The printed form must not depend on the token values at all.
		other := tok.clone()
		other.AccessToken = "different-access"
		if other.RefreshToken != "" {
			other.RefreshToken = "different-refresh"
		}
		if tok.String() != other.String() {
			t.Fatal("String() depends on the token values")
		}
	})
}

// FuzzParseCallback feeds arbitrary pasted text to the headless-mode parser.
// It must never panic, and may only return a code when the text is a URL
// whose single state parameter equals the expected one.
func FuzzParseCallback(f *testing.F) {
	const state = "expected-state_0123456789abcdefghijklmnopqrstu"
	for _, s := range []string{
		"http://127.0.0.1:8080/callback?code=abc&state=" + state,
		"https://127.0.0.1:8080/callback?state=" + state + "&code=Q2xhc3NpYw",
		"http://127.0.0.1:8080/callback?code=abc&state=wrong",
		"http://127.0.0.1:8080/callback?code=abc",
		"http://127.0.0.1:8080/callback?code=abc&state=" + state + "&state=" + state,
		"http://127.0.0.1:8080/callback?error=access_denied&state=" + state,
		"http://127.0.0.1:8080/callback?code=&state=" + state,
		"http://127.0.0.1:8080/callback?code=a%20b&state=" + state,
		"http://127.0.0.1:8080/callback?code=abc&state=" + state + "&bad=%zz",
		"code=abc&state=" + state,
		"abc",
		"javascript://x?code=a&state=" + state,
		"   ",
		"http://[::1/callback?code=a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		code, err := parseCallback(raw, state)
		if err != nil {
			if code != "" {
				t.Fatal("returned a code together with an error")
			}
			if c := apperr.CodeOf(err); c != apperr.InvalidInput && c != apperr.XForbidden {
				t.Fatalf("unexpected error code %s: %v", c, err)
			}
			return
		}
		if code == "" || checkTokenChars(code) != nil {
			t.Fatalf("accepted an unusable code %q", code)
		}
		u, perr := url.Parse(strings.TrimSpace(raw))
		if perr != nil {
			t.Fatalf("accepted text that is not a URL: %v", perr)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		q := u.Query()
		if got := q["state"]; len(got) != 1 || got[0] != state {
			t.Fatalf("accepted state %q", got)
		}
		if got := q["code"]; len(got) != 1 || got[0] != code {
			t.Fatalf("returned code %q, URL carries %q", code, got)
		}
	})
}
