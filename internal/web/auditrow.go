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

// writeAuditRow appends row r to b as the "auditrow" template prints it,
// markup for markup, and reports whether it did; it leaves b as it was
// when a value printed is one it cannot vouch for.
//
// The template escapes its text and quoted attribute values (class and
// title included) with html/template's HTML escaper, and its hrefs with
// its URL filter, URL normaliser and attribute escaper. Here a text or
// attribute value is escaped by template.HTMLEscapeString and plus, the
// template's own spelling of '+' (see rowWriter.text), and a URL is
// written as it is when each of those three provably leaves it so (see
// rowWriter.url). FuzzAuditRow holds the two printers to the same bytes.
func writeAuditRow(b *bytes.Buffer, r *auditRow, plus string) bool {
	// The row is appended to b's room, then written whole: appends cost
	// less than a write for each piece.
	w := rowWriter{buf: b.AvailableBuffer(), ok: true, plus: plus}
	w.raw(`<tr><td data-label="When"><time datetime="`)
	w.text(r.At)
	w.raw(`" title="`)
	exact := len(w.buf)
	w.text(r.Exact)
	exactEnd := len(w.buf)
	w.raw(`">`)
	w.text(r.Rel)
	w.raw(`</time></td><td class="what" data-label="What"><strong>`)
	name := len(w.buf)
	w.text(r.Name)
	nameEnd := len(w.buf)
	w.raw(`</strong> <span class="tool">`)
	w.text(r.Tool)
	w.raw(`</span>`)
	// The template shows the first of Said, PostURL (with PostID) and
	// Target that is set.
	switch {
	case r.Said != "":
		w.raw(`<br><span class="said">`)
		w.text(r.Said)
		w.raw(`</span>`)
	case r.PostURL != "":
		w.raw(`<br><a href="`)
		w.url(r.PostURL)
		w.raw(`">post `)
		w.text(r.PostID)
		w.raw(`</a>`)
	case r.Target != "":
		w.raw(`<br>`)
		w.text(r.Target)
	}
	w.raw(`</td><td data-label="Status" class="status-`)
	w.text(r.Status)
	w.raw(`">`)
	w.text(r.StatusText)
	w.raw(`</td><td data-label="Asked by">`)
	w.text(r.Caller)
	if r.DecidedBy != "" {
		w.raw(`<br><span class="decided">approved by `)
		w.text(r.DecidedBy)
		w.raw(`</span>`)
	}
	w.raw("</td>\n<td><a href=\"")
	w.url(r.Href)
	w.raw(`">Details and rollback<span class="sr-only"> of `)
	// Label, as it joins them: both were written escaped above, and are
	// copied.
	w.buf = append(w.buf, w.buf[name:nameEnd]...)
	w.raw(" at ")
	w.buf = append(w.buf, w.buf[exact:exactEnd]...)
	w.raw("</span></a></td></tr>\n")
	if w.ok {
		b.Write(w.buf)
	}
	return w.ok
}

// rowWriter appends a row's markup and values to buf, escaped as the
// template escapes them, as long as it can: ok turns false at the first
// value it cannot vouch for, and what is written after that no longer
// matters.
type rowWriter struct {
	buf []byte
	ok  bool
	// plus is '+' as the template escapes it ("" when not known).
	plus string
}

// raw appends the row's own markup.
func (w *rowWriter) raw(s string) { w.buf = append(w.buf, s...) }

// text writes v escaped for text or a quoted attribute value.
// template.HTMLEscapeString replaces NUL, both quotes, '&', '<' and '>'
// as html/template's escaper does and leaves every other byte (invalid
// UTF-8 included) as it is; the template also replaces '+', which is
// written as the template spells it. Both escape a character at a time,
// so a value is escaped piece by piece between its '+'. A value of bytes
// neither touches (most of a row's: times, names, ids) is written
// without asking.
func (w *rowWriter) text(v string) {
	i := 0
	for i < len(v) && plainBytes[v[i]] {
		i++
	}
	if i == len(v) {
		w.buf = append(w.buf, v...)
		return
	}
	switch plus := strings.IndexByte(v[i:], '+') >= 0; {
	case !plus:
		w.buf = append(w.buf, template.HTMLEscapeString(v)...)
	case w.plus == "":
		w.ok = false
	default:
		// Times in a zone east of UTC without a name ("+04") hold one.
		for {
			before, after, found := strings.Cut(v, "+")
			w.buf = append(w.buf, template.HTMLEscapeString(before)...)
			if !found {
				break
			}
			w.buf = append(w.buf, w.plus...)
			v = after
		}
	}
}

// plusOf is '+' as the templates t escape it in text and quoted
// attributes (the row's "plus" template prints one), for rowWriter.
func plusOf(t *template.Template) (string, error) {
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "plus", nil); err != nil {
		return "", fmt.Errorf("escaped plus: %w", err)
	}
	return b.String(), nil
}

// url writes u, in a quoted href, when html/template prints it as u
// itself. Its URL filter keeps a URL whose scheme is http or https, or
// that has none (a path); starting with "/", "http://" or "https://" is
// a narrower sure sign. Its normaliser keeps letters, digits,
// "-._~!#$&*+,/:;=?@[]" and a '%' with two hex digits after it (what
// url.PathEscape and url.QueryEscape write), and its attribute escaper
// keeps all of those but '&' and '+'. Any other URL is refused.
func (w *rowWriter) url(u string) {
	if !strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		w.ok = false
		return
	}
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case urlByte(c):
		case c == '%' && i+2 < len(u) && isHexDigit(u[i+1]) && isHexDigit(u[i+2]):
		default:
			w.ok = false
			return
		}
	}
	w.buf = append(w.buf, u...)
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
