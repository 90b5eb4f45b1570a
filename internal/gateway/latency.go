package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// LatencyStat is how long decided items waited for a person (queued to
// decided), for one review channel or ("all") every one.
type LatencyStat struct {
	Channel string  `json:"channel"`
	Count   int     `json:"count"`
	P50     float64 `json:"p50_seconds"`
	P90     float64 `json:"p90_seconds"`
}

// ReviewChannel is the channel a reviewer decided through, as metrics and
// reports group it: link:<channel> as is, every Telegram user as
// "telegram", the built-in reviewers by name and any other name a person
// gave the CLI as "other", so the set stays small.
func ReviewChannel(reviewer string) string {
	switch {
	case strings.HasPrefix(reviewer, "link:"):
		return reviewer
	case strings.HasPrefix(reviewer, "telegram:"):
		return "telegram"
	}
	switch reviewer {
	case "web", "cli", AgentReviewer, "draft_deleted", "demo":
		return reviewer
	}
	return "other"
}

// latencyRows bounds how many decisions the report reads.
const latencyRows = 10000

// ApprovalLatency reports the p50 and p90 wait of the items decided since
// since, overall ("all", first) and per review channel.
func (g *Gateway) ApprovalLatency(ctx context.Context, since time.Time) ([]LatencyStat, error) {
	rows, err := g.opts.DB.QueryContext(ctx, `SELECT created_at, reviewed_at, COALESCE(reviewed_by, '') FROM approval_queue
		WHERE account_id = ? AND reviewed_at IS NOT NULL AND reviewed_at >= ? ORDER BY id DESC LIMIT ?`,
		g.opts.AccountID, ts(since), latencyRows)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read approval latency: %v", err)
	}
	defer rows.Close()
	waits := map[string][]float64{}
	for rows.Next() {
		var created, reviewed, by string
		if err := rows.Scan(&created, &reviewed, &by); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read approval latency: %v", err)
		}
		c, err1 := store.ParseTime(created)
		r, err2 := store.ParseTime(reviewed)
		if err1 != nil || err2 != nil || r.Before(c) {
			continue
		}
		d := r.Sub(c).Seconds()
		waits["all"] = append(waits["all"], d)
		ch := ReviewChannel(by)
		waits[ch] = append(waits[ch], d)
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read approval latency: %v", err)
	}
	out := []LatencyStat{}
	names := make([]string, 0, len(waits))
	for n := range waits {
		if n != "all" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if _, ok := waits["all"]; ok {
		names = append([]string{"all"}, names...)
	}
	for _, n := range names {
		w := waits[n]
		slices.Sort(w)
		out = append(out, LatencyStat{Channel: n, Count: len(w), P50: quantile(w, 0.5), P90: quantile(w, 0.9)})
	}
	return out, nil
}

// quantile is the nearest-rank q-quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// FormatLatency renders a wait for people: "45 s", "12 min", "3.5 h".
func FormatLatency(seconds float64) string {
	switch {
	case seconds < 90:
		return fmt.Sprintf("%.0f s", seconds)
	case seconds < 90*60:
		return fmt.Sprintf("%.0f min", seconds/60)
	default:
		return fmt.Sprintf("%.1f h", seconds/3600)
	}
}
