package xapi

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// MaxMediaPerPost is X's limit of media attachments per post.
const MaxMediaPerPost = 4

// MaxUsersPerLookup is how many ids one batch user lookup takes.
const MaxUsersPerLookup = 100

// MaxQueryLength is the longest recent-search query X accepts.
const MaxQueryLength = 512

// PostParams describe a new post. ReplyTo makes it a reply, QuoteOf a
// quote; media ids are sent for every kind of post.
type PostParams struct {
	Text     string
	ReplyTo  string
	QuoteOf  string
	MediaIDs []string
	// ReplySettings limits who may reply; "" (or "everyone") is X's
	// default and is not sent.
	ReplySettings string
	// Poll attaches a poll; X refuses it with media or a quote.
	Poll            *Poll
	CommunityID     string
	MadeWithAI      bool
	PaidPartnership bool
	// EditOf makes the request an edit of that post (EditTweet sets it):
	// X makes a new version of it rather than a new post.
	EditOf string
}

// X's poll limits.
const (
	MinPollOptions      = 2
	MaxPollOptions      = 4
	MaxPollOptionLength = 25
	MinPollMinutes      = 5
	MaxPollMinutes      = 7 * 24 * 60
)

// ReplySettings are the values X accepts for reply_settings; "everyone" is
// its default, sent as no value.
var ReplySettings = []string{"everyone", "following", "mentionedUsers", "subscribers", "verified"}

// Poll is a poll to attach to a new post.
type Poll struct {
	Options         []string `json:"options"`
	DurationMinutes int      `json:"duration_minutes"`
}

// createPostBody is X's POST /2/tweets body.
type createPostBody struct {
	Text  string `json:"text"`
	Reply *struct {
		InReplyToTweetID string `json:"in_reply_to_tweet_id"`
	} `json:"reply,omitempty"`
	QuoteTweetID string `json:"quote_tweet_id,omitempty"`
	Media        *struct {
		MediaIDs []string `json:"media_ids"`
	} `json:"media,omitempty"`
	ReplySettings   string `json:"reply_settings,omitempty"`
	Poll            *Poll  `json:"poll,omitempty"`
	CommunityID     string `json:"community_id,omitempty"`
	MadeWithAI      bool   `json:"made_with_ai,omitempty"`
	PaidPartnership bool   `json:"paid_partnership,omitempty"`
	EditOptions     *struct {
		PreviousPostID string `json:"previous_post_id"`
	} `json:"edit_options,omitempty"`
}

// Body returns the exact JSON PostTweet sends, so callers can fingerprint or
// price it before the call.
func (p PostParams) Body() ([]byte, error) {
	if p.Text == "" && len(p.MediaIDs) == 0 {
		return nil, apperr.New(apperr.InvalidInput, "text: required unless media_ids are given")
	}
	var b createPostBody
	b.Text = p.Text
	if p.ReplyTo != "" {
		if err := checkID("reply_to", p.ReplyTo); err != nil {
			return nil, err
		}
		b.Reply = &struct {
			InReplyToTweetID string `json:"in_reply_to_tweet_id"`
		}{p.ReplyTo}
	}
	if p.QuoteOf != "" {
		if err := checkID("quote_of", p.QuoteOf); err != nil {
			return nil, err
		}
		b.QuoteTweetID = p.QuoteOf
	}
	if len(p.MediaIDs) > 0 {
		if len(p.MediaIDs) > MaxMediaPerPost {
			return nil, apperr.New(apperr.InvalidInput, "media_ids: %d given, X accepts at most %d", len(p.MediaIDs), MaxMediaPerPost)
		}
		for i, id := range p.MediaIDs {
			if err := checkID("media_ids["+strconv.Itoa(i)+"]", id); err != nil {
				return nil, err
			}
		}
		b.Media = &struct {
			MediaIDs []string `json:"media_ids"`
		}{append([]string(nil), p.MediaIDs...)}
	}
	if p.ReplySettings != "everyone" {
		b.ReplySettings = p.ReplySettings
	}
	if p.Poll != nil {
		if len(p.MediaIDs) > 0 || p.QuoteOf != "" {
			return nil, apperr.New(apperr.InvalidInput, "poll: X does not take a poll with media or a quote")
		}
		b.Poll = &Poll{Options: append([]string(nil), p.Poll.Options...), DurationMinutes: p.Poll.DurationMinutes}
	}
	if p.CommunityID != "" {
		if err := checkID("community_id", p.CommunityID); err != nil {
			return nil, err
		}
		b.CommunityID = p.CommunityID
	}
	b.MadeWithAI, b.PaidPartnership = p.MadeWithAI, p.PaidPartnership
	if p.EditOf != "" {
		if err := checkID("edit_of", p.EditOf); err != nil {
			return nil, err
		}
		if p.ReplyTo != "" || p.QuoteOf != "" || p.Poll != nil || p.CommunityID != "" {
			return nil, apperr.New(apperr.InvalidInput, "edit_of: an edit cannot change whom a post answers or quotes, its poll or its community")
		}
		b.EditOptions = &struct {
			PreviousPostID string `json:"previous_post_id"`
		}{p.EditOf}
	}
	return json.Marshal(b)
}

