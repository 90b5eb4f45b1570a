package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func TestNewConfigErrors(t *testing.T) {
	t.Setenv("TUITBOT_TEST_EMPTY_KEY", "")
	tests := []struct {
		name     string
		cfg      Config
		code     apperr.Code
		mentions []string
	}{
		{"no provider", Config{Model: "m", APIKey: "k"}, apperr.LLMNotConfigured, []string{"llm.provider"}},
		{"unknown provider", Config{Provider: "ollama", Model: "m"}, apperr.ConfigError, []string{"llm.provider", `"ollama"`}},
		{"no model", Config{Provider: "openai", APIKey: "k"}, apperr.LLMNotConfigured, []string{"llm.model"}},
		{"no key for remote openai", Config{Provider: "openai", Model: "gpt-4o-mini"}, apperr.LLMNotConfigured, []string{"llm.api_key"}},
		{"no key for remote anthropic", Config{Provider: "anthropic", Model: "claude-sonnet-4-5"}, apperr.LLMNotConfigured, []string{"llm.api_key"}},
		{"key env empty", Config{Provider: "openai", Model: "m", APIKeyEnv: "TUITBOT_TEST_EMPTY_KEY"}, apperr.LLMNotConfigured, []string{"TUITBOT_TEST_EMPTY_KEY", "llm.api_key_env"}},
		{"remote base url without key", Config{Provider: "openai", Model: "m", BaseURL: "https://api.groq.com/openai/v1"}, apperr.LLMNotConfigured, []string{"llm.api_key"}},
		{"bad base url scheme", Config{Provider: "openai", Model: "m", APIKey: "k", BaseURL: "ftp://x"}, apperr.ConfigError, []string{"llm.base_url"}},
		{"base url no host", Config{Provider: "openai", Model: "m", APIKey: "k", BaseURL: "http://"}, apperr.ConfigError, []string{"llm.base_url"}},
		{"base url with credentials", Config{Provider: "openai", Model: "m", APIKey: "k", BaseURL: "http://u:p@127.0.0.1/v1"}, apperr.ConfigError, []string{"llm.base_url"}},
		{"base url with query", Config{Provider: "openai", Model: "m", APIKey: "k", BaseURL: "http://127.0.0.1/v1?key=x"}, apperr.ConfigError, []string{"llm.base_url"}},
		{"negative timeout", Config{Provider: "openai", Model: "m", APIKey: "k", Timeout: -time.Second}, apperr.ConfigError, []string{"llm.timeout_seconds"}},
		{"negative max tokens", Config{Provider: "openai", Model: "m", APIKey: "k", MaxTokens: -1}, apperr.ConfigError, []string{"llm.max_tokens"}},
		{"temperature too high", Config{Provider: "openai", Model: "m", APIKey: "k", Temperature: 2.5}, apperr.ConfigError, []string{"llm.temperature"}},
		{"multi-line key", Config{Provider: "openai", Model: "m", APIKey: "k\nX-Evil: 1"}, apperr.ConfigError, []string{"llm.api_key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg, nil, fixedClock)
			if p != nil {
				t.Fatalf("want no provider, got %T", p)
			}
			ae := wantCode(t, err, tt.code)
			for _, m := range tt.mentions {
				if !strings.Contains(ae.Message, m) {
					t.Errorf("message %q does not mention %q", ae.Message, m)
				}
			}
		})
	}
}

func TestNewAcceptsLocalServerWithoutKey(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:11434/v1", "http://localhost:1234/v1", "http://[::1]:8000/v1"} {
		p, err := New(Config{Provider: "openai", Model: "llama3.1", BaseURL: base}, nil, fixedClock)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if p.Name() != ProviderOpenAI {
			t.Errorf("Name() = %q", p.Name())
		}
	}
}

