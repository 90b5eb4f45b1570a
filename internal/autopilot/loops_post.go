package autopilot

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// slotGrace is how late a preferred slot may still be served.
const slotGrace = time.Hour

// spacing is the gap a loop keeps between its own posts whatever runs it
// (the daemon's scheduler or cron's ticks); a little under the interval so
// the post's own latency does not push a run to the next window.
func spacing(interval time.Duration) time.Duration {
	slack := min(interval/10, 5*time.Minute)
	return interval - slack
}

// contentLoop posts one educational tweet about a content pillar, in the
// preferred slots when configured, else once per content interval.
func (r *Runner) contentLoop(it *iter) error {
	ctx := it.work
	now := r.now()
	c, err := r.counts(ctx, now)
	if err != nil {
		return err
	}
	if c.Tweets >= r.cfg.Limits.MaxTweetsPerDay {
		it.note("daily tweet cap reached (%d/%d)", c.Tweets, r.cfg.Limits.MaxTweetsPerDay)
		return nil
	}
	const slotKey = "autopilot:content_slot"
	slot, slotted := r.sched.currentSlot(now)
	if slotted {
		done, err := r.cursor(ctx, slotKey)
		if err != nil {
			return err
		}
		if done == ts(slot) || now.Sub(slot) > slotGrace {
			next, _ := r.sched.nextSlot(now)
			it.note("no open slot; next slot %s", ts(next))
			return nil
		}
	} else {
		if soon, err := r.tooSoon(it, LoopContent, "tweet", now); soon || err != nil {
			return err
		}
	}
	gen, topic, err := r.generatorAndTopic(it, "tweets", "autopilot:content_topic")
	if gen == nil || err != nil {
		return err
	}
	// The generator sees the recent posts, so a draft that repeats one is
	// rewritten before it is blocked.
	recent, err := r.recentTexts(ctx, kindTweet)
	if err != nil {
		return err
	}
	text, err := gen.GenerateTweet(ctx, topic, "", recent...)
	a := action{Loop: it.loop, Kind: kindTweet, Topic: topic}
	if err != nil {
		return it.generationFailed(a, err)
	}
	a.Content = text
	if err := workflow.CheckReply(text, r.cfg.Limits.BannedPhrases, recent); err != nil {
		return it.blockedAction(a, apperr.As(err).Message)
	}
	a, ok, err := it.sendPost(gateway.Call{Tool: "x_post_tweet", Params: actions.PostParams{Text: text}}, a)
	if !ok {
		return nil
	}
	if a.Status == statusPosted && a.TweetID != "" {
		r.tagOriginal(ctx, a.TweetID, topic)
	}
	if err != nil {
		if isPolicyDenial(apperr.CodeOf(err)) {
			it.retryAt = resetOf(err, r.now())
		}
		return err
	}
	if slotted && (a.Status == statusPosted || a.Status == statusQueued) {
		if err := r.setCursor(ctx, slotKey, ts(slot)); err != nil {
			return err
		}
	}
	it.note("tweet about %q %s", topic, a.Status)
	return nil
}

// generatorAndTopic returns the content generator and the next topic. A
// nil generator with a nil error means the loop is blocked (no LLM, no
// topics) and it has already said why.
func (r *Runner) generatorAndTopic(it *iter, what, topicKey string) (*content.Generator, string, error) {
	gen, err := r.d.Generator()
	if err != nil {
		if apperr.CodeOf(err) == apperr.LLMNotConfigured {
			it.blocked = what + " need an LLM: " + apperr.As(err).Message
			it.note("%s", it.blocked)
			return nil, "", nil
		}
		return nil, "", err
	}
	topic, err := r.pickTopic(it.work, topicKey)
	if err != nil {
		return nil, "", err
	}
	if topic == "" {
		it.blocked = "no topics: set business.content_pillars (or industry_topics or product_keywords)"
		it.note("%s", it.blocked)
		return nil, "", nil
	}
	return gen, topic, nil
}

