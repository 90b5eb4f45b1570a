package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// newOpenAIBackend talks to POST {base}/chat/completions. The service is
// built without openai.NewClient so that no OPENAI_* environment variable
// can redirect requests or swap the key behind the configuration's back.
func newOpenAIBackend(s settings, hc *http.Client, now func() time.Time) backend {
	opts := []option.RequestOption{
		option.WithBaseURL(s.baseURL),
		option.WithHTTPClient(hc),
		// Retries are ours: they honour retry-after through an injectable
		// sleeper and are counted in the error message.
		option.WithMaxRetries(0),
	}
	if s.apiKey != "" {
		opts = append(opts, option.WithAPIKey(s.apiKey))
	}
	svc := openai.NewChatCompletionService(opts...)
	reasoning := isOpenAIReasoningModel(s.model)

	return func(ctx context.Context, c call) (result, error) {
		msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(c.messages)+1)
		if c.system != "" {
			msgs = append(msgs, openai.SystemMessage(c.system))
		}
		for _, m := range c.messages {
			if m.Role == RoleAssistant {
				msgs = append(msgs, openai.AssistantMessage(m.Content))
			} else {
				msgs = append(msgs, openai.UserMessage(m.Content))
			}
		}
		p := openai.ChatCompletionNewParams{Model: s.model, Messages: msgs}
		if reasoning {
			// OpenAI's reasoning models reject max_tokens and any
			// temperature but the default.
			p.MaxCompletionTokens = openai.Int(int64(c.maxTokens))
		} else {
			// max_tokens is what every OpenAI-compatible server understands.
			p.MaxTokens = openai.Int(int64(c.maxTokens))
			if c.temperature != nil {
				p.Temperature = openai.Float(*c.temperature)
			}
		}
		var httpResp *http.Response
		out, err := svc.New(ctx, p, option.WithResponseInto(&httpResp))
		if err != nil {
			return result{}, openAIError(err, httpResp, s.apiKey, now())
		}
		if len(out.Choices) == 0 {
			return result{model: out.Model}, nil
		}
		return result{
			text:   out.Choices[0].Message.Content,
			model:  out.Model,
			input:  int(out.Usage.PromptTokens),
			output: int(out.Usage.CompletionTokens),
		}, nil
	}
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

// openAIError reduces an SDK failure to an *apiError, or returns the
// transport error untouched. resp is the last HTTP response when there was
// one: it gives the status even when the body was not OpenAI's JSON.
func openAIError(err error, resp *http.Response, key string, now time.Time) error {
	var oe *openai.Error
	switch {
	case errors.As(err, &oe):
		ae := &apiError{Provider: ProviderOpenAI, Status: oe.StatusCode, Message: sanitize(oe.Message, key)}
		ae.Type = sanitize(firstNonEmpty(oe.Code, oe.Type), key)
		if oe.Response != nil {
			ae.RetryAfter, _ = parseRetryAfter(oe.Response.Header, now)
		}
		if ae.Message == "" {
			ae.Message = http.StatusText(ae.Status)
		}
		return ae
	case resp != nil:
		return unreadableResponse(ProviderOpenAI, resp, err, key, now)
	}
	return err
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
