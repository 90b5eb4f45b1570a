package toolstest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

type feed struct {
	Tweets   []discovery.Candidate `json:"tweets"`
	Count    int                   `json:"count"`
	MinScore float64               `json:"min_score"`
}

// discover runs step 1: find opportunities, check the ranking, persistence
// and the remembered cursor, and return two candidates to answer.
func discover(t *testing.T, e *env) []discovery.Candidate {
	t.Helper()
	demo := e.Sim.DemoUserID()
	threshold := e.Cfg.Scoring.Threshold
	var res discovery.Result
	e.call("find_reply_opportunities", map[string]any{"limit": 10}).ok(t, &res)
	if res.TotalSearched == 0 || res.NewTweets == 0 || res.NewestID == "" || res.Threshold != threshold {
		t.Fatalf("first search: %+v", res)
	}
	if !strings.Contains(res.Query, "golang") || !strings.Contains(res.Query, `"AI agents"`) {
		t.Fatalf("default query %q is not built from the product keywords", res.Query)
	}
	for i, c := range res.Candidates {
		if c.Score < threshold || (i > 0 && c.Score > res.Candidates[i-1].Score) {
			t.Fatalf("candidate %d scores %.1f: below the threshold %.0f or out of order", i, c.Score, threshold)
		}
		if c.AuthorID == demo || c.AuthorUsername == xsim.DemoUsername {
			t.Fatalf("candidate %s is the account's own post", c.TweetID)
		}
		if c.AuthorUsername == "" || c.AuthorFollowers == 0 {
			t.Fatalf("candidate %s has no resolved author: %+v", c.TweetID, c)
		}
	}
	// Everything searched was stored and scored, best first, without our
	// own posts or reposts.
	var all feed
	e.call("get_discovery_feed", map[string]any{"min_score": 0, "limit": 100}).ok(t, &all)
	if all.Count == 0 || all.Count != len(all.Tweets) || all.Count > res.TotalSearched {
		t.Fatalf("feed has %d rows after searching %d posts", all.Count, res.TotalSearched)
	}
	seen := map[string]bool{}
	for i, c := range all.Tweets {
		if seen[c.TweetID] {
			t.Fatalf("feed repeats %s", c.TweetID)
		}
		seen[c.TweetID] = true
		if c.AuthorID == demo || strings.HasPrefix(c.Text, "RT @") {
			t.Fatalf("feed holds %s by %s: %q", c.TweetID, c.AuthorUsername, c.Text)
		}
		if i > 0 && c.Score > all.Tweets[i-1].Score {
			t.Fatal("feed is not ranked")
		}
	}
	// A repeated call resumes after the newest post it saw: nothing is
	// bought twice, nothing is stored twice.
	var again discovery.Result
	e.call("find_reply_opportunities", map[string]any{"limit": 10}).ok(t, &again)
	if again.SinceID != res.NewestID || again.NewTweets != 0 || again.TotalSearched != 0 {
		t.Fatalf("second search: since_id %q (want %q), %d searched, %d new", again.SinceID, res.NewestID, again.TotalSearched, again.NewTweets)
	}
	var after feed
	e.call("get_discovery_feed", map[string]any{"min_score": 0, "limit": 100}).ok(t, &after)
	if after.Count != all.Count {
		t.Fatalf("feed grew from %d to %d on a repeated search", all.Count, after.Count)
	}
	if len(all.Tweets) < 2 {
		t.Fatalf("only %d candidates", len(all.Tweets))
	}
	return all.Tweets[:2]
}

// draft runs step 2 and returns the drafts by candidate id.
func draft(t *testing.T, e *env, cands []discovery.Candidate) map[string]string {
	t.Helper()
	before, calls := e.sideEffects(), e.LLM.Calls()
	ids := []string{cands[0].TweetID, cands[1].TweetID}
	var d struct {
		Drafts []workflow.DraftOutcome `json:"drafts"`
	}
	e.call("draft_replies_for_candidates", map[string]any{"candidate_ids": ids, "archetype": "ask_question"}).ok(t, &d)
	out := map[string]string{}
	for i, o := range d.Drafts {
		if o.CandidateID != ids[i] || o.Status != "success" || o.DraftText == "" || o.Archetype != "ask_question" ||
			o.WeightedLength != tweettext.WeightedLength(o.DraftText) || o.WeightedLength > 280 || o.Confidence == "" {
			t.Fatalf("draft %d: %+v", i, o)
		}
		out[o.CandidateID] = o.DraftText
	}
	if len(out) != 2 || out[ids[0]] == out[ids[1]] {
		t.Fatalf("drafts %v", out)
	}
	if got := e.LLM.Calls() - calls; got != 2 {
		t.Fatalf("%d LLM calls for two drafts", got)
	}
	// Drafting posts nothing and queues nothing.
	e.requireDelta(before.counters, nil)
	var p struct {
		Pending int `json:"pending"`
	}
	e.call("get_pending_count", map[string]any{}).ok(t, &p)
	if p.Pending != before.pending {
		t.Fatalf("drafting queued %d items", p.Pending-before.pending)
	}
	return out
}

