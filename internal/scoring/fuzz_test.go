package scoring

import (
	"math"
	"testing"
	"time"
)

// FuzzScore feeds tweet text and keywords (both untrusted) through the
// matcher and checks the score stays within its bounds.
func FuzzScore(f *testing.F) {
	f.Add("Loving golang today", "golang", int64(550), int64(6), int64(5), int64(-30))
	f.Add("東京都に行く #go", "東京", int64(0), int64(-1), int64(99), int64(90))
	f.Add("cafe\u0301 APIs", "café", int64(1<<62), int64(1<<62), int64(1<<62), int64(1<<40))
	f.Add("\xff\xfe go go", "\xc3", int64(10), int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, text, kw string, followers, likes, replies, ageMinutes int64) {
		s := New([]string{kw, "rust", "static typing"}, DefaultWeights(), fixedClock)
		in := Input{
			Text: text, AuthorFollowers: followers, Likes: likes, Replies: replies,
			CreatedAt: now.Add(-time.Duration(ageMinutes%100000) * time.Minute),
		}
		b := s.Score(in)
		if math.IsNaN(b.Total) || b.Total < 0 || b.Total > 100 {
			t.Fatalf("Total %v out of bounds", b.Total)
		}
		w := DefaultWeights()
		if b.KeywordRelevance < 0 || b.KeywordRelevance > w.Keyword ||
			b.Follower < 0 || b.Follower > w.Follower ||
			b.Recency < 0 || b.Recency > w.Recency ||
			b.Engagement < 0 || b.Engagement > w.Engagement ||
			b.ReplyCount < 0 || b.ReplyCount > w.ReplyCount {
			t.Fatalf("signal out of bounds: %+v", b)
		}
		if len(b.MatchedKeywords) > 3 {
			t.Fatalf("more matches than keywords: %q", b.MatchedKeywords)
		}
	})
}
