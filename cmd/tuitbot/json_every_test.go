package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// printsNoData are the commands that print no data a script could want,
// each with why; every other command must take --json.
var printsNoData = map[string]string{
	"completion bash":        "prints a shell script",
	"completion fish":        "prints a shell script",
	"completion powershell":  "prints a shell script",
	"completion zsh":         "prints a shell script",
	"docs":                   "writes the generated docs into the repository",
	"help":                   "prints help text",
	"mcp serve":              "a server: its output is the MCP protocol",
	"run":                    "runs until stopped; its output is a log",
	"web":                    "a server: it prints where it listens",
	"xsim serve":             "a server: it prints where it listens",
	"config init":            "writes a commented config file for a person to edit",
	"db export":              "writes a database file",
	"db import":              "reads a database file",
	"db migrate":             "prints what it migrated for a person; `doctor --json` reports the schema",
	"mcp install":            "edits an MCP client's config and shows the diff for a person",
	"mcp uninstall":          "edits an MCP client's config and shows the diff for a person",
	"mcp healthcheck":        "a container health probe: only its exit status counts",
	"queue apply-suggestion": "prints the before/after table for a person; `queue show --json` reads the result",
}

// TestEveryDataCommandTakesJSON walks the command tree: every command that
// prints data takes --json, and the commands that lacked it print one JSON
// document with it, or, when they fail, the documented error envelope.
func TestEveryDataCommandTakesJSON(t *testing.T) {
	seen := map[string]bool{}
	walkCommands(t, func(path []string, cmd *cobra.Command) {
		if !cmd.Runnable() || len(path) == 0 || cmd.HasSubCommands() {
			return
		}
		name := strings.Join(path, " ")
		seen[name] = true
		if cmd.Flags().Lookup("json") == nil && printsNoData[name] == "" {
			t.Errorf("`tuitbot %s` prints data but takes no --json", name)
		}
	})
	for name := range printsNoData {
		if !seen[name] {
			t.Errorf("printsNoData names %q, which is not a command", name)
		}
	}

	h := newHome(t)
	p := startStdio(t, h, "--sandbox")
	p.initialize(t)
	for i := 1; i <= 3; i++ {
		if env := p.post(t, i+1, fmt.Sprintf("A post for the JSON walk, number %d.", i)); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
			t.Fatalf("post %d was not routed to approval: %+v %s", i, env.Error, env.Data)
		}
	}
	p.stop(t)
	out := h.path("audit.csv")
	for _, tc := range []struct {
		args   []string
		fields []string // top-level keys it must have
		code   string   // when set, the error code the command answers
	}{
		{args: []string{"approve", "approve", "1"}, fields: []string{"id", "tool_name", "status", "result"}},
		{args: []string{"approve", "reject", "2", "--notes", "not today"}, fields: []string{"id", "status", "review_notes"}},
		{args: []string{"approve", "edit", "3", "--text", "Edited for the JSON walk."}, fields: []string{"id", "params", "edited"}},
		{args: []string{"config", "validate"}, fields: []string{"valid", "warnings"}},
		{args: []string{"version"}, fields: []string{"version", "go_version", "platform"}},
		{args: []string{"export", "--what", "audit", "--out", out}, fields: []string{"what", "format", "rows", "out"}},
		{args: []string{"analytics", "snapshot"}, fields: []string{"followers_count", "following_count", "tweet_count", "taken_at"}},
		{args: []string{"audit", "resolve", "no-such-mutation", "--happened"}, code: "not_found"},
		{args: []string{"approve", "links", "revoke", "1"}, code: "config_error"},
		{args: []string{"notify", "outbox", "retry", "99"}, code: "config_error"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := h.run(t, append(tc.args, "--sandbox", "--json")...)
			doc := oneJSONObject(t, r)
			if tc.code != "" {
				var env struct {
					Error failureBody `json:"error"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || env.Error.Code != tc.code {
					t.Fatalf("want the error envelope with code %q, got:\n%s", tc.code, r)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r)
			}
			for _, f := range tc.fields {
				if _, ok := doc[f]; !ok {
					t.Errorf("no %q field; has %v", f, keys(doc))
				}
			}
		})
	}
	// Last: reset removes what the other commands used.
	r := h.ok(t, "sandbox", "reset", "--json")
	if doc := oneJSONObject(t, r); doc["removed"] == nil {
		t.Errorf("sandbox reset --json has no removed field:\n%s", r.stdout)
	}
	if r := h.run(t, "export", "--what", "audit", "--json", "--sandbox"); r.code != 2 || !strings.Contains(r.stdout, "--out") {
		t.Errorf("export --json without --out would mix the export and the summary; want a usage error naming --out:\n%s", r)
	}
}

func oneJSONObject(t *testing.T, r result) map[string]json.RawMessage {
	t.Helper()
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, r)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", r)
	}
	return doc
}

// TestErrorCodesAreTheDocumentedOnes: a failure answers with the code
// docs/errors.md gives it, for every command that reads the configuration.
func TestErrorCodesAreTheDocumentedOnes(t *testing.T) {
	h := newHome(t)
	bad := h.path("bad.toml")
	for _, tc := range []struct {
		name, config string
	}{
		{"not TOML", "[notify]\n[notify]\n"},
		{"a bad value", "[storage]\ndb_path = 42\n"},
		{"an unknown mode", "mode = \"sideways\"\n"},
	} {
		if err := os.WriteFile(bad, []byte(tc.config), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"config", "validate"}, {"config", "show"}, {"approve", "list"}, {"status"}} {
			t.Run(tc.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				r := h.run(t, append(args, "-c", bad, "--json")...)
				var env struct {
					Error failureBody `json:"error"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || env.Error.Code != "config_error" || r.code != 1 {
					t.Errorf("want exit 1 and code config_error, got:\n%s", r)
				}
			})
		}
	}
}