// propose runs step 3: one reply generated, one supplied; both must be
// queued for approval. It returns the approval ids and texts by candidate.
func propose(t *testing.T, e *env, cands []discovery.Candidate, drafts map[string]string) (map[string]int64, map[string]string) {
	t.Helper()
	before := e.counters()
	calls := e.LLM.Calls()
	var out struct {
		Results []workflow.ProposeOutcome `json:"results"`
	}
	items := []map[string]any{
		{"candidate_id": cands[0].TweetID},
		{"candidate_id": cands[1].TweetID, "pre_drafted_text": drafts[cands[1].TweetID]},
	}
	e.call("propose_and_queue_replies", map[string]any{"items": items}).ok(t, &out)
	if len(out.Results) != 2 {
		t.Fatalf("results %+v", out.Results)
	}
	ids, texts := map[string]int64{}, map[string]string{}
	for i, o := range out.Results {
		if o.CandidateID != cands[i].TweetID || o.Status != "queued" || o.ApprovalQueueID == 0 || o.Text == "" || o.ReplyTweetID != "" {
			t.Fatalf("item %d: %+v, want queued for approval", i, o)
		}
		ids[o.CandidateID], texts[o.CandidateID] = o.ApprovalQueueID, o.Text
	}
	if texts[cands[1].TweetID] != drafts[cands[1].TweetID] {
		t.Fatalf("the supplied draft was not used as is: %q", texts[cands[1].TweetID])
	}
	if got := e.LLM.Calls() - calls; got != 1 {
		t.Fatalf("%d LLM calls for one generated and one supplied reply", got)
	}
	e.requireDelta(before, nil)
	// The queue holds exactly the calls approval will run.
	var q struct {
		Items []gateway.ApprovalItem `json:"items"`
	}
	e.call("list_pending_approvals", map[string]any{}).ok(t, &q)
	for _, c := range cands {
		i := slices.IndexFunc(q.Items, func(it gateway.ApprovalItem) bool { return it.ID == ids[c.TweetID] })
		if i < 0 {
			t.Fatalf("approval %d is not pending", ids[c.TweetID])
		}
		var p actions.PostParams
		if err := json.Unmarshal(q.Items[i].Params, &p); err != nil || q.Items[i].Tool != "x_reply_to_tweet" ||
			p.InReplyToID != c.TweetID || p.Text != texts[c.TweetID] {
			t.Fatalf("queued item %+v (%v)", q.Items[i], err)
		}
	}
	return ids, texts
}

