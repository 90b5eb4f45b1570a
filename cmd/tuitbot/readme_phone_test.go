package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEPhoneSetupWorksFromConfigInit follows README's "In the
// sandbox, with ntfy" on the file `tuitbot config init` writes: its
// commands that need no outside service run as written, and its TOML,
// set in the tables that file already has as the README says, loads.
func TestREADMEPhoneSetupWorksFromConfigInit(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, "### In the sandbox, with ntfy")
	if i < 0 {
		t.Fatal("README has no \"In the sandbox, with ntfy\" section")
	}
	// The setup ends where the tour of what a tap does begins.
	j := strings.Index(readme[i:], "\nTap **Review**")
	if j < 0 {
		t.Fatal("the ntfy section has no \"Tap **Review**\" paragraph after its setup")
	}
	section := readme[i : i+j]
	mustContain(t, "the section", section, "topic_env", "credential", "notify add ntfy", "--print")
	if strings.Contains(section, "[[notify.channels]]") {
		t.Errorf("the section still has a [[notify.channels]] table to paste")
	}

	h := newHome(t).with("NTFY_TOPIC=tuitbot-7f3a9c2e")
	h.ok(t, "config", "init")
	path := h.path("config.toml")
	ran := 0
	for _, block := range fenced(section, "sh") {
		for _, line := range strings.Split(block, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "./tuitbot ") {
				continue
			}
			args := shellWords(t, strings.TrimPrefix(line, "./tuitbot "))
			offline := args[0] == "config" || (args[0] == "notify" && (args[1] == "add" || slicesContains(args, "--print")))
			if !offline {
				continue // it reaches ntfy.sh or serves until stopped
			}
			if args[0] == "config" {
				// The TOML comes first, as a reader sets it before validating.
				setREADMEKeys(t, path, fenced(section, "toml"))
			}
			h.ok(t, args...)
			ran++
		}
	}
	if ran < 4 {
		t.Errorf("ran %d of the section's commands; the walk lost them", ran)
	}
	show := h.ok(t, "config", "show").stdout
	mustContain(t, "the configuration", show, "public_base_url = \"https://laptop.tailnet-name.ts.net\"", "name = \"phone\"", "topic_env = \"NTFY_TOPIC\"")
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fenced returns the bodies of the markdown code blocks of language lang.
func fenced(s, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// setREADMEKeys sets each key of the README's TOML in the table of that
// name the file already has, as a reader editing it would: the key's line
// there (commented out or not) becomes the README's line. A table or key
// the file lacks fails the test: the README would then ask for more than
// an edit of the existing tables.
func setREADMEKeys(t *testing.T, path string, blocks []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for _, block := range blocks {
		table := ""
		for _, l := range strings.Split(block, "\n") {
			l = strings.TrimSpace(l)
			switch {
			case l == "" || strings.HasPrefix(l, "#"):
			case strings.HasPrefix(l, "["):
				table = l
			default:
				key := strings.TrimSpace(strings.SplitN(l, "=", 2)[0])
				if !setKeyIn(lines, table, key, l) {
					t.Fatalf("the README sets %s %s, which the file config init writes has not", table, key)
				}
			}
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
}

func setKeyIn(lines []string, table, key, line string) bool {
	in := false
	for i, l := range lines {
		s := strings.TrimSpace(l)
		if strings.HasPrefix(s, "[") {
			in = s == table
			continue
		}
		if !in {
			continue
		}
		s = strings.TrimSpace(strings.TrimPrefix(s, "#"))
		if k, _, ok := strings.Cut(s, "="); ok && strings.TrimSpace(k) == key {
			lines[i] = line
			return true
		}
	}
	return false
}
