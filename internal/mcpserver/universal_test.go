package mcpserver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
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
