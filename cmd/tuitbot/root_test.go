package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// rootNames lists the names of a root's commands other than the help and
// completion commands cobra adds to every root.
func rootNames(args []string) []string {
	var names []string
	for _, cmd := range newRootFor(args, io.Discard, io.Discard, strings.NewReader("")).Commands() {
		if n := cmd.Name(); n != "help" && n != "completion" {
			names = append(names, n)
		}
	}
	return names
}

// TestRootCommandNames: each name the root's table calls a command by is
// that command's own name, and the table is every command of the tree.
func TestRootCommandNames(t *testing.T) {
	c := &cli{stdout: io.Discard, stderr: io.Discard, stdin: strings.NewReader("")}
	var table []string
	for _, cmd := range c.commands() {
		if got := cmd.build().Name(); got != cmd.name {
			t.Errorf("the table calls %q the command named %q", cmd.name, got)
		}
		table = append(table, cmd.name)
	}
	slices.Sort(table)
	all := rootNames(nil)
	slices.Sort(all)
	if !slices.Equal(table, all) {
		t.Errorf("table %v, tree %v", table, all)
	}
}

// TestRootBuildsOnlyTheCommandCalled: a command line that names a root
// command builds that command alone; help, completion, a mistyped name and
// global flags first build them all.
func TestRootBuildsOnlyTheCommandCalled(t *testing.T) {
	every := len(rootNames(nil))
	for _, tc := range []struct {
		args []string
		want []string // nil: every command
	}{
		{[]string{"mcp", "serve", "--sandbox"}, []string{"mcp"}},
		{[]string{"version"}, []string{"version"}},
		{[]string{"approve", "list", "--json"}, []string{"approve"}},
		{[]string{"--sandbox", "mcp", "serve"}, nil},
		{[]string{"help", "mcp"}, nil},
		{[]string{"completion", "bash"}, nil},
		{[]string{"__complete", "mcp", "serve", "--tools", ""}, nil},
		{[]string{"mpc", "serve"}, nil},
		{nil, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got := rootNames(tc.args)
			if tc.want == nil {
				if len(got) != every {
					t.Errorf("built %v, want all %d commands", got, every)
				}
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("built %v, want %v", got, tc.want)
			}
		})
	}
}
