package web

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
)

// printAuditRow appends row r to b exactly as the "auditrow" template of
// t prints it. Most rows are written by writeAuditRow, which costs a
// fraction of the template's reflection; a row it cannot prove it prints
// as the template does goes through the template, which stays the
// definition of the row.
func printAuditRow(b *bytes.Buffer, t *template.Template, r *auditRow) error {
	if writeAuditRow(b, r) {
		return nil
	}
	if err := t.ExecuteTemplate(b, "auditrow", r); err != nil {
		return fmt.Errorf("print audit row: %w", err)
	}
	return nil
}

// writeAuditRow appends row r to b as the "auditrow" template prints it,
// markup for markup, and reports whether it did; it writes nothing when
// a value printed is one it cannot vouch for.
//
// The template escapes its text and quoted attribute values (class and
// title included) with html/template's HTML escaper, and its hrefs with
// its URL filter, URL normaliser and attribute escaper. Here a text or
// attribute value is escaped by template.HTMLEscapeString, the same
// replacements but for '+', which the template writes "&#43;": a value
// holding one is left to the template. A URL is written as it is when
// each of those three provably leaves it so (see verbatimURL).
// FuzzAuditRow holds the two printers to the same bytes.
func writeAuditRow(b *bytes.Buffer, r *auditRow) bool {
	// Only what the row prints is checked: the template shows the first
	// of Said, PostURL (with PostID) and Target that is set.
	var said, post, target bool
	switch {
	case r.Said != "":
		said = true
	case r.PostURL != "":
		post = true
	case r.Target != "":
		target = true
	}
	if !escapedAlike(r.At, r.Exact, r.Rel, r.Name, r.Tool, r.Status, r.StatusText, r.Caller, r.Label) || !verbatimURL(r.Href) ||
		said && !escapedAlike(r.Said) || post && (!verbatimURL(r.PostURL) || !escapedAlike(r.PostID)) || target && !escapedAlike(r.Target) {
		return false
	}
	esc := template.HTMLEscapeString
	b.WriteString(`<tr><td data-label="When"><time datetime="`)
	b.WriteString(esc(r.At))
	b.WriteString(`" title="`)
	b.WriteString(esc(r.Exact))
	b.WriteString(`">`)
	b.WriteString(esc(r.Rel))
	b.WriteString(`</time></td><td class="what" data-label="What"><strong>`)
	b.WriteString(esc(r.Name))
	b.WriteString(`</strong> <span class="tool">`)
	b.WriteString(esc(r.Tool))
	b.WriteString(`</span>`)
	switch {
	case said:
		b.WriteString(`<br><span class="said">`)
		b.WriteString(esc(r.Said))
		b.WriteString(`</span>`)
	case post:
		b.WriteString(`<br><a href="`)
		b.WriteString(r.PostURL)
		b.WriteString(`">post `)
		b.WriteString(esc(r.PostID))
		b.WriteString(`</a>`)
	case target:
		b.WriteString(`<br>`)
		b.WriteString(esc(r.Target))
	}
	b.WriteString(`</td><td data-label="Status" class="status-`)
	b.WriteString(esc(r.Status))
	b.WriteString(`">`)
	b.WriteString(esc(r.StatusText))
	b.WriteString(`</td><td data-label="Asked by">`)
	b.WriteString(esc(r.Caller))
	b.WriteString("</td>\n<td><a href=\"")
	b.WriteString(r.Href)
	b.WriteString(`">Details and rollback<span class="sr-only"> of `)
	b.WriteString(esc(r.Label))
	b.WriteString("</span></a></td></tr>\n")
	return true
}

// escapedAlike reports whether template.HTMLEscapeString escapes each of
// vs as html/template escapes it in text and in a quoted attribute. Both
// replace NUL, both quotes, '&', '<' and '>' alike and leave every other
// byte, invalid UTF-8 included, as it is; only the template also
// replaces '+'.
func escapedAlike(vs ...string) bool {
	for _, v := range vs {
		if strings.IndexByte(v, '+') >= 0 {
			return false
		}
	}
	return true
}

// verbatimURL reports whether html/template prints u in a quoted href as
// u itself. Its URL filter keeps a URL whose scheme is http or https, or
// that has none (a path); starting with "/", "http://" or "https://" is
// a narrower sure sign. Its normaliser keeps letters, digits,
// "-._~!#$&*+,/:;=?@[]" and a '%' with two hex digits after it (what
// url.PathEscape and url.QueryEscape write), and its attribute escaper
// keeps all of those but '&' and '+', which are refused here.
func verbatimURL(u string) bool {
	if !strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return false
	}
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~!#$*,/:;=?@[]", c) >= 0:
		case c == '%' && i+2 < len(u) && isHexDigit(u[i+1]) && isHexDigit(u[i+2]):
		default:
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
