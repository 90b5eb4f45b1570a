package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// apiError is a provider's HTTP error reduced to what is safe to show: the
// status, the provider's error type and its message with credentials removed.
type apiError struct {
	Provider string
	Status   int
	Type     string
	Message  string
	// RetryAfter is the wait the provider asked for; 0 when it gave none.
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s answered HTTP %d", e.Provider, e.Status)
	if e.Type != "" {
		fmt.Fprintf(&b, " (%s)", e.Type)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

func (e *apiError) retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout ||
		e.Status >= 500
}

// unreadableResponse describes an HTTP answer that could not be used: an
// error status with a body that is not the provider's JSON, a redirect
// (never followed: it could carry the key elsewhere), or a success body that
// does not decode. Only error statuses and 408/429/5xx are retried.
func unreadableResponse(provider string, resp *http.Response, err error, key string, now time.Time) *apiError {
	ae := &apiError{Provider: provider, Status: resp.StatusCode}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		ae.Message = "redirect refused; set llm.base_url to the API's final address"
	case resp.StatusCode >= 400:
		ae.Message = http.StatusText(resp.StatusCode)
		ae.RetryAfter, _ = parseRetryAfter(resp.Header, now)
	case errors.Is(err, errResponseTooLarge):
		ae.Message = errResponseTooLarge.Error()
	default:
		ae.Message = "the answer could not be read (" + sanitize(err.Error(), key) +
			"); check that llm.base_url points at the API"
	}
	return ae
}

// call is a validated request with the effective limits.
type call struct {
	system      string
	messages    []Message
	maxTokens   int
	temperature *float64
}

// result is what a backend extracts from a successful answer.
type result struct {
	text   string
	model  string
	input  int
	output int
}

// backend performs one HTTP attempt. HTTP failures come back as *apiError
// (already sanitised); anything else is a transport failure.
type backend func(ctx context.Context, c call) (result, error)

type client struct {
	s     settings
	do    backend
	rec   UsageRecorder
	now   func() time.Time
	sleep Sleeper
	log   *slog.Logger
}

func (c *client) Name() string { return c.s.provider }

// Complete sends req, retrying rate-limited, overloaded and unreachable
// attempts up to the configured number of retries.
func (c *client) Complete(ctx context.Context, req Request) (*Response, error) {
	cl, err := c.prepare(req)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		res, err := c.attempt(ctx, cl)
		if err == nil {
			return c.finish(ctx, req, res)
		}
		var ae *apiError
		isAPI := errors.As(err, &ae)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, apperr.Wrap(apperr.LLMError, ctxErr, "%s request cancelled", c.s.provider)
		}
		var te timeoutError
		if errors.As(err, &te) {
			return nil, apperr.Wrap(apperr.LLMError, context.DeadlineExceeded,
				"%s request timed out after %s (llm.timeout_seconds)", c.s.provider, c.s.timeout)
		}
		retryable := !isAPI || ae.retryable()
		if !retryable || attempt >= c.s.maxRetries {
			return nil, c.failure(err, attempt+1)
		}
		wait := backoff(attempt)
		if isAPI && ae.RetryAfter > 0 {
			if ae.RetryAfter > MaxRetryWait {
				// Waiting longer than the cap would tie the caller up for
				// minutes; report the wait instead so it can decide.
				return nil, c.failure(err, attempt+1)
			}
			wait = ae.RetryAfter
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, apperr.Wrap(apperr.LLMError, serr, "%s request cancelled while waiting to retry", c.s.provider)
		}
	}
}

type timeoutError struct{ d time.Duration }

func (e timeoutError) Error() string { return fmt.Sprintf("timed out after %s", e.d) }

func (c *client) attempt(ctx context.Context, cl call) (result, error) {
	actx, cancel := context.WithTimeout(ctx, c.s.timeout)
	defer cancel()
	res, err := c.do(actx, cl)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return result{}, timeoutError{c.s.timeout}
	}
	return res, err
}

