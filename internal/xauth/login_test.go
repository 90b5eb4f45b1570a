package xauth

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// syncBuffer is an io.Writer safe to read while Login writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// loopbackClient never uses a proxy; noRedirect also stops at the first
// redirect so a test can inspect or alter it.
func loopbackClient(noRedirect bool) *http.Client {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	if noRedirect {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c
}

type pageResult struct {
	status int
	body   string
	err    error
}

// browser drives the authorize URL like a user's browser: it follows X's
// redirect to the callback listener and records the page shown.
type browser struct {
	wg     sync.WaitGroup
	result chan pageResult
	// rewrite, when set, changes the authorize URL before it is visited.
	rewrite func(string) string
}

func newBrowser() *browser { return &browser{result: make(chan pageResult, 1)} }

func (b *browser) open(u string) error {
	if b.rewrite != nil {
		u = b.rewrite(u)
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		resp, err := loopbackClient(false).Get(u)
		if err != nil {
			b.result <- pageResult{err: err}
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.result <- pageResult{status: resp.StatusCode, body: string(body)}
	}()
	return nil
}

func (b *browser) page(t *testing.T) pageResult {
	t.Helper()
	b.wg.Wait()
	select {
	case r := <-b.result:
		return r
	default:
		t.Fatal("the browser never loaded a page")
		return pageResult{}
	}
}

// printedAuthURL finds the authorize URL Login printed.
func printedAuthURL(t *testing.T, out string) *url.URL {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.Contains(line, "/i/oauth2/authorize?") {
			u, err := url.Parse(line)
			if err != nil {
				t.Fatalf("printed authorize URL does not parse: %v", err)
			}
			return u
		}
	}
	t.Fatalf("no authorize URL in output:\n%s", out)
	return nil
}

func TestLoginLocalCallback(t *testing.T) {
	tests := []struct {
		name     string
		secret   string
		wantAuth string
	}{
		{"public client sends client_id in the body", "", "body"},
		{"confidential client uses basic auth", "s3cret-value", "basic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFakeX(t)
			fx.clientSecret = tc.secret
			path := filepath.Join(t.TempDir(), "home", "tokens.json")
			clk := newFakeClock()
			var out syncBuffer
			br := newBrowser()
			opts := fx.options(path)
			opts.Now = clk.Now
			tok, err := Login(context.Background(), LoginOptions{
				Options:      opts,
				CallbackAddr: "127.0.0.1:0",
				Out:          &out,
				OpenBrowser:  br.open,
			})
			if err != nil {
				t.Fatalf("Login: %v", err)
			}
			page := br.page(t)
			if page.err != nil || page.status != http.StatusOK || !strings.Contains(page.body, "tuitbot is authorized") {
				t.Fatalf("callback page = %d %q (err %v), want 200 success page", page.status, page.body, page.err)
			}
			if !fx.validAccess(tok.AccessToken) || tok.RefreshToken == "" {
				t.Fatalf("Login returned a token the server did not issue or without refresh token: %v", tok)
			}
			if got := fx.authMethod(); got != tc.wantAuth {
				t.Errorf("client authentication = %q, want %q", got, tc.wantAuth)
			}
			if want := clk.Now().Add(2 * time.Hour); !tok.ExpiresAt.Equal(want) {
				t.Errorf("ExpiresAt = %v, want %v (from the injected clock)", tok.ExpiresAt, want)
			}
			if !slices.Equal(tok.Scopes, DefaultScopes()) {
				t.Errorf("Scopes = %v, want %v", tok.Scopes, DefaultScopes())
			}

			au := printedAuthURL(t, out.String())
			q := au.Query()
			if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
				t.Errorf("authorize URL lacks PKCE S256: %s", au)
			}
			if len(q.Get("state")) < 32 {
				t.Errorf("state %q is too short to be unguessable", q.Get("state"))
			}
			if q.Get("scope") != strings.Join(DefaultScopes(), " ") {
				t.Errorf("scope = %q", q.Get("scope"))
			}
			if ru := q.Get("redirect_uri"); !strings.HasPrefix(ru, "http://127.0.0.1:") || !strings.HasSuffix(ru, "/callback") {
				t.Errorf("redirect_uri = %q", ru)
			}
			if strings.Contains(out.String(), tok.AccessToken) || strings.Contains(out.String(), tok.RefreshToken) {
				t.Error("Login printed a token value")
			}

			saved, err := LoadToken(path)
			if err != nil {
				t.Fatalf("LoadToken after Login: %v", err)
			}
			if saved.AccessToken != tok.AccessToken || saved.RefreshToken != tok.RefreshToken || !saved.ExpiresAt.Equal(tok.ExpiresAt) {
				t.Errorf("saved token differs from the returned one")
			}
			assertMode(t, path, 0o600)
			assertMode(t, filepath.Dir(path), 0o700|os.ModeDir)
		})
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (os.ModePerm | os.ModeDir); got != want {
		t.Errorf("mode of %s = %v, want %v", path, got, want)
	}
}

