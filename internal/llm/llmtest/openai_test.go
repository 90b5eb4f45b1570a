package llmtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/llm"
)

// TestWriteIsReadByTheOpenAIProvider: what Write sends is an answer the
// product's own OpenAI client accepts, with the content, model and usage
// given.
func TestWriteIsReadByTheOpenAIProvider(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Write(w, Completion{ID: 7, Model: "gpt-4o-mini", Content: "Ship small.", PromptTokens: 12, CompletionTokens: 3})
	}))
	defer srv.Close()
	p, err := llm.New(llm.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1", APIKey: "test-key"}, nil, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatalf("the provider refused the answer: %v", err)
	}
	if resp.Text != "Ship small." || resp.Model != "gpt-4o-mini" || resp.InputTokens != 12 || resp.OutputTokens != 3 {
		t.Fatalf("the provider read %+v", resp)
	}
}