func TestOpenAIWireFormat(t *testing.T) {
	f := newFakeServer(t, reply{status: 200, body: openAIOK})
	rec := &recorder{}
	p := mustNew(t, Config{
		Provider: "openai", Model: "gpt-4o-mini", BaseURL: f.srv.URL + "/v1", APIKey: testKey,
		MaxTokens: 400, Temperature: 0.3,
	}, rec)
	resp, err := p.Complete(context.Background(), Request{
		System: "You are terse.",
		Messages: []Message{
			{Role: RoleUser, Content: "Write a tip."},
			{Role: RoleAssistant, Content: "Too long draft"},
			{Role: RoleUser, Content: "Shorter."},
		},
		MaxTokens:   150,
		Temperature: ptr(0.8),
		Operation:   "generate_tweet",
	})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("want 1 request, got %d", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("got %s %s, want POST /v1/chat/completions", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if r.Body["model"] != "gpt-4o-mini" {
		t.Errorf("model = %v", r.Body["model"])
	}
	if r.Body["max_tokens"] != float64(150) {
		t.Errorf("max_tokens = %v, want 150", r.Body["max_tokens"])
	}
	if r.Body["temperature"] != 0.8 {
		t.Errorf("temperature = %v, want 0.8", r.Body["temperature"])
	}
	wantMsgs := [][2]string{{"system", "You are terse."}, {"user", "Write a tip."}, {"assistant", "Too long draft"}, {"user", "Shorter."}}
	msgs, _ := r.Body["messages"].([]any)
	if len(msgs) != len(wantMsgs) {
		t.Fatalf("messages = %v", r.Body["messages"])
	}
	for i, w := range wantMsgs {
		m, _ := msgs[i].(map[string]any)
		if m["role"] != w[0] || m["content"] != w[1] {
			t.Errorf("messages[%d] = %v, want role %s content %q", i, m, w[0], w[1])
		}
	}

	if resp.Text != "Ship small, ship often." || resp.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("response = %+v", resp)
	}
	if resp.InputTokens != 1000 || resp.OutputTokens != 500 {
		t.Errorf("tokens = %d/%d", resp.InputTokens, resp.OutputTokens)
	}
	wantCost := (1000*0.15 + 500*0.60) / 1e6
	if !resp.CostKnown || math.Abs(resp.CostUSD-wantCost) > 1e-12 {
		t.Errorf("cost = %v known=%v, want %v", resp.CostUSD, resp.CostKnown, wantCost)
	}
	us := rec.usages()
	if len(us) != 1 {
		t.Fatalf("want 1 usage record, got %d", len(us))
	}
	want := Usage{At: fixedNow, Provider: "openai", Model: "gpt-4o-mini-2024-07-18", Operation: "generate_tweet",
		InputTokens: 1000, OutputTokens: 500, CostUSD: resp.CostUSD, CostKnown: true}
	if us[0] != want {
		t.Errorf("usage = %+v\nwant    %+v", us[0], want)
	}
}

func TestOpenAIBaseURLPaths(t *testing.T) {
	tests := []struct {
		name, suffix, wantPath string
		key                    string
	}{
		{"ollama style /v1 without key", "/v1", "/v1/chat/completions", ""},
		{"trailing slash", "/openai/v1/", "/openai/v1/chat/completions", testKey},
		{"root", "", "/chat/completions", testKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, reply{status: 200, body: openAIOK})
			p := mustNew(t, Config{Provider: "openai", Model: "llama3.1", BaseURL: f.srv.URL + tt.suffix, APIKey: tt.key}, nil)
			if _, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")}); err != nil {
				t.Fatal(err)
			}
			r := f.requests()[0]
			if r.Path != tt.wantPath {
				t.Errorf("path = %q, want %q", r.Path, tt.wantPath)
			}
			auth := r.Header.Get("Authorization")
			if tt.key == "" && auth != "" {
				t.Errorf("no key configured but Authorization = %q", auth)
			}
			if tt.key != "" && auth != "Bearer "+tt.key {
				t.Errorf("Authorization = %q", auth)
			}
			if _, ok := r.Body["messages"].([]any)[0].(map[string]any)["role"]; !ok {
				t.Errorf("messages malformed: %v", r.Body["messages"])
			}
		})
	}
}

func TestOpenAIDefaultsFromConfig(t *testing.T) {
	f := newFakeServer(t, reply{status: 200, body: openAIOK})
	p := mustNew(t, Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: f.srv.URL + "/v1", APIKey: testKey,
		MaxTokens: 100, Temperature: 0.2}, nil)
	// A request asking for more than the configured cap is held to it.
	if _, err := p.Complete(context.Background(), Request{Messages: userMsg("hi"), MaxTokens: 5000}); err != nil {
		t.Fatal(err)
	}
	b := f.requests()[0].Body
	if b["max_tokens"] != float64(100) || b["temperature"] != 0.2 {
		t.Errorf("max_tokens=%v temperature=%v, want 100 and 0.2", b["max_tokens"], b["temperature"])
	}
	if _, ok := b["messages"].([]any)[0].(map[string]any); !ok || len(b["messages"].([]any)) != 1 {
		t.Errorf("without a system prompt only the user message is sent: %v", b["messages"])
	}
}

