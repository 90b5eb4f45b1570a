package content

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// TestGenerateTweetThroughOpenAIAdapter runs the overflow-and-retry path
// against a server speaking OpenAI's chat completions wire format.
func TestGenerateTweetThroughOpenAIAdapter(t *testing.T) {
	long := sentences(12)
	answers := []string{long, "Small deploys, fast rollbacks, calm weekends."}
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("body: %v", err)
		}
		mu.Lock()
		i := len(bodies)
		bodies = append(bodies, body)
		mu.Unlock()
		if i >= len(answers) {
			t.Errorf("unexpected request %d", i+1)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		content, _ := json.Marshal(answers[i])
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","created":1700000000,"model":"gpt-4o-mini-2024-07-18",
"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}],
"usage":{"prompt_tokens":120,"completion_tokens":40,"total_tokens":160}}`, i, content)
	}))
	t.Cleanup(srv.Close)

	rec := &usageLog{}
	p, err := llm.New(llm.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1", APIKey: "sk-test-key-123456789"},
		rec, func() time.Time { return time.Unix(1_800_000_000, 0) })
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewGenerator(p, testProfile()).GenerateTweet(ctx, "deploys", "observation")
	if err != nil {
		t.Fatal(err)
	}
	if got != answers[1] {
		t.Errorf("got %q", got)
	}
	if len(bodies) != 2 {
		t.Fatalf("requests = %d, want 2", len(bodies))
	}
	msgs := bodies[1]["messages"].([]any)
	roles := make([]string, len(msgs))
	for i, m := range msgs {
		roles[i] = m.(map[string]any)["role"].(string)
	}
	if fmt.Sprint(roles) != "[system user assistant user]" {
		t.Errorf("retry roles = %v", roles)
	}
	if msgs[2].(map[string]any)["content"] != long {
		t.Error("the retry must show the model its overlong answer")
	}
	mustContain(t, "correction", msgs[3].(map[string]any)["content"].(string),
		fmt.Sprintf("It is %d characters", tweettext.WeightedLength(long)))
	if bodies[0]["temperature"] != 0.8 || bodies[0]["model"] != "gpt-4o-mini" {
		t.Errorf("first body = %v", bodies[0])
	}
	if us := rec.all(); len(us) != 2 || us[0].Operation != OpGenerateTweet || us[1].InputTokens != 120 {
		t.Errorf("usage = %+v", us)
	}
}

type usageLog struct {
	mu sync.Mutex
	u  []llm.Usage
}

func (l *usageLog) RecordLLMUsage(_ context.Context, u llm.Usage) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.u = append(l.u, u)
	return nil
}

func (l *usageLog) all() []llm.Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]llm.Usage(nil), l.u...)
}
