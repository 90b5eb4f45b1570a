package postmetrics_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/postmetrics"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// fakeX answers like X: analytics for the listed posts (or 403), public
// metrics from GetTweets, and a timeline. It counts every call.
type fakeX struct {
	mu        sync.Mutex
	forbidden bool
	calls     map[string]int
	timeline  []xapi.Tweet
}

func (f *fakeX) count(k string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[k]++
}

func (f *fakeX) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, v := range f.calls {
		n += v
	}
	return n
}

func (f *fakeX) GetTweets(_ context.Context, ids []string) (*xapi.Page[xapi.Tweet], error) {
	f.count("tweets")
	p := &xapi.Page[xapi.Tweet]{}
	for _, id := range ids {
		p.Data = append(p.Data, xapi.Tweet{ID: id, PublicMetrics: xapi.TweetMetrics{LikeCount: 3, RetweetCount: 1, ImpressionCount: 100}})
	}
	return p, nil
}

func (f *fakeX) PostAnalytics(_ context.Context, ids []string, start, end time.Time) ([]xapi.PostAnalytics, error) {
	f.count("analytics")
	if f.forbidden {
		return nil, apperr.New(apperr.XForbidden, "X answered 403: client-not-enrolled")
	}
	var out []xapi.PostAnalytics
	for _, id := range ids {
		out = append(out, xapi.PostAnalytics{ID: id, Impressions: 500, Likes: 7, Retweets: 2, Replies: 1, Quotes: 1, Bookmarks: 2})
	}
	return out, nil
}

func (f *fakeX) UserTweets(_ context.Context, _ string, p xapi.ListParams) (*xapi.Page[xapi.Tweet], error) {
	f.count("timeline")
	return &xapi.Page[xapi.Tweet]{Data: f.timeline}, nil
}

func newStore(t *testing.T, clk *clock.Fake) *postmetrics.Store {
	t.Helper()
	db := storetest.Open(t, store.Options{Now: clk.Now})
	return &postmetrics.Store{DB: db, Account: "default", Now: clk.Now}
}

// TestCaptureAtEachCheckpointOnce: a post is measured at 1 h, 24 h and 7
// days, exactly once each, however often capture runs in between; young
// posts come from analytics.
func TestCaptureAtEachCheckpointOnce(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		s := newStore(t, clk)
		x := &fakeX{}
		posts := []postmetrics.Post{{TweetID: "101", Kind: postmetrics.KindOriginal, PostedAt: t0}}
		steps := []struct {
			at   time.Duration
			want []int // checkpoints stored so far, in hours
		}{
			{30 * time.Minute, nil},
			{time.Hour, []int{1}},
			{2 * time.Hour, []int{1}},
			{23 * time.Hour, []int{1}},
			{24*time.Hour + time.Minute, []int{1, 24}},
			{3 * 24 * time.Hour, []int{1, 24}},
			{7*24*time.Hour + time.Hour, []int{1, 24, 168}},
			{7*24*time.Hour + 2*time.Hour, []int{1, 24, 168}},
		}
		for _, st := range steps {
			clk.Set(t0.Add(st.at))
			// Two runs at the same moment: the second captures nothing.
			for range 2 {
				if _, err := s.Capture(ctx, x, posts, false); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := s.Rows(ctx, "101")
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, r := range rows {
				got = append(got, int(r.Checkpoint/time.Hour))
				if r.Source != postmetrics.SourceAnalytics || r.Impressions != 500 || r.Likes != 7 || r.Bookmarks != 2 {
					t.Errorf("row %+v; want analytics counts", r)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(st.want) {
				t.Fatalf("at +%s the post has checkpoints %v, want %v", st.at, got, st.want)
			}
		}
	})
}

// TestMissedCheckpointIsSkipped: a post first seen at 30 hours is measured
// at 24 h only, never at 1 h with a day's numbers.
func TestMissedCheckpointIsSkipped(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(t0.Add(30 * time.Hour))
	s := newStore(t, clk)
	if _, err := s.Capture(ctx, &fakeX{}, []postmetrics.Post{{TweetID: "7", Kind: postmetrics.KindOriginal, PostedAt: t0}}, false); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Rows(ctx, "7")
	if err != nil || len(rows) != 1 || rows[0].Checkpoint != 24*time.Hour {
		t.Fatalf("rows %+v, %v; want one at 24 h", rows, err)
	}
}

// TestAnalyticsForbiddenFallsBackToPublic: a 403 from the analytics read
// (the tier has no access) measures the post by its public metrics, and
// the row says so.
func TestAnalyticsForbiddenFallsBackToPublic(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0.Add(2 * time.Hour))
		s := newStore(t, clk)
		x := &fakeX{forbidden: true}
		rep, err := s.Capture(ctx, x, []postmetrics.Post{{TweetID: "9", Kind: postmetrics.KindOriginal, PostedAt: t0}}, false)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.Rows(ctx, "9")
		if err != nil || len(rows) != 1 {
			t.Fatalf("rows %+v, %v", rows, err)
		}
		if r := rows[0]; r.Source != postmetrics.SourcePublic || r.Likes != 3 || r.Impressions != 100 || !rep.AnalyticsDenied || rep.Public != 1 {
			t.Fatalf("row %+v, report %+v; want public counts after the 403", r, rep)
		}
	})
}

