package xspec

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestLoadRealSpec(t *testing.T) {
	start := time.Now()
	s := FromEnv(t)
	t.Logf("loaded in %v", time.Since(start))
	if !s.HasOperation("GET", "/2/tweets/{id}") || s.HasOperation("GET", "/2/nope") {
		t.Fatal("HasOperation")
	}
	r, _ := http.NewRequest("GET", "http://127.0.0.1:1/2/tweets/123?tweet.fields=author_id", nil)
	if err := s.ValidateRequest(r, nil); err != nil {
		t.Fatal(err)
	}
	r, _ = http.NewRequest("GET", "http://127.0.0.1:1/2/tweets/abc", nil)
	if err := s.ValidateRequest(r, nil); err == nil {
		t.Fatal("non-numeric id accepted")
	}
	r, _ = http.NewRequest("POST", "http://127.0.0.1:1/2/tweets", strings.NewReader(`{"text":"hi"}`))
	r.Header.Set("Content-Type", "application/json")
	if err := s.ValidateRequest(r, []byte(`{"text":"hi"}`)); err != nil {
		t.Fatal(err)
	}
}