func TestOpenAIReasoningModelParameters(t *testing.T) {
	f := newFakeServer(t, reply{status: 200, body: openAIOK})
	p := mustNew(t, Config{Provider: "openai", Model: "o3-mini", BaseURL: f.srv.URL + "/v1", APIKey: testKey, MaxTokens: 300}, nil)
	if _, err := p.Complete(context.Background(), Request{Messages: userMsg("hi"), Temperature: ptr(0.7)}); err != nil {
		t.Fatal(err)
	}
	b := f.requests()[0].Body
	if b["max_completion_tokens"] != float64(300) {
		t.Errorf("max_completion_tokens = %v", b["max_completion_tokens"])
	}
	for _, k := range []string{"max_tokens", "temperature"} {
		if _, ok := b[k]; ok {
			t.Errorf("%s must not be sent to a reasoning model: %v", k, b)
		}
	}
}

func TestAnthropicWireFormat(t *testing.T) {
	for _, suffix := range []string{"", "/v1", "/v1/"} {
		t.Run("base"+suffix, func(t *testing.T) {
			f := newFakeServer(t, reply{status: 200, body: anthropicOK})
			rec := &recorder{}
			p := mustNew(t, Config{Provider: "anthropic", Model: "claude-sonnet-4-5", BaseURL: f.srv.URL + suffix,
				APIKey: testKey, Temperature: 0.5}, rec)
			resp, err := p.Complete(context.Background(), Request{
				System: "You are terse.",
				Messages: []Message{
					{Role: RoleUser, Content: "Write a tip."},
					{Role: RoleAssistant, Content: "draft"},
					{Role: RoleUser, Content: "Shorter."},
				},
				MaxTokens: 200,
				Operation: "generate_reply",
			})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			r := f.requests()[0]
			if r.Method != http.MethodPost || r.Path != "/v1/messages" {
				t.Errorf("got %s %s, want POST /v1/messages", r.Method, r.Path)
			}
			if got := r.Header.Get("X-Api-Key"); got != testKey {
				t.Errorf("x-api-key = %q", got)
			}
			if got := r.Header.Get("Anthropic-Version"); got == "" {
				t.Error("anthropic-version header missing")
			}
			if got := r.Header.Get("Authorization"); got != "" {
				t.Errorf("Authorization must not be sent, got %q", got)
			}
			if r.Body["model"] != "claude-sonnet-4-5" || r.Body["max_tokens"] != float64(200) || r.Body["temperature"] != 0.5 {
				t.Errorf("body = %v", r.Body)
			}
			sys, _ := r.Body["system"].([]any)
			if len(sys) != 1 || sys[0].(map[string]any)["text"] != "You are terse." || sys[0].(map[string]any)["type"] != "text" {
				t.Errorf("system = %v, want one text block", r.Body["system"])
			}
			msgs, _ := r.Body["messages"].([]any)
			wantRoles := []string{"user", "assistant", "user"}
			if len(msgs) != len(wantRoles) {
				t.Fatalf("messages = %v", r.Body["messages"])
			}
			for i, role := range wantRoles {
				m := msgs[i].(map[string]any)
				if m["role"] != role {
					t.Errorf("messages[%d].role = %v, want %s", i, m["role"], role)
				}
				blocks := m["content"].([]any)
				if blocks[0].(map[string]any)["type"] != "text" {
					t.Errorf("messages[%d] content = %v", i, blocks)
				}
			}
			if resp.Text != "Ship small, ship often." || resp.Model != "claude-sonnet-4-5-20250929" {
				t.Errorf("response = %+v", resp)
			}
			wantCost := (2000*3.0 + 100*15.0) / 1e6
			if !resp.CostKnown || math.Abs(resp.CostUSD-wantCost) > 1e-12 {
				t.Errorf("cost = %v, want %v", resp.CostUSD, wantCost)
			}
			us := rec.usages()
			if len(us) != 1 || us[0].Provider != "anthropic" || us[0].Operation != "generate_reply" ||
				us[0].InputTokens != 2000 || us[0].OutputTokens != 100 || !us[0].At.Equal(fixedNow) {
				t.Errorf("usage = %+v", us)
			}
		})
	}
}