// headlessRun starts a headless Login and returns the authorize URL it
// printed, a function to paste a line, and the channel with Login's result.
type headlessRun struct {
	authURL *url.URL
	paste   func(string)
	done    chan loginResult
	out     *syncBuffer
}

type loginResult struct {
	tok *Token
	err error
}

func startHeadless(t *testing.T, ctx context.Context, opts LoginOptions) *headlessRun {
	t.Helper()
	outR, outW := io.Pipe()
	inR, inW := io.Pipe()
	opts.Headless = true
	opts.Out = outW
	opts.In = inR
	if opts.CallbackAddr == "" {
		opts.CallbackAddr = "127.0.0.1:8080"
	}
	run := &headlessRun{done: make(chan loginResult, 1), out: &syncBuffer{}}
	go func() {
		tok, err := Login(ctx, opts)
		outW.Close()
		run.done <- loginResult{tok, err}
	}()
	urlCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			line := sc.Text()
			run.out.Write([]byte(line + "\n"))
			if strings.Contains(line, "/i/oauth2/authorize?") {
				urlCh <- strings.TrimSpace(line)
			}
		}
		close(urlCh)
	}()
	raw, ok := <-urlCh
	if !ok {
		r := <-run.done
		t.Fatalf("headless Login printed no authorize URL (err %v)", r.err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	run.authURL = u
	run.paste = func(s string) {
		go func() {
			io.WriteString(inW, s+"\n")
		}()
	}
	t.Cleanup(func() { inW.Close() })
	return run
}

// consent visits the authorize URL without following the redirect and
// returns where X would send the browser.
func consent(t *testing.T, authURL string) *url.URL {
	t.Helper()
	resp, err := loopbackClient(true).Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %d, want 302", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func wait(t *testing.T, ch chan loginResult) loginResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("Login did not return")
		return loginResult{}
	}
}

func TestLoginHeadlessPastedURL(t *testing.T) {
	fx := newFakeX(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	run := startHeadless(t, context.Background(), LoginOptions{Options: fx.options(path)})
	if ru := run.authURL.Query().Get("redirect_uri"); ru != "http://127.0.0.1:8080/callback" {
		t.Errorf("redirect_uri = %q, want the configured callback address", ru)
	}
	loc := consent(t, run.authURL.String())
	run.paste("  \n" + loc.String() + "  ") // blank line and spaces are tolerated
	r := wait(t, run.done)
	if r.err != nil {
		t.Fatalf("headless Login: %v", r.err)
	}
	if !fx.validAccess(r.tok.AccessToken) {
		t.Fatal("token not issued by the server")
	}
	if _, err := LoadToken(path); err != nil {
		t.Fatalf("token not saved: %v", err)
	}
}

func TestLoginHeadlessRefusesBadPaste(t *testing.T) {
	tests := []struct {
		name    string
		paste   func(loc *url.URL) string
		wantMsg string
	}{
		{"bare code", func(loc *url.URL) string { return loc.Query().Get("code") }, "bare authorization code"},
		{"state mismatch", func(loc *url.URL) string {
			q := loc.Query()
			q.Set("state", "forged-state-value")
			loc.RawQuery = q.Encode()
			return loc.String()
		}, "state parameter does not match"},
		{"state missing", func(loc *url.URL) string {
			q := loc.Query()
			q.Del("state")
			loc.RawQuery = q.Encode()
			return loc.String()
		}, "no state parameter"},
		{"query without URL", func(loc *url.URL) string { return loc.RawQuery }, "not a URL"},
		{"code missing", func(loc *url.URL) string {
			q := loc.Query()
			q.Del("code")
			loc.RawQuery = q.Encode()
			return loc.String()
		}, "exactly one non-empty code"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFakeX(t)
			path := filepath.Join(t.TempDir(), "tokens.json")
			run := startHeadless(t, context.Background(), LoginOptions{Options: fx.options(path)})
			loc := consent(t, run.authURL.String())
			run.paste(tc.paste(loc))
			r := wait(t, run.done)
			if r.err == nil {
				t.Fatal("Login accepted a bad paste")
			}
			if apperr.CodeOf(r.err) != apperr.InvalidInput || !strings.Contains(r.err.Error(), tc.wantMsg) {
				t.Errorf("error = %v, want invalid_input containing %q", r.err, tc.wantMsg)
			}
			if n := fx.exchanges.Load(); n != 0 {
				t.Errorf("token endpoint called %d times, want 0: nothing may be exchanged", n)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("token file exists after a failed login (stat err %v)", err)
			}
		})
	}
}

