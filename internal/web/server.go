// Package web is the local review page (`tuitbot web`): the approval queue,
// the audit trail, analytics, the autopilot and the settings, rendered on
// the server with html/template. Every change goes through the same
// gateway API the CLI uses; the package runs no SQL of its own.
//
// Security model: the server listens on loopback and prints a one-time
// login URL. Its token becomes an HttpOnly, SameSite=Strict session
// cookie; every state change is a POST carrying the session's CSRF token;
// Host and Origin must name this server (no DNS rebinding, no cross-site
// posts); the Content-Security-Policy allows no inline script.
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/approvallink"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/notify"
	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// bufPool holds page buffers: a page of 50 queue items is about 100 KB.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Reviewer is the name recorded on approvals decided here.
const Reviewer = "web"

// Caller is the caller recorded on mutations started here (rollbacks).
const Caller = "web"

// sessionCookie names the session cookie.
const sessionCookie = "tuitbot_session"

// Deps are the services the pages read and act through. Only Gateway is
// required; a page whose service is missing says so.
type Deps struct {
	Gateway  *gateway.Gateway
	Workflow *workflow.Service
	// Autopilot reports the loops' state (autopilot.Runner.Status).
	Autopilot func(ctx context.Context) (*autopilot.Status, error)
	// Settings is the effective configuration with secrets masked.
	Settings string
	// Warnings are configuration warnings (policy that can never apply).
	Warnings []string
	// DailyBudgetUSD is the X spend cap drawn on the spend chart (0: none).
	DailyBudgetUSD float64
	// Accounts are the X accounts served, each through its own gateway.
	// When set, it replaces the single account of the fields above; the
	// first is shown unless a page asks for another.
	Accounts []Account
	// Links checks and acts on signed approval links (/a/TOKEN); nil
	// means the links are off and /a/ is not found.
	Links *approvallink.Service
	// PublicBaseURL is where a phone reaches the links
	// (notify.public_base_url); its host is accepted on /a/.
	PublicBaseURL string
	// Notified says when each item's notice last went out, per account
	// (nil: no notification channels).
	Notified func(ctx context.Context, account string, ids []int64) (map[int64]notify.Notified, error)
	Log      *slog.Logger
	Now      func() time.Time
	// SandboxURL is where the sandbox emulator listens, for the pages of
	// a sandbox account to say that X there is the emulator.
	SandboxURL string
}

// Account is one X account's services. Each account has its own gateway
// (policy, counters, queue and audit), so every action names its account.
type Account struct {
	Name     string
	Gateway  *gateway.Gateway
	Workflow *workflow.Service
	// Composer edits, deletes and queues drafts (nil: the drafts page
	// only lists them).
	Composer *workflow.Composer
	// Queue is the account's posting queue ([queue]); nil, or one with no
	// slots, shows no queue slots on the calendar.
	Queue func() (queue.Policy, error)
	// Autopilot reports the loops' state (autopilot.Runner.Status).
	Autopilot func(ctx context.Context) (*autopilot.Status, error)
	// Hold pauses (true) or resumes a loop (autopilot.Runner.Hold).
	Hold func(ctx context.Context, loop string, held bool) error
	// Posts looks up posts by id: the ones replies and quotes answer and
	// the ones deletes, likes and reposts act on, with their author and
	// discovery score (see LookupPosts).
	Posts PostLookup
	// Users looks up the accounts follows and mutes act on (see
	// LookupUsers).
	Users UserLookup
	// Sandbox says the account lives in the X emulator: post links lead
	// to this site's view of the emulator's post rather than to x.com.
	Sandbox bool
	// CheckHandOffs looks on X now whether a person did the account's
	// open hand-offs (nil: the page offers no check).
	CheckHandOffs func(ctx context.Context) ([]gateway.HandOff, error)
	// XLogin reports why nothing can reach X for the account ("" when it
	// is logged in): every page then says so, with the command that fixes
	// it. Nil means it is logged in.
	XLogin func() string
	// Policy describes the account's policy for the settings and
	// analytics pages.
	Policy PolicyInfo
	// DailyBudgetUSD is the X spend cap drawn on the spend chart (0: none).
	DailyBudgetUSD float64
	// Access is the account's X API access level (x_api.access) in words,
	// with the prices in force, for the settings page.
	Access xrules.Level
	// OptOuts lists the account's suppression list, the users who told
	// it to stop, for the settings page (nil: the page shows none).
	OptOuts func(ctx context.Context) ([]optouts.OptOut, error)
}

