package toolstest

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// suggestions decodes suggest_topics; encoding/json matches keys without
// regard to case, so this reads both Go-named and snake_case output.
type suggestions struct {
	Source string
	Topics []struct{ Topic string }
}

func TestWorkflowTools(t *testing.T) {
	e := newEnv(t, envOptions{llm: true})

	t.Run("score_tweet", func(t *testing.T) {
		created := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
		base := map[string]any{"text": "Practical golang patterns for AI agents in production", "author_username": "someone",
			"author_followers": 5000, "likes": 40, "retweets": 5, "replies": 3, "created_at": created}
		score := func(extra map[string]any) scoreResult {
			args := map[string]any{}
			for k, v := range base {
				args[k] = v
			}
			for k, v := range extra {
				args[k] = v
			}
			var s scoreResult
			e.call("score_tweet", args).ok(t, &s)
			return s
		}
		plain := score(nil)
		w := e.Cfg.Scoring
		if sum := w.Keyword + w.Follower + w.Recency + w.Engagement + w.ReplyCount + w.ContentType; sum != 100 {
			t.Fatalf("default weights sum to %g", sum)
		}
		parts := plain.KeywordRelevance + plain.Follower + plain.Recency + plain.Engagement + plain.ReplyCount + plain.ContentType
		if math.Abs(parts-plain.Total) > 1e-6 || plain.Total <= 0 || plain.Total > 100 {
			t.Fatalf("total %g is not the sum of the signals %g", plain.Total, parts)
		}
		if !slices.Equal(plain.MatchedKeywords, []string{"golang", "AI agents"}) || plain.KeywordRelevance <= 0 {
			t.Fatalf("keywords %v scored %g", plain.MatchedKeywords, plain.KeywordRelevance)
		}
		if plain.ContentType != w.ContentType || plain.Follower != w.Follower {
			t.Fatalf("plain post in the follower sweet spot: content_type %g, follower %g", plain.ContentType, plain.Follower)
		}
		if plain.Threshold != w.Threshold || plain.MeetsThreshold != (plain.Total >= w.Threshold) || plain.RecommendedAction == "" {
			t.Fatalf("verdict %+v", plain)
		}
		// Media and quotes are real flags, and they cost the content signal.
		for _, flag := range []string{"has_media", "is_quote"} {
			s := score(map[string]any{flag: true})
			if s.ContentType >= plain.ContentType || s.Total >= plain.Total {
				t.Fatalf("%s: content_type %g (plain %g)", flag, s.ContentType, plain.ContentType)
			}
		}
		if old := score(map[string]any{"created_at": time.Now().Add(-20 * time.Hour).UTC().Format(time.RFC3339)}); old.Recency >= plain.Recency {
			t.Fatalf("a 20-hour-old post scores recency %g, a fresh one %g", old.Recency, plain.Recency)
		}
		if busy := score(map[string]any{"replies": 40}); busy.ReplyCount >= plain.ReplyCount {
			t.Fatalf("a crowded thread scores reply_count %g, a quiet one %g", busy.ReplyCount, plain.ReplyCount)
		}
	})

	t.Run("targets", func(t *testing.T) {
		u := e.otherUser()
		var tg workflow.Target
		e.call("add_target_account", map[string]any{"username": "@" + strings.ToUpper(u.Username)}).ok(t, &tg)
		if tg.UserID != u.ID || !strings.EqualFold(tg.Username, u.Username) {
			t.Fatalf("added %+v, want @%s (%s)", tg, u.Username, u.ID)
		}
		e.call("add_target_account", map[string]any{"username": u.Username}).ok(t, nil)
		var l struct {
			Targets []workflow.Target `json:"targets"`
			Count   int               `json:"count"`
		}
		e.call("list_target_accounts", map[string]any{}).ok(t, &l)
		if l.Count != 1 || l.Targets[0].UserID != u.ID {
			t.Fatalf("targets %+v", l)
		}
		var ac workflow.AuthorContext
		e.call("get_author_context", map[string]any{"identifier": u.ID}).ok(t, &ac)
		if !ac.IsTarget || ac.Author == nil || ac.Author.Username != u.Username {
			t.Fatalf("author context %+v", ac)
		}
		e.call("remove_target_account", map[string]any{"username": u.Username}).ok(t, nil)
		e.call("remove_target_account", map[string]any{"username": u.Username}).fails(t, apperr.NotFound)
		e.call("list_target_accounts", map[string]any{}).ok(t, &l)
		if l.Count != 0 {
			t.Fatalf("targets after removal %+v", l)
		}
		e.call("add_target_account", map[string]any{"username": "nobody_zz_404"}).fails(t, apperr.XNotFound)
	})

	t.Run("follower trend and stats", func(t *testing.T) {
		var tr struct {
			Snapshots []workflow.Snapshot `json:"snapshots"`
		}
		e.call("get_follower_trend", map[string]any{}).ok(t, &tr)
		if len(tr.Snapshots) != 0 {
			t.Fatalf("snapshots before any was taken: %+v", tr.Snapshots)
		}
		s, err := e.App.Workflow()
		if err != nil {
			t.Fatal(err)
		}
		first, err := s.TakeSnapshot(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The account posts once more, then another snapshot: the newest
		// comes first.
		if _, err := e.Sim.PostAs(e.Sim.DemoUserID(), "A post between two snapshots.", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.TakeSnapshot(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.call("get_follower_trend", map[string]any{"limit": 1}).ok(t, &tr)
		if len(tr.Snapshots) != 1 || tr.Snapshots[0].Tweets != first.Tweets+1 {
			t.Fatalf("trend %+v (first snapshot %+v)", tr.Snapshots, first)
		}
		e.call("get_follower_trend", map[string]any{"limit": 10}).ok(t, &tr)
		if len(tr.Snapshots) != 2 {
			t.Fatalf("trend %+v, want both snapshots", tr.Snapshots)
		}
		var st workflow.Stats
		e.call("get_stats", map[string]any{}).ok(t, &st)
		if st.Days != 7 || st.FollowerDelta == nil || *st.FollowersStart != first.Followers {
			t.Fatalf("stats %+v", st)
		}
	})

	t.Run("rate limits", func(t *testing.T) {
		e.call("x_search_tweets", map[string]any{"query": "rust"}).ok(t, nil)
		var rl struct {
			X      []xapi.RateLimitState `json:"x"`
			Policy map[string]struct {
				Used, Max float64
			} `json:"policy"`
			Wait int64 `json:"recommended_wait_ms"`
		}
		e.call("get_rate_limits", map[string]any{}).ok(t, &rl)
		i := slices.IndexFunc(rl.X, func(s xapi.RateLimitState) bool { return s.Endpoint == "GET /2/tweets/search/recent" })
		if i < 0 || !rl.X[i].HasWindow || rl.X[i].Limit != 300 || rl.X[i].Remaining >= 300 {
			t.Fatalf("X rate limits %+v", rl.X)
		}
		if u, ok := rl.Policy["compat:max_mutations_per_hour"]; !ok || u.Max != 20 {
			t.Fatalf("policy counters %+v", rl.Policy)
		}
		if rl.Wait != 0 {
			t.Fatalf("recommended_wait_ms %d with quota left", rl.Wait)
		}
	})

	t.Run("generate", func(t *testing.T) {
		var tw struct {
			Tweet          string `json:"tweet"`
			WeightedLength int    `json:"weighted_length"`
		}
		e.call("generate_tweet", map[string]any{"topic": "agent safety", "format": "tip"}).ok(t, &tw)
		if tw.Tweet == "" || tw.WeightedLength != tweettext.WeightedLength(tw.Tweet) || tw.WeightedLength > 280 {
			t.Fatalf("generate_tweet %+v", tw)
		}
		var rp struct {
			Reply string `json:"reply"`
		}
		e.call("generate_reply", map[string]any{"tweet_text": "How do you stop an agent from double posting?", "tweet_author": "@someone"}).ok(t, &rp)
		if rp.Reply == "" || strings.HasPrefix(rp.Reply, "@") {
			t.Fatalf("generate_reply %+v", rp)
		}
		var th struct {
			Thread []string `json:"thread"`
			Count  int      `json:"tweet_count"`
		}
		e.call("generate_thread", map[string]any{"topic": "agent guardrails", "structure": "framework"}).ok(t, &th)
		if th.Count != len(th.Thread) || th.Count < 2 {
			t.Fatalf("generate_thread %+v", th)
		}
		for i, p := range th.Thread {
			if tweettext.WeightedLength(p) > 280 || strings.HasPrefix(p, "1/") {
				t.Fatalf("thread part %d: %q", i, p)
			}
		}
		var plan struct {
			Tweets    []string `json:"thread_tweets"`
			Structure string   `json:"structure_used"`
			Hook      string   `json:"hook_type"`
			Preview   string   `json:"first_tweet_preview"`
			Estimate  string   `json:"estimated_performance"`
		}
		e.call("generate_thread_plan", map[string]any{"topic": "agent safety", "objective": "teach", "structure": "mistakes"}).ok(t, &plan)
		if len(plan.Tweets) < 2 || plan.Structure != "mistakes" || plan.Hook == "" || plan.Preview == "" || plan.Estimate != "high" {
			t.Fatalf("generate_thread_plan %+v", plan)
		}
		var sg suggestions
		e.call("suggest_topics", map[string]any{"count": 3}).ok(t, &sg)
		if sg.Source != "llm" || len(sg.Topics) != 3 || sg.Topics[0].Topic != "Agent approval queues" {
			t.Fatalf("suggest_topics %+v", sg)
		}
	})

	t.Run("drafts", func(t *testing.T) {
		var c workflow.ComposeResult
		e.call("compose_tweet", map[string]any{"topic": "Go tooling"}).ok(t, &c)
		if !c.Generated || c.RoutedToApproval || c.Status != "draft" || c.Source != "ai_assist" || c.Text == "" {
			t.Fatalf("compose_tweet %+v", c)
		}
		var th workflow.ComposeResult
		e.call("compose_tweet", map[string]any{"tweets": []string{"one", "two"}}).ok(t, &th)
		if th.ContentType != "thread" || th.Generated || !slices.Equal(th.Tweets, []string{"one", "two"}) {
			t.Fatalf("thread draft %+v", th)
		}
		var d workflow.Draft
		e.call("update_draft", map[string]any{"draft_id": c.ID, "content": "Edited by a human."}).ok(t, &d)
		if d.Text != "Edited by a human." || d.Status != "draft" {
			t.Fatalf("update %+v", d)
		}
		e.call("update_draft", map[string]any{"draft_id": c.ID, "scheduled_for": "2999-05-01T10:00:00Z"}).ok(t, &d)
		if d.Status != "scheduled" || !strings.HasPrefix(d.ScheduledFor, "2999-05-01T10:00:00") {
			t.Fatalf("schedule %+v", d)
		}
		d = workflow.Draft{}
		e.call("update_draft", map[string]any{"draft_id": c.ID, "unschedule": true}).ok(t, &d)
		if d.Status != "draft" || d.ScheduledFor != "" {
			t.Fatalf("unschedule %+v", d)
		}
		e.call("update_draft", map[string]any{"draft_id": th.ID, "tweets": []string{"uno", "dos", "tres"}}).ok(t, &d)
		if !slices.Equal(d.Tweets, []string{"uno", "dos", "tres"}) {
			t.Fatalf("thread update %+v", d)
		}
		e.call("delete_draft", map[string]any{"draft_id": c.ID}).ok(t, nil)
		var l struct {
			Drafts []workflow.Draft `json:"drafts"`
			Count  int              `json:"count"`
		}
		e.call("list_drafts", map[string]any{}).ok(t, &l)
		if l.Count != 1 || l.Drafts[0].ID != th.ID {
			t.Fatalf("drafts after delete %+v", l)
		}
		e.call("delete_draft", map[string]any{"draft_id": c.ID}).fails(t, apperr.NotFound)
	})

	t.Run("unreplied tweets", func(t *testing.T) {
		var res discovery.Result
		e.call("find_reply_opportunities", map[string]any{"query": "rust", "min_score": 0, "limit": 5}).ok(t, &res)
		var l struct {
			Tweets []discovery.Candidate `json:"tweets"`
			Count  int                   `json:"count"`
		}
		e.call("list_unreplied_tweets", map[string]any{}).ok(t, &l)
		if l.Count < len(res.Candidates) || l.Count == 0 {
			t.Fatalf("%d unreplied after finding %d", l.Count, len(res.Candidates))
		}
		e.call("list_unreplied_tweets", map[string]any{"threshold": 100}).ok(t, &l)
		for _, c := range l.Tweets {
			if c.Score < 100 {
				t.Fatalf("threshold 100 returned a %g", c.Score)
			}
		}
	})
}

type scoreResult struct {
	Total             float64  `json:"total"`
	KeywordRelevance  float64  `json:"keyword_relevance"`
	Follower          float64  `json:"follower"`
	Recency           float64  `json:"recency"`
	Engagement        float64  `json:"engagement"`
	ReplyCount        float64  `json:"reply_count"`
	ContentType       float64  `json:"content_type"`
	MatchedKeywords   []string `json:"matched_keywords"`
	Threshold         float64  `json:"threshold"`
	MeetsThreshold    bool     `json:"meets_threshold"`
	RecommendedAction string   `json:"recommended_action"`
}

// TestPolicyRateLimit: an exhausted policy limit shows in get_rate_limits
// and denies the next mutation without reaching X.
func TestPolicyRateLimit(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) { c.MCPPolicy.MaxMutationsPerHour = 1 }})
	executed(t, e.call("x_bookmark_tweet", map[string]any{"tweet_id": e.engageTarget(1)}), nil)
	before := e.counters()
	r := e.call("x_bookmark_tweet", map[string]any{"tweet_id": e.engageTarget(2)}).fails(t, apperr.PolicyRateLimited)
	if _, ok := r.extra("rate_limit_reset").(string); !ok {
		t.Fatalf("no rate_limit_reset: %v", r.Error.Extra)
	}
	e.requireDelta(before, nil)
	var rl struct {
		Wait int64 `json:"recommended_wait_ms"`
	}
	e.call("get_rate_limits", map[string]any{}).ok(t, &rl)
	if rl.Wait <= 0 || rl.Wait > time.Hour.Milliseconds() {
		t.Fatalf("recommended_wait_ms = %d with the hourly limit used up", rl.Wait)
	}
}
