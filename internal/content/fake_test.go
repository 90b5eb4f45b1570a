package content

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/llm"
)

// step is one scripted provider answer.
type step struct {
	text string
	err  error
}

// scripted is a fake llm.Provider that answers from a script and records
// every request. Running past the script fails the test.
type scripted struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	reqs  []llm.Request
}

func newScripted(t *testing.T, answers ...string) *scripted {
	t.Helper()
	s := &scripted{t: t}
	for _, a := range answers {
		s.steps = append(s.steps, step{text: a})
	}
	return s
}

func (s *scripted) then(st step) *scripted {
	s.steps = append(s.steps, st)
	return s
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Complete(_ context.Context, req llm.Request) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := len(s.reqs)
	s.reqs = append(s.reqs, req)
	if i >= len(s.steps) {
		s.t.Errorf("unexpected LLM call %d: %+v", i+1, req.Messages)
		return nil, errors.New("script exhausted")
	}
	st := s.steps[i]
	if st.err != nil {
		return nil, st.err
	}
	return &llm.Response{Text: st.text, Model: "fake"}, nil
}

func (s *scripted) calls() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.reqs...)
}

// lastUser returns the content of the last user message of request i.
func (s *scripted) lastUser(i int) string {
	s.t.Helper()
	c := s.calls()
	if i >= len(c) {
		s.t.Fatalf("no request %d (have %d)", i, len(c))
	}
	m := c[i].Messages
	return m[len(m)-1].Content
}

func testProfile() Profile {
	return Profile{
		ProductName:        "Acme Deploy",
		ProductDescription: "one-command deploys for small teams",
		ProductURL:         "https://acme.example/deploy",
		TargetAudience:     "indie developers",
		BrandVoice:         "plain-spoken and practical",
		PersonaOpinions:    []string{"small releases beat big ones"},
		PersonaExperiences: []string{"ran on-call for five years"},
		ContentPillars:     []string{"deployment", "observability"},
		ProductKeywords:    []string{"continuous delivery"},
		IndustryTopics:     []string{"DevOps", "platform engineering"},
		BannedPhrases:      []string{"check out", "game-changer", "don't miss"},
	}
}

func wantCode(t *testing.T, err error, code apperr.Code) *apperr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s error, got nil", code)
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want *apperr.Error %s, got %T: %v", code, err, err)
	}
	if ae.Code != code {
		t.Fatalf("want code %s, got %s: %v", code, ae.Code, err)
	}
	return ae
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

func mustNotContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Errorf("%s contains %q:\n%s", what, sub, s)
		}
	}
}

// sentences builds text of n sentences of the form "Sentence k is here."
func sentences(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = "Sentence number " + strings.Repeat("x", 10) + " is here."
	}
	return strings.Join(parts, " ")
}