// tooSoon reports (and notes) that the loop's last post is closer than its
// interval allows.
func (r *Runner) tooSoon(it *iter, loop, what string, now time.Time) (bool, error) {
	last, err := r.lastAction(it.work, loop)
	if err != nil {
		return false, err
	}
	if iv := r.interval(loop); !last.IsZero() && now.Sub(last) < spacing(iv) {
		it.note("last %s %s; next after %s", what, ts(last), ts(last.Add(iv)))
		return true, nil
	}
	return false, nil
}

// generationFailed records a draft the generator refused (banned phrase,
// similarity) as blocked; any other failure is the loop's error.
func (it *iter) generationFailed(a action, err error) error {
	if apperr.CodeOf(err) == apperr.ValidationError {
		return it.blockedAction(a, apperr.As(err).Message)
	}
	return err
}

// threadsLoop posts one thread per thread interval (weekly by default),
// within limits.max_threads_per_week.
func (r *Runner) threadsLoop(it *iter) error {
	ctx := it.work
	now := r.now()
	c, err := r.counts(ctx, now)
	if err != nil {
		return err
	}
	if c.ThreadsWeek >= r.cfg.Limits.MaxThreadsPerWeek {
		it.note("weekly thread cap reached (%d/%d)", c.ThreadsWeek, r.cfg.Limits.MaxThreadsPerWeek)
		return nil
	}
	if soon, err := r.tooSoon(it, LoopThreads, "thread", now); soon || err != nil {
		return err
	}
	gen, topic, err := r.generatorAndTopic(it, "threads", "autopilot:thread_topic")
	if gen == nil || err != nil {
		return err
	}
	parts, err := gen.GenerateThread(ctx, topic, "")
	a := action{Loop: it.loop, Kind: kindThread, Topic: topic}
	if err != nil {
		return it.generationFailed(a, err)
	}
	a.Content = strings.Join(parts, "\n---\n")
	for _, p := range parts {
		if err := workflow.CheckReply(p, r.cfg.Limits.BannedPhrases, nil); err != nil {
			return it.blockedAction(a, apperr.As(err).Message)
		}
	}
	a, ok, err := it.sendPost(gateway.Call{Tool: "x_post_thread", Params: actions.ThreadParams{Tweets: parts}}, a)
	if !ok {
		return nil
	}
	if a.Status == statusPosted && a.TweetID != "" {
		r.tagOriginal(ctx, a.TweetID, topic)
	}
	if err != nil {
		if isPolicyDenial(apperr.CodeOf(err)) {
			it.retryAt = resetOf(err, r.now())
		}
		return err
	}
	it.note("thread of %d posts about %q %s", len(parts), topic, a.Status)
	return nil
}

// tagOriginal records the topic and caller on the row the post action
// wrote, for topic performance; best effort, the post is already on X.
func (r *Runner) tagOriginal(ctx context.Context, tweetID, topic string) {
	if err := r.d.Workflow.TagPost(ctx, tweetID, topic, Caller); err != nil {
		r.log.Warn("post topic not recorded", "tweet_id", tweetID, "error", err)
	}
}