// Options tune the server.
type Options struct {
	// PollEvery is how often the event stream looks for new queue items
	// (another process, such as an MCP server, may add them). Default 1 s.
	PollEvery time.Duration
	// PageSize is how many pending items one page shows. Default 50.
	PageSize int
	// Prefix mounts the site under a path ("/ui" beside the MCP
	// endpoint): every route, link, asset, redirect and the session
	// cookie live under it. Empty serves at the root.
	Prefix string
	// TrustedProxies are the addresses (--behind-proxy) whose
	// X-Forwarded-For names the client.
	TrustedProxies []*net.IPNet
}

// Server is the review site. It is an http.Handler.
type Server struct {
	d    Deps
	o    Options
	tmpl *template.Template
	mux  *http.ServeMux

	accts  []*Account
	static staticAssets
	posts  *lookupCache[Post]
	users  *lookupCache[describe.User]
	// statusOptions and callerOptions are the audit page's filters;
	// navBars and accountOptions the layout's main bar and account
	// switcher, printed when the server starts (see printLayout).
	statusOptions, callerOptions filterOptions
	navBars                      map[navKey]template.HTML
	accountOptions               filterOptions
	// assets are the tags of the stylesheet and script every page loads.
	assets template.HTML
	// crossOrigin refuses state changes a page of another origin sends.
	crossOrigin *http.CrossOriginProtection
	// auditRows holds the audit page's rows between views (a
	// *[]gateway.AuditEntry): a view writes its rows over the last one's
	// (see Gateway.RecentUnresolvedInto).
	auditRows sync.Pool

	// addr is the listening host:port, for the Host and Origin checks and
	// the login URL; set by Listen or SetAddr.
	addr string

	mu         sync.Mutex
	loginToken string // one-time; "" once used
	sessions   map[string]*session

	// limiter counts failed link verifications per client; publicHost and
	// publicOrigin are the public base URL's.
	limiter                  *approvallink.Limiter
	publicHost, publicOrigin string
	// tls is set when the server speaks TLS itself (UseTLS).
	tls       bool
	tlsConfig *tls.Config
}

// parseTemplates are the site's pages under path prefix base, with times
// shown relative to now.
func parseTemplates(base string, now func() time.Time) (*template.Template, error) {
	tmpl, err := template.New("").Funcs(funcs).Funcs(template.FuncMap{"base": func() string { return base },
		// A stored time shown relative to now, the exact time on hover.
		"ago":   func(at string) stamp { return stampOf(now(), at, false) },
		"until": func(at string) stamp { return stampOf(now(), at, true) },
		// A posted poll's choices, votes and state as of now.
		"poll": func(p *xapi.TweetPoll) *pollView { return pollOf(now(), p) }}).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: parse templates: %w", err)
	}
	return tmpl, nil
}

type session struct {
	csrf  string
	flash string
	err   bool
	// link and linkText end the flash with a link (the approved post).
	link, linkText string
}

