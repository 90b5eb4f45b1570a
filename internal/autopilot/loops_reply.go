package autopilot

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// freshness is how old a post may be for the autopilot to answer it: a
// reply days later reads as a bot digging through history.
const freshness = 24 * time.Hour

// replyCand is a post a loop may answer.
type replyCand struct {
	TweetID, AuthorID, AuthorUsername, Text string
	CreatedAt                               time.Time
}

// replyStep is what happened to one candidate.
type replyStep int

const (
	replySkipped replyStep = iota // not answered; try the next candidate
	replyDone                     // answered (posted or queued)
	replyCapped                   // a daily cap is reached; stop the loop
)

// replyEnv is what every candidate of one iteration shares.
type replyEnv struct {
	me       string
	replier  *workflow.Replier
	gen      *content.Generator
	mayBrand bool // the loop may mention the product at all
	// suggest hands each draft to a person instead of replying: on
	// pay_per_use the API may not reply to a post that did not summon the
	// account, so asking the gateway would only be refused.
	suggest bool
}

// newReplyEnv gets the pieces a reply loop needs; blocked is set (and the
// error nil) when the loop cannot reply until configured.
func (it *iter) newReplyEnv(x *xapi.Client, mayBrand bool) (*replyEnv, error) {
	me, err := x.MyUserID(it.work)
	if err != nil {
		return nil, err
	}
	rp, err := it.r.d.Replier(it.loop)
	if err != nil {
		return nil, err
	}
	gen, err := it.r.d.Generator()
	if err != nil {
		if apperr.CodeOf(err) == apperr.LLMNotConfigured {
			it.blocked = "replies need an LLM: " + apperr.As(err).Message
			it.note("%s", it.blocked)
			return nil, nil
		}
		return nil, err
	}
	return &replyEnv{me: me, replier: rp, gen: gen, mayBrand: mayBrand}, nil
}