// TestBadConfigIsConfigErrorForEveryCommand walks every command (with the
// arguments that run it in a fresh home): each one that reads the
// configuration answers a broken file with config_error, exit 1.
func TestBadConfigIsConfigErrorForEveryCommand(t *testing.T) {
	readsNoConfig := map[string]string{
		"version":         "prints the build",
		"docs":            "generates from the code",
		"config init":     "writes a new file",
		"mcp healthcheck": "asks a running server",
		"xsim serve":      "its --listen is refused before anything is read",
		"web":             "its --listen is refused before anything is read",
		"mcp manifest":    "lists the built-in tools",
		"mcp install":     "edits an MCP client's file",
		"mcp uninstall":   "edits an MCP client's file",
		"doctor":          "its report is the answer: its config check carries the code (below)",
	}
	h := newHome(t)
	// The walk's usual arguments stop these two before they read the file.
	override := map[string][]string{"export": {"--what", "audit", "--out", h.path("audit.csv")}, "run": nil}
	bad := h.path("bad.toml")
	if err := os.WriteFile(bad, []byte("[notify]\n[notify]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	walkCommands(t, func(path []string, cmd *cobra.Command) {
		name := strings.Join(path, " ")
		args, ok := sandboxFirstArgs[name]
		if !ok || readsNoConfig[name] != "" {
			return
		}
		if o, ok := override[name]; ok {
			args = o
		}
		n++
		line := append(append(strings.Fields(name), args...), "-c", bad)
		if cmd.Flags().Lookup("json") == nil {
			// Without --json the code leads the message on stderr.
			if r := h.run(t, line...); r.code != 1 || !strings.Contains(r.stderr, "error: config_error: ") {
				t.Errorf("`tuitbot %s` with a broken config file: want exit 1 and config_error, got:\n%s", name, r)
			}
			return
		}
		r := h.run(t, append(line, "--json")...)
		var env struct {
			Error failureBody `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || env.Error.Code != "config_error" || r.code != 1 {
			t.Errorf("`tuitbot %s` with a broken config file: want exit 1 and code config_error, got:\n%s", name, r)
		}
	})
	if n < 40 {
		t.Errorf("walked %d commands; the walk lost some", n)
	}
	r := h.run(t, "doctor", "-c", bad, "--json")
	mustContain(t, "doctor's config check", r.stdout, `"name": "config"`, `"message": "config_error: `)
}
