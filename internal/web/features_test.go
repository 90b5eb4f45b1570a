package web

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// queueReply has the default account's gateway queue a reply to tweetID.
func (s *site) queueReply(a *gateway.Gateway, tweetID, text string) int64 {
	s.t.Helper()
	resp, err := a.Do(context.Background(), gateway.Call{Tool: "x_reply_to_tweet", Caller: "mcp",
		Params: map[string]any{"text": text, "in_reply_to_id": tweetID}})
	if err != nil || resp.Kind != gateway.Routed {
		s.t.Fatalf("reply not queued: %+v %v", resp, err)
	}
	return resp.ApprovalID
}

// post is a post by a person of the sandbox world.
func (s *site) post(username, text string) string {
	s.t.Helper()
	sim := s.a.Sim.Server
	id, err := sim.PostAs(sim.UserIDByUsername(username), text, "")
	if err != nil {
		s.t.Fatalf("PostAs: %v", err)
	}
	return id
}

func (s *site) postForm(c *http.Client, path string, form url.Values) (int, string) {
	s.t.Helper()
	resp, err := c.PostForm(s.base+path, form)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// TestApprovalShowsTheAnsweredPost: a queued reply shows the post it
// answers, fetched through X, with its author; markup in it is text.
func TestApprovalShowsTheAnsweredPost(t *testing.T) {
	s := newSite(t, nil)
	tid := s.post("gopher_gabe", `<b>Go 1.26</b> is out & fast`)
	id := s.queueReply(s.a.Gateway, tid, "Congrats on the release!")
	c, _ := s.client()
	_, body := s.get(c, "/approvals")
	sec := section(t, body, `id="target-`+itoa(id)+`"`)
	for _, want := range []string{"The post this answers", tid, "@gopher_gabe", "&lt;b&gt;Go 1.26&lt;/b&gt; is out &amp; fast", "Not scored"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the answered post lacks %q:\n%s", want, sec)
		}
	}
	// A post X no longer has is said so, not shown as empty.
	gone := s.queueReply(s.a.Gateway, "1999999999999999999", "hello?")
	_, body = s.get(c, "/approvals")
	if sec := section(t, body, `id="target-`+itoa(gone)+`"`); !strings.Contains(sec, "X did not return this post") {
		t.Errorf("a missing post is shown as:\n%s", sec)
	}
}

// section is the HTML of the element opened by the tag holding attr, up
// to the end of its section.
func section(t *testing.T, body, attr string) string {
	t.Helper()
	i := strings.Index(body, attr)
	if i < 0 {
		t.Fatalf("no element with %s on the page", attr)
	}
	j := strings.Index(body[i:], "</section>")
	if j < 0 {
		return body[i:]
	}
	return body[i : i+j]
}

// TestAnsweredPostsAreCachedAndScored: the page asks the lookup once for
// the posts of all its items, shows the discovery score, and reuses the
// answer on the next load.
func TestAnsweredPostsAreCachedAndScored(t *testing.T) {
	s := newSite(t, nil)
	var calls, asked atomic.Int32
	s.srv.accts[0].Posts = func(_ context.Context, ids []string) (map[string]Post, error) {
		calls.Add(1)
		asked.Add(int32(len(ids)))
		out := map[string]Post{}
		for _, id := range ids {
			out[id] = Post{ID: id, Text: "post " + id, AuthorUsername: "rustacean_rae", Followers: 1200, Score: 87.5, Scored: true}
		}
		return out, nil
	}
	s.queueReply(s.a.Gateway, "1000000000000000001", "one")
	s.queueReply(s.a.Gateway, "1000000000000000002", "two")
	s.queueReply(s.a.Gateway, "1000000000000000001", "three, same post")
	c, _ := s.client()
	for range 2 {
		_, body := s.get(c, "/approvals")
		if n := strings.Count(body, `<strong class="score-value">87.5</strong>`); n != 3 {
			t.Fatalf("%d scores shown, want 3", n)
		}
		if !strings.Contains(body, "@rustacean_rae") || !strings.Contains(body, "1,200 followers") {
			t.Fatal("the author is not shown")
		}
	}
	if calls.Load() != 1 || asked.Load() != 2 {
		t.Fatalf("lookup called %d times for %d posts; want once, for the 2 distinct posts", calls.Load(), asked.Load())
	}
}