// TestOldPostsAreMeasuredByPublicMetrics: X serves analytics for posts
// under 30 days only, so an older post is never asked for them.
func TestOldPostsAreMeasuredByPublicMetrics(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(t0)
	s := newStore(t, clk)
	x := &fakeX{}
	old := []postmetrics.Post{{TweetID: "5", Kind: postmetrics.KindOriginal, PostedAt: t0.AddDate(0, 0, -40)}}
	if _, err := s.Capture(ctx, x, old, true); err != nil {
		t.Fatal(err)
	}
	rows, _ := s.Rows(ctx, "5")
	if len(rows) != 1 || rows[0].Source != postmetrics.SourcePublic || rows[0].Checkpoint != 7*24*time.Hour || x.calls["analytics"] != 0 {
		t.Fatalf("rows %+v, calls %v; want one public row at 7 days and no analytics call", rows, x.calls)
	}
}

// budget is a spend budget of max dollars with used spent.
type budget struct{ used, max float64 }

func (b budget) Limits() []policy.Limit {
	return []policy.Limit{{Key: policy.LimitKeyDailyBudget, Dimension: policy.DimBudget, MatchValue: "*", Max: b.max, PeriodSeconds: 86400}}
}

func (b budget) Snapshot(context.Context) (map[string]policy.Usage, error) {
	return map[string]policy.Usage{policy.LimitKeyDailyBudget: {Used: b.used, Max: b.max, WindowStart: t0.Add(-time.Hour), ResetAt: t0.Add(23 * time.Hour)}}, nil
}

// TestRefreshOverBudgetMakesNoXCall: a refresh whose ceiling cost does
// not fit the budget is policy_denied_budget before any X call; one that
// fits back-fills and reports what it cost.
func TestRefreshOverBudgetMakesNoXCall(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		s := newStore(t, clk)
		x := &fakeX{}
		for i := range 12 {
			x.timeline = append(x.timeline, xapi.Tweet{ID: fmt.Sprint(1000 + i), CreatedAt: t0.Add(-time.Duration(2+i*24) * time.Hour),
				PublicMetrics: xapi.TweetMetrics{LikeCount: 4, ImpressionCount: 200}})
		}
		x.timeline = append(x.timeline, xapi.Tweet{ID: "2000", CreatedAt: t0.Add(-5 * time.Hour), ReferencedTweets: []xapi.ReferencedTweet{{Type: "replied_to", ID: "1"}}})
		spent := 0.0
		rf := postmetrics.Refresh{
			Client: func() (postmetrics.Client, error) { return x, nil },
			Spent:  func(context.Context, time.Time) (float64, error) { spent += 0.05; return spent, nil },
		}
		q := postmetrics.Query{Active: postmetrics.Hours{Days: [7]bool{true, true, true, true, true, true, true}}}
		req := postmetrics.BestTimesRequest{Query: q, LookbackDays: 90, Refresh: true}

		rf.Budget = budget{used: 0.5, max: 5}
		_, err := s.BestTimes(ctx, req, rf)
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.PolicyBudget {
			t.Fatalf("refresh over budget = %v; want policy_denied_budget", err)
		}
		if n := x.total(); n != 0 {
			t.Fatalf("%d X calls before the budget refusal; want none", n)
		}

		rf.Budget = budget{used: 0, max: 50}
		a, err := s.BestTimes(ctx, req, rf)
		if err != nil {
			t.Fatal(err)
		}
		if a.Refresh == nil || a.Refresh.PostsRead != 13 || a.Refresh.Captured != 13 || a.Refresh.CostUSD <= 0 ||
			a.Refresh.EstimatedCostUSD != postmetrics.RefreshCostCeiling() || a.Posts != 12 || a.Source != postmetrics.SourceAnalytics {
			t.Fatalf("answer %+v, refresh %+v; want 13 read and captured, 12 originals ranked from analytics, a cost", a, a.Refresh)
		}
	})
}