// New builds the server with a fresh one-time login token.
func New(d Deps, o Options) (*Server, error) {
	if d.Gateway == nil && len(d.Accounts) == 0 {
		return nil, errors.New("web: the review page needs the mutation gateway")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if o.PollEvery <= 0 {
		o.PollEvery = time.Second
	}
	if o.PageSize <= 0 {
		o.PageSize = 50
	}
	if o.Prefix != "" && (!strings.HasPrefix(o.Prefix, "/") || strings.HasSuffix(o.Prefix, "/") || strings.ContainsAny(o.Prefix, "\"?#% ")) {
		return nil, fmt.Errorf("web: path prefix %q: want a path such as /ui, without a trailing slash", o.Prefix)
	}
	tmpl, err := parseTemplates(o.Prefix, d.Now)
	if err != nil {
		return nil, err
	}
	s := &Server{d: d, o: o, tmpl: tmpl, sessions: map[string]*session{}, loginToken: randomToken(),
		posts: newLookupCache[Post](d.Now, "post"), users: newLookupCache[describe.User](d.Now, "account"),
		crossOrigin: http.NewCrossOriginProtection(), limiter: approvallink.NewLimiter(d.Now)}
	if s.statusOptions, err = newFilterOptions(tmpl, statuses); err != nil {
		return nil, err
	}
	if s.callerOptions, err = newFilterOptions(tmpl, callers); err != nil {
		return nil, err
	}
	if d.PublicBaseURL != "" {
		u, err := url.Parse(d.PublicBaseURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("web: public base URL %q is not a URL with a host", d.PublicBaseURL)
		}
		s.publicHost, s.publicOrigin = u.Host, u.Scheme+"://"+u.Host
		// A phone reaches the page through this origin (Tailscale, a
		// reverse proxy), whose Host may not be the one this server sees.
		if err := s.crossOrigin.AddTrustedOrigin(s.publicOrigin); err != nil {
			return nil, fmt.Errorf("web: public base URL %q: %w", d.PublicBaseURL, err)
		}
	}
	if len(d.Accounts) == 0 {
		d.Accounts = []Account{{Name: "default", Gateway: d.Gateway, Workflow: d.Workflow, Autopilot: d.Autopilot, DailyBudgetUSD: d.DailyBudgetUSD}}
	}
	for i := range d.Accounts {
		a := d.Accounts[i]
		if a.Gateway == nil {
			return nil, fmt.Errorf("web: account %q has no mutation gateway", a.Name)
		}
		s.accts = append(s.accts, &a)
	}
	s.d.Gateway = s.accts[0].Gateway
	if err := s.printLayout(); err != nil {
		return nil, err
	}
	sub, _ := fs.Sub(staticFS, "static")
	if s.static, err = newStaticAssets(sub); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

func randomToken() string {
	b := make([]byte, 32)
	// crypto/rand.Read never fails on the platforms Go supports.
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SetAddr records the host:port clients use to reach the server.
func (s *Server) SetAddr(addr string) { s.addr = addr }

// LoginURL is the one-time URL that opens a session. It holds the token:
// print it once, never log it.
func (s *Server) LoginURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	return scheme + "://" + s.addr + s.o.Prefix + "/login?token=" + s.loginToken
}

// PublicLoginURL is the login URL at the public base URL ("" when none is
// configured). It holds the same one-time token as LoginURL.
func (s *Server) PublicLoginURL() string {
	if s.publicOrigin == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimRight(s.d.PublicBaseURL, "/") + s.o.Prefix + "/login?token=" + s.loginToken
}

// Listen binds addr (loopback unless the caller insists otherwise).
func (s *Server) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("web: listen on %s: %w", addr, err)
	}
	s.SetAddr(ln.Addr().String())
	return ln, nil
}

// Serve serves on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.tlsConfig != nil {
		ln = tls.NewListener(ln, s.tlsConfig)
	}
	return serveUntil(ctx, ln, s)
}

// serveUntil serves h on ln until ctx ends, then gives open requests a few
// seconds to finish.
func serveUntil(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		<-done
		return nil
	}
}

