package web

import (
	"bytes"
	"html/template"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// rowTemplate is the site's templates, for the "auditrow" template.
func rowTemplate(t testing.TB) *template.Template {
	t.Helper()
	tmpl, err := parseTemplates("/ui", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// rowPlus is '+' as the templates tmpl escape it.
func rowPlus(t testing.TB, tmpl *template.Template) string {
	t.Helper()
	plus, err := plusOf(tmpl)
	if err != nil || plus == "" {
		t.Fatalf("plus: %q %v", plus, err)
	}
	return plus
}

// templateRow is row r as the "auditrow" template prints it.
func templateRow(t testing.TB, tmpl *template.Template, r *auditRow) string {
	t.Helper()
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, "auditrow", r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// FuzzAuditRow: whatever a row's values, the row printed without the
// template is byte for byte the template's, and printAuditRow (which
// falls back to the template) prints the template's bytes too. The
// corpus in testdata/fuzz/FuzzAuditRow holds the values that matter to
// the escapers: quotes, '<', '&', '+', NUL, invalid UTF-8, unicode,
// javascript: and other schemes, '%' escapes whole and cut short. Each
// row is tried with no decider and with the caller's value as decider.
func FuzzAuditRow(f *testing.F) {
	tmpl := rowTemplate(f)
	plus := rowPlus(f, tmpl)
	f.Fuzz(func(t *testing.T, at, exact, rel, name, tool, said, postURL, postID, target, status, statusText, caller, href string) {
		for _, decided := range []string{"", caller} {
			r := auditRow{At: at, Exact: exact, Rel: rel, Name: name, Tool: tool, Said: said, PostURL: postURL, PostID: postID,
				Target: target, Status: status, StatusText: statusText, Caller: caller, DecidedBy: decided, Href: href}
			checkAuditRow(t, tmpl, plus, &r)
		}
	})
}

// checkAuditRow checks that r is written and printed as the template
// prints it.
func checkAuditRow(t *testing.T, tmpl *template.Template, plus string, r *auditRow) {
	t.Helper()
	want := templateRow(t, tmpl, r)
	// With '+' as the template spells it, and without (refusing it).
	for _, p := range []string{plus, ""} {
		var b bytes.Buffer
		if writeAuditRow(&b, r, p) && b.String() != want {
			t.Errorf("row %+v is written\n%q\nthe template prints\n%q", r, b.String(), want)
		}
		b.Reset()
		if err := printAuditRow(&b, tmpl, p, r); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("row %+v is printed\n%q\nthe template prints\n%q", r, b.String(), want)
		}
	}
}

// TestAuditRowIsWrittenWithoutTheTemplate: the rows the audit page shows
// (escaped text, escaped ids in links, posts on X and in the sandbox,
// another account) are written without the template, as it prints them.
func TestAuditRowIsWrittenWithoutTheTemplate(t *testing.T) {
	tmpl := rowTemplate(t)
	plus := rowPlus(t, tmpl)
	now := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	onX := rowsAt{base: "/ui", now: now, postURL: func(id string) string { return "https://x.com/i/web/status/" + id }}
	sandbox := rowsAt{base: "/ui", acct: "brand_b/é", now: now, postURL: func(id string) string { return "/ui/posts/" + id + "?account=brand_b" }}
	entry := func(corr, tool, status, resolution string, shown describe.Recorded) *gateway.AuditEntry {
		return &gateway.AuditEntry{CorrelationID: corr, Tool: tool, Status: status, Resolution: resolution, Caller: "mcp",
			CreatedAt: "2026-01-01T00:00:00.000Z", Shown: shown}
	}
	for _, tc := range []struct {
		name string
		e    *gateway.AuditEntry
		at   rowsAt
	}{
		{"text with markup", entry("c1", "x_post_tweet", "success", "", describe.Recorded{Name: "Post", Text: `<b>hi</b> & "q" 'x' é ✓`}), onX},
		{"a post on X", entry("c2", "x_like_tweet", "success", "", describe.Recorded{Name: "Like", Target: describe.Target{Kind: describe.KindPost, ID: "123"}}), onX},
		{"a post in the sandbox", entry("c3", "x_like_tweet", "unknown", "happened", describe.Recorded{Name: "Like", Target: describe.Target{Kind: describe.KindPost, ID: "9"}}), sandbox},
		{"an account", entry("c4", "x_follow_user", "failure", "", describe.Recorded{Name: "Follow", Target: describe.Target{Kind: describe.KindUser, ID: "66"}}), onX},
		{"nothing shown", entry("c5", "x_list_create", "success", "", describe.Recorded{Name: "Create list"}), onX},
		{"an escaped id", entry(`a"b/<c> d`, "x_like_tweet", "<pending>", "", describe.Recorded{Name: "Like <it>"}), sandbox},
		{"a time not read", &gateway.AuditEntry{CorrelationID: "c6", Tool: "x_like_tweet", Status: "success", CreatedAt: `"soon" <now>`}, onX},
		{"pluses", entry("c7", "x_post_tweet", "success", "", describe.Recorded{Name: "Post", Text: "C++ & Go: 1+1 <b>+</b>"}), onX},
		{"an approved call", &gateway.AuditEntry{CorrelationID: "c9", Tool: "x_post_tweet", Status: "success", Caller: "autopilot",
			DecidedBy: "link:<phone> & \"co\"", CreatedAt: "2026-01-01T00:00:00.000Z", Shown: describe.Recorded{Name: "Post", Text: "hi"}}, onX},
		{"a time east of UTC with no zone name", &gateway.AuditEntry{CorrelationID: "c8", Tool: "x_like_tweet", Status: "a+b",
			CreatedAt: "2026-01-01T00:00:00+04:00", Resolution: "+"}, onX},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := auditRowOf(tc.e, tc.at)
			want := templateRow(t, tmpl, &r)
			var b bytes.Buffer
			if !writeAuditRow(&b, &r, plus) {
				t.Fatalf("row %+v is left to the template", r)
			}
			if b.String() != want {
				t.Errorf("the row is written\n%s\nthe template prints\n%s", b.String(), want)
			}
		})
	}
}

// TestAuditRowFallsBackToTheTemplate: a row with a link the template may
// filter or normalise, or with a '+' when its spelling is not known, is
// left to the template, and printed as it prints it.
func TestAuditRowFallsBackToTheTemplate(t *testing.T) {
	tmpl := rowTemplate(t)
	plus := rowPlus(t, tmpl)
	base := auditRow{At: "2026-01-01T00:00:00.000Z", Exact: "Thu 1 Jan 2026, 00:00:00 UTC", Rel: "3 h ago", Name: "Like", Tool: "x_like_tweet",
		PostURL: "https://x.com/i/web/status/5", PostID: "5", Status: "success", StatusText: "success", Caller: "mcp",
		Href: "/ui/audit/c1"}
	for _, tc := range []struct {
		name string
		edit func(r *auditRow)
	}{
		{"a javascript link", func(r *auditRow) { r.PostURL = "javascript:alert(1)" }},
		{"a javascript link of safe characters", func(r *auditRow) { r.PostURL = "javascript:alert%281%29" }},
		{"a link of another scheme", func(r *auditRow) { r.PostURL = "data:text/html,x" }},
		{"an upper-case scheme", func(r *auditRow) { r.PostURL = "HTTPS://x.com/5" }},
		{"a relative link", func(r *auditRow) { r.PostURL = "posts/5" }},
		{"a link with a quote", func(r *auditRow) { r.PostURL = `/ui/posts/5?"` }},
		{"a link with an ampersand", func(r *auditRow) { r.Href = "/ui/audit/c1?a=1&account=b" }},
		{"a link with a plus", func(r *auditRow) { r.Href = "/ui/audit/c1?account=brand+b" }},
		{"a link with a space", func(r *auditRow) { r.Href = "/ui/audit/c 1" }},
		{"a link with a percent cut short", func(r *auditRow) { r.Href = "/ui/audit/c1%2" }},
		{"a link with a percent not hex", func(r *auditRow) { r.Href = "/ui/audit/c1%zz" }},
		{"a link with unicode", func(r *auditRow) { r.PostURL = "/ui/posts/é" }},
		{"a link with NUL", func(r *auditRow) { r.Href = "/ui/audit/c\x001" }},
		{"an empty details link", func(r *auditRow) { r.Href = "" }},
		{"a plus not known", func(r *auditRow) { r.Said = "C++" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			tc.edit(&r)
			plus := plus
			if tc.name == "a plus not known" {
				plus = ""
			}
			var b bytes.Buffer
			if writeAuditRow(&b, &r, plus) {
				t.Fatalf("row %+v is written without the template", r)
			}
			if b.Len() != 0 {
				t.Fatalf("a row left to the template wrote %q", b.String())
			}
			if err := printAuditRow(&b, tmpl, plus, &r); err != nil {
				t.Fatal(err)
			}
			if want := templateRow(t, tmpl, &r); b.String() != want {
				t.Errorf("the row is printed\n%s\nthe template prints\n%s", b.String(), want)
			}
		})
	}
}

// TestPlainBytesAreLeftByBothEscapers: every byte a row writes without
// asking template.HTMLEscapeString is one that it, and html/template in
// text and in quoted attributes, leave as it is.
func TestPlainBytesAreLeftByBothEscapers(t *testing.T) {
	tmpl := template.Must(template.New("").Parse(`{{.}}|<a title="{{.}}" class="x-{{.}}">`))
	n := 0
	for c := 0; c < 256; c++ {
		if !plainByte(byte(c)) {
			continue
		}
		n++
		s := "a" + string([]byte{byte(c)}) + "b"
		var b bytes.Buffer
		if err := tmpl.Execute(&b, s); err != nil {
			t.Fatal(err)
		}
		if want := s + `|<a title="` + s + `" class="x-` + s + `">`; b.String() != want || template.HTMLEscapeString(s) != s {
			t.Errorf("byte %#x is taken for plain, and an escaper changes it: %q, %q", c, b.String(), template.HTMLEscapeString(s))
		}
	}
	// Letters, digits, space, ()-,./:_ and the 128 bytes from 0x80.
	if n != 52+10+9+128 {
		t.Errorf("%d bytes are plain", n)
	}
}

// TestURLBytesAreKeptInAnHref: every byte a row writes in a link as it
// is, html/template keeps as it is in an href.
func TestURLBytesAreKeptInAnHref(t *testing.T) {
	tmpl := template.Must(template.New("").Parse(`<a href="{{.}}">`))
	n := 0
	for c := 0; c < 256; c++ {
		if !urlByte(byte(c)) {
			continue
		}
		n++
		u := "/a" + string([]byte{byte(c)}) + "b"
		var b bytes.Buffer
		if err := tmpl.Execute(&b, u); err != nil {
			t.Fatal(err)
		}
		if want := `<a href="` + u + `">`; b.String() != want {
			t.Errorf("byte %#x is kept in a link, and the template prints %q", c, b.String())
		}
	}
	// Letters, digits and -._~!#$*,/:;=?@[] .
	if n != 52+10+17 {
		t.Errorf("%d bytes are kept in links", n)
	}
}
