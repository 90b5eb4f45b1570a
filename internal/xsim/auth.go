package xsim

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// knownScopes lists the scopes X's OAuth 2.0 authorization server knows.
func knownScopes() []string {
	return []string{
		"block.read", "block.write", "bookmark.read", "bookmark.write", "dm.read", "dm.write",
		"follows.read", "follows.write", "like.read", "like.write", "list.read", "list.write",
		"media.write", "mute.read", "mute.write", "offline.access", "space.read",
		"tweet.moderate.write", "tweet.read", "tweet.write", "users.email", "users.read",
	}
}

// AllScopes lists every scope the emulator's authorization server accepts.
func (s *Server) AllScopes() []string { return knownScopes() }

const authCodeTTL = 30 * time.Second

func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// newToken returns an opaque random token in X's style (URL-safe base64).
func newToken() string {
	var b [40]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("xsim: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// IssueToken mints tokens for userID (empty means the demo user) with the
// given scopes, skipping the browser flow. A refresh token is returned only
// when scopes include offline.access, as on X.
func (s *Server) IssueToken(userID string, scopes []string) (access, refresh string, expiresIn time.Duration) {
	t := s.IssueTokens([]string{userID}, scopes)[0]
	return t.Access, t.Refresh, t.ExpiresIn
}

// RefreshValid reports whether refresh is a refresh token that still
// works for userID: issued to this server's client, neither used nor
// revoked, and granting every one of scopes. A sandbox whose account
// already holds one keeps it rather than minting another at every start,
// which would grow the world by a grant pair each time.
func (s *Server) RefreshValid(userID, refresh string, scopes []string) bool {
	if refresh == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.st.grants[hashToken(refresh)]
	return g != nil && g.Kind == "refresh" && !g.Used && !g.Revoked && g.UserID == userID &&
		g.ClientID == s.opts.ClientID && hasScopes(g.Scopes, scopes)
}

// Issued is what IssueTokens minted for one user.
type Issued struct {
	Access, Refresh string
	ExpiresIn       time.Duration
}

// IssueTokens is IssueToken for several users at once (the i-th answer is
// the i-th user's), with one write of the state file for all of them
// rather than one each: a sandbox logs in every account as it starts, and
// each write encodes the whole world.
func (s *Server) IssueTokens(userIDs []string, scopes []string) []Issued {
	if len(userIDs) == 0 {
		return nil
	}
	out := make([]Issued, len(userIDs))
	s.mu.Lock()
	scopes, now := normalizeScopes(scopes), s.now()
	for i, userID := range userIDs {
		if userID == "" {
			userID = s.st.demoUserID
		}
		out[i].Access, out[i].Refresh = s.mintLocked(userID, s.opts.ClientID, scopes, now)
		out[i].ExpiresIn = s.opts.TokenTTL
	}
	s.mu.Unlock()
	// Saved before the tokens are handed out: a successor that loads the
	// world must accept them.
	s.persist()
	return out
}

func (s *Server) mintLocked(userID, clientID string, scopes []string, now time.Time) (access, refresh string) {
	access = newToken()
	ag := &Grant{Hash: hashToken(access), Kind: "access", UserID: userID, ClientID: clientID,
		Scopes: scopes, ExpiresAt: now.Add(s.opts.TokenTTL)}
	s.st.grants[ag.Hash] = ag
	s.st.touch(touchedGrant, ag.Hash)
	if slices.Contains(scopes, "offline.access") {
		refresh = newToken()
		rg := &Grant{Hash: hashToken(refresh), Kind: "refresh", UserID: userID, ClientID: clientID,
			Scopes: scopes, Pair: ag.Hash}
		ag.Pair = rg.Hash
		s.st.grants[rg.Hash] = rg
		s.st.touch(touchedGrant, rg.Hash)
	}
	return access, refresh
}

func normalizeScopes(in []string) []string {
	out := make([]string, 0, len(in))
	for _, sc := range in {
		if sc = strings.TrimSpace(sc); sc != "" && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	slices.Sort(out)
	return out
}

// authenticate resolves the bearer token; nil means 401. Runs under s.mu.
func (s *Server) authenticate(r *http.Request, now time.Time) (*Grant, *User) {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return nil, nil
	}
	g := s.st.grants[hashToken(strings.TrimSpace(h[len(prefix):]))]
	if g == nil || g.Kind != "access" || g.Revoked || !now.Before(g.ExpiresAt) {
		return nil, nil
	}
	u := s.st.users[g.UserID]
	if u == nil {
		return nil, nil
	}
	return g, u
}

func hasScopes(have, need []string) bool { return len(missingScopes(have, need)) == 0 }

func missingScopes(have, need []string) []string {
	var miss []string
	for _, n := range need {
		if !slices.Contains(have, n) {
			miss = append(miss, n)
		}
	}
	return miss
}

// oauthError is the body X's token endpoint sends on failure.
func oauthError(status int, code, desc string) reply {
	return reply{status: status, body: map[string]any{"error": code, "error_description": desc}}
}

// handleAuthorize emulates the consent page: it validates the request and
// consents at once on behalf of the demo user.
func (s *Server) handleAuthorize(c *call) reply {
	q := c.r.URL.Query()
	clientID := q.Get("client_id")
	redirect := q.Get("redirect_uri")
	if clientID != s.opts.ClientID {
		return blankProblem(http.StatusBadRequest, "Bad Request", "Something went wrong: the client_id is not a registered app.")
	}
	ru, err := url.Parse(redirect)
	if redirect == "" || err != nil || !s.redirectAllowed(ru) {
		return blankProblem(http.StatusBadRequest, "Bad Request", "Something went wrong: the redirect_uri does not match the app's callback URLs.")
	}
	state := q.Get("state")
	fail := func(code, desc string) reply {
		v := ru.Query()
		v.Set("error", code)
		v.Set("error_description", desc)
		if state != "" {
			v.Set("state", state)
		}
		ru.RawQuery = v.Encode()
		return redirectTo(ru.String())
	}
	if q.Get("response_type") != "code" {
		return fail("unsupported_response_type", "response_type must be code")
	}
	if state == "" {
		return fail("invalid_request", "state is required")
	}
	challenge := q.Get("code_challenge")
	if q.Get("code_challenge_method") != "S256" {
		return fail("invalid_request", "code_challenge_method must be S256")
	}
	if len(challenge) != 43 {
		return fail("invalid_request", "code_challenge must be the base64url SHA-256 of the code_verifier")
	}
	scopes := normalizeScopes(strings.Fields(q.Get("scope")))
	if len(scopes) == 0 {
		return fail("invalid_scope", "scope is required")
	}
	for _, sc := range scopes {
		if !slices.Contains(knownScopes(), sc) {
			return fail("invalid_scope", "unknown scope: "+sc)
		}
	}
	code := newToken()
	s.st.grants[hashToken(code)] = &Grant{Hash: hashToken(code), Kind: "code", UserID: s.st.demoUserID,
		ClientID: clientID, Scopes: scopes, ExpiresAt: c.now.Add(authCodeTTL), RedirectURI: redirect,
		Challenge: challenge, ChallengeMeth: "S256"}
	s.st.touch(touchedGrant, hashToken(code))
	v := ru.Query()
	v.Set("state", state)
	v.Set("code", code)
	ru.RawQuery = v.Encode()
	return redirectTo(ru.String())
}

func redirectTo(u string) reply {
	return reply{status: http.StatusFound, header: http.Header{"Location": {u}}}
}

func (s *Server) redirectAllowed(u *url.URL) bool {
	if len(s.opts.RedirectURIs) > 0 {
		return slices.Contains(s.opts.RedirectURIs, u.String())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	h := u.Hostname()
	return h == "127.0.0.1" || h == "localhost" || h == "::1"
}

// tokenClient finds the client id from HTTP Basic auth (confidential
// clients) or the form (public clients).
func (s *Server) tokenClient(c *call, form url.Values) (string, bool) {
	if id, _, ok := c.r.BasicAuth(); ok {
		// RFC 6749 §2.3.1: the id is form-encoded inside the Basic header. The
		// emulator's client is public, so there is no secret to check.
		if u, err := url.QueryUnescape(id); err == nil {
			id = u
		}
		return id, id == s.opts.ClientID
	}
	id := form.Get("client_id")
	return id, id == s.opts.ClientID
}

func (c *call) form() (url.Values, *reply) {
	ct := c.r.Header.Get("Content-Type")
	if !strings.HasPrefix(strings.ToLower(ct), "application/x-www-form-urlencoded") {
		rep := oauthError(http.StatusBadRequest, "invalid_request", "Content-Type must be application/x-www-form-urlencoded")
		return nil, &rep
	}
	v, err := url.ParseQuery(string(c.body))
	if err != nil {
		rep := oauthError(http.StatusBadRequest, "invalid_request", "malformed form body")
		return nil, &rep
	}
	return v, nil
}

// handleToken is POST /2/oauth2/token.
func (s *Server) handleToken(c *call) reply {
	form, bad := c.form()
	if bad != nil {
		return *bad
	}
	clientID, okClient := s.tokenClient(c, form)
	if !okClient {
		return oauthError(http.StatusUnauthorized, "unauthorized_client", "Missing valid authorization header")
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		return s.exchangeCode(c, form, clientID)
	case "refresh_token":
		return s.refresh(c, form, clientID)
	default:
		return oauthError(http.StatusBadRequest, "invalid_request", "Missing required parameter [grant_type].")
	}
}

func (s *Server) tokenReply(userID, clientID string, scopes []string, now time.Time) reply {
	access, refresh := s.mintLocked(userID, clientID, scopes, now)
	body := map[string]any{
		"token_type":   "bearer",
		"expires_in":   int64(s.opts.TokenTTL / time.Second),
		"access_token": access,
		"scope":        strings.Join(scopes, " "),
	}
	if refresh != "" {
		body["refresh_token"] = refresh
	}
	return reply{status: http.StatusOK, body: body}
}

func (s *Server) exchangeCode(c *call, form url.Values, clientID string) reply {
	code := form.Get("code")
	verifier := form.Get("code_verifier")
	if code == "" {
		return oauthError(http.StatusBadRequest, "invalid_request", "Missing required parameter [code].")
	}
	if verifier == "" {
		return oauthError(http.StatusBadRequest, "invalid_request", "Missing required parameter [code_verifier].")
	}
	g := s.st.grants[hashToken(code)]
	if g == nil || g.Kind != "code" || g.Used || !c.now.Before(g.ExpiresAt) || g.ClientID != clientID {
		return oauthError(http.StatusBadRequest, "invalid_request", "Value passed for the authorization code was invalid.")
	}
	// A code is single-use even when the exchange fails, so a stolen code
	// cannot be brute-forced against verifiers.
	g.Used = true
	s.st.touch(touchedGrant, g.Hash)
	if form.Get("redirect_uri") != g.RedirectURI {
		return oauthError(http.StatusBadRequest, "invalid_request", "Value passed for the redirect uri did not match the uri of the authorization code.")
	}
	if len(verifier) < 43 || len(verifier) > 128 {
		return oauthError(http.StatusBadRequest, "invalid_request", "Value passed for the code verifier was invalid.")
	}
	sum := sha256.Sum256([]byte(verifier))
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	if subtle.ConstantTimeCompare([]byte(want), []byte(g.Challenge)) != 1 {
		return oauthError(http.StatusBadRequest, "invalid_request", "Value passed for the code verifier did not match the code challenge.")
	}
	return s.tokenReply(g.UserID, clientID, g.Scopes, c.now)
}

func (s *Server) refresh(c *call, form url.Values, clientID string) reply {
	tok := form.Get("refresh_token")
	if tok == "" {
		return oauthError(http.StatusBadRequest, "invalid_request", "Missing required parameter [refresh_token].")
	}
	g := s.st.grants[hashToken(tok)]
	if g == nil || g.Kind != "refresh" || g.Used || g.Revoked || g.ClientID != clientID {
		return oauthError(http.StatusBadRequest, "invalid_request", "Value passed for the token was invalid.")
	}
	// Refresh tokens are single-use on X: the old one dies with this call.
	g.Used = true
	s.st.touch(touchedGrant, g.Hash)
	return s.tokenReply(g.UserID, clientID, g.Scopes, c.now)
}

// handleRevoke is POST /2/oauth2/revoke. Revoking either token of a pair
// revokes both; unknown tokens still answer revoked:true (RFC 7009).
func (s *Server) handleRevoke(c *call) reply {
	form, bad := c.form()
	if bad != nil {
		return *bad
	}
	if _, okClient := s.tokenClient(c, form); !okClient {
		return oauthError(http.StatusUnauthorized, "unauthorized_client", "Missing valid authorization header")
	}
	tok := form.Get("token")
	if tok == "" {
		return oauthError(http.StatusBadRequest, "invalid_request", "Missing required parameter [token].")
	}
	if g := s.st.grants[hashToken(tok)]; g != nil && g.Kind != "code" {
		g.Revoked = true
		s.st.touch(touchedGrant, g.Hash)
		if p := s.st.grants[g.Pair]; p != nil {
			p.Revoked = true
			s.st.touch(touchedGrant, p.Hash)
		}
	}
	return ok(map[string]any{"revoked": true})
}
