package llm

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
)

// Default endpoints used when Config.BaseURL is empty.
const (
	defaultOpenAIBaseURL    = "https://api.openai.com/v1"
	defaultAnthropicBaseURL = "https://api.anthropic.com"
)

// maxResponseBytes bounds how much of a provider answer is read; a
// completion of a few thousand tokens is far below it.
const maxResponseBytes = 8 << 20

// settings is a validated Config with defaults applied.
type settings struct {
	provider    string
	model       string
	baseURL     string
	apiKey      string
	local       bool
	timeout     time.Duration
	maxTokens   int
	temperature float64
	maxRetries  int
}

// New builds the provider named by cfg.Provider. rec may be nil (usage is
// then not recorded); now may be nil (time.Now).
//
// A missing provider, model or key is reported as llm_not_configured naming
// the key to set (llm.provider, llm.model, llm.api_key / llm.api_key_env); a
// malformed value as config_error naming its key.
func New(cfg Config, rec UsageRecorder, now func() time.Time, opts ...Option) (Provider, error) {
	s, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	o := options{sleep: clock.Sleep}
	for _, opt := range opts {
		opt(&o)
	}
	if o.sleep == nil {
		o.sleep = clock.Sleep
	}
	if o.logger == nil {
		o.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.client == nil {
		o.client = defaultHTTPClient()
	}
	if now == nil {
		now = time.Now
	}
	c := &client{s: s, rec: rec, now: now, sleep: o.sleep, log: o.logger}
	switch s.provider {
	case ProviderOpenAI:
		c.do = newOpenAIBackend(s, o.client, now)
	case ProviderAnthropic:
		c.do = newAnthropicBackend(s, o.client, now)
	}
	return c, nil
}

func resolve(cfg Config) (settings, error) {
	s := settings{
		provider:    strings.ToLower(strings.TrimSpace(cfg.Provider)),
		model:       strings.TrimSpace(cfg.Model),
		timeout:     cfg.Timeout,
		maxTokens:   cfg.MaxTokens,
		temperature: cfg.Temperature,
		maxRetries:  cfg.MaxRetries,
	}
	switch s.provider {
	case "":
		return s, apperr.New(apperr.LLMNotConfigured,
			"no LLM provider is configured; set llm.provider to %q or %q", ProviderOpenAI, ProviderAnthropic)
	case ProviderOpenAI, ProviderAnthropic:
	default:
		return s, apperr.New(apperr.ConfigError,
			"llm.provider must be %q or %q (OpenAI-compatible servers use %q with llm.base_url), got %q",
			ProviderOpenAI, ProviderAnthropic, ProviderOpenAI, cfg.Provider)
	}
	if s.model == "" {
		return s, apperr.New(apperr.LLMNotConfigured, "no LLM model is configured; set llm.model")
	}

	base := strings.TrimSpace(cfg.BaseURL)
	if base == "" {
		base = defaultOpenAIBaseURL
		if s.provider == ProviderAnthropic {
			base = defaultAnthropicBaseURL
		}
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return s, apperr.New(apperr.ConfigError,
			"llm.base_url must be an http or https URL such as http://127.0.0.1:11434/v1")
	}
	if u.User != nil {
		// Credentials in the URL would end up in error messages and logs.
		return s, apperr.New(apperr.ConfigError,
			"llm.base_url must not contain credentials; set llm.api_key or llm.api_key_env")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return s, apperr.New(apperr.ConfigError, "llm.base_url must not have a query or fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if s.provider == ProviderAnthropic {
		// Requests go to {base}/v1/messages; accept the documented ".../v1"
		// form too.
		u.Path = strings.TrimSuffix(u.Path, "/v1")
	}
	s.baseURL = u.String()
	s.local = isLoopbackHost(u.Hostname())

	s.apiKey = strings.TrimSpace(cfg.APIKey)
	if s.apiKey == "" && cfg.APIKeyEnv != "" {
		s.apiKey = strings.TrimSpace(os.Getenv(cfg.APIKeyEnv))
	}
	if s.apiKey == "" && !s.local {
		if cfg.APIKeyEnv != "" {
			return s, apperr.New(apperr.LLMNotConfigured,
				"no LLM API key: environment variable %s (named by llm.api_key_env) is empty; set it or llm.api_key",
				cfg.APIKeyEnv)
		}
		return s, apperr.New(apperr.LLMNotConfigured,
			"no LLM API key is configured; set llm.api_key or llm.api_key_env (a key is optional only for a local llm.base_url)")
	}
	if strings.ContainsAny(s.apiKey, "\r\n") {
		return s, apperr.New(apperr.ConfigError, "llm.api_key must be a single line")
	}

	switch {
	case s.timeout == 0:
		s.timeout = DefaultTimeout
	case s.timeout < 0:
		return s, apperr.New(apperr.ConfigError, "llm.timeout_seconds must be positive")
	}
	switch {
	case s.maxTokens == 0:
		s.maxTokens = DefaultMaxTokens
	case s.maxTokens < 0:
		return s, apperr.New(apperr.ConfigError, "llm.max_tokens must be positive, got %d", s.maxTokens)
	}
	if s.temperature < 0 || s.temperature > 2 {
		return s, apperr.New(apperr.ConfigError, "llm.temperature must be between 0 and 2, got %g", s.temperature)
	}
	switch {
	case s.maxRetries == 0:
		s.maxRetries = DefaultMaxRetries
	case s.maxRetries < 0:
		s.maxRetries = 0
	}
	return s, nil
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// defaultHTTPClient refuses redirects (the API key must only ever reach the
// configured host) and caps response bodies.
func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &http.Client{
		Transport: capTransport{next: tr, limit: maxResponseBytes},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

type capTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t capTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	// One byte over the limit is allowed into the reader so that a body of
	// exactly limit bytes still ends in io.EOF.
	resp.Body = &cappedBody{rc: resp.Body, left: t.limit + 1}
	return resp, nil
}

var errResponseTooLarge = errors.New("response body exceeds the size limit")

type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errResponseTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left <= 0 {
		return n - 1, errResponseTooLarge
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
