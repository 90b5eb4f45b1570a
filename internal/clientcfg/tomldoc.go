package clientcfg

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// Codex keeps its servers in TOML. Decoding and re-encoding the whole file
// would drop its comments and reorder it, so tuitbot edits the text: it
// removes or replaces its own [mcp_servers.NAME] table (and subtables) and
// appends a new one, then parses the result and checks that everything but
// its own entry is exactly what the file held before.

type codexEntry struct {
	Command           string   `toml:"command,omitempty"`
	Args              []string `toml:"args,omitempty"`
	URL               string   `toml:"url,omitempty"`
	BearerTokenEnvVar string   `toml:"bearer_token_env_var,omitempty"`
}

// codexTable renders the entry as a TOML table.
func codexTable(s Server) (string, error) {
	e := codexEntry{Command: s.Command, Args: s.Args}
	if s.HTTP {
		e = codexEntry{URL: s.URL, BearerTokenEnvVar: TokenEnvVar}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(e); err != nil {
		return "", fmt.Errorf("encode codex entry: %w", err)
	}
	return "[mcp_servers." + tomlKey(s.Name) + "]\n" + buf.String(), nil
}

var bareKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

func tomlKey(k string) string {
	if bareKey().MatchString(k) {
		return k
	}
	var buf bytes.Buffer
	_ = toml.NewEncoder(&buf).Encode(map[string]string{"k": k})
	return strings.TrimSpace(strings.TrimPrefix(buf.String(), "k = "))
}

func decodeTOML(b []byte) (map[string]any, error) {
	doc := map[string]any{}
	if _, err := toml.Decode(string(b), &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

func tomlEntryOf(doc map[string]any, name string) (any, bool) {
	servers, ok := doc["mcp_servers"].(map[string]any)
	if !ok {
		return nil, false
	}
	v, ok := servers[name]
	return v, ok
}

// withoutEntry is doc minus mcp_servers.NAME (and minus an mcp_servers
// table that held nothing else), for comparing the rest of two documents.
func withoutEntry(doc map[string]any, name string) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if servers, ok := doc["mcp_servers"].(map[string]any); ok {
		rest := make(map[string]any, len(servers))
		for k, v := range servers {
			if k != name {
				rest[k] = v
			}
		}
		if len(rest) == 0 {
			delete(out, "mcp_servers")
		} else {
			out["mcp_servers"] = rest
		}
	}
	return out
}

// ownHeader matches the header of the entry's table or one of its subtables.
func ownHeader(name string) *regexp.Regexp {
	q := regexp.QuoteMeta(name)
	return regexp.MustCompile(`^\s*\[\s*mcp_servers\s*\.\s*(?:` + q + `|"` + q + `"|'` + q + `')\s*(?:\]|\.)`)
}

var anyHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[`) })

// splitOwn cuts the text into lines and marks which belong to the entry's
// tables: from one of its headers up to the next header of another table.
// It skips lines inside multi-line strings, where a "[" is text.
func splitOwn(text, name string) (lines []string, own []bool, first int) {
	lines = strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	own = make([]bool, len(lines))
	first = -1
	mine := ownHeader(name)
	inOwn, inMulti := false, ""
	for i, line := range lines {
		if inMulti == "" && anyHeader().MatchString(line) {
			inOwn = mine.MatchString(line)
			if inOwn && first < 0 {
				first = i
			}
		}
		own[i] = inOwn
		for _, delim := range []string{`"""`, `'''`} {
			if n := strings.Count(line, delim); n%2 == 1 {
				switch inMulti {
				case "":
					inMulti = delim
				case delim:
					inMulti = ""
				}
			}
		}
	}
	return lines, own, first
}

// editTOML returns text with the entry set to table (or removed when
// table is ""), and whether the entry existed before.
func editTOML(orig []byte, name, table string) (out []byte, existed bool, err error) {
	before, err := decodeTOML(orig)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", errNotTOML, err)
	}
	_, existed = tomlEntryOf(before, name)
	lines, own, first := splitOwn(string(orig), name)
	var b strings.Builder
	for i, line := range lines {
		if !own[i] {
			b.WriteString(line)
			continue
		}
		if i == first && table != "" {
			// The new table takes the old one's place; the blank lines
			// that separated it from the next table stay one.
			b.WriteString(table)
			j := i
			for j+1 < len(lines) && own[j+1] {
				j++
			}
			if j+1 < len(lines) {
				b.WriteString("\n")
			}
		}
	}
	text := b.String()
	if first < 0 && table != "" {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if strings.TrimSpace(text) != "" {
			text += "\n"
		}
		text += table
	}
	if table == "" {
		text = strings.TrimRight(text, "\n")
		if text != "" {
			text += "\n"
		}
	}
	after, err := decodeTOML([]byte(text))
	if err != nil {
		return nil, existed, fmt.Errorf("%w: the edited file does not parse (%v)", errUnsafeEdit, err)
	}
	if !reflect.DeepEqual(withoutEntry(before, name), withoutEntry(after, name)) {
		return nil, existed, fmt.Errorf("%w: the entry is not only in [mcp_servers.%s] tables", errUnsafeEdit, name)
	}
	got, has := tomlEntryOf(after, name)
	if table == "" {
		if has {
			return nil, existed, fmt.Errorf("%w: the entry is defined outside its own table (inline or with dotted keys)", errUnsafeEdit)
		}
	} else {
		want, _ := decodeTOML([]byte(table))
		w, _ := tomlEntryOf(want, name)
		if !has || !reflect.DeepEqual(got, w) {
			return nil, existed, fmt.Errorf("%w: the entry is defined outside its own table (inline or with dotted keys)", errUnsafeEdit)
		}
	}
	return []byte(text), existed, nil
}
