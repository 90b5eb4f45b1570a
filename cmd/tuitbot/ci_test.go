package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCISetsConformanceDirOnlyWhenThere runs the part of .ci/run that sets
// TUITBOT_CONFORMANCE_DIR: it points at ../shared/testdata when that
// exists, keeps a value the caller set, and is left unset otherwise (so the
// conformance tests skip instead of failing on a missing folder).
func TestCISetsConformanceDirOnlyWhenThere(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	start := strings.Index(script, "# conformance data")
	end := strings.Index(script, "# end conformance data")
	if start < 0 || end < start {
		t.Fatal(".ci/run has no conformance data block")
	}
	block := script[start:end]
	run := func(t *testing.T, dir string, env ...string) string {
		t.Helper()
		cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+block+"\nprintf '%s' \"${TUITBOT_CONFORMANCE_DIR:-<unset>}\"")
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("block failed: %v\n%s", err, out)
		}
		return string(out)
	}
	parent := t.TempDir()
	clone := filepath.Join(parent, "clone")
	if err := os.Mkdir(clone, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := run(t, clone); got != "<unset>" {
		t.Errorf("without the shared data: %q, want unset", got)
	}
	if got := run(t, clone, "TUITBOT_CONFORMANCE_DIR=/elsewhere"); got != "/elsewhere" {
		t.Errorf("a value set by the caller became %q", got)
	}
	data := filepath.Join(parent, "shared", "testdata")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := run(t, clone); got != data {
		t.Errorf("with the shared data: %q, want %q", got, data)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "README", string(readme), "../shared/testdata", "xapi/openapi.json", "twitter-text", "`SOURCE` file", "The tests check")
}

// TestCIRequiresEverySlowProof pins what .ci/run turns on beyond the quick
// suite: the e2e proofs, and failures instead of skips for every missing
// peer (browser, PostgreSQL, the conformance data set). The README shows
// the quick command first and then the full one CI runs.
func TestCIRequiresEverySlowProof(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	mustContain(t, ".ci/run", script,
		"TAGS=e2e",
		`go vet -tags "$TAGS" ./...`,
		`staticcheck" -tags "$TAGS" ./...`,
		`go test -race -tags "$TAGS" -timeout `,
		"export TUITBOT_REQUIRE_BROWSER=1",
		"export TUITBOT_REQUIRE_POSTGRES=1",
		"export TUITBOT_REQUIRE_CONFORMANCE=1",
	)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	quick := strings.Index(string(readme), "go test ./...")
	full := strings.Index(string(readme), "go test -tags e2e")
	if quick < 0 || full < 0 || full < quick {
		t.Errorf("README: the quick command (at %d) must come first, then the full one (at %d)", quick, full)
	}
}