// failure turns the last attempt's error into the caller-facing llm_error.
func (c *client) failure(err error, attempts int) *apperr.Error {
	suffix := ""
	if attempts > 1 {
		suffix = fmt.Sprintf(" (after %d attempts)", attempts)
	}
	var ae *apiError
	if errors.As(err, &ae) {
		// The message carries everything; the cause is not attached so the
		// text is not repeated by Error().
		e := apperr.New(apperr.LLMError, "%s%s", ae.Error(), suffix).With("status", ae.Status)
		if ae.Type != "" {
			e = e.With("provider_error_type", ae.Type)
		}
		if ae.RetryAfter > 0 {
			e = e.With("retry_after_ms", ae.RetryAfter.Milliseconds())
		}
		return e
	}
	// Transport errors are reported without their URL and without the
	// original error value, whose text could carry request details.
	return apperr.New(apperr.LLMError, "could not reach %s: %s%s",
		c.s.provider, sanitize(transportMessage(err), c.s.apiKey), suffix)
}

func transportMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

func (c *client) prepare(req Request) (call, error) {
	if len(req.Messages) == 0 {
		return call{}, apperr.New(apperr.InvalidInput, "messages must contain at least one message")
	}
	for i, m := range req.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return call{}, apperr.New(apperr.InvalidInput,
				"messages[%d].role must be %q or %q (the system prompt goes in system), got %q",
				i, RoleUser, RoleAssistant, m.Role)
		}
		if strings.TrimSpace(m.Content) == "" {
			return call{}, apperr.New(apperr.InvalidInput, "messages[%d].content must not be empty", i)
		}
	}
	if req.Messages[0].Role != RoleUser {
		return call{}, apperr.New(apperr.InvalidInput, "messages[0].role must be %q", RoleUser)
	}
	if req.MaxTokens < 0 {
		return call{}, apperr.New(apperr.InvalidInput, "max_tokens must not be negative, got %d", req.MaxTokens)
	}
	maxTok := c.s.maxTokens
	if req.MaxTokens > 0 && req.MaxTokens < maxTok {
		maxTok = req.MaxTokens
	}
	temp := c.s.temperature
	if req.Temperature != nil {
		temp = *req.Temperature
	}
	limit := 2.0
	if c.s.provider == ProviderAnthropic {
		limit = 1.0
	}
	if temp < 0 || temp > limit {
		return call{}, apperr.New(apperr.InvalidInput, "temperature must be between 0 and %g for %s, got %g",
			limit, c.s.provider, temp)
	}
	return call{system: req.System, messages: req.Messages, maxTokens: maxTok, temperature: &temp}, nil
}

func (c *client) finish(ctx context.Context, req Request, res result) (*Response, error) {
	if strings.TrimSpace(res.text) == "" {
		return nil, apperr.New(apperr.LLMError, "%s returned an empty completion", c.s.provider)
	}
	model := res.model
	if model == "" {
		model = c.s.model
	}
	cost, known := EstimateCost(model, res.input, res.output)
	out := &Response{
		Text: res.text, Model: model,
		InputTokens: res.input, OutputTokens: res.output,
		CostUSD: cost, CostKnown: known,
	}
	if c.rec != nil {
		op := req.Operation
		if op == "" {
			op = "complete"
		}
		u := Usage{
			At: c.now(), Provider: c.s.provider, Model: model, Operation: op,
			InputTokens: res.input, OutputTokens: res.output, CostUSD: cost, CostKnown: known,
		}
		if err := c.rec.RecordLLMUsage(ctx, u); err != nil {
			c.log.WarnContext(ctx, "recording LLM usage failed", "operation", op, "model", model, "err", err)
		}
	}
	return out, nil
}

// backoff is the wait before retry n+1 when the provider named none: 1s,
// 2s, 4s... capped at 8s, plus up to 20% jitter so parallel callers spread
// out.
func backoff(n int) time.Duration {
	d := time.Second << min(n, 3)
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

// parseRetryAfter reads retry-after-ms (OpenAI) or retry-after (seconds or
// an HTTP date). ok is false when neither is present and valid.
func parseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs > 1e9 || secs != secs {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}
