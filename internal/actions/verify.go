package actions

import (
	"context"
	"encoding/json"
	"slices"

	"golang.org/x/text/unicode/norm"

	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xrequest"
)

// recentOwnPosts is how many of the account's latest posts are read when
// looking for the effect of an attempt whose outcome is unknown.
const recentOwnPosts = 100

// findOwnPost looks for a post with exactly text (and the same reply or
// quote target) among the account's own recent posts. Only an exact match
// counts: X may rewrite a post (links become t.co), and a near match proves
// nothing, so the block then stays for a human to lift.
func findOwnPost(ctx context.Context, d Deps, p PostParams) (any, bool, error) {
	x, err := client(d)
	if err != nil {
		return nil, false, err
	}
	page, err := x.UserTweets(ctx, "", xapi.ListParams{MaxResults: recentOwnPosts})
	if err != nil {
		return nil, false, err
	}
	for _, tw := range page.Data {
		// Compared in NFC, the form X keeps and counts text in.
		if norm.NFC.String(tw.Text) == norm.NFC.String(p.Text) && refersTo(tw, "replied_to", p.InReplyToID) && refersTo(tw, "quoted", p.QuotedTweetID) {
			return PostedTweet{ID: tw.ID, Text: tw.Text}, true, nil
		}
	}
	return nil, false, nil
}

// refersTo reports whether tw's reference of kind is id ("" = none).
func refersTo(tw xapi.Tweet, kind, id string) bool {
	i := slices.IndexFunc(tw.ReferencedTweets, func(r xapi.ReferencedTweet) bool { return r.Type == kind })
	if id == "" {
		return i < 0
	}
	return i >= 0 && tw.ReferencedTweets[i].ID == id
}

// verifyPost is the Verify of the tweet-creating tools.
func verifyPost(d Deps, parse func(json.RawMessage) (PostParams, error)) func(context.Context, json.RawMessage) (any, bool, error) {
	return func(ctx context.Context, params json.RawMessage) (any, bool, error) {
		p, err := parse(params)
		if err != nil {
			return nil, false, err
		}
		return findOwnPost(ctx, d, p)
	}
}

// postOfRequest reads the post a universal request creates, when it is a
// v2 create-post request with a JSON body.
func postOfRequest(c *xrequest.Checked) (PostParams, bool) {
	if xrequest.ClassifyChecked(c).Kind != xrequest.KindTweetCreate || c.Path != "/2/tweets" {
		return PostParams{}, false
	}
	var body struct {
		Text  string `json:"text"`
		Reply struct {
			InReplyToTweetID string `json:"in_reply_to_tweet_id"`
		} `json:"reply"`
		QuoteTweetID string `json:"quote_tweet_id"`
	}
	if json.Unmarshal(c.Body, &body) != nil || body.Text == "" {
		return PostParams{}, false
	}
	return PostParams{Text: body.Text, InReplyToID: body.Reply.InReplyToTweetID, QuotedTweetID: body.QuoteTweetID}, true
}
