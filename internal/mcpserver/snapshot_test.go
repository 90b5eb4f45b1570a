package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

var update = flag.Bool("update", false, "rewrite the tool schema snapshots in testdata/schemas")

const schemaDir = "testdata/schemas"

// TestSchemaSnapshots pins every tool's input schema: a change to a tool's
// input type shows up as a diff in review instead of silently changing what
// agents may send.
func TestSchemaSnapshots(t *testing.T) {
	const howTo = "run `go test ./internal/mcpserver -run TestSchemaSnapshots -update` and review the diff"
	want := map[string]bool{}
	for _, row := range mcpserver.Registry() {
		want[row.Name+".json"] = true
		s, err := row.InputSchema()
		if err != nil {
			t.Fatalf("%s: %v", row.Name, err)
		}
		got, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			t.Fatalf("%s: marshal schema: %v", row.Name, err)
		}
		got = append(got, '\n')
		path := filepath.Join(schemaDir, row.Name+".json")
		if *update {
			if err := os.MkdirAll(schemaDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			t.Errorf("tool %s has no schema snapshot %s; %s", row.Name, path, howTo)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(old, got) {
			t.Errorf("tool %s input schema changed:\n--- snapshot\n%s\n--- now\n%s\n%s", row.Name, old, got, howTo)
		}
	}
	// Snapshots of removed tools must go too, or they hide a rename.
	entries, err := os.ReadDir(schemaDir)
	if err != nil && !*update {
		t.Fatal(err)
	}
	for _, e := range entries {
		if want[e.Name()] {
			continue
		}
		if *update {
			if err := os.Remove(filepath.Join(schemaDir, e.Name())); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("snapshot %s belongs to no registry tool; %s", e.Name(), howTo)
	}
}

// TestDocsAreCurrent fails when docs/*.md differ from what the registry,
// the error table and the config reference generate.
func TestDocsAreCurrent(t *testing.T) {
	files, err := mcpserver.Docs()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"docs/tools.md", "docs/errors.md", "docs/config.md"} {
		if _, ok := files[want]; !ok {
			t.Errorf("Docs() lacks %s", want)
		}
	}
	for name, content := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Errorf("%s: %v; run `go run ./cmd/tuitbot docs`", name, err)
			continue
		}
		if string(got) != content {
			t.Errorf("%s is stale; run `go run ./cmd/tuitbot docs` and commit the result", name)
		}
	}
	tools := files["docs/tools.md"]
	for _, row := range mcpserver.Registry() {
		if !strings.Contains(tools, "## "+row.Name+"\n") {
			t.Errorf("docs/tools.md has no section for %s", row.Name)
		}
	}
}

func TestManifest(t *testing.T) {
	for _, p := range allProfiles {
		t.Run(string(p), func(t *testing.T) {
			m, err := mcpserver.BuildManifest(mcpserver.Options{Profile: p, Version: app.Version})
			if err != nil {
				t.Fatal(err)
			}
			if m.Profile != p || m.Version != app.Version || m.EnvelopeVersion != envelope.ToolVersion {
				t.Errorf("header = %s %s %s", m.Profile, m.Version, m.EnvelopeVersion)
			}
			if m.ToolCount != len(m.Tools) {
				t.Errorf("tool_count %d, but %d tools", m.ToolCount, len(m.Tools))
			}
			names := make([]string, len(m.Tools))
			for i, mt := range m.Tools {
				names[i] = mt.Name
			}
			if !sort.StringsAreSorted(names) {
				t.Errorf("tools not sorted: %v", names)
			}
			// Options.Config nil means the defaults decide gated tools.
			if want := expectedDefault(p); !slices.Equal(names, want) {
				t.Errorf("manifest tools %v, want %v", names, want)
			}
			reg := registryByName()
			for _, mt := range m.Tools {
				if !slices.Contains(mt.Profiles, p) {
					t.Errorf("%s in manifest of %s lacks the profile", mt.Name, p)
				}
				if !p.Mutating() && mt.Mutation {
					t.Errorf("read-only manifest %s lists mutation %s", p, mt.Name)
				}
				if mt.InputSchema == nil || mt.Description == "" || len(mt.ErrorCodes) == 0 {
					t.Errorf("%s: incomplete manifest entry", mt.Name)
				}
				if row := reg[mt.Name]; row == nil || row.Hints != mt.Annotations || row.Mutation != mt.Mutation {
					t.Errorf("%s: manifest disagrees with the registry", mt.Name)
				}
			}
			// The manifest is JSON with the documented keys.
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"tuitbot_version", "envelope_version", "profile", "tool_count", "tools"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("manifest JSON lacks %s", k)
				}
			}
		})
	}
}

// expectedDefault is expectedTools under the default configuration.
func expectedDefault(p mcpserver.Profile) []string {
	cfg := defaultConfig()
	return expectedTools(p, &cfg)
}
