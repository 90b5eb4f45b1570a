// Package llm talks to large-language-model providers: OpenAI's chat
// completions API (which also serves every OpenAI-compatible server such as
// Ollama, LM Studio, vLLM, Groq and OpenRouter) and Anthropic's messages API.
//
// Every provider failure is returned as an *apperr.Error with code
// llm_error whose message carries only the HTTP status and the provider's own
// error text, cleaned of credentials; a missing setting is llm_not_configured
// naming the configuration key to set.
package llm

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// Provider names accepted in Config.Provider.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Defaults applied by New when the corresponding Config field is zero.
const (
	DefaultTimeout    = 60 * time.Second
	DefaultMaxTokens  = 1024
	DefaultMaxRetries = 2
	// MaxRetryWait caps how long one retry waits for a provider's
	// retry-after; a provider asking for longer is not retried.
	MaxRetryWait = 30 * time.Second
)

// Config selects and tunes a provider. It mirrors the [llm] config section.
type Config struct {
	// Provider is "openai", "anthropic", or "" (no LLM configured).
	Provider string
	Model    string
	// BaseURL overrides the provider's endpoint. For openai it is the prefix
	// that "chat/completions" is appended to (e.g. http://127.0.0.1:11434/v1
	// for Ollama); for anthropic it is the host root, with or without /v1.
	BaseURL string
	// APIKey is used as is; when empty the key is read from the environment
	// variable named by APIKeyEnv. A key is optional only when BaseURL points
	// at a loopback host (a local server such as Ollama).
	APIKey    string
	APIKeyEnv string
	// Timeout bounds each HTTP attempt (default 60s).
	Timeout time.Duration
	// MaxTokens is both the default and the upper bound for one completion
	// (default 1024).
	MaxTokens int
	// Temperature is used when a Request does not set one. It is sent as is
	// (0 is a valid temperature).
	Temperature float64
	// MaxRetries is how often a rate-limited (429), overloaded (5xx) or
	// unreachable call is retried. 0 means the default (2); negative means
	// never retry.
	MaxRetries int
}

// Provider completes a conversation. Implementations are safe for concurrent
// use.
type Provider interface {
	Complete(ctx context.Context, req Request) (*Response, error)
	// Name is the provider kind: "openai" or "anthropic".
	Name() string
}

// Message roles accepted in Request.Messages.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// Request is one completion request.
type Request struct {
	// System is the system prompt. OpenAI receives it as the first message
	// with role "system"; Anthropic receives it in the top-level "system"
	// field.
	System   string
	Messages []Message
	// MaxTokens overrides Config.MaxTokens for this call, but never exceeds
	// it.
	MaxTokens int
	// Temperature overrides Config.Temperature when set.
	Temperature *float64
	// Operation names what the completion is for (e.g. "generate_tweet"); it
	// is copied into the usage record. Empty is recorded as "complete".
	Operation string
}

// Response is a completion.
type Response struct {
	Text         string
	Model        string // the model that answered, as reported by the provider
	InputTokens  int
	OutputTokens int
	// CostUSD is an estimate from the built-in price table; it is 0 when
	// CostKnown is false (a model the table does not know, such as a local
	// open-weight model).
	CostUSD   float64
	CostKnown bool
}

// Usage is one completed call, for the usage ledger.
type Usage struct {
	At           time.Time
	Provider     string
	Model        string
	Operation    string
	InputTokens  int
	OutputTokens int
	CostUSD      float64
	// CostKnown is false when the model is not in the price table; CostUSD
	// is then 0.
	CostKnown bool
}

// UsageRecorder stores usage records. A recording failure does not fail the
// completion (the tokens were already spent); it is logged.
type UsageRecorder interface {
	RecordLLMUsage(ctx context.Context, u Usage) error
}

// Sleeper waits for d or until ctx is done, returning ctx's error in the
// latter case.
type Sleeper func(ctx context.Context, d time.Duration) error

// Option adjusts a provider built by New.
type Option func(*options)

type options struct {
	sleep  Sleeper
	client *http.Client
	logger *slog.Logger
}

// WithSleeper replaces the wait between retries (tests use it to observe
// and skip waits).
func WithSleeper(s Sleeper) Option { return func(o *options) { o.sleep = s } }

// WithHTTPClient replaces the HTTP client. Its Timeout and CheckRedirect are
// kept as given; New's own client refuses redirects so that credentials are
// never sent to a second host.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

// WithLogger sets where non-fatal problems (a failed usage record) are logged.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }
