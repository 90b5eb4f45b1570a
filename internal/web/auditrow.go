package web

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
)

// printAuditRow appends row r to b exactly as the "auditrow" template of
// t prints it; plus is how t escapes '+' (see plusOf). Most rows are
// written by writeAuditRow, which costs a fraction of the template's
// reflection; a row it cannot prove it prints as the template does goes
// through the template, which stays the definition of the row.
func printAuditRow(b *bytes.Buffer, t *template.Template, plus string, r *auditRow) error {
	if writeAuditRow(b, r, plus) {
		return nil
	}
	// A copy for the template, which keeps what it is given as an any:
	// the row itself then stays off the heap when the template is not
	// asked.
	row := *r
	if err := t.ExecuteTemplate(b, "auditrow", &row); err != nil {
		return fmt.Errorf("print audit row: %w", err)
	}
	return nil
}

// writeAuditRow appends row r to dst as the "auditrow" template prints it,
// markup for markup, and reports whether it did; it leaves dst as it
// was when a value printed is one it cannot vouch for.
//
// The template escapes its text and quoted attribute values (class and
// title included) with html/template's HTML escaper, and its hrefs with
// its URL filter, URL normaliser and attribute escaper. Here a text or
// attribute value is escaped by template.HTMLEscapeString and plus, the
// template's own spelling of '+' (see appendText), and a URL is
// written as it is when each of those three provably leaves it so (see
// appendURL). FuzzAuditRow holds the two printers to the same bytes.
func writeAuditRow(dst *bytes.Buffer, r *auditRow, plus string) bool {
	// The row is appended to dst's room, then written whole: appends cost
	// less than a write for each piece. It is kept in a local slice (and
	// the append functions return it) rather than in a struct behind a
	// pointer, which the garbage collector's write barrier would watch.
	b, ok := dst.AvailableBuffer(), true
	b = append(b, `<tr><td data-label="When"><time datetime="`...)
	b, ok = appendText(b, ok, r.At, plus)
	b = append(b, `" title="`...)
	exact := len(b)
	b, ok = appendText(b, ok, r.Exact, plus)
	exactEnd := len(b)
	b = append(b, `">`...)
	b, ok = appendText(b, ok, r.Rel, plus)
	b = append(b, `</time></td><td class="what" data-label="What"><strong>`...)
	name := len(b)
	b, ok = appendText(b, ok, r.Name, plus)
	nameEnd := len(b)
	b = append(b, `</strong> <span class="tool">`...)
	b, ok = appendText(b, ok, r.Tool, plus)
	b = append(b, `</span>`...)
	// The template shows the first of Said, PostURL (with PostID) and
	// Target that is set.
	switch {
	case r.Said != "":
		b = append(b, `<br><span class="said">`...)
		b, ok = appendText(b, ok, r.Said, plus)
		b = append(b, `</span>`...)
	case r.PostURL != "":
		b = append(b, `<br><a href="`...)
		b, ok = appendURL(b, ok, r.PostURL)
		b = append(b, `">post `...)
		b, ok = appendText(b, ok, r.PostID, plus)
		b = append(b, `</a>`...)
	case r.Target != "":
		b = append(b, `<br>`...)
		b, ok = appendText(b, ok, r.Target, plus)
	}
	b = append(b, `</td><td data-label="Status" class="status-`...)
	b, ok = appendText(b, ok, r.Status, plus)
	b = append(b, `">`...)
	b, ok = appendText(b, ok, r.StatusText, plus)
	b = append(b, `</td><td data-label="Asked by">`...)
	b, ok = appendText(b, ok, r.Caller, plus)
	if r.DecidedBy != "" {
		b = append(b, `<br><span class="decided">approved by `...)
		b, ok = appendText(b, ok, r.DecidedBy, plus)
		b = append(b, `</span>`...)
	}
	b = append(b, "</td>\n<td><a href=\""...)
	b, ok = appendURL(b, ok, r.Href)
	b = append(b, `">Details and rollback<span class="sr-only"> of `...)
	// Label, as it joins them: both were written escaped above, and are
	// copied.
	b = append(b, b[name:nameEnd]...)
	b = append(b, " at "...)
	b = append(b, b[exact:exactEnd]...)
	b = append(b, "</span></a></td></tr>\n"...)
	if ok {
		dst.Write(b)
	}
	return ok
}

// appendText appends v to b escaped for text or a quoted attribute
// value, as the template escapes it, and reports whether it could
// vouch for it; once ok is false, nothing more is asked (what is written
// after that no longer matters).
//
// template.HTMLEscapeString replaces NUL, both quotes, '&', '<' and '>'
// as html/template's escaper does and leaves every other byte (invalid
// UTF-8 included) as it is; the template also replaces '+', which is
// written as the template spells it (plus, "" when not known). Both
// escape a character at a time, so a value is escaped piece by piece
// between its '+'. A value of bytes neither touches (most of a row's:
// times, names, ids) is written without asking.
func appendText(b []byte, ok bool, v, plus string) ([]byte, bool) {
	if !ok {
		return b, false
	}
	i := 0
	for i < len(v) && plainBytes[v[i]] {
		i++
	}
	if i == len(v) {
		return append(b, v...), true
	}
	switch {
	case strings.IndexByte(v[i:], '+') < 0:
		return append(b, template.HTMLEscapeString(v)...), true
	case plus == "":
		return b, false
	}
	// Times in a zone east of UTC without a name ("+04") hold one.
	for {
		before, after, found := strings.Cut(v, "+")
		b = append(b, template.HTMLEscapeString(before)...)
		if !found {
			return b, true
		}
		b = append(b, plus...)
		v = after
	}
}

// plusOf is '+' as the templates t escape it in text and quoted
// attributes (the row's "plus" template prints one), for appendText.
func plusOf(t *template.Template) (string, error) {
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "plus", nil); err != nil {
		return "", fmt.Errorf("escaped plus: %w", err)
	}
	return b.String(), nil
}

// appendURL appends u, in a quoted href, when html/template prints it as
// u itself, and reports whether it did (see appendText for ok). Its URL
// filter keeps a URL whose scheme is http or https, or that has none (a
// path); starting with "/", "http://" or "https://" is a narrower sure
// sign. Its normaliser keeps letters, digits, "-._~!#$&*+,/:;=?@[]" and
// a '%' with two hex digits after it (what url.PathEscape and
// url.QueryEscape write), and its attribute escaper keeps all of those
// but '&' and '+'. Any other URL is refused.
func appendURL(b []byte, ok bool, u string) ([]byte, bool) {
	if !ok || !strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return b, false
	}
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case urlByte(c):
		case c == '%' && i+2 < len(u) && isHexDigit(u[i+1]) && isHexDigit(u[i+2]):
		default:
			return b, false
		}
	}
	return append(b, u...), true
}

// asciiSet has bit c%64 of lo set for each byte c below 64 in the set, and
// bit c%64 of hi for each from 64 to 127.
type asciiSet struct{ lo, hi uint64 }

// has reports whether the ASCII byte c is in s.
func (s asciiSet) has(c byte) bool {
	if c < 64 {
		return s.lo>>c&1 == 1
	}
	return s.hi>>(c-64)&1 == 1
}

// urlLo and urlHi are the bytes a URL in an href keeps as they are:
// letters, digits and -._~!#$*,/:;=?@[] .
const (
	urlLo uint64 = 0x3ff<<'0' | 1<<'-' | 1<<'.' | 1<<'!' | 1<<'#' | 1<<'$' | 1<<'*' | 1<<',' | 1<<'/' | 1<<':' | 1<<';' | 1<<'=' | 1<<'?'
	urlHi uint64 = 0x3ffffff<<('A'-64) | 0x3ffffff<<('a'-64) | 1<<('_'-64) | 1<<('~'-64) | 1<<('@'-64) | 1<<('['-64) | 1<<(']'-64)
)

func urlByte(c byte) bool { return c < 0x80 && asciiSet{urlLo, urlHi}.has(c) }

// plainLo and plainHi are the ASCII bytes no escaper of HTML touches:
// letters, digits, space and ()-,./:_ .
const (
	plainLo uint64 = 1<<' ' | 1<<'(' | 1<<')' | 1<<',' | 1<<'-' | 1<<'.' | 1<<'/' | 0x3ff<<'0' | 1<<':'
	plainHi uint64 = 0x3ffffff<<('A'-64) | 1<<('_'-64) | 0x3ffffff<<('a'-64)
)

// plainByte reports whether both escapers leave c as it is: an ASCII byte
// of plainLo and plainHi, or a byte of multi-byte (or invalid) UTF-8.
func plainByte(c byte) bool { return c >= 0x80 || asciiSet{plainLo, plainHi}.has(c) }

// plainBytes is plainByte of every byte, looked up: a row's values are
// read a byte at a time, some 150 bytes a row.
var plainBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = plainByte(byte(c))
	}
	return t
}()

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
