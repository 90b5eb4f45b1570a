package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// queueSection is the table that holds an account's [queue] settings.
func queueSection(account string) string {
	if account == "" || account == DefaultAccountName {
		return "queue"
	}
	return "accounts." + account + ".queue"
}

// scanTOMLLine reads one line of TOML outside multi-line strings: where
// its comment starts (len when none) and how the brackets outside strings
// change the nesting.
func scanTOMLLine(line string) (comment, depth int) {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return i, depth
		case c == '[':
			depth++
		case c == ']':
			depth--
		}
	}
	return len(line), depth
}

// tableHeader is the table a line opens ("queue" for "[queue]"), or "".
func tableHeader(line string) string {
	end, _ := scanTOMLLine(line)
	s := strings.TrimSpace(line[:end])
	if !strings.HasPrefix(s, "[") || strings.HasPrefix(s, "[[") || !strings.HasSuffix(s, "]") {
		return ""
	}
	return strings.ReplaceAll(strings.TrimSpace(s[1:len(s)-1]), " ", "")
}

// SetQueueSlots returns the configuration file src with the account's
// queue slots set to slots, touching nothing else: comments, order and
// the other keys stay as written. The slots line of the account's queue
// table is replaced (a list over several lines as a whole; a comment at
// its end is kept); without one it is added under the table's header, and
// without the table the table is added at the end. The caller loads the
// result before writing it: a file that sets the queue in another form
// (an inline table, dotted keys) then fails to load rather than being
// changed in a way that would not take effect.
func SetQueueSlots(src, account string, slots []string) (string, error) {
	for _, s := range slots {
		if strings.ContainsAny(s, "\"\\\n") {
			return "", fmt.Errorf("slot %q: a slot has no quotes, backslashes or newlines", s)
		}
	}
	section := queueSection(account)
	value := "slots = " + TOMLStrings(slots)
	lines := strings.SplitAfter(src, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	header := -1
	for i, l := range lines {
		if tableHeader(l) == section {
			header = i
			break
		}
	}
	if header < 0 {
		out := src
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		if out != "" {
			out += "\n"
		}
		return out + "[" + section + "]\n" + value + "\n", nil
	}
	for i := header + 1; i < len(lines); i++ {
		l := lines[i]
		if tableHeader(l) != "" {
			break
		}
		key, _, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(key) != "slots" {
			continue
		}
		// The value may span lines until its brackets close.
		end, depth := i, 0
		for j := i; j < len(lines); j++ {
			_, d := scanTOMLLine(lines[j])
			depth += d
			end = j
			if depth <= 0 {
				break
			}
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		repl := indent + value
		if c, _ := scanTOMLLine(lines[end]); c < len(strings.TrimRight(lines[end], "\r\n")) {
			repl += "  " + strings.TrimRight(lines[end][c:], "\r\n")
		}
		out := append(append(append([]string{}, lines[:i]...), repl+"\n"), lines[end+1:]...)
		return strings.Join(out, ""), nil
	}
	out := append(append(append([]string{}, lines[:header+1]...), value+"\n"), lines[header+1:]...)
	return strings.Join(out, ""), nil
}

// AddNotifyChannel returns the configuration file src with ch appended as
// a new [[notify.channels]] entry, touching nothing else: comments, order
// and the other keys stay as written. An array-of-tables entry may follow
// any table, so the file `config init` writes, which already has [notify]
// and [approval_links], takes it as it is. The caller loads the result
// before writing it, as for SetQueueSlots.
func AddNotifyChannel(src string, ch NotifyChannel) (string, error) {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(ch); err != nil {
		return "", fmt.Errorf("notify channel %q: %w", ch.Name, err)
	}
	out := src
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	if out != "" {
		out += "\n"
	}
	return out + "[[notify.channels]]\n" + b.String(), nil
}

// CheckNewChannel checks ch as one more [[notify.channels]] entry of c,
// with the defaults a loaded file gets, without changing c: the error
// names the key that is wrong.
func (c *Config) CheckNewChannel(ch NotifyChannel) error {
	next := *c
	next.Notify.Channels = append(slices.Clone(c.Notify.Channels), ch)
	next.applyChannelDefaults()
	return next.Validate()
}
