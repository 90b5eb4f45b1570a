package xsim

import (
	"testing"
)

// TestReplySettingsEnforced: a reply the parent's reply_settings do not
// allow gets X's 403, and nothing is posted; the users it allows may reply.
func TestReplySettingsEnforced(t *testing.T) {
	var author, other string
	var parents = map[string]string{}
	e := newEnv(t, func(o *Options) {
		w := o.World
		for i := range w.Tweets {
			tw := &w.Tweets[i]
			if tw.AuthorID == w.DemoUserID || tw.RetweetOf != "" || tw.InReplyToTweetID != "" {
				continue
			}
			if author == "" {
				author = tw.AuthorID
			}
			if tw.AuthorID != author {
				continue
			}
			for _, rs := range []string{"following", "mentionedUsers", "verified", "subscribers"} {
				if _, ok := parents[rs]; !ok {
					tw.ReplySettings, parents[rs] = rs, tw.ID
					break
				}
			}
		}
		// The author follows nobody but one other user, never the demo user.
		var kept []Edge
		for _, f := range w.Follows {
			if f.From != author {
				kept = append(kept, f)
			}
		}
		for _, u := range w.Users {
			if u.ID != author && u.ID != w.DemoUserID {
				other = u.ID
				break
			}
		}
		w.Follows = append(kept, Edge{From: author, To: other})
	})
	if len(parents) != 4 {
		t.Fatalf("the demo world has too few posts by one author: %v", parents)
	}
	reply := func(parent, text string) resp {
		return e.do("POST", "/2/tweets", map[string]any{"text": text, "reply": map[string]any{"in_reply_to_tweet_id": parent}})
	}
	for rs, parent := range parents {
		before := e.counter(CountTweetsCreated)
		r := reply(parent, "may I reply? "+rs)
		wantProblem(t, r, 403, typeBlank)
		if e.counter(CountTweetsCreated) != before {
			t.Fatalf("%s: a refused reply was posted", rs)
		}
	}
	// Once the author follows the demo user, "following" lets it reply.
	e.s.mu.Lock()
	e.s.st.follow(Edge{From: author, To: e.me})
	e.s.mu.Unlock()
	wantStatus(t, reply(parents["following"], "now I may"), 201)
}
