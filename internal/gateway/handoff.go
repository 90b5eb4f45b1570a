package gateway

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// A hand-off is what X's API may not do for the account (a like, follow or
// quote post on pay-per-use access, a reply to a post that did not summon
// the account) handed to a person, who does it on x.com by pressing X's own
// button on the Web Intent page its link opens, prefilled. The agent gets
// the hand-off's id and the link: an intent link only fills in X's page
// for a person who is logged in, it acts on nothing by itself.
//
// Its audit row has status handed_off. tuitbot later looks with owned
// reads (the account's posts, likes and follows: $0.001 a resource)
// whether the person did it, and records the outcome as the row's
// resolution: done_by_person (the post made or liked, the user followed)
// or, once the window has passed, not_done.

// Hand-off statuses.
const (
	HandOffOpen    = "open"
	HandOffDone    = "done_by_person"
	HandOffNotDone = "not_done"
)

// statusHandedOff is the audit status of a call handed to a person.
const statusHandedOff = "handed_off"

// HandOffEffects are the effects a hand-off can ask a person for: the
// ones X's Web Intents make.
var handOffEffects = map[string]bool{"x_reply_to_tweet": true, "x_like_tweet": true, "x_follow_user": true, "x_quote_tweet": true}

// HandOffRequest asks a person to do something on x.com.
type HandOffRequest struct {
	// Effect is x_reply_to_tweet, x_quote_tweet, x_like_tweet or
	// x_follow_user.
	Effect string
	// TweetID is the post replied to, quoted or liked; TargetUser the
	// user to follow (a user id).
	TweetID, TargetUser string
	// TargetUsername is TargetUser's handle, which X's follow intent
	// takes; when empty it is looked up (Options.Username).
	TargetUsername string
	// Text is the reply's or the quote's text, prefilled on X's page.
	Text string
	// Reason says why the API does not do it (shown on the card).
	Reason string
	// Caller and Loop say who asked (an autopilot loop: "autopilot" and
	// its name).
	Caller, Loop string
}

// HandOff is one hand-off and what became of it.
type HandOff struct {
	ID            int64  `json:"id"`
	CorrelationID string `json:"correlation_id"`
	Effect        string `json:"effect"`
	TweetID       string `json:"tweet_id,omitempty"`
	TargetUser    string `json:"target_user_id,omitempty"`
	Text          string `json:"text,omitempty"`
	// IntentURL is X's Web Intent page that does it, prefilled: the
	// person presses Post, Like or Follow there.
	IntentURL string `json:"intent_url"`
	Reason    string `json:"reason,omitempty"`
	Caller    string `json:"caller"`
	Loop      string `json:"loop,omitempty"`
	// Status is open, done_by_person or not_done.
	Status string `json:"status"`
	// PostID is, once done, the reply or quote post the person made or
	// the post they liked; UserID the user they followed.
	PostID    string `json:"post_id,omitempty"`
	UserID    string `json:"user_id,omitempty"`
	CreatedAt string `json:"created_at"`
	// DueAt is when an open hand-off nobody did becomes not_done.
	DueAt      string `json:"due_at"`
	CheckedAt  string `json:"checked_at,omitempty"`
	ResolvedAt string `json:"resolved_at,omitempty"`
}

// Params are the hand-off's call as the typed tool's parameters, for the
// card that describes it as it would an approval item.
func (h HandOff) Params() json.RawMessage {
	m := map[string]string{}
	switch h.Effect {
	case "x_reply_to_tweet":
		m["in_reply_to_id"], m["text"] = h.TweetID, h.Text
	case "x_quote_tweet":
		m["quoted_tweet_id"], m["text"] = h.TweetID, h.Text
	case "x_like_tweet":
		m["tweet_id"] = h.TweetID
	case "x_follow_user":
		m["target_user_id"] = h.TargetUser
	}
	b, _ := json.Marshal(m)
	return b
}

