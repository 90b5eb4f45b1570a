// Package xauth logs a user in to X with OAuth 2.0 (authorization code +
// PKCE S256), stores the tokens in a private file, and hands out access
// tokens that are refreshed automatically.
//
// X refresh tokens are single-use: two processes (the daemon and an MCP
// server, say) that refresh the same token at the same time would leave one
// of them, and possibly the file, holding a dead token. Every refresh is
// therefore serialised within the process and across processes with an
// exclusive lock on "<token file>.lock", and the file is re-read under that
// lock before X is asked for a new token.
//
// Token values never appear in errors, String output, logs or JSON encodings
// produced by this package.
package xauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Defaults used when the corresponding Options field is empty.
const (
	DefaultAuthURL      = "https://x.com/i/oauth2/authorize"
	DefaultTokenURL     = "https://api.x.com/2/oauth2/token"
	DefaultCallbackAddr = "127.0.0.1:8080"
	DefaultLoginTimeout = 120 * time.Second
	DefaultRefreshSkew  = 5 * time.Minute
	// DefaultHTTPTimeout bounds one token-endpoint round trip when
	// Options.HTTPClient is nil.
	DefaultHTTPTimeout = 30 * time.Second
)

// maxRefreshSkew keeps the skew well under the 2 h lifetime of X access
// tokens.
const maxRefreshSkew = time.Hour

// CallbackPath is the path of the redirect URI on the local callback
// listener: http://<CallbackAddr>/callback.
const CallbackPath = "/callback"

// DefaultScopes returns the scopes the product's tools need: what the X
// endpoint table lists for its typed rows, and offline.access, which is
// what makes X issue a refresh token. The slice is a fresh copy.
func DefaultScopes() []string { return xapi.Known().Scopes() }

// ScopesWithGroups returns DefaultScopes plus the scopes of the optional
// scope groups named in specs (the endpoint table's ScopeGroups), each
// spec a "+GROUP" or a comma-separated list of them, as `tuitbot auth
// --scopes` takes them. An unknown group, or a spec without its "+", is
// refused with an error naming the known groups.
func ScopesWithGroups(specs []string) ([]string, error) {
	eps := xapi.Known()
	known := eps.ScopeGroups()
	var groups []string
	for _, spec := range specs {
		for item := range strings.SplitSeq(spec, ",") {
			item = strings.TrimSpace(item)
			name, ok := strings.CutPrefix(item, "+")
			if !ok || !slices.Contains(known, name) {
				return nil, apperr.New(apperr.InvalidInput, "--scopes: %q is not a known scope group; known: %s",
					item, "+"+strings.Join(known, ", +"))
			}
			if !slices.Contains(groups, name) {
				groups = append(groups, name)
			}
		}
	}
	return eps.ScopesWith(groups...), nil
}

// Options configures the OAuth client and the token file. The zero value of
// every field except ClientID and TokenPath has a usable default.
type Options struct {
	// ClientID is the X app's OAuth 2.0 client id (public client).
	ClientID string
	// ClientSecret is optional; when set the client authenticates to the
	// token endpoint with HTTP Basic auth (confidential client).
	ClientSecret string
	// AuthURL and TokenURL point at X by default; the sandbox points them at
	// the emulator. They must be https, or http on a loopback address.
	AuthURL  string
	TokenURL string
	// Scopes requested at login; DefaultScopes when empty.
	Scopes []string
	// TokenPath is the tokens.json file.
	TokenPath string
	// HTTPClient is used for token-endpoint calls. When nil a client with
	// DefaultHTTPTimeout that never follows redirects is used.
	HTTPClient *http.Client
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// RefreshSkew is how long before expiry a token is refreshed;
	// DefaultRefreshSkew when zero.
	RefreshSkew time.Duration

	// onWait, when set, is called each time a Manager finds the token busy
	// (another caller in this process, or another process holding the
	// lock file) and is about to wait for it. A test seam: it tells a test
	// that a caller is blocked, without sleeping.
	onWait func()
}

// Format prints the options with the client secret masked, so an Options
// value that ends up in a log line cannot leak it.
func (o Options) Format(f fmt.State, _ rune) {
	secret := "unset"
	if o.ClientSecret != "" {
		secret = "set"
	}
	fmt.Fprintf(f, "xauth.Options{ClientID:%q ClientSecret:%s AuthURL:%q TokenURL:%q TokenPath:%q Scopes:%v RefreshSkew:%s}",
		o.ClientID, secret, o.AuthURL, o.TokenURL, o.TokenPath, o.Scopes, o.RefreshSkew)
}

