package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestAuditPageNamesWhoAskedAndWhoApproved: a post the agent asked for and
// a phone link approved is listed as asked by mcp and approved by
// link:phone, and its detail page says both, not "approval".
func TestAuditPageNamesWhoAskedAndWhoApproved(t *testing.T) {
	s := newSite(t, linksOn)
	_, l := s.issue(s.mcpClient(), "asked by the agent, approved on a phone", "phone")
	if status, _, page := s.linkReq("POST", l["approve"], url.Values{"csrf": {l["approve_csrf"]}}, ""); status != http.StatusOK {
		t.Fatalf("approve link: %d\n%s", status, page)
	}
	c, _ := s.client()
	_, list := s.get(c, "/audit")
	mustHave(t, "audit page", list, `<td data-label="Asked by">mcp<br><span class="decided">approved by link:phone</span></td>`)
	rows, err := s.a.Gateway.Recent(context.Background(), gateway.AuditFilter{Limit: 1})
	if err != nil || len(rows) != 1 {
		t.Fatalf("recent: %+v %v", rows, err)
	}
	_, detail := s.get(c, "/audit/"+rows[0].CorrelationID)
	mustHave(t, "audit detail", detail, `<dd id="asked-by">mcp</dd>`, `<dd id="decided-by">link:phone · `)
	if strings.Contains(list+detail, ">approval<") {
		t.Error("the audit still names approval as who asked")
	}
}