// Within is the site as a handler for a server it does not run itself
// (mounted beside the MCP endpoint): its requests also end when ctx does,
// so open event streams do not hold up that server's shutdown.
func (s *Server) Within(ctx context.Context) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		s.ServeHTTP(w, r.WithContext(rctx))
	})
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.Handle("GET /static/", http.StripPrefix("/static/", s.static))
	m.HandleFunc("GET /login", s.login)
	m.HandleFunc("GET /{$}", s.authed(func(w http.ResponseWriter, r *http.Request, _ *session) {
		s.redirect(w, r, "/approvals")
	}))
	m.HandleFunc("GET /approvals", s.authed(s.approvals))
	m.HandleFunc("GET /approvals/new", s.authed(s.approvalsNew))
	m.HandleFunc("GET /approvals/{id}", s.authed(s.approvalDetail))
	m.HandleFunc("POST /approvals/{id}/approve", s.post(s.approve))
	m.HandleFunc("POST /approvals/{id}/reject", s.post(s.reject))
	m.HandleFunc("POST /approvals/{id}/edit", s.post(s.edit))
	m.HandleFunc("POST /approvals/bulk", s.post(s.bulk))
	m.HandleFunc("POST /handoffs/check", s.post(s.checkHandOffs))
	m.HandleFunc("GET /count", s.authed(s.count))
	m.HandleFunc("GET /events", s.authed(s.events))
	m.HandleFunc("GET /audit", s.authed(s.audit))
	m.HandleFunc("GET /audit/{corr}", s.authed(s.auditDetail))
	m.HandleFunc("POST /audit/{corr}/rollback", s.post(s.rollback))
	m.HandleFunc("POST /audit/{corr}/resolve", s.post(s.resolve))
	m.HandleFunc("GET /drafts", s.authed(s.drafts))
	m.HandleFunc("POST /drafts/{id}/edit", s.post(s.draftEdit))
	m.HandleFunc("POST /drafts/{id}/reschedule", s.post(s.draftReschedule))
	m.HandleFunc("POST /drafts/{id}/delete", s.post(s.draftDelete))
	m.HandleFunc("POST /drafts/{id}/approval", s.post(s.draftToApproval))
	m.HandleFunc("POST /drafts/slot", s.post(s.draftToSlot))
	m.HandleFunc("GET /analytics", s.authed(s.analytics))
	m.HandleFunc("GET /autopilot", s.authed(s.autopilotPage))
	m.HandleFunc("POST /autopilot/{loop}/hold", s.post(s.hold))
	m.HandleFunc("GET /settings", s.authed(s.settings))
	m.HandleFunc("GET /posts/{id}", s.authed(s.postPage))
	// Anything else is the site's own 404 page, with its navigation.
	m.HandleFunc("/", s.authed(s.notFound))
	s.mux = m
}

// ServeHTTP checks Host and Origin, sets the security headers and routes.
// Signed links (/a/) have checks of their own (LinkHandler).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.o.Prefix == "" && strings.HasPrefix(r.URL.Path, LinkPrefix) {
		s.serveLink(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// The login URL carries the token: no other site may see it in a
	// Referer. (no-referrer would make browsers send "Origin: null" on
	// the page's own form posts, which the Origin check refuses.)
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if !s.linkHostAllowed(r.Host) {
		// A page on another name that resolves here (DNS rebinding) must
		// not reach the API. The public base URL's name is this server's
		// too (a phone through Tailscale or a reverse proxy).
		http.Error(w, "unknown host", http.StatusMisdirectedRequest)
		return
	}
	// Go's cross-origin protection judges every state change: the
	// browser's Sec-Fetch-Site first (only same-origin or a typed URL pass),
	// else Origin against Host.
	if err := s.crossOrigin.Check(r); err != nil {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	// It lets safe methods through by design. This site also refuses a read
	// that a page of another origin makes (a fetch sends Origin), so no
	// other site is served its pages or its event stream: that check stays
	// here, by hand.
	if o := r.Header.Get("Origin"); o != "" && safeMethod(r.Method) && o != s.scheme(r)+"://"+r.Host &&
		(s.publicOrigin == "" || !strings.EqualFold(o, s.publicOrigin)) {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	if p := s.o.Prefix; p != "" {
		// Only the prefix's own paths are this site's; the routes below
		// see them without it.
		rest, ok := strings.CutPrefix(r.URL.Path, p)
		if !ok || (rest != "" && rest[0] != '/') {
			http.NotFound(w, r)
			return
		}
		if rest == "" {
			http.Redirect(w, r, p+"/", http.StatusMovedPermanently)
			return
		}
		r2 := new(http.Request)
		*r2 = *r
		r2.URL = new(url.URL)
		*r2.URL = *r.URL
		r2.URL.Path, r2.URL.RawPath = rest, ""
		r = r2
	}
	s.mux.ServeHTTP(w, r)
}

// safeMethod reports the methods cross-origin protection lets through.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// redirect sends the browser to path (a path of this site, without the
// prefix) with 303 See Other.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, s.o.Prefix+path, http.StatusSeeOther)
}

// scheme is how the browser reached this request: https when this server
// speaks TLS, or when a trusted proxy (--behind-proxy) says it did.
func (s *Server) scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		if ip := net.ParseIP(host); ip != nil && s.trusted(ip) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
			return "https"
		}
	}
	return "http"
}

