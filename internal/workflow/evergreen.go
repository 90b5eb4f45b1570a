package workflow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Evergreen post statuses: gone is a post X no longer has, never picked.
const (
	EvergreenActive = "active"
	EvergreenGone   = "gone"
)

// Evergreen modes: how a post is recycled.
const (
	EvergreenRepost  = "repost"
	EvergreenRequote = "requote"
	EvergreenVariant = "variant"
)

// Draft content types of recycled evergreen posts, beside tweet (a
// variant posted anew) and thread.
const (
	ContentRepost = "repost"
	ContentQuote  = "quote"
)

// SourceEvergreen marks the drafts that recycle an evergreen post.
const SourceEvergreen = "evergreen"

// FillLead is how long before its time an empty queue slot is filled.
const FillLead = 2 * time.Hour

// EvergreenRules are [evergreen]'s settings as the picker needs them.
type EvergreenRules struct {
	MinInterval time.Duration
	MaxRecycles int
	Mode        string
}

// EvergreenPost is one marked post.
type EvergreenPost struct {
	TweetID  string   `json:"tweet_id"`
	Text     string   `json:"text"`
	Variants []string `json:"variants,omitempty"`
	// Engagement is likes + reposts + replies + quotes when last read.
	Engagement     int64  `json:"engagement"`
	MetricsAt      string `json:"metrics_at"`
	Recycles       int    `json:"recycles"`
	LastRecycledAt string `json:"last_recycled_at,omitempty"`
	Status         string `json:"status"`
	MarkedAt       string `json:"marked_at"`
}

func engagement(m xapi.TweetMetrics) int64 {
	return m.LikeCount + m.RetweetCount + m.ReplyCount + m.QuoteCount
}

// readPost reads a post from X; a post X does not have is x_not_found
// naming tweet_id.
func (s *Service) readPost(ctx context.Context, id string) (*xapi.Tweet, error) {
	if s.X == nil {
		return nil, apperr.New(apperr.XNotConfigured, "no X client")
	}
	x, err := s.X()
	if err != nil {
		return nil, err
	}
	tw, _, err := x.GetTweet(ctx, id)
	if apperr.CodeOf(err) == apperr.XNotFound {
		return nil, apperr.Wrap(apperr.XNotFound, err, "tweet_id: X has no post %s (deleted, or not visible to the account)", id)
	}
	return tw, err
}

// MarkEvergreen keeps a post for recycling, with its engagement read from
// X now; marking it again refreshes the engagement (and replaces the
// variants when given). Variants are texts for requote and variant modes.
func (s *Service) MarkEvergreen(ctx context.Context, tweetID string, variants []string) (*EvergreenPost, error) {
	for i, v := range variants {
		if err := actions.CheckText("variants", v, i, false); err != nil {
			if e := apperr.As(err); e != nil && e.Code == apperr.InvalidInput {
				e.Message = fmt.Sprintf("variants[%d]: must not be empty", i)
			}
			return nil, err
		}
		for j := range i {
			if sameText(variants[j], v) {
				return nil, apperr.New(apperr.InvalidInput, "variants[%d]: the same text as variants[%d]; X would refuse it as duplicate content", i, j)
			}
		}
	}
	if len(variants) > MaxVariants {
		return nil, apperr.New(apperr.InvalidInput, "variants: at most %d (got %d)", MaxVariants, len(variants))
	}
	tw, err := s.readPost(ctx, tweetID)
	if err != nil {
		return nil, err
	}
	for i, v := range variants {
		if sameText(v, tw.Text) {
			return nil, apperr.New(apperr.InvalidInput, "variants[%d]: the same text as the post; X would refuse it as duplicate content", i)
		}
	}
	ts := s.ts(s.Now())
	body, _ := json.Marshal(variants)
	if variants == nil {
		body = []byte("[]")
	}
	_, err = s.DB.ExecContext(ctx, `INSERT INTO evergreen_posts (account_id, tweet_id, text, variants, engagement, metrics_at, status, marked_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, tweet_id) DO UPDATE SET text = excluded.text, engagement = excluded.engagement,
		metrics_at = excluded.metrics_at, status = excluded.status,
		variants = CASE WHEN ? THEN excluded.variants ELSE evergreen_posts.variants END`,
		s.account(), tw.ID, tw.Text, string(body), engagement(tw.PublicMetrics), ts, EvergreenActive, ts, len(variants) > 0)
	if err != nil {
		return nil, dbErr(err, "mark evergreen")
	}
	return s.evergreen(ctx, tw.ID)
}

