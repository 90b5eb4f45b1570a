package xapi_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xspec"
)

// TestClientTrafficMatchesXSpec drives the client's whole surface through
// the emulator with X's OpenAPI validator in the transport: every request
// the client sends and every answer it gets must conform to X's spec.
func TestClientTrafficMatchesXSpec(t *testing.T) {
	spec := xspec.FromEnv(t)
	var mu sync.Mutex
	var violations []error
	report := func(err error) {
		mu.Lock()
		violations = append(violations, err)
		mu.Unlock()
	}
	rt := spec.RoundTripper(http.DefaultTransport.(*http.Transport).Clone(), report)
	s := newSim(t, rt)
	exerciseSurface(t, s)

	// Error answers are validated too.
	ctx := context.Background()
	if _, _, err := s.c.GetTweet(ctx, "1"); apperr.CodeOf(err) != apperr.XNotFound {
		t.Fatalf("missing post: %v", err)
	}
	if _, _, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "spec twice"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.c.PostTweet(ctx, xapi.PostParams{Text: "spec twice"}); apperr.CodeOf(err) != apperr.XDuplicateContent {
		t.Fatalf("duplicate: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, v := range violations {
		t.Errorf("spec violation: %v", v)
	}
}