// TestApprovalsFilterByAccount: each account's queue is its own; actions
// name the account and go through its gateway.
func TestApprovalsFilterByAccount(t *testing.T) {
	s := newSite(t, nil)
	b, err := s.a.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.Gateway.Do(t.Context(), gateway.Call{Tool: "x_post_tweet", Caller: "mcp", Params: map[string]any{"text": "brand b news"}})
	if err != nil || resp.Kind != gateway.Routed {
		t.Fatalf("brand_b post not queued: %+v %v", resp, err)
	}
	id := resp.ApprovalID
	c, csrf := s.client()
	_, body := s.get(c, "/approvals")
	if strings.Contains(body, "brand b news") {
		t.Fatal("the default account's page shows brand_b's item")
	}
	if !strings.Contains(body, `<a href="/approvals?account=brand_b">brand_b (1 waiting)</a>`) {
		t.Fatal("the page does not lead to brand_b's queue with its count")
	}
	code, body := s.get(c, "/approvals?account=brand_b")
	if code != http.StatusOK || !strings.Contains(body, "brand b news") || !strings.Contains(body, `<input type="hidden" name="account" value="brand_b">`) {
		t.Fatalf("brand_b's page (%d) lacks its item or the account on its forms", code)
	}
	if code, _ := s.get(c, "/approvals?account=nobody"); code != http.StatusBadRequest {
		t.Fatalf("unknown account: %d, want 400", code)
	}
	// Without its account the item is not found in the default queue.
	s.postForm(c, "/approvals/"+itoa(id)+"/reject", url.Values{"csrf": {csrf}, "shown": {shownOf(t, b.Gateway, id)}})
	if it, _ := b.Gateway.Item(t.Context(), id); it.Status != "pending" {
		t.Fatalf("an action without the account reached brand_b: %+v", it)
	}
	s.postForm(c, "/approvals/"+itoa(id)+"/reject", url.Values{"csrf": {csrf}, "account": {"brand_b"}, "note": {"off brand"}, "shown": {shownOf(t, b.Gateway, id)}})
	if it, _ := b.Gateway.Item(t.Context(), id); it.Status != "rejected" || it.ReviewedBy != Reviewer {
		t.Fatalf("brand_b's reject: %+v", it)
	}
}

