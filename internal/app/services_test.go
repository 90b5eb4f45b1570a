package app_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/app"
)

// TestMutationToolsNamesEveryGatewayTool: the names policy is checked
// against are exactly the tools the gateway registers (each mutation's
// action and each wrapper), read without building the actions.
func TestMutationToolsNamesEveryGatewayTool(t *testing.T) {
	want := map[string]bool{}
	for _, a := range actions.All(actions.Deps{}) {
		want[a.Tool] = true
	}
	for _, w := range actions.Wrappers() {
		want[w.Tool] = true
	}
	got := app.MutationTools()
	if !maps.Equal(got, want) {
		t.Fatalf("MutationTools = %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	all := testing.AllocsPerRun(5, func() { actions.All(actions.Deps{}) })
	if n := testing.AllocsPerRun(5, func() { app.MutationTools() }); n >= all {
		t.Fatalf("MutationTools allocates %v times, as many as building every action (%v)", n, all)
	}
}