func TestAnthropicOmitsEmptySystem(t *testing.T) {
	f := newFakeServer(t, reply{status: 200, body: anthropicOK})
	p := mustNew(t, Config{Provider: "anthropic", Model: "claude-haiku-4-5", BaseURL: f.srv.URL, APIKey: testKey}, nil)
	if _, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.requests()[0].Body["system"]; ok {
		t.Errorf("system sent although empty: %v", f.requests()[0].Body)
	}
}

// TestEnvironmentDoesNotOverrideConfig guards against the SDKs' habit of
// reading OPENAI_*/ANTHROPIC_* variables: requests must go where the
// configuration says, with the configured key.
func TestEnvironmentDoesNotOverrideConfig(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-env-should-not-be-used")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Injected: 1")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env-should-not-be-used")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")

	fo := newFakeServer(t, reply{status: 200, body: openAIOK})
	po := mustNew(t, Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: fo.srv.URL + "/v1", APIKey: testKey}, nil)
	if _, err := po.Complete(context.Background(), Request{Messages: userMsg("hi")}); err != nil {
		t.Fatal(err)
	}
	if h := fo.requests()[0].Header; h.Get("Authorization") != "Bearer "+testKey || h.Get("X-Injected") != "" {
		t.Errorf("openai headers = %v", h)
	}

	fa := newFakeServer(t, reply{status: 200, body: anthropicOK})
	pa := mustNew(t, Config{Provider: "anthropic", Model: "claude-sonnet-4-5", BaseURL: fa.srv.URL, APIKey: testKey}, nil)
	if _, err := pa.Complete(context.Background(), Request{Messages: userMsg("hi")}); err != nil {
		t.Fatal(err)
	}
	if h := fa.requests()[0].Header; h.Get("X-Api-Key") != testKey || h.Get("Authorization") != "" {
		t.Errorf("anthropic headers = %v", h)
	}
}

func TestAPIKeyFromEnvironmentVariable(t *testing.T) {
	t.Setenv("TUITBOT_TEST_LLM_KEY", testKey)
	f := newFakeServer(t, reply{status: 200, body: openAIOK})
	p := mustNew(t, Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: f.srv.URL, APIKeyEnv: "TUITBOT_TEST_LLM_KEY"}, nil)
	if _, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")}); err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
}

// provider describes one provider for tests that run against both.
type providerCase struct {
	name  string
	cfg   func(base string) Config
	ok    string
	error func(status int, typ, msg string) string
}

func providerCases() []providerCase {
	return []providerCase{
		{
			name: "openai",
			cfg: func(base string) Config {
				return Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: base + "/v1", APIKey: testKey}
			},
			ok: openAIOK,
			error: func(_ int, typ, msg string) string {
				return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%q}}`, msg, typ, typ)
			},
		},
		{
			name: "anthropic",
			cfg: func(base string) Config {
				return Config{Provider: "anthropic", Model: "claude-sonnet-4-5", BaseURL: base, APIKey: testKey}
			},
			ok: anthropicOK,
			error: func(_ int, typ, msg string) string {
				return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_1"}`, typ, msg)
			},
		},
	}
}

