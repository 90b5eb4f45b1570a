package xauth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
)

// tokenSource is the interface the X API client consumes; the assertion
// keeps Manager in step with it without importing the client.
type tokenSource interface {
	AccessToken(ctx context.Context) (string, error)
	Refresh(ctx context.Context) (string, error)
}

var _ tokenSource = (*Manager)(nil)

// seed writes a token the fake server recognises, expiring after ttl on clk.
func seed(t *testing.T, fx *fakeX, path string, clk *clock.Fake, ttl time.Duration) *Token {
	t.Helper()
	at, rt := fx.issue()
	tok := &Token{AccessToken: at, RefreshToken: rt, TokenType: "bearer", ExpiresAt: clk.Now().Add(ttl), Scopes: DefaultScopes()}
	if err := SaveToken(context.Background(), path, tok); err != nil {
		t.Fatal(err)
	}
	return tok
}

func newManager(t *testing.T, fx *fakeX, path string, clk *clock.Fake) *Manager {
	t.Helper()
	o := fx.options(path)
	o.Now = clk.Now
	m, err := NewManager(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManagerReturnsFreshTokenWithoutRefresh(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	tok := seed(t, fx, path, clk, time.Hour)
	m := newManager(t, fx, path, clk)
	for range 3 {
		got, err := m.AccessToken(context.Background())
		if err != nil || got != tok.AccessToken {
			t.Fatalf("AccessToken = %q, %v; want the stored token", got, err)
		}
	}
	if n := fx.refreshCalls.Load(); n != 0 {
		t.Errorf("refresh calls = %d, want 0 for a fresh token", n)
	}
}

func TestManagerRefreshesBeforeExpiry(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	old := seed(t, fx, path, clk, 4*time.Minute) // inside the 5 min skew
	m := newManager(t, fx, path, clk)

	got, err := m.AccessToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got == old.AccessToken || !fx.validAccess(got) {
		t.Fatalf("AccessToken did not return a refreshed token")
	}
	if n := fx.refreshUses.Load(); n != 1 {
		t.Fatalf("refresh uses = %d, want 1", n)
	}
	saved, err := LoadToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if saved.AccessToken != got || saved.RefreshToken == old.RefreshToken || saved.RefreshToken == "" {
		t.Error("the refreshed pair was not persisted")
	}
	if want := clk.Now().Add(2 * time.Hour); !saved.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt = %v, want %v", saved.ExpiresAt, want)
	}
	if strings.Join(saved.Scopes, " ") != strings.Join(DefaultScopes(), " ") {
		t.Errorf("scopes lost on refresh: %v", saved.Scopes)
	}
	assertMode(t, path, 0o600)

	// Fresh again: no further refresh until the new token nears expiry.
	clk.Advance(time.Hour)
	if again, _ := m.AccessToken(context.Background()); again != got {
		t.Error("a fresh token was replaced")
	}
	clk.Advance(56 * time.Minute) // 4 min left
	third, err := m.AccessToken(context.Background())
	if err != nil || third == got {
		t.Fatalf("no second refresh near expiry: %v", err)
	}
	if n := fx.refreshUses.Load(); n != 2 {
		t.Errorf("refresh uses = %d, want 2", n)
	}
}

func TestManagerRefreshSkewOption(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	old := seed(t, fx, path, clk, 20*time.Minute)
	o := fx.options(path)
	o.Now = clk.Now
	o.RefreshSkew = 30 * time.Minute
	m, err := NewManager(o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.AccessToken(context.Background())
	if err != nil || got == old.AccessToken {
		t.Fatalf("a 30 min skew did not refresh a token with 20 min left (err %v)", err)
	}
}

func TestManagerForcedRefresh(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	old := seed(t, fx, path, clk, time.Hour)
	m := newManager(t, fx, path, clk)
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	fresh, err := m.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fresh == old.AccessToken || !fx.validAccess(fresh) {
		t.Fatal("Refresh did not replace a fresh token")
	}
	if got, _ := m.AccessToken(context.Background()); got != fresh {
		t.Error("AccessToken does not return the forced refresh result")
	}
	// A second 401 right after a refresh is answered with the token just
	// obtained rather than spending another refresh.
	again, err := m.Refresh(context.Background())
	if err != nil || again != fresh || fx.refreshUses.Load() != 1 {
		t.Fatalf("immediate second Refresh = %v (uses %d), want the same token without a server call", err, fx.refreshUses.Load())
	}
	clk.Advance(forcedRefreshGap + time.Second)
	later, err := m.Refresh(context.Background())
	if err != nil || later == fresh || fx.refreshUses.Load() != 2 {
		t.Fatalf("Refresh after the gap = %v (uses %d), want a new token", err, fx.refreshUses.Load())
	}
}

func TestManagerForcedRefreshBeforeAnyUse(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	old := seed(t, fx, path, clk, time.Hour)
	m := newManager(t, fx, path, clk)
	got, err := m.Refresh(context.Background())
	if err != nil || got == old.AccessToken || fx.refreshUses.Load() != 1 {
		t.Fatalf("Refresh on a new Manager = %v (uses %d), want one refresh", err, fx.refreshUses.Load())
	}
}

func TestManagerAuthExpired(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, fx *fakeX, path string, clk *clock.Fake) *Token
	}{
		{"expired without refresh token", func(t *testing.T, fx *fakeX, path string, clk *clock.Fake) *Token {
			at, _ := fx.issue()
			tok := &Token{AccessToken: at, ExpiresAt: clk.Now().Add(-time.Minute)}
			if err := SaveToken(context.Background(), path, tok); err != nil {
				t.Fatal(err)
			}
			return tok
		}},
		{"refresh token unknown to X", func(t *testing.T, fx *fakeX, path string, clk *clock.Fake) *Token {
			tok := &Token{AccessToken: "AT-revoked", RefreshToken: "RT-revoked-value", ExpiresAt: clk.Now().Add(-time.Minute)}
			if err := SaveToken(context.Background(), path, tok); err != nil {
				t.Fatal(err)
			}
			return tok
		}},
		{"refresh rejected and echoed", func(t *testing.T, fx *fakeX, path string, clk *clock.Fake) *Token {
			fx.echoInError = true
			tok := &Token{AccessToken: "AT-echo", RefreshToken: "RT-echoed-back", ExpiresAt: clk.Now().Add(-time.Minute)}
			if err := SaveToken(context.Background(), path, tok); err != nil {
				t.Fatal(err)
			}
			return tok
		}},
		{"refresh token already spent", func(t *testing.T, fx *fakeX, path string, clk *clock.Fake) *Token {
			tok := seed(t, fx, path, clk, -time.Minute)
			other := newManager(t, fx, filepath.Join(t.TempDir(), "elsewhere.json"), clk)
			// Spend the refresh token through another file, as a second
			// copy of the credentials would.
			if err := SaveToken(context.Background(), other.opts.TokenPath, tok); err != nil {
				t.Fatal(err)
			}
			if _, err := other.AccessToken(context.Background()); err != nil {
				t.Fatal(err)
			}
			return tok
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFakeX(t)
			clk := newFakeClock()
			path := filepath.Join(t.TempDir(), "tokens.json")
			tok := tc.setup(t, fx, path, clk)
			m := newManager(t, fx, path, clk)
			for _, call := range []func(context.Context) (string, error){m.AccessToken, m.Refresh} {
				_, err := call(context.Background())
				if apperr.CodeOf(err) != apperr.XAuthExpired || !strings.Contains(err.Error(), "run `tuitbot auth`") {
					t.Fatalf("err = %v, want x_auth_expired telling to run `tuitbot auth`", err)
				}
				if leaks(err.Error(), tok.AccessToken, tok.RefreshToken) {
					t.Fatalf("error leaks a token: %v", err)
				}
				if apperr.As(err).Retryable() {
					t.Error("x_auth_expired must not be retryable")
				}
			}
		})
	}
}

