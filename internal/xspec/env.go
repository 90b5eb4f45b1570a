package xspec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// EnvVar names the folder that holds X's OpenAPI document under
// xapi/openapi.json and the twitter-text cases under twitter-text/.
const EnvVar = "TUITBOT_CONFORMANCE_DIR"

// EnvRequire turns a missing EnvVar from a skip into a failure, the way
// TUITBOT_REQUIRE_POSTGRES and TUITBOT_REQUIRE_BROWSER do: CI sets it, so
// that losing the data set can never pass as a green run.
const EnvRequire = "TUITBOT_REQUIRE_CONFORMANCE"

// SkipMessage is the text tests skip with when EnvVar is unset.
const SkipMessage = "set TUITBOT_CONFORMANCE_DIR to the twitter-text/xapi testdata folder to run"

// Note is the one line a plain test run prints when the conformance tests
// were skipped.
const Note = "note: the conformance tests against X's OpenAPI spec and twitter-text were skipped; " +
	"run them with TUITBOT_CONFORMANCE_DIR=../shared/testdata go test ./... (or .ci/run)"

// cache keeps one parsed document per process: the file is about 800 KB and
// every test would otherwise parse it again.
type cache struct {
	once sync.Once
	path string
	spec *Spec
	err  error
}

var shared cache

// Dir returns the conformance folder. It skips the test when EnvVar is
// unset, or fails it when EnvRequire is set too.
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(EnvVar)
	if dir == "" {
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("%s is set but %s is not: the conformance data set is missing", EnvRequire, EnvVar)
		}
		t.Skip(SkipMessage)
	}
	return dir
}

// File returns the contents of rel under the conformance folder. It skips
// or fails as Dir does, and fails when the folder is set but the file is
// missing or unreadable.
func File(t testing.TB, rel string) []byte {
	t.Helper()
	path := filepath.Join(Dir(t), rel)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s is set but %s is missing", EnvVar, path)
	}
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

// FromEnv loads $TUITBOT_CONFORMANCE_DIR/xapi/openapi.json for a test. It
// skips or fails as Dir does, and fails when the variable is set but the
// document is missing or unreadable.
func FromEnv(t testing.TB) *Spec {
	t.Helper()
	path := filepath.Join(Dir(t), "xapi", "openapi.json")
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s is set but %s is missing", EnvVar, path)
		}
		t.Fatalf("%s: %v", path, err)
	}
	shared.once.Do(func() {
		shared.path = path
		shared.spec, shared.err = Load(path)
	})
	if shared.path != path {
		t.Fatalf("%s changed within one process (%s, then %s)", EnvVar, shared.path, path)
	}
	if shared.err != nil {
		t.Fatalf("load X OpenAPI document: %v", shared.err)
	}
	return shared.spec
}

// NoteSkipped tells the person running the tests, in one line, that the
// conformance tests will skip, when they will. go test shows nothing of a
// passing package's output, so the line goes to the controlling terminal
// when there is one (openTTY), and to w, which -v shows, in any case.
// One package's TestMain calls it, so that a run prints the line once.
func NoteSkipped(w io.Writer, openTTY func() (io.WriteCloser, error)) {
	if os.Getenv(EnvVar) != "" || os.Getenv(EnvRequire) != "" {
		return
	}
	fmt.Fprintln(w, Note)
	if tty, err := openTTY(); err == nil {
		fmt.Fprintln(tty, Note)
		tty.Close()
	}
}

// OpenTTY opens the controlling terminal for writing.
func OpenTTY() (io.WriteCloser, error) { return os.OpenFile("/dev/tty", os.O_WRONLY, 0) }
