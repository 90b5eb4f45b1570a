package postmetrics

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// The metrics a ranking can use.
const (
	MetricEngagementRate = "engagement_rate" // engagements / impressions
	MetricEngagements    = "engagements"     // likes + reposts + replies + quotes + bookmarks
	MetricImpressions    = "impressions"
	MetricLikes          = "likes"
)

// Metrics lists the metrics, the default first.
var Metrics = []string{MetricEngagementRate, MetricEngagements, MetricImpressions, MetricLikes}

// The ranking's two constants (docs/tools.md, get_best_posting_times):
//   - ShrinkK is the weight, in posts, of the account's overall median in
//     a bucket's score: a bucket needs ShrinkK posts of its own before
//     they count for as much as everything else the account posted.
//   - CapQuantile caps each post's value at the account's 95th percentile
//     before the medians are taken, so that one viral post counts as one
//     very good post, not as a new level.
const (
	ShrinkK     = 5.0
	CapQuantile = 0.95
)

// DefaultMinPosts is the fewest measured posts a ranking is made from.
const DefaultMinPosts = 10

// Hours are the account's active hours: a bucket outside them is never
// suggested. Start == End is the whole day; a window that wraps past
// midnight (22 to 6) belongs to the day it starts on, as the autopilot
// reads [schedule].
type Hours struct {
	Start, End int
	Days       [7]bool // by time.Weekday
}

// Active reports whether the hour starting at hour on wd is inside h.
func (h Hours) Active(wd time.Weekday, hour int) bool {
	switch {
	case h.Start == h.End || h.Start == 0 && h.End == 24:
		return h.Days[wd]
	case h.Start < h.End:
		return h.Days[wd] && hour >= h.Start && hour < h.End
	case hour >= h.Start:
		return h.Days[wd]
	case hour < h.End:
		return h.Days[(wd+6)%7]
	}
	return false
}

// Query is what a ranking is asked.
type Query struct {
	Loc      *time.Location
	Metric   string
	MinPosts int
	Top      int
	Active   Hours
}

// Bucket is one hour of the week and how the account's posts did in it.
type Bucket struct {
	Weekday string  `json:"weekday"` // mon..sun
	Hour    int     `json:"hour"`
	Slot    string  `json:"slot"` // in the [queue] slot syntax, "tue 09:00"
	Posts   int     `json:"posts"`
	Median  float64 `json:"median"`
	Score   float64 `json:"score"`
	// Confidence is n / (n + ShrinkK): the share of the score that comes
	// from the bucket's own posts.
	Confidence      float64 `json:"confidence"`
	ConfidenceLabel string  `json:"confidence_label"` // low, medium, high
}

// Ranking is get_best_posting_times' answer.
type Ranking struct {
	Metric        string   `json:"metric"`
	Timezone      string   `json:"timezone"`
	Posts         int      `json:"posts"`
	OverallMedian float64  `json:"overall_median"`
	Cap           float64  `json:"cap"`
	K             float64  `json:"k"`
	Buckets       []Bucket `json:"buckets"`
	// ActiveBuckets is how many hours of the week held posts and lie in
	// the active hours; Buckets is the best Top of them.
	ActiveBuckets int `json:"active_buckets"`
	// Sources counts the posts by where their counts came from.
	Sources map[string]int `json:"sources"`
}

var dayNames = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

func value(s Sample, metric string) (float64, bool) {
	switch metric {
	case MetricEngagements:
		return float64(s.Engagements), true
	case MetricImpressions:
		return float64(s.Impressions), s.Impressions >= 0
	case MetricLikes:
		return float64(s.Likes), true
	}
	if s.Impressions <= 0 {
		return 0, false
	}
	return float64(s.Engagements) / float64(s.Impressions), true
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Rank buckets samples by weekday and hour in q.Loc and ranks the active
// buckets by score = (n·median_b + K·median_all) / (n + K), where each
// post's value is first capped at the account's CapQuantile value. Fewer
// than q.MinPosts usable posts is insufficient_data with the count.
func Rank(samples []Sample, q Query) (*Ranking, error) {
	if q.Metric == "" {
		q.Metric = MetricEngagementRate
	}
	if !slices.Contains(Metrics, q.Metric) {
		return nil, apperr.New(apperr.InvalidInput, "metric: %q is not one of %v", q.Metric, Metrics)
	}
	if q.MinPosts <= 0 {
		q.MinPosts = DefaultMinPosts
	}
	if q.Loc == nil {
		q.Loc = time.UTC
	}
	type post struct {
		v    float64
		slot int // weekday*24 + hour
	}
	posts := make([]post, 0, len(samples))
	all := make([]float64, 0, len(samples))
	sources := map[string]int{}
	for _, s := range samples {
		v, ok := value(s, q.Metric)
		if !ok {
			continue
		}
		t := time.Unix(s.PostedUnix, 0).In(q.Loc)
		posts = append(posts, post{v, int(t.Weekday())*24 + t.Hour()})
		all = append(all, v)
		sources[s.Source]++
	}
	if len(posts) < q.MinPosts {
		return nil, apperr.New(apperr.InsufficientData, "%d original posts have a measured %s; at least %d are needed to rank posting times", len(posts), q.Metric, q.MinPosts).
			With("posts", len(posts)).With("min_posts", q.MinPosts)
	}
	sort.Float64s(all)
	capAt := all[max(0, int(math.Ceil(CapQuantile*float64(len(all))))-1)]
	overall := median(all)
	var byslot [7 * 24][]float64
	for _, p := range posts {
		byslot[p.slot] = append(byslot[p.slot], math.Min(p.v, capAt))
	}
	r := &Ranking{Metric: q.Metric, Timezone: q.Loc.String(), Posts: len(posts), OverallMedian: overall, Cap: capAt, K: ShrinkK, Sources: sources}
	var buckets []Bucket
	for slot, vs := range byslot {
		wd, hour := time.Weekday(slot/24), slot%24
		if len(vs) == 0 || !q.Active.Active(wd, hour) {
			continue
		}
		sort.Float64s(vs)
		n := float64(len(vs))
		m := median(vs)
		conf := n / (n + ShrinkK)
		label := "low"
		switch {
		case conf >= 0.75:
			label = "high"
		case conf >= 0.5:
			label = "medium"
		}
		buckets = append(buckets, Bucket{Weekday: dayNames[wd], Hour: hour, Slot: fmt.Sprintf("%s %02d:00", dayNames[wd], hour), Posts: len(vs),
			Median: m, Score: (n*m + ShrinkK*overall) / (n + ShrinkK), Confidence: conf, ConfidenceLabel: label})
	}
	sort.SliceStable(buckets, func(i, j int) bool {
		if buckets[i].Score != buckets[j].Score {
			return buckets[i].Score > buckets[j].Score
		}
		return buckets[i].Posts > buckets[j].Posts
	})
	r.ActiveBuckets = len(buckets)
	if q.Top > 0 && len(buckets) > q.Top {
		buckets = buckets[:q.Top]
	}
	r.Buckets = buckets
	if r.Buckets == nil {
		r.Buckets = []Bucket{}
	}
	return r, nil
}
