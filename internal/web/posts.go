package web

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Post is a post a queued reply or quote answers, as the approvals page
// shows it. Its text came from X: the templates escape it.
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
}

// PostLookup finds posts by id. It returns what it found; ids it could not
// find are absent, and an error says why some are missing.
type PostLookup func(ctx context.Context, ids []string) (map[string]Post, error)

// LookupPosts reads posts from the discovery feed first (which holds the
// score, the author and the text of every post discovery found) and
// fetches the rest through the X client, 100 per request.
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
		for start := 0; start < len(missing); start += 100 {
			page, err := xc.GetTweets(ctx, missing[start:min(start+100, len(missing))])
			if err != nil {
				return out, err
			}
			for _, tw := range page.Data {
				p := Post{ID: tw.ID, Text: tw.Text}
				if !tw.CreatedAt.IsZero() {
					p.CreatedAt = tw.CreatedAt.UTC().Format(time.RFC3339)
				}
				if tw.Author != nil {
					p.AuthorUsername, p.AuthorName, p.Followers = tw.Author.Username, tw.Author.Name, tw.Author.PublicMetrics.FollowersCount
				}
				out[tw.ID] = p
			}
		}
		return out, nil
	}
}

// postCacheTTL is how long a looked-up post is reused. The post's text
// does not change; its author's follower count and the score may, a
// little, which a reviewer does not need to the minute.
const postCacheTTL = 15 * time.Minute

// postCacheMax bounds the cache; past it the cache starts over.
const postCacheMax = 10000

// postCache keeps looked-up posts so that paging through the queue, or the
// event stream adding items, does not ask X again for the same post.
type postCache struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]cachedPost
}

type cachedPost struct {
	p   Post
	at  time.Time
	err string // why the post could not be fetched, cached too
}

func newPostCache(now func() time.Time) *postCache {
	if now == nil {
		now = time.Now
	}
	return &postCache{now: now, m: map[string]cachedPost{}}
}

// postContext is what the page shows for one answered post.
type postContext struct {
	Post  *Post
	Error string
}

// lookup returns the posts of ids, from the cache or through the
// account's lookup (one call for all that are missing).
func (c *postCache) lookup(ctx context.Context, a *Account, ids []string) map[string]postContext {
	out := make(map[string]postContext, len(ids))
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
		if e, ok := c.m[a.Name+"/"+id]; ok && now.Sub(e.at) < postCacheTTL {
			out[id] = e.ctx()
			continue
		}
		missing = append(missing, id)
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out
	}
	if a.Posts == nil {
		for _, id := range missing {
			out[id] = postContext{Error: "posts cannot be looked up here"}
		}
		return out
	}
	found, err := a.Posts(ctx, missing)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m)+len(missing) > postCacheMax {
		c.m = map[string]cachedPost{}
	}
	for _, id := range missing {
		e := cachedPost{at: now}
		if p, ok := found[id]; ok {
			e.p = p
		} else if err != nil {
			// A failed lookup is not cached: the next page asks again.
			out[id] = postContext{Error: fmt.Sprintf("could not fetch the post: %s", apperr.As(err).Message)}
			continue
		} else {
			e.err = "X did not return this post (deleted, or not visible to this account)"
		}
		c.m[a.Name+"/"+id] = e
		out[id] = e.ctx()
	}
	return out
}

func (e cachedPost) ctx() postContext {
	if e.err != "" {
		return postContext{Error: e.err}
	}
	p := e.p
	return postContext{Post: &p}
}
