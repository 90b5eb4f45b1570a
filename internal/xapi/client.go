package xapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
)

// Logical hosts a request may name. Callers never see or pass real base URLs.
const (
	HostAPI          = "api.x.com"
	HostUpload       = "upload.x.com"
	HostUploadLegacy = "upload.twitter.com"
)

// Defaults applied by New when an Options field is zero.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxBodyBytes     = 16 << 20
	DefaultMaxAttempts      = 3
	DefaultBaseBackoff      = 500 * time.Millisecond
	DefaultMaxRateLimitWait = 60 * time.Second
	// MaxBackoff caps one exponential backoff step.
	MaxBackoff = 8 * time.Second
)

// DefaultBaseURLs returns the production base URL of every logical host.
func DefaultBaseURLs() map[string]string {
	return map[string]string{
		HostAPI:          "https://api.x.com",
		HostUpload:       "https://upload.x.com",
		HostUploadLegacy: "https://upload.twitter.com",
	}
}

// TokenSource supplies the OAuth 2.0 user access token. Refresh is called at
// most once per call after X answers 401; implementations serialise refreshes
// because X refresh tokens are single-use.
type TokenSource interface {
	AccessToken(ctx context.Context) (string, error)
	Refresh(ctx context.Context) (string, error)
}

// UsageRecorder receives one row per HTTP attempt, failures and retries
// included, so the spend ledger is complete.
type UsageRecorder interface {
	RecordXUsage(ctx context.Context, u Usage) error
}

// Usage is one ledger row.
type Usage struct {
	At        time.Time
	AccountID string
	// Endpoint is the method plus the path template, e.g.
	// "GET /2/users/:id/mentions".
	Endpoint string
	Method   string
	// Status is the HTTP status, or 0 when no response arrived.
	Status int
	// Items is the number of resources returned (len of data, or 1 for an
	// object), 0 for failures.
	Items int
	// CostUSD is the estimated pay-per-use charge of this attempt after the
	// same-UTC-day deduplication of read resources.
	CostUSD float64
	// Attempt is 1 for the first try of a call, 2 for its first retry, ...
	Attempt int
	// ErrorCode is the apperr code this attempt failed with, if it failed.
	ErrorCode string
}

// Options configure a Client. Zero values take the documented defaults.
type Options struct {
	// BaseURLs maps logical hosts to base URLs (scheme, host, optional path
	// prefix). Missing hosts keep their production default; unknown keys are
	// rejected.
	BaseURLs map[string]string
	Tokens   TokenSource
	Usage    UsageRecorder
	// DMSenders, when set, keeps the senders of every DM event list the
	// client reads (the account's own messages left out).
	DMSenders DMSenderRecorder
	// Mentions, when set, is told of every post a universal read of the
	// account's own mentions returned (the typed read's callers see them
	// themselves).
	Mentions MentionRecorder
	// AccountID keys the ledger and the rate-limit state.
	AccountID string
	// Timeout bounds each attempt, body read included.
	Timeout time.Duration
	// MaxBodyBytes caps a response body; a larger body is an error.
	MaxBodyBytes int64
	// MaxAttempts bounds attempts per call for retryable failures.
	MaxAttempts int
	// BaseBackoff is the first backoff step; it doubles per retry up to
	// MaxBackoff, with jitter.
	BaseBackoff time.Duration
	// MaxRateLimitWait is the longest the client sleeps for a 429 reset before
	// it gives up and returns x_rate_limited.
	MaxRateLimitWait time.Duration
	// HTTPClient supplies the transport only; its redirect policy and timeout
	// are replaced.
	HTTPClient *http.Client
	Now        func() time.Time
	// Sleep waits d or until ctx is done. Tests inject a recorder.
	Sleep  func(ctx context.Context, d time.Duration) error
	Logger *slog.Logger
	// Jitter returns a value in [0, n); tests may make it deterministic.
	Jitter func(n int64) int64
}

