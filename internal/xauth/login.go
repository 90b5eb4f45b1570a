package xauth

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// maxPasteLen bounds the pasted redirect URL.
const maxPasteLen = 8 << 10

// LoginOptions configures Login.
type LoginOptions struct {
	Options
	// CallbackAddr is the loopback host:port of the redirect URI
	// http://<CallbackAddr>/callback; DefaultCallbackAddr when empty. In
	// callback mode port 0 picks a free port.
	CallbackAddr string
	// Headless selects paste mode: instead of listening, Login reads the
	// full redirected URL from In.
	Headless bool
	// Timeout bounds the wait for the authorization; DefaultLoginTimeout
	// when zero.
	Timeout time.Duration
	// Out receives the authorize URL and instructions. Required.
	Out io.Writer
	// In is read in headless mode. Required then.
	In io.Reader
	// OpenBrowser, when set, is called with the authorize URL in callback
	// mode. It must return promptly (start a browser, not wait for it);
	// Login never opens a browser on its own.
	OpenBrowser func(url string) error
}

// Login runs the OAuth 2.0 authorization-code flow with PKCE S256 and a
// random state, exchanges the code, and — when TokenPath is set — saves the
// tokens. The state is checked before any exchange; a mismatch ends the
// login without contacting the token endpoint.
func Login(ctx context.Context, o LoginOptions) (*Token, error) {
	opts, err := o.Options.resolved()
	if err != nil {
		return nil, err
	}
	if opts.ClientID == "" {
		return nil, apperr.New(apperr.ConfigError, "the client id (Options.ClientID) is empty; create an OAuth 2.0 app on X and configure its client id")
	}
	if o.Out == nil {
		return nil, apperr.New(apperr.ConfigError, "LoginOptions.Out is nil: the authorize URL must be shown to the user")
	}
	if o.Headless && o.In == nil {
		return nil, apperr.New(apperr.ConfigError, "LoginOptions.In is nil: headless login reads the pasted URL from it")
	}
	if o.Timeout < 0 {
		return nil, apperr.New(apperr.ConfigError, "login timeout (LoginOptions.Timeout) must not be negative, got %s", o.Timeout)
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultLoginTimeout
	}
	addr := o.CallbackAddr
	if addr == "" {
		addr = DefaultCallbackAddr
	}
	if err := checkCallbackAddr(addr, o.Headless); err != nil {
		return nil, err
	}
	state, err := randomState()
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var tok *Token
	if o.Headless {
		tok, err = loginHeadless(ctx, opts, o, addr, state, verifier, timeout)
	} else {
		tok, err = loginCallback(ctx, opts, o, addr, state, verifier, timeout)
	}
	if err != nil {
		return nil, err
	}
	if tok.RefreshToken == "" {
		fmt.Fprintln(o.Out, "Note: X issued no refresh token (the offline.access scope was not granted); run `tuitbot auth` again when the access token expires.")
	}
	if opts.TokenPath != "" {
		// The code is spent by now; a login deadline that passes while
		// waiting for the lock must not throw the new tokens away.
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer scancel()
		if err := SaveToken(sctx, opts.TokenPath, tok); err != nil {
			return nil, err
		}
	}
	return tok, nil
}

// checkCallbackAddr only admits loopback IP literals: the listener must not
// be reachable from the network, and a name like "localhost" may resolve to
// a different address than the one registered as the redirect URI.
func checkCallbackAddr(addr string, headless bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return apperr.Wrap(apperr.ConfigError, err, "callback address (LoginOptions.CallbackAddr) %q is not host:port", addr)
	}
	if !isLoopbackHost(host) {
		return apperr.New(apperr.ConfigError, "callback address (LoginOptions.CallbackAddr) %q must be a loopback IP such as 127.0.0.1", addr)
	}
	if headless && (port == "0" || port == "") {
		return apperr.New(apperr.ConfigError, "callback address (LoginOptions.CallbackAddr) %q needs an explicit port in headless mode: it must match the redirect URI registered on X", addr)
	}
	return nil
}

func randomState() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", apperr.Wrap(apperr.InternalError, err, "cannot generate the OAuth state")
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func redirectURI(hostport string) string {
	return "http://" + hostport + CallbackPath
}

func authorizeURL(cfg *oauth2.Config, state, verifier string) string {
	return cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
}

