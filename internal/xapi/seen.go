package xapi

import (
	"strings"
	"sync"
)

// maxSeenPosts bounds the posts a client remembers; past it the memory
// starts over, which costs a read, never a wrong answer.
const maxSeenPosts = 8192

// PostFacts is what decides whether a post summoned an account: its
// author, the usernames it @mentions and the posts it quotes.
type PostFacts struct {
	AuthorID string
	// InReplyToUserID is the author of the post it replies to.
	InReplyToUserID string
	Mentions        []string
	Quotes          []string
}

// seenPosts remembers the facts of the posts this client read with their
// author, entities and references (mentions, searches, timelines, single
// posts), so that whether a reply's target summoned the account is known
// without reading it again.
type seenPosts struct {
	mu    sync.Mutex
	posts map[string]PostFacts
}

// note remembers tweets read with query, when query asked for everything
// the facts need.
func (s *seenPosts) note(query string, tweets []Tweet) {
	if !strings.Contains(query, "author_id") || !strings.Contains(query, "entities") || !strings.Contains(query, "referenced_tweets") ||
		!strings.Contains(query, "in_reply_to_user_id") {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tweets {
		if t.ID == "" || t.AuthorID == "" {
			continue
		}
		if s.posts == nil || len(s.posts) >= maxSeenPosts {
			s.posts = map[string]PostFacts{}
		}
		f := PostFacts{AuthorID: t.AuthorID, InReplyToUserID: t.InReplyToUserID}
		if t.Entities != nil {
			for _, m := range t.Entities.Mentions {
				f.Mentions = append(f.Mentions, m.Username)
			}
		}
		for _, r := range t.ReferencedTweets {
			if r.Type == "quoted" {
				f.Quotes = append(f.Quotes, r.ID)
			}
		}
		s.posts[t.ID] = f
	}
}

// KnownPost returns the facts of post id when this client has read it.
func (c *Client) KnownPost(id string) (PostFacts, bool) {
	c.seen.mu.Lock()
	defer c.seen.mu.Unlock()
	f, ok := c.seen.posts[id]
	return f, ok
}

// ownPost reports whether post id is, as far as this client knows, the
// authenticated user's: one it read with its author, or one it made.
func (c *Client) ownPost(id string) bool {
	c.meMu.Lock()
	me := c.meID
	c.meMu.Unlock()
	f, ok := c.KnownPost(id)
	return ok && me != "" && f.AuthorID == me
}

// made remembers a post the client just created as the authenticated
// user's.
func (c *Client) made(id string) {
	c.meMu.Lock()
	me := c.meID
	c.meMu.Unlock()
	if id == "" || me == "" {
		return
	}
	c.seen.mu.Lock()
	defer c.seen.mu.Unlock()
	if c.seen.posts == nil || len(c.seen.posts) >= maxSeenPosts {
		c.seen.posts = map[string]PostFacts{}
	}
	c.seen.posts[id] = PostFacts{AuthorID: me}
}
