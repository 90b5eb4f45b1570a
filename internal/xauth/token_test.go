package xauth

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func sampleToken() *Token {
	return &Token{
		AccessToken:  "AT-known-access-value-1234",
		RefreshToken: "RT-known-refresh-value-5678",
		TokenType:    "bearer",
		ExpiresAt:    time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC),
		Scopes:       DefaultScopes(),
	}
}

func writeRaw(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	// WriteFile's mode is filtered by the umask; set it exactly.
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestSaveTokenWritesPrivateFileAtomically(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new-home")
	path := filepath.Join(dir, "tokens.json")
	tok := sampleToken()
	if err := SaveToken(context.Background(), path, tok); err != nil {
		t.Fatalf("SaveToken: %v", err)
	}
	assertMode(t, path, 0o600)
	assertMode(t, dir, 0o700|os.ModeDir)

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("file is not JSON: %v", err)
	}
	for _, k := range []string{"access_token", "refresh_token", "token_type", "expires_at", "scopes"} {
		if _, ok := f[k]; !ok {
			t.Errorf("file lacks %q", k)
		}
	}
	if f["expires_at"] != "2026-03-01T14:00:00Z" {
		t.Errorf("expires_at = %v, want RFC 3339", f["expires_at"])
	}

	got, err := LoadToken(path)
	if err != nil {
		t.Fatalf("LoadToken: %v", err)
	}
	if got.AccessToken != tok.AccessToken || got.RefreshToken != tok.RefreshToken || got.TokenType != tok.TokenType ||
		!got.ExpiresAt.Equal(tok.ExpiresAt) || !slices.Equal(got.Scopes, tok.Scopes) {
		t.Errorf("round trip changed the token")
	}

	// Replacing goes through rename: the file is a new inode and no temp
	// file is left behind.
	before, _ := os.Stat(path)
	tok2 := sampleToken()
	tok2.AccessToken = "AT-second"
	if err := SaveToken(context.Background(), path, tok2); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if os.SameFile(before, after) {
		t.Error("SaveToken rewrote the file in place instead of renaming a new one over it")
	}
	assertMode(t, path, 0o600)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "tokens.json" && e.Name() != "tokens.json.lock" {
			t.Errorf("stray file %q left in the directory", e.Name())
		}
	}
}

func TestSaveTokenReadersNeverSeeAPartialFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := SaveToken(context.Background(), path, sampleToken()); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var readErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := LoadToken(path); err != nil {
				readErr = err
				return
			}
		}
	}()
	for i := range 200 {
		tok := sampleToken()
		tok.AccessToken = strings.Repeat("a", i%97+1)
		if err := SaveToken(context.Background(), path, tok); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if readErr != nil {
		t.Fatalf("a reader saw a broken file during rewrites: %v", readErr)
	}
}

func TestSaveTokenRejectsInvalidToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	tests := []struct {
		name  string
		tok   *Token
		field string
	}{
		{"nil", nil, "nil"},
		{"empty access token", &Token{}, "access_token"},
		{"newline in access token", &Token{AccessToken: "a\r\nX-Evil: 1"}, "access_token"},
		{"space in refresh token", &Token{AccessToken: "a", RefreshToken: "r r"}, "refresh_token"},
		{"token type", &Token{AccessToken: "a", TokenType: "mac"}, "token_type"},
		{"empty scope", &Token{AccessToken: "a", Scopes: []string{""}}, "scopes[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := SaveToken(context.Background(), path, tc.tok)
			if apperr.CodeOf(err) != apperr.InvalidInput || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want invalid_input naming %s", err, tc.field)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Error("an invalid token was written")
			}
		})
	}
	if err := SaveToken(context.Background(), "", sampleToken()); apperr.CodeOf(err) != apperr.ConfigError {
		t.Errorf("empty path: err = %v, want config_error", err)
	}
}

func TestLoadTokenRefusesSharedFile(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660, 0o606} {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens.json")
			data, _ := encodeToken(sampleToken())
			writeRaw(t, path, string(data), mode)
			_, err := LoadToken(path)
			if apperr.CodeOf(err) != apperr.ConfigError {
				t.Fatalf("err = %v, want config_error", err)
			}
			if !strings.Contains(err.Error(), "chmod 600 "+path) {
				t.Errorf("error %q does not give the fix", err)
			}
			if strings.Contains(err.Error(), sampleToken().AccessToken) {
				t.Error("error contains the token")
			}
			if _, err := Status(path, time.Now()); apperr.CodeOf(err) != apperr.ConfigError {
				t.Errorf("Status accepted the shared file: %v", err)
			}
		})
	}
}

func TestLoadTokenErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    apperr.Code
		msg     string
	}{
		{"malformed JSON", `{"access_token": "abc"`, apperr.ConfigError, "not a JSON token object"},
		{"not an object", `["abc"]`, apperr.ConfigError, "not a JSON token object"},
		{"empty", "  \n", apperr.ConfigError, "empty"},
		{"trailing data", `{"access_token":"a"} {}`, apperr.ConfigError, "after the JSON object"},
		{"no access token", `{"refresh_token":"r"}`, apperr.ConfigError, "access_token is empty"},
		{"bad expiry", `{"access_token":"a","expires_at":"tomorrow"}`, apperr.ConfigError, "expires_at"},
		{"wrong type", `{"access_token":5}`, apperr.ConfigError, "not a JSON token object"},
		{"control char", `{"access_token":"a\u0000b"}`, apperr.ConfigError, "access_token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens.json")
			writeRaw(t, path, tc.content, 0o600)
			_, err := LoadToken(path)
			if apperr.CodeOf(err) != tc.want || !containsAll(err.Error(), path, tc.msg) {
				t.Fatalf("err = %v, want %s naming the file and %q", err, tc.want, tc.msg)
			}
		})
	}

	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tokens.json")
		_, err := LoadToken(path)
		if apperr.CodeOf(err) != apperr.XNotConfigured || !strings.Contains(err.Error(), "run `tuitbot auth` to sign in, or use --sandbox") {
			t.Fatalf("err = %v, want x_not_configured with the fix", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tokens.json")
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadToken(path); apperr.CodeOf(err) != apperr.ConfigError || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tokens.json")
		writeRaw(t, path, `{"access_token":"`+strings.Repeat("a", maxTokenFileSize)+`"}`, 0o600)
		if _, err := LoadToken(path); apperr.CodeOf(err) != apperr.ConfigError || !strings.Contains(err.Error(), "too large") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no expiry and unknown fields", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tokens.json")
		writeRaw(t, path, `{"access_token":"a","scopes":["tweet.read"],"future_field":1}`, 0o600)
		tok, err := LoadToken(path)
		if err != nil {
			t.Fatal(err)
		}
		if !tok.ExpiresAt.IsZero() || tok.RefreshToken != "" {
			t.Errorf("unexpected token %v", tok)
		}
	})
}

func TestStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	tok := sampleToken()
	if err := SaveToken(context.Background(), path, tok); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		now     time.Time
		expired bool
		text    string
	}{
		{"valid", tok.ExpiresAt.Add(-90 * time.Minute), false, "valid until 2026-03-01T14:00:00Z (1h30m0s left)"},
		{"expired", tok.ExpiresAt.Add(5 * time.Minute), true, "expired at 2026-03-01T14:00:00Z (5m0s ago)"},
		{"at expiry", tok.ExpiresAt, true, "expired at"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Status(path, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if s.Expired != tc.expired || !s.HasRefreshToken || !slices.Equal(s.Scopes, tok.Scopes) || !s.ExpiresAt.Equal(tok.ExpiresAt) {
				t.Errorf("status = %+v", s)
			}
			out := s.String()
			if !containsAll(out, tc.text, path, "offline.access", "refresh token: present") {
				t.Errorf("String() = %q, want %q", out, tc.text)
			}
			if strings.Contains(out, tok.AccessToken) || strings.Contains(out, tok.RefreshToken) {
				t.Error("status text contains a token value")
			}
		})
	}
	t.Run("no refresh token and no expiry", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "tokens.json")
		if err := SaveToken(context.Background(), p, &Token{AccessToken: "x"}); err != nil {
			t.Fatal(err)
		}
		s, err := Status(p, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if s.Expired || s.HasRefreshToken || !containsAll(s.String(), "no expiry recorded", "refresh token: absent") {
			t.Errorf("status = %+v\n%s", s, s)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := Status(filepath.Join(t.TempDir(), "tokens.json"), time.Now())
		if apperr.CodeOf(err) != apperr.XNotConfigured {
			t.Fatalf("err = %v, want x_not_configured", err)
		}
	})
}

func TestLockTokenFileExcludesOtherDescriptors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	unlock, err := lockTokenFile(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := lockTokenFile(ctx, path, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock err = %v, want it to wait until the deadline", err)
	}
	unlock()
	unlock2, err := lockTokenFile(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
	fi, err := os.Stat(path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode %v, want 0600", fi.Mode().Perm())
	}
}

func removeFile(path string) error { return os.Remove(path) }
