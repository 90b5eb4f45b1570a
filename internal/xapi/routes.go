package xapi

import (
	"strings"
)

// retryClass says what the client may do when an attempt fails.
type retryClass int

const (
	// classSafe requests can be repeated without a second effect: reads, PUT,
	// DELETE and the POSTs X treats as idempotent (like, follow, retweet,
	// bookmark, media append/finalize/metadata).
	classSafe retryClass = iota
	// classCreate requests create something on every success (a post, an
	// upload session, any raw POST); they are repeated only when X provably
	// did not receive them.
	classCreate
)

// routeTemplates are the X endpoints the client knows by name. The template
// is the ledger and rate-limit key; placeholders match one path segment.
// Order matters only where templates overlap: literal segments are listed
// before placeholders at the same depth.
var routeTemplates = splitTemplates(

	"/2/tweets",
	"/2/tweets/search/recent",
	"/2/tweets/search/all",
	"/2/tweets/counts/recent",
	"/2/tweets/counts/all",
	"/2/tweets/:id",
	"/2/tweets/:id/liking_users",
	"/2/tweets/:id/retweeted_by",
	"/2/tweets/:id/quote_tweets",
	"/2/tweets/:id/hidden",
	"/2/users",
	"/2/users/me",
	"/2/users/search",
	"/2/users/by",
	"/2/users/by/username/:username",
	"/2/users/:id",
	"/2/users/:id/mentions",
	"/2/users/:id/tweets",
	"/2/users/:id/timelines/reverse_chronological",
	"/2/users/:id/followers",
	"/2/users/:id/following",
	"/2/users/:id/following/:target_user_id",
	"/2/users/:id/liked_tweets",
	"/2/users/:id/likes",
	"/2/users/:id/likes/:tweet_id",
	"/2/users/:id/retweets",
	"/2/users/:id/retweets/:source_tweet_id",
	"/2/users/:id/bookmarks",
	"/2/users/:id/bookmarks/:tweet_id",
	"/2/users/:id/blocking",
	"/2/users/:id/muting",
	"/2/users/:id/muting/:target_user_id",
	"/2/media/upload",
	"/2/media/upload/initialize",
	"/2/media/upload/:id/append",
	"/2/media/upload/:id/finalize",
	"/2/media/metadata",
	"/2/usage/tweets",
)

// routeTemplate is a template split into segments once, at start-up.
type routeTemplate struct {
	tpl  string
	segs []string
}

func splitTemplates(tpls ...string) []routeTemplate {
	out := make([]routeTemplate, len(tpls))
	for i, t := range tpls {
		out[i] = routeTemplate{tpl: t, segs: strings.Split(t, "/")}
	}
	return out
}

// pathTemplate returns the template of a concrete path. Unknown paths keep
// their literal segments except all-digit ones, which become ":id", so that
// per-id paths never grow the rate-limit table without bound.
func pathTemplate(path string) string {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	path = strings.TrimRight(path, "/")
	if path == "" {
		return "/"
	}
	segs := strings.Split(path, "/")
	for _, rt := range routeTemplates {
		if matchTemplate(rt.segs, segs) {
			return rt.tpl
		}
	}
	for i, s := range segs {
		// Segment 1 is the API version ("2", "1.1") and stays literal.
		if i > 1 && isDigits(s) {
			segs[i] = ":id"
		}
	}
	return strings.Join(segs, "/")
}

func matchTemplate(ts, segs []string) bool {
	if len(ts) != len(segs) {
		return false
	}
	for i, t := range ts {
		if strings.HasPrefix(t, ":") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if t != segs[i] {
			return false
		}
	}
	return true
}

// endpointKey is the ledger/rate-limit key: "METHOD /template".
func endpointKey(method, path string) string {
	return strings.ToUpper(method) + " " + pathTemplate(path)
}

// classFor returns how a typed request may be retried. Raw POSTs do not use
// this: every raw POST is classCreate.
func classFor(method, tpl string) retryClass {
	switch strings.ToUpper(method) {
	case "GET", "HEAD", "PUT", "DELETE":
		return classSafe
	case "POST":
		switch tpl {
		case "/2/users/:id/likes", "/2/users/:id/following", "/2/users/:id/retweets",
			"/2/users/:id/bookmarks", "/2/media/upload/:id/append",
			"/2/media/upload/:id/finalize", "/2/media/metadata":
			return classSafe
		}
	}
	return classCreate
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
