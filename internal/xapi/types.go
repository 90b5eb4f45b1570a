package xapi

import (
	"encoding/json"
	"time"
)

// CallInfo describes how a call went on the wire.
type CallInfo struct {
	// RetryCount is the number of attempts after the first.
	RetryCount int `json:"retry_count"`
	// RateLimit is the endpoint's rate-limit state after the call, nil when X
	// sent no rate-limit headers.
	RateLimit *RateLimitState `json:"rate_limit,omitempty"`
}

// TweetMetrics are a post's public engagement counts.
type TweetMetrics struct {
	RetweetCount    int64 `json:"retweet_count"`
	ReplyCount      int64 `json:"reply_count"`
	LikeCount       int64 `json:"like_count"`
	QuoteCount      int64 `json:"quote_count"`
	BookmarkCount   int64 `json:"bookmark_count"`
	ImpressionCount int64 `json:"impression_count"`
}

// UnmarshalJSON accepts both X's wire name retweet_count and the spec's
// newer repost_count.
func (m *TweetMetrics) UnmarshalJSON(b []byte) error {
	type plain TweetMetrics
	var aux struct {
		plain
		Repost *int64 `json:"repost_count"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*m = TweetMetrics(aux.plain)
	if aux.Repost != nil && m.RetweetCount == 0 {
		m.RetweetCount = *aux.Repost
	}
	return nil
}

// ReferencedTweet links a post to the post it replies to, quotes or reposts.
type ReferencedTweet struct {
	// Type is "replied_to", "quoted" or "retweeted".
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Attachments lists what is attached to a post.
type Attachments struct {
	MediaKeys []string `json:"media_keys,omitempty"`
	PollIDs   []string `json:"poll_ids,omitempty"`
}

// URLEntity is a link found in a post.
type URLEntity struct {
	Start       int    `json:"start"`
	End         int    `json:"end"`
	URL         string `json:"url,omitempty"`
	ExpandedURL string `json:"expanded_url,omitempty"`
	DisplayURL  string `json:"display_url,omitempty"`
	UnwoundURL  string `json:"unwound_url,omitempty"`
	MediaKey    string `json:"media_key,omitempty"`
}

// TagEntity is a hashtag or cashtag.
type TagEntity struct {
	Start int    `json:"start"`
	End   int    `json:"end"`
	Tag   string `json:"tag"`
}

// MentionEntity is an @mention.
type MentionEntity struct {
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Username string `json:"username,omitempty"`
	ID       string `json:"id,omitempty"`
}

// Entities are the parsed parts of a post's text.
type Entities struct {
	URLs     []URLEntity     `json:"urls,omitempty"`
	Hashtags []TagEntity     `json:"hashtags,omitempty"`
	Cashtags []TagEntity     `json:"cashtags,omitempty"`
	Mentions []MentionEntity `json:"mentions,omitempty"`
}

// Tweet is an X post.
type Tweet struct {
	ID                  string            `json:"id"`
	Text                string            `json:"text"`
	AuthorID            string            `json:"author_id,omitempty"`
	CreatedAt           time.Time         `json:"created_at,omitzero"`
	ConversationID      string            `json:"conversation_id,omitempty"`
	InReplyToUserID     string            `json:"in_reply_to_user_id,omitempty"`
	Lang                string            `json:"lang,omitempty"`
	PossiblySensitive   bool              `json:"possibly_sensitive,omitempty"`
	PublicMetrics       TweetMetrics      `json:"public_metrics,omitzero"`
	ReferencedTweets    []ReferencedTweet `json:"referenced_tweets,omitempty"`
	Attachments         *Attachments      `json:"attachments,omitempty"`
	Entities            *Entities         `json:"entities,omitempty"`
	EditHistoryTweetIDs []string          `json:"edit_history_tweet_ids,omitempty"`
	// Author is the expanded author from includes.users, filled in by the
	// client when X returned it. X itself never sends this field.
	Author *User `json:"author,omitempty"`
}

// UnmarshalJSON accepts X's wire names and the spec's post-era aliases
// (referenced_posts, edit_history_post_ids).
func (t *Tweet) UnmarshalJSON(b []byte) error {
	type plain Tweet
	var aux struct {
		plain
		ReferencedPosts    []ReferencedTweet `json:"referenced_posts"`
		EditHistoryPostIDs []string          `json:"edit_history_post_ids"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*t = Tweet(aux.plain)
	if t.ReferencedTweets == nil {
		t.ReferencedTweets = aux.ReferencedPosts
	}
	if t.EditHistoryTweetIDs == nil {
		t.EditHistoryTweetIDs = aux.EditHistoryPostIDs
	}
	return nil
}

// HasURL reports whether X found a link in the post.
func (t *Tweet) HasURL() bool { return t.Entities != nil && len(t.Entities.URLs) > 0 }

// UserMetrics are a user's public counts.
type UserMetrics struct {
	FollowersCount int64 `json:"followers_count"`
	FollowingCount int64 `json:"following_count"`
	TweetCount     int64 `json:"tweet_count"`
	ListedCount    int64 `json:"listed_count"`
	LikeCount      int64 `json:"like_count,omitempty"`
}

// UnmarshalJSON accepts tweet_count and the spec's post_count.
func (m *UserMetrics) UnmarshalJSON(b []byte) error {
	type plain UserMetrics
	var aux struct {
		plain
		PostCount *int64 `json:"post_count"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*m = UserMetrics(aux.plain)
	if aux.PostCount != nil && m.TweetCount == 0 {
		m.TweetCount = *aux.PostCount
	}
	return nil
}

// User is an X account.
type User struct {
	ID              string      `json:"id"`
	Name            string      `json:"name"`
	Username        string      `json:"username"`
	Description     string      `json:"description,omitempty"`
	Location        string      `json:"location,omitempty"`
	URL             string      `json:"url,omitempty"`
	ProfileImageURL string      `json:"profile_image_url,omitempty"`
	Protected       bool        `json:"protected,omitempty"`
	Verified        bool        `json:"verified,omitempty"`
	VerifiedType    string      `json:"verified_type,omitempty"`
	CreatedAt       time.Time   `json:"created_at,omitzero"`
	PublicMetrics   UserMetrics `json:"public_metrics,omitzero"`
}

// MediaItem is an expanded media object (includes.media).
type MediaItem struct {
	MediaKey        string `json:"media_key"`
	Type            string `json:"type,omitempty"`
	URL             string `json:"url,omitempty"`
	PreviewImageURL string `json:"preview_image_url,omitempty"`
	AltText         string `json:"alt_text,omitempty"`
	Width           int    `json:"width,omitempty"`
	Height          int    `json:"height,omitempty"`
	DurationMS      int64  `json:"duration_ms,omitempty"`
}

// Includes are the expanded objects of a response.
type Includes struct {
	Users  []User      `json:"users,omitempty"`
	Tweets []Tweet     `json:"tweets,omitempty"`
	Media  []MediaItem `json:"media,omitempty"`
}

// UnmarshalJSON accepts includes.tweets and the spec's includes.posts.
func (in *Includes) UnmarshalJSON(b []byte) error {
	type plain Includes
	var aux struct {
		plain
		Posts []Tweet `json:"posts"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*in = Includes(aux.plain)
	if in.Tweets == nil {
		in.Tweets = aux.Posts
	}
	return nil
}

// PageMeta is X's pagination metadata.
type PageMeta struct {
	ResultCount   int    `json:"result_count"`
	NextToken     string `json:"next_token,omitempty"`
	PreviousToken string `json:"previous_token,omitempty"`
	NewestID      string `json:"newest_id,omitempty"`
	OldestID      string `json:"oldest_id,omitempty"`
}

// Page is one page of a list endpoint.
type Page[T any] struct {
	Data     []T      `json:"data"`
	Includes Includes `json:"includes,omitzero"`
	Meta     PageMeta `json:"meta"`
	// Errors are X's partial errors (for example ids that were not found in a
	// batch lookup); the page is still valid.
	Errors []Problem `json:"errors,omitempty"`
	Call   CallInfo  `json:"-"`
}

// envelope is X's response shape.
type envelope[T any] struct {
	Data     T         `json:"data"`
	Includes Includes  `json:"includes"`
	Meta     PageMeta  `json:"meta"`
	Errors   []Problem `json:"errors"`
}

// attachAuthors points each post's Author at its expanded user.
func attachAuthors(ts []Tweet, users []User) {
	if len(users) == 0 {
		return
	}
	byID := make(map[string]*User, len(users))
	for i := range users {
		byID[users[i].ID] = &users[i]
	}
	for i := range ts {
		if u, ok := byID[ts[i].AuthorID]; ok {
			ts[i].Author = u
		}
	}
}
