package xrequest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Effect kinds returned by Classify.
const (
	KindTweetCreate = "tweet_create"
	KindTweetDelete = "tweet_delete"
	KindLike        = "like"
	KindUnlike      = "unlike"
	KindFollow      = "follow"
	KindUnfollow    = "unfollow"
	KindRetweet     = "retweet"
	KindUnretweet   = "unretweet"
	KindBookmark    = "bookmark"
	KindUnbookmark  = "unbookmark"
	KindMediaUpload = "media_upload"
	KindRead        = "read"
	KindOther       = "other"
)

// Effect is what a universal request does on X, as far as the method and
// path tell. UserID is the acting account named in the path
// (/2/users/{id}/...); TweetID is the tweet the path names; TargetUserID is
// the other account for unfollow. Ids that travel in the body or query
// (like's tweet_id, follow's target_user_id) are filled by ClassifyChecked.
type Effect struct {
	Kind         string
	TweetID      string
	UserID       string
	TargetUserID string
}

// Mutates reports whether the effect changes state on X. Only GET is a
// read; an unrecognised write is still a write.
func (e Effect) Mutates() bool { return e.Kind != KindRead }

// Classify recognises the X endpoints the gateway's hard rules and
// rollback guidance care about, in both the v2 and the legacy v1.1 forms.
//
// It errs towards recognising: the method is upper-cased, fixed path
// segments match in any case, empty segments and a trailing slash are
// ignored, and ids are not required to be numeric. A delete spelled oddly
// must still be seen as a delete so the always-approve-deletes rule holds;
// the path itself is validated by Check, not here. A path that passes
// Check is classified in its canonical (decoded) form.
func Classify(method, path string) Effect {
	m := asciiLower(method)
	if m == "get" {
		return Effect{Kind: KindRead}
	}
	if p, err := checkPath(path); err == nil {
		path = p
	}
	var segs []string
	for s := range strings.SplitSeq(path, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	switch m {
	case "post":
		return classifyPost(segs)
	case "delete":
		return classifyDelete(segs)
	}
	return Effect{Kind: KindOther}
}

// match reports whether segs has the given shape; "*" matches any one
// segment and fixed segments compare ignoring ASCII case.
func match(segs []string, shape ...string) bool {
	if len(segs) != len(shape) {
		return false
	}
	for i, want := range shape {
		if want != "*" && !strings.EqualFold(segs[i], want) {
			return false
		}
	}
	return true
}

func classifyPost(s []string) Effect {
	switch {
	case match(s, "2", "tweets"):
		return Effect{Kind: KindTweetCreate}
	case match(s, "2", "users", "*", "likes"):
		return Effect{Kind: KindLike, UserID: s[2]}
	case match(s, "2", "users", "*", "following"):
		return Effect{Kind: KindFollow, UserID: s[2]}
	case match(s, "2", "users", "*", "retweets"):
		return Effect{Kind: KindRetweet, UserID: s[2]}
	case match(s, "2", "users", "*", "bookmarks"):
		return Effect{Kind: KindBookmark, UserID: s[2]}
	case isMediaUpload(s):
		return Effect{Kind: KindMediaUpload}

	// Legacy v1.1 forms, still reachable on api.x.com and the upload hosts.
	case match(s, "1.1", "statuses", "update.json"):
		return Effect{Kind: KindTweetCreate}
	case match(s, "1.1", "statuses", "destroy", "*"):
		return Effect{Kind: KindTweetDelete, TweetID: jsonID(s[3])}
	case match(s, "1.1", "statuses", "retweet", "*"):
		return Effect{Kind: KindRetweet, TweetID: jsonID(s[3])}
	case match(s, "1.1", "statuses", "unretweet", "*"):
		return Effect{Kind: KindUnretweet, TweetID: jsonID(s[3])}
	case match(s, "1.1", "favorites", "create.json"):
		return Effect{Kind: KindLike}
	case match(s, "1.1", "favorites", "destroy.json"):
		return Effect{Kind: KindUnlike}
	case match(s, "1.1", "friendships", "create.json"):
		return Effect{Kind: KindFollow}
	case match(s, "1.1", "friendships", "destroy.json"):
		return Effect{Kind: KindUnfollow}
	}
	return Effect{Kind: KindOther}
}

func classifyDelete(s []string) Effect {
	switch {
	case match(s, "2", "tweets", "*"):
		return Effect{Kind: KindTweetDelete, TweetID: s[2]}
	case match(s, "2", "users", "*", "likes", "*"):
		return Effect{Kind: KindUnlike, UserID: s[2], TweetID: s[4]}
	case match(s, "2", "users", "*", "following", "*"):
		return Effect{Kind: KindUnfollow, UserID: s[2], TargetUserID: s[4]}
	case match(s, "2", "users", "*", "retweets", "*"):
		return Effect{Kind: KindUnretweet, UserID: s[2], TweetID: s[4]}
	case match(s, "2", "users", "*", "bookmarks", "*"):
		return Effect{Kind: KindUnbookmark, UserID: s[2], TweetID: s[4]}
	}
	return Effect{Kind: KindOther}
}

// isMediaUpload matches the v2 simple and chunked upload endpoints (also
// the DM media variant) and the v1.1 upload.
func isMediaUpload(s []string) bool {
	switch {
	case match(s, "2", "media", "upload"),
		match(s, "2", "media", "upload", "initialize"),
		match(s, "2", "media", "upload", "*", "append"),
		match(s, "2", "media", "upload", "*", "finalize"),
		match(s, "2", "chat", "media", "upload", "initialize"),
		match(s, "2", "chat", "media", "upload", "*", "append"),
		match(s, "2", "chat", "media", "upload", "*", "finalize"),
		match(s, "1.1", "media", "upload.json"):
		return true
	}
	return false
}

// jsonID strips the ".json" suffix v1.1 puts after an id segment.
func jsonID(seg string) string {
	if len(seg) > len(".json") && strings.EqualFold(seg[len(seg)-len(".json"):], ".json") {
		return seg[:len(seg)-len(".json")]
	}
	return seg
}

// ClassifyChecked classifies c like Classify and also fills the ids that
// X takes outside the path: tweet_id in the body of a v2 like, retweet or
// bookmark, target_user_id in the body of a v2 follow, and the id / user_id
// query parameters of the v1.1 favorites and friendships calls. Rollback
// guidance needs these (undoing a like needs the tweet). An id that is
// missing or not a string or number is left empty.
func ClassifyChecked(c *Checked) Effect {
	if c == nil {
		return Effect{Kind: KindOther}
	}
	e := Classify(c.Method, c.Path)
	v11 := strings.HasPrefix(c.Path, "/1.1/")
	switch e.Kind {
	case KindLike, KindRetweet, KindBookmark:
		if !v11 {
			e.TweetID = bodyString(c.Body, "tweet_id")
		}
	case KindFollow:
		if !v11 {
			e.TargetUserID = bodyString(c.Body, "target_user_id")
		}
	}
	if v11 {
		switch e.Kind {
		case KindLike, KindUnlike:
			e.TweetID = c.Query.Get("id")
		case KindFollow, KindUnfollow:
			e.TargetUserID = c.Query.Get("user_id")
		}
	}
	return e
}

// bodyString returns the top-level field key of a JSON object body as a
// string, accepting a JSON string or number.
func bodyString(body []byte, key string) string {
	if len(body) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return ""
	}
	switch v := obj[key].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}

// Equivalent names the typed tool that does on X what a universal request
// with this effect does, and that tool's policy category, so the request
// gets the same policy as the typed tool. Tool is empty for a write no typed
// tool covers (the caller applies the conservative default) and for reads.
func (e Effect) Equivalent() (tool, category string) {
	switch e.Kind {
	case KindTweetCreate:
		return "x_post_tweet", "write"
	case KindTweetDelete:
		return "x_delete_tweet", "delete"
	case KindLike:
		return "x_like_tweet", "engage"
	case KindUnlike:
		return "x_unlike_tweet", "engage"
	case KindFollow:
		return "x_follow_user", "engage"
	case KindUnfollow:
		return "x_unfollow_user", "engage"
	case KindRetweet:
		return "x_retweet", "engage"
	case KindUnretweet:
		return "x_unretweet", "engage"
	case KindBookmark:
		return "x_bookmark_tweet", "engage"
	case KindUnbookmark:
		return "x_unbookmark_tweet", "engage"
	case KindMediaUpload:
		return "x_upload_media", "media"
	}
	return "", ""
}
