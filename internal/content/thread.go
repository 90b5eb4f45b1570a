package content

import (
	"context"
	"strings"

	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// thread runs one thread generation with the same discipline as single:
// one regeneration for a wrong post count, an overlong post or a banned
// phrase; then overlong posts are trimmed.
func (g *Generator) thread(ctx context.Context, op, user, audience string) ([]string, error) {
	s := spec{op: op, system: g.threadSystemPrompt(audience), user: user, maxTokens: 2000, temperature: 0.7}
	raw1, err := g.ask(ctx, s, []llm.Message{{Role: llm.RoleUser, Content: user}})
	if err != nil {
		return nil, err
	}
	p1 := parseThread(raw1)
	v1 := g.checkThread(p1)
	if v1.ok() {
		return p1, nil
	}
	candidates := [][]string{p1}
	raw2, err2 := g.ask(ctx, s, retryMessages(user, raw1, g.correction(v1, true)))
	if err2 == nil {
		candidates = [][]string{parseThread(raw2), p1}
	}
	var last verdict
	for i, parts := range candidates {
		fitted := make([]string, len(parts))
		for j, p := range parts {
			if tweettext.WeightedLength(p) > tweettext.MaxWeightedLength {
				p = tweettext.FitWeighted(p, tweettext.MaxWeightedLength)
			}
			fitted[j] = p
		}
		v := g.checkThread(fitted)
		if v.ok() {
			return fitted, nil
		}
		if i == 0 {
			last = v
		}
	}
	if err2 != nil && !last.blocking() {
		return nil, err2
	}
	return nil, g.rejection(op, last, true)
}

// checkThread finds the first problem in a parsed thread.
func (g *Generator) checkThread(parts []string) verdict {
	var v verdict
	if len(parts) == 0 {
		v.empty = true
		return v
	}
	if len(parts) < MinThreadTweets || len(parts) > MaxThreadTweets {
		v.count = len(parts)
	}
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			v.empty = true
			v.tweetIndex = i
			return v
		}
		if n := tweettext.WeightedLength(p); n > tweettext.MaxWeightedLength && v.weighted == 0 {
			v.weighted, v.tweetIndex = n, i
		}
		if v.banned == "" {
			if b := g.findBanned(p); b != "" {
				v.banned, v.tweetIndex = b, i
			}
		}
	}
	return v
}