// resolved returns o with defaults filled in, or a config error naming the
// offending field.
func (o Options) resolved() (Options, error) {
	if o.AuthURL == "" {
		o.AuthURL = DefaultAuthURL
	}
	if o.TokenURL == "" {
		o.TokenURL = DefaultTokenURL
	}
	if len(o.Scopes) == 0 {
		o.Scopes = DefaultScopes()
	} else {
		o.Scopes = slices.Clone(o.Scopes)
	}
	for _, s := range o.Scopes {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return o, apperr.New(apperr.ConfigError, "scope %q (Options.Scopes) is not a valid OAuth scope", s)
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RefreshSkew < 0 || o.RefreshSkew > maxRefreshSkew {
		// A skew near the token lifetime would refresh on every call.
		return o, apperr.New(apperr.ConfigError, "refresh skew (Options.RefreshSkew) must be between 0 and %s, got %s", maxRefreshSkew, o.RefreshSkew)
	}
	if o.RefreshSkew == 0 {
		o.RefreshSkew = DefaultRefreshSkew
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{
			Timeout: DefaultHTTPTimeout,
			// A token endpoint that redirects is misconfigured or hostile;
			// following it could replay the code or refresh token elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if err := checkEndpoint("authorize URL (Options.AuthURL)", o.AuthURL); err != nil {
		return o, err
	}
	if err := checkEndpoint("token URL (Options.TokenURL)", o.TokenURL); err != nil {
		return o, err
	}
	return o, nil
}

// checkEndpoint refuses URLs that would send codes or tokens in clear text to
// a remote host.
func checkEndpoint(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return apperr.Wrap(apperr.ConfigError, err, "%s is not a valid URL", field)
	}
	if u.Host == "" || u.User != nil || u.Fragment != "" {
		return apperr.New(apperr.ConfigError, "%s must be an absolute URL without user info or fragment, got %q", field, raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return apperr.New(apperr.ConfigError, "%s must use https (plain http is only allowed on a loopback address), got %q", field, raw)
	default:
		return apperr.New(apperr.ConfigError, "%s must use https, got scheme %q", field, u.Scheme)
	}
}

func isLoopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// oauthConfig builds the x/oauth2 config. The auth style is pinned rather
// than auto-detected: auto-detection retries a failed request the other way,
// which would spend a single-use code or refresh token twice.
func (o Options) oauthConfig(redirectURL string) *oauth2.Config {
	style := oauth2.AuthStyleInParams
	if o.ClientSecret != "" {
		style = oauth2.AuthStyleInHeader
	}
	return &oauth2.Config{
		ClientID:     o.ClientID,
		ClientSecret: o.ClientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   o.AuthURL,
			TokenURL:  o.TokenURL,
			AuthStyle: style,
		},
		RedirectURL: redirectURL,
		Scopes:      o.Scopes,
	}
}

// httpContext makes x/oauth2 use our HTTP client.
func (o Options) httpContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, o.HTTPClient)
}

// tokenFromOAuth converts a token-endpoint answer into our Token, computing
// the expiry with our clock. prev supplies values X may omit on refresh.
func (o Options) tokenFromOAuth(t *oauth2.Token, prev *Token) (*Token, error) {
	now := o.Now()
	out := &Token{
		AccessToken:  t.AccessToken,
		RefreshToken: t.RefreshToken,
		TokenType:    t.TokenType,
	}
	switch {
	case t.ExpiresIn > 0:
		out.ExpiresAt = now.Add(time.Duration(t.ExpiresIn) * time.Second)
	case !t.Expiry.IsZero():
		// Form-encoded answers only carry an absolute expiry computed with
		// the wall clock; translate the remaining lifetime onto ours.
		out.ExpiresAt = now.Add(time.Until(t.Expiry))
	}
	out.ExpiresAt = out.ExpiresAt.UTC().Truncate(time.Second)
	if s, ok := t.Extra("scope").(string); ok && strings.TrimSpace(s) != "" {
		out.Scopes = strings.Fields(s)
	} else if prev != nil {
		out.Scopes = slices.Clone(prev.Scopes)
	} else {
		out.Scopes = slices.Clone(o.Scopes)
	}
	if out.RefreshToken == "" && prev != nil {
		out.RefreshToken = prev.RefreshToken
	}
	if err := out.validate(); err != nil {
		return nil, apperr.Wrap(apperr.XAPIError, err, "the token endpoint returned an unusable token")
	}
	return out, nil
}

// tokenEndpointError turns a failed token-endpoint call into a product error
// whose text is scrubbed of every secret involved in the request. rejected is
// the code used when X refuses the grant itself; hint is appended to that
// message.
func tokenEndpointError(ctx context.Context, err error, what string, rejected apperr.Code, hint string, secrets ...string) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		detail := re.ErrorCode
		if re.ErrorDescription != "" {
			if detail != "" {
				detail += ": "
			}
			detail += re.ErrorDescription
		}
		if detail == "" {
			detail = "no error description"
		}
		detail = redact(detail, secrets...)
		cause := fmt.Errorf("token endpoint answered HTTP %d", status)
		switch {
		case status == http.StatusTooManyRequests:
			return apperr.Wrap(apperr.XRateLimited, cause, "X rate-limited the %s (HTTP 429, %s)", what, detail)
		case status >= 500:
			return apperr.Wrap(apperr.XNetworkError, cause, "X's token endpoint failed during the %s (HTTP %d, %s)", what, status, detail)
		case status == http.StatusUnauthorized || re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client":
			// The app's credentials, not the user's grant, are wrong:
			// logging in again would not help.
			return apperr.Wrap(apperr.ConfigError, cause, "X refused the app credentials during the %s (HTTP %d, %s); check the client id and client secret", what, status, detail)
		default:
			return apperr.Wrap(rejected, cause, "X rejected the %s (HTTP %d, %s)%s", what, status, detail, hint)
		}
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return apperr.Wrap(apperr.XNetworkError, ctxErr, "%s interrupted", what)
	}
	// Keep only a scrubbed copy of the cause: transport errors quote the
	// request and parse errors quote the answer.
	scrubbed := errors.New(redact(err.Error(), secrets...))
	var ue *url.Error
	if errors.As(err, &ue) {
		return apperr.Wrap(apperr.XNetworkError, scrubbed, "%s failed: could not reach the token endpoint", what)
	}
	return apperr.Wrap(apperr.XAPIError, scrubbed, "%s failed: the token endpoint sent an unusable answer", what)
}

// redact replaces every non-empty secret in s.
func redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}