const evergreenCols = `tweet_id, text, variants, engagement, metrics_at, recycles, last_recycled_at, status, marked_at`

func scanEvergreen(sc interface{ Scan(...any) error }) (*EvergreenPost, error) {
	var p EvergreenPost
	var variants string
	var last sql.NullString
	if err := sc.Scan(&p.TweetID, &p.Text, &variants, &p.Engagement, &p.MetricsAt, &p.Recycles, &last, &p.Status, &p.MarkedAt); err != nil {
		return nil, err
	}
	p.LastRecycledAt = last.String
	if err := json.Unmarshal([]byte(variants), &p.Variants); err != nil {
		return nil, fmt.Errorf("evergreen post %s: variants: %w", p.TweetID, err)
	}
	return &p, nil
}

func (s *Service) evergreen(ctx context.Context, id string) (*EvergreenPost, error) {
	p, err := scanEvergreen(s.DB.QueryRowContext(ctx, `SELECT `+evergreenCols+` FROM evergreen_posts WHERE account_id = ? AND tweet_id = ?`, s.account(), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.New(apperr.NotFound, "tweet_id: post %s is not marked evergreen for account %s", id, s.account())
	}
	return p, dbErr(err, "read evergreen post")
}

// UnmarkEvergreen stops recycling a post; drafts already made stay.
func (s *Service) UnmarkEvergreen(ctx context.Context, tweetID string) error {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM evergreen_posts WHERE account_id = ? AND tweet_id = ?`, s.account(), tweetID)
	if err != nil {
		return dbErr(err, "unmark evergreen")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.New(apperr.NotFound, "tweet_id: post %s is not marked evergreen for account %s", tweetID, s.account())
	}
	return nil
}

// EvergreenPosts lists the marked posts, best engagement first.
func (s *Service) EvergreenPosts(ctx context.Context) ([]*EvergreenPost, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+evergreenCols+` FROM evergreen_posts WHERE account_id = ? ORDER BY engagement DESC, tweet_id`, s.account())
	if err != nil {
		return nil, dbErr(err, "read evergreen posts")
	}
	defer rows.Close()
	out := []*EvergreenPost{}
	for rows.Next() {
		p, err := scanEvergreen(rows)
		if err != nil {
			return nil, dbErr(err, "read evergreen posts")
		}
		out = append(out, p)
	}
	return out, dbErr(rows.Err(), "read evergreen posts")
}

// MarkEvergreenGone records that X no longer has a post; it is never
// picked again.
func (s *Service) MarkEvergreenGone(ctx context.Context, tweetID string) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE evergreen_posts SET status = ? WHERE account_id = ? AND tweet_id = ?`, EvergreenGone, s.account(), tweetID)
	return dbErr(err, "mark evergreen post gone")
}

