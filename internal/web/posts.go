package web

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Post is a post a queued item acts on (the one a reply answers, a delete
// removes, a like likes), as the approvals page shows it. Its text came
// from X: the templates escape it.
type Post struct {
	ID             string
	Text           string
	AuthorUsername string
	AuthorName     string
	Followers      int64
	CreatedAt      string
	// Score is the discovery score; Scored is false when discovery never
	// saw the post (an agent found it some other way).
	Score  float64
	Scored bool
	// Poll is the post's poll as X counts it now; nil when the post has
	// none, or when it came from the discovery feed, which keeps no polls.
	Poll *xapi.TweetPoll
}

// PostLookup finds posts by id. It returns what it found; ids it could not
// find are absent, and an error says why some are missing.
type PostLookup func(ctx context.Context, ids []string) (map[string]Post, error)

// UserLookup finds accounts by id, as PostLookup finds posts.
type UserLookup func(ctx context.Context, ids []string) (map[string]describe.User, error)

// LookupPosts reads posts from the discovery feed first (which holds the
// score, the author and the text of every post discovery found) and
// fetches the rest from X, as `tuitbot approve show` does.
func LookupPosts(disc *discovery.Service, x func() (*xapi.Client, error)) PostLookup {
	return func(ctx context.Context, ids []string) (map[string]Post, error) {
		out := make(map[string]Post, len(ids))
		var missing []string
		for _, id := range ids {
			if disc != nil {
				c, err := disc.Get(ctx, id)
				if err == nil {
					out[id] = Post{ID: id, Text: c.Text, AuthorUsername: c.AuthorUsername, Followers: c.AuthorFollowers,
						CreatedAt: c.CreatedAt, Score: c.Score, Scored: true}
					continue
				}
				if apperr.CodeOf(err) != apperr.NotFound {
					return out, err
				}
			}
			missing = append(missing, id)
		}
		if len(missing) == 0 || x == nil {
			return out, nil
		}
		xc, err := x()
		if err != nil {
			return out, err
		}
		found, err := describe.Posts(ctx, xc, missing)
		for id, p := range found {
			v := Post{ID: id, Text: p.Text, AuthorUsername: p.AuthorUsername, AuthorName: p.AuthorName, Followers: p.AuthorFollowers, Poll: p.Poll}
			if !p.CreatedAt.IsZero() {
				v.CreatedAt = store.FormatTime(p.CreatedAt)
			}
			out[id] = v
		}
		return out, err
	}
}

// LookupUsers reads accounts from X, as `tuitbot approve show` does.
func LookupUsers(x func() (*xapi.Client, error)) UserLookup {
	return func(ctx context.Context, ids []string) (map[string]describe.User, error) {
		xc, err := x()
		if err != nil {
			return nil, err
		}
		return describe.Users(ctx, xc, ids)
	}
}

// lookupTTL is how long a looked-up post or account is reused. A post's
// text does not change; follower counts and scores may, a little, which a
// reviewer does not need to the minute.
const lookupTTL = 15 * time.Minute

// lookupMax bounds a cache; past it the cache starts over.
const lookupMax = 10000

// lookupCache keeps looked-up posts (or accounts) so that paging through
// the queue, or the event stream adding items, does not ask X again for
// the same one.
type lookupCache[T any] struct {
	now func() time.Time
	// what names the kind in messages ("post", "account").
	what string
	mu   sync.Mutex
	m    map[string]cached[T]
}

type cached[T any] struct {
	v   T
	at  time.Time
	err string // why it could not be fetched, cached too
}

func newLookupCache[T any](now func() time.Time, what string) *lookupCache[T] {
	if now == nil {
		now = time.Now
	}
	return &lookupCache[T]{now: now, what: what, m: map[string]cached[T]{}}
}

// found is one looked-up post or account, or why there is none.
type found[T any] struct {
	V     *T
	Error string
}

// lookup returns the entries of ids for account acct, from the cache or
// through fetch (one call for all that are missing; nil when the account
// cannot look them up).
func (c *lookupCache[T]) lookup(ctx context.Context, acct string, ids []string, fetch func(context.Context, []string) (map[string]T, error)) map[string]found[T] {
	out := make(map[string]found[T], len(ids))
	if len(ids) == 0 {
		return out
	}
	now := c.now()
	var missing []string
	seen := map[string]bool{}
	c.mu.Lock()
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if e, ok := c.m[acct+"/"+id]; ok && now.Sub(e.at) < lookupTTL {
			out[id] = e.found()
			continue
		}
		missing = append(missing, id)
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out
	}
	if fetch == nil {
		for _, id := range missing {
			out[id] = found[T]{Error: c.what + "s cannot be looked up here"}
		}
		return out
	}
	got, err := fetch(ctx, missing)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m)+len(missing) > lookupMax {
		c.m = map[string]cached[T]{}
	}
	for _, id := range missing {
		e := cached[T]{at: now}
		if v, ok := got[id]; ok {
			e.v = v
		} else if err != nil {
			// A failed lookup is not cached: the next page asks again.
			out[id] = found[T]{Error: fmt.Sprintf("could not fetch the %s: %s", c.what, apperr.As(err).Message)}
			continue
		} else {
			e.err = "X did not return this " + c.what + " (deleted, or not visible to this account)"
		}
		c.m[acct+"/"+id] = e
		out[id] = e.found()
	}
	return out
}

func (e cached[T]) found() found[T] {
	if e.err != "" {
		return found[T]{Error: e.err}
	}
	v := e.v
	return found[T]{V: &v}
}