// approveInCLI runs step 4 with the real command line and step 5's
// exactly-once checks, returning the posted reply ids by candidate.
func approveInCLI(t *testing.T, e *env, cands []discovery.Candidate, ids map[string]int64, texts map[string]string) map[string]string {
	t.Helper()
	list := e.runCLI("--sandbox", "approve", "list")
	if list.code != 0 {
		t.Fatalf("approve list exited %d: %s", list.code, list.stderr)
	}
	for _, c := range cands {
		if !strings.Contains(list.stdout, fmt.Sprintf("#%d ", ids[c.TweetID])) {
			t.Fatalf("approve list does not show #%d:\n%s", ids[c.TweetID], list.stdout)
		}
	}
	before := e.counters()
	for _, c := range cands {
		r := e.runCLI("--sandbox", "approve", "approve", fmt.Sprint(ids[c.TweetID]), "--reviewer", "alice")
		if r.code != 0 || !strings.Contains(r.stdout, "[executed]") {
			t.Fatalf("approve %d exited %d:\n%s\n%s", ids[c.TweetID], r.code, r.stdout, r.stderr)
		}
	}
	e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: int64(len(cands))})
	replies := map[string]string{}
	for _, tw := range e.Sim.World().Tweets {
		for _, c := range cands {
			if tw.InReplyToTweetID == c.TweetID && tw.AuthorID == e.Sim.DemoUserID() {
				if replies[c.TweetID] != "" || tw.Text != texts[c.TweetID] {
					t.Fatalf("reply to %s: %q (earlier %s)", c.TweetID, tw.Text, replies[c.TweetID])
				}
				replies[c.TweetID] = tw.ID
			}
		}
	}
	if len(replies) != len(cands) {
		t.Fatalf("replies on X: %v", replies)
	}
	// Approving again is refused and posts nothing.
	for _, c := range cands {
		r := e.runCLI("--sandbox", "approve", "approve", fmt.Sprint(ids[c.TweetID]))
		if r.code == 0 || !strings.Contains(r.stderr, string(apperr.ApprovalNotPending)) {
			t.Fatalf("second approval of %d exited %d:\n%s", ids[c.TweetID], r.code, r.stderr)
		}
	}
	e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: int64(len(cands))})
	// The items record who approved and what happened.
	for _, c := range cands {
		var it gateway.ApprovalItem
		e.call("get_approval_item", map[string]any{"id": ids[c.TweetID]}).ok(t, &it)
		var p actions.PostedTweet
		if it.Status != gateway.ApprovalExecuted || it.ReviewedBy != "alice" || json.Unmarshal(it.Result, &p) != nil || p.ID != replies[c.TweetID] {
			t.Fatalf("approval item %+v", it)
		}
		requireV4(t, it.CorrelationID)
	}
	return replies
}

// report runs step 6: the analytics tools see the replies.
func report(t *testing.T, e *env, cands []discovery.Candidate, texts, replies map[string]string) {
	t.Helper()
	n := len(cands)
	var st workflow.Stats
	e.call("get_stats", map[string]any{"days": 1}).ok(t, &st)
	if st.Replies != n || st.MutationsByTool["x_reply_to_tweet"] != n || st.PendingApprovals != 0 || st.XSpendUSD <= 0 || st.LLMSpendUSD <= 0 {
		t.Fatalf("stats %+v, want %d replies, none pending, X and LLM spend", st, n)
	}
	var u workflow.XUsage
	e.call("get_x_usage", map[string]any{"days": 1}).ok(t, &u)
	calls := map[string]int{}
	for _, r := range u.Rows {
		calls[r.Endpoint] += r.Calls
	}
	if calls["POST /2/tweets"] != n || calls["GET /2/tweets/search/recent"] != 2 || u.TotalUSD <= 0 || u.Calls < n+2 {
		t.Fatalf("X usage %+v, want %d posts and 2 searches", u, n)
	}
	var rr struct {
		Replies []workflow.Reply `json:"replies"`
		Count   int              `json:"count"`
	}
	e.call("get_recent_replies", map[string]any{"since_hours": 1}).ok(t, &rr)
	if rr.Count != n {
		t.Fatalf("recent replies %+v", rr)
	}
	authors := map[string]string{}
	for _, c := range cands {
		authors[c.TweetID] = c.AuthorUsername
	}
	for _, r := range rr.Replies {
		// The author is known although approval replayed only the call.
		if replies[r.TargetTweetID] != r.ReplyTweetID || texts[r.TargetTweetID] != r.Content || r.AuthorUsername != authors[r.TargetTweetID] {
			t.Fatalf("recent reply %+v (author want @%s)", r, authors[r.TargetTweetID])
		}
	}
	var today struct {
		N int `json:"replies_today"`
	}
	e.call("get_reply_count_today", map[string]any{}).ok(t, &today)
	if today.N != n {
		t.Fatalf("replies today = %d", today.N)
	}
	var log struct {
		Entries []workflow.ActionEntry `json:"entries"`
	}
	e.call("get_action_log", map[string]any{"since_hours": 1, "action_type": "mcp_policy"}).ok(t, &log)
	status := map[string]int{}
	for _, en := range log.Entries {
		if en.Message == "x_reply_to_tweet" {
			status[en.Status]++
		}
	}
	if status["routed_to_approval"] != n || status["allowed"] != n {
		t.Fatalf("action log for x_reply_to_tweet: %v, want %d routed and %d allowed on approval", status, n, n)
	}
	var counts map[string]map[string]int
	e.call("get_action_counts", map[string]any{"since_hours": 1}).ok(t, &counts)
	if counts["mcp_policy"]["routed_to_approval"] < n || counts["mcp_policy"]["allowed"] < n {
		t.Fatalf("action counts %v", counts)
	}
	var lu workflow.LLMUsage
	e.call("get_llm_usage", map[string]any{"days": 1}).ok(t, &lu)
	llmCalls := 0
	for _, r := range lu.Rows {
		llmCalls += r.Calls
		if r.Model != "gpt-4o-mini" || r.Provider != "openai" || r.InputTokens != 120*r.Calls || r.OutputTokens != 40*r.Calls {
			t.Fatalf("LLM usage row %+v", r)
		}
	}
	if llmCalls != e.LLM.Calls() || lu.TotalUSD <= 0 {
		t.Fatalf("LLM usage counts %d calls ($%g); the provider served %d", llmCalls, lu.TotalUSD, e.LLM.Calls())
	}
	// The author's context shows our reply.
	var ac workflow.AuthorContext
	e.call("get_author_context", map[string]any{"identifier": "@" + cands[0].AuthorUsername}).ok(t, &ac)
	if ac.Author == nil || ac.Author.ID != cands[0].AuthorID || len(ac.RecentTweets) == 0 ||
		!slices.ContainsFunc(ac.RepliesSent, func(r workflow.Reply) bool { return r.ReplyTweetID == replies[cands[0].TweetID] }) {
		t.Fatalf("author context %+v", ac)
	}
	// A replied candidate leaves the feed and cannot be proposed again.
	var f feed
	e.call("get_discovery_feed", map[string]any{"min_score": 0, "limit": 100}).ok(t, &f)
	for _, c := range f.Tweets {
		if replies[c.TweetID] != "" {
			t.Fatalf("replied post %s is still in the feed", c.TweetID)
		}
	}
	var again struct {
		Results []workflow.ProposeOutcome `json:"results"`
	}
	e.call("propose_and_queue_replies", map[string]any{"items": []map[string]any{{"candidate_id": cands[0].TweetID, "pre_drafted_text": "One more thought on this."}}}).ok(t, &again)
	if again.Results[0].Status != "blocked" || !strings.Contains(again.Results[0].Reason, "already replied") {
		t.Fatalf("proposing to a replied post: %+v", again.Results[0])
	}
}

