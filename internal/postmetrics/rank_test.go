package postmetrics

import (
	"errors"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// monday0 is a Monday, midnight UTC.
var monday0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// at is a post time: the week's day (0 = Monday), hour, and week back.
func at(day, hour, week int) int64 {
	return monday0.AddDate(0, 0, day-7*week).Add(time.Duration(hour) * time.Hour).Unix()
}

// rated is a post with the given engagement rate over 1,000 impressions.
func rated(posted int64, rate float64) Sample {
	return Sample{PostedUnix: posted, Impressions: 1000, Engagements: int64(rate * 1000), Likes: int64(rate * 600), Source: SourcePublic}
}

var allDays = Hours{Start: 8, End: 22, Days: [7]bool{true, true, true, true, true, true, true}}

func rankOf(t *testing.T, samples []Sample, q Query) *Ranking {
	t.Helper()
	if q.Active == (Hours{}) {
		q.Active = allDays
	}
	r, err := Rank(samples, q)
	if err != nil {
		t.Fatalf("Rank: %v", err)
	}
	return r
}

func bucket(r *Ranking, slot string) (Bucket, int) {
	for i, b := range r.Buckets {
		if b.Slot == slot {
			return b, i
		}
	}
	return Bucket{}, -1
}

// TestOneViralPostDoesNotRankItsBucketFirst: a bucket whose only post went
// viral has the highest median of all, yet ranks below a bucket whose
// eight posts are steadily good, and with low confidence.
func TestOneViralPostDoesNotRankItsBucketFirst(t *testing.T) {
	var s []Sample
	for w := range 8 {
		s = append(s, rated(at(1, 9, w), 0.030)) // tue 09: steadily good
	}
	for w := range 5 {
		for _, dh := range [][2]int{{0, 10}, {2, 14}, {3, 16}, {4, 11}} {
			s = append(s, rated(at(dh[0], dh[1], w), 0.020+0.001*float64(w)))
		}
	}
	s = append(s, rated(at(5, 15, 0), 0.500)) // sat 15: one viral post
	r := rankOf(t, s, Query{Top: 168})
	viral, vi := bucket(r, "sat 15:00")
	good, gi := bucket(r, "tue 09:00")
	if vi < 0 || gi < 0 {
		t.Fatalf("buckets %+v lack sat 15:00 or tue 09:00", r.Buckets)
	}
	// The viral post counts as the account's 95th-percentile post.
	if viral.Median != r.Cap || r.Cap >= 0.5 {
		t.Errorf("the viral bucket's median is %v with cap %v; want the post capped", viral.Median, r.Cap)
	}
	if gi != 0 || vi < gi {
		t.Errorf("ranked tue 09:00 at %d and the one-post viral sat 15:00 at %d; want tue 09:00 first", gi, vi)
	}
	if viral.ConfidenceLabel != "low" || good.ConfidenceLabel != "medium" || viral.Confidence != 1.0/6 {
		t.Errorf("confidence viral %v (%s), steady %v (%s); want 1/6 low and 8/13 medium", viral.Confidence, viral.ConfidenceLabel, good.Confidence, good.ConfidenceLabel)
	}
	want := (8*good.Median + ShrinkK*r.OverallMedian) / (8 + ShrinkK)
	if good.Score != want {
		t.Errorf("tue 09:00 scored %v, want (n·median_b + k·median_all)/(n+k) = %v", good.Score, want)
	}
}

// TestTooFewPostsIsInsufficientData: fewer measured posts than min_posts
// (10 by default) is insufficient_data carrying the count; a post without
// impressions has no engagement rate and does not count for it.
func TestTooFewPostsIsInsufficientData(t *testing.T) {
	nine := make([]Sample, 0, 12)
	for i := range 9 {
		nine = append(nine, rated(at(i%7, 10, i/7), 0.02))
	}
	noImpr := append(append([]Sample{}, nine...), Sample{PostedUnix: at(0, 9, 3), Impressions: -1, Engagements: 5, Likes: 5})
	for _, c := range []struct {
		name      string
		samples   []Sample
		q         Query
		posts     int
		minPosts  int
		wantError bool
	}{
		{"nine posts", nine, Query{}, 9, 10, true},
		{"tenth post without impressions", noImpr, Query{}, 9, 10, true},
		{"tenth post counts for engagements", noImpr, Query{Metric: MetricEngagements}, 10, 10, false},
		{"min_posts above the count", noImpr, Query{Metric: MetricEngagements, MinPosts: 11}, 10, 11, true},
		{"min_posts below the count", nine, Query{MinPosts: 5}, 9, 5, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.q.Active = allDays
			r, err := Rank(c.samples, c.q)
			var ae *apperr.Error
			if !c.wantError {
				if err != nil || r.Posts != c.posts {
					t.Fatalf("Rank = %+v, %v; want a ranking of %d posts", r, err, c.posts)
				}
				return
			}
			if !errors.As(err, &ae) || ae.Code != apperr.InsufficientData || ae.Extra["posts"] != c.posts || ae.Extra["min_posts"] != c.minPosts {
				t.Fatalf("Rank = %v; want insufficient_data with posts %d and min_posts %d", err, c.posts, c.minPosts)
			}
		})
	}
}

