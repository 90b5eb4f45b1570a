package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestBlankComments: comment lines are emptied with their line endings
// kept; anything that may not be a comment the decoder would accept stays.
func TestBlankComments(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"comment lines", "# a\n[mcp]\n  # b\r\nprofile = \"readonly\" # c\n#", "\n[mcp]\n\r\nprofile = \"readonly\" # c\n"},
		{"multi-line basic string", "s = \"\"\"\n# text\n\"\"\"\n# a\n", "s = \"\"\"\n# text\n\"\"\"\n# a\n"},
		{"multi-line literal string", "s = '''\n# text\n'''\n", "s = '''\n# text\n'''\n"},
		{"control character", "# a\x01b\n# c\n", "# a\x01b\n\n"},
		{"invalid UTF-8", "# a\xffb\n", "# a\xffb\n"},
		{"lone carriage return", "# a\rb\n", "# a\rb\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(blankComments([]byte(tc.in))); got != tc.want {
				t.Errorf("blankComments(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestBlankCommentsDecodesAlike: a document decodes to the same values and
// fails with the same message, naming the same line, with its comment
// lines blanked as without.
func TestBlankCommentsDecodesAlike(t *testing.T) {
	initDoc := func(t *testing.T) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := WriteExample(path, false); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name string
		doc  func(t *testing.T) string
	}{
		{"config init", initDoc},
		{"error after comments", func(*testing.T) string { return "# one\n# two\n[mcp]\n# three\nprofile = \n" }},
		{"comment in an array", func(*testing.T) string { return "[mcp]\ntools = [\n  # a tool\n  \"health_check\",\n]\n" }},
		{"control character in a comment", func(*testing.T) string { return "# bad\x01\n[mcp]\n" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.doc(t)
			var plain, blanked Config
			_, errPlain := toml.Decode(doc, &plain)
			_, errBlanked := toml.Decode(string(blankComments([]byte(doc))), &blanked)
			if (errPlain == nil) != (errBlanked == nil) || (errPlain != nil && errPlain.Error() != errBlanked.Error()) {
				t.Fatalf("errors differ: %v, blanked %v", errPlain, errBlanked)
			}
			if !reflect.DeepEqual(plain, blanked) {
				t.Errorf("decoded values differ")
			}
			if strings.Contains(tc.name, "error") && errPlain == nil {
				t.Errorf("no error decoding %q", doc)
			}
		})
	}
}
