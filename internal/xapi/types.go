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
	var w wireTweetMetrics
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = w.convert()
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
	ID string `json:"id"`
	// Text is the whole post: for a long post, X's note_tweet text.
	Text string `json:"text"`
	// TruncatedText is, for a long post, the shortened text X shows where
	// the whole post is not displayed (its text field); empty otherwise.
	TruncatedText       string            `json:"truncated_text,omitempty"`
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
	// EditControls say whether and until when the post may be edited;
	// nil unless asked for (tweet.fields=edit_controls).
	EditControls *EditControls `json:"edit_controls,omitempty"`
	// Author is the expanded author from includes.users, filled in by the
	// client when X returned it. X itself never sends this field.
	Author *User `json:"author,omitempty"`
	// Poll is the expanded poll of a poll post from includes.polls, filled
	// in by the client like Author.
	Poll *TweetPoll `json:"poll,omitempty"`
}

// TweetPoll is X's poll object (includes.polls): a posted poll and its
// votes so far.
type TweetPoll struct {
	ID              string       `json:"id"`
	Options         []PollOption `json:"options"`
	DurationMinutes int          `json:"duration_minutes,omitempty"`
	EndDatetime     time.Time    `json:"end_datetime,omitzero"`
	// VotingStatus is "open" or "closed".
	VotingStatus string `json:"voting_status,omitempty"`
}

// PollOption is one choice of a poll and its votes so far.
type PollOption struct {
	Position int    `json:"position"`
	Label    string `json:"label"`
	Votes    int64  `json:"votes"`
}

// UnmarshalJSON accepts X's wire names and the spec's post-era aliases
// (referenced_posts, edit_history_post_ids, repost_count).
func (t *Tweet) UnmarshalJSON(b []byte) error {
	var w wireTweet
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = w.convert()
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
	var w wireUserMetrics
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = w.convert()
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

	// SubscriptionType is the user's X subscription (Basic, Premium,
	// PremiumPlus or None); X tells it for the authenticated user (Me).
	SubscriptionType string `json:"subscription_type,omitempty"`
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
	Polls  []TweetPoll `json:"polls,omitempty"`
}

