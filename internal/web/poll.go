package web

import (
	"fmt"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// pollView is a posted poll as a page shows it: each choice with its
// votes and share of them, how long it is open, and whether voting ended.
type pollView struct {
	Choices []pollResult
	// Total is the votes in words ("12 votes").
	Total string
	// Duration is how long it is open in words ("1 day"); "" when X did
	// not say.
	Duration string
	Open     bool
	// Ends is when voting ends (or ended); zero when X did not say.
	Ends stamp
}

// pollResult is one choice of a poll and its votes.
type pollResult struct {
	Label, Votes, Share string
}

// pollOf is p as a page shows it at now; nil for no poll. X's
// voting_status decides whether it is open; without it, its end does.
func pollOf(now time.Time, p *xapi.TweetPoll) *pollView {
	if p == nil {
		return nil
	}
	var total int64
	for _, o := range p.Options {
		total += o.Votes
	}
	v := &pollView{Total: votes(total), Choices: make([]pollResult, len(p.Options))}
	for i, o := range p.Options {
		share := "0%"
		if total > 0 {
			share = fmt.Sprintf("%.0f%%", float64(o.Votes)*100/float64(total))
		}
		v.Choices[i] = pollResult{Label: o.Label, Votes: votes(o.Votes), Share: share}
	}
	if p.DurationMinutes > 0 {
		v.Duration = actions.PollDuration(p.DurationMinutes)
	}
	switch p.VotingStatus {
	case "open":
		v.Open = true
	case "closed":
	default:
		v.Open = !p.EndDatetime.IsZero() && now.Before(p.EndDatetime)
	}
	if !p.EndDatetime.IsZero() {
		v.Ends = stampOf(now, store.FormatTime(p.EndDatetime), true)
	}
	return v
}

// votes is n votes in words.
func votes(n int64) string {
	if n == 1 {
		return "1 vote"
	}
	return describe.Count(n) + " votes"
}