// canDraft reports whether replies can be drafted at all; without an LLM a
// loop that only replies does not spend X reads it cannot act on.
func (it *iter) canDraft() (bool, error) {
	if _, err := it.r.d.Generator(); err != nil {
		if apperr.CodeOf(err) == apperr.LLMNotConfigured {
			it.blocked = "replies need an LLM: " + apperr.As(err).Message
			it.note("%s", it.blocked)
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// replyTo runs every safety check on one candidate before anything is
// drafted, then drafts, checks the draft and sends it through the gateway.
// The error is an X, LLM, gateway or database failure that ends the
// iteration.
func (it *iter) replyTo(env *replyEnv, c replyCand) (replyStep, error) {
	r := it.r
	ctx := it.work
	now := r.now()
	switch {
	case c.AuthorID == "":
		// Without the author the per-author limit cannot be checked.
		return replySkipped, nil
	case c.AuthorID == env.me:
		return replySkipped, nil
	case !c.CreatedAt.IsZero() && now.Sub(c.CreatedAt) > freshness:
		return replySkipped, nil
	}
	done, err := r.handled(ctx, c.TweetID)
	if err != nil || done {
		return replySkipped, err
	}
	if out, err := r.optedOut(ctx, c.AuthorID); err != nil || out {
		if err != nil {
			return replySkipped, err
		}
		// Nothing is drafted, suggested or proposed for a user who said
		// stop; the blocked row says why and keeps the post from being
		// looked at again.
		it.note("post %s skipped: its author is on the opt-out list", c.TweetID)
		a := action{Loop: it.loop, Kind: kindReply, TargetTweetID: c.TweetID, AuthorID: c.AuthorID, AuthorUsername: c.AuthorUsername,
			ErrorCode: string(apperr.UserOptedOut)}
		return replySkipped, it.blockedAction(a, "user_opted_out: the author told the account to stop and is on its opt-out list; nothing was drafted")
	}
	counts, err := r.counts(ctx, now)
	if err != nil {
		return replySkipped, err
	}
	if env.suggest {
		n, err := r.suggestionsToday(ctx, now)
		if err != nil {
			return replySkipped, err
		}
		if max := r.cfg.Limits.MaxReplySuggestionsPerDay; n >= max {
			it.note("daily reply suggestion cap reached (%d/%d)", n, max)
			return replyCapped, nil
		}
	} else if counts.Replies >= r.cfg.Limits.MaxRepliesPerDay {
		it.note("daily reply cap reached (%d/%d)", counts.Replies, r.cfg.Limits.MaxRepliesPerDay)
		return replyCapped, nil
	}
	if !env.suggest && it.loop == LoopTargets && counts.TargetReplies >= r.cfg.Targets.MaxTargetRepliesPerDay {
		it.note("daily target reply cap reached (%d/%d)", counts.TargetReplies, r.cfg.Targets.MaxTargetRepliesPerDay)
		return replyCapped, nil
	}
	n, err := r.authorReplies(ctx, c.AuthorID, now)
	if err != nil {
		return replySkipped, err
	}
	if n >= r.cfg.Limits.MaxRepliesPerAuthorPerDay {
		return replySkipped, nil
	}
	if it.stopping() {
		return replyCapped, nil
	}
	allow := env.mayBrand && r.mayMention(counts)
	recent, err := r.recentTexts(ctx, kindReply)
	if err != nil {
		return replySkipped, err
	}
	a := action{Loop: it.loop, Kind: kindReply, TargetTweetID: c.TweetID, AuthorID: c.AuthorID, AuthorUsername: c.AuthorUsername}
	text, err := env.gen.GenerateReply(ctx, content.ReplyInput{TweetText: c.Text, TweetAuthor: c.AuthorUsername,
		MentionProduct: allow, RecentReplies: recent})
	if err != nil {
		if apperr.CodeOf(err) == apperr.ValidationError || apperr.CodeOf(err) == apperr.InvalidInput {
			// The generator refused its own drafts (banned phrase, repeat):
			// record it so the same post does not cost another draft.
			return replySkipped, it.blockedAction(a, apperr.As(err).Message)
		}
		return replySkipped, err
	}
	a.Content = text
	a.MentionsProduct = r.mentionsProduct(text)
	if a.MentionsProduct && !allow {
		return replySkipped, it.blockedAction(a, fmt.Sprintf("the draft mentions the product, which would exceed limits.product_mention_ratio (%.2f) or is not allowed in this loop",
			r.cfg.Limits.ProductMentionRatio))
	}
	if env.suggest {
		return it.suggestReply(a)
	}
	target := workflow.ReplyTarget{TweetID: c.TweetID, AuthorID: c.AuthorID, AuthorUsername: c.AuthorUsername}
	base := a
	var out workflow.ProposeOutcome
	ok, err := it.paced(func(notBefore time.Time) (bool, error) {
		var err error
		out, err = env.replier.SendReply(ctx, target, text, base.MentionsProduct, recent, notBefore)
		a = base
		a.CorrelationID = out.CorrelationID
		switch out.Status {
		case "blocked":
		case "executed":
			a.Status, a.TweetID = statusPosted, out.ReplyTweetID
		case "queued":
			a.Status, a.ApprovalID = statusQueued, out.ApprovalQueueID
		case "duplicate":
			a.Status = statusDuplicate
		case "dry_run":
			a.Status = statusDryRun
		default:
			a.Status, a.ErrorCode, a.Reason = statusOfErr(err), out.ErrorCode, out.Reason
		}
		return reachedX(a), err
	})
	if !ok {
		return replyCapped, nil
	}
	if out.Status == "blocked" {
		return replySkipped, it.blockedAction(a, out.Reason)
	}
	if rerr := it.record(a); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		if isPolicyDenial(apperr.CodeOf(err)) {
			it.retryAt = resetOf(err, r.now())
		}
		return replySkipped, err
	}
	if a.Status == statusPosted || a.Status == statusQueued {
		return replyDone, nil
	}
	return replySkipped, nil
}

// suggestReply hands a drafted reply to a person: a hand-off whose card
// opens X's reply page with the text prefilled. It reaches neither X nor
// the write budget.
func (it *iter) suggestReply(a action) (replyStep, error) {
	h, err := it.r.d.Gateway.HandOff(it.work, gateway.HandOffRequest{Effect: "x_reply_to_tweet", TweetID: a.TargetTweetID,
		Text: a.Content, Caller: Caller, Loop: it.loop,
		Reason: "on pay_per_use X's API replies only to posts that summon the account; a person may reply on x.com"})
	if err != nil {
		return replySkipped, err
	}
	a.Status, a.CorrelationID = statusSuggested, h.CorrelationID
	if err := it.record(a); err != nil {
		return replySkipped, err
	}
	it.suggested++
	return replyDone, nil
}

// noteSuggestions says how many replies the iteration handed to a person,
// when the loop suggests rather than replies.
func (it *iter) noteSuggestions(env *replyEnv) {
	if env != nil && env.suggest {
		it.note("%s handed to a person", plural(it.suggested, "reply suggestion", "reply suggestions"))
	}
}

// suggests reports whether a loop that answers strangers hands its drafts
// to a person: on pay_per_use, where the API may not send them.
func (r *Runner) suggests() bool { return r.cfg.XAPI.Access == config.AccessPayPerUse }

// discoveryLoop searches the next keyword (round-robin over product and
// competitor keywords) from its remembered since_id, scores and stores every
// post, and answers those over the threshold.
func (r *Runner) discoveryLoop(it *iter) error {
	ctx := it.work
	var kws []string
	for _, k := range append(append([]string{}, r.cfg.Business.ProductKeywords...), r.cfg.Business.CompetitorKeywords...) {
		if k = strings.TrimSpace(k); k != "" {
			kws = append(kws, k)
		}
	}
	if len(kws) == 0 {
		it.blocked = "no keywords: set business.product_keywords or business.competitor_keywords"
		it.note("%s", it.blocked)
		return nil
	}
	x, err := r.d.X()
	if err != nil {
		return err
	}
	rr, err := r.cursor(ctx, "autopilot:discovery_next")
	if err != nil {
		return err
	}
	i, _ := strconv.Atoi(rr)
	kw := kws[((i%len(kws))+len(kws))%len(kws)]
	if err := r.setCursor(ctx, "autopilot:discovery_next", strconv.Itoa((i+1)%len(kws))); err != nil {
		return err
	}
	q := kw
	if strings.ContainsAny(q, " \t") {
		q = `"` + strings.ReplaceAll(q, `"`, "") + `"`
	}
	threshold := r.cfg.Scoring.Threshold
	res, err := r.d.Discovery.Find(ctx, discovery.Query{Query: q, MinScore: threshold, Limit: 10})
	if err != nil {
		return err
	}
	it.note("searched %q: %d new, %d over the threshold", q, res.NewTweets, len(res.Candidates))
	// Candidates stored by earlier runs are still in the feed: a run that
	// stopped at a cap, or a process that died, does not lose them.
	feed, err := r.d.Discovery.Feed(ctx, threshold, 20)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var cands []discovery.Candidate
	for _, c := range append(res.Candidates, feed...) {
		if !seen[c.TweetID] && !c.AlreadyReplied {
			seen[c.TweetID] = true
			cands = append(cands, c)
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].Score > cands[b].Score })
	if len(cands) == 0 {
		return nil
	}
	env, err := it.newReplyEnv(x, true)
	if err != nil || env == nil {
		return err
	}
	env.suggest = r.suggests()
	defer it.noteSuggestions(env)
	for _, c := range cands {
		if it.stopping() {
			break
		}
		created, _ := time.Parse(time.RFC3339, c.CreatedAt)
		step, err := it.replyTo(env, replyCand{TweetID: c.TweetID, AuthorID: c.AuthorID, AuthorUsername: c.AuthorUsername,
			Text: c.Text, CreatedAt: created})
		if err != nil {
			return err
		}
		if step == replyCapped {
			break
		}
	}
	return nil
}

// mentionsLoop answers new mentions, oldest first, from a persisted since_id
// cursor that only moves past mentions that were dealt with.
func (r *Runner) mentionsLoop(it *iter) error {
	ctx := it.work
	if ok, err := it.canDraft(); !ok {
		return err
	}
	x, err := r.d.X()
	if err != nil {
		return err
	}
	const key = "mentions_since_id"
	since, err := r.cursor(ctx, key)
	if err != nil {
		return err
	}
	page, err := x.Mentions(ctx, "", xapi.ListParams{MaxResults: 20, SinceID: since})
	if err != nil {
		return err
	}
	tweets := page.Data
	sort.SliceStable(tweets, func(a, b int) bool { return idLess(tweets[a].ID, tweets[b].ID) })
	it.note("%s", plural(len(tweets), "new mention", "new mentions"))
	if len(tweets) == 0 {
		return nil
	}
	var env *replyEnv
	cursor := since
	defer func() {
		if cursor != since {
			_ = r.setCursor(ctx, key, cursor)
		}
	}()
	for _, t := range tweets {
		if it.stopping() {
			return nil
		}
		if isRetweet(t) || r.now().Sub(t.CreatedAt) > freshness {
			cursor = t.ID
			continue
		}
		if stopped, err := r.saidStop(ctx, it, t); err != nil || stopped {
			if err != nil {
				return err
			}
			cursor = t.ID
			continue
		}
		if env == nil {
			if env, err = it.newReplyEnv(x, true); err != nil || env == nil {
				return err
			}
		}
		step, err := it.replyTo(env, candOf(t))
		if err != nil {
			return err
		}
		if step == replyCapped {
			// Later runs see these mentions again (until they are stale).
			return nil
		}
		cursor = t.ID
	}
	return nil
}

// saidStop records a mention that tells the account to stop and reports
// whether its author is on the suppression list: X's guidelines say "If a
// user says 'stop,' stop", so the loop drafts no reply to them at all.
func (r *Runner) saidStop(ctx context.Context, it *iter, t xapi.Tweet) (bool, error) {
	if r.d.OptOuts == nil {
		return false, nil
	}
	c := candOf(t)
	recorded, err := r.d.OptOuts.Record(ctx, optouts.Message{ID: t.ID, AuthorID: c.AuthorID, AuthorUsername: c.AuthorUsername, Text: t.Text})
	if err != nil {
		return false, err
	}
	if recorded {
		it.note("mention %s says stop: its author is on the suppression list", t.ID)
		return true, nil
	}
	return r.d.OptOuts.OptedOut(ctx, c.AuthorID)
}

// optedOut reports whether user is on the account's opt-out list.
func (r *Runner) optedOut(ctx context.Context, user string) (bool, error) {
	if r.d.OptOuts == nil {
		return false, nil
	}
	return r.d.OptOuts.OptedOut(ctx, user)
}

// targetsLoop watches the target accounts and answers at most one new post
// per account per run, within targets.max_target_replies_per_day. It never
// mentions the product: these are relationships, not leads.
func (r *Runner) targetsLoop(it *iter) error {
	ctx := it.work
	stored, err := r.d.Workflow.Targets(ctx)
	if err != nil {
		return err
	}
	ids := map[string]string{}
	for _, t := range stored {
		ids[strings.ToLower(t.Username)] = t.UserID
	}
	var names []string
	for _, a := range r.cfg.Targets.Accounts {
		u, err := workflow.NormalizeUsername("targets.accounts", a)
		if err != nil {
			return apperr.New(apperr.ConfigError, "%s", apperr.As(err).Message)
		}
		if _, ok := ids[strings.ToLower(u)]; !ok {
			ids[strings.ToLower(u)] = ""
		}
	}
	for n := range ids {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		it.note("no target accounts (set targets.accounts or use add_target_account)")
		return nil
	}
	if ok, err := it.canDraft(); !ok {
		return err
	}
	x, err := r.d.X()
	if err != nil {
		return err
	}
	var env *replyEnv
	replied := 0
	for _, name := range names {
		if it.stopping() {
			break
		}
		uid := ids[name]
		if uid == "" {
			t, err := r.d.Workflow.AddTarget(ctx, name)
			if err != nil {
				if c := apperr.CodeOf(err); c == apperr.XNotFound || c == apperr.InvalidInput {
					it.note("@%s: %s", name, apperr.As(err).Message)
					continue
				}
				return err
			}
			uid = t.UserID
		}
		key := "target_since:" + uid
		since, err := r.cursor(ctx, key)
		if err != nil {
			return err
		}
		page, err := x.UserTweets(ctx, uid, xapi.ListParams{MaxResults: 5, SinceID: since})
		if err != nil {
			return err
		}
		// Newest first: the freshest original post is the one worth a reply.
		tweets := page.Data
		sort.SliceStable(tweets, func(a, b int) bool { return idLess(tweets[b].ID, tweets[a].ID) })
		for _, t := range tweets {
			if isRetweet(t) || isReply(t) {
				continue
			}
			if env == nil {
				if env, err = it.newReplyEnv(x, false); err != nil || env == nil {
					return err
				}
				env.suggest = r.suggests()
				defer it.noteSuggestions(env)
			}
			step, err := it.replyTo(env, candOf(t))
			if err != nil {
				return err
			}
			if step == replyCapped {
				it.note("%s to target accounts", plural(replied, "reply", "replies"))
				return nil
			}
			if step == replyDone {
				if !env.suggest {
					replied++
				}
				break
			}
		}
		if page.Meta.NewestID != "" {
			if err := r.setCursor(ctx, key, page.Meta.NewestID); err != nil {
				return err
			}
		}
	}
	it.note("%s to target accounts", plural(replied, "reply", "replies"))
	return nil
}

func candOf(t xapi.Tweet) replyCand {
	c := replyCand{TweetID: t.ID, AuthorID: t.AuthorID, Text: t.Text, CreatedAt: t.CreatedAt}
	if t.Author != nil {
		c.AuthorUsername = t.Author.Username
	}
	return c
}

func isRetweet(t xapi.Tweet) bool {
	for _, r := range t.ReferencedTweets {
		if r.Type == "retweeted" {
			return true
		}
	}
	return false
}

func isReply(t xapi.Tweet) bool {
	for _, r := range t.ReferencedTweets {
		if r.Type == "replied_to" {
			return true
		}
	}
	return false
}

// idLess orders X ids (decimal strings) numerically.
func idLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