// exchange trades the code for tokens; the verifier proves this process
// started the flow.
func exchange(ctx context.Context, opts Options, cfg *oauth2.Config, code, verifier string) (*Token, error) {
	ot, err := cfg.Exchange(opts.httpContext(ctx), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, tokenEndpointError(ctx, err, "authorization code exchange", apperr.XAPIError,
			"; run `tuitbot auth` again", code, verifier, opts.ClientSecret)
	}
	return opts.tokenFromOAuth(ot, nil)
}

func timeoutError(ctx context.Context, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return apperr.Wrap(apperr.ValidationError, ctx.Err(), "no authorization arrived within %s; run `tuitbot auth` again", timeout)
	}
	return apperr.Wrap(apperr.ValidationError, ctx.Err(), "login cancelled")
}

// loginHeadless prints the URL and reads the pasted redirect URL.
func loginHeadless(ctx context.Context, opts Options, o LoginOptions, addr, state, verifier string, timeout time.Duration) (*Token, error) {
	cfg := opts.oauthConfig(redirectURI(addr))
	fmt.Fprintf(o.Out, "Open this URL in a browser and authorize tuitbot:\n\n  %s\n\n", authorizeURL(cfg, state, verifier))
	fmt.Fprintf(o.Out, "X then sends the browser to %s; that page may not load, which is fine.\n", redirectURI(addr))
	fmt.Fprintf(o.Out, "Copy the full URL from the address bar and paste it here (waiting %s):\n", timeout)

	type lineResult struct {
		line string
		err  error
	}
	// The reader cannot be interrupted, so it runs apart and ctx decides how
	// long we wait for it.
	ch := make(chan lineResult, 1)
	go func() {
		line, err := readPaste(o.In)
		ch <- lineResult{line, err}
	}()
	var r lineResult
	select {
	case <-ctx.Done():
		return nil, timeoutError(ctx, timeout)
	case r = <-ch:
	}
	if r.err != nil {
		return nil, r.err
	}
	code, err := parseCallback(r.line, state)
	if err != nil {
		return nil, err
	}
	return exchange(ctx, opts, cfg, code, verifier)
}

// readPaste returns the first non-blank line of r.
func readPaste(r io.Reader) (string, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, 4*maxPasteLen), 4096)
	for {
		var line []byte
		for {
			chunk, isPrefix, err := br.ReadLine()
			line = append(line, chunk...)
			if len(line) > maxPasteLen {
				return "", apperr.New(apperr.InvalidInput, "the pasted text is longer than %d bytes; paste only the redirected URL", maxPasteLen)
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					if s := strings.TrimSpace(string(line)); s != "" {
						return s, nil
					}
					return "", apperr.New(apperr.InvalidInput, "no URL was pasted (input ended)")
				}
				return "", apperr.Wrap(apperr.InvalidInput, err, "cannot read the pasted URL")
			}
			if !isPrefix {
				break
			}
		}
		if s := strings.TrimSpace(string(line)); s != "" {
			return s, nil
		}
	}
}

