package xapi_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xsim"
	"github.com/tuitbot/tuitbot/internal/xspec"
)

var placeholder = regexp.MustCompile(`:([a-z_]+)`)

// specPath turns ":id" into the OpenAPI "{id}" form.
func specPath(tpl string) string { return placeholder.ReplaceAllString(tpl, "{$1}") }

// TestEndpointTableServedByEmulator: the emulator keeps its own route table
// on purpose, so a row the product relies on but the emulator does not
// serve would leave that endpoint untested.
func TestEndpointTableServedByEmulator(t *testing.T) {
	s := xsim.New(xsim.Options{})
	routes := s.Routes()
	for _, e := range xapi.NewEndpoints().All() {
		if e.RawOnly {
			// Only universal requests reach it; the emulator answers those
			// with X's not-found error, which is what the agent should see
			// when the sandbox lacks an endpoint.
			continue
		}
		key := e.Method + " " + specPath(e.Path)
		if !slices.Contains(routes, key) {
			t.Errorf("endpoint %s is in the product's table but the emulator does not serve it", key)
		}
	}
}

// TestEndpointTableAgreesWithSpec checks every row against X's OpenAPI spec.
func TestEndpointTableAgreesWithSpec(t *testing.T) {
	spec := xspec.FromEnv(t)
	for _, e := range xapi.NewEndpoints().All() {
		if !spec.HasOperation(e.Method, specPath(e.Path)) {
			t.Errorf("endpoint %s %s is not an operation of X's OpenAPI spec", e.Method, e.Path)
		}
	}
}

// TestEndpointTableRows checks the facts each row must carry.
func TestEndpointTableRows(t *testing.T) {
	eps := xapi.NewEndpoints()
	seen := map[string]bool{}
	for _, e := range eps.All() {
		key := e.RateKey()
		if seen[key] {
			t.Errorf("%s is listed twice", key)
		}
		seen[key] = true
		if e.Host == "" {
			t.Errorf("%s: no host", key)
		}
		if !e.HasRetryClass() {
			t.Errorf("%s: no retry class", key)
		}
		if got, ok := eps.Lookup(e.Method, e.Path); !ok || got.RateKey() != key {
			t.Errorf("Lookup(%s) = %s, %v: an earlier template shadows the row", key, got.RateKey(), ok)
		}
		if e.Undo != nil && (e.Undo.Tool == "" || e.Undo.Param == "" || e.Undo.Note == "") {
			t.Errorf("%s: an inverse needs a tool, a parameter and a note", key)
		}
		if e.Undo != nil && len(eps.ByTool(e.Undo.Tool)) == 0 {
			t.Errorf("%s: undo tool %s calls no endpoint of the table", key, e.Undo.Tool)
		}
	}
}
