package workflow

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/store"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// services opens one database and returns a service for the default
// account and one for another account on it, sharing a fake clock.
func services(t *testing.T) (mine, other *Service, clk *clock.Fake) {
	t.Helper()
	clk = clock.NewFake(t0)
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "tuitbot.db"), store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mk := func(acct string) *Service {
		return &Service{DB: db, AccountID: acct, Now: clk.Now,
			Discovery: &discovery.Service{DB: db, AccountID: acct, Now: clk.Now}}
	}
	return mk("default"), mk("other"), clk
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReplyLedger(t *testing.T) {
	ctx := context.Background()
	s, other, clk := services(t)
	must(t, s.RecordReply(ctx, SentReply{TargetTweetID: "1", ReplyTweetID: "11", Content: "old", AuthorID: "A", AuthorUsername: "alice"}))
	clk.Advance(time.Hour)
	must(t, s.RecordReply(ctx, SentReply{TargetTweetID: "2", ReplyTweetID: "12", Content: "new"}))
	must(t, other.RecordReply(ctx, SentReply{TargetTweetID: "3", ReplyTweetID: "13", Content: "theirs"}))

	got, err := s.RepliesSince(ctx, t0.Add(time.Minute))
	must(t, err)
	want := []SentReply{{TargetTweetID: "2", ReplyTweetID: "12", Content: "new", Caller: "mcp", CreatedAt: store.FormatTime(t0.Add(time.Hour))}}
	if !slices.Equal(got, want) {
		t.Errorf("RepliesSince = %+v, want %+v", got, want)
	}
	all, err := s.RepliesSince(ctx, t0)
	must(t, err)
	if len(all) != 2 || all[0].AuthorID != "A" || all[0].AuthorUsername != "alice" || all[0].TargetTweetID != "1" {
		t.Errorf("RepliesSince(all) = %+v, want the older reply first with its author", all)
	}
	for _, tc := range []struct {
		s      *Service
		target string
		want   bool
	}{{s, "1", true}, {s, "3", false}, {other, "3", true}, {other, "1", false}} {
		got, err := tc.s.RepliedTo(ctx, tc.target)
		must(t, err)
		if got != tc.want {
			t.Errorf("%s RepliedTo(%s) = %v, want %v", tc.s.AccountID, tc.target, got, tc.want)
		}
	}
	texts, err := s.RecentTexts(ctx, KindReply, 1)
	must(t, err)
	if len(texts) != 1 || texts[0].Content != "new" {
		t.Errorf("RecentTexts(reply, 1) = %+v, want the newest reply", texts)
	}
}

func TestPostLedger(t *testing.T) {
	ctx := context.Background()
	s, other, clk := services(t)
	must(t, s.RecordPost(ctx, KindTweet, "p1", "first"))
	must(t, s.RecordPost(ctx, KindThread, "p2", "thread start"))
	clk.Advance(time.Hour)
	must(t, s.RecordPost(ctx, KindTweet, "p3", "second"))
	must(t, other.RecordPost(ctx, KindTweet, "p4", "theirs"))
	must(t, s.TagPost(ctx, "p3", "golang", "autopilot"))
	must(t, other.TagPost(ctx, "p3", "not mine", "mcp")) // another account's tag reaches nothing

	ids, err := s.PostIDsSince(ctx, KindTweet, t0)
	must(t, err)
	if !slices.Equal(ids, []string{"p1", "p3"}) {
		t.Errorf("PostIDsSince(tweet) = %q, want p1 p3", ids)
	}
	ids, err = s.PostIDsSince(ctx, KindTweet, t0.Add(time.Minute))
	must(t, err)
	if !slices.Equal(ids, []string{"p3"}) {
		t.Errorf("PostIDsSince(tweet, later) = %q, want p3", ids)
	}
	known, err := s.RecordedPosts(ctx, []string{"p1", "p2", "p4", "p9"})
	must(t, err)
	if !known["p1"] || !known["p2"] || known["p4"] || known["p9"] || len(known) != 2 {
		t.Errorf("RecordedPosts = %v, want p1 and p2 only", known)
	}
	texts, err := s.RecentTexts(ctx, KindTweet, 5)
	must(t, err)
	if len(texts) != 2 || texts[0].Content != "second" || texts[1].Content != "first" {
		t.Errorf("RecentTexts(tweet) = %+v, want second then first (no thread)", texts)
	}
	var topic, caller string
	must(t, s.DB.QueryRow(`SELECT topic, caller FROM original_tweets WHERE account_id = 'default' AND tweet_id = 'p3'`).Scan(&topic, &caller))
	if topic != "golang" || caller != "autopilot" {
		t.Errorf("tagged p3: topic %q caller %q", topic, caller)
	}
}

func TestRecordedPostsManyIDs(t *testing.T) {
	ctx := context.Background()
	s, _, _ := services(t)
	must(t, s.RecordPost(ctx, KindTweet, "last", "x"))
	// More ids than one statement takes at a time.
	var ids []string
	for i := range 1200 {
		ids = append(ids, strconv.Itoa(i))
	}
	ids = append(ids, "last")
	known, err := s.RecordedPosts(ctx, ids)
	must(t, err)
	if !known["last"] || len(known) != 1 {
		t.Fatalf("RecordedPosts over %d ids = %v, want the one recorded post", len(ids), known)
	}
}