// Item is the hand-off as an approval item's card shows it: same tool,
// parameters, reason and caller; its status is handed_off and it expires
// when tuitbot stops looking.
func (h HandOff) Item() ApprovalItem {
	p := h.Params()
	return ApprovalItem{ID: h.ID, Tool: h.Effect, Params: p, OriginalParams: p, MatchedRuleID: "x_platform", Reason: h.Reason,
		Caller: h.Caller, Loop: h.Loop, Status: statusHandedOff, CreatedAt: h.CreatedAt, ExpiresAt: h.DueAt, CorrelationID: h.CorrelationID}
}

// handOffWindow is how long an open hand-off is looked for.
func (g *Gateway) handOffWindow() time.Duration {
	if g.opts.HandOffWindow > 0 {
		return g.opts.HandOffWindow
	}
	return 24 * time.Hour
}

// intentLink is the Web Intent that does r.
func (g *Gateway) intentLink(r HandOffRequest) string {
	base := ""
	if g.opts.IntentBase != nil {
		base = g.opts.IntentBase()
	}
	return xrules.IntentLink(base, xrules.Call{Effect: r.Effect, TweetID: r.TweetID, TargetUser: r.TargetUser, TargetUsername: r.TargetUsername,
		Text: r.Text})
}

// usernameOf is the handle of user id for a follow's intent link, ""
// when tuitbot does not know it: the link is then the account's profile
// (intent/user), whose Follow button does the same. It runs before any
// transaction.
func (g *Gateway) usernameOf(ctx context.Context, id string) string {
	if g.opts.Username == nil || !isID(id) {
		return ""
	}
	name, err := g.opts.Username(ctx, id)
	if err != nil {
		g.opts.Logger.Warn("hand-off: reading the handle of the user to follow failed; the link opens the profile", "user_id", id, "error", err)
	}
	if err != nil || !isHandle(name) {
		return ""
	}
	return name
}

// isHandle says whether s is an X handle: 1 to 15 letters, digits or _.
func isHandle(s string) bool {
	if s == "" || len(s) > 15 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// validHandOff refuses a request no intent can make.
func validHandOff(r HandOffRequest) error {
	if !handOffEffects[r.Effect] {
		return apperr.New(apperr.InvalidInput, "effect: %q cannot be handed to a person; allowed values: x_reply_to_tweet, x_quote_tweet, x_like_tweet, x_follow_user", r.Effect)
	}
	if r.Effect == "x_follow_user" {
		if !isID(r.TargetUser) {
			return apperr.New(apperr.InvalidInput, "target_user_id: %q is not a user id", r.TargetUser)
		}
		if r.TargetUsername != "" && !isHandle(r.TargetUsername) {
			return apperr.New(apperr.InvalidInput, "target_username: %q is not an X handle (1-15 letters, digits or _)", r.TargetUsername)
		}
		return nil
	}
	if !isID(r.TweetID) {
		return apperr.New(apperr.InvalidInput, "tweet_id: %q is not a post id", r.TweetID)
	}
	if r.Effect == "x_reply_to_tweet" && r.Text == "" {
		return apperr.New(apperr.InvalidInput, "text: a reply handed to a person needs its text")
	}
	return nil
}

// HandOff hands r to a person: it records an audit row of status
// handed_off and the hand-off, whose card (with Do it on X, the Web
// Intent prefilled) is on the approvals page and in notifications. It is
// how the autopilot's reply suggestions reach a person. An open hand-off
// of the same call is returned as it is, so asking twice asks once. The
// outcome is read with GetHandOff, after CheckHandOffs looked on X.
func (g *Gateway) HandOff(ctx context.Context, r HandOffRequest) (*HandOff, error) {
	if err := validHandOff(r); err != nil {
		return nil, err
	}
	if r.Caller == "" {
		r.Caller = "mcp"
	}
	if r.Effect == "x_follow_user" && r.TargetUsername == "" {
		r.TargetUsername = g.usernameOf(ctx, r.TargetUser)
	}
	params := HandOff{Effect: r.Effect, TweetID: r.TweetID, TargetUser: r.TargetUser, Text: r.Text}.Params()
	summary := tweettext.TruncateBytes(string(params), maxSummaryBytes)
	sum := sha256.Sum256(append([]byte(r.Effect+"\x00"), params...))
	hash := hex.EncodeToString(sum[:])
	var id int64
	err := g.opts.DB.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if id, err = g.openHandOff(ctx, tx, r); err != nil || id != 0 {
			return err
		}
		corr := uuid.NewString()
		now := ts(g.opts.Now())
		shown := describe.RecordedOf(r.Effect, "", summary)
		row := append([]any{corr, "", r.Effect, "", hash, hash, summary, g.opts.AccountID, r.Caller, r.Loop, nil, g.instance, now,
			r.TweetID}, shownColumns(shown)...)
		row = append(row, statusHandedOff, "", tweettext.TruncateBytes("handed to a person: "+r.Reason, maxSummaryBytes), now, "")
		if _, err := tx.ExecContext(ctx, qInsertRefused, row...); err != nil {
			return err
		}
		id, err = g.insertHandOff(ctx, tx, corr, r)
		return err
	})
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "record the hand-off: %v", err)
	}
	return g.GetHandOff(ctx, id)
}

