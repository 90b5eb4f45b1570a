package web

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestAuditPageRowsAreAsBefore: the audit table prints each row exactly as
// it did when every row was described from its parameters at read time,
// for rows that store what they show and for rows written before that was
// stored, and whichever way the row shows its call (text, a post, an
// account, nothing).
func TestAuditPageRowsAreAsBefore(t *testing.T) {
	s := newSite(t, func(c *config.Config) {
		c.ApprovalMode, c.Mode, c.MCPPolicy.RequireApprovalFor, c.MCPPolicy.RequireApprovalForSet = false, "autopilot", nil, true
	})
	ctx := t.Context()
	liked := s.post("gopher_gabe", "like me")
	for _, c := range []gateway.Call{
		{Tool: "x_like_tweet", Caller: "mcp", Params: map[string]any{"tweet_id": liked}},
		{Tool: "x_post_tweet", Caller: "cli", Params: map[string]any{"text": `<b>hi</b> & "q" ` + strings.Repeat("long ", 40)}},
	} {
		resp, err := s.a.Gateway.Do(ctx, c)
		if err == nil && c.Tool == "x_like_tweet" && resp.Kind == gateway.Routed {
			// An agent's like waits for a person (X's automation rules).
			_, resp, err = s.a.Gateway.Approve(ctx, resp.ApprovalID, "web", "")
		}
		if err != nil || resp.Kind != gateway.Executed {
			t.Fatalf("%s: %+v %v", c.Tool, resp, err)
		}
	}
	// Rows as an older version wrote them: nothing but their parameters.
	for _, r := range []struct{ tool, equiv, summary, status, caller, resolution string }{
		{"x_reply_to_tweet", "", `{"text":"an old reply","in_reply_to_id":"5"}`, "unknown", "autopilot", "happened"},
		{"x_delete", "x_delete_tweet", `{"method":"DELETE","host":"api.x.com","path":"/2/tweets/88"}`, "failure", "cli", ""},
		{"x_unfollow_user", "", `{"target_user_id":"66"}`, "success", "web", ""},
		{"x_list_create", "", `{"name":"<friends>"}`, "success", "mcp", ""},
	} {
		if _, err := s.a.DB.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, equivalent_tool, params_hash, params_summary,
			status, account_id, caller, created_at, resolution) VALUES (?, ?, NULLIF(?, ''), ?, ?, ?, 'default', ?, '', NULLIF(?, ''))`,
			"old-"+r.tool, r.tool, r.equiv, "h"+r.tool, r.summary, r.status, r.caller, r.resolution); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.a.DB.ExecContext(ctx, `UPDATE mutation_audit SET correlation_id = 'c' || id, created_at = '2026-01-01T00:00:00.000Z'`); err != nil {
		t.Fatal(err)
	}
	es, err := s.a.Gateway.Recent(ctx, gateway.AuditFilter{Limit: 100, Brief: true})
	if err != nil {
		t.Fatal(err)
	}
	at := rowsAt{base: "/ui", acct: "brand_b", now: time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC), postURL: func(id string) string { return "/ui/posts/" + id }}
	got := auditPage(t, s, es, at)
	got = got[strings.Index(got, "<tbody>"):strings.Index(got, "</tbody>")]
	exact := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Local().Format("Mon 2 Jan 2006, 15:04:05 MST")
	want := strings.NewReplacer("EXACT", exact, "LIKED", liked).Replace(wantAuditRows)
	if got != want {
		t.Errorf("the rows are printed\n%s\nwant\n%s", got, want)
	}
}

// wantAuditRows is the table's body as the page printed it before rows
// stored what they show (EXACT and LIKED stand for the time in this
// machine's zone and the liked post's id). The like, an agent's, ran when a
// person approved it, and its row says who.
const wantAuditRows = `<tbody>
<tr><td data-label="When"><time datetime="2026-01-01T00:00:00.000Z" title="EXACT">3 h ago</time></td><td class="what" data-label="What"><strong>Create list</strong> <span class="tool">x_list_create</span></td><td data-label="Status" class="status-success">success</td><td data-label="Asked by">mcp</td>
<td><a href="/ui/audit/c6?account=brand_b">Details and rollback<span class="sr-only"> of Create list at EXACT</span></a></td></tr>
<tr><td data-label="When"><time datetime="2026-01-01T00:00:00.000Z" title="EXACT">3 h ago</time></td><td class="what" data-label="What"><strong>Unfollow</strong> <span class="tool">x_unfollow_user</span><br>user 66</td><td data-label="Status" class="status-success">success</td><td data-label="Asked by">web</td>
<td><a href="/ui/audit/c5?account=brand_b">Details and rollback<span class="sr-only"> of Unfollow at EXACT</span></a></td></tr>
<tr><td data-label="When"><time datetime="2026-01-01T00:00:00.000Z" title="EXACT">3 h ago</time></td><td class="what" data-label="What"><strong>Delete post</strong> <span class="tool">x_delete</span><br><a href="/ui/posts/88">post 88</a></td><td data-label="Status" class="status-failure">failure</td><td data-label="Asked by">cli</td>
<td><a href="/ui/audit/c4?account=brand_b">Details and rollback<span class="sr-only"> of Delete post at EXACT</span></a></td></tr>
<tr><td data-label="When"><time datetime="2026-01-01T00:00:00.000Z" title="EXACT">3 h ago</time></td><td class="what" data-label="What"><strong>Reply</strong> <span class="tool">x_reply_to_tweet</span><br><span class="said">an old reply</span></td><td data-label="Status" class="status-unknown">unknown (happened)</td><td data-label="Asked by">autopilot</td>
<td><a href="/ui/audit/c3?account=brand_b">Details and rollback<span class="sr-only"> of Reply at EXACT</span></a></td></tr>
<tr><td data-label="When"><time datetime="2026-01-01T00:00:00.000Z" title="EXACT">3 h ago</time></td><td class="what" data-label="What"><strong>Post</strong> <span class="tool">x_post_tweet</span><br><span class="said">&lt;b&gt;hi&lt;/b&gt; &amp; &#34;q&#34; long long long long long long long long long long long long long long long long long long long long long long long long long long long long lon…</span></td><td data-label="Status" class="status-success">success</td><td data-label="Asked by">cli</td>
<td><a href="/ui/audit/c2?account=brand_b">Details and rollback<span class="sr-only"> of Post at EXACT</span></a></td></tr>
<tr><td data-label="When"><time datetime="2026-01-01T00:00:00.000Z" title="EXACT">3 h ago</time></td><td class="what" data-label="What"><strong>Like</strong> <span class="tool">x_like_tweet</span><br><a href="/ui/posts/LIKED">post LIKED</a></td><td data-label="Status" class="status-success">success</td><td data-label="Asked by">mcp<br><span class="decided">approved by web</span></td>
<td><a href="/ui/audit/c1?account=brand_b">Details and rollback<span class="sr-only"> of Like at EXACT</span></a></td></tr>
`

// auditPage prints the audit page of entries es as the handler does.
func auditPage(t *testing.T, s *site, es []gateway.AuditEntry, at rowsAt) string {
	t.Helper()
	p := page{Data: auditData{Rows: len(es) > 0}}
	var b bytes.Buffer
	if err := s.srv.tmpl.ExecuteTemplate(&b, "audit", p); err != nil {
		t.Fatal(err)
	}
	if err := s.srv.auditRest(p, es, at)(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestAuditRowsFollowTheRow: a row shows what its entry is when the page
// is shown (its status, its time as shown, what it did, the account it
// is shown on), whatever the page showed before: nothing printed is kept.
func TestAuditRowsFollowTheRow(t *testing.T) {
	s := newSite(t, nil)
	now := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	row := gateway.AuditEntry{CorrelationID: "c1", Tool: "x_like_tweet", Status: "unknown", Caller: "mcp", CreatedAt: "2026-01-01T00:00:00.000Z",
		Shown: describe.Recorded{Name: "Like", Target: describe.Target{Kind: describe.KindPost, ID: "5"}}}
	resolved := row
	resolved.Resolution = "happened"
	other := row
	other.Shown.Target.ID = "6"
	at := rowsAt{now: now, postURL: func(id string) string { return "/posts/" + id }}
	later, elsewhere := at, at
	later.now = now.Add(time.Hour)
	elsewhere.acct = "brand_b"
	for _, tc := range []struct {
		name string
		row  gateway.AuditEntry
		at   rowsAt
		want string
	}{
		{"as first printed", row, at, `<td data-label="Status" class="status-unknown">unknown</td>`},
		{"once resolved", resolved, at, `<td data-label="Status" class="status-unknown">unknown (happened)</td>`},
		{"an hour later", row, later, `>4 h ago</time>`},
		{"on another post", other, at, `<a href="/posts/6">post 6</a>`},
		{"on another account", row, elsewhere, `href="/audit/c1?account=brand_b"`},
		{"as first printed again", row, at, `>3 h ago</time>`},
	} {
		var body bytes.Buffer
		if err := auditRows(&body, s.srv.tmpl, []gateway.AuditEntry{tc.row}, tc.at); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(body.String(), tc.want) {
			t.Errorf("%s: the row prints %s, want it to hold %s", tc.name, body.String(), tc.want)
		}
	}
}