func TestUnmeasuredAndPerformance(t *testing.T) {
	ctx := context.Background()
	s, other, clk := services(t)
	must(t, s.RecordPost(ctx, KindTweet, "p1", "x"))
	must(t, s.TagPost(ctx, "p1", "golang", "autopilot"))
	clk.Advance(time.Minute)
	must(t, s.RecordReply(ctx, SentReply{TargetTweetID: "9", ReplyTweetID: "r1", Content: "y"}))
	clk.Advance(time.Minute)
	must(t, s.RecordPost(ctx, KindThread, "p2", "z"))
	must(t, other.RecordPost(ctx, KindTweet, "p3", "theirs"))
	clk.Advance(48 * time.Hour)
	must(t, s.RecordPost(ctx, KindTweet, "p4", "too new"))

	from, to := t0, t0.Add(time.Hour)
	got, err := s.Unmeasured(ctx, from, to, 10)
	must(t, err)
	want := []OwnPost{{"p1", KindTweet, "golang"}, {"r1", KindReply, ""}, {"p2", KindThread, ""}}
	if !slices.Equal(got, want) {
		t.Fatalf("Unmeasured = %+v, want %+v", got, want)
	}
	if got, _ := s.Unmeasured(ctx, from, to, 1); len(got) != 1 || got[0].TweetID != "p1" {
		t.Errorf("Unmeasured limit 1 = %+v, want the oldest", got)
	}
	must(t, s.RecordPerformance(ctx, Performance{TweetID: "p1", Kind: KindTweet, Topic: "golang", Likes: 3, Impressions: 100, Score: 90}))
	// Measured once: a second measurement changes nothing.
	must(t, s.RecordPerformance(ctx, Performance{TweetID: "p1", Kind: KindTweet, Topic: "golang", Score: 1}))
	got, err = s.Unmeasured(ctx, from, to, 10)
	must(t, err)
	if !slices.Equal(got, want[1:]) {
		t.Errorf("Unmeasured after measuring p1 = %+v, want %+v", got, want[1:])
	}
	topics, err := s.MeasuredTopics(ctx)
	must(t, err)
	if len(topics) != 1 || topics[0].Topic != "golang" || topics[0].AvgPerformance != 90 {
		t.Errorf("MeasuredTopics = %+v, want golang at 90", topics)
	}
}

func TestPublishingDrafts(t *testing.T) {
	ctx := context.Background()
	s, other, clk := services(t)
	c := &Composer{Service: s}
	oc := &Composer{Service: other}
	due := t0.Add(time.Hour)
	later := t0.Add(3 * time.Hour)
	d1, err := c.insertDraft(ctx, ComposeRequest{Content: "due", ScheduledFor: &due}, "mcp")
	must(t, err)
	_, err = c.insertDraft(ctx, ComposeRequest{Content: "later", ScheduledFor: &later}, "mcp")
	must(t, err)
	_, err = oc.insertDraft(ctx, ComposeRequest{Content: "theirs", ScheduledFor: &due}, "mcp")
	must(t, err)

	if list, _ := s.DueDrafts(ctx, 20); len(list) != 0 {
		t.Fatalf("DueDrafts before the time = %+v, want none", list)
	}
	clk.Advance(2 * time.Hour)
	list, err := s.DueDrafts(ctx, 20)
	must(t, err)
	if len(list) != 1 || list[0].ID != d1.ID || list[0].Content != "due" || list[0].ContentType != "tweet" {
		t.Fatalf("DueDrafts = %+v, want draft %d", list, d1.ID)
	}
	moved := list[0]
	moved.ScheduledFor = store.FormatTime(later)
	if ok, _ := s.ClaimDraft(ctx, moved); ok {
		t.Fatal("a draft was claimed for a time it is no longer scheduled at")
	}
	ok, err := s.ClaimDraft(ctx, list[0])
	must(t, err)
	if !ok {
		t.Fatal("ClaimDraft of a scheduled draft = false")
	}
	if ok, _ := s.ClaimDraft(ctx, list[0]); ok {
		t.Fatal("a draft was claimed twice")
	}
	if list, _ := s.DueDrafts(ctx, 20); len(list) != 0 {
		t.Fatalf("a claimed draft is still due: %+v", list)
	}
	n, err := s.FailPublishing(ctx)
	must(t, err)
	if n != 1 {
		t.Fatalf("FailPublishing = %d, want 1", n)
	}
	must(t, s.SetDraftStatus(ctx, d1.ID, DraftQueued, "", 42))
	must(t, s.SetDraftStatus(ctx, d1.ID, DraftPosted, "777", 0))
	d, err := s.Draft(ctx, d1.ID)
	must(t, err)
	if d.Status != DraftPosted || d.PostedTweetID != "777" || d.ApprovalID != 42 {
		t.Errorf("draft after publishing: status %q tweet %q approval %d, want posted 777 42", d.Status, d.PostedTweetID, d.ApprovalID)
	}
	// Another account's publisher cannot touch the draft.
	if ok, _ := other.ClaimDraft(ctx, list[0]); ok {
		t.Error("another account claimed the draft")
	}
}
