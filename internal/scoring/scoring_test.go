package scoring

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return now }

// only returns weights with a single signal at 10 points, so a breakdown
// field is 10 × that signal's fraction.
func only(field string) Weights {
	var w Weights
	switch field {
	case "keyword":
		w.Keyword = 10
	case "follower":
		w.Follower = 10
	case "recency":
		w.Recency = 10
	case "engagement":
		w.Engagement = 10
	case "reply":
		w.ReplyCount = 10
	case "content":
		w.ContentType = 10
	}
	return w
}

func approx(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestDefaultWeightsSumTo100(t *testing.T) {
	w := DefaultWeights()
	if got := w.Sum(); got != 100 {
		t.Fatalf("DefaultWeights sum to %v, want 100", got)
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("DefaultWeights invalid: %v", err)
	}
	for _, f := range w.fields() {
		if f.v <= 0 {
			t.Errorf("default weight %s = %v, want > 0", f.name, f.v)
		}
	}
}

func TestWeightsValidate(t *testing.T) {
	d := DefaultWeights()
	neg := d
	neg.Recency = -1
	nan := d
	nan.Engagement = math.NaN()
	inf := d
	inf.Keyword = math.Inf(1)
	tests := []struct {
		name      string
		w         Weights
		wantField string
	}{
		{"default", d, ""},
		{"single non-zero", Weights{ContentType: 3}, ""},
		{"negative", neg, "recency"},
		{"nan", nan, "engagement"},
		{"inf", inf, "keyword"},
		{"all zero", Weights{}, "all be zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.w.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var ae *apperr.Error
			if !errors.As(err, &ae) || ae.Code != apperr.ConfigError {
				t.Fatalf("Validate = %v, want config_error", err)
			}
			if !strings.Contains(ae.Message, tt.wantField) {
				t.Errorf("message %q does not name %q", ae.Message, tt.wantField)
			}
		})
	}
}

func TestKeywordSignal(t *testing.T) {
	tests := []struct {
		name     string
		keywords []string
		text     string
		want     float64 // points out of 10
		matched  []string
	}{
		// One single-word match is worth 1 of the saturation 2: 10 × 1/2 = 5.
		{"one word", []string{"golang"}, "Loving Golang today", 5, []string{"golang"}},
		// Two words: 2/2 = 1 → 10.
		{"two words", []string{"rust", "golang"}, "golang vs rust", 10, []string{"rust", "golang"}},
		// A phrase is worth 2: 2/2 → 10.
		{"phrase", []string{"static typing"}, "I like   Static\nTyping a lot", 10, []string{"static typing"}},
		// Three words: min(3/2, 1) → 10, capped.
		{"capped", []string{"a1", "b2", "c3"}, "a1 b2 c3", 10, []string{"a1", "b2", "c3"}},
		{"no keywords configured", nil, "anything", 0, nil},
		{"no match", []string{"golang"}, "python news", 0, nil},
		// "go" must not match inside "good".
		{"word boundary", []string{"go"}, "good morning", 0, nil},
		{"plural counts", []string{"api"}, "new APIs shipped", 5, []string{"api"}},
		{"hashtag counts", []string{"golang"}, "#golang rocks", 5, []string{"golang"}},
		{"keyword with hash sign", []string{"#go"}, "try #go now", 5, []string{"#go"}},
		{"cjk substring", []string{"東京"}, "東京都に行く", 5, []string{"東京"}},
		{"nfc and case", []string{"CAFÉ"}, "cafe\u0301 time", 5, []string{"CAFÉ"}},
		// Duplicates and blanks are dropped: still one match worth 1 → 5.
		{"duplicates ignored", []string{"Go", " go ", "", "  "}, "go go go", 5, []string{"Go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(tt.keywords, only("keyword"), fixedClock).Score(Input{Text: tt.text})
			approx(t, "KeywordRelevance", b.KeywordRelevance, tt.want)
			if !slices.Equal(b.MatchedKeywords, tt.matched) {
				t.Errorf("MatchedKeywords = %q, want %q", b.MatchedKeywords, tt.matched)
			}
		})
	}
}

func TestKeywordNoDilution(t *testing.T) {
	in := Input{Text: "Our golang service just shipped", AuthorFollowers: 500, Likes: 3,
		CreatedAt: now.Add(-20 * time.Minute)}
	base := New([]string{"golang"}, DefaultWeights(), fixedClock).Score(in)
	unrelated := []string{"golang", "kubernetes", "terraform", "haskell", "erlang", "cobol",
		"fortran", "elixir", "ocaml", "scala", "kotlin", "swift", "dart", "lua"}
	diluted := New(unrelated, DefaultWeights(), fixedClock).Score(in)
	if diluted.KeywordRelevance != base.KeywordRelevance || diluted.Total != base.Total {
		t.Errorf("adding unrelated keywords changed the score: %v/%v -> %v/%v",
			base.KeywordRelevance, base.Total, diluted.KeywordRelevance, diluted.Total)
	}
	if base.KeywordRelevance == 0 {
		t.Fatal("the tweet should match")
	}
}

