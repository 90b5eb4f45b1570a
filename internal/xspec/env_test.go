package xspec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestMain prints, once per run of the whole tree, that the conformance
// tests skipped and how to run them: this package is the one that says it.
func TestMain(m *testing.M) {
	NoteSkipped(os.Stdout, OpenTTY)
	os.Exit(m.Run())
}

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

func run(tb *recorder) { runWith(tb, func(tb testing.TB) { FromEnv(tb) }) }

func runWith(tb *recorder, f func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(tb)
	}()
	<-done
}

// Under TUITBOT_REQUIRE_CONFORMANCE a missing data set fails every way in,
// instead of skipping.
func TestRequireTurnsSkipIntoFailure(t *testing.T) {
	t.Setenv(EnvVar, "")
	t.Setenv(EnvRequire, "1")
	for name, f := range map[string]func(testing.TB){
		"FromEnv": func(tb testing.TB) { FromEnv(tb) },
		"File":    func(tb testing.TB) { File(tb, "twitter-text/validate.yml") },
		"Dir":     func(tb testing.TB) { Dir(tb) },
	} {
		r := &recorder{TB: t}
		runWith(r, f)
		if r.skipped != "" || !strings.Contains(r.failed, EnvRequire) || !strings.Contains(r.failed, EnvVar) {
			t.Errorf("%s: skipped %q failed %q", name, r.skipped, r.failed)
		}
	}
}

func TestFileReadsAndFailsWhenMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/present.txt", []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, dir)
	var got []byte
	r := &recorder{TB: t}
	runWith(r, func(tb testing.TB) { got = File(tb, "present.txt") })
	if string(got) != "data" || r.failed != "" || r.skipped != "" {
		t.Fatalf("got %q, skipped %q failed %q", got, r.skipped, r.failed)
	}
	r = &recorder{TB: t}
	runWith(r, func(tb testing.TB) { File(tb, "absent.txt") })
	if !strings.Contains(r.failed, "absent.txt") || r.skipped != "" {
		t.Fatalf("skipped %q failed %q", r.skipped, r.failed)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// A plain run says once that the conformance tests skipped, on the
// terminal as well as in -v output; a run with the data, or one that
// requires it, says nothing.
func TestNoteSkipped(t *testing.T) {
	for _, c := range []struct {
		name, dir, require string
		want               bool
	}{
		{"plain run", "", "", true},
		{"with the data", "/data", "", false},
		{"required", "", "1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvVar, c.dir)
			t.Setenv(EnvRequire, c.require)
			var out, tty bytes.Buffer
			NoteSkipped(&out, func() (io.WriteCloser, error) { return nopCloser{&tty}, nil })
			if got := out.String() == Note+"\n" && tty.String() == Note+"\n"; got != c.want {
				t.Fatalf("out %q tty %q, want the note: %v", out.String(), tty.String(), c.want)
			}
		})
	}
	t.Run("no terminal", func(t *testing.T) {
		t.Setenv(EnvVar, "")
		t.Setenv(EnvRequire, "")
		var out bytes.Buffer
		NoteSkipped(&out, func() (io.WriteCloser, error) { return nil, errors.New("no tty") })
		if out.String() != Note+"\n" {
			t.Fatalf("out %q", out.String())
		}
	})
	if !strings.Contains(Note, EnvVar) {
		t.Fatal("the note does not say how to run them")
	}
}

func TestFromEnvSkipsWhenUnset(t *testing.T) {
	t.Setenv(EnvVar, "")
	t.Setenv(EnvRequire, "")
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