// TestSamplesTakeTheLatestCheckpoint: a post measured three times is one
// sample, with its 7-day counts.
func TestSamplesTakeTheLatestCheckpoint(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(t0)
	s := newStore(t, clk)
	for i, cp := range []time.Duration{24 * time.Hour, 7 * 24 * time.Hour, time.Hour} {
		if ok, err := s.Record(ctx, postmetrics.Row{TweetID: "1", Kind: postmetrics.KindOriginal, PostedAt: t0.AddDate(0, 0, -10), Checkpoint: cp,
			Impressions: -1, Likes: int64(10 * (i + 1)), Source: postmetrics.SourcePublic}); err != nil || !ok {
			t.Fatalf("Record = %v, %v", ok, err)
		}
	}
	if ok, err := s.Record(ctx, postmetrics.Row{TweetID: "1", Kind: postmetrics.KindOriginal, PostedAt: t0, Checkpoint: time.Hour, Source: postmetrics.SourcePublic}); err != nil || ok {
		t.Fatalf("a second row for one checkpoint: Record = %v, %v; want refused quietly", ok, err)
	}
	got, err := s.Samples(ctx, t0.AddDate(0, 0, -90))
	if err != nil || len(got) != 1 || got[0].Likes != 20 || got[0].Impressions != -1 {
		t.Fatalf("Samples = %+v, %v; want one with the 7-day likes (20) and no impressions", got, err)
	}
}

// TestExportStreamsTheAccountsRows: the metrics export holds every
// checkpoint of the account's posts, with its source, and no row of
// another account or captured before since.
func TestExportStreamsTheAccountsRows(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(t0)
	s := newStore(t, clk)
	other := &postmetrics.Store{DB: s.DB, Account: "brand_b", Now: clk.Now}
	for _, cp := range []time.Duration{time.Hour, 24 * time.Hour} {
		if _, err := s.Record(ctx, postmetrics.Row{TweetID: "7", Kind: postmetrics.KindOriginal, PostedAt: t0.Add(-48 * time.Hour), Checkpoint: cp,
			Impressions: -1, Likes: 3, Source: postmetrics.SourcePublic}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
	}
	if _, err := other.Record(ctx, postmetrics.Row{TweetID: "8", Kind: postmetrics.KindOriginal, PostedAt: t0, Checkpoint: time.Hour, Source: postmetrics.SourceAnalytics}); err != nil {
		t.Fatal(err)
	}
	read := func(since time.Time) []map[string]any {
		t.Helper()
		var out []map[string]any
		err := s.Export(ctx, since, func(cols []string, vals []any) error {
			m := map[string]any{}
			for i, c := range cols {
				m[c] = vals[i]
			}
			out = append(out, m)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := read(time.Time{})
	if len(all) != 2 {
		t.Fatalf("export holds %d rows, want the account's 2: %v", len(all), all)
	}
	for _, r := range all {
		if fmt.Sprint(r["tweet_id"]) != "7" || fmt.Sprint(r["source"]) != postmetrics.SourcePublic {
			t.Errorf("row %v is not the account's post 7 from public metrics", r)
		}
	}
	if got := read(t0.Add(30 * time.Minute)); len(got) != 1 || fmt.Sprint(got[0]["checkpoint_hours"]) != "24" {
		t.Errorf("export since the second capture = %v, want the 24 h row alone", got)
	}
}