func TestFollowerSignal(t *testing.T) {
	tests := []struct {
		followers int64
		want      float64 // points out of 10
	}{
		{-5, 0},
		{0, 0},
		{50, 2.5},     // 50/200 = 0.25
		{99, 4.95},    // 99/200 = 0.495
		{100, 5},      // 0.5 + 0/1800
		{550, 7.5},    // 0.5 + 450/1800 = 0.75
		{1000, 10},    // plateau
		{10000, 10},   // plateau end
		{55000, 6.25}, // 1 − 0.75·45000/90000 = 0.625
		{100000, 2.5}, // 1 − 0.75 = 0.25
		{5000000, 2.5},
	}
	for _, tt := range tests {
		b := New(nil, only("follower"), fixedClock).Score(Input{AuthorFollowers: tt.followers})
		approx(t, "Follower", b.Follower, tt.want)
	}
}

func TestRecencySignal(t *testing.T) {
	tests := []struct {
		name    string
		created time.Time
		want    float64 // points out of 10
	}{
		{"missing timestamp", time.Time{}, 0},
		{"just now", now, 10},
		{"slightly in the future (skew)", now.Add(2 * time.Minute), 10},
		{"far future", now.Add(time.Hour), 0},
		{"3 minutes", now.Add(-3 * time.Minute), 10},
		// 5..30 min: 1 − 0.2·(age−5)/25; at 15 min 1 − 0.2·10/25 = 0.92
		{"15 minutes", now.Add(-15 * time.Minute), 9.2},
		// 30..60 min: 0.8 − 0.3·(age−30)/30; at 45 min 0.65
		{"45 minutes", now.Add(-45 * time.Minute), 6.5},
		// 1..6 h: 0.5 − 0.25·(age−1h)/5h; at 3.5 h 0.375
		{"3.5 hours", now.Add(-210 * time.Minute), 3.75},
		// 6..12 h: 0.25·(12h−age)/6h; at 9 h 0.125 (the old code had 0 here)
		{"9 hours", now.Add(-9 * time.Hour), 1.25},
		{"12 hours", now.Add(-12 * time.Hour), 0},
		{"two days", now.Add(-48 * time.Hour), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(nil, only("recency"), fixedClock).Score(Input{CreatedAt: tt.created})
			approx(t, "Recency", b.Recency, tt.want)
		})
	}
}

func TestRecencyHasNoCliff(t *testing.T) {
	prev := recencyFraction(now, now)
	for age := time.Minute; age <= 13*time.Hour; age += time.Minute {
		f := recencyFraction(now.Add(-age), now)
		if f > prev {
			t.Fatalf("recency rises at %v: %v > %v", age, f, prev)
		}
		// The steepest segment loses 0.3 over 30 minutes: 0.01 a minute.
		if prev-f > 0.0100001 {
			t.Fatalf("recency drops %v within one minute at %v", prev-f, age)
		}
		prev = f
	}
}

func TestEngagementSignal(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want float64 // points out of 10
	}{
		// (10+5+3+2)/1000 = 2% → 0.02/0.05 = 0.4
		{"per follower", Input{AuthorFollowers: 1000, Likes: 10, Retweets: 5, Replies: 3, Quotes: 2}, 4},
		// 1% of 2 000 impressions → 0.2 (followers ignored)
		{"per impression", Input{AuthorFollowers: 10, Impressions: 2000, Likes: 20}, 2},
		{"capped", Input{AuthorFollowers: 100, Likes: 50}, 10},
		{"no followers uses 1", Input{Likes: 0}, 0},
		{"zero followers one like", Input{Likes: 1}, 10},
		{"negative counts ignored", Input{AuthorFollowers: 1000, Likes: -100, Retweets: 25}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(nil, only("engagement"), fixedClock).Score(tt.in)
			approx(t, "Engagement", b.Engagement, tt.want)
		})
	}
}

func TestReplyCountSignal(t *testing.T) {
	tests := []struct {
		replies int64
		want    float64 // 10 × (1 − replies/20)
	}{
		{-3, 10}, {0, 10}, {5, 7.5}, {10, 5}, {19, 0.5}, {20, 0}, {500, 0},
	}
	for _, tt := range tests {
		b := New(nil, only("reply"), fixedClock).Score(Input{Replies: tt.replies})
		approx(t, "ReplyCount", b.ReplyCount, tt.want)
	}
}

func TestContentTypeSignal(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want float64
	}{
		{"original text post", Input{}, 10},
		{"reply", Input{IsReply: true}, 5},
		{"media", Input{HasMedia: true}, 0},
		{"quote", Input{IsQuote: true}, 0},
		{"retweet", Input{IsRetweet: true}, 0},
		{"reply with media", Input{IsReply: true, HasMedia: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(nil, only("content"), fixedClock).Score(tt.in)
			approx(t, "ContentType", b.ContentType, tt.want)
		})
	}
}

