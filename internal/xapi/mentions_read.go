package xapi

import (
	"context"
	"encoding/json"
	"strings"
)

// Mention is a post that @mentions the account, as far as a stop in it
// matters: who wrote it and what it says.
type Mention struct {
	ID, AuthorID, Text string
}

// MentionRecorder is told of the posts a universal read of the account's
// own mentions returned, so that a "stop" in one is heard however the
// agent read it.
type MentionRecorder interface {
	RecordMentions(ctx context.Context, ms []Mention) error
}

// mentionsRoute reports whether path is GET /2/users/{id}/mentions, and
// the id.
func mentionsRoute(path string) (string, bool) {
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	if len(segs) == 5 && segs[1] == "2" && segs[2] == "users" && isXID(segs[3]) && segs[4] == "mentions" {
		return segs[3], true
	}
	return "", false
}

// ParseMentions reads the posts out of the body of X's answer to a
// mentions read. The body is whatever the server sent: a post without a
// numeric id and author is left out rather than guessed at, and a body
// that is not such a list is an error.
func ParseMentions(body []byte) ([]Mention, error) {
	var env struct {
		Data []struct {
			ID       json.RawMessage `json:"id"`
			AuthorID json.RawMessage `json:"author_id"`
			Text     json.RawMessage `json:"text"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, err
	}
	out := make([]Mention, 0, len(env.Data))
	for _, d := range env.Data {
		var m Mention
		if json.Unmarshal(d.ID, &m.ID) != nil || json.Unmarshal(d.AuthorID, &m.AuthorID) != nil || json.Unmarshal(d.Text, &m.Text) != nil ||
			!isXID(m.ID) || !isXID(m.AuthorID) {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// noteMentions hands the recorder the mentions of the account a read
// returned; another user's mentions are not the account's to act on. A
// failure is logged and the read still answers.
func (c *Client) noteMentions(ctx context.Context, user string, body []byte) {
	me, err := c.MyUserID(ctx)
	if err != nil || user != me {
		return
	}
	ms, err := ParseMentions(body)
	if err != nil || len(ms) == 0 {
		return
	}
	if err := c.mentions.RecordMentions(ctx, ms); err != nil {
		c.log.Warn("the mentions read are not checked for a stop", "err", err)
	}
}
