package xspec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// EnvVar names the folder that holds X's OpenAPI document under
// xapi/openapi.json.
const EnvVar = "TUITBOT_CONFORMANCE_DIR"

// SkipMessage is the text tests skip with when EnvVar is unset.
const SkipMessage = "set TUITBOT_CONFORMANCE_DIR to the twitter-text/xapi testdata folder to run"

// cache keeps one parsed document per process: the file is about 800 KB and
// every test would otherwise parse it again.
type cache struct {
	once sync.Once
	path string
	spec *Spec
	err  error
}

var shared cache

// FromEnv loads $TUITBOT_CONFORMANCE_DIR/xapi/openapi.json for a test. It
// skips the test when the variable is unset and fails it when the variable is
// set but the document is missing or unreadable.
func FromEnv(t testing.TB) *Spec {
	t.Helper()
	dir := os.Getenv(EnvVar)
	if dir == "" {
		t.Skip(SkipMessage)
	}
	path := filepath.Join(dir, "xapi", "openapi.json")
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