// Client talks to X. It is safe for concurrent use.
type Client struct {
	bases       map[string]*url.URL
	http        *http.Client
	tokens      TokenSource
	usage       UsageRecorder
	account     string
	timeout     time.Duration
	maxBody     int64
	maxAttempts int
	baseBackoff time.Duration
	maxRateWait time.Duration
	now         func() time.Time
	sleep       func(context.Context, time.Duration) error
	log         *slog.Logger
	jitter      func(int64) int64
	limits      *rateLimits
	ledger      *ledger
	meMu        sync.Mutex
	meID        string
	meUsername  string
	seen        seenPosts
	dmSenders   DMSenderRecorder
	mentions    MentionRecorder
}

// New validates opts and builds a Client.
func New(opts Options) (*Client, error) {
	bases := map[string]*url.URL{}
	for h, raw := range DefaultBaseURLs() {
		u, _ := url.Parse(raw)
		bases[h] = u
	}
	keys := make([]string, 0, len(opts.BaseURLs))
	for k := range opts.BaseURLs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		host := strings.ToLower(strings.TrimSpace(k))
		if _, ok := bases[host]; !ok {
			return nil, apperr.New(apperr.ConfigError, "BaseURLs: unknown logical host %q (allowed: %s, %s, %s)", k, HostAPI, HostUpload, HostUploadLegacy)
		}
		u, err := parseBaseURL(opts.BaseURLs[k])
		if err != nil {
			return nil, apperr.Wrap(apperr.ConfigError, err, "BaseURLs[%s]: %v", host, err)
		}
		bases[host] = u
	}
	c := &Client{
		bases:       bases,
		tokens:      opts.Tokens,
		usage:       opts.Usage,
		dmSenders:   opts.DMSenders,
		mentions:    opts.Mentions,
		account:     opts.AccountID,
		timeout:     opts.Timeout,
		maxBody:     opts.MaxBodyBytes,
		maxAttempts: opts.MaxAttempts,
		baseBackoff: opts.BaseBackoff,
		maxRateWait: opts.MaxRateLimitWait,
		now:         opts.Now,
		sleep:       opts.Sleep,
		log:         opts.Logger,
		jitter:      opts.Jitter,
	}
	if c.timeout < 0 || c.maxBody < 0 || c.maxAttempts < 0 || c.baseBackoff < 0 || c.maxRateWait < 0 {
		return nil, apperr.New(apperr.ConfigError, "Options: Timeout, MaxBodyBytes, MaxAttempts, BaseBackoff and MaxRateLimitWait must not be negative")
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBody == 0 {
		c.maxBody = DefaultMaxBodyBytes
	}
	if c.maxAttempts == 0 {
		c.maxAttempts = DefaultMaxAttempts
	}
	if c.baseBackoff == 0 {
		c.baseBackoff = DefaultBaseBackoff
	}
	if c.maxRateWait == 0 {
		c.maxRateWait = DefaultMaxRateLimitWait
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.sleep == nil {
		c.sleep = clock.Sleep
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.jitter == nil {
		c.jitter = defaultJitter
	}
	c.http = buildHTTPClient(opts.HTTPClient)
	c.limits = newRateLimits()
	c.ledger = newLedger()
	return c, nil
}

// AccountID returns the account this client bills and tracks limits for.
func (c *Client) AccountID() string { return c.account }

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("not a URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("scheme must be https or http")
	}
	if u.Host == "" {
		return nil, fmt.Errorf("host is empty")
	}
	if u.User != nil {
		return nil, fmt.Errorf("credentials in the URL are not allowed")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("query and fragment are not allowed")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// buildHTTPClient keeps only the caller's transport. The redirect policy is
// forced because a followed redirect could carry the bearer token to another
// host; the 3xx is returned as is. No cookie jar: X needs none and cookies
// would be state the caller did not ask for.
func buildHTTPClient(in *http.Client) *http.Client {
	var rt http.RoundTripper
	if in != nil {
		rt = in.Transport
	}
	if rt == nil {
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// resolveHost maps a logical host to its base URL.
func (c *Client) resolveHost(host string) (*url.URL, error) {
	h := strings.ToLower(strings.TrimSpace(host))
	if h == "" {
		h = HostAPI
	}
	u, ok := c.bases[h]
	if !ok {
		return nil, apperr.New(apperr.XRequestBlocked, "host: %q is not an allowed X host (allowed: %s, %s, %s)", truncate(host, 80), HostAPI, HostUpload, HostUploadLegacy)
	}
	return u, nil
}
