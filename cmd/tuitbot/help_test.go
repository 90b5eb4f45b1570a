package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var updateHelp = flag.Bool("update", false, "rewrite testdata/help from the commands' current help")

const helpDir = "testdata/help"

// helpFile is where a command's help is kept: its path joined by "_".
func helpFile(path []string) string {
	return filepath.Join(helpDir, strings.Join(append([]string{"tuitbot"}, path...), "_")+".txt")
}

// TestHelpGolden pins every command's --help, so a change to what a user
// reads is a reviewed diff. Regenerate with
// `go test ./cmd/tuitbot -run TestHelpGolden -update`.
func TestHelpGolden(t *testing.T) {
	p := newInProcess(t, context.Background())
	want := map[string]bool{}
	walkCommands(t, func(path []string, _ *cobra.Command) {
		file := helpFile(path)
		want[filepath.Base(file)] = true
		r := p.run(append(append([]string{}, path...), "--help")...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("tuitbot %s --help: exit %d, stderr %q", strings.Join(path, " "), r.code, r.stderr)
			return
		}
		if *updateHelp {
			if err := os.MkdirAll(helpDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		golden, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("tuitbot %s has no help golden file (%v); run with -update and review it", strings.Join(path, " "), err)
			return
		}
		if string(golden) != r.stdout {
			t.Errorf("tuitbot %s --help differs from %s (run with -update and review the diff):\n%s",
				strings.Join(path, " "), file, lineDiff(string(golden), r.stdout))
		}
	})
	entries, err := os.ReadDir(helpDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if want[e.Name()] {
			continue
		}
		if *updateHelp {
			if err := os.Remove(filepath.Join(helpDir, e.Name())); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is the help of no command; run with -update", e.Name())
	}
}

// lineDiff shows the lines that differ, marked - (golden) and + (now).
func lineDiff(golden, got string) string {
	g, n := strings.Split(golden, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(g), len(n)); i++ {
		var gl, nl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(n) {
			nl = n[i]
		}
		if gl != nl {
			b.WriteString("- " + gl + "\n+ " + nl + "\n")
		}
	}
	return b.String()
}

// backquoted is pflag's convention: a back-quoted word in a flag's usage
// becomes the name of its value in the help (`--config FILE`). A quoted
// phrase there garbles the flag's line, so only a placeholder may be quoted.
var backquoted = regexp.MustCompile("`([^`]*)`")

// TestFlagUsageIsNotGarbled checks every flag of every command as the help
// prints it: its value name is a type or a placeholder, never a phrase
// lifted from the description.
func TestFlagUsageIsNotGarbled(t *testing.T) {
	flags := 0
	walkCommands(t, func(path []string, cmd *cobra.Command) {
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			flags++
			where := "tuitbot " + strings.Join(path, " ") + " --" + f.Name
			name, usage := pflag.UnquoteUsage(f)
			if m := backquoted.FindStringSubmatch(f.Usage); m != nil && !placeholderRE.MatchString(m[1]) {
				t.Errorf("%s: the help shows %q as the value's name and drops its quotes (%q); write it without back quotes", where, m[1], usage)
			}
			if strings.ContainsAny(name, " -") {
				t.Errorf("%s: value name %q is not one word", where, name)
			}
		})
	})
	if flags < 50 {
		t.Errorf("only %d flags checked; the walk lost commands", flags)
	}
}
