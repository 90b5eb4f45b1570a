package actions

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/postlimit"
	"github.com/tuitbot/tuitbot/internal/xrequest"
)

// postWork is what a universal request that posts or edits asks of X, read
// as the typed tool with its effect reads its own parameters, so that the
// request meets that tool's checks before X is asked, not only its policy:
// the post's weighted length against the account's limit, and for an edit
// whose post it is and whether its window is open. A request that neither
// posts nor edits has no tool and passes.
type postWork struct {
	// tool is x_post_tweet, x_reply_to_tweet, x_quote_tweet or x_edit_tweet.
	tool string
	// field names where the text travels (body.text, or the v1.1 query's
	// status); text is empty when the request sends none readably.
	field, text string
	// edited is the post an edit names (edit_options.previous_post_id).
	edited string
}

// postWorkOf reads c.
func postWorkOf(c *xrequest.Checked) postWork {
	e := xrequest.ClassifyChecked(c)
	if e.Kind != xrequest.KindTweetCreate && e.Kind != xrequest.KindTweetEdit {
		return postWork{}
	}
	w := postWork{tool: e.Equivalent()}
	if strings.HasPrefix(e.Endpoint, "POST /1.1/") {
		w.field, w.text = "query.status", c.Query.Get("status")
		return w
	}
	// A text that is not a string is X's to refuse: nothing is posted.
	var body struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(c.Body, &body)
	w.field, w.text = "body.text", body.Text
	if e.Kind == xrequest.KindTweetEdit {
		// X's spec takes the post edited as a string; a number could be
		// read as another post by a parser that rounds it, so it names
		// none and is refused (within).
		var edit struct {
			Options struct {
				PreviousPostID string `json:"previous_post_id"`
			} `json:"edit_options"`
		}
		if json.Unmarshal(c.Body, &edit) != nil {
			edit.Options.PreviousPostID = ""
		}
		w.edited = edit.Options.PreviousPostID
	}
	return w
}

// within checks what can be checked without reading X, as the typed tool's
// Validate does: the text against limit (the account's, as last learned),
// or for an edit against an ordinary post's, as x_edit_tweet checks it, and
// that the edit names a post.
func (w postWork) within(limit postlimit.Limit) error {
	switch w.tool {
	case "":
		return nil
	case "x_edit_tweet":
		if err := CheckID("body.edit_options.previous_post_id", w.edited); err != nil {
			return err
		}
		limit = ordinary
	}
	return checkLength(w.field, w.text, -1, limit)
}

// prepare is within against the account's limit, asking X for it when the
// text is longer than an ordinary post, as the typed tools' arguments are
// checked before the gateway.
func (w postWork) prepare(env Env) error {
	if w.tool == "" || w.tool == "x_edit_tweet" {
		return w.within(ordinary)
	}
	limit, err := env.limit(w.text)
	if err != nil {
		return err
	}
	return w.within(limit)
}

// beforeX reads X as the typed tool does before its call is decided and
// again right before it is sent: the account's post limit as X tells it
// now, and for an edit the post edited (checkEditable). until is when an
// edit's window ends.
func (w postWork) beforeX(ctx context.Context, d Deps) (until time.Time, err error) {
	switch w.tool {
	case "":
		return time.Time{}, nil
	case "x_edit_tweet":
		if err := w.within(ordinary); err != nil {
			return time.Time{}, err
		}
		x, err := client(d)
		if err != nil {
			return time.Time{}, err
		}
		e, err := checkEditable(ctx, d, x, w.edited)
		return e.until, err
	}
	limit, err := LimitFor(ctx, d.PostLimit, w.text)
	if err != nil {
		return time.Time{}, err
	}
	return time.Time{}, w.within(limit)
}
