package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// EditMargin is how much of a post's edit window must remain for an edit
// to be sent: less, and X may close the window while the request travels.
const EditMargin = 60 * time.Second

// EditParams are x_edit_tweet's arguments and stored parameters.
type EditParams struct {
	TweetID  string       `json:"tweet_id" jsonschema:"id of your post to edit (its latest version)"`
	Text     string       `json:"text" jsonschema:"the post's new text, at most 280 weighted characters"`
	MediaIDs []string     `json:"media_ids,omitempty" jsonschema:"up to 4 media ids from x_upload_media to carry instead of the post's current media"`
	Options  *PostOptions `json:"options,omitempty" jsonschema:"optional settings: reply_settings, made_with_ai, paid_partnership (an edit cannot add a poll or move the post to a community)"`
}

// Limits declares the arguments' limits.
func (EditParams) Limits() argcheck.Limits {
	return argcheck.Limits{"tweet_id": {ID: true}, "media_ids": mediaLimit()}
}

// Validate checks p before anything reads X.
func (p EditParams) Validate() error {
	if err := CheckID("tweet_id", p.TweetID); err != nil {
		return err
	}
	if err := CheckText("text", p.Text, -1, len(p.MediaIDs) > 0); err != nil {
		return err
	}
	if err := checkMedia("media_ids", p.MediaIDs); err != nil {
		return err
	}
	if o := p.Options; o != nil {
		if o.Poll != nil {
			return apperr.New(apperr.InvalidInput, "options.poll: an edit cannot add a poll")
		}
		if o.CommunityID != "" {
			return apperr.New(apperr.InvalidInput, "options.community_id: an edit cannot move a post to a community")
		}
	}
	return p.Options.validate("options", len(p.MediaIDs), false)
}

// EditedTweet is x_edit_tweet's data: the new version, the version it
// replaced and the chain of versions, oldest first.
type EditedTweet struct {
	ID                  string   `json:"id"`
	Text                string   `json:"text"`
	PreviousID          string   `json:"previous_id"`
	EditHistoryTweetIDs []string `json:"edit_history_tweet_ids,omitempty"`
}

func editMutation() Mutation {
	return define[EditParams, EditedTweet](Mutation{Name: "x_edit_tweet", Title: "Edit tweet", Category: policy.CatWrite,
		Errors: []apperr.Code{apperr.TweetTooLong, apperr.XDuplicateContent, apperr.EditWindowClosed},
		Description: "Edit one of your posts: X makes a new version with a new id and keeps the earlier ones in its edit history. " +
			"X allows it for 30 minutes after the first version, at most 5 times, on the latest version, and not on a post with a poll; " +
			"the post is read first and edit_window_closed answers, with nothing sent, when less than a minute of the window is left. " +
			"Approval is asked by default, and a queued edit expires when its window closes. " +
			"The undo is an edit back to the earlier text while X still allows one; a delete is none, since it removes every version."},
		func(in EditParams, _ Env) (any, error) {
			in.Options = in.Options.normalized()
			return in, in.Validate()
		}, editAction)
}

// editable is what X says of a post about to be edited.
type editable struct {
	text      string
	until     time.Time
	remaining int
}

// checkEditable reads post id from X and refuses, with edit_window_closed
// naming the field that decides, an edit X would not take now: a post of
// another account, one with a poll or otherwise not edit eligible, an
// earlier version, one with no edits left, or one whose window ends within
// EditMargin by d's clock.
func checkEditable(ctx context.Context, d Deps, x *xapi.Client, id string) (editable, error) {
	me, err := x.MyUserID(ctx)
	if err != nil {
		return editable{}, err
	}
	tw, _, err := x.EditState(ctx, id)
	if err != nil {
		return editable{}, err
	}
	closed := func(format string, args ...any) *apperr.Error {
		return apperr.New(apperr.EditWindowClosed, "tweet_id: post %s %s", id, fmt.Sprintf(format, args...)).With("tweet_id", id)
	}
	ec := tw.EditControls
	switch {
	case tw.AuthorID != me:
		return editable{}, closed("is not this account's own (author_id %s)", tw.AuthorID)
	case tw.Attachments != nil && len(tw.Attachments.PollIDs) > 0:
		return editable{}, closed("has a poll (attachments.poll_ids), and X does not allow editing a post with a poll")
	case ec == nil:
		return editable{}, closed("came back without edit_controls, so it cannot be known to be editable")
	case ec.IsEditEligible != nil && !*ec.IsEditEligible:
		return editable{}, closed("cannot be edited (edit_controls.is_edit_eligible is false)")
	case len(tw.EditHistoryTweetIDs) > 0 && tw.EditHistoryTweetIDs[len(tw.EditHistoryTweetIDs)-1] != id:
		latest := tw.EditHistoryTweetIDs[len(tw.EditHistoryTweetIDs)-1]
		return editable{}, closed("is an earlier version; only the latest, %s, can be edited (edit_history_tweet_ids)", latest).With("latest_id", latest)
	case ec.EditsRemaining == nil || *ec.EditsRemaining <= 0:
		return editable{}, closed("has no edits left (edit_controls.edits_remaining is 0)")
	case ec.EditableUntil == nil:
		return editable{}, closed("has no edit window (edit_controls.editable_until is empty)")
	}
	until := *ec.EditableUntil
	if left := until.Sub(d.now()); left <= EditMargin {
		return editable{}, closed("can be edited only until %s (edit_controls.editable_until), less than %d s from now",
			until.UTC().Format(time.RFC3339), int(EditMargin.Seconds())).With("editable_until", until.UTC().Format(time.RFC3339))
	}
	return editable{text: tw.Text, until: until, remaining: *ec.EditsRemaining}, nil
}

