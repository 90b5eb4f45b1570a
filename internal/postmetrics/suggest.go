package postmetrics

import (
	"context"
	"fmt"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/queue"
)

// DefaultLookbackDays is how far back a ranking reads by default.
const DefaultLookbackDays = 90

// QueryOf is the ranking query of an account's configuration: its
// timezone and active hours.
func QueryOf(cfg *config.Config, metric string, minPosts, top int) (Query, error) {
	h, loc, err := HoursOf(cfg.Schedule)
	if err != nil {
		return Query{}, err
	}
	return Query{Loc: loc, Metric: metric, MinPosts: minPosts, Top: top, Active: h}, nil
}

// Suggestion is suggest_queue_slots' data: queue slots in the [queue]
// slot syntax, taken from the best buckets, and what [queue] holds now.
type Suggestion struct {
	Slots    []string `json:"slots"`
	Buckets  []Bucket `json:"buckets"`
	Current  []string `json:"current"`
	Timezone string   `json:"timezone"`
	Metric   string   `json:"metric"`
	Posts    int      `json:"posts"`
	// TOML is the line to put under [queue] (tuitbot queue
	// apply-suggestion writes it).
	TOML string `json:"toml"`
}

// Suggest turns the best count buckets into queue slots: buckets at the
// same hour share one slot with their days listed ("tue,thu 09:00"),
// ordered by their best bucket.
func Suggest(r *Ranking, count int) []string {
	var rules []queue.Rule
	byHour := map[int]int{}
	for i, b := range r.Buckets {
		if i == count {
			break
		}
		wd := -1
		for d, n := range dayNames {
			if n == b.Weekday {
				wd = d
			}
		}
		if wd < 0 {
			continue
		}
		j, ok := byHour[b.Hour]
		if !ok {
			j = len(rules)
			byHour[b.Hour] = j
			rules = append(rules, queue.Rule{Hour: b.Hour})
		}
		rules[j].Days[time.Weekday(wd)] = true
	}
	out := make([]string, len(rules))
	for i, rl := range rules {
		out[i] = rl.String()
	}
	return out
}

// SuggestSlots ranks the account's hours over the default lookback and
// proposes count of the best as queue slots. Nothing is written.
func (s *Store) SuggestSlots(ctx context.Context, cfg *config.Config, count int) (*Suggestion, error) {
	if count <= 0 {
		count = 3
	}
	q, err := QueryOf(cfg, "", 0, count)
	if err != nil {
		return nil, err
	}
	a, err := s.BestTimes(ctx, BestTimesRequest{Query: q, LookbackDays: DefaultLookbackDays}, Refresh{})
	if err != nil {
		return nil, err
	}
	slots := Suggest(a.Ranking, count)
	if len(slots) == 0 {
		return nil, apperr.New(apperr.InsufficientData, "no measured hour of the week lies in the active hours ([schedule]); nothing to suggest").
			With("posts", a.Posts).With("min_posts", DefaultMinPosts)
	}
	cur := cfg.Queue.Slots
	if cur == nil {
		cur = []string{}
	}
	return &Suggestion{Slots: slots, Buckets: a.Buckets, Current: cur, Timezone: a.Timezone, Metric: a.Metric, Posts: a.Posts,
		TOML: fmt.Sprintf("slots = %s", config.TOMLStrings(slots))}, nil
}
