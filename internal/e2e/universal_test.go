//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// busiestAuthor returns the user with the most posts in the emulator world,
// among those whose posts fit auto_paginate's pages,
// and how many there are.
func busiestAuthor(s *sim) (string, int) {
	n := map[string]int{}
	for _, tw := range s.World().Tweets {
		n[tw.AuthorID]++
	}
	best, most := "", 0
	for id, c := range n {
		// More than 50 would not fit the 10 pages of 5 that
		// auto_paginate reads (the demo account's long history does not).
		if c > 50 {
			continue
		}
		if c > most || (c == most && id < best) {
			best, most = id, c
		}
	}
	return best, most
}

// pageIDs reads the post ids of every page of an auto-paginated x_get.
func pageIDs(t *testing.T, e env) (ids []string, pages int) {
	t.Helper()
	var d struct {
		Pages []struct {
			Page   int             `json:"page"`
			Status int             `json:"status"`
			Data   json.RawMessage `json:"data"`
		} `json:"pages"`
		TotalPages int `json:"total_pages"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		t.Fatalf("paged data: %v: %s", err, e.Data)
	}
	for i, p := range d.Pages {
		if p.Page != i+1 || p.Status != 200 {
			t.Fatalf("page %d: number %d status %d", i+1, p.Page, p.Status)
		}
		var body struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(p.Data, &body); err != nil {
			t.Fatalf("page %d body: %v", p.Page, err)
		}
		for _, tw := range body.Data {
			ids = append(ids, tw.ID)
		}
	}
	if d.TotalPages != len(d.Pages) {
		t.Fatalf("total_pages %d for %d pages", d.TotalPages, len(d.Pages))
	}
	return ids, len(d.Pages)
}

func TestUniversalToolsEndToEnd(t *testing.T) {
	s := startSim(t, nil)
	home := t.TempDir()
	cfg := permissive(home)
	// A user rule that explicitly allows every universal request: deleting
	// a post must still go to approval.
	cfg.MCPPolicy.Rules = []config.PolicyRule{{ID: "allow_universal", Priority: 200,
		Conditions: config.PolicyConditions{Categories: []string{"universal_request", "delete"}},
		Action:     config.PolicyAction{Type: "allow"}}}
	access, refresh := pointAt(t, &cfg, s)
	h := newHarness(t, &cfg, app.Options{})
	cs := h.connect()
	var seen []env
	callT := func(tool string, args map[string]any) env {
		t.Helper()
		e := mustCall(t, h.ctx, cs, tool, args)
		seen = append(seen, e)
		return e
	}

	author, total := busiestAuthor(s)
	if total < 12 {
		t.Fatalf("busiest author has only %d posts; the test needs several pages", total)
	}
	path := "/2/users/" + author + "/tweets"
	q := func(extra ...map[string]string) []map[string]string {
		out := []map[string]string{{"key": "max_results", "value": "5"}}
		return append(out, extra...)
	}
	all := callT("x_get", map[string]any{"path": path, "query": []map[string]string{{"key": "max_results", "value": "100"}}})
	var single struct {
		Status int `json:"status"`
		JSON   struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		} `json:"json"`
	}
	if err := json.Unmarshal(all.Data, &single); err != nil || single.Status != 200 || len(single.JSON.Data) < 12 {
		t.Fatalf("single-page read: %v %s", err, all.raw)
	}
	var want []string
	for _, tw := range single.JSON.Data {
		want = append(want, tw.ID)
	}
	wantPages := (len(want) + 4) / 5

	t.Run("auto_paginate concatenates every page", func(t *testing.T) {
		if wantPages > 10 {
			t.Fatalf("%d pages exceed the cap of 10; use a larger max_results", wantPages)
		}
		e := callT("x_get", map[string]any{"path": path, "query": q(), "auto_paginate": true})
		ids, pages := pageIDs(t, e)
		if pages != wantPages || !slices.Equal(ids, want) {
			t.Fatalf("%d pages with %d ids, want %d pages with %v", pages, len(ids), wantPages, want)
		}
		if p := e.Meta.Pagination; p == nil || p.HasMore || p.NextToken != "" || p.ResultCount != pages {
			t.Fatalf("pagination meta %+v", e.Meta.Pagination)
		}
	})
	t.Run("a caller's cursor is stripped", func(t *testing.T) {
		first := callT("x_get", map[string]any{"path": path, "query": q(), "auto_paginate": true, "max_pages": 1})
		p := first.Meta.Pagination
		if p == nil || !p.HasMore || p.NextToken == "" {
			t.Fatalf("first page meta %+v", p)
		}
		// Starting "from page 2" is not possible: auto_paginate always
		// starts at the beginning.
		again := callT("x_get", map[string]any{"path": path, "auto_paginate": true, "max_pages": 1,
			"query": q(map[string]string{"key": "pagination_token", "value": p.NextToken})})
		a, _ := pageIDs(t, first)
		b, _ := pageIDs(t, again)
		if !slices.Equal(a, b) || !slices.Equal(a, want[:5]) {
			t.Fatalf("with a caller cursor got %v, want the first page %v", b, want[:5])
		}
	})
	t.Run("max_pages stops early", func(t *testing.T) {
		e := callT("x_get", map[string]any{"path": path, "query": q(), "auto_paginate": true, "max_pages": 2})
		ids, pages := pageIDs(t, e)
		if pages != 2 || !slices.Equal(ids, want[:10]) {
			t.Fatalf("max_pages 2: %d pages %v", pages, ids)
		}
		if p := e.Meta.Pagination; p == nil || !p.HasMore || p.NextToken == "" || p.ResultCount != 2 {
			t.Fatalf("pagination meta %+v", p)
		}
	})

	var newID string
	t.Run("x_post creates a post and names its undo", func(t *testing.T) {
		before := s.Counters()["tweets_created"]
		e := callT("x_post", map[string]any{"path": "/2/tweets", "body": `{"text":"hello from the universal tool"}`,
			"headers": []map[string]string{{"key": "User-Agent", "value": "e2e-agent"}}})
		var d struct {
			Status int `json:"status"`
			JSON   struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			} `json:"json"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil || !e.Success || d.Status != 201 || d.JSON.Data.ID == "" {
			t.Fatalf("x_post: %v %s", err, e.raw)
		}
		newID = d.JSON.Data.ID
		if got := s.Counters()["tweets_created"]; got != before+1 {
			t.Fatalf("tweets_created %d, want %d", got, before+1)
		}
		rb := e.Meta.Rollback
		if rb == nil || !rb.Reversible || rb.UndoTool != "x_delete_tweet" || rb.UndoParams["tweet_id"] != newID {
			t.Fatalf("rollback %+v, want x_delete_tweet of %s", rb, newID)
		}
		if !uuidV4(e.Meta.CorrelationID) {
			t.Fatalf("correlation id %q", e.Meta.CorrelationID)
		}
	})

	t.Run("x_delete of a post is routed to approval", func(t *testing.T) {
		if newID == "" {
			t.Fatal("x_post did not create the post to delete")
		}
		deleted := s.Counters()["tweets_deleted"]
		e := callT("x_delete", map[string]any{"path": "/2/tweets/" + newID})
		d := e.data(t)
		if !e.Success || d["routed_to_approval"] != true || d["approval_queue_id"] == nil || d["matched_rule_id"] != "hard:delete_approval" {
			t.Fatalf("x_delete: %s", e.raw)
		}
		// The typed delete of the same post is the same intent: it gets
		// the item already waiting, not a second one.
		e = callT("x_delete_tweet", map[string]any{"tweet_id": newID})
		if typed := e.data(t); !e.Success || typed["routed_to_approval"] != true || typed["duplicate"] != true || typed["approval_queue_id"] != d["approval_queue_id"] {
			t.Fatalf("x_delete_tweet: %s, want the waiting item %v", e.raw, d["approval_queue_id"])
		}
		if s.Counters()["tweets_deleted"] != deleted {
			t.Fatal("a delete reached X without approval")
		}
		var n int
		if err := h.a.DB.QueryRowContext(h.ctx, `SELECT count(*) FROM approval_queue WHERE status = 'pending'`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("pending approvals %d (%v), want 1", n, err)
		}
	})

	t.Run("the bearer token never leaks", func(t *testing.T) {
		// Error paths too: a refused header, an X error status and a
		// missing post.
		callT("x_get", map[string]any{"path": "/2/users/me", "headers": []map[string]string{{"key": "Authorization", "value": "Bearer " + access}}})
		callT("x_get", map[string]any{"path": "/2/tweets/1"})
		callT("x_post", map[string]any{"path": "/2/tweets", "body": `{"text":""}`})
		callT("x_get", map[string]any{"path": "/2/users/me"})
		callT("get_recent_mutations", map[string]any{})
		tokens, err := os.ReadFile(cfg.TokenFile())
		if err != nil || !strings.Contains(string(tokens), access) {
			t.Fatalf("the token file does not hold the token in use: %v", err)
		}
		for _, secret := range []string{access, refresh} {
			for _, e := range seen {
				if strings.Contains(e.raw, secret) {
					t.Fatalf("an envelope holds a token: %s", e.raw)
				}
			}
			logs := h.logs.String()
			if len(logs) == 0 {
				t.Fatal("no log output was captured")
			}
			if strings.Contains(logs, secret) {
				t.Fatal("a log line holds a token")
			}
			if strings.Contains(storetest.AllText(t, h.ctx, h.a.DB.DB), secret) {
				t.Fatal("the database holds a token")
			}
		}
	})
}

func uuidV4(s string) bool {
	if len(s) != 36 || s[14] != '4' || !strings.ContainsRune("89ab", rune(s[19])) {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdef", r) {
				return false
			}
		}
	}
	return true
}