// TestAuditFiltersByCaller: the caller filter keeps only that caller's
// mutations.
func TestAuditFiltersByCaller(t *testing.T) {
	s := newSite(t, func(c *config.Config) {
		c.ApprovalMode, c.Mode, c.MCPPolicy.RequireApprovalFor, c.MCPPolicy.RequireApprovalForSet = false, "autopilot", nil, true
	})
	for _, caller := range []string{"cli", "mcp"} {
		tid := s.post("gopher_gabe", "bookmark me, "+caller)
		resp, err := s.a.Gateway.Do(t.Context(), gateway.Call{Tool: "x_bookmark_tweet", Caller: caller, Params: map[string]any{"tweet_id": tid}})
		if err != nil || resp.Kind != gateway.Executed {
			t.Fatalf("bookmark as %s: %+v %+v %v", caller, resp, resp.Queued, err)
		}
	}
	c, _ := s.client()
	rowsOf := func(path string) []string {
		_, body := s.get(c, path)
		var out []string
		for _, m := range regexp.MustCompile(`<td data-label="Asked by">(cli|mcp|web|autopilot|approval)</td>`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	all := rowsOf("/audit")
	if len(all) < 2 {
		t.Fatalf("the unfiltered audit shows %v", all)
	}
	// The filter in use stays chosen, and only it.
	_, body := s.get(c, "/audit?caller=cli&status=success")
	for _, choice := range append(slices.Clone(statuses), callers...) {
		chosen := strings.Contains(body, "<option selected>"+choice+"</option>")
		if want := choice == "cli" || choice == "success"; chosen != want {
			t.Errorf("the audit filtered by cli and success: %s chosen %t, want %t", choice, chosen, want)
		}
	}
	for _, caller := range []string{"cli", "mcp"} {
		got := rowsOf("/audit?caller=" + caller)
		if len(got) == 0 {
			t.Fatalf("caller %s: no rows", caller)
		}
		for _, r := range got {
			if r != caller {
				t.Fatalf("caller %s shows a row of %s", caller, r)
			}
		}
	}
}

// TestDraftsCalendar: a scheduled post appears on its day; it can be
// edited, rescheduled to another week, sent to approval and deleted.
func TestDraftsCalendar(t *testing.T) {
	s := newSite(t, func(c *config.Config) { c.Mode = "autopilot" })
	comp, err := s.a.Composer()
	if err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(26 * time.Hour).Truncate(time.Minute)
	res, err := comp.Compose(t.Context(), workflow.ComposeRequest{Content: "launch day post", ScheduledFor: &when})
	if err != nil {
		t.Fatalf("Compose: %v", err)
	}
	id := itoa(res.ID)
	other, err := comp.Compose(t.Context(), workflow.ComposeRequest{Content: "an idea for later"})
	if err != nil {
		t.Fatal(err)
	}
	c, csrf := s.client()
	week := "?week=" + when.Format("2006-01-02")
	_, body := s.get(c, "/drafts"+week)
	day := section(t, body, `id="day-`+when.In(time.Local).Format("2006-01-02")+`"`)
	if !strings.Contains(day, "launch day post") || !strings.Contains(day, when.In(time.Local).Format("15:04")) {
		t.Fatalf("the scheduled post is not on its day:\n%s", day)
	}
	if !strings.Contains(body, `id="unscheduled"`) || !strings.Contains(body, "an idea for later") {
		t.Fatal("the unscheduled draft is not listed")
	}
	form := func(extra url.Values) url.Values {
		extra.Set("csrf", csrf)
		return extra
	}
	s.postForm(c, "/drafts/"+id+"/edit", form(url.Values{"text": {"launch day post, edited"}}))
	if d, _ := s.a.Workflow(); d != nil {
		got, err := d.Draft(t.Context(), res.ID)
		if err != nil || got.Text != "launch day post, edited" {
			t.Fatalf("after Edit: %+v %v", got, err)
		}
	}
	next := when.AddDate(0, 0, 7)
	s.postForm(c, "/drafts/"+id+"/reschedule", form(url.Values{"day": {next.In(time.Local).Format("2006-01-02")}, "time": {next.In(time.Local).Format("15:04")}}))
	_, body = s.get(c, "/drafts"+week)
	if strings.Contains(section(t, body, `id="calendar"`), "launch day post") {
		t.Fatal("the rescheduled post is still in the old week")
	}
	_, body = s.get(c, "/drafts?week="+next.Format("2006-01-02"))
	if !strings.Contains(body, "launch day post, edited") {
		t.Fatal("the rescheduled post is not in its new week")
	}
	// Send to approval: the draft's post is queued, asked by the page.
	s.postForm(c, "/drafts/"+id+"/approval", form(url.Values{}))
	wf, _ := s.a.Workflow()
	got, err := wf.Draft(t.Context(), res.ID)
	if err != nil || got.Status != "queued" || got.ApprovalID == 0 {
		t.Fatalf("after Send to approval: %+v %v", got, err)
	}
	it, err := s.a.Gateway.Item(t.Context(), got.ApprovalID)
	if err != nil || it.Status != "pending" || it.Caller != Caller || !strings.Contains(string(it.Params), "launch day post, edited") {
		t.Fatalf("queued item: %+v %v", it, err)
	}
	// A queued draft cannot be sent twice.
	_, body = s.postForm(c, "/drafts/"+id+"/approval", form(url.Values{}))
	if !strings.Contains(body, "not sent to approval") {
		t.Fatal("sending a queued draft again was not refused")
	}
	s.postForm(c, "/drafts/"+itoa(other.ID)+"/delete", form(url.Values{}))
	if _, err := wf.Draft(t.Context(), other.ID); err == nil {
		t.Fatal("the deleted draft is still there")
	}
}

// TestAutopilotHoldAndCaps: a loop can be paused and resumed from the
// page, and today's counts stand beside their caps.
func TestAutopilotHoldAndCaps(t *testing.T) {
	s := newSite(t, nil)
	c, csrf := s.client()
	_, body := s.get(c, "/autopilot")
	caps := section(t, body, `id="caps"`)
	for _, want := range []string{"Replies today", `<td class="count" data-label="Count">0</td>`, `<td class="cap" data-label="Cap">` + itoa(int64(s.a.Cfg.Limits.MaxRepliesPerDay)) + `</td>`} {
		if !strings.Contains(caps, want) {
			t.Errorf("caps table lacks %q:\n%s", want, caps)
		}
	}
	s.postForm(c, "/autopilot/mentions/hold", url.Values{"csrf": {csrf}, "held": {"1"}})
	stateOf := func() string {
		r, err := s.a.Autopilot(autopilot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := r.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range st.Loops {
			if l.Name == "mentions" {
				return l.State
			}
		}
		return ""
	}
	if st := stateOf(); st != autopilot.StateHeld {
		t.Fatalf("after Pause: %q", st)
	}
	_, body = s.get(c, "/autopilot")
	if !strings.Contains(body, `Resume<span class="sr-only"> mentions</span>`) {
		t.Fatal("the held loop offers no Resume")
	}
	s.postForm(c, "/autopilot/mentions/hold", url.Values{"csrf": {csrf}, "held": {"0"}})
	if st := stateOf(); st == autopilot.StateHeld {
		t.Fatal("Resume left the loop held")
	}
	if code, body := s.postForm(c, "/autopilot/bogus/hold", url.Values{"csrf": {csrf}, "held": {"1"}}); code != http.StatusOK || !strings.Contains(body, "bogus") {
		t.Fatalf("holding an unknown loop: %d", code)
	}
}

// TestSettingsListRulesInOrder and the analytics limits: the rules are
// listed in the engine's evaluation order; every limit has a row.
func TestSettingsListRulesInOrder(t *testing.T) {
	s := newSite(t, nil)
	c, _ := s.client()
	_, body := s.get(c, "/settings")
	var want []string
	for _, r := range s.a.Policy.Rules() {
		want = append(want, r.ID)
	}
	if len(want) == 0 {
		t.Fatal("the sandbox policy has no rules to list")
	}
	got := regexp.MustCompile(`<th scope="row"><code>([^<]+)</code>`).FindAllStringSubmatch(section(t, body, `id="rules-h"`), -1)
	var ids []string
	for _, m := range got {
		ids = append(ids, m[1])
	}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("rules listed as %v, want %v", ids, want)
	}
	_, body = s.get(c, "/analytics")
	lim := section(t, body, `id="limits"`)
	for _, l := range s.a.Policy.Limits() {
		if !strings.Contains(lim, "<code>"+l.Key+"</code>") {
			t.Errorf("limit %s is not listed", l.Key)
		}
	}
	if !strings.Contains(body, "Topics by average performance score") {
		t.Error("the topics chart is missing")
	}
}

// TestAuditRowsAreEscaped: the audit table's rows, printed by the page's
// template, escape every value for where it goes.
func TestAuditRowsAreEscaped(t *testing.T) {
	s := newSite(t, nil)
	es := []gateway.AuditEntry{{CorrelationID: `a"b/<c>`, Tool: "<script>x</script>", Status: "success",
		Caller: `"><img src=x>`, CreatedAt: "2026-01-01T00:00:00Z", Resolution: "<b>", ParamsSummary: `{"text":"<i>said</i>"}`},
		{CorrelationID: "c2", Tool: "x_like_tweet", Status: "success", ParamsSummary: `{"tweet_id":"123"}`, CreatedAt: "2026-01-01T00:00:00Z"},
		{CorrelationID: "c3", Tool: "x_like_tweet", Status: "success", ParamsSummary: `{"tweet_id":"9"}`, CreatedAt: "2026-01-01T00:00:00Z"}}
	for i, e := range es {
		es[i].Shown = describe.RecordedOf(e.Tool, "", e.ParamsSummary)
	}
	got := auditPage(t, s, es, rowsAt{base: "/ui", acct: "brand_b", now: time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC),
		postURL: func(id string) string {
			if id == "9" {
				return "javascript:alert(1)"
			}
			return `/ui/posts/` + id + `?"`
		}})
	for _, bad := range []string{"<script>", "<img", "<b>", `a"b`, "<i>", `?"`, "javascript:"} {
		if strings.Contains(got, bad) {
			t.Errorf("unescaped %q in %s", bad, got)
		}
	}
	for _, want := range []string{"&lt;script&gt;x&lt;/script&gt;", `href="/ui/audit/a%22b%2F%3Cc%3E?account=brand_b"`, "(&lt;b&gt;)",
		"&lt;i&gt;said&lt;/i&gt;", "<strong>Like</strong>", `href="/ui/posts/123?%22">post 123</a>`, ">3 h ago</time>", `href="#ZgotmplZ"`} {
		if !strings.Contains(got, want) {
			t.Errorf("rows lack %q: %s", want, got)
		}
	}
}