// UseTLS makes the server speak TLS with the certificate and key files
// (call it before LoginURL and Serve).
func (s *Server) UseTLS(certFile, keyFile string) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	s.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.tls = true
	return nil
}

// hostAllowed accepts the listening address and loopback names on its port.
func (s *Server) hostAllowed(host string) bool {
	if s.addr == "" {
		return false
	}
	if host == s.addr {
		return true
	}
	_, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		return false
	}
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != port {
		return false
	}
	switch strings.ToLower(h) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// login trades the one-time token for a session cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	s.mu.Lock()
	ok := s.loginToken != "" && len(tok) == len(s.loginToken) && subtle.ConstantTimeCompare([]byte(tok), []byte(s.loginToken)) == 1
	var id string
	if ok {
		s.loginToken = ""
		id = randomToken()
		s.sessions[id] = &session{csrf: randomToken()}
	}
	s.mu.Unlock()
	if !ok {
		s.d.Log.Warn("web login refused: wrong or used token", "remote", r.RemoteAddr)
		s.door(w, http.StatusForbidden, "This login link does not work", "This login link is wrong or was already used: each one works once.")
		return
	}
	// Under a prefix the cookie goes to the site's paths only, never to
	// the MCP endpoint beside it ("/ui" matches /ui and /ui/..., not /uix).
	path := s.o.Prefix
	if path == "" {
		path = "/"
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: path, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: s.scheme(r) == "https"})
	s.redirect(w, r, "/approvals")
}

func (s *Server) sessionOf(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[c.Value]
}

// door answers a visitor without a session with a page of the site's
// layout that says why and what to do.
func (s *Server) door(w http.ResponseWriter, status int, title, msg string) {
	s.execute(w, status, "door", struct{ Title, Message string }{title, msg})
}

type handler func(w http.ResponseWriter, r *http.Request, sess *session)

// authed requires a session.
func (s *Server) authed(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.sessionOf(r)
		if sess == nil {
			s.door(w, http.StatusUnauthorized, "Not logged in", "This page needs the session that opening the login link starts, in this browser.")
			return
		}
		h(w, r, sess)
	}
}

// post requires a session and its CSRF token in the form.
func (s *Server) post(h handler) http.HandlerFunc {
	return s.authed(func(w http.ResponseWriter, r *http.Request, sess *session) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		tok := r.PostFormValue("csrf")
		s.mu.Lock()
		want := sess.csrf
		s.mu.Unlock()
		if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(want)) != 1 {
			http.Error(w, "missing or wrong CSRF token: reload the page and try again", http.StatusForbidden)
			return
		}
		h(w, r, sess)
	})
}

// flash leaves a message for the next page the session renders.
func (s *Server) flash(sess *session, isErr bool, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.flash, sess.err, sess.linkText, sess.link = fmt.Sprintf(format, args...), isErr, "", ""
}