// TestOnlyActiveHoursAreRanked: the best bucket of all lies at 03:00, out
// of the active hours, and is never returned.
func TestOnlyActiveHoursAreRanked(t *testing.T) {
	var s []Sample
	for w := range 6 {
		s = append(s, rated(at(2, 3, w), 0.09), rated(at(2, 10, w), 0.04), rated(at(4, 20, w), 0.02))
	}
	r := rankOf(t, s, Query{Top: 168})
	if _, i := bucket(r, "wed 03:00"); i >= 0 || r.Buckets[0].Slot != "wed 10:00" || r.ActiveBuckets != 2 {
		t.Fatalf("buckets %+v; want wed 10:00 first and no 03:00", r.Buckets)
	}
	// All day ranks it first.
	r = rankOf(t, s, Query{Top: 168, Active: Hours{Days: allDays.Days}})
	if r.Buckets[0].Slot != "wed 03:00" {
		t.Fatalf("all day, first bucket %s; want wed 03:00", r.Buckets[0].Slot)
	}
}

func TestHoursActive(t *testing.T) {
	weekdays := Hours{Start: 22, End: 6}
	for d := time.Monday; d <= time.Friday; d++ {
		weekdays.Days[d] = true
	}
	for _, c := range []struct {
		h    Hours
		wd   time.Weekday
		hour int
		want bool
	}{
		{allDays, time.Sunday, 8, true},
		{allDays, time.Sunday, 21, true},
		{allDays, time.Sunday, 22, false},
		{allDays, time.Sunday, 7, false},
		{weekdays, time.Friday, 23, true},
		{weekdays, time.Saturday, 2, true}, // Friday's night
		{weekdays, time.Monday, 2, false},  // Sunday's night
		{weekdays, time.Monday, 12, false},
		{Hours{Start: 0, End: 24, Days: allDays.Days}, time.Monday, 3, true},
	} {
		if got := c.h.Active(c.wd, c.hour); got != c.want {
			t.Errorf("%+v.Active(%s, %d) = %v, want %v", c.h, c.wd, c.hour, got, c.want)
		}
	}
}

// TestBucketsAreInTheAccountsTimezone: a post at 08:00 UTC in winter is a
// 09:00 post in Berlin.
func TestBucketsAreInTheAccountsTimezone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	var s []Sample
	for w := range 10 {
		s = append(s, rated(at(1, 8, w), 0.02))
	}
	r := rankOf(t, s, Query{Loc: berlin})
	if r.Buckets[0].Slot != "tue 09:00" || r.Timezone != "Europe/Berlin" {
		t.Fatalf("bucket %s in %s; want tue 09:00 in Europe/Berlin", r.Buckets[0].Slot, r.Timezone)
	}
}

func TestSuggestMergesDaysAtOneHour(t *testing.T) {
	r := &Ranking{Buckets: []Bucket{{Weekday: "thu", Hour: 9}, {Weekday: "tue", Hour: 9}, {Weekday: "sat", Hour: 11}, {Weekday: "mon", Hour: 15}}}
	got := Suggest(r, 3)
	if len(got) != 2 || got[0] != "tue,thu 09:00" || got[1] != "sat 11:00" {
		t.Fatalf("Suggest = %q; want [tue,thu 09:00 sat 11:00]", got)
	}
}
