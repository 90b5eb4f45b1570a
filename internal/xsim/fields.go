package xsim

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Field and expansion names. X's live API uses the "tweet" spellings
// (tweet.fields, referenced_tweets.id); its OpenAPI document uses "post"
// spellings (post.fields, referenced_posts). The emulator accepts both and
// answers with both where they differ, so clients written against either
// parse the answers.
func tweetFieldNames() []string {
	return []string{"article", "article_title", "attachments", "author_id", "card_uri", "community_id",
		"context_annotations", "conversation_id", "created_at", "display_text_range", "edit_controls",
		"edit_history_tweet_ids", "edit_history_post_ids", "entities", "geo", "id", "in_reply_to_user_id",
		"lang", "matched_media_notes", "media_metadata", "non_public_metrics", "note_tweet", "note_post",
		"note_request_suggestions", "organic_metrics", "paid_partnership", "possibly_sensitive",
		"promoted_metrics", "public_metrics", "referenced_tweets", "referenced_posts", "reply_settings",
		"scopes", "source", "suggested_source_links", "suggested_source_links_with_counts", "text",
		"username", "withheld"}
}

func userFieldNames() []string {
	return []string{"affiliation", "confirmed_email", "connection_status", "created_at", "description",
		"entities", "id", "is_identity_verified", "location", "most_recent_tweet_id", "most_recent_post_id",
		"name", "parody", "pinned_tweet_id", "pinned_post_id", "profile_banner_url", "profile_image_url",
		"protected", "public_metrics", "receives_your_dm", "subscribes_to_you", "subscription",
		"subscription_type", "url", "username", "verified", "verified_followers_count", "verified_type",
		"withheld"}
}

func mediaFieldNames() []string {
	return []string{"alt_text", "duration_ms", "height", "media_key", "non_public_metrics",
		"organic_metrics", "preview_image_url", "promoted_metrics", "public_metrics", "type", "url",
		"variants", "width"}
}

// pollFieldNames are the values of X's poll.fields.
func pollFieldNames() []string {
	return []string{"duration_minutes", "end_datetime", "id", "options", "voting_status"}
}

func tweetExpansionNames() []string {
	return []string{"article.cover_media", "article.media_entities", "attachments.media_keys",
		"attachments.media_source_tweet", "attachments.poll_ids", "author_id", "edit_history_tweet_ids",
		"edit_history_post_ids", "entities.mentions.username", "geo.place_id", "in_reply_to_user_id",
		"referenced_tweets.id", "referenced_tweets.id.author_id", "referenced_posts", "username"}
}

func userExpansionNames() []string {
	return []string{"affiliation", "most_recent_tweet_id", "most_recent_post_id", "pinned_tweet_id", "pinned_post_id"}
}

// view is the parsed field selection of one request.
type view struct {
	tweetFields map[string]bool
	userFields  map[string]bool
	mediaFields map[string]bool
	pollFields  map[string]bool
	expansions  map[string]bool
	// now is the request's time: a poll is open until its end.
	now time.Time
}

// parseList splits a comma-separated parameter and checks every item
// against allowed, answering X's invalid-request body otherwise.
func parseList(param, raw string, allowed []string) (map[string]bool, *reply) {
	out := map[string]bool{}
	if raw == "" {
		return out, nil
	}
	for item := range strings.SplitSeq(raw, ",") {
		item = strings.TrimSpace(item)
		if !slices.Contains(allowed, item) {
			rep := errInvalidParam(param, item, fmt.Sprintf("The `%s` query parameter value [%s] is not one of [%s]", param, item, strings.Join(allowed, ",")))
			return nil, &rep
		}
		out[item] = true
	}
	return out, nil
}