func TestLoginCallbackStateMismatch(t *testing.T) {
	fx := newFakeX(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	br := newBrowser()
	br.rewrite = func(u string) string {
		// A forged redirect straight to the listener, as a hostile web page
		// could make the browser send.
		au, _ := url.Parse(u)
		cb, _ := url.Parse(au.Query().Get("redirect_uri"))
		cb.RawQuery = url.Values{"code": {"attacker-code"}, "state": {"not-the-state"}}.Encode()
		return cb.String()
	}
	var out syncBuffer
	_, err := Login(context.Background(), LoginOptions{
		Options: fx.options(path), CallbackAddr: "127.0.0.1:0", Out: &out, OpenBrowser: br.open,
	})
	if apperr.CodeOf(err) != apperr.InvalidInput || !strings.Contains(err.Error(), "state parameter does not match") {
		t.Fatalf("err = %v, want state mismatch", err)
	}
	if n := fx.exchanges.Load(); n != 0 {
		t.Errorf("token endpoint called %d times after a state mismatch, want 0", n)
	}
	page := br.page(t)
	if page.status != http.StatusBadRequest || !strings.Contains(page.body, "not authorized") {
		t.Errorf("page = %d %q, want 400 failure page", page.status, page.body)
	}
	if strings.Contains(page.body, "<script") {
		t.Error("page contains script")
	}
}

func TestLoginCallbackAuthorizationDenied(t *testing.T) {
	fx := newFakeX(t)
	br := newBrowser()
	br.rewrite = func(u string) string {
		au, _ := url.Parse(u)
		cb, _ := url.Parse(au.Query().Get("redirect_uri"))
		cb.RawQuery = url.Values{"error": {"access_denied"}, "state": {au.Query().Get("state")}}.Encode()
		return cb.String()
	}
	var out syncBuffer
	_, err := Login(context.Background(), LoginOptions{
		Options: fx.options(""), CallbackAddr: "127.0.0.1:0", Out: &out, OpenBrowser: br.open,
	})
	if apperr.CodeOf(err) != apperr.XForbidden || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("err = %v, want x_forbidden naming access_denied", err)
	}
	br.page(t)
	if fx.exchanges.Load() != 0 {
		t.Error("a denied authorization must not be exchanged")
	}
}

func TestLoginWrongVerifierRejectedByServer(t *testing.T) {
	fx := newFakeX(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	run := startHeadless(t, context.Background(), LoginOptions{Options: fx.options(path)})
	// Obtain a code bound to someone else's challenge but carrying our
	// state: only the PKCE check on the server can catch it.
	au := *run.authURL
	q := au.Query()
	q.Set("code_challenge", oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier()))
	au.RawQuery = q.Encode()
	loc := consent(t, au.String())
	run.paste(loc.String())
	r := wait(t, run.done)
	if apperr.CodeOf(r.err) != apperr.XAPIError || !strings.Contains(r.err.Error(), "code verifier") {
		t.Fatalf("err = %v, want x_api_error from the verifier check", r.err)
	}
	if fx.exchanges.Load() != 1 {
		t.Errorf("exchanges = %d, want 1", fx.exchanges.Load())
	}
	if code := loc.Query().Get("code"); strings.Contains(r.err.Error(), code) {
		t.Error("error message contains the authorization code")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Error("token file written after a rejected exchange")
	}
}

func TestLoginTimeout(t *testing.T) {
	t.Run("callback", func(t *testing.T) {
		fx := newFakeX(t)
		var out syncBuffer
		start := time.Now()
		_, err := Login(context.Background(), LoginOptions{
			Options: fx.options(""), CallbackAddr: "127.0.0.1:0", Out: &out, Timeout: 200 * time.Millisecond,
			OpenBrowser: func(string) error { return errors.New("no display") },
		})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no authorization arrived within 200ms") {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("timeout took %v", el)
		}
		if !strings.Contains(out.String(), "Could not open a browser") {
			t.Errorf("browser failure not reported: %q", out.String())
		}
		// The listener must be gone.
		ru, _ := url.Parse(printedAuthURL(t, out.String()).Query().Get("redirect_uri"))
		if c, err := net.DialTimeout("tcp", ru.Host, time.Second); err == nil {
			c.Close()
			t.Error("callback listener still accepts connections after the timeout")
		}
	})
	t.Run("headless", func(t *testing.T) {
		fx := newFakeX(t)
		run := startHeadless(t, context.Background(), LoginOptions{Options: fx.options(""), Timeout: 200 * time.Millisecond})
		r := wait(t, run.done)
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want a timeout", r.err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		fx := newFakeX(t)
		ctx, cancel := context.WithCancel(context.Background())
		var out syncBuffer
		done := make(chan error, 1)
		// OpenBrowser is called once the callback listener is up, just
		// before Login waits for the redirect.
		waiting := make(chan struct{})
		open := func(string) error { close(waiting); return nil }
		go func() {
			_, err := Login(ctx, LoginOptions{Options: fx.options(""), CallbackAddr: "127.0.0.1:0", Out: &out, OpenBrowser: open})
			done <- err
		}()
		select {
		case <-waiting:
		case err := <-done:
			t.Fatalf("Login returned before waiting for the redirect: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("Login never got to waiting for the redirect")
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Login ignored cancellation")
		}
	})
}