// flashLink leaves a message that ends with a link.
func (s *Server) flashLink(sess *session, msg, text, href string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.flash, sess.err, sess.linkText, sess.link = msg, false, text, href
}

// csrfOf is the session's token, which its forms carry.
func (s *Server) csrfOf(sess *session) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sess.csrf
}

func (s *Server) takeFlash(sess *session) (string, bool, string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, e, text, link := sess.flash, sess.err, sess.linkText, sess.link
	sess.flash, sess.err, sess.linkText, sess.link = "", false, "", ""
	return m, e, text, link
}

// page is what every full page template receives.
type page struct {
	Title    string
	Nav      string
	CSRF     string
	Flash    string
	FlashErr bool
	// FlashLink, when set, ends the flash with a link named FlashLinkText.
	FlashLink, FlashLinkText string
	Data                     any
	// Account is the account shown; AccountOptions the switcher's
	// choices, that one chosen ("" with one account: no switcher); AcctQ
	// the query that keeps a link on this account ("" for the first).
	Account        string
	AccountOptions template.HTML
	AcctQ          string
	Path           string
	// NoLogin says why nothing reaches X for the account shown ("": it
	// is logged in); every page shows it.
	NoLogin string
	// Sandbox says X is the sandbox emulator for the account shown
	// ("sandbox emulator at http://…"; "": the real X).
	Sandbox string
	// Wide lets a page of tables or columns use the screen's width.
	Wide bool
	// Base is the site's path prefix; NavLinks the main bar's links (on
	// the account shown), the one this page is in marked.
	Base     string
	NavLinks template.HTML
	// Assets are the stylesheet's and script's tags.
	Assets template.HTML
}

// navLinks are the main bar's addresses.
type navLinks struct{ Approvals, Drafts, Audit, Analytics, Autopilot, Settings string }

// navCurrent marks the main bar's entry a page belongs to.
type navCurrent struct{ Approvals, Drafts, Audit, Analytics, Autopilot, Settings bool }

// navLinksOf are the main bar's addresses, with query q keeping the
// account.
func (s *Server) navLinksOf(q string) navLinks {
	b := s.o.Prefix
	return navLinks{Approvals: b + "/approvals" + q, Drafts: b + "/drafts" + q, Audit: b + "/audit" + q,
		Analytics: b + "/analytics" + q, Autopilot: b + "/autopilot" + q, Settings: b + "/settings" + q}
}

// navCurrentOf marks the main bar's entry page name belongs to.
func navCurrentOf(name string) navCurrent {
	return navCurrent{Approvals: name == "approvals" || name == "approval", Drafts: name == "drafts",
		Audit: name == "audit" || name == "auditdetail", Analytics: name == "analytics", Autopilot: name == "autopilot",
		Settings: name == "settings"}
}

// navEntries are the main bar's entries a page can be in, and none.
var navEntries = []navCurrent{{}, {Approvals: true}, {Drafts: true}, {Audit: true}, {Analytics: true}, {Autopilot: true}, {Settings: true}}

// navKey names one main bar: the entry marked and the account's query.
type navKey struct {
	cur navCurrent
	q   string
}

// navQuery is the query the main bar's links keep account a with ("" for
// the first account).
func (s *Server) navQuery(a *Account) string {
	if s.acctQuery(a) == "" {
		return ""
	}
	return "?account=" + a.Name
}

