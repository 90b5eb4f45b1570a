package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// newAnthropicBackend talks to POST {base}/v1/messages with the x-api-key
// and anthropic-version headers the SDK sets. Environment defaults
// (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, profiles) are switched off so that
// only the configuration decides where requests go and which key they carry.
func newAnthropicBackend(s settings, hc *http.Client, now func() time.Time) backend {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithoutOpenTelemetry(),
		option.WithBaseURL(s.baseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if s.apiKey != "" {
		opts = append(opts, option.WithAPIKey(s.apiKey))
	}
	cl := anthropic.NewClient(opts...)

	return func(ctx context.Context, c call) (result, error) {
		p := anthropic.MessageNewParams{
			Model:     anthropic.Model(s.model),
			MaxTokens: int64(c.maxTokens),
			Messages:  make([]anthropic.MessageParam, 0, len(c.messages)),
		}
		if c.system != "" {
			p.System = []anthropic.TextBlockParam{{Text: c.system}}
		}
		if c.temperature != nil {
			p.Temperature = anthropic.Float(*c.temperature)
		}
		for _, m := range c.messages {
			block := anthropic.NewTextBlock(m.Content)
			if m.Role == RoleAssistant {
				p.Messages = append(p.Messages, anthropic.NewAssistantMessage(block))
			} else {
				p.Messages = append(p.Messages, anthropic.NewUserMessage(block))
			}
		}
		var httpResp *http.Response
		msg, err := cl.Messages.New(ctx, p, option.WithResponseInto(&httpResp))
		if err != nil {
			return result{}, anthropicError(err, httpResp, s.apiKey, now())
		}
		var text strings.Builder
		for _, b := range msg.Content {
			if b.Type == "text" {
				text.WriteString(b.Text)
			}
		}
		return result{
			text:   text.String(),
			model:  string(msg.Model),
			input:  int(msg.Usage.InputTokens),
			output: int(msg.Usage.OutputTokens),
		}, nil
	}
}

// anthropicError reduces an SDK failure to an *apiError. The SDK's own
// error text includes the request URL and the raw body, so only the parsed
// type and message are kept.
func anthropicError(err error, resp *http.Response, key string, now time.Time) error {
	var ae *anthropic.Error
	status := 0
	var hdr http.Header
	var body string
	switch {
	case errors.As(err, &ae):
		status = ae.StatusCode
		if ae.Response != nil {
			hdr = ae.Response.Header
		}
		body = ae.RawJSON()
	case resp != nil:
		return unreadableResponse(ProviderAnthropic, resp, err, key, now)
	default:
		return err
	}
	out := &apiError{Provider: ProviderAnthropic, Status: status}
	var env struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if body != "" && json.Unmarshal([]byte(body), &env) == nil {
		out.Type = sanitize(env.Error.Type, key)
		out.Message = sanitize(env.Error.Message, key)
	}
	if out.Message == "" {
		out.Message = http.StatusText(status)
	}
	if hdr != nil {
		out.RetryAfter, _ = parseRetryAfter(hdr, now)
	}
	return out
}