func TestTotal(t *testing.T) {
	in := Input{
		Text:            "Anyone tried golang generics?",
		AuthorFollowers: 550,                        // 0.75 × 15 = 11.25
		Likes:           6,                          // (6 likes + 5 replies)/550 = 2% → 0.4 × 15 = 6
		Replies:         5,                          // 0.75 × 15 = 11.25
		CreatedAt:       now.Add(-45 * time.Minute), // 0.65 × 15 = 9.75
	}
	// keyword: one word → 0.5 × 30 = 15; content: original → 10.
	b := New([]string{"golang"}, DefaultWeights(), fixedClock).Score(in)
	approx(t, "Total", b.Total, 15+11.25+9.75+6+11.25+10)

	// Weights that do not sum to 100 are scaled: the same breakdown over a
	// sum of 50 doubles.
	half := DefaultWeights()
	half.Keyword, half.Follower, half.Recency, half.Engagement, half.ReplyCount, half.ContentType =
		15, 7.5, 7.5, 7.5, 7.5, 5
	bh := New([]string{"golang"}, half, fixedClock).Score(in)
	approx(t, "scaled Total", bh.Total, b.Total)

	// Invalid weights count as zero; all zero means a zero total.
	bz := New([]string{"golang"}, Weights{Keyword: -1, Follower: math.NaN()}, fixedClock).Score(in)
	if bz.Total != 0 || bz.KeywordRelevance != 0 || bz.Follower != 0 {
		t.Errorf("zero weights gave %+v", bz)
	}
}

func TestBoundsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"golang", "rust", "ai agents", "東京", "#go", "x"}
	pick := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return -rng.Int64N(1000)
		case 1:
			return 0
		case 2:
			return rng.Int64N(100)
		default:
			return rng.Int64()
		}
	}
	for i := 0; i < 5000; i++ {
		w := DefaultWeights()
		if i%2 == 1 {
			w = Weights{rng.Float64() * 50, rng.Float64() * 50, rng.Float64() * 50,
				rng.Float64() * 50, rng.Float64() * 50, rng.Float64() * 50}
		}
		var text strings.Builder
		for range rng.IntN(8) {
			text.WriteString(words[rng.IntN(len(words))] + " ")
		}
		in := Input{
			Text: text.String(), AuthorFollowers: pick(), Likes: pick(), Retweets: pick(),
			Replies: pick(), Quotes: pick(), Impressions: pick(),
			CreatedAt: now.Add(time.Duration(rng.Int64N(int64(48*time.Hour))) - 24*time.Hour),
			HasMedia:  rng.IntN(2) == 0, IsQuote: rng.IntN(3) == 0, IsRetweet: rng.IntN(5) == 0, IsReply: rng.IntN(2) == 0,
		}
		b := New(words[:rng.IntN(len(words)+1)], w, fixedClock).Score(in)
		if b.Total < 0 || b.Total > 100 || math.IsNaN(b.Total) {
			t.Fatalf("Total %v out of [0,100] for %+v", b.Total, in)
		}
		parts := []struct {
			name     string
			got, max float64
		}{
			{"keyword", b.KeywordRelevance, w.Keyword}, {"follower", b.Follower, w.Follower},
			{"recency", b.Recency, w.Recency}, {"engagement", b.Engagement, w.Engagement},
			{"reply", b.ReplyCount, w.ReplyCount}, {"content", b.ContentType, w.ContentType},
		}
		for _, p := range parts {
			if p.got < 0 || p.got > p.max+1e-9 || math.IsNaN(p.got) {
				t.Fatalf("%s = %v outside [0, %v] for %+v", p.name, p.got, p.max, in)
			}
		}
	}
}

func TestRecommend(t *testing.T) {
	tests := []struct {
		total, threshold float64
		want             string
	}{
		{75, 60, StrongReply},
		{90, 60, StrongReply},
		{74.99, 60, Consider},
		{60, 60, Consider},
		{59.99, 60, Skip},
		{0, 0, Consider},
		{15, 0, StrongReply},
	}
	for _, tt := range tests {
		if got := Recommend(tt.total, tt.threshold); got != tt.want {
			t.Errorf("Recommend(%v, %v) = %q, want %q", tt.total, tt.threshold, got, tt.want)
		}
	}
}

func TestNilClockUsesTimeNow(t *testing.T) {
	b := New(nil, only("recency"), nil).Score(Input{CreatedAt: time.Now()})
	if b.Recency != 10 {
		t.Errorf("Recency = %v for a tweet posted now, want 10", b.Recency)
	}
}

func BenchmarkScore(b *testing.B) {
	s := New([]string{"golang", "rust", "static typing", "ai agents", "developer tools"}, DefaultWeights(), fixedClock)
	in := Input{
		Text:            "Shipping a developer tools release today: static typing for our config, written in Golang. Thoughts?",
		AuthorFollowers: 4200, Likes: 31, Retweets: 4, Replies: 6, Quotes: 1, Impressions: 5100,
		CreatedAt: now.Add(-40 * time.Minute),
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Score(in)
	}
}