// parseView reads tweet.fields/post.fields, user.fields, media.fields and
// expansions. tweetExp selects the expansion vocabulary (tweet endpoints vs
// user endpoints).
func (c *call) parseView(tweetExp bool) (view, *reply) {
	q := c.r.URL.Query()
	var v view
	var bad *reply
	tf := q.Get("tweet.fields")
	if pf := q.Get("post.fields"); pf != "" {
		if tf != "" {
			tf += ","
		}
		tf += pf
	}
	if v.tweetFields, bad = parseList("tweet.fields", tf, tweetFieldNames()); bad != nil {
		return v, bad
	}
	if v.userFields, bad = parseList("user.fields", q.Get("user.fields"), userFieldNames()); bad != nil {
		return v, bad
	}
	if v.mediaFields, bad = parseList("media.fields", q.Get("media.fields"), mediaFieldNames()); bad != nil {
		return v, bad
	}
	if v.pollFields, bad = parseList("poll.fields", q.Get("poll.fields"), pollFieldNames()); bad != nil {
		return v, bad
	}
	v.now = c.now
	exp := userExpansionNames()
	if tweetExp {
		exp = tweetExpansionNames()
	}
	if v.expansions, bad = parseList("expansions", q.Get("expansions"), exp); bad != nil {
		return v, bad
	}
	return v, nil
}

// maxResults reads max_results within [lo, hi], defaulting to def.
func (c *call) maxResults(lo, hi, def int) (int, *reply) {
	raw := c.r.URL.Query().Get("max_results")
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		rep := errInvalidParam("max_results", raw, fmt.Sprintf("The `max_results` query parameter value [%s] is not between %d and %d", raw, lo, hi))
		return 0, &rep
	}
	return n, nil
}

// idParam validates a numeric id from the path or query.
func idParam(param, v string) *reply {
	if !isNumericID(v) {
		rep := errInvalidParam(param, v, fmt.Sprintf("The `%s` query parameter value [%s] is not valid", param, v))
		return &rep
	}
	return nil
}

// Page tokens are opaque 16-hex-digit strings (the spec requires at least 16
// characters on some endpoints). For timelines they carry the id to continue
// below; for user lists, the offset.
func encodePageToken(v uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v^pageTokenMask)
	return hex.EncodeToString(b[:])
}

// pageTokenMask keeps tokens from looking like ids, so nobody mistakes one
// for the other.
const pageTokenMask = 0x5a17c0de5a17c0de

func decodePageToken(tok string) (uint64, bool) {
	if len(tok) != 16 {
		return 0, false
	}
	b, err := hex.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint64(b) ^ pageTokenMask, true
}