// UnmarshalJSON accepts includes.tweets and the spec's includes.posts.
func (in *Includes) UnmarshalJSON(b []byte) error {
	var w wireIncludes
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*in = w.convert()
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

// envelope is X's response shape, decoded in one pass into wire types.
type envelope[T any] struct {
	Data     T            `json:"data"`
	Includes wireIncludes `json:"includes"`
	Meta     PageMeta     `json:"meta"`
	Errors   []Problem    `json:"errors"`
}

// attachPolls points each poll post's Poll at its expanded poll.
func attachPolls(ts []Tweet, polls []TweetPoll) {
	if len(polls) == 0 {
		return
	}
	byID := make(map[string]*TweetPoll, len(polls))
	for i := range polls {
		byID[polls[i].ID] = &polls[i]
	}
	for i := range ts {
		if a := ts[i].Attachments; a != nil {
			for _, id := range a.PollIDs {
				if p := byID[id]; p != nil {
					ts[i].Poll = p
					break
				}
			}
		}
	}
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

// The wire types mirror X's JSON including the spec's post-era aliases, with
// no custom unmarshalers below them, so a response is scanned once; the
// public types are built from them.

type wireTweetMetrics struct {
	Retweet    int64 `json:"retweet_count"`
	Repost     int64 `json:"repost_count"`
	Reply      int64 `json:"reply_count"`
	Like       int64 `json:"like_count"`
	Quote      int64 `json:"quote_count"`
	Bookmark   int64 `json:"bookmark_count"`
	Impression int64 `json:"impression_count"`
}

func (w *wireTweetMetrics) convert() TweetMetrics {
	// Counts are never negative, so whichever spelling X used is the max.
	return TweetMetrics{RetweetCount: max(w.Retweet, w.Repost), ReplyCount: w.Reply, LikeCount: w.Like,
		QuoteCount: w.Quote, BookmarkCount: w.Bookmark, ImpressionCount: w.Impression}
}

type wireTweet struct {
	ID                  string            `json:"id"`
	Text                string            `json:"text"`
	AuthorID            string            `json:"author_id"`
	CreatedAt           time.Time         `json:"created_at"`
	ConversationID      string            `json:"conversation_id"`
	InReplyToUserID     string            `json:"in_reply_to_user_id"`
	Lang                string            `json:"lang"`
	PossiblySensitive   bool              `json:"possibly_sensitive"`
	PublicMetrics       wireTweetMetrics  `json:"public_metrics"`
	ReferencedTweets    []ReferencedTweet `json:"referenced_tweets"`
	ReferencedPosts     []ReferencedTweet `json:"referenced_posts"`
	Attachments         *Attachments      `json:"attachments"`
	Entities            *Entities         `json:"entities"`
	EditHistoryTweetIDs []string          `json:"edit_history_tweet_ids"`
	EditHistoryPostIDs  []string          `json:"edit_history_post_ids"`
	EditControls        *EditControls     `json:"edit_controls"`
	// A long post's whole text is its note; the spec's name is note_post.
	NoteTweet     *wireNote `json:"note_tweet"`
	NotePost      *wireNote `json:"note_post"`
	TruncatedText string    `json:"truncated_text"`
}

// wireNote is X's NoteTweet: the whole text of a long post.
type wireNote struct {
	Text     string    `json:"text"`
	Entities *Entities `json:"entities"`
}

// EditControls are X's edit_controls of a post. The spec lets each field
// be null; a missing field is nil.
type EditControls struct {
	EditsRemaining *int       `json:"edits_remaining,omitempty"`
	IsEditEligible *bool      `json:"is_edit_eligible,omitempty"`
	EditableUntil  *time.Time `json:"editable_until,omitempty"`
}

func (w *wireTweet) convert() Tweet {
	t := Tweet{
		ID: w.ID, Text: w.Text, AuthorID: w.AuthorID, CreatedAt: w.CreatedAt, ConversationID: w.ConversationID,
		InReplyToUserID: w.InReplyToUserID, Lang: w.Lang, PossiblySensitive: w.PossiblySensitive,
		PublicMetrics: w.PublicMetrics.convert(), ReferencedTweets: w.ReferencedTweets, Attachments: w.Attachments,
		Entities: w.Entities, EditHistoryTweetIDs: w.EditHistoryTweetIDs, EditControls: w.EditControls,
	}
	if t.ReferencedTweets == nil {
		t.ReferencedTweets = w.ReferencedPosts
	}
	if t.EditHistoryTweetIDs == nil {
		t.EditHistoryTweetIDs = w.EditHistoryPostIDs
	}
	t.TruncatedText = w.TruncatedText
	note := w.NoteTweet
	if note == nil {
		note = w.NotePost
	}
	if note != nil && note.Text != "" && note.Text != w.Text {
		t.Text, t.TruncatedText = note.Text, w.Text
		if note.Entities != nil {
			t.Entities = note.Entities
		}
	}
	return t
}

type wireUserMetrics struct {
	Followers int64 `json:"followers_count"`
	Following int64 `json:"following_count"`
	Tweets    int64 `json:"tweet_count"`
	Posts     int64 `json:"post_count"`
	Listed    int64 `json:"listed_count"`
	Likes     int64 `json:"like_count"`
}

func (w *wireUserMetrics) convert() UserMetrics {
	return UserMetrics{FollowersCount: w.Followers, FollowingCount: w.Following, TweetCount: max(w.Tweets, w.Posts),
		ListedCount: w.Listed, LikeCount: w.Likes}
}

type wireUser struct {
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	Username         string          `json:"username"`
	Description      string          `json:"description"`
	Location         string          `json:"location"`
	URL              string          `json:"url"`
	ProfileImageURL  string          `json:"profile_image_url"`
	Protected        bool            `json:"protected"`
	Verified         bool            `json:"verified"`
	VerifiedType     string          `json:"verified_type"`
	SubscriptionType string          `json:"subscription_type"`
	CreatedAt        time.Time       `json:"created_at"`
	PublicMetrics    wireUserMetrics `json:"public_metrics"`
}

func (w *wireUser) convert() User {
	return User{
		ID: w.ID, Name: w.Name, Username: w.Username, Description: w.Description, Location: w.Location, URL: w.URL,
		ProfileImageURL: w.ProfileImageURL, Protected: w.Protected, Verified: w.Verified, VerifiedType: w.VerifiedType,
		SubscriptionType: w.SubscriptionType, CreatedAt: w.CreatedAt, PublicMetrics: w.PublicMetrics.convert(),
	}
}

type wireIncludes struct {
	Users  []wireUser  `json:"users"`
	Tweets []wireTweet `json:"tweets"`
	Posts  []wireTweet `json:"posts"`
	Media  []MediaItem `json:"media"`
	Polls  []TweetPoll `json:"polls"`
}

func (w *wireIncludes) convert() Includes {
	in := Includes{Users: convertUsers(w.Users), Tweets: convertTweets(w.Tweets), Media: w.Media, Polls: w.Polls}
	if in.Tweets == nil {
		in.Tweets = convertTweets(w.Posts)
	}
	return in
}

func convertTweets(ws []wireTweet) []Tweet {
	if ws == nil {
		return nil
	}
	out := make([]Tweet, len(ws))
	for i := range ws {
		out[i] = ws[i].convert()
	}
	return out
}

func convertUsers(ws []wireUser) []User {
	if ws == nil {
		return nil
	}
	out := make([]User, len(ws))
	for i := range ws {
		out[i] = ws[i].convert()
	}
	return out
}

// resources lists what a decoded read returned, for the cost ledger.
func (w *wireIncludes) resources(rr *readResources) {
	for i := range w.Users {
		rr.userIDs = append(rr.userIDs, w.Users[i].ID)
	}
	for i := range w.Tweets {
		rr.postIDs = append(rr.postIDs, w.Tweets[i].ID)
	}
	for i := range w.Posts {
		rr.postIDs = append(rr.postIDs, w.Posts[i].ID)
	}
	for i := range w.Media {
		rr.mediaIDs = append(rr.mediaIDs, w.Media[i].MediaKey)
	}
}
