package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// TestDocumentedErrorShapes: each provider's documented error bodies, and
// the variants OpenAI-compatible servers send, become the provider's type
// and message; overloaded and server errors are retried under the one
// retry policy, client errors are not.
func TestDocumentedErrorShapes(t *testing.T) {
	tests := []struct {
		name, provider string
		status         int
		body           string
		wantType       string
		wantMsg        string
		retried        bool
	}{
		{"openai code string", "openai", 400,
			`{"error":{"message":"Invalid model","type":"invalid_request_error","param":"model","code":"model_not_found"}}`,
			"model_not_found", "Invalid model", false},
		{"openai code null", "openai", 401,
			`{"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null,"code":null}}`,
			"invalid_request_error", "Incorrect API key", false},
		{"openai code number", "openai", 500,
			`{"error":{"message":"The server had an error","type":"server_error","code":500}}`,
			"server_error", "The server had an error", true},
		{"compatible server, bare string", "openai", 404,
			`{"error":"model 'llama9' not found"}`,
			"", "model 'llama9' not found", false},
		{"anthropic overloaded", "anthropic", 529,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
			"overloaded_error", "Overloaded", true},
		{"anthropic invalid request", "anthropic", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`,
			"invalid_request_error", "max_tokens: must be positive", false},
		{"anthropic error without the envelope", "anthropic", 502,
			`{"message":"bad gateway"}`,
			"", "Bad Gateway", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, reply{status: tt.status, body: tt.body})
			cfg := Config{Provider: tt.provider, Model: "m", BaseURL: f.srv.URL, APIKey: testKey, MaxRetries: 1}
			p := mustNew(t, cfg, nil, WithSleeper((&sleeps{}).sleep))
			_, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")})
			ae := wantCode(t, err, apperr.LLMError)
			if ae.Extra["status"] != tt.status {
				t.Errorf("status = %v, want %d", ae.Extra["status"], tt.status)
			}
			if got, _ := ae.Extra["provider_error_type"].(string); got != tt.wantType {
				t.Errorf("provider_error_type = %q, want %q", got, tt.wantType)
			}
			if !strings.Contains(ae.Message, tt.wantMsg) {
				t.Errorf("message %q lacks %q", ae.Message, tt.wantMsg)
			}
			want := 1
			if tt.retried {
				want = 2
			}
			if n := len(f.requests()); n != want {
				t.Errorf("%d requests, want %d", n, want)
			}
		})
	}
}

// TestNoStreamingRequested: tuitbot reads one whole answer; a request must
// never ask for a stream, which the decoding does not read.
func TestNoStreamingRequested(t *testing.T) {
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			f := newFakeServer(t, reply{status: 200, body: pc.ok})
			p := mustNew(t, pc.cfg(f.srv.URL), nil)
			if _, err := p.Complete(context.Background(), Request{Messages: userMsg("hi")}); err != nil {
				t.Fatal(err)
			}
			if v, ok := f.requests()[0].Body["stream"]; ok && v != false {
				t.Errorf("stream = %v in the request", v)
			}
		})
	}
}