// pageToken reads pagination_token (or next_token, which recent search also
// accepts).
func (c *call) pageToken() (uint64, bool, *reply) {
	q := c.r.URL.Query()
	for _, name := range []string{"pagination_token", "next_token"} {
		raw := q.Get(name)
		if raw == "" {
			continue
		}
		v, okTok := decodePageToken(raw)
		if !okTok {
			rep := errInvalidParam(name, raw, fmt.Sprintf("The `%s` query parameter value [%s] is not a valid token", name, raw))
			return 0, false, &rep
		}
		return v, true, nil
	}
	return 0, false, nil
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// renderTweet builds the data object for t with the requested fields. A
// long post's text is cut to what an ordinary post may hold; its whole
// text is the note_tweet field (note_post in the spec's words), sent only
// when asked for, as X does.
func (s *state) renderTweet(t *Tweet, v view) map[string]any {
	m := map[string]any{
		"id":                     t.ID,
		"text":                   t.Text,
		"edit_history_tweet_ids": slices.Clone(t.chain()),
	}
	f := v.tweetFields
	if isLongPost(t.Text) {
		m["text"] = truncateLongPost(t.Text)
		note := map[string]any{"text": t.Text}
		if ent := entitiesOf(t.Text); len(ent) > 0 {
			note["entities"] = ent
		}
		if f["note_tweet"] {
			m["note_tweet"] = note
		}
		if f["note_post"] {
			m["note_post"] = note
		}
	}
	if f["author_id"] {
		m["author_id"] = t.AuthorID
	}
	if f["created_at"] {
		m["created_at"] = formatTime(t.CreatedAt)
	}
	if f["conversation_id"] {
		m["conversation_id"] = t.ConversationID
	}
	if f["lang"] {
		m["lang"] = t.Lang
	}
	if f["community_id"] && t.CommunityID != "" {
		m["community_id"] = t.CommunityID
	}
	if f["in_reply_to_user_id"] && t.InReplyToUserID != "" {
		m["in_reply_to_user_id"] = t.InReplyToUserID
	}
	if f["possibly_sensitive"] {
		m["possibly_sensitive"] = false
	}
	if f["reply_settings"] {
		m["reply_settings"] = cmp.Or(t.ReplySettings, "everyone")
	}
	if f["source"] && t.Source != "" {
		m["source"] = t.Source
	}
	if f["edit_history_post_ids"] {
		m["edit_history_post_ids"] = slices.Clone(t.chain())
	}
	if f["username"] {
		if u := s.users[t.AuthorID]; u != nil {
			m["username"] = u.Username
		}
	}
	if f["public_metrics"] {
		m["public_metrics"] = s.tweetMetrics(t)
	}
	if f["referenced_tweets"] || f["referenced_posts"] {
		if refs := tweetRefs(t); len(refs) > 0 {
			m["referenced_tweets"] = refs
			if f["referenced_posts"] {
				m["referenced_posts"] = refs
			}
		}
	}
	if f["attachments"] && (len(t.MediaKeys) > 0 || t.Poll != nil) {
		att := map[string]any{}
		if len(t.MediaKeys) > 0 {
			att["media_keys"] = slices.Clone(t.MediaKeys)
		}
		if t.Poll != nil {
			att["poll_ids"] = []string{t.Poll.ID}
		}
		m["attachments"] = att
	}
	if f["entities"] {
		if ent := entitiesOf(t.Text); len(ent) > 0 {
			m["entities"] = ent
		}
	}
	if f["edit_controls"] {
		remaining, eligible, until := s.editControls(t)
		m["edit_controls"] = map[string]any{
			"edits_remaining": remaining, "is_edit_eligible": eligible, "editable_until": formatTime(until),
		}
	}
	return m
}

func tweetRefs(t *Tweet) []map[string]string {
	var refs []map[string]string
	if t.RetweetOf != "" {
		refs = append(refs, map[string]string{"type": "retweeted", "id": t.RetweetOf})
	}
	if t.QuoteOf != "" {
		refs = append(refs, map[string]string{"type": "quoted", "id": t.QuoteOf})
	}
	if t.InReplyToTweetID != "" {
		refs = append(refs, map[string]string{"type": "replied_to", "id": t.InReplyToTweetID})
	}
	return refs
}

// tweetMetrics reports engagement with both X's live names (retweet_count)
// and the OpenAPI document's names (repost_count).
func (s *state) tweetMetrics(t *Tweet) map[string]int64 {
	likes := t.LikeBase + int64(len(s.likers[t.ID]))
	rts := t.RetweetBase + int64(len(s.retweets[t.ID]))
	replies := t.ReplyBase + int64(s.replies[t.ID])
	quotes := t.QuoteBase + int64(s.quotes[t.ID])
	bms := t.BookmarkBase + int64(s.bookmarked[t.ID])
	return map[string]int64{
		"retweet_count":    rts,
		"repost_count":     rts,
		"reply_count":      replies,
		"like_count":       likes,
		"quote_count":      quotes,
		"bookmark_count":   bms,
		"impression_count": t.ImpressionBase + 10*(likes+rts+replies),
	}
}

func (s *state) userMetrics(u *User) map[string]int64 {
	posts := int64(len(s.byAuthor[u.ID]))
	return map[string]int64{
		"followers_count": u.FollowersBase + int64(len(s.followers[u.ID])),
		"following_count": u.FollowingBase + int64(len(s.following[u.ID])),
		"tweet_count":     posts,
		"post_count":      posts,
		"listed_count":    u.ListedCount,
		"like_count":      u.LikeBase + int64(len(s.likesBy[u.ID])),
		"media_count":     0,
	}
}

func (s *state) renderUser(u *User, v view) map[string]any {
	m := map[string]any{"id": u.ID, "name": u.Name, "username": u.Username}
	f := v.userFields
	if f["created_at"] {
		m["created_at"] = formatTime(u.CreatedAt)
	}
	if f["description"] {
		m["description"] = u.Description
	}
	if f["location"] && u.Location != "" {
		m["location"] = u.Location
	}
	if f["url"] {
		m["url"] = u.URL
	}
	if f["profile_image_url"] {
		m["profile_image_url"] = u.ProfileImageURL
	}
	if f["protected"] {
		m["protected"] = u.Protected
	}
	if f["verified"] {
		m["verified"] = u.Verified
	}
	if f["verified_type"] {
		if u.Verified {
			m["verified_type"] = "blue"
		} else {
			m["verified_type"] = "none"
		}
	}
	if f["subscription_type"] {
		m["subscription_type"] = subscriptionOf(u)
	}
	if f["public_metrics"] {
		m["public_metrics"] = s.userMetrics(u)
	}
	if u.PinnedTweetID != "" && s.tweets[u.PinnedTweetID] != nil {
		if f["pinned_tweet_id"] {
			m["pinned_tweet_id"] = u.PinnedTweetID
		}
		if f["pinned_post_id"] {
			m["pinned_post_id"] = u.PinnedTweetID
		}
	}
	if f["most_recent_tweet_id"] || f["most_recent_post_id"] {
		if ids := s.byAuthor[u.ID]; len(ids) > 0 {
			last := ids[len(ids)-1]
			if f["most_recent_tweet_id"] {
				m["most_recent_tweet_id"] = last
			}
			if f["most_recent_post_id"] {
				m["most_recent_post_id"] = last
			}
		}
	}
	return m
}

func (s *state) renderMedia(md *Media, v view) map[string]any {
	m := map[string]any{"media_key": md.Key, "type": mediaKind(md)}
	f := v.mediaFields
	if f["width"] && md.Width > 0 {
		m["width"] = md.Width
	}
	if f["height"] && md.Height > 0 {
		m["height"] = md.Height
	}
	if f["alt_text"] && md.AltText != "" {
		m["alt_text"] = md.AltText
	}
	if f["url"] && mediaKind(md) == "photo" {
		m["url"] = "https://pbs.twimg.com/media/" + md.ID + ".jpg"
	}
	if f["preview_image_url"] && mediaKind(md) != "photo" {
		m["preview_image_url"] = "https://pbs.twimg.com/ext_tw_video_thumb/" + md.ID + "/pu/img/preview.jpg"
	}
	return m
}

func mediaKind(md *Media) string {
	switch {
	case strings.HasPrefix(md.MediaType, "video/"):
		return "video"
	case md.MediaType == "image/gif" && md.Category == "tweet_gif":
		return "animated_gif"
	default:
		return "photo"
	}
}

// includer collects the includes object for a response, without duplicates.
type includer struct {
	s      *state
	v      view
	users  []map[string]any
	tweets []map[string]any
	media  []map[string]any
	polls  []map[string]any
	seenU  map[string]bool
	seenT  map[string]bool
	seenM  map[string]bool
	// Resources returned, for billing.
	userIDs  []string
	tweetIDs []string
}

func newIncluder(s *state, v view) *includer {
	return &includer{s: s, v: v, seenU: map[string]bool{}, seenT: map[string]bool{}, seenM: map[string]bool{}}
}

func (in *includer) user(id string) {
	if id == "" || in.seenU[id] {
		return
	}
	u := in.s.users[id]
	if u == nil {
		return
	}
	in.seenU[id] = true
	in.users = append(in.users, in.s.renderUser(u, in.v))
	in.userIDs = append(in.userIDs, id)
}

// forTweet adds what the requested expansions pull in for t.
func (in *includer) forTweet(t *Tweet) {
	e := in.v.expansions
	if e["author_id"] || e["username"] {
		in.user(t.AuthorID)
	}
	if e["in_reply_to_user_id"] {
		in.user(t.InReplyToUserID)
	}
	if e["entities.mentions.username"] {
		for _, name := range mentionsOf(t.Text) {
			if u := in.s.userByName(name); u != nil {
				in.user(u.ID)
			}
		}
	}
	if e["referenced_tweets.id"] || e["referenced_posts"] || e["referenced_tweets.id.author_id"] {
		for _, ref := range tweetRefs(t) {
			rt := in.s.tweets[ref["id"]]
			if rt == nil || in.seenT[rt.ID] {
				continue
			}
			in.seenT[rt.ID] = true
			in.tweets = append(in.tweets, in.s.renderTweet(rt, in.v))
			in.tweetIDs = append(in.tweetIDs, rt.ID)
			if e["referenced_tweets.id.author_id"] {
				in.user(rt.AuthorID)
			}
		}
	}
	if e["attachments.poll_ids"] && t.Poll != nil {
		in.polls = append(in.polls, renderPoll(t.Poll, in.v))
	}
	if e["attachments.media_keys"] {
		for _, key := range t.MediaKeys {
			if in.seenM[key] {
				continue
			}
			for _, md := range in.s.media {
				if md.Key == key {
					in.seenM[key] = true
					in.media = append(in.media, in.s.renderMedia(md, in.v))
					break
				}
			}
		}
	}
}

// forUser adds what user expansions pull in for u.
func (in *includer) forUser(u *User) {
	e := in.v.expansions
	add := func(id string) {
		t := in.s.tweets[id]
		if t == nil || in.seenT[id] {
			return
		}
		in.seenT[id] = true
		in.tweets = append(in.tweets, in.s.renderTweet(t, in.v))
		in.tweetIDs = append(in.tweetIDs, id)
	}
	if e["pinned_tweet_id"] || e["pinned_post_id"] {
		add(u.PinnedTweetID)
	}
	if e["most_recent_tweet_id"] || e["most_recent_post_id"] {
		if ids := in.s.byAuthor[u.ID]; len(ids) > 0 {
			add(ids[len(ids)-1])
		}
	}
}

func (in *includer) object() map[string]any {
	m := map[string]any{}
	if len(in.users) > 0 {
		m["users"] = in.users
	}
	if len(in.tweets) > 0 {
		// X's live name is "tweets"; the OpenAPI document calls it "posts".
		m["tweets"] = in.tweets
		m["posts"] = in.tweets
	}
	if len(in.media) > 0 {
		m["media"] = in.media
	}
	if len(in.polls) > 0 {
		m["polls"] = in.polls
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// renderPoll is a poll object of includes.polls: id and options always
// (X's default), the other fields when poll.fields names them. Votes are
// those the world's accounts cast (Server.Vote).
func renderPoll(p *Poll, v view) map[string]any {
	opts := make([]map[string]any, len(p.Options))
	for i, o := range p.Options {
		var votes int64
		if i < len(p.Votes) {
			votes = p.Votes[i]
		}
		opts[i] = map[string]any{"position": i + 1, "label": o, "votes": votes}
	}
	m := map[string]any{"id": p.ID, "options": opts}
	if v.pollFields["duration_minutes"] {
		m["duration_minutes"] = p.DurationMinutes
	}
	if v.pollFields["end_datetime"] {
		m["end_datetime"] = formatTime(p.EndsAt)
	}
	if v.pollFields["voting_status"] {
		m["voting_status"] = "open"
		if !v.now.Before(p.EndsAt) {
			m["voting_status"] = "closed"
		}
	}
	return m
}