// TestReplyWorkflow is the agent workflow end to end with the default
// policy: find, draft, propose (queued), a human approves with `tuitbot
// approve` in another process, the replies are posted once, and the
// analytics tools report it.
func TestReplyWorkflow(t *testing.T) {
	e := newEnv(t, envOptions{llm: true})
	cands := discover(t, e)
	drafts := draft(t, e, cands)
	ids, texts := propose(t, e, cands, drafts)
	replies := approveInCLI(t, e, cands, ids, texts)
	report(t, e, cands, texts, replies)
}

// TestComposerWorkflow: in composer mode everything is queued, even with a
// policy that would let it all run, and nothing is posted before approval.
func TestComposerWorkflow(t *testing.T) {
	e := newEnv(t, envOptions{llm: true, permissive: true, composer: true})
	var mode struct {
		Mode         string `json:"mode"`
		ApprovalMode bool   `json:"approval_mode"`
	}
	e.call("get_mode", map[string]any{}).ok(t, &mode)
	if mode.Mode != "composer" || !mode.ApprovalMode {
		t.Fatalf("get_mode %+v", mode)
	}
	start := e.counters()
	cands := discover(t, e)
	drafts := draft(t, e, cands)
	ids, texts := propose(t, e, cands, drafts)

	// Direct mutations are queued too.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"x_post_tweet", map[string]any{"text": "Composer mode: a human presses the button."}},
		{"x_like_tweet", map[string]any{"tweet_id": cands[0].TweetID}},
		{"x_follow_user", map[string]any{"target_user_id": cands[1].AuthorID}},
	} {
		var q routed
		r := e.call(c.tool, c.args).ok(t, &q)
		if !q.Routed || q.ApprovalID == 0 || r.Meta.Mode != "composer" || r.Meta.ApprovalMode == nil || !*r.Meta.ApprovalMode {
			t.Fatalf("%s in composer mode: %s (meta %+v)", c.tool, r.Data, r.Meta)
		}
	}

	// compose_tweet creates the draft and queues it.
	var cr workflow.ComposeResult
	e.call("compose_tweet", map[string]any{"topic": "approval queues for agents", "format": "tip"}).ok(t, &cr)
	if !cr.Generated || !cr.RoutedToApproval || cr.ApprovalID == 0 || cr.Status != "queued" || cr.Text == "" || cr.ID == 0 {
		t.Fatalf("compose_tweet %+v", cr)
	}
	var ds struct {
		Drafts []workflow.Draft `json:"drafts"`
	}
	e.call("list_drafts", map[string]any{"status": "queued"}).ok(t, &ds)
	if len(ds.Drafts) != 1 || ds.Drafts[0].ID != cr.ID || ds.Drafts[0].ApprovalID != cr.ApprovalID || ds.Drafts[0].Text != cr.Text {
		t.Fatalf("queued drafts %+v", ds.Drafts)
	}
	var item gateway.ApprovalItem
	e.call("get_approval_item", map[string]any{"id": cr.ApprovalID}).ok(t, &item)
	var pp actions.PostParams
	if item.Tool != "x_post_tweet" || json.Unmarshal(item.Params, &pp) != nil || pp.Text != cr.Text {
		t.Fatalf("the draft's approval item %+v does not post the draft", item)
	}
	// A scheduled compose is stored, not queued, until it is due.
	var sc workflow.ComposeResult
	e.call("compose_tweet", map[string]any{"content": "Scheduled for next week.", "scheduled_for": "2999-01-01T09:00:00Z"}).ok(t, &sc)
	if sc.Status != "scheduled" || sc.RoutedToApproval || sc.Generated {
		t.Fatalf("scheduled compose %+v", sc)
	}

	// Nothing reached X.
	e.requireDelta(start, nil)
	var p struct {
		Pending int `json:"pending"`
	}
	e.call("get_pending_count", map[string]any{}).ok(t, &p)
	if p.Pending != 2+3+1 {
		t.Fatalf("%d pending, want 6", p.Pending)
	}

	replies := approveInCLI(t, e, cands, ids, texts)
	before := e.counters()
	r := e.runCLI("--sandbox", "approve", "approve", fmt.Sprint(cr.ApprovalID))
	if r.code != 0 {
		t.Fatalf("approving the composed draft exited %d: %s", r.code, r.stderr)
	}
	e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 1})
	var stats workflow.Stats
	e.call("get_stats", map[string]any{"days": 1}).ok(t, &stats)
	if stats.Replies != 2 || stats.Tweets != 1 || stats.PendingApprovals != 3 {
		t.Fatalf("stats %+v, want 2 replies, 1 tweet, 3 still pending", stats)
	}
	_ = replies
	var posted string
	for _, tw := range e.Sim.World().Tweets {
		if tw.Text == cr.Text && tw.AuthorID == e.Sim.DemoUserID() {
			posted = tw.ID
		}
	}
	// The draft learns that its approval posted it.
	var d workflow.Draft
	e.call("list_drafts", map[string]any{"status": "posted"}).ok(t, &ds)
	if len(ds.Drafts) != 1 || ds.Drafts[0].ID != cr.ID || posted == "" || ds.Drafts[0].PostedTweetID != posted {
		t.Fatalf("posted drafts %+v, want draft %d posted as %s", ds.Drafts, cr.ID, posted)
	}
	e.call("update_draft", map[string]any{"draft_id": cr.ID, "content": "too late"}).fails(t, apperr.ValidationError)

	// A rejected draft comes back as a draft instead of vanishing.
	var rej workflow.ComposeResult
	e.call("compose_tweet", map[string]any{"content": "A human will say no to this one."}).ok(t, &rej)
	if !rej.RoutedToApproval || rej.Generated {
		t.Fatalf("compose with content %+v", rej)
	}
	if r := e.runCLI("--sandbox", "approve", "reject", fmt.Sprint(rej.ApprovalID), "--notes", "not on brand"); r.code != 0 {
		t.Fatalf("reject exited %d: %s", r.code, r.stderr)
	}
	e.call("update_draft", map[string]any{"draft_id": rej.ID, "content": "A better version after review."}).ok(t, &d)
	if d.Status != "draft" || d.ApprovalID != 0 || d.Text != "A better version after review." {
		t.Fatalf("rejected draft after edit %+v", d)
	}
	e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 1})
}