// bestEvergreen is the eligible post with the highest engagement for a
// slot at at: not gone, recycled fewer than MaxRecycles times, not within
// MinInterval before at, and with variants when the mode needs them.
func (s *Service) bestEvergreen(ctx context.Context, r EvergreenRules, at time.Time) (*EvergreenPost, error) {
	q := `SELECT ` + evergreenCols + ` FROM evergreen_posts WHERE account_id = ? AND status = ? AND recycles < ?
		AND (last_recycled_at IS NULL OR last_recycled_at <= ?)`
	if r.Mode != EvergreenRepost {
		q += ` AND variants != '[]'`
	}
	p, err := scanEvergreen(s.DB.QueryRowContext(ctx, q+` ORDER BY engagement DESC, marked_at, tweet_id LIMIT 1`,
		s.account(), EvergreenActive, r.MaxRecycles, s.ts(at.Add(-r.MinInterval))))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return p, dbErr(err, "pick evergreen post")
}

// FilledSlot is a queue slot given an evergreen post.
type FilledSlot struct {
	At      time.Time
	TweetID string
	DraftID int64
}

// FillEmptySlots gives each queue slot that is still free within FillLead
// of its time the best eligible evergreen post, as a scheduled draft that
// holds the slot; the publisher sends it through the gateway when the slot
// comes (x_retweet, x_quote_tweet or x_post_tweet by mode), so policy and
// approval apply then. Each pick is read from X first: a post X no longer
// has is marked gone and the next best is tried.
func (s *Service) FillEmptySlots(ctx context.Context, p queue.Policy, r EvergreenRules) ([]FilledSlot, error) {
	if len(p.Rules) == 0 {
		return nil, nil
	}
	now := s.Now()
	slots, err := s.QueueSlots(ctx, p, now, 1)
	if err != nil {
		return nil, err
	}
	var out []FilledSlot
	for _, sl := range slots {
		at, err := time.Parse(time.RFC3339, sl.At)
		if err != nil {
			return out, dbErr(err, "read queue slot")
		}
		if sl.Status != "free" || !at.After(now) || at.Sub(now) > FillLead {
			continue
		}
		f, err := s.fillSlot(ctx, r, at)
		if err != nil {
			return out, err
		}
		if f != nil {
			out = append(out, *f)
		}
	}
	return out, nil
}

func (s *Service) fillSlot(ctx context.Context, r EvergreenRules, at time.Time) (*FilledSlot, error) {
	for {
		cand, err := s.bestEvergreen(ctx, r, at)
		if err != nil || cand == nil {
			return nil, err
		}
		tw, err := s.readPost(ctx, cand.TweetID)
		if apperr.CodeOf(err) == apperr.XNotFound {
			if err := s.MarkEvergreenGone(ctx, cand.TweetID); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		kind, text := ContentRepost, tw.Text
		if r.Mode != EvergreenRepost {
			text = cand.Variants[cand.Recycles%len(cand.Variants)]
			kind = ContentQuote
			if r.Mode == EvergreenVariant {
				kind = "tweet"
			}
		}
		f := &FilledSlot{At: at, TweetID: cand.TweetID}
		slot, ts := s.ts(at), s.ts(s.Now())
		err = s.DB.LockedTx(ctx, []string{store.AccountScope(s.account())}, func(tx *sql.Tx) error {
			// The unique index on (account, slot) leaves a slot another
			// caller took in the meantime to that caller.
			err := tx.QueryRowContext(ctx, `INSERT INTO drafts (account_id, content_type, content, source, status, scheduled_for, queue_slot, evergreen_tweet_id, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
				s.account(), kind, text, SourceEvergreen, DraftScheduled, slot, slot, cand.TweetID, ts, ts).Scan(&f.DraftID)
			if errors.Is(err, sql.ErrNoRows) {
				f = nil
				return nil
			}
			if err != nil {
				return dbErr(err, "fill queue slot")
			}
			_, err = tx.ExecContext(ctx, `UPDATE evergreen_posts SET recycles = recycles + 1, last_recycled_at = ?, engagement = ?, metrics_at = ?
				WHERE account_id = ? AND tweet_id = ?`, slot, engagement(tw.PublicMetrics), ts, s.account(), cand.TweetID)
			return dbErr(err, "record evergreen recycle")
		})
		return f, err
	}
}
