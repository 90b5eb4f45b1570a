package toolstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/llm/llmtest"
)

// fakeAPIKey is long and key-shaped on purpose: the provider echoes it in
// its error bodies, and no envelope may ever carry it.
const fakeAPIKey = "sk-toolstest-0123456789abcdef"

// fakeLLM is a local server speaking OpenAI's chat-completions wire format.
// Replies are scripted by what the prompt asks for, and vary call by call
// so that similarity checks between replies do not trip.
type fakeLLM struct {
	URL string

	mu       sync.Mutex
	calls    int
	failNext int // answer this many calls with a 500
	prompts  []string
	replies  int
}

// replyTexts are distinct enough from each other (word overlap well under
// the 0.8 Jaccard threshold) to pass the similarity check in any order.
var replyTexts = []string{
	"Context propagation saved us during an outage last spring; cancellations finally reached every goroutine.",
	"Curious how you handle approval latency when agents queue dozens of drafts before lunch?",
	"We measured this too: small interfaces made mocking trivial and our test suite ran twice as fast.",
	"Audit trails turned a scary incident review into a calm fifteen minute conversation for our team.",
	"Rate windows bit us once; exponential backoff plus jitter fixed the thundering herd overnight.",
	"Idempotency keys on every write meant retries stopped doubling customer invoices entirely.",
	"Which evaluation dataset did you pick? Synthetic prompts missed most real edge cases for us.",
	"Static binaries plus SQLite keep our deploys boring, which is exactly what operations wants.",
}

func newFakeLLM(t *testing.T) *fakeLLM {
	t.Helper()
	f := &fakeLLM{}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// FailNext makes the next n calls answer 500.
func (f *fakeLLM) FailNext(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = n
}

// Calls is the number of chat-completion requests served.
func (f *fakeLLM) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	var prompt strings.Builder
	for _, m := range req.Messages {
		fmt.Fprintf(&prompt, "%s: %v\n", m.Role, m.Content)
	}
	f.mu.Lock()
	f.calls++
	f.prompts = append(f.prompts, prompt.String())
	fail := f.failNext > 0
	if fail {
		f.failNext--
	}
	f.mu.Unlock()
	if fail {
		w.Header().Set("Content-Type", "application/json")
		// Tell the client to retry at once, so failure tests stay fast.
		w.Header().Set("Retry-After-Ms", "1")
		w.WriteHeader(http.StatusInternalServerError)
		// Proxies and misconfigured servers do echo credentials back.
		fmt.Fprintf(w, `{"error":{"message":"upstream exploded while using key %s (Authorization: %s)","type":"server_error","code":null}}`,
			fakeAPIKey, r.Header.Get("Authorization"))
		return
	}
	content := f.answer(prompt.String())
	llmtest.Write(w, llmtest.Completion{ID: f.Calls(), Model: req.Model, Content: content, PromptTokens: 120, CompletionTokens: 40})
}

func (f *fakeLLM) answer(prompt string) string {
	p := strings.ToLower(prompt)
	switch {
	case strings.Contains(p, "write the reply"):
		f.mu.Lock()
		defer f.mu.Unlock()
		s := replyTexts[f.replies%len(replyTexts)]
		f.replies++
		return s
	case strings.Contains(p, "suggest exactly"):
		return "Agent approval queues\nGo context propagation\nAudit trails for automation\nRate limit budgeting\nDry-run modes"
	case strings.Contains(p, "thread"):
		return "1/ Agents need guardrails before they touch production accounts.\n\n2/ Route every write through one gateway with policy and audit.\n\n" +
			"3/ Let a human approve anything risky, then replay exactly what was approved.\n\n4/ Deduplicate retries so a timeout never becomes a double post.\n\n" +
			"5/ Keep an audit row for every attempt, including the ones that failed.\n\n6/ Measure, then loosen the rules where the data says it is safe."
	case strings.Contains(p, "reply with ok"):
		return "OK"
	default:
		f.mu.Lock()
		n := f.calls
		f.mu.Unlock()
		return fmt.Sprintf("Agents that act on your behalf need a dry run, an approval queue and an audit log; we shipped all three in version %d.", n)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
