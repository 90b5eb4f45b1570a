package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// anthropicVersion is the Messages API version every request names.
const anthropicVersion = "2023-06-01"

// Anthropic's Messages wire format, as far as tuitbot uses it: one
// non-streaming message of text blocks.
type anthropicBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

type anthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int                `json:"max_tokens"`
	System      []anthropicBlock   `json:"system,omitempty"`
	Temperature *float64           `json:"temperature,omitempty"`
	Messages    []anthropicMessage `json:"messages"`
}

type anthropicResponse struct {
	Model   string           `json:"model"`
	Content []anthropicBlock `json:"content"`
	Usage   struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// newAnthropicBackend talks to POST {base}/v1/messages with the x-api-key
// and anthropic-version headers. Only the configuration decides where
// requests go and which key they carry; no ANTHROPIC_* variable is read.
func newAnthropicBackend(s settings, hc *http.Client, now func() time.Time) backend {
	x := exchange{provider: ProviderAnthropic, url: s.baseURL + "/v1/messages", header: http.Header{},
		key: s.apiKey, now: now, errorBody: anthropicErrorBody}
	x.header.Set("Anthropic-Version", anthropicVersion)
	if s.apiKey != "" {
		x.header.Set("X-Api-Key", s.apiKey)
	}

	return func(ctx context.Context, c call) (result, error) {
		p := anthropicRequest{Model: s.model, MaxTokens: c.maxTokens, Temperature: c.temperature,
			Messages: make([]anthropicMessage, 0, len(c.messages))}
		if c.system != "" {
			p.System = []anthropicBlock{{Type: "text", Text: c.system}}
		}
		for _, m := range c.messages {
			role := "user"
			if m.Role == RoleAssistant {
				role = "assistant"
			}
			p.Messages = append(p.Messages, anthropicMessage{Role: role, Content: []anthropicBlock{{Type: "text", Text: m.Content}}})
		}
		var msg anthropicResponse
		if err := x.post(ctx, hc, p, &msg); err != nil {
			return result{}, err
		}
		var text strings.Builder
		for _, b := range msg.Content {
			if b.Type == "text" {
				text.WriteString(b.Text)
			}
		}
		return result{
			text:   text.String(),
			model:  msg.Model,
			input:  msg.Usage.InputTokens,
			output: msg.Usage.OutputTokens,
		}, nil
	}
}

// anthropicErrorBody reads {"type": "error", "error": {"type", "message"}}.
func anthropicErrorBody(raw []byte) (typ, msg string, ok bool) {
	var env struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Error == nil {
		return "", "", false
	}
	return env.Error.Type, env.Error.Message, true
}