// PostTweet creates a post, reply or quote. It is never retried once X may
// have received it: on an ambiguous failure the error code is
// apperr.XOutcomeUnknown.
func (c *Client) PostTweet(ctx context.Context, p PostParams) (*Tweet, CallInfo, error) {
	body, err := p.Body()
	if err != nil {
		return nil, CallInfo{}, err
	}
	var out struct {
		Data *Tweet `json:"data"`
	}
	info, err := c.write(ctx, "POST", "/2/tweets", body, &out)
	if err != nil {
		return nil, info, err
	}
	if out.Data == nil || out.Data.ID == "" {
		return nil, info, apperr.New(apperr.XOutcomeUnknown, "X accepted POST /2/tweets but returned no post id; verify before trying again")
	}
	c.made(out.Data.ID)
	return out.Data, info, nil
}

// EditTweet makes a new version of post previousID with p's text and
// media (POST /2/tweets with edit_options); X answers with the new
// version's id. Like PostTweet it is never retried once X may have
// received it.
func (c *Client) EditTweet(ctx context.Context, previousID string, p PostParams) (*Tweet, CallInfo, error) {
	if err := checkID("tweet_id", previousID); err != nil {
		return nil, CallInfo{}, err
	}
	p.EditOf = previousID
	return c.PostTweet(ctx, p)
}

// write sends a JSON write and decodes data into out.
func (c *Client) write(ctx context.Context, method, path string, body []byte, out any) (CallInfo, error) {
	r := newRequest(method, HostAPI, path, nil, body)
	res, err := c.exec(ctx, r)
	if err != nil {
		return CallInfo{}, err
	}
	if err := json.Unmarshal(res.body, out); err != nil {
		code := apperr.XAPIError
		if r.class == classCreate {
			code = apperr.XOutcomeUnknown
		}
		return res.callInfo(), apperr.Wrap(code, err, "X's answer to %s did not have the expected shape", r.endpoint)
	}
	return res.callInfo(), nil
}

// DeleteTweet deletes one of the authenticated user's posts and reports
// X's data.deleted.
func (c *Client) DeleteTweet(ctx context.Context, id string) (bool, CallInfo, error) {
	if err := checkID("tweet_id", id); err != nil {
		return false, CallInfo{}, err
	}
	var out struct {
		Data struct {
			Deleted bool `json:"deleted"`
		} `json:"data"`
	}
	info, err := c.write(ctx, "DELETE", "/2/tweets/"+id, nil, &out)
	return out.Data.Deleted, info, err
}

// FollowResult is X's answer to a follow.
type FollowResult struct {
	Following bool `json:"following"`
	// PendingFollow is true when the target is protected and must approve.
	PendingFollow bool `json:"pending_follow"`
}

