package web

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/tuitbot/tuitbot/internal/approvallink"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// linkCSP is stricter than the site's: the link pages run no script at all.
const linkCSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// LinkPrefix is where signed approval links live, at the root of every
// listener that serves them.
const LinkPrefix = "/a/"

// linkPage is what the link templates receive.
type linkPage struct {
	Title, Message string
	Item           *itemView
	Action         string
	CSRF           string
	LinkExpires    string
	Media          []string
}

// LinkHandler serves /a/TOKEN: GET shows the item, POST decides it. It has
// no session: the link is the capability. It checks its own Host (the
// public base URL's, or this server's), refuses a client after 10 failed
// verifications in a minute, and answers with no-store, no-referrer,
// noindex and a CSP that allows no script and no framing.
func (s *Server) LinkHandler() http.Handler {
	return http.HandlerFunc(s.serveLink)
}

// ServeLinks serves the approval links alone on ln (approval_links.listen),
// over TLS when the server uses it, until ctx ends; every other path is
// not found.
func (s *Server) ServeLinks(ctx context.Context, ln net.Listener) error {
	if s.tlsConfig != nil {
		ln = tls.NewListener(ln, s.tlsConfig)
	}
	mux := http.NewServeMux()
	mux.Handle(LinkPrefix, s.LinkHandler())
	return serveUntil(ctx, ln, mux)
}

