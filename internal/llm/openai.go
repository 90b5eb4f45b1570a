package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// OpenAI's chat-completions wire format, as far as tuitbot uses it: one
// non-streaming completion of text messages.
type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIRequest struct {
	Model    string          `json:"model"`
	Messages []openAIMessage `json:"messages"`
	// max_tokens is what every OpenAI-compatible server understands;
	// OpenAI's reasoning models want max_completion_tokens instead.
	MaxTokens           *int     `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int     `json:"max_completion_tokens,omitempty"`
	Temperature         *float64 `json:"temperature,omitempty"`
}

type openAIResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// newOpenAIBackend talks to POST {base}/chat/completions with a bearer key
// when one is configured. Only the configuration decides where requests go
// and which key they carry; no OPENAI_* variable is read.
func newOpenAIBackend(s settings, hc *http.Client, now func() time.Time) backend {
	x := exchange{provider: ProviderOpenAI, url: s.baseURL + "/chat/completions", header: http.Header{},
		key: s.apiKey, now: now, errorBody: openAIErrorBody}
	if s.apiKey != "" {
		x.header.Set("Authorization", "Bearer "+s.apiKey)
	}
	reasoning := isOpenAIReasoningModel(s.model)

	return func(ctx context.Context, c call) (result, error) {
		p := openAIRequest{Model: s.model, Messages: make([]openAIMessage, 0, len(c.messages)+1)}
		if c.system != "" {
			p.Messages = append(p.Messages, openAIMessage{Role: "system", Content: c.system})
		}
		for _, m := range c.messages {
			role := "user"
			if m.Role == RoleAssistant {
				role = "assistant"
			}
			p.Messages = append(p.Messages, openAIMessage{Role: role, Content: m.Content})
		}
		maxTokens := c.maxTokens
		if reasoning {
			// OpenAI's reasoning models reject max_tokens and any
			// temperature but the default.
			p.MaxCompletionTokens = &maxTokens
		} else {
			p.MaxTokens = &maxTokens
			p.Temperature = c.temperature
		}
		var out openAIResponse
		if err := x.post(ctx, hc, p, &out); err != nil {
			return result{}, err
		}
		if len(out.Choices) == 0 {
			return result{model: out.Model}, nil
		}
		return result{
			text:   out.Choices[0].Message.Content,
			model:  out.Model,
			input:  out.Usage.PromptTokens,
			output: out.Usage.CompletionTokens,
		}, nil
	}
}

// openAIErrorBody reads {"error": {"message", "type", "code"}}; servers
// that only speak the format (Ollama, proxies) may send "error" as a bare
// string.
func openAIErrorBody(raw []byte) (typ, msg string, ok bool) {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil || len(env.Error) == 0 {
		return "", "", false
	}
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(env.Error, &e) != nil {
		if json.Unmarshal(env.Error, &msg) != nil {
			return "", "", false
		}
		return "", msg, true
	}
	var code string
	_ = json.Unmarshal(e.Code, &code) // a number or null names no type
	return firstNonEmpty(code, e.Type), e.Message, true
}

func isOpenAIReasoningModel(model string) bool {
	m := normalizeModel(model)
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if m == p || strings.HasPrefix(m, p+"-") {
			return true
		}
	}
	return false
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