// pickTopic chooses the next topic: mostly the best measured topic (what
// performed), sometimes a pillar in rotation (to keep learning), never the
// same as last time when there is a choice.
func (r *Runner) pickTopic(ctx context.Context, key string) (string, error) {
	b := r.cfg.Business
	var pillars []string
	for _, list := range [][]string{b.ContentPillars, b.IndustryTopics, b.ProductKeywords} {
		for _, p := range list {
			if p = strings.TrimSpace(p); p != "" {
				pillars = append(pillars, p)
			}
		}
		if len(pillars) > 0 {
			break
		}
	}
	last, err := r.cursor(ctx, key)
	if err != nil {
		return "", err
	}
	measured, err := r.d.Workflow.MeasuredTopics(ctx)
	if err != nil {
		return "", err
	}
	pick := ""
	if r.rng.Float64() < 0.8 {
		for _, m := range measured {
			if m.Topic != last && (len(pillars) == 0 || containsFold(pillars, m.Topic)) {
				pick = m.Topic
				break
			}
		}
	}
	if pick == "" && len(pillars) > 0 {
		start := r.rng.IntN(len(pillars))
		for i := range pillars {
			p := pillars[(start+i)%len(pillars)]
			if p != last || len(pillars) == 1 {
				pick = p
				break
			}
		}
	}
	if pick != "" {
		if err := r.setCursor(ctx, key, pick); err != nil {
			return "", err
		}
	}
	return pick, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// recoverPublishing fails drafts a dead process was publishing: whether X
// took them is unknown, and a second attempt could post twice.
func (r *Runner) recoverPublishing(ctx context.Context) error {
	n, err := r.d.Workflow.FailPublishing(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		r.log.Warn("scheduled drafts were being published when the autopilot stopped; marked failed, verify them on X",
			"drafts", n)
	}
	return nil
}

// publisherLoop posts scheduled drafts that are due, through the gateway
// (which queues them for approval when approval applies).
func (r *Runner) publisherLoop(it *iter) error {
	ctx := it.work
	// Occurrences of recurring posts become scheduled drafts ahead of
	// their time; from then on they are published like any other.
	made, err := r.d.Workflow.MakeOccurrences(ctx, r.sched.loc)
	if err != nil {
		return err
	}
	if made > 0 {
		it.note("%s of recurring posts scheduled", plural(made, "occurrence", "occurrences"))
	}
	// A queued item whose slot passed while nothing ran posts late or
	// moves to the next free slot before empty slots are filled.
	if err := r.rescheduleMissed(it); err != nil {
		return err
	}
	if err := r.fillEmptySlots(it); err != nil {
		return err
	}
	list, err := r.d.Workflow.DueDrafts(ctx, 20)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return nil
	}
	posted := 0
	for _, d := range list {
		if it.stopping() {
			break
		}
		c, err := r.counts(ctx, r.now())
		if err != nil {
			return err
		}
		tool, params, err := workflow.DraftCall(d.ContentType, d.Content, d.EvergreenTweetID, d.Options)
		if err != nil {
			r.markDraft(ctx, d.ID, workflow.DraftFailed, "", 0)
			it.note("draft %d: %v", d.ID, err)
			continue
		}
		kind, capped := kindTweet, c.Tweets >= r.cfg.Limits.MaxTweetsPerDay
		switch tool {
		case "x_post_thread":
			kind, capped = kindThread, c.ThreadsWeek >= r.cfg.Limits.MaxThreadsPerWeek
		case "x_retweet":
			kind, capped = kindRetweet, false
		}
		if capped {
			it.note("draft %d waits: the %s cap is reached", d.ID, kind)
			continue
		}
		// Claim the draft first: if the process dies mid-post, the draft is
		// found in "publishing" and never posted a second time.
		claimed, err := r.d.Workflow.ClaimDraft(ctx, d)
		if err != nil {
			return err
		}
		if !claimed {
			continue
		}
		a := action{Loop: it.loop, Kind: kind, Topic: d.Topic, Content: d.Content}
		a, ok, err := it.sendPost(gateway.Call{Tool: tool, Params: params, IdempotencyKey: "scheduled-draft-" + itoa(d.ID)}, a)
		if !ok {
			// Stopped before it was sent: it stays due.
			r.markDraft(ctx, d.ID, workflow.DraftScheduled, "", 0)
			break
		}
		switch {
		case a.Status == statusPosted || a.Status == statusDuplicate:
			r.markDraft(ctx, d.ID, workflow.DraftPosted, a.TweetID, 0)
			if a.TweetID != "" && d.Topic != "" {
				r.tagOriginal(ctx, a.TweetID, d.Topic)
			}
			posted++
		case a.Status == statusQueued:
			r.markDraft(ctx, d.ID, workflow.DraftQueued, "", a.ApprovalID)
		case a.Status == statusFailed && err != nil && apperr.As(err).Retryable(), a.Status == statusDenied:
			// Nothing reached X: try again on a later run.
			r.markDraft(ctx, d.ID, workflow.DraftScheduled, "", 0)
		default:
			r.markDraft(ctx, d.ID, workflow.DraftFailed, "", 0)
		}
		if d.EvergreenTweetID != "" && apperr.CodeOf(err) == apperr.XNotFound {
			// The post was deleted on X: it is never picked again.
			if gerr := r.d.Workflow.MarkEvergreenGone(ctx, d.EvergreenTweetID); gerr != nil {
				return gerr
			}
			it.note("evergreen post %s is gone from X", d.EvergreenTweetID)
			continue
		}
		if err != nil && gateway.RefusedBeforeX(apperr.CodeOf(err)) {
			// X's rules refuse this draft for good; the others due are
			// not held back by it.
			it.note("draft %d refused before X: %s", d.ID, describeErr(err))
			continue
		}
		if err != nil {
			if isPolicyDenial(apperr.CodeOf(err)) {
				it.retryAt = resetOf(err, r.now())
			}
			return err
		}
	}
	it.note("%s of %d due", plural(posted, "draft posted", "drafts posted"), len(list))
	return nil
}

