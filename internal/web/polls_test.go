package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// pollPages are the pages that show a posted poll, and a queued post
// carrying one, as seedPolls arranged them.
type pollPages struct {
	// PostID is the posted poll; Votes the words its choices must show.
	PostID string
	Votes  []string
	// Pages are the paths (under the site) that show the posted poll;
	// PhonePages those reached through a phone link.
	Pages, PhonePages []string
	// Pending is the card of a queued post with a poll; a scheduled
	// draft carries one too.
	Pending int64
}

// seedPolls posts a poll from the account (through the gateway, as a
// person approving it would), has the world's accounts vote on it,
// queues a reply to it with a phone link, queues a post with a poll that
// nobody decided yet, and schedules a draft with a poll for tomorrow.
func seedPolls(t *testing.T, s *site) pollPages {
	t.Helper()
	ctx := context.Background()
	resp, err := s.a.Gateway.Do(ctx, gateway.Call{Tool: "x_post_tweet", Caller: "mcp", Params: map[string]any{"text": "Which do you reach for first?",
		"options": map[string]any{"poll": map[string]any{"options": []string{"Go", "Rust", "Zig"}, "duration_minutes": 1440}}}})
	if err == nil && resp.Kind == gateway.Routed {
		_, resp, err = s.a.Gateway.Approve(ctx, resp.ApprovalID, "test", "")
	}
	if err != nil || resp.Kind != gateway.Executed {
		t.Fatalf("the poll was not posted: %+v %v", resp, err)
	}
	var p pollPages
	p.PostID = postedID(resp.Result)
	for pos, n := range map[int]int64{1: 6, 2: 3, 3: 1} {
		if err := s.a.Sim.Server.Vote(p.PostID, pos, n); err != nil {
			t.Fatal(err)
		}
	}
	p.Votes = []string{"Go</span>: 6 votes (60%)", "Rust</span>: 3 votes (30%)", "Zig</span>: 1 vote (10%)", "10 votes", "open for 1 day", "open"}
	reply := s.queueReply(s.a.Gateway, p.PostID, "Go, every time")
	it, err := s.a.Gateway.Item(ctx, reply)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.a.Links().Links(ctx, "default", it, "phone")
	if err != nil {
		t.Fatal(err)
	}
	view := strings.TrimPrefix(l.View, phoneBase)
	p.Pages = []string{"/approvals", fmt.Sprintf("/approvals/%d", reply), "/posts/" + p.PostID, "/audit/" + resp.CorrelationID}
	p.PhonePages = []string{view, view + "/post"}
	queued, err := s.a.Gateway.Do(ctx, gateway.Call{Tool: "x_post_tweet", Caller: "mcp", Params: map[string]any{"text": "Lunch today?",
		"options": map[string]any{"poll": map[string]any{"options": []string{"Noodles", "Salad"}, "duration_minutes": 90}}}})
	if err != nil || queued.Kind != gateway.Routed {
		t.Fatalf("the pending poll was not queued: %+v %v", queued, err)
	}
	p.Pending = queued.ApprovalID
	comp, err := s.a.Composer()
	if err != nil {
		t.Fatal(err)
	}
	tomorrow := time.Now().Add(30 * time.Hour).Truncate(time.Hour)
	if _, err := comp.Compose(ctx, workflow.ComposeRequest{Content: "Friday demo: which first?", ScheduledFor: &tomorrow,
		Options: &actions.PostOptions{Poll: &actions.PollSpec{Options: []string{"Approvals", "Drafts"}, DurationMinutes: 120}}}); err != nil {
		t.Fatalf("the poll draft: %v", err)
	}
	return p
}

// TestPagesShowPolls: a posted poll shows its choices, votes, share,
// duration, end and state wherever a page shows the post (the card of a
// reply to it and that card's page, the post's page, the audit of the
// call that posted it, the phone link's pages); a queued post and a
// draft with a poll show its choices and how long it will be open.
func TestPagesShowPolls(t *testing.T) {
	s := newSite(t, linksOn)
	p := seedPolls(t, s)
	c, _ := s.client()
	for _, path := range p.Pages {
		code, page := s.get(c, path)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", path, code)
		}
		mustHave(t, path, page, append(p.Votes, `<div class="poll-result">`, "ends <time")...)
	}
	for _, path := range p.PhonePages {
		code, _, page := s.linkReq("GET", path, nil, "")
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", path, code)
		}
		mustHave(t, "phone "+path, page, p.Votes...)
	}
	_, page := s.get(c, fmt.Sprintf("/approvals/%d", p.Pending))
	mustHave(t, "the pending poll", page, "<li>Poll: Noodles / Salad, 1 hour 30 minutes</li>")
	_, drafts := s.get(c, "/drafts")
	mustHave(t, "the drafts", drafts, "<li>Poll: Approvals / Drafts, 2 hours</li>")
	// The audit says the poll it asked for in the approval's words, not
	// field by field.
	_, audit := s.get(c, p.Pages[3])
	mustHave(t, "the audit", audit, `<ul class="post-options" aria-label="Post settings"><li>Poll: Go / Rust / Zig, 1 day</li></ul>`)
	if strings.Contains(shownHTML(audit), "options, poll") {
		t.Error("the audit lists the poll's settings field by field")
	}
}

// TestPollView: a poll's state follows X's voting_status, or its end when
// X did not say; shares are of all votes; a poll nobody voted on shows 0%.
func TestPollView(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	opts := []xapi.PollOption{{Position: 1, Label: "Yes", Votes: 3}, {Position: 2, Label: "No", Votes: 1}}
	for _, c := range []struct {
		name  string
		p     xapi.TweetPoll
		open  bool
		total string
		share []string
		ends  string
	}{
		{"open by X", xapi.TweetPoll{Options: opts, VotingStatus: "open", DurationMinutes: 60, EndDatetime: now.Add(time.Hour)}, true, "4 votes", []string{"75%", "25%"}, "in 1 h"},
		{"closed by X", xapi.TweetPoll{Options: opts, VotingStatus: "closed", EndDatetime: now.Add(-2 * time.Hour)}, false, "4 votes", []string{"75%", "25%"}, "2 h ago"},
		{"ended, no status", xapi.TweetPoll{Options: opts, EndDatetime: now.Add(-time.Minute)}, false, "4 votes", []string{"75%", "25%"}, "1 min ago"},
		{"no votes", xapi.TweetPoll{Options: []xapi.PollOption{{Label: "A"}, {Label: "B"}}, VotingStatus: "open"}, true, "0 votes", []string{"0%", "0%"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := pollOf(now, &c.p)
			if v.Open != c.open || v.Total != c.total || v.Ends.Rel != c.ends {
				t.Errorf("open %v, total %q, ends %q; want %v, %q, %q", v.Open, v.Total, v.Ends.Rel, c.open, c.total, c.ends)
			}
			for i, want := range c.share {
				if v.Choices[i].Share != want {
					t.Errorf("choice %d: share %q, want %q", i+1, v.Choices[i].Share, want)
				}
			}
		})
	}
	if pollOf(now, nil) != nil {
		t.Error("no poll shows a poll")
	}
}
