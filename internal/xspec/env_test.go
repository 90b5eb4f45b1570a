package xspec

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recorder stands in for a testing.TB so FromEnv's skip and fail paths can
// be observed without ending the real test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func run(tb *recorder) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		FromEnv(tb)
	}()
	<-done
}

func TestFromEnvSkipsWhenUnset(t *testing.T) {
	t.Setenv(EnvVar, "")
	r := &recorder{TB: t}
	run(r)
	if r.skipped != SkipMessage || r.failed != "" {
		t.Fatalf("skipped %q failed %q", r.skipped, r.failed)
	}
	if !strings.Contains(SkipMessage, "TUITBOT_CONFORMANCE_DIR") {
		t.Fatal("skip message does not say how to run")
	}
}

func TestFromEnvFailsWhenFileMissing(t *testing.T) {
	t.Setenv(EnvVar, t.TempDir())
	r := &recorder{TB: t}
	run(r)
	if r.failed == "" || !strings.Contains(r.failed, "openapi.json") || r.skipped != "" {
		t.Fatalf("skipped %q failed %q", r.skipped, r.failed)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load("/nonexistent/openapi.json"); err == nil {
		t.Fatal("missing file loaded")
	}
	if _, err := LoadData([]byte("{not json")); err == nil {
		t.Fatal("garbage loaded")
	}
}

func TestLoadDataMinimalDocument(t *testing.T) {
	doc := `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/2/things/{id}":{"get":{
	  "parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string","pattern":"^(?!0)[0-9]+$"}}],
	  "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object","required":["id"],"properties":{"id":{"type":"string","pattern":"^[0-9]+$"}}}}}}}}}}}`
	s, err := LoadData([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	req := newReq(t, "GET", "/2/things/12")
	if err := s.ValidateRequest(req, nil); err != nil {
		t.Fatalf("look-ahead pattern was not skipped: %v", err)
	}
	if err := s.ValidateResponse(req, 200, jsonHeader(), []byte(`{"id":"12"}`)); err != nil {
		t.Fatal(err)
	}
	// Patterns RE2 can compile are still enforced.
	if err := s.ValidateResponse(req, 200, jsonHeader(), []byte(`{"id":"x"}`)); err == nil {
		t.Fatal("pattern not enforced")
	}
}