func editAction(d Deps, m Mutation) *gateway.Action {
	parse := decodeValid[EditParams]
	return &gateway.Action{
		EditableText: "text",
		Validate:     func(params json.RawMessage) error { _, err := parse(params); return err },
		// The post edited is the target: the review card shows it (the
		// text as it stands) above the new text.
		Target: func(params json.RawMessage) string {
			p, err := parse(params)
			if err != nil {
				return ""
			}
			return p.TweetID
		},
		Cost: func(params json.RawMessage) float64 {
			p, _ := parse(params)
			return xapi.EstimateCost("POST", "/2/tweets", 1, xapi.ContainsURL(p.Text))
		},
		Precheck: func(ctx context.Context, params json.RawMessage) (time.Time, error) {
			p, err := parse(params)
			if err != nil {
				return time.Time{}, err
			}
			x, err := client(d)
			if err != nil {
				return time.Time{}, err
			}
			e, err := checkEditable(ctx, d, x, p.TweetID)
			return e.until, err
		},
		Verify: func(ctx context.Context, params json.RawMessage) (any, bool, error) {
			p, err := parse(params)
			if err != nil {
				return nil, false, err
			}
			return findEdit(ctx, d, p)
		},
		Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
			p, err := parse(params)
			if err != nil {
				return gateway.Result{}, err
			}
			x, err := client(d)
			if err != nil {
				return gateway.Result{}, err
			}
			// Checked again here: an approved edit runs long after it was
			// queued, and the window may have closed meanwhile.
			before, err := checkEditable(ctx, d, x, p.TweetID)
			if err != nil {
				return gateway.Result{}, err
			}
			xp := xapi.PostParams{Text: p.Text, MediaIDs: p.MediaIDs}
			p.Options.apply(&xp)
			tw, info, err := x.EditTweet(ctx, p.TweetID, xp)
			if err != nil {
				return gateway.Result{RetryCount: info.RetryCount}, err
			}
			return gateway.Result{
				Data:       EditedTweet{ID: tw.ID, Text: tw.Text, PreviousID: p.TweetID, EditHistoryTweetIDs: tw.EditHistoryTweetIDs},
				Rollback:   editUndo(m, tw.ID, before, d.now()),
				RetryCount: info.RetryCount,
			}, nil
		},
	}
}

// editUndo is an edit's rollback: editing back to the text it replaced,
// while the window and an edit last. A delete is no undo: it removes every
// version.
func editUndo(m Mutation, newID string, before editable, now time.Time) *envelope.Rollback {
	if before.remaining <= 1 || before.until.Sub(now) <= EditMargin {
		return irreversible("No undo: X allows no further edit of this post (5 edits at most, within 30 minutes of the first version), " +
			"and deleting any version deletes the whole post with its history.")
	}
	g := undoOf(m, newID)
	if g.UndoParams != nil {
		g.UndoParams["text"] = before.text
		g.Note = fmt.Sprintf("%s Possible until %s.", g.Note, before.until.UTC().Format(time.RFC3339))
	}
	return g
}

// findEdit looks for the effect of an edit whose outcome is unknown: a
// later version of the post with exactly the new text.
func findEdit(ctx context.Context, d Deps, p EditParams) (any, bool, error) {
	x, err := client(d)
	if err != nil {
		return nil, false, err
	}
	tw, _, err := x.EditState(ctx, p.TweetID)
	if err != nil {
		return nil, false, err
	}
	h := tw.EditHistoryTweetIDs
	if len(h) == 0 || h[len(h)-1] == p.TweetID {
		return nil, false, nil
	}
	latest, _, err := x.GetTweet(ctx, h[len(h)-1])
	if err != nil {
		return nil, false, err
	}
	if norm.NFC.String(latest.Text) != norm.NFC.String(p.Text) {
		return nil, false, nil
	}
	return EditedTweet{ID: latest.ID, Text: latest.Text, PreviousID: p.TweetID, EditHistoryTweetIDs: h}, true, nil
}
