package toolstest

import (
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

type dryRunReport struct {
	DryRun bool `json:"dry_run"`
	Valid  bool `json:"valid"`
	Tweets []struct {
		Index          int      `json:"index"`
		Text           string   `json:"text"`
		WeightedLength int      `json:"weighted_length"`
		Valid          bool     `json:"valid"`
		MediaIDs       []string `json:"media_ids"`
		ChainAction    string   `json:"chain_action"`
	} `json:"tweets"`
	PolicyDecision   string `json:"policy_decision"`
	PolicyRuleID     string `json:"policy_rule_id"`
	PolicyWouldAllow bool   `json:"policy_would_allow"`
	XAvailable       bool   `json:"x_client_available"`
}

// sideEffects is everything a dry run must leave alone.
type sideEffects struct {
	counters  map[string]int64
	audit     int
	pending   int
	actionLog int
}

func (e *env) sideEffects() sideEffects {
	e.t.Helper()
	var m struct {
		Count int `json:"count"`
	}
	e.call("get_recent_mutations", map[string]any{"limit": 100}).ok(e.t, &m)
	var p struct {
		Pending int `json:"pending"`
	}
	e.call("get_pending_count", map[string]any{}).ok(e.t, &p)
	var l struct {
		Count int `json:"count"`
	}
	e.call("get_action_log", map[string]any{"since_hours": 24}).ok(e.t, &l)
	return sideEffects{counters: e.counters(), audit: m.Count, pending: p.Pending, actionLog: l.Count}
}

func (e *env) requireNoSideEffects(before sideEffects) {
	e.t.Helper()
	after := e.sideEffects()
	e.requireDelta(before.counters, nil)
	if after.audit != before.audit || after.pending != before.pending || after.actionLog != before.actionLog {
		e.t.Fatalf("side effects: audit %d→%d, pending %d→%d, action log %d→%d", before.audit, after.audit,
			before.pending, after.pending, before.actionLog, after.actionLog)
	}
}

func TestDryRun(t *testing.T) {
	// "Go " 3 + rocket 2 + " " 1 + URL 23 + " " 1 + two CJK 4 = 34.
	const text = "Go 🚀 https://go.dev/blog/a/rather/long/path/that/still/counts/as/twenty-three 日本"
	const weight = 34

	for _, c := range []struct {
		name      string
		opts      envOptions
		decision  string
		wouldRun  bool
		ruleStart string
	}{
		{"permissive policy", envOptions{permissive: true}, "allow", true, ""},
		{"default policy", envOptions{}, "require_approval", false, ""},
		{"composer mode", envOptions{permissive: true, composer: true}, "require_approval", false, "hard:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.opts)
			before := e.sideEffects()

			var rep dryRunReport
			e.call("x_post_tweet_dry_run", map[string]any{"text": text, "media_ids": []string{"123"}}).ok(t, &rep)
			if !rep.DryRun || !rep.Valid || len(rep.Tweets) != 1 || !rep.XAvailable {
				t.Fatalf("report %+v", rep)
			}
			tw := rep.Tweets[0]
			if tw.WeightedLength != weight || !tw.Valid || tw.ChainAction != "post_tweet" || !slices.Equal(tw.MediaIDs, []string{"123"}) {
				t.Fatalf("tweet %+v, want weighted length %d", tw, weight)
			}
			if rep.PolicyDecision != c.decision || rep.PolicyWouldAllow != c.wouldRun || !strings.HasPrefix(rep.PolicyRuleID, c.ruleStart) {
				t.Fatalf("policy %s/%s would_allow=%t, want %s/%s* %t", rep.PolicyDecision, rep.PolicyRuleID, rep.PolicyWouldAllow, c.decision, c.ruleStart, c.wouldRun)
			}

			var th dryRunReport
			tweets := []string{"Hook: one gateway for every write.", strings.Repeat("x", 281), text}
			e.call("x_post_thread_dry_run", map[string]any{"tweets": tweets, "media_ids": [][]string{{"7"}}}).ok(t, &th)
			if th.Valid || len(th.Tweets) != 3 || th.PolicyDecision != c.decision || th.PolicyWouldAllow != c.wouldRun {
				t.Fatalf("thread report %+v", th)
			}
			for i, want := range []struct {
				weight int
				valid  bool
				chain  string
				media  []string
			}{
				{34, true, "post_tweet", []string{"7"}},
				{281, false, "reply_to_previous", []string{}},
				{weight, true, "reply_to_previous", []string{}},
			} {
				got := th.Tweets[i]
				if got.Index != i || got.Text != tweets[i] || got.WeightedLength != want.weight || got.Valid != want.valid ||
					got.ChainAction != want.chain || !slices.Equal(got.MediaIDs, want.media) {
					t.Fatalf("thread tweet %d: %+v, want %+v", i, got, want)
				}
			}
			e.call("x_post_thread_dry_run", map[string]any{"tweets": []string{}}).fails(t, apperr.InvalidInput).mentions(t, "tweets")
			e.call("x_post_tweet_dry_run", map[string]any{"text": 5}).fails(t, apperr.InvalidInput).mentions(t, "text")
			e.requireNoSideEffects(before)
		})
	}
}
