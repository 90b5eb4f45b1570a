package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
)

// TestEmptyQueueSaysWhatToDo: an empty queue names the next steps (connect
// an agent, or open the sandbox); an empty filter offers the whole queue.
func TestEmptyQueueSaysWhatToDo(t *testing.T) {
	s := newSite(t, nil)
	c, _ := s.client()
	_, body := s.get(c, "/approvals")
	mustHave(t, "an empty queue", body, "Nothing is waiting for you", "<code>tuitbot mcp install</code>", "<code>tuitbot web --sandbox</code>")
	_, body = s.get(c, "/approvals?tool=x_like_tweet")
	mustHave(t, "an empty filter", body, "Nothing waiting matches this filter", "Show the whole queue")
	_, body = s.get(c, "/audit")
	mustHave(t, "an empty audit", body, "Nothing has been done on X yet", "tuitbot mcp install")
}

// TestNoXLoginBannerOnEveryPage: an account without an X login says so on
// every page, with the command that logs in; a logged-in one does not.
func TestNoXLoginBannerOnEveryPage(t *testing.T) {
	s := newSite(t, nil)
	c, _ := s.client()
	if _, body := s.get(c, "/approvals"); strings.Contains(body, `id="no-login"`) {
		t.Fatal("the sandbox (logged in to its emulator) shows the no-login banner")
	}
	s.srv.accts[0].XLogin = func() string { return "run `tuitbot auth` (or use --sandbox)" }
	for _, path := range []string{"/approvals", "/drafts", "/audit", "/analytics", "/autopilot", "/settings", "/no-such-page"} {
		_, body := s.get(c, path)
		if !strings.Contains(body, `<p class="banner" id="no-login"><strong>Not logged in to X.</strong>`) || !strings.Contains(body, "run `tuitbot auth`") {
			t.Errorf("%s has no no-login banner with the command", path)
		}
	}
}

// TestUnknownAddressGetsTheSite404: an unknown address answers 404 with
// the site's own page and navigation; a GET of a form's address is still
// refused as a wrong method.
func TestUnknownAddressGetsTheSite404(t *testing.T) {
	s := newSite(t, nil)
	c, _ := s.client()
	code, body := s.get(c, "/no/such/page")
	if code != http.StatusNotFound {
		t.Fatalf("unknown address: %d, want 404", code)
	}
	mustHave(t, "the 404 page", body, "<title>Page not found · tuitbot</title>", `<nav aria-label="Main">`, "<code>/no/such/page</code>", `href="/approvals"`)
	if code, _ := s.get(c, "/posts/not-an-id"); code != http.StatusNotFound {
		t.Fatalf("a post page of no id: %d, want 404", code)
	}
	if code, _ := s.get(c, "/approvals/1/approve"); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET of a form's address: %d, want 405", code)
	}
}

// TestOneAccountSwitch: with several accounts the approvals page has one
// control named Account (the switcher in the header), and the queue's
// page names the others with their counts.
func TestOneAccountSwitch(t *testing.T) {
	s := newSite(t, nil)
	c, _ := s.client()
	_, body := s.get(c, "/approvals")
	if n := len(regexp.MustCompile(`(?i)>\s*Account\s*<`).FindAllString(body, -1)); n != 1 {
		t.Fatalf("%d controls named Account, want the one switcher", n)
	}
	if n := strings.Count(body, `name="account"`); n != 1 {
		t.Fatalf("%d account fields on the default account's page, want the switcher's", n)
	}
}

// TestAuditShowsWhatHappenedAndSearches: each audit row shows the text
// the call posted, or its target; the search box finds rows by text or
// target.
func TestAuditShowsWhatHappenedAndSearches(t *testing.T) {
	s := newSite(t, nil)
	for _, text := range []string{"Release notes for Go 1.26 are out", "A post about the weather"} {
		id := s.postTweet(s.mcpClient(), text)
		if _, _, err := s.a.Gateway.Approve(t.Context(), id, "test", ""); err != nil {
			t.Fatal(err)
		}
	}
	target := s.post("gopher_gabe", "like this")
	resp, err := s.a.Gateway.Do(t.Context(), gateway.Call{Tool: "x_like_tweet", Caller: "mcp", Params: map[string]any{"tweet_id": target}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.a.Gateway.Approve(t.Context(), resp.ApprovalID, "test", ""); err != nil {
		t.Fatal(err)
	}
	c, _ := s.client()
	_, body := s.get(c, "/audit")
	mustHave(t, "the audit", body, `<input type="search" name="q"`, "Release notes for Go 1.26 are out", "A post about the weather",
		"<strong>Like</strong>", `<a href="/posts/`+target+`">post `+target+`</a>`)
	rows := func(body string) int { return strings.Count(body, `<td class="what"`) }
	_, body = s.get(c, "/audit?q=go+1.26")
	if rows(body) != 1 || !strings.Contains(body, "Release notes") {
		t.Fatalf("searching the text found %d rows", rows(body))
	}
	_, body = s.get(c, "/audit?q="+target)
	if rows(body) != 1 || !strings.Contains(body, "<strong>Like</strong>") {
		t.Fatalf("searching the target found %d rows", rows(body))
	}
	_, body = s.get(c, "/audit?q=nothing+like+it")
	mustHave(t, "a search that finds nothing", body, "No recorded action matches", "Show them all")
}

// TestRuleSentence: why an item waits, in a sentence, with the deciding
// rule's id beside it.
func TestRuleSentence(t *testing.T) {
	rules := []policy.Rule{
		{ID: policy.RuleHardDeleteApproval, Source: policy.SourceHard, Label: "Deletes always need approval"},
		{ID: "compat:approval:x_like_tweet", Source: policy.SourceCompat, Label: "require_approval_for"},
		{ID: "night", Source: policy.SourceUser, Label: "Nothing goes out at night"},
	}
	for _, tc := range []struct {
		tool, rule, reason, want, wantID string
	}{
		{"x_post_tweet", "", "approval mode is on", "Posts need your approval (policy: approval mode is on)", "approval_mode"},
		{"x_delete_tweet", policy.RuleHardDeleteApproval, "delete actions always require approval", "Deletes always need your approval (a built-in rule)", policy.RuleHardDeleteApproval},
		{"x_like_tweet", "compat:approval:x_like_tweet", "tool 'x_like_tweet' requires approval", "Likes need your approval (policy: the require_approval_for setting)", "compat:approval:x_like_tweet"},
		{"x_follow_user", "night", "quiet hours", "Follows need your approval (policy: Nothing goes out at night)", "night"},
		{"x_retweet", "gone", "a rule since removed", "Reposts need your approval (policy: a rule since removed)", "gone"},
		{"x_reply_to_tweet", "x_rule:ai_replies_need_x_approval", "X requires its prior approval for AI-generated replies",
			"Replies go to a person under X's automation rules (X requires its prior approval for AI-generated replies)", "x_rule:ai_replies_need_x_approval"},
	} {
		it := gateway.ApprovalItem{Tool: tc.tool, MatchedRuleID: tc.rule, Reason: tc.reason}
		got, id := ruleSentence(describe.Of(tc.tool, "", nil), it, rules)
		if got != tc.want || id != tc.wantID {
			t.Errorf("%s under %q: %q (%s), want %q (%s)", tc.tool, tc.rule, got, id, tc.want, tc.wantID)
		}
	}
}