func TestLoginRejectsBadOptions(t *testing.T) {
	fx := newFakeX(t)
	base := LoginOptions{Options: fx.options(""), Out: io.Discard, CallbackAddr: "127.0.0.1:0"}
	tests := []struct {
		name   string
		mutate func(*LoginOptions)
		field  string
	}{
		{"all interfaces", func(o *LoginOptions) { o.CallbackAddr = "0.0.0.0:8080" }, "CallbackAddr"},
		{"empty host", func(o *LoginOptions) { o.CallbackAddr = ":8080" }, "CallbackAddr"},
		{"LAN address", func(o *LoginOptions) { o.CallbackAddr = "192.168.1.20:8080" }, "CallbackAddr"},
		{"host name", func(o *LoginOptions) { o.CallbackAddr = "localhost:8080" }, "CallbackAddr"},
		{"no port", func(o *LoginOptions) { o.CallbackAddr = "127.0.0.1" }, "CallbackAddr"},
		{"headless port 0", func(o *LoginOptions) { o.Headless = true; o.In = strings.NewReader("") }, "CallbackAddr"},
		{"no client id", func(o *LoginOptions) { o.ClientID = "" }, "ClientID"},
		{"no output", func(o *LoginOptions) { o.Out = nil }, "Out"},
		{"headless without input", func(o *LoginOptions) { o.Headless = true; o.CallbackAddr = "127.0.0.1:8080" }, "In"},
		{"plain http token URL", func(o *LoginOptions) { o.TokenURL = "http://api.x.com/2/oauth2/token" }, "TokenURL"},
		{"odd auth URL scheme", func(o *LoginOptions) { o.AuthURL = "ftp://x.com/i/oauth2/authorize" }, "AuthURL"},
		{"negative timeout", func(o *LoginOptions) { o.Timeout = -time.Second }, "Timeout"},
		{"scope with space", func(o *LoginOptions) { o.Scopes = []string{"tweet.read users.read"} }, "Scopes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.mutate(&o)
			_, err := Login(context.Background(), o)
			if apperr.CodeOf(err) != apperr.ConfigError || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want config_error naming %s", err, tc.field)
			}
		})
	}
	if fx.exchanges.Load() != 0 {
		t.Error("a refused configuration reached the token endpoint")
	}
}

func TestLoginListenerOnlyServesCallbackPath(t *testing.T) {
	fx := newFakeX(t)
	var out syncBuffer
	probe := make(chan int, 1)
	br := newBrowser()
	open := func(u string) error {
		au, _ := url.Parse(u)
		ru, _ := url.Parse(au.Query().Get("redirect_uri"))
		go func() {
			resp, err := loopbackClient(false).Get("http://" + ru.Host + "/favicon.ico")
			if err != nil {
				probe <- -1
			} else {
				resp.Body.Close()
				probe <- resp.StatusCode
			}
			br.open(u)
		}()
		return nil
	}
	if _, err := Login(context.Background(), LoginOptions{Options: fx.options(""), CallbackAddr: "127.0.0.1:0", Out: &out, OpenBrowser: open}); err != nil {
		t.Fatalf("Login: %v", err)
	}
	if got := <-probe; got != http.StatusNotFound {
		t.Errorf("GET /favicon.ico = %d, want 404 without ending the login", got)
	}
	br.page(t)
}

func TestLoginWarnsWithoutRefreshToken(t *testing.T) {
	fx := newFakeX(t)
	fx.omitRefresh = true
	var out syncBuffer
	br := newBrowser()
	tok, err := Login(context.Background(), LoginOptions{Options: fx.options(""), CallbackAddr: "127.0.0.1:0", Out: &out, OpenBrowser: br.open})
	if err != nil {
		t.Fatal(err)
	}
	br.page(t)
	if tok.RefreshToken != "" || !strings.Contains(out.String(), "no refresh token") {
		t.Errorf("missing refresh token not reported: %q", out.String())
	}
}