// rescheduleMissed moves queued items and recurring posts' occurrences
// whose time passed more than late_grace_minutes ago (the process was
// down) to the next free slot, or an occurrence with none back to the
// drafts; those within the grace stay due and post late now.
func (r *Runner) rescheduleMissed(it *iter) error {
	p, err := r.cfg.QueuePolicy()
	if err != nil {
		return err
	}
	moved, err := r.d.Workflow.RescheduleMissed(it.work, p, time.Duration(r.cfg.Queue.LateGraceMinutes)*time.Minute)
	if err != nil {
		return err
	}
	for _, m := range moved {
		if m.To == "" {
			it.note("draft %d missed its time %s by more than the late grace; back in the drafts to schedule again", m.DraftID, m.From)
			continue
		}
		it.note("draft %d missed its slot %s by more than the late grace; moved to %s", m.DraftID, m.From, m.To)
	}
	return nil
}

// markDraft records a draft's new status; a failure is logged, since the
// post (or its absence) is already settled and in the audit.
func (r *Runner) markDraft(ctx context.Context, id int64, status, tweetID string, approvalID int64) {
	if err := r.d.Workflow.SetDraftStatus(ctx, id, status, tweetID, approvalID); err != nil {
		r.log.Error("draft status not updated", "draft_id", id, "status", status, "error", err)
	}
}

// housekeepingLoop expires stale approval items.
func (r *Runner) housekeepingLoop(it *iter) error {
	n, err := r.d.Gateway.ExpireStale(it.work)
	if err != nil {
		return err
	}
	it.note("%s expired", plural(int(n), "approval item", "approval items"))
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// fillEmptySlots gives queue slots still empty FillLead before their time
// the best eligible evergreen post, when [evergreen] asks for it.
func (r *Runner) fillEmptySlots(it *iter) error {
	eg := r.cfg.Evergreen
	if !eg.Enabled || !eg.FillEmptySlots {
		return nil
	}
	p, err := r.cfg.QueuePolicy()
	if err != nil {
		return err
	}
	mode := eg.Mode
	if mode == workflow.EvergreenRequote && r.cfg.XAPI.Access == config.AccessPayPerUse {
		// X's pay_per_use API posts no quotes; the variant as a new post
		// is the same text without the quote, and is allowed.
		mode = workflow.EvergreenVariant
	}
	filled, err := r.d.Workflow.FillEmptySlots(it.work, p, workflow.EvergreenRules{
		MinInterval: time.Duration(eg.MinIntervalDays) * 24 * time.Hour, MaxRecycles: eg.MaxRecycles, Mode: mode})
	if mode != eg.Mode && len(filled) > 0 {
		it.note("evergreen.mode requote posts the variants as new posts: pay_per_use allows no quote posts")
	}
	for _, f := range filled {
		it.note("queue slot %s given evergreen post %s (draft %d)", f.At.In(p.Loc).Format(time.RFC3339), f.TweetID, f.DraftID)
	}
	return err
}