// openHandOff is the open hand-off of the same call, 0 when none.
func (g *Gateway) openHandOff(ctx context.Context, q querier, r HandOffRequest) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM handoffs WHERE account_id = ? AND status = 'open' AND effect = ? AND tweet_id = ? AND target_user = ? AND text = ?
		ORDER BY id LIMIT 1`, g.opts.AccountID, r.Effect, r.TweetID, r.TargetUser, r.Text).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// insertHandOff records the hand-off of the call whose audit row is corr.
func (g *Gateway) insertHandOff(ctx context.Context, tx *sql.Tx, corr string, r HandOffRequest) (int64, error) {
	now := g.opts.Now()
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO handoffs (account_id, correlation_id, effect, tweet_id, target_user, text, intent_url, reason,
		caller, loop_name, status, created_at, due_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?) RETURNING id`,
		g.opts.AccountID, corr, r.Effect, r.TweetID, r.TargetUser, r.Text, g.intentLink(r), tweettext.TruncateBytes(r.Reason, maxSummaryBytes),
		r.Caller, r.Loop, ts(now), ts(now.Add(g.handOffWindow()))).Scan(&id)
	return id, err
}

// handOffRefusal turns a refused call into a hand-off, in the refusal's
// transaction: the audit row becomes handed_off. It returns 0 and no
// error for a call no intent makes (an unlike, an unfollow), when the
// gateway makes no hand-offs, and when the same call is already handed
// off and open (its id is then returned with existing true).
func (g *Gateway) handOffRefusal(ctx context.Context, tx *sql.Tx, corr string, call xrules.Call, c Call, refusal *apperr.Error) (id int64, existing bool, err error) {
	// Only what X refuses to the API is a person's to do; a second reply to
	// one interaction is refused to everyone, by hand too.
	if g.opts.IntentBase == nil || (refusal.Code != apperr.XFeatureUnavailable && refusal.Code != apperr.ReplyNotSummoned) {
		return 0, false, nil
	}
	r := HandOffRequest{Effect: call.Effect, TweetID: call.TweetID, TargetUser: call.TargetUser, TargetUsername: call.TargetUsername, Text: call.Text,
		Reason: refusal.Detail(), Caller: callerOf(c), Loop: c.Loop}
	if call.QuoteOf != "" && call.Effect != "x_quote_tweet" {
		r.Effect, r.TweetID = "x_quote_tweet", call.QuoteOf
	}
	if validHandOff(r) != nil {
		return 0, false, nil
	}
	if id, err := g.openHandOff(ctx, tx, r); err != nil || id != 0 {
		return id, id != 0, err
	}
	id, err = g.insertHandOff(ctx, tx, corr, r)
	return id, false, err
}

const handOffCols = `id, correlation_id, effect, tweet_id, target_user, text, intent_url, reason, caller, loop_name, status,
	COALESCE(post_id,''), created_at, due_at, COALESCE(checked_at,''), COALESCE(resolved_at,'')`