// action posts {field: target} to /2/users/:me/<kind> and returns the
// boolean X reports under data.<flag>.
func (c *Client) action(ctx context.Context, kind, field, target, flag string) (bool, CallInfo, error) {
	if err := checkID(field, target); err != nil {
		return false, CallInfo{}, err
	}
	me, err := c.MyUserID(ctx)
	if err != nil {
		return false, CallInfo{}, err
	}
	body, _ := json.Marshal(map[string]string{field: target})
	var out struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	info, err := c.write(ctx, "POST", "/2/users/"+me+"/"+kind, body, &out)
	if err != nil {
		return false, info, err
	}
	var v bool
	_ = json.Unmarshal(out.Data[flag], &v)
	return v, info, nil
}

// undo deletes /2/users/:me/<kind>/<target> and returns data.<flag>.
func (c *Client) undo(ctx context.Context, kind, field, target, flag string) (bool, CallInfo, error) {
	if err := checkID(field, target); err != nil {
		return false, CallInfo{}, err
	}
	me, err := c.MyUserID(ctx)
	if err != nil {
		return false, CallInfo{}, err
	}
	var out struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	info, err := c.write(ctx, "DELETE", "/2/users/"+me+"/"+kind+"/"+target, nil, &out)
	if err != nil {
		return false, info, err
	}
	var v bool
	_ = json.Unmarshal(out.Data[flag], &v)
	return v, info, nil
}

// Mute mutes a user; the result is X's data.muting (true on success).
func (c *Client) Mute(ctx context.Context, targetUserID string) (bool, CallInfo, error) {
	return c.action(ctx, "muting", "target_user_id", targetUserID, "muting")
}

// Unmute unmutes a user; the result is X's data.muting (false on success).
func (c *Client) Unmute(ctx context.Context, targetUserID string) (bool, CallInfo, error) {
	return c.undo(ctx, "muting", "target_user_id", targetUserID, "muting")
}

// Like likes a post; the result is X's data.liked (true on success).
func (c *Client) Like(ctx context.Context, tweetID string) (bool, CallInfo, error) {
	return c.action(ctx, "likes", "tweet_id", tweetID, "liked")
}

// Unlike removes a like; the result is X's data.liked (false on success).
func (c *Client) Unlike(ctx context.Context, tweetID string) (bool, CallInfo, error) {
	return c.undo(ctx, "likes", "tweet_id", tweetID, "liked")
}

// Retweet reposts a post; the result is X's data.retweeted.
func (c *Client) Retweet(ctx context.Context, tweetID string) (bool, CallInfo, error) {
	return c.action(ctx, "retweets", "tweet_id", tweetID, "retweeted")
}

// Unretweet removes a repost; the result is X's data.retweeted (false on
// success).
func (c *Client) Unretweet(ctx context.Context, tweetID string) (bool, CallInfo, error) {
	return c.undo(ctx, "retweets", "tweet_id", tweetID, "retweeted")
}

// Bookmark bookmarks a post; the result is X's data.bookmarked.
func (c *Client) Bookmark(ctx context.Context, tweetID string) (bool, CallInfo, error) {
	return c.action(ctx, "bookmarks", "tweet_id", tweetID, "bookmarked")
}

// Unbookmark removes a bookmark; the result is X's data.bookmarked (false
// on success).
func (c *Client) Unbookmark(ctx context.Context, tweetID string) (bool, CallInfo, error) {
	return c.undo(ctx, "bookmarks", "tweet_id", tweetID, "bookmarked")
}

// Follow follows a user.
func (c *Client) Follow(ctx context.Context, targetUserID string) (FollowResult, CallInfo, error) {
	if err := checkID("target_user_id", targetUserID); err != nil {
		return FollowResult{}, CallInfo{}, err
	}
	me, err := c.MyUserID(ctx)
	if err != nil {
		return FollowResult{}, CallInfo{}, err
	}
	body, _ := json.Marshal(map[string]string{"target_user_id": targetUserID})
	var out struct {
		Data FollowResult `json:"data"`
	}
	info, err := c.write(ctx, "POST", "/2/users/"+me+"/following", body, &out)
	return out.Data, info, err
}

// Unfollow stops following a user; the result is X's data.following (false
// on success).
func (c *Client) Unfollow(ctx context.Context, targetUserID string) (bool, CallInfo, error) {
	return c.undo(ctx, "following", "target_user_id", targetUserID, "following")
}