func TestProviderErrorsAreSanitised(t *testing.T) {
	long := strings.Repeat("é", 2000)
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			tests := []struct {
				name       string
				rep        reply
				wantIn     []string
				wantNotIn  []string
				wantStatus int
			}{
				{
					name: "echoed key",
					rep: reply{status: 401, body: pc.error(401, "authentication_error",
						"Incorrect API key provided: "+testKey+". Header was Authorization: Bearer "+testKey)},
					wantIn:     []string{"401", "Incorrect API key provided", "authentication_error", pc.name},
					wantNotIn:  []string{testKey, "SECRET0123456789", "/v1/", "127.0.0.1"},
					wantStatus: 401,
				},
				{
					name:       "other key shapes",
					rep:        reply{status: 403, body: pc.error(403, "permission_error", "key sk-ant-api03-abcdefghijklmnop is not allowed")},
					wantIn:     []string{"403", "is not allowed"},
					wantNotIn:  []string{"abcdefghijklmnop"},
					wantStatus: 403,
				},
				{
					name:       "long multibyte message",
					rep:        reply{status: 400, body: pc.error(400, "invalid_request_error", long)},
					wantIn:     []string{"400", "…"},
					wantStatus: 400,
				},
				{
					name:       "html body",
					rep:        reply{status: 400, header: map[string]string{"Content-Type": "text/html"}, body: "<html>proxy says " + testKey + "</html>"},
					wantIn:     []string{"400", "Bad Request"},
					wantNotIn:  []string{"<html>", testKey},
					wantStatus: 400,
				},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					f := newFakeServer(t, tt.rep)
					p := mustNew(t, pc.cfg(f.srv.URL), nil, WithSleeper((&sleeps{}).sleep))
					_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
					ae := wantCode(t, err, apperr.LLMError)
					full := err.Error() + " | " + fmt.Sprintf("%+v %#v", err, ae.Extra)
					for _, s := range tt.wantIn {
						if !strings.Contains(ae.Message, s) {
							t.Errorf("message %q lacks %q", ae.Message, s)
						}
					}
					for _, s := range tt.wantNotIn {
						if strings.Contains(full, s) {
							t.Errorf("error leaks %q: %s", s, full)
						}
					}
					if !utf8.ValidString(ae.Message) {
						t.Errorf("message is not valid UTF-8")
					}
					if n := utf8.RuneCountInString(ae.Message); n > maxMessageRunes+100 {
						t.Errorf("message has %d runes, want it truncated", n)
					}
					if ae.Extra["status"] != tt.wantStatus {
						t.Errorf("status extra = %v, want %d", ae.Extra["status"], tt.wantStatus)
					}
					if got := len(f.requests()); got != 1 {
						t.Errorf("a %d must not be retried; got %d requests", tt.wantStatus, got)
					}
				})
			}
		})
	}
}

func TestRateLimitRetryHonoursRetryAfter(t *testing.T) {
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			tests := []struct {
				name   string
				header map[string]string
				want   time.Duration
			}{
				{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
				{"milliseconds", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, 1500 * time.Millisecond},
				{"http date", map[string]string{"Retry-After": fixedNow.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					f := newFakeServer(t,
						reply{status: 429, header: tt.header, body: pc.error(429, "rate_limit_error", "slow down")},
						reply{status: 200, body: pc.ok})
					sl := &sleeps{}
					rec := &recorder{}
					p := mustNew(t, pc.cfg(f.srv.URL), rec, WithSleeper(sl.sleep))
					resp, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
					if err != nil {
						t.Fatalf("Complete: %v", err)
					}
					if resp.Text != "Ship small, ship often." {
						t.Errorf("text = %q", resp.Text)
					}
					if got := sl.all(); len(got) != 1 || got[0] != tt.want {
						t.Errorf("sleeps = %v, want [%v]", got, tt.want)
					}
					if n := len(f.requests()); n != 2 {
						t.Errorf("requests = %d, want 2", n)
					}
					if n := len(rec.usages()); n != 1 {
						t.Errorf("usage records = %d, want 1 (only the answered attempt)", n)
					}
				})
			}
		})
	}
}

func TestRateLimitRetriesExhausted(t *testing.T) {
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			f := newFakeServer(t, reply{status: 429, header: map[string]string{"Retry-After": "1"},
				body: pc.error(429, "rate_limit_error", "Rate limit reached")})
			sl := &sleeps{}
			p := mustNew(t, pc.cfg(f.srv.URL), nil, WithSleeper(sl.sleep))
			_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
			ae := wantCode(t, err, apperr.LLMError)
			if !ae.Retryable() {
				t.Error("llm_error must be retryable")
			}
			if n := len(f.requests()); n != 1+DefaultMaxRetries {
				t.Errorf("requests = %d, want %d", n, 1+DefaultMaxRetries)
			}
			if got := sl.all(); len(got) != DefaultMaxRetries {
				t.Errorf("sleeps = %v", got)
			}
			if !strings.Contains(ae.Message, "429") || !strings.Contains(ae.Message, "Rate limit reached") ||
				!strings.Contains(ae.Message, "after 3 attempts") {
				t.Errorf("message = %q", ae.Message)
			}
			if ae.Extra["retry_after_ms"] != int64(1000) {
				t.Errorf("retry_after_ms = %v", ae.Extra["retry_after_ms"])
			}
		})
	}
}