func TestManagerRefreshServerFailures(t *testing.T) {
	tests := []struct {
		status    int
		want      apperr.Code
		retryable bool
	}{
		{503, apperr.XNetworkError, true},
		{429, apperr.XRateLimited, true},
		{401, apperr.ConfigError, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			fx := newFakeX(t)
			fx.refreshStatus = tc.status
			fx.echoInError = true
			clk := newFakeClock()
			path := filepath.Join(t.TempDir(), "tokens.json")
			tok := seed(t, fx, path, clk, time.Minute)
			m := newManager(t, fx, path, clk)
			_, err := m.AccessToken(context.Background())
			if apperr.CodeOf(err) != tc.want || apperr.As(err).Retryable() != tc.retryable {
				t.Fatalf("err = %v, want %s (retryable %v)", err, tc.want, tc.retryable)
			}
			if strings.Contains(err.Error(), tok.RefreshToken) {
				t.Fatalf("error leaks the refresh token: %v", err)
			}
			// The stored pair is untouched so a later attempt can succeed.
			if saved, _ := LoadToken(path); saved.RefreshToken != tok.RefreshToken {
				t.Error("a failed refresh changed the token file")
			}
		})
	}
}

func TestManagerUnreachableTokenEndpoint(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	seed(t, fx, path, clk, time.Minute)
	m := newManager(t, fx, path, clk)
	fx.srv.Close()
	_, err := m.AccessToken(context.Background())
	if apperr.CodeOf(err) != apperr.XNetworkError || !apperr.As(err).Retryable() {
		t.Fatalf("err = %v, want retryable x_network_error", err)
	}
}