// printLayout prints the parts of the layout that take few values, for
// each of them, once: the stylesheet's and script's tags, the main bar
// (per entry marked and account) and the account switcher's choices (per
// account shown). The layout runs on every page, and through the
// template's reflection these were most of its time. What they print is still their templates' ("assets",
// "navlinks" and "options").
func (s *Server) printLayout() error {
	var assets strings.Builder
	if err := s.tmpl.ExecuteTemplate(&assets, "assets", s.o.Prefix); err != nil {
		return fmt.Errorf("web: assets: %w", err)
	}
	s.assets = template.HTML(assets.String())
	s.navBars = make(map[navKey]template.HTML, len(navEntries)*len(s.accts))
	for _, a := range s.accts {
		q := s.navQuery(a)
		for _, cur := range navEntries {
			var b strings.Builder
			if err := s.tmpl.ExecuteTemplate(&b, "navlinks", navBar{Links: s.navLinksOf(q), Cur: cur}); err != nil {
				return fmt.Errorf("web: main bar: %w", err)
			}
			s.navBars[navKey{cur, q}] = template.HTML(b.String())
		}
	}
	if len(s.accts) > 1 {
		names := make([]string, len(s.accts))
		for i, a := range s.accts {
			names[i] = a.Name
		}
		var err error
		if s.accountOptions, err = newFilterOptions(s.tmpl, names); err != nil {
			return err
		}
	}
	return nil
}

// navBar is the "navlinks" template's data.
type navBar struct {
	Links navLinks
	Cur   navCurrent
}

// widePages use the whole width of a large screen.
var widePages = map[string]bool{"drafts": true, "audit": true, "autopilot": true, "settings": true, "analytics": true}

func (s *Server) render(w http.ResponseWriter, r *http.Request, sess *session, name, title string, data any) {
	s.renderStatus(w, r, http.StatusOK, sess, name, title, data)
}

func (s *Server) renderStatus(w http.ResponseWriter, r *http.Request, status int, sess *session, name, title string, data any) {
	s.execute(w, status, name, s.pageOf(r, sess, name, title, data))
}

// pageOf is the page of template name, titled title, that shows data to
// sess in the layout every page shares. It takes sess's flash.
func (s *Server) pageOf(r *http.Request, sess *session, name, title string, data any) page {
	p := page{Title: title, Nav: name, Data: data, Path: r.URL.Path, Wide: widePages[name], Base: s.o.Prefix}
	q := ""
	if a, err := s.acct(r); err == nil {
		p.Account, p.AcctQ, q = a.Name, s.acctQuery(a), s.navQuery(a)
		if a.XLogin != nil {
			p.NoLogin = a.XLogin()
		}
		p.Sandbox = s.sandboxAt(a)
	}
	// Printed for every entry and account (q of one, or none's).
	p.NavLinks, p.Assets = s.navBars[navKey{navCurrentOf(name), q}], s.assets
	if s.accountOptions != nil {
		p.AccountOptions = s.accountOptions.of(p.Account)
	}
	s.mu.Lock()
	p.CSRF = sess.csrf
	s.mu.Unlock()
	p.Flash, p.FlashErr, p.FlashLinkText, p.FlashLink = s.takeFlash(sess)
	return p
}

// sandboxAt names the X account a works on when it is the sandbox's
// ("sandbox emulator at http://…"); "" for the real X.
func (s *Server) sandboxAt(a *Account) string {
	switch {
	case !a.Sandbox:
		return ""
	case s.d.SandboxURL == "":
		return "sandbox emulator"
	}
	return "sandbox emulator at " + s.d.SandboxURL
}

func (s *Server) execute(w http.ResponseWriter, status int, name string, data any) {
	s.executeThen(w, status, name, data, nil)
}

// executeThen is execute with then, when set, writing the rest of the
// page after what template name prints: a long part of a page written
// straight into it rather than handed to a template as one value (which
// copies it twice more).
func (s *Server) executeThen(w http.ResponseWriter, status int, name string, data any, then func(b *bytes.Buffer) error) {
	// The page is rendered whole before anything is sent, so a template
	// error still answers a clean error page.
	b := bufPool.Get().(*bytes.Buffer)
	defer func() {
		b.Reset()
		bufPool.Put(b)
	}()
	err := s.tmpl.ExecuteTemplate(b, name, data)
	if err == nil && then != nil {
		err = then(b)
	}
	if err != nil {
		s.d.Log.Error("web: render", "template", name, "error", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Known, the length is said: the page goes out in one piece rather
	// than chunked.
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, sess *session, status int, err error) {
	s.renderStatus(w, r, status, sess, "error", "Error", err.Error())
}
