package workflow

import (
	"context"
	"fmt"
	"strings"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// Replier drafts replies and sends them through the gateway.
type Replier struct {
	*Service
	Gateway       *gateway.Gateway
	Generator     func() (*content.Generator, error)
	BannedPhrases []string
	// Caller and Loop are recorded in the audit (mcp, or autopilot and a
	// loop name).
	Caller, Loop string
	// OptedOut reports whether a user (id) is on the account's opt-out
	// list; nil: no list.
	OptedOut func(ctx context.Context, user string) (bool, error)
}

// optedOut refuses a reply to a user on the opt-out list before anything
// is drafted or proposed: X's guidelines say "If a user says 'stop,'
// stop".
func (r *Replier) optedOut(ctx context.Context, c *discovery.Candidate) error {
	if r.OptedOut == nil || c.AuthorID == "" {
		return nil
	}
	out, err := r.OptedOut(ctx, c.AuthorID)
	if err != nil {
		return err
	}
	if out {
		who := c.AuthorID
		if c.AuthorUsername != "" {
			who = "@" + c.AuthorUsername
		}
		return apperr.New(apperr.UserOptedOut,
			"%s is on the account's opt-out list (they told it to stop), so no reply to them is drafted or proposed; nothing was sent to X", who).
			WithHints(apperr.Hint{Do: "leave this candidate out; a person can clear the user from the list with `tuitbot optouts clear` if they asked to hear from the account again"})
	}
	return nil
}

// ProposeItem is one reply to propose.
type ProposeItem struct {
	CandidateID    string
	PreDraftedText string
}

// ProposeOutcome is one item's result.
type ProposeOutcome struct {
	CandidateID     string `json:"candidate_id"`
	Status          string `json:"status"` // queued, executed, duplicate, blocked, error
	Text            string `json:"text,omitempty"`
	ApprovalQueueID int64  `json:"approval_queue_id,omitempty"`
	ReplyTweetID    string `json:"reply_tweet_id,omitempty"`
	CorrelationID   string `json:"correlation_id,omitempty"`
	ErrorCode       string `json:"error_code,omitempty"`
	Reason          string `json:"reason,omitempty"`
}

// RecentReplyTexts are the last n replies, newest first, for similarity.
func (s *Service) RecentReplyTexts(ctx context.Context, n int) ([]string, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT content FROM replies_sent WHERE account_id = ? ORDER BY id DESC LIMIT ?`, s.account(), n)
	if err != nil {
		return nil, dbErr(err, "read replies")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, dbErr(err, "read replies")
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// CheckReply applies the reply rules to text written by someone else than
// the generator: length, banned phrases, similarity to recent replies.
func CheckReply(text string, banned, recent []string) error {
	if err := actions.CheckText("text", text, -1, false); err != nil {
		return err
	}
	low := strings.ToLower(text)
	for _, p := range banned {
		if p = strings.TrimSpace(p); p != "" && strings.Contains(low, strings.ToLower(p)) {
			return apperr.New(apperr.ValidationError, "text: contains the banned phrase %q", p)
		}
	}
	for i, r := range recent {
		if i >= content.RecentRepliesCompared {
			break
		}
		if j := content.Jaccard(text, r); j >= content.SimilarityThreshold {
			return apperr.New(apperr.ValidationError, "text: too similar to a recent reply (Jaccard %.2f >= %.2f)", j, content.SimilarityThreshold)
		}
	}
	return nil
}

// Propose drafts (or takes) a reply per item and sends each through the
// gateway, so approval routing, dedup and audit all apply.
func (r *Replier) Propose(ctx context.Context, items []ProposeItem, mentionProduct bool) ([]ProposeOutcome, error) {
	if len(items) == 0 {
		return nil, apperr.New(apperr.InvalidInput, "items: at least one item is required")
	}
	if len(items) > 50 {
		return nil, apperr.New(apperr.InvalidInput, "items: at most 50 per call (got %d)", len(items))
	}
	for i, it := range items {
		if err := actions.CheckID(fmt.Sprintf("items[%d].candidate_id", i), it.CandidateID); err != nil {
			return nil, err
		}
	}
	// The policy may name propose_and_queue_replies itself; its decision
	// rides along on every reply, where the stricter one applies.
	via, err := r.Gateway.Admit(ctx, actions.ProposeTool, policy.CatWrite)
	if err != nil {
		return nil, err
	}
	recent, err := r.RecentReplyTexts(ctx, content.RecentRepliesCompared)
	if err != nil {
		return nil, err
	}
	out := make([]ProposeOutcome, 0, len(items))
	for _, it := range items {
		o := r.proposeOne(ctx, it, mentionProduct, recent, &via)
		if o.Text != "" && (o.Status == "queued" || o.Status == "executed") {
			// Later items in this batch must not repeat this one either.
			recent = append([]string{o.Text}, recent...)
		}
		out = append(out, o)
	}
	return out, nil
}

func blocked(id string, err error) ProposeOutcome {
	e := apperr.As(err)
	return ProposeOutcome{CandidateID: id, Status: "blocked", ErrorCode: string(e.Code), Reason: e.Message}
}

func (r *Replier) proposeOne(ctx context.Context, it ProposeItem, mention bool, recent []string, via *policy.Decision) ProposeOutcome {
	cand, err := r.Discovery.Get(ctx, it.CandidateID)
	if err != nil {
		return blocked(it.CandidateID, err)
	}
	if cand.AlreadyReplied {
		// X's automation rules: one automated reply per interaction (a
		// reply waiting for a person counts, as it may still be sent).
		return blocked(it.CandidateID, apperr.New(apperr.ReplyAlreadySent,
			"already replied to %s; X's automation rules allow one automated reply per user interaction; nothing was sent to X", it.CandidateID))
	}
	if err := r.optedOut(ctx, cand); err != nil {
		return blocked(it.CandidateID, err)
	}
	text := strings.TrimSpace(it.PreDraftedText)
	if text == "" {
		gen, err := r.Generator()
		if err != nil {
			return blocked(it.CandidateID, err)
		}
		text, err = gen.GenerateReply(ctx, content.ReplyInput{TweetText: cand.Text, TweetAuthor: cand.AuthorUsername, MentionProduct: mention, RecentReplies: recent})
		if err != nil {
			return blocked(it.CandidateID, err)
		}
	}
	if err := CheckReply(text, r.BannedPhrases, recent); err != nil {
		return blocked(it.CandidateID, err)
	}
	resp, err := r.Gateway.Do(ctx, gateway.Call{Tool: "x_reply_to_tweet", Caller: r.callerOr(), Loop: r.Loop,
		Params: actions.PostParams{Text: text, InReplyToID: it.CandidateID}, Via: via})
	o := ProposeOutcome{CandidateID: it.CandidateID, Text: text, CorrelationID: resp.CorrelationID}
	if err != nil {
		e := apperr.As(err)
		o.Status, o.ErrorCode, o.Reason = "error", string(e.Code), e.Message
		return o
	}
	switch resp.Kind {
	case gateway.Routed:
		o.Status, o.ApprovalQueueID = "queued", resp.ApprovalID
	case gateway.Executed:
		o.Status = "executed"
		if p, ok := resp.Result.(actions.PostedTweet); ok {
			o.ReplyTweetID = p.ID
		}
		r.recordAuthor(ctx, cand, o.ReplyTweetID)
	case gateway.Duplicate:
		o.Status = "duplicate"
	case gateway.DryRun:
		o.Status = "dry_run"
	}
	return o
}

func (r *Replier) callerOr() string {
	if r.Caller == "" {
		return "mcp"
	}
	return r.Caller
}

// recordAuthor adds the author to the reply row the post action wrote, for
// per-author limits and author context.
func (r *Replier) recordAuthor(ctx context.Context, c *discovery.Candidate, replyID string) {
	if replyID == "" {
		return
	}
	_, _ = r.DB.ExecContext(ctx, `UPDATE replies_sent SET author_id = ?, author_username = ?, caller = ? WHERE account_id = ? AND reply_tweet_id = ?`,
		c.AuthorID, c.AuthorUsername, r.callerOr(), r.account(), replyID)
}

// DraftOutcome is one draft_replies_for_candidates result.
type DraftOutcome struct {
	CandidateID    string   `json:"candidate_id"`
	Status         string   `json:"status"` // success, skipped (user_opted_out) or error
	DraftText      string   `json:"draft_text,omitempty"`
	Archetype      string   `json:"archetype,omitempty"`
	WeightedLength int      `json:"weighted_length,omitempty"`
	Confidence     string   `json:"confidence,omitempty"`
	Risks          []string `json:"risks,omitempty"`
	ErrorCode      string   `json:"error_code,omitempty"`
	ErrorMessage   string   `json:"error_message,omitempty"`
}

// Archetypes are the reply styles draft_replies_for_candidates accepts.
var Archetypes = []string{"agree_and_expand", "respectful_disagree", "add_data", "ask_question", "share_experience"}

// DraftReplies drafts replies for candidates without posting anything.
func (r *Replier) DraftReplies(ctx context.Context, ids []string, archetype string, mention bool) ([]DraftOutcome, error) {
	if len(ids) == 0 || len(ids) > 20 {
		return nil, apperr.New(apperr.InvalidInput, "candidate_ids: give 1 to 20 ids (got %d)", len(ids))
	}
	if archetype != "" {
		ok := false
		for _, a := range Archetypes {
			ok = ok || a == archetype
		}
		if !ok {
			return nil, apperr.New(apperr.InvalidInput, "archetype: %q is not allowed; allowed values: %s", archetype, strings.Join(Archetypes, ", "))
		}
	}
	for i, id := range ids {
		if err := actions.CheckID(fmt.Sprintf("candidate_ids[%d]", i), id); err != nil {
			return nil, err
		}
	}
	gen, err := r.Generator()
	if err != nil {
		return nil, err
	}
	recent, err := r.RecentReplyTexts(ctx, content.RecentRepliesCompared)
	if err != nil {
		return nil, err
	}
	out := make([]DraftOutcome, 0, len(ids))
	for _, id := range ids {
		o := DraftOutcome{CandidateID: id, Archetype: archetype}
		cand, err := r.Discovery.Get(ctx, id)
		if err == nil {
			err = r.optedOut(ctx, cand)
		}
		if apperr.CodeOf(err) == apperr.UserOptedOut {
			e := apperr.As(err)
			o.Status, o.ErrorCode, o.ErrorMessage = "skipped", string(e.Code), e.Message
			out = append(out, o)
			continue
		}
		if err == nil {
			text := cand.Text
			if archetype != "" {
				text += "\n\n(Reply style: " + strings.ReplaceAll(archetype, "_", " ") + ")"
			}
			var draft string
			draft, err = gen.GenerateReply(ctx, content.ReplyInput{TweetText: text, TweetAuthor: cand.AuthorUsername, MentionProduct: mention, RecentReplies: recent})
			if err == nil {
				o.Status, o.DraftText = "success", draft
				o.WeightedLength = tweettext.WeightedLength(draft)
				o.Confidence = confidence(o.WeightedLength)
				if cand.AlreadyReplied {
					o.Risks = append(o.Risks, "already_replied")
				}
				recent = append([]string{draft}, recent...)
			}
		}
		if err != nil {
			e := apperr.As(err)
			o.Status, o.ErrorCode, o.ErrorMessage = "error", string(e.Code), e.Message
		}
		out = append(out, o)
	}
	return out, nil
}

// confidence is higher for replies that leave room: long replies read as
// walls of text.
func confidence(weighted int) string {
	switch {
	case weighted < 200:
		return "high"
	case weighted < 260:
		return "medium"
	}
	return "low"
}
