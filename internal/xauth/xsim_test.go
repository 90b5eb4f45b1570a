package xauth_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// These tests run the public API against the X emulator, whose token
// endpoint verifies PKCE and spends refresh tokens on use like X does.

func startEmulator(t *testing.T) (*xsim.Server, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv := xsim.New(xsim.Options{World: xsim.DemoWorld(1)})
	base, err := srv.Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		srv.Close()
	})
	return srv, base
}

func emulatorOptions(base, path string) xauth.Options {
	return xauth.Options{
		ClientID:  xsim.DefaultClientID,
		AuthURL:   base + "/i/oauth2/authorize",
		TokenURL:  base + "/2/oauth2/token",
		TokenPath: path,
	}
}

func plainClient(follow bool) *http.Client {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c
}

// usersMe reports the status of GET /2/users/me with tok.
func usersMe(t *testing.T, base, tok string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/2/users/me", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := plainClient(false).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestEmulatorLoginWithLocalCallback(t *testing.T) {
	_, base := startEmulator(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	var wg sync.WaitGroup
	var pageStatus int
	var pageErr error
	var out strings.Builder
	var outMu sync.Mutex
	tok, err := xauth.Login(context.Background(), xauth.LoginOptions{
		Options:      emulatorOptions(base, path),
		CallbackAddr: "127.0.0.1:0",
		Out:          writerFunc(func(p []byte) (int, error) { outMu.Lock(); defer outMu.Unlock(); return out.Write(p) }),
		OpenBrowser: func(u string) error {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := plainClient(true).Get(u)
				if err != nil {
					pageErr = err
					return
				}
				resp.Body.Close()
				pageStatus = resp.StatusCode
			}()
			return nil
		},
	})
	if err != nil {
		t.Fatalf("Login against the emulator: %v", err)
	}
	wg.Wait()
	if pageErr != nil || pageStatus != http.StatusOK {
		t.Fatalf("callback page: %d %v", pageStatus, pageErr)
	}
	if tok.RefreshToken == "" || !strings.Contains(strings.Join(tok.Scopes, " "), "offline.access") {
		t.Fatalf("login token lacks refresh token or offline.access: %v", tok)
	}
	if got := usersMe(t, base, tok.AccessToken); got != http.StatusOK {
		t.Fatalf("GET /2/users/me with the login token = %d", got)
	}
	st, err := xauth.Status(path, time.Now())
	if err != nil || st.Expired || !st.HasRefreshToken {
		t.Fatalf("Status after login = %+v, %v", st, err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestEmulatorRejectsWrongVerifier(t *testing.T) {
	_, base := startEmulator(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	outR, outW := io.Pipe()
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() {
		_, err := xauth.Login(context.Background(), xauth.LoginOptions{
			Options: emulatorOptions(base, path), Headless: true, CallbackAddr: "127.0.0.1:8080", Out: outW, In: inR,
		})
		outW.Close()
		done <- err
	}()
	var authURL string
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.Contains(l, "/i/oauth2/authorize?") {
			authURL = l
			break
		}
	}
	go io.Copy(io.Discard, outR)
	au, err := url.Parse(authURL)
	if err != nil || authURL == "" {
		t.Fatalf("no authorize URL printed (%v)", err)
	}
	q := au.Query()
	q.Set("code_challenge", oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier()))
	au.RawQuery = q.Encode()
	resp, err := plainClient(false).Get(au.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	go io.WriteString(inW, resp.Header.Get("Location")+"\n")
	select {
	case err := <-done:
		if apperr.CodeOf(err) != apperr.XAPIError || !strings.Contains(err.Error(), "code verifier") {
			t.Fatalf("err = %v, want the emulator's verifier rejection", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Login did not return")
	}
}

func seedFromEmulator(t *testing.T, srv *xsim.Server, path string, ttl time.Duration) *xauth.Token {
	t.Helper()
	at, rt, _ := srv.IssueToken("", xauth.DefaultScopes())
	tok := &xauth.Token{AccessToken: at, RefreshToken: rt, TokenType: "bearer",
		ExpiresAt: time.Now().Add(ttl).UTC().Truncate(time.Second), Scopes: xauth.DefaultScopes()}
	if err := xauth.SaveToken(context.Background(), path, tok); err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestEmulatorConcurrentRefreshAcrossManagers(t *testing.T) {
	srv, base := startEmulator(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	old := seedFromEmulator(t, srv, path, time.Minute) // within the refresh skew

	var mgrs []*xauth.Manager
	for range 3 {
		m, err := xauth.NewManager(emulatorOptions(base, path))
		if err != nil {
			t.Fatal(err)
		}
		mgrs = append(mgrs, m)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	results := make([]string, 12)
	errs := make([]error, 12)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = mgrs[i%len(mgrs)].AccessToken(context.Background())
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		// A second use of the single-use refresh token would fail here.
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
		if results[i] != results[0] {
			t.Fatal("callers ended with different tokens")
		}
	}
	if results[0] == old.AccessToken {
		t.Fatal("token was not refreshed")
	}
	if got := usersMe(t, base, results[0]); got != http.StatusOK {
		t.Fatalf("refreshed token rejected by the emulator: %d", got)
	}

	// A forced refresh after a 401 spends the new refresh token once more
	// and the result still works.
	forced, err := xauth.NewManager(emulatorOptions(base, path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := forced.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	next, err := forced.Refresh(context.Background())
	if err != nil || next == results[0] {
		t.Fatalf("forced refresh: %v", err)
	}
	if got, err := mgrs[0].AccessToken(context.Background()); err != nil || got != next {
		t.Fatalf("another Manager did not pick up the forced refresh from disk (%v)", err)
	}
	if got := usersMe(t, base, next); got != http.StatusOK {
		t.Fatalf("force-refreshed token rejected: %d", got)
	}
}

func TestEmulatorRevokedRefreshTokenNeedsLogin(t *testing.T) {
	srv, base := startEmulator(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	tok := seedFromEmulator(t, srv, path, time.Minute)
	form := url.Values{"token": {tok.RefreshToken}, "client_id": {xsim.DefaultClientID}}
	resp, err := plainClient(false).PostForm(base+"/2/oauth2/revoke", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke answered %d", resp.StatusCode)
	}
	m, err := xauth.NewManager(emulatorOptions(base, path))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.AccessToken(context.Background())
	if apperr.CodeOf(err) != apperr.XAuthExpired || !strings.Contains(err.Error(), "run `tuitbot auth`") {
		t.Fatalf("err = %v, want x_auth_expired", err)
	}
	if strings.Contains(err.Error(), tok.RefreshToken) {
		t.Fatal("error leaks the refresh token")
	}
}