func scanHandOff(sc interface{ Scan(...any) error }) (HandOff, error) {
	var h HandOff
	var done string
	err := sc.Scan(&h.ID, &h.CorrelationID, &h.Effect, &h.TweetID, &h.TargetUser, &h.Text, &h.IntentURL, &h.Reason, &h.Caller, &h.Loop,
		&h.Status, &done, &h.CreatedAt, &h.DueAt, &h.CheckedAt, &h.ResolvedAt)
	if h.Effect == "x_follow_user" {
		h.UserID = done
	} else {
		h.PostID = done
	}
	return h, err
}

// GetHandOff reads hand-off id.
func (g *Gateway) GetHandOff(ctx context.Context, id int64) (*HandOff, error) {
	h, err := scanHandOff(g.opts.DB.QueryRowContext(ctx, `SELECT `+handOffCols+` FROM handoffs WHERE id = ? AND account_id = ?`, id, g.opts.AccountID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.New(apperr.NotFound, "handoff_id: no hand-off %d", id)
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read hand-off: %v", err)
	}
	return &h, nil
}

// HandOffs lists the account's hand-offs of status ("" for all), newest
// first, at most limit (100 when 0).
func (g *Gateway) HandOffs(ctx context.Context, status string, limit int) ([]HandOff, error) {
	switch status {
	case "", HandOffOpen, HandOffDone, HandOffNotDone:
	default:
		return nil, apperr.New(apperr.InvalidInput, "status: %q is not allowed; allowed values: open, done_by_person, not_done", status)
	}
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	rows, err := g.opts.DB.QueryContext(ctx, `SELECT `+handOffCols+` FROM handoffs WHERE account_id = ? AND (? = '' OR status = ?)
		ORDER BY id DESC LIMIT ?`, g.opts.AccountID, status, status, limit)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "list hand-offs: %v", err)
	}
	defer rows.Close()
	var out []HandOff
	for rows.Next() {
		h, err := scanHandOff(rows)
		if err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "list hand-offs: %v", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// OwnPost is one of the account's own posts as the check needs it.
type OwnPost struct {
	ID string
	// RepliesTo and Quotes are the posts it replies to and quotes.
	RepliesTo, Quotes string
	CreatedAt         time.Time
}

// OwnedReads are the reads that tell whether a person did a hand-off: the
// account's latest posts, likes and follows, X's owned reads ($0.001 a
// resource). Each is asked at most once per check.
type OwnedReads interface {
	OwnPosts(ctx context.Context) ([]OwnPost, error)
	LikedPosts(ctx context.Context) ([]string, error)
	Following(ctx context.Context) ([]string, error)
}

// handOffCheckEvery is how often a periodic check reads X for an open
// hand-off (Options.HandOffCheckEvery, 5 minutes by default): its reads
// cost money, and a person takes minutes anyway.
func (g *Gateway) handOffCheckEvery() time.Duration {
	if g.opts.HandOffCheckEvery > 0 {
		return g.opts.HandOffCheckEvery
	}
	return 5 * time.Minute
}

// CheckHandOffs looks on X whether a person did the open hand-offs and
// records what it finds: done_by_person (with the post or user), or
// not_done once a hand-off's window has passed unseen. A periodic caller
// passes force false: a hand-off checked less than HandOffCheckEvery ago
// is left alone. It returns the hand-offs it resolved.
func (g *Gateway) CheckHandOffs(ctx context.Context, x OwnedReads, force bool) ([]HandOff, error) {
	open, err := g.HandOffs(ctx, HandOffOpen, 500)
	if err != nil {
		return nil, err
	}
	now := g.opts.Now()
	var due []HandOff
	for _, h := range open {
		if checked, err := store.ParseTime(h.CheckedAt); !force && err == nil && now.Sub(checked) < g.handOffCheckEvery() {
			continue
		}
		due = append(due, h)
	}
	if len(due) == 0 {
		return nil, nil
	}
	// Each read is made once per check, and only when an open hand-off
	// needs it; a failed read leaves its hand-offs open for the next check.
	type read struct {
		done bool
		ids  map[string]bool
		err  error
	}
	var posts []OwnPost
	var postsRead, likedRead, followingRead read
	idsOf := func(r *read, get func(context.Context) ([]string, error)) {
		if r.done {
			return
		}
		r.done = true
		ids, err := get(ctx)
		r.ids, r.err = make(map[string]bool, len(ids)), err
		for _, id := range ids {
			r.ids[id] = true
		}
	}
	var resolved []HandOff
	var errs []error
	for _, h := range due {
		created, _ := store.ParseTime(h.CreatedAt)
		found, failed := "", error(nil)
		switch h.Effect {
		case "x_reply_to_tweet", "x_quote_tweet":
			if !postsRead.done {
				postsRead.done = true
				posts, postsRead.err = x.OwnPosts(ctx)
			}
			failed = postsRead.err
			for _, p := range posts {
				// A post made before the hand-off is not the person's answer to it.
				if p.CreatedAt.Before(created.Truncate(time.Second)) {
					continue
				}
				if (h.Effect == "x_reply_to_tweet" && p.RepliesTo == h.TweetID) || (h.Effect == "x_quote_tweet" && p.Quotes == h.TweetID) {
					found = p.ID
					break
				}
			}
		case "x_like_tweet":
			idsOf(&likedRead, x.LikedPosts)
			if failed = likedRead.err; likedRead.ids[h.TweetID] {
				found = h.TweetID
			}
		case "x_follow_user":
			idsOf(&followingRead, x.Following)
			if failed = followingRead.err; followingRead.ids[h.TargetUser] {
				found = h.TargetUser
			}
		}
		if failed != nil {
			// Looked, found nothing out: the next periodic look waits as
			// after any other.
			errs = append(errs, failed)
			if err := g.recordCheck(ctx, h, "", "", now); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		outcome := ""
		if found != "" {
			outcome = HandOffDone
		} else if until, err := store.ParseTime(h.DueAt); err == nil && !now.Before(until) {
			outcome = HandOffNotDone
		}
		if err := g.recordCheck(ctx, h, outcome, found, now); err != nil {
			errs = append(errs, err)
			continue
		}
		if outcome != "" {
			h.Status = outcome
			if h.Effect == "x_follow_user" {
				h.UserID = found
			} else {
				h.PostID = found
			}
			resolved = append(resolved, h)
		}
	}
	return resolved, errors.Join(errs...)
}

// recordCheck records one look at h: the time, and the outcome when there
// is one, on the hand-off and as its audit row's resolution.
func (g *Gateway) recordCheck(ctx context.Context, h HandOff, outcome, found string, now time.Time) error {
	at := ts(now)
	err := g.opts.DB.Tx(ctx, func(tx *sql.Tx) error {
		if outcome == "" {
			_, err := tx.ExecContext(ctx, `UPDATE handoffs SET checked_at = ? WHERE id = ? AND status = 'open'`, at, h.ID)
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE handoffs SET checked_at = ?, status = ?, post_id = NULLIF(?,''), resolved_at = ? WHERE id = ? AND status = 'open'`,
			at, outcome, found, at, h.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			// Another process resolved it first.
			return nil
		}
		var result sql.NullString
		if found != "" {
			key := "post_id"
			if h.Effect == "x_follow_user" {
				key = "user_id"
			}
			b, _ := json.Marshal(map[string]string{key: found, "handoff_id": strconv.FormatInt(h.ID, 10)})
			result = sql.NullString{String: string(b), Valid: true}
		}
		_, err = tx.ExecContext(ctx, `UPDATE mutation_audit SET resolution = ?, resolved_by = ?, resolved_at = ?,
			result_json = COALESCE(?, result_json), result_summary = COALESCE(?, result_summary)
			WHERE correlation_id = ? AND account_id = ? AND status = 'handed_off'`,
			outcome, ResolvedByAuto, at, result, result, h.CorrelationID, g.opts.AccountID)
		return err
	})
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "record the hand-off check: %v", err)
	}
	return nil
}

// isID says whether s is an X id: 1 to 19 digits.
func isID(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