// parseCallback extracts the authorization code from the pasted redirect
// URL after checking its state. A bare code is refused: without the state
// there is no way to tell our authorization from one an attacker started.
func parseCallback(raw, wantState string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", apperr.New(apperr.InvalidInput, "the pasted URL is empty")
	}
	if len(raw) > maxPasteLen {
		return "", apperr.New(apperr.InvalidInput, "the pasted URL is longer than %d bytes", maxPasteLen)
	}
	if !strings.Contains(raw, "://") {
		if !strings.ContainsAny(raw, "=?&") {
			return "", apperr.New(apperr.InvalidInput, "that looks like a bare authorization code; paste the full URL from the address bar — tuitbot must check its state parameter")
		}
		return "", apperr.New(apperr.InvalidInput, "the pasted text is not a URL; paste the full URL from the address bar (it starts with http://)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", apperr.Wrap(apperr.InvalidInput, err, "the pasted text is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", apperr.New(apperr.InvalidInput, "the pasted URL must start with http:// or https://, got scheme %q", u.Scheme)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", apperr.Wrap(apperr.InvalidInput, err, "the pasted URL has a malformed query string")
	}
	return checkCallbackQuery(q, wantState)
}

// checkCallbackQuery validates the redirect's parameters: state first, so a
// forged redirect never reaches the error or code handling.
func checkCallbackQuery(q url.Values, wantState string) (string, error) {
	states := q["state"]
	if len(states) == 0 {
		return "", apperr.New(apperr.InvalidInput, "the redirect has no state parameter; paste the full URL X redirected to")
	}
	if len(states) > 1 {
		return "", apperr.New(apperr.InvalidInput, "the redirect has more than one state parameter")
	}
	if wantState == "" || subtle.ConstantTimeCompare([]byte(states[0]), []byte(wantState)) != 1 {
		return "", apperr.New(apperr.InvalidInput, "the state parameter does not match this login (a stale URL or a forged redirect); no token was requested — run `tuitbot auth` again")
	}
	if e := q.Get("error"); e != "" {
		msg := sanitizeText(e, 100)
		if d := q.Get("error_description"); d != "" {
			msg += ": " + sanitizeText(d, 300)
		}
		return "", apperr.New(apperr.XForbidden, "X did not authorize tuitbot (%s)", msg)
	}
	codes := q["code"]
	if len(codes) != 1 || codes[0] == "" {
		return "", apperr.New(apperr.InvalidInput, "the redirect must carry exactly one non-empty code parameter")
	}
	if err := checkTokenChars(codes[0]); err != nil {
		return "", apperr.New(apperr.InvalidInput, "the code parameter %v", err)
	}
	return codes[0], nil
}

// sanitizeText keeps server-provided text printable and short.
func sanitizeText(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}

// callbackResult is what the callback handler hands to Login.
type callbackResult struct {
	code string
	err  error
}

// callbackHandler serves the one redirect of this login.
type callbackHandler struct {
	state string
	once  sync.Once
	got   chan callbackResult // buffered 1
	done  chan struct{}       // closed when the outcome is known
	// outcome is written before done is closed.
	outcome error
}

func (h *callbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != CallbackPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	first := false
	h.once.Do(func() { first = true })
	if !first {
		writePage(w, http.StatusConflict, "This login was already handled", "Return to the terminal.")
		return
	}
	code, err := checkCallbackQuery(r.URL.Query(), h.state)
	h.got <- callbackResult{code, err}
	select {
	case <-h.done:
	case <-r.Context().Done():
		return
	}
	if h.outcome != nil {
		writePage(w, http.StatusBadRequest, "tuitbot was not authorized", apperr.As(h.outcome).Message+" Return to the terminal.")
		return
	}
	writePage(w, http.StatusOK, "tuitbot is authorized", "You can close this tab and return to the terminal.")
}

func writePage(w http.ResponseWriter, status int, title, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// The page URL carries the code; keep it out of any Referer.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>%s</title></head>"+
		"<body style=\"font-family:sans-serif;max-width:40em;margin:4em auto\"><h1>%s</h1><p>%s</p></body></html>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(body))
}

// loginCallback listens on the loopback address for X's redirect.
func loginCallback(ctx context.Context, opts Options, o LoginOptions, addr, state, verifier string, timeout time.Duration) (*Token, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, apperr.Wrap(apperr.ConfigError, err, "cannot listen on %s for the OAuth callback (is another program using the port? set the callback address, or use headless mode)", addr)
	}
	h := &callbackHandler{state: state, got: make(chan callbackResult, 1), done: make(chan struct{})}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	finish := func(outcome error) {
		h.outcome = outcome
		close(h.done)
		// Let the handler finish writing the result page, then stop.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-serveErr
	}

	redirect := redirectURI(ln.Addr().String())
	cfg := opts.oauthConfig(redirect)
	authURL := authorizeURL(cfg, state, verifier)
	fmt.Fprintf(o.Out, "Open this URL in a browser and authorize tuitbot:\n\n  %s\n\n", authURL)
	fmt.Fprintf(o.Out, "Waiting for X to redirect to %s (up to %s)...\n", redirect, timeout)
	if o.OpenBrowser != nil {
		if err := o.OpenBrowser(authURL); err != nil {
			fmt.Fprintf(o.Out, "Could not open a browser (%v); open the URL above yourself.\n", err)
		}
	}

	var res callbackResult
	select {
	case <-ctx.Done():
		err := timeoutError(ctx, timeout)
		finish(err)
		return nil, err
	case err := <-serveErr:
		// Serve only returns early on a listener failure; re-queue the value
		// for finish.
		serveErr <- err
		e := apperr.Wrap(apperr.InternalError, err, "the OAuth callback listener stopped")
		finish(e)
		return nil, e
	case res = <-h.got:
	}
	if res.err != nil {
		finish(res.err)
		return nil, res.err
	}
	tok, err := exchange(ctx, opts, cfg, res.code, verifier)
	finish(err)
	if err != nil {
		return nil, err
	}
	return tok, nil
}