func TestManagerMissingAndDeletedFile(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	m := newManager(t, fx, path, clk)
	for _, call := range []func(context.Context) (string, error){m.AccessToken, m.Refresh} {
		if _, err := call(context.Background()); apperr.CodeOf(err) != apperr.XNotConfigured ||
			!strings.Contains(err.Error(), "run `tuitbot auth` to sign in, or use --sandbox") {
			t.Fatalf("err = %v, want x_not_configured", err)
		}
	}
	seed(t, fx, path, clk, time.Hour)
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatalf("token written after start-up not picked up: %v", err)
	}
	if err := removeFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := m.AccessToken(context.Background()); apperr.CodeOf(err) != apperr.XNotConfigured {
		t.Fatalf("after logout err = %v, want x_not_configured", err)
	}
}

func TestManagerPicksUpTokenWrittenByAnotherProcess(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	first := seed(t, fx, path, clk, time.Hour)
	m := newManager(t, fx, path, clk)
	if got, _ := m.AccessToken(context.Background()); got != first.AccessToken {
		t.Fatal("first token not returned")
	}
	second := seed(t, fx, path, clk, time.Hour)
	got, err := m.AccessToken(context.Background())
	if err != nil || got != second.AccessToken {
		t.Fatalf("AccessToken = %v, want the token written to disk since", err)
	}
	if fx.refreshCalls.Load() != 0 {
		t.Error("picking up a new file must not refresh")
	}
}

func TestManagerRefreshKeepsValuesXOmits(t *testing.T) {
	fx := newFakeX(t)
	fx.omitRefresh = true
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	old := seed(t, fx, path, clk, time.Minute)
	m := newManager(t, fx, path, clk)
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	saved, _ := LoadToken(path)
	if saved.RefreshToken != old.RefreshToken {
		t.Error("a refresh answer without refresh_token dropped the stored one")
	}
	if strings.Join(saved.Scopes, " ") != strings.Join(old.Scopes, " ") {
		t.Errorf("a refresh answer without scope dropped the stored scopes: %v", saved.Scopes)
	}
}

func TestManagerRefreshRecordsGrantedScopes(t *testing.T) {
	fx := newFakeX(t)
	fx.scopeOverride = "tweet.read users.read offline.access"
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	seed(t, fx, path, clk, time.Minute)
	m := newManager(t, fx, path, clk)
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	saved, _ := LoadToken(path)
	if strings.Join(saved.Scopes, " ") != fx.scopeOverride {
		t.Errorf("scopes = %v, want those X granted", saved.Scopes)
	}
}

func TestManagerNeedsClientIDToRefresh(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	seed(t, fx, path, clk, time.Minute)
	m, err := NewManager(Options{TokenPath: path, TokenURL: fx.tokenURL(), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.AccessToken(context.Background()); apperr.CodeOf(err) != apperr.ConfigError || !strings.Contains(err.Error(), "ClientID") {
		t.Fatalf("err = %v, want config_error naming ClientID", err)
	}
}

func TestNewManagerValidates(t *testing.T) {
	tests := []struct {
		name  string
		o     Options
		field string
	}{
		{"no path", Options{ClientID: "c"}, "TokenPath"},
		{"http token URL", Options{ClientID: "c", TokenPath: "t", TokenURL: "http://example.com/token"}, "TokenURL"},
		{"token URL with user", Options{ClientID: "c", TokenPath: "t", TokenURL: "https://u:p@example.com/token"}, "TokenURL"},
		{"negative skew", Options{ClientID: "c", TokenPath: "t", RefreshSkew: -time.Second}, "RefreshSkew"},
		{"skew near the token lifetime", Options{ClientID: "c", TokenPath: "t", RefreshSkew: 90 * time.Minute}, "RefreshSkew"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewManager(tc.o)
			if apperr.CodeOf(err) != apperr.ConfigError || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want config_error naming %s", err, tc.field)
			}
		})
	}
}

func TestManagerHonoursContextWhileWaiting(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	seed(t, fx, path, clk, time.Minute)
	m := newManager(t, fx, path, clk)
	unlock, err := lockTokenFile(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := m.AccessToken(ctx); apperr.CodeOf(err) != apperr.XNetworkError || ctx.Err() == nil {
		t.Fatalf("err = %v, want the wait for the lock to end with ctx", err)
	}
	if fx.refreshCalls.Load() != 0 {
		t.Error("refreshed without holding the lock")
	}
}

// lineUp waits until one refresh is held at X and wantWaits other callers
// have blocked behind it (Options.onWait). A second refresh reaching X
// fails the test: the callers were not serialised.
func lineUp(t *testing.T, arrived, waits <-chan struct{}, wantWaits int) {
	t.Helper()
	refreshes, waiting := 0, 0
	timeout := time.After(20 * time.Second)
	for refreshes < 1 || waiting < wantWaits {
		select {
		case <-arrived:
			if refreshes++; refreshes > 1 {
				t.Fatalf("%d refreshes reached X at once (%d callers waiting)", refreshes, waiting)
			}
		case <-waits:
			waiting++
		case <-timeout:
			t.Fatalf("%d refreshes held and %d callers waiting, want 1 and %d", refreshes, waiting, wantWaits)
		}
	}
}

// runConcurrently starts all calls at once, runs meanwhile on the test's
// goroutine while they are under way, and collects their results.
func runConcurrently(t *testing.T, calls []func(context.Context) (string, error), meanwhile func()) []string {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	out := make([]string, len(calls))
	errs := make([]error, len(calls))
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i], errs[i] = call(context.Background())
		}()
	}
	close(start)
	meanwhile()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	return out
}

