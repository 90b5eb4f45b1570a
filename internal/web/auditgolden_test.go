package web

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite the audit page's golden file")

// TestAuditPageIsAsItsGolden: the audit page, as a person opens it and
// with a filter, prints byte for byte what testdata/auditpage.golden
// holds, for rows whose values a browser must not take for markup
// (quotes, tags, '+', '&', right-to-left text, emoji, long text, ids
// that need escaping in a URL), so that a faster printer of the page
// cannot change a byte of it. The page also says how long it is.
func TestAuditPageIsAsItsGolden(t *testing.T) {
	s := newSite(t, nil)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s.srv.d.Now = func() time.Time { return now }
	ctx := context.Background()
	long := strings.Repeat("long text ", 40)
	for i, r := range []struct{ corr, tool, summary, status, caller, resolution, at string }{
		{"c-quote", "x_post_tweet", `{"text":"she said \"hi\" & 'bye' <b>bold</b>"}`, "success", "mcp", "", "2026-03-01T11:59:30.000Z"},
		{"c-script", "x_post_tweet", `{"text":"<script>alert(1)</script>"}`, "failure", `"><script>alert(2)</script>`, "", "2026-03-01T11:00:00.000Z"},
		{"c rtl/é?&#", "x_reply_to_tweet", `{"text":"مرحبا بالعالم \u202e reversed","in_reply_to_id":"7"}`, "unknown", "autopilot", `happened <i>"yes"</i>`, "2026-02-28T12:00:00.000Z"},
		{"c-emoji", "x_post_tweet", `{"text":"🎉👩‍👩‍👧 party + fun = 1+1"}`, "success", "cli+web", "", "2026-03-01T12:00:00+04:00"},
		{"c-long", "x_post_tweet", `{"text":"` + long + `"}`, "success", "web", "", "2026-01-01T00:00:00.000Z"},
		{"c-like", "x_like_tweet", `{"tweet_id":"12345"}`, "success", "mcp", "", "2026-03-01T11:58:00.000Z"},
		{"c-user", "x_follow_user", `{"target_user_id":"42"}`, "interrupted", "mcp", "did_not_happen", "not a time"},
		{"c-tool", "x_<odd>&\"tool\"+", `{"x":"y"}`, "pending", "mcp", "", "2026-03-01T11:59:59.999Z"},
	} {
		if _, err := s.a.DB.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary,
			status, account_id, caller, created_at, resolution) VALUES (?, ?, ?, ?, ?, 'default', ?, ?, NULLIF(?, ''))`,
			r.corr, r.tool, "h"+strconv.Itoa(i), r.summary, r.status, r.caller, r.at, r.resolution); err != nil {
			t.Fatalf("insert %s: %v", r.corr, err)
		}
	}
	var got strings.Builder
	for _, path := range []string{"/audit", "/audit?status=success&q=%22", "/audit?account=brand_b&caller=nobody"} {
		rec := s.loggedInGet(t, path, "golden-csrf")
		body := rec.Body.String()
		if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(len(body)) {
			t.Errorf("GET %s: Content-Length %q, the page is %d bytes", path, cl, len(body))
		}
		got.WriteString("==== GET " + path + "\n" + body)
	}
	// What differs from one machine or run to the next: the sandbox's
	// port and the times in this machine's zone.
	text := strings.ReplaceAll(got.String(), s.a.Sim.URL, "SANDBOX")
	for _, at := range []string{"2026-03-01T11:59:30Z", "2026-03-01T11:00:00Z", "2026-02-28T12:00:00Z", "2026-03-01T12:00:00+04:00",
		"2026-01-01T00:00:00Z", "2026-03-01T11:58:00Z", "2026-03-01T11:59:59.999Z"} {
		tm, err := time.Parse(time.RFC3339, at)
		if err != nil {
			t.Fatal(err)
		}
		// As written, and as escaped where a zone's name holds a '+'.
		exact := tm.Local().Format(exactLayout)
		text = strings.ReplaceAll(text, strings.ReplaceAll(exact, "+", "&#43;"), "EXACT("+at+")")
	}
	golden := filepath.Join("testdata", "auditpage.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if text != string(want) {
		t.Errorf("the audit page is not as %s; got\n%s", golden, text)
	}
	for _, bad := range []string{"<script>alert", "<b>", "<i>", `"><script`, `"hi"`, `"yes"`} {
		if strings.Contains(text, bad) {
			t.Errorf("the page prints %q unescaped", bad)
		}
	}
}
