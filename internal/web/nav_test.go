package web

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestAccountNavigationKeepsTheAccount: from a non-default account's
// queue, the item link, the approval detail (its nav, its outcome link),
// the audit detail's approval link and the way back all stay on that
// account.
func TestAccountNavigationKeepsTheAccount(t *testing.T) {
	s := newSite(t, nil)
	b, err := s.a.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.Gateway.Do(t.Context(), gateway.Call{Tool: "x_post_tweet", Caller: "mcp", Params: map[string]any{"text": "brand b launch"}})
	if err != nil || resp.Kind != gateway.Routed {
		t.Fatalf("brand_b post not queued: %+v %v", resp, err)
	}
	id := resp.ApprovalID
	c, csrf := s.client()

	// href is the first link pattern's group matches in body.
	href := func(what, body, pattern string) string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no link matching %s", what, pattern)
		}
		return html.UnescapeString(m[1])
	}
	follow := func(what, link string) string {
		t.Helper()
		code, body := s.get(c, link)
		if code != http.StatusOK {
			t.Fatalf("%s: GET %s: %d", what, link, code)
		}
		return body
	}
	list := follow("queue", "/approvals?account=brand_b")
	detailURL := href("item link", list, fmt.Sprintf(`<a href="(/approvals/%d[^"]*)">`, id))
	if detailURL != fmt.Sprintf("/approvals/%d?account=brand_b", id) {
		t.Fatalf("the item links to %s, off brand_b", detailURL)
	}
	detail := follow("approval detail", detailURL)
	mustHave(t, "approval detail", detail, "brand b launch", `href="/audit?account=brand_b"`, `<input type="hidden" name="account" value="brand_b">`)

	// Approve from the detail page's form, which names the account.
	code, _ := s.postForm(c, fmt.Sprintf("/approvals/%d/approve", id), url.Values{"csrf": {csrf}, "account": {"brand_b"}, "shown": {shownOf(t, b.Gateway, id)}})
	if code != http.StatusOK {
		t.Fatalf("approve: %d", code)
	}
	it, err := b.Gateway.Item(t.Context(), id)
	if err != nil || it.Status != "executed" {
		t.Fatalf("brand_b's item after Approve: %+v %v", it, err)
	}
	detail = follow("approval detail after approval", detailURL)
	outcome := href("outcome link", detail, `<a href="([^"]+)" id="outcome">`)
	if outcome != "/audit/"+it.CorrelationID+"?account=brand_b" {
		t.Fatalf("the outcome links to %s, off brand_b", outcome)
	}
	audit := follow("audit detail", outcome)
	back := href("approval link", audit, `<a href="([^"]+)" id="approval-link">`)
	if back != detailURL {
		t.Fatalf("the audit detail links its approval as %s, want %s", back, detailURL)
	}
	if !strings.Contains(follow("approval detail again", back), "brand b launch") {
		t.Fatal("the approval link does not lead back to brand_b's item")
	}
}
