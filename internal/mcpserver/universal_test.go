package mcpserver

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xrequest"
)

// TestUniversalHeaderDescriptionNamesTheAllowList keeps the agent-facing
// description of the headers parameter in step with the guard.
func TestUniversalHeaderDescriptionNamesTheAllowList(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[XGetInput](), reflect.TypeFor[actions.RawWriteInput](), reflect.TypeFor[actions.RawRequestInput]()} {
		f, ok := typ.FieldByName("Headers")
		if !ok {
			t.Fatalf("%s has no Headers field", typ)
		}
		desc := f.Tag.Get("jsonschema")
		for _, h := range xrequest.AllowedHeaders() {
			if !strings.Contains(desc, h) {
				t.Errorf("%s.Headers description %q does not name the allowed header %s", typ, desc, h)
			}
		}
	}
}

// TestXGetDocListsTheReadsNoToolMakes: docs/tools.md lists, under x_get,
// every read of the endpoint table that only x_get reaches, with its
// price and, for an owned read, its owned price.
func TestXGetDocListsTheReadsNoToolMakes(t *testing.T) {
	docs, err := Docs()
	if err != nil {
		t.Fatal(err)
	}
	doc := docs["docs/tools.md"]
	start := strings.Index(doc, "\n## x_get\n")
	end := strings.Index(doc, "\n## x_post\n")
	if start < 0 || end < start {
		t.Fatal("docs/tools.md has no x_get section")
	}
	section := doc[start:end]
	owned := 0
	for _, e := range xapi.NewEndpoints().All() {
		if e.Method != "GET" || !e.RawOnly {
			continue
		}
		row := fmt.Sprintf("| `%s` | %.3f", e.Path, e.Price.Unit)
		if e.Price.Owned > 0 {
			owned++
			row = fmt.Sprintf("| `%s` | %.3f | %.3f |", e.Path, e.Price.Unit, e.Price.Owned)
		}
		if !strings.Contains(section, row) {
			t.Errorf("x_get's docs lack %q", row)
		}
	}
	if owned != 5 {
		t.Errorf("%d owned reads only x_get reaches, want 5 (blocking, muting, pinned, followed and member Lists)", owned)
	}
}