func (s *Server) serveLink(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", linkCSP)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex, nofollow, noarchive")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	if s.d.Links == nil {
		http.NotFound(w, r)
		return
	}
	if !s.linkHostAllowed(r.Host) {
		http.Error(w, "unknown host", http.StatusMisdirectedRequest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, LinkPrefix)
	// /a/TOKEN is the item; /a/TOKEN/post the post it acts on, in the
	// sandbox, where x.com cannot show it.
	tok, sub, _ := strings.Cut(rest, "/")
	if !ok || tok == "" || (sub != "" && sub != "post") || strings.Contains(sub, "/") {
		http.NotFound(w, r)
		return
	}
	client := s.clientOf(r)
	if s.limiter.Blocked(client) {
		h.Set("Retry-After", "60")
		s.linkDone(w, http.StatusTooManyRequests, "Too many attempts", "Too many links failed from this address; wait a minute and try again.")
		return
	}
	switch {
	case sub == "post" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.showLinkPost(w, r, tok, client)
	case sub == "post":
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case r.Method == http.MethodGet, r.Method == http.MethodHead:
		s.showLink(w, r, tok, client)
	case r.Method == http.MethodPost:
		s.actLink(w, r, tok, client)
	default:
		h.Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// refused answers a link that does not work, counting a failed
// verification against the client.
func (s *Server) refused(w http.ResponseWriter, client string, err error) {
	var ref *approvallink.Refusal
	if !errors.As(err, &ref) {
		s.d.Log.Error("approval link: check failed", "error", err)
		s.linkDone(w, http.StatusInternalServerError, "Something went wrong", "The link could not be checked; try again in a moment.")
		return
	}
	if ref.Status == http.StatusNotFound || ref.Status == http.StatusForbidden {
		s.limiter.Fail(client)
	}
	title := "This link does not work"
	if ref.Status == http.StatusNotFound {
		title = "Not found"
	}
	s.linkDone(w, ref.Status, title, ref.Message)
}

func (s *Server) showLink(w http.ResponseWriter, r *http.Request, tok, client string) {
	l, err := s.d.Links.Check(r.Context(), tok)
	if err != nil {
		s.refused(w, client, err)
		return
	}
	a := s.accountNamed(l.Account)
	if a == nil {
		s.linkDone(w, http.StatusGone, "This link does not work", "The account of this item is not served here.")
		return
	}
	views := s.views(r, a, []gateway.ApprovalItem{*l.Item})
	v := views[0]
	title := "Review: "
	if h := l.HandOff; h != nil {
		// A hand-off: the same card, with Do it on X instead of Approve.
		title = "Do it on X: "
		v.HandOff, v.IntentURL, v.Pending = true, h.IntentURL, false
		v.Rule, v.RuleID = h.Reason, "x_platform"
		if v.Rule == "" {
			v.Rule = "X's API does not let the account do this; a person can, on x.com."
		}
	}
	v.Account = ""
	if a != s.accts[0] {
		v.Account = a.Name
	}
	if t := v.Target; t != nil && t.Kind == describe.KindPost && a.Sandbox {
		// The site's view of the emulator's post needs a session a phone
		// does not have: the link itself shows it (relative to this
		// page, so a public base URL's path is kept).
		t.URL = tok + "/post"
	}
	p := linkPage{Title: title + v.Title, Item: &v, Action: l.Action, CSRF: l.CSRF,
		LinkExpires: l.Expires.UTC().Format("2006-01-02 15:04 UTC"), Media: mediaOf(l.Item.Params)}
	s.execute(w, http.StatusOK, "link", p)
}

// showLinkPost shows the post a link's item acts on, in the sandbox,
// to whoever holds the link: the phone's way to the emulator's post.
func (s *Server) showLinkPost(w http.ResponseWriter, r *http.Request, tok, client string) {
	l, err := s.d.Links.Check(r.Context(), tok)
	if err != nil {
		s.refused(w, client, err)
		return
	}
	a := s.accountNamed(l.Account)
	if a == nil || !a.Sandbox {
		http.NotFound(w, r)
		return
	}
	v := s.views(r, a, []gateway.ApprovalItem{*l.Item})[0]
	t := v.Target
	if t == nil || t.Kind != describe.KindPost {
		http.NotFound(w, r)
		return
	}
	s.execute(w, http.StatusOK, "linkpost", struct {
		Title, Back string
		T           *targetView
	}{"Post " + t.ID, "../" + tok, t})
}

func (s *Server) actLink(w http.ResponseWriter, r *http.Request, tok, client string) {
	// The page is sent with no-referrer, so the browser posts its form
	// with "Origin: null"; a one-tap button posts none. Any real origin
	// must be the public base URL's or this server's.
	if o := r.Header.Get("Origin"); o != "" && o != "null" && !s.originAllowed(o) {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "unreadable form", http.StatusBadRequest)
		return
	}
	if r.PostForm.Get("decision") == "check" {
		s.checkHandOffLink(w, r, tok, client)
		return
	}
	it, err := s.d.Links.Act(r.Context(), tok, r.PostForm.Get("csrf"), r.PostForm.Get("decision"))
	if it == nil && err != nil {
		s.refused(w, client, err)
		return
	}
	switch {
	case it.Status == gateway.ApprovalRejected:
		s.linkDone(w, http.StatusOK, "Rejected", "The item was rejected; nothing was posted.")
	case it.Status == gateway.ApprovalExecuted:
		s.linkDone(w, http.StatusOK, "Approved", "Approved and done: exactly the post you saw was sent.")
	default:
		msg := "Approved, but running it failed"
		if it.ErrorCode != "" {
			msg += " (" + it.ErrorCode + ": " + it.ErrorMessage + ")"
		}
		s.linkDone(w, http.StatusOK, "Approved", msg+". See the audit trail in tuitbot.")
	}
}

// checkHandOffLink is a hand-off link's "I did it": it looks on X now and
// says what it found.
func (s *Server) checkHandOffLink(w http.ResponseWriter, r *http.Request, tok, client string) {
	h, err := s.d.Links.CheckHandOff(r.Context(), tok, r.PostForm.Get("csrf"))
	var ref *approvallink.Refusal
	switch {
	case errors.As(err, &ref):
		s.refused(w, client, err)
	case err != nil:
		s.d.Log.Warn("hand-off link: the check on X failed", "error", err)
		s.linkDone(w, http.StatusBadGateway, "Not checked", "tuitbot could not look on X just now; try again in a moment.")
	case h.Status == gateway.HandOffDone:
		s.linkDone(w, http.StatusOK, "Done on X", "tuitbot found it on X and recorded it as done by you. Thank you.")
	case h.Status == gateway.HandOffOpen:
		s.linkDone(w, http.StatusOK, "Not seen on X yet", "tuitbot looked on X and does not see it yet. Once you have pressed X's button, open the link again and say so; tuitbot also keeps looking by itself.")
	default:
		s.linkDone(w, http.StatusOK, "No longer looked for", "tuitbot stopped looking for this on X ("+h.Status+").")
	}
}

func (s *Server) linkDone(w http.ResponseWriter, status int, title, msg string) {
	s.execute(w, status, "linkdone", linkPage{Title: title, Message: msg})
}

func (s *Server) accountNamed(name string) *Account {
	for _, a := range s.accts {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// mediaOf lists the media ids a call attaches.
func mediaOf(params json.RawMessage) []string {
	var p struct {
		Media []string `json:"media_ids"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Media
}

// linkHostAllowed accepts this server's own names and the public base
// URL's host.
func (s *Server) linkHostAllowed(host string) bool {
	if s.hostAllowed(host) {
		return true
	}
	if s.publicHost != "" && strings.EqualFold(host, s.publicHost) {
		return true
	}
	return false
}

// originAllowed accepts the public base URL's origin and this server's.
func (s *Server) originAllowed(o string) bool {
	if s.publicOrigin != "" && strings.EqualFold(o, s.publicOrigin) {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && s.hostAllowed(u.Host)
}

// clientOf names the client a failed verification is counted against: its
// address, or with a trusted proxy in front, the address that proxy
// reports (the rightmost X-Forwarded-For entry it did not add itself).
func (s *Server) clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil || !s.trusted(ip) {
		return host
	}
	parts := strings.Split(r.Header.Get("X-Forwarded-For"), ",")
	for i := len(parts) - 1; i >= 0; i-- {
		p := net.ParseIP(strings.TrimSpace(parts[i]))
		if p == nil {
			break
		}
		if !s.trusted(p) {
			return p.String()
		}
	}
	return host
}

func (s *Server) trusted(ip net.IP) bool {
	for _, n := range s.o.TrustedProxies {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}