func allEqual(t *testing.T, toks []string) {
	t.Helper()
	for _, tok := range toks[1:] {
		if tok != toks[0] {
			t.Fatal("concurrent callers ended with different tokens")
		}
	}
}

func TestConcurrentRefreshSpendsTheRefreshTokenOnce(t *testing.T) {
	tests := []struct {
		name     string
		managers int
		perMgr   int
		forced   bool
	}{
		{"goroutines, automatic", 1, 8, false},
		{"goroutines, forced", 1, 8, true},
		{"two managers, automatic", 2, 4, false},
		{"two managers, forced", 2, 4, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFakeX(t)
			// The one refresh is held at X until every other caller is
			// blocked behind it, so all of them really contend.
			arrived, release := fx.holdRefreshes(t)
			waits := make(chan struct{}, 64)
			clk := newFakeClock()
			path := filepath.Join(t.TempDir(), "tokens.json")
			ttl := time.Minute // due for refresh
			if tc.forced {
				ttl = time.Hour
			}
			old := seed(t, fx, path, clk, ttl)
			var calls []func(context.Context) (string, error)
			for range tc.managers {
				// Each Manager opens its own lock descriptor, as separate
				// processes would.
				m := newManager(t, fx, path, clk)
				m.opts.onWait = func() { waits <- struct{}{} }
				if tc.forced {
					// Everyone holds the old token and got a 401 with it.
					if got, err := m.AccessToken(context.Background()); err != nil || got != old.AccessToken {
						t.Fatal("setup: old token not served")
					}
				}
				for range tc.perMgr {
					if tc.forced {
						calls = append(calls, m.Refresh)
					} else {
						calls = append(calls, m.AccessToken)
					}
				}
			}
			got := runConcurrently(t, calls, func() {
				lineUp(t, arrived, waits, len(calls)-1)
				release()
			})
			allEqual(t, got)
			if got[0] == old.AccessToken || !fx.validAccess(got[0]) {
				t.Fatal("callers did not get a refreshed token")
			}
			if uses, fails := fx.refreshUses.Load(), fx.refreshFails.Load(); uses != 1 || fails != 0 {
				t.Fatalf("refresh uses = %d, failures = %d; want exactly one use", uses, fails)
			}
			if saved, _ := LoadToken(path); saved.AccessToken != got[0] {
				t.Error("file does not hold the token handed out")
			}
		})
	}
}

// leaks reports whether s contains any of the non-empty secrets.
func leaks(s string, secrets ...string) bool {
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			return true
		}
	}
	return false
}

func TestManagerWithoutRefreshTokenUsesTokenUntilExpiry(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	at, _ := fx.issue()
	if err := SaveToken(context.Background(), path, &Token{AccessToken: at, ExpiresAt: clk.Now().Add(2 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, fx, path, clk)
	got, err := m.AccessToken(context.Background())
	if err != nil || got != at {
		t.Fatalf("AccessToken inside the skew without refresh token = %v; want the still-valid token", err)
	}
	if _, err := m.Refresh(context.Background()); apperr.CodeOf(err) != apperr.XAuthExpired {
		t.Fatalf("forced Refresh without refresh token: err = %v, want x_auth_expired", err)
	}
	clk.Advance(2 * time.Minute)
	if _, err := m.AccessToken(context.Background()); apperr.CodeOf(err) != apperr.XAuthExpired {
		t.Fatalf("at expiry: err = %v, want x_auth_expired", err)
	}
	if fx.refreshCalls.Load() != 0 {
		t.Error("called the token endpoint without a refresh token")
	}
}

func TestManagerNoticesPermissionChange(t *testing.T) {
	fx := newFakeX(t)
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "tokens.json")
	seed(t, fx, path, clk, time.Hour)
	m := newManager(t, fx, path, clk)
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := m.AccessToken(context.Background())
	if apperr.CodeOf(err) != apperr.ConfigError || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("err = %v, want the shared-file refusal", err)
	}
}
