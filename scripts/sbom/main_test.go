package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestBuildListsExactlyTheLinkedModules(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/tuitbot/tuitbot/cmd/tuitbot",
		Main:      debug.Module{Path: "github.com/tuitbot/tuitbot", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/spf13/cobra", Version: "v1.10.2", Sum: "h1:abc="},
			{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1", Sum: "h1:def="}},
		},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "CGO_ENABLED", Value: "0"}},
	}
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := build(bi, "tuitbot", "v1.2.3", "00ff", ts)
	if b.BOMFormat != "CycloneDX" || b.SpecVersion != "1.5" || !strings.HasPrefix(b.SerialNumber, "urn:uuid:") {
		t.Errorf("header = %+v", b)
	}
	if again := build(bi, "tuitbot", "v1.2.3", "00ff", ts); again.SerialNumber != b.SerialNumber {
		t.Error("the same binary got a different serial number")
	}
	if b.Metadata.Timestamp != "2026-01-02T03:04:05Z" {
		t.Errorf("timestamp %q", b.Metadata.Timestamp)
	}
	m := b.Metadata.Component
	if m.PURL != "pkg:golang/github.com/tuitbot/tuitbot@v1.2.3" || m.Hashes[0].Content != "00ff" {
		t.Errorf("main component = %+v", m)
	}
	var purls []string
	for _, c := range b.Components {
		purls = append(purls, c.PURL)
	}
	want := "pkg:golang/github.com/spf13/cobra@v1.10.2 pkg:golang/example.com/fork@v1.0.1"
	if got := strings.Join(purls, " "); got != want {
		t.Errorf("components %s, want %s", got, want)
	}
	if len(b.Dependencies) != 1 || len(b.Dependencies[0].DependsOn) != 2 {
		t.Errorf("dependencies = %+v", b.Dependencies)
	}
}

// The test binary carries build information like any Go binary.
func TestRunReadsABinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sbom.json")
	t.Setenv("SOURCE_DATE_EPOCH", "1767323045")
	if err := run(exe, out, "tuitbot", "v0.0.1"); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var b bom
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	if b.Metadata.Component.Version != "v0.0.1" || len(b.Metadata.Component.Hashes[0].Content) != 64 {
		t.Errorf("main component = %+v", b.Metadata.Component)
	}
	if b.Metadata.Timestamp != "2026-01-02T03:04:05Z" {
		t.Errorf("SOURCE_DATE_EPOCH not used: %q", b.Metadata.Timestamp)
	}
	found := false
	for _, c := range b.Components {
		found = found || c.Name == "github.com/google/uuid"
	}
	if !found {
		t.Error("a module linked into the binary is missing")
	}
}