func TestRetryCountFromConfig(t *testing.T) {
	tests := []struct {
		retries  int
		requests int
	}{{-1, 1}, {1, 2}, {4, 5}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.retries), func(t *testing.T) {
			f := newFakeServer(t, reply{status: 503, body: `{"error":{"message":"overloaded","type":"server_error"}}`})
			sl := &sleeps{}
			cfg := providerCases()[0].cfg(f.srv.URL)
			cfg.MaxRetries = tt.retries
			p := mustNew(t, cfg, nil, WithSleeper(sl.sleep))
			_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
			wantCode(t, err, apperr.LLMError)
			if n := len(f.requests()); n != tt.requests {
				t.Errorf("requests = %d, want %d", n, tt.requests)
			}
			// Without retry-after the wait is 1s, 2s, 4s, 8s... plus at most 20%.
			for i, d := range sl.all() {
				base := time.Second << min(i, 3)
				if d < base || d > base+base/5 {
					t.Errorf("sleep %d = %v, want within [%v, %v]", i, d, base, base+base/5)
				}
			}
		})
	}
}

func TestRetryAfterBeyondCapIsNotWaited(t *testing.T) {
	f := newFakeServer(t, reply{status: 429, header: map[string]string{"Retry-After": "120"},
		body: `{"error":{"message":"quota","type":"requests","code":"rate_limit_exceeded"}}`})
	sl := &sleeps{}
	p := mustNew(t, providerCases()[0].cfg(f.srv.URL), nil, WithSleeper(sl.sleep))
	_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
	ae := wantCode(t, err, apperr.LLMError)
	if n := len(f.requests()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
	if len(sl.all()) != 0 {
		t.Errorf("slept %v", sl.all())
	}
	if ae.Extra["retry_after_ms"] != int64(120000) {
		t.Errorf("retry_after_ms = %v", ae.Extra["retry_after_ms"])
	}
}

func TestTimeout(t *testing.T) {
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			f := newFakeServer(t, reply{block: true})
			cfg := pc.cfg(f.srv.URL)
			cfg.Timeout = 50 * time.Millisecond
			sl := &sleeps{}
			p := mustNew(t, cfg, nil, WithSleeper(sl.sleep))
			start := time.Now()
			_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
			ae := wantCode(t, err, apperr.LLMError)
			if !strings.Contains(ae.Message, "timed out after 50ms") || !strings.Contains(ae.Message, "llm.timeout_seconds") {
				t.Errorf("message = %q", ae.Message)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("want errors.Is DeadlineExceeded: %v", err)
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("a timed-out call is not retried; requests = %d", n)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

func TestCallerCancellation(t *testing.T) {
	f := newFakeServer(t, reply{block: true})
	p := mustNew(t, providerCases()[0].cfg(f.srv.URL), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := p.Complete(ctx, Request{Messages: userMsg("hi")})
	ae := wantCode(t, err, apperr.LLMError)
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(ae.Message, "llm.timeout_seconds") {
		t.Errorf("caller's deadline must be reported as a cancellation: %v", err)
	}
}

func TestUnreachableServerIsRetriedAndSanitised(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	sl := &sleeps{}
	p := mustNew(t, Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: "http://" + addr + "/v1", APIKey: testKey}, nil,
		WithSleeper(sl.sleep))
	_, err = p.Complete(context.Background(), Request{Messages: userMsg("hi")})
	ae := wantCode(t, err, apperr.LLMError)
	if !strings.Contains(ae.Message, "could not reach openai") || strings.Contains(err.Error(), testKey) ||
		strings.Contains(ae.Message, "/chat/completions") {
		t.Errorf("message = %q", ae.Message)
	}
	if len(sl.all()) != DefaultMaxRetries {
		t.Errorf("sleeps = %v, want %d retries", sl.all(), DefaultMaxRetries)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	other := newFakeServer(t, reply{status: 200, body: openAIOK})
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	p := mustNew(t, Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: redirect.URL + "/v1", APIKey: testKey}, nil)
	_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
	if err == nil {
		t.Fatal("a redirect must not turn into a completion")
	}
	ae := wantCode(t, err, apperr.LLMError)
	if ae.Extra["status"] != http.StatusTemporaryRedirect || !strings.Contains(ae.Message, "redirect refused") {
		t.Errorf("error = %v", err)
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("redirect target received %d requests carrying the key", n)
	}
}

func TestUsageRecorderFailureDoesNotFailCompletion(t *testing.T) {
	f := newFakeServer(t, reply{status: 200, body: openAIOK})
	rec := &recorder{err: errors.New("disk full")}
	p := mustNew(t, providerCases()[0].cfg(f.srv.URL), rec)
	resp, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
	if err != nil || resp.Text == "" {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
	if us := rec.usages(); len(us) != 1 || us[0].Operation != "complete" {
		t.Errorf("usage = %+v, want one record with the default operation", us)
	}
}

func TestEmptyCompletionIsAnError(t *testing.T) {
	tests := []struct{ name, body string }{
		{"blank content", strings.Replace(openAIOK, "Ship small, ship often.", "  ", 1)},
		{"no choices", `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0,"total_tokens":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, reply{status: 200, body: tt.body})
			p := mustNew(t, providerCases()[0].cfg(f.srv.URL), nil)
			_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
			ae := wantCode(t, err, apperr.LLMError)
			if !strings.Contains(ae.Message, "empty completion") {
				t.Errorf("message = %q", ae.Message)
			}
		})
	}
}

func TestRequestValidation(t *testing.T) {
	f := newFakeServer(t, reply{status: 200, body: anthropicOK})
	p := mustNew(t, Config{Provider: "anthropic", Model: "claude-sonnet-4-5", BaseURL: f.srv.URL, APIKey: testKey}, nil)
	tests := []struct {
		name    string
		req     Request
		mention string
	}{
		{"no messages", Request{}, "messages"},
		{"system role in messages", Request{Messages: []Message{{Role: "system", Content: "x"}}}, "messages[0].role"},
		{"empty content", Request{Messages: []Message{{Role: RoleUser, Content: "a"}, {Role: RoleAssistant, Content: " "}}}, "messages[1].content"},
		{"assistant first", Request{Messages: []Message{{Role: RoleAssistant, Content: "x"}}}, "messages[0].role"},
		{"negative max tokens", Request{Messages: userMsg("x"), MaxTokens: -5}, "max_tokens"},
		{"temperature above anthropic range", Request{Messages: userMsg("x"), Temperature: ptr(1.5)}, "temperature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Complete(context.Background(), tt.req)
			ae := wantCode(t, err, apperr.InvalidInput)
			if !strings.Contains(ae.Message, tt.mention) {
				t.Errorf("message %q does not name %q", ae.Message, tt.mention)
			}
		})
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("invalid requests reached the server %d times", n)
	}
}

func TestConcurrentUse(t *testing.T) {
	f := newFakeServer(t, reply{status: 200, body: openAIOK})
	rec := &recorder{}
	p := mustNew(t, providerCases()[0].cfg(f.srv.URL), rec)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := len(rec.usages()); n != 8 {
		t.Errorf("usage records = %d", n)
	}
}

func TestUnreadableSuccessBodyIsNotRetried(t *testing.T) {
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			f := newFakeServer(t, reply{status: 200, header: map[string]string{"Content-Type": "application/json"}, body: `{"choices": [`})
			sl := &sleeps{}
			p := mustNew(t, pc.cfg(f.srv.URL), nil, WithSleeper(sl.sleep))
			_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
			ae := wantCode(t, err, apperr.LLMError)
			if !strings.Contains(ae.Message, "llm.base_url") || strings.Contains(err.Error(), testKey) {
				t.Errorf("message = %q", ae.Message)
			}
			if n := len(f.requests()); n != 1 || len(sl.all()) != 0 {
				t.Errorf("requests = %d sleeps = %v; an unreadable answer is not retried", n, sl.all())
			}
		})
	}
}

func TestCancelledWhileWaitingToRetry(t *testing.T) {
	f := newFakeServer(t, reply{status: 429, header: map[string]string{"Retry-After": "5"},
		body: `{"error":{"message":"slow down","type":"requests"}}`})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sleeper := func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}
	p := mustNew(t, providerCases()[0].cfg(f.srv.URL), nil, WithSleeper(sleeper))
	_, err := p.Complete(ctx, Request{Messages: userMsg("hi")})
	ae := wantCode(t, err, apperr.LLMError)
	if !errors.Is(err, context.Canceled) || !strings.Contains(ae.Message, "waiting to retry") {
		t.Errorf("error = %v", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}
