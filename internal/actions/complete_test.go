package actions_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// endToEndDirs hold the tests that drive tools through the MCP server
// against the emulator.
var endToEndDirs = []string{"../toolstest", "../e2e"}

// TestEveryMutationIsComplete fails when a mutation tool lacks a piece a
// newcomer could forget: an endpoint-table row with a price and a retry
// class, an emulator route for it, a rollback rule, an end-to-end test that
// calls it and a docs entry.
func TestEveryMutationIsComplete(t *testing.T) {
	eps := xapi.NewEndpoints()
	routes := xsim.New(xsim.Options{}).Routes()
	tests := readTests(t)
	docs, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`:([a-z_]+)`)
	for _, m := range actions.Mutations() {
		t.Run(m.Name, func(t *testing.T) {
			if !strings.Contains(string(docs), "\n## "+m.Name+"\n") {
				t.Errorf("docs/tools.md has no section for %s: run `go run ./cmd/tuitbot docs`", m.Name)
			}
			if !regexp.MustCompile(`"` + m.Name + `"`).Match(tests) {
				t.Errorf("no end-to-end test in %v calls %s", endToEndDirs, m.Name)
			}
			if m.Raw {
				return // its endpoint, price and undo are whatever the caller names
			}
			rows := m.Endpoints(eps)
			if len(rows) == 0 {
				t.Fatalf("%s calls no row of the endpoint table (internal/xapi/endpoints.go)", m.Name)
			}
			priced, undo := false, false
			for _, r := range rows {
				priced = priced || r.Price.Unit > 0
				undo = undo || r.Undo != nil
				if !r.HasRetryClass() {
					t.Errorf("%s: endpoint %s has no retry class", m.Name, r.RateKey())
				}
				key := r.Method + " " + placeholder.ReplaceAllString(r.Path, "{$1}")
				if !slices.Contains(routes, key) {
					t.Errorf("%s: the emulator does not serve %s", m.Name, key)
				}
			}
			if !priced {
				t.Errorf("%s: no endpoint row gives a price", m.Name)
			}
			if undo == (m.Irreversible != "") {
				t.Errorf("%s: needs exactly one rollback rule: an inverse on its endpoint row or an Irreversible note (inverse %v, note %q)",
					m.Name, undo, m.Irreversible)
			}
		})
	}
}

// TestMutationAndActionAgree: the gateway action of every mutation carries
// the mutation's own name and category.
func TestMutationAndActionAgree(t *testing.T) {
	acts := actions.All(actions.Deps{})
	ms := actions.Mutations()
	if len(acts) != len(ms) {
		t.Fatalf("%d actions for %d mutations", len(acts), len(ms))
	}
	for i, m := range ms {
		if acts[i].Tool != m.Name || acts[i].Category != m.Category {
			t.Errorf("action %d is %s/%s, mutation %s/%s", i, acts[i].Tool, acts[i].Category, m.Name, m.Category)
		}
	}
}

func readTests(t *testing.T) []byte {
	t.Helper()
	var all []byte
	for _, dir := range endToEndDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no tests in %s: %v", dir, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
	}
	return all
}
