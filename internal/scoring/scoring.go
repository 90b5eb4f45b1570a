// Package scoring rates a tweet as a reply opportunity from six bounded
// signals: keyword relevance, author follower count, recency, engagement
// rate, how crowded the replies are, and content type. The functions are
// pure; the only clock is the one passed to New.
//
// Each signal is a fraction in [0, 1] multiplied by its weight, so a signal
// never exceeds its weight. Total is the weighted share of the maximum,
// 100·Σsignals/Σweights, so it spans 0–100 whatever the weights add up to;
// with DefaultWeights (which sum to 100) it is simply the sum of the
// signals.
package scoring

import (
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// DefaultThreshold is the score at or above which a tweet is worth a reply.
const DefaultThreshold = 60.0

// Recommendations returned by Recommend.
const (
	StrongReply = "strong_reply"
	Consider    = "consider"
	Skip        = "skip"
)

// StrongMargin is how far above the threshold a score must be for a strong
// recommendation.
const StrongMargin = 15.0

// Weights are the maximum points of each signal.
type Weights struct {
	Keyword, Follower, Recency, Engagement, ReplyCount, ContentType float64
}

// DefaultWeights returns the default maxima; they sum to exactly 100.
func DefaultWeights() Weights {
	return Weights{Keyword: 30, Follower: 15, Recency: 15, Engagement: 15, ReplyCount: 15, ContentType: 10}
}

// Sum returns the total of the weights.
func (w Weights) Sum() float64 {
	return w.Keyword + w.Follower + w.Recency + w.Engagement + w.ReplyCount + w.ContentType
}

func (w Weights) fields() []struct {
	name string
	v    float64
} {
	return []struct {
		name string
		v    float64
	}{
		{"keyword", w.Keyword}, {"follower", w.Follower}, {"recency", w.Recency},
		{"engagement", w.Engagement}, {"reply_count", w.ReplyCount}, {"content_type", w.ContentType},
	}
}

// Validate reports a config_error naming the first weight that is negative
// or not a finite number, or all weights being zero.
func (w Weights) Validate() error {
	for _, f := range w.fields() {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return apperr.New(apperr.ConfigError, "scoring weight %s must be a finite number, got %v", f.name, f.v)
		}
		if f.v < 0 {
			return apperr.New(apperr.ConfigError, "scoring weight %s must not be negative, got %v", f.name, f.v)
		}
	}
	if w.Sum() <= 0 {
		return apperr.New(apperr.ConfigError, "scoring weights must not all be zero")
	}
	return nil
}

// Input is what the scorer knows about one tweet, straight from X's data.
type Input struct {
	Text            string
	AuthorUsername  string
	AuthorFollowers int64
	Likes           int64
	Retweets        int64
	Replies         int64
	Quotes          int64
	Impressions     int64
	CreatedAt       time.Time
	HasMedia        bool
	IsQuote         bool
	IsRetweet       bool
	IsReply         bool
}

// Breakdown is a score with its parts; each part is within [0, its weight]
// and Total within [0, 100].
type Breakdown struct {
	Total            float64 `json:"total"`
	KeywordRelevance float64 `json:"keyword_relevance"`
	Follower         float64 `json:"follower"`
	Recency          float64 `json:"recency"`
	Engagement       float64 `json:"engagement"`
	ReplyCount       float64 `json:"reply_count"`
	ContentType      float64 `json:"content_type"`
	// MatchedKeywords are the configured keywords found in the text, as
	// configured and in configured order.
	MatchedKeywords []string `json:"matched_keywords"`
}

// Scorer scores tweets against a keyword list. It is safe for concurrent
// use.
type Scorer struct {
	keywords []keyword
	w        Weights
	sum      float64
	now      func() time.Time
}

type keyword struct {
	label  string // as configured, trimmed
	folded string // normalised for matching
	weight float64
}

// New builds a Scorer. Keywords are matched case-insensitively as whole
// words or phrases; blank and duplicate keywords are dropped. Weights that
// are negative or not finite count as zero (check config with
// Weights.Validate first). now is the clock; nil means time.Now.
func New(keywords []string, w Weights, now func() time.Time) *Scorer {
	if now == nil {
		now = time.Now
	}
	clean := func(v float64) float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return 0
		}
		return v
	}
	w = Weights{
		Keyword: clean(w.Keyword), Follower: clean(w.Follower), Recency: clean(w.Recency),
		Engagement: clean(w.Engagement), ReplyCount: clean(w.ReplyCount), ContentType: clean(w.ContentType),
	}
	s := &Scorer{w: w, sum: w.Sum(), now: now}
	seen := map[string]bool{}
	for _, k := range keywords {
		label := strings.TrimSpace(k)
		folded := fold(label)
		if folded == "" || seen[folded] {
			continue
		}
		seen[folded] = true
		weight := 1.0
		if strings.Contains(folded, " ") {
			weight = phraseWeight
		}
		s.keywords = append(s.keywords, keyword{label: label, folded: folded, weight: weight})
	}
	return s
}

// Score rates in.
func (s *Scorer) Score(in Input) Breakdown {
	kw, matched := s.keywordFraction(in.Text)
	b := Breakdown{
		KeywordRelevance: kw * s.w.Keyword,
		Follower:         followerFraction(in.AuthorFollowers) * s.w.Follower,
		Recency:          recencyFraction(in.CreatedAt, s.now()) * s.w.Recency,
		Engagement:       engagementFraction(in) * s.w.Engagement,
		ReplyCount:       replyCountFraction(in.Replies) * s.w.ReplyCount,
		ContentType:      contentTypeFraction(in) * s.w.ContentType,
		MatchedKeywords:  matched,
	}
	if s.sum > 0 {
		sum := b.KeywordRelevance + b.Follower + b.Recency + b.Engagement + b.ReplyCount + b.ContentType
		b.Total = min(max(100*sum/s.sum, 0), 100)
	}
	return b
}

// Recommend turns a total into StrongReply (at least threshold+StrongMargin),
// Consider (at least threshold) or Skip.
func Recommend(total, threshold float64) string {
	switch {
	case total >= threshold+StrongMargin:
		return StrongReply
	case total >= threshold:
		return Consider
	default:
		return Skip
	}
}

// Keyword relevance. A single word is worth 1, a phrase (more specific) 2;
// the signal is the matched worth over keywordSaturation, capped at 1. It
// depends only on what matched, so a longer keyword list never lowers the
// score of a tweet that matches.
const (
	phraseWeight      = 2.0
	keywordSaturation = 2.0
)

func (s *Scorer) keywordFraction(text string) (float64, []string) {
	if len(s.keywords) == 0 {
		return 0, nil
	}
	folded := fold(text)
	var worth float64
	var matched []string
	for _, k := range s.keywords {
		if containsWord(folded, k.folded) {
			worth += k.weight
			matched = append(matched, k.label)
		}
	}
	return min(worth/keywordSaturation, 1), matched
}

// fold normalises for matching: NFC, lower case, white space runs as one
// space, trimmed.
func fold(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(norm.NFC.String(s))), " ")
}

// containsWord reports whether kw occurs in text on word boundaries. A
// boundary is only required on a side where the keyword ends in a letter or
// digit of a script that separates words with spaces: "go" does not match
// "good", "東京" matches inside "東京都", and "#go" needs a boundary after
// "go" but none before the '#'. A plural "s" or "es" after a Latin-letter
// keyword still counts as a match.
func containsWord(text, kw string) bool {
	first, last := firstRune(kw), lastRune(kw)
	needLeft := isWordRune(first) && !isUnspacedScript(first)
	needRight := isWordRune(last) && !isUnspacedScript(last)
	for from := 0; from <= len(text)-len(kw); {
		i := strings.Index(text[from:], kw)
		if i < 0 {
			return false
		}
		start := from + i
		end := start + len(kw)
		leftOK := !needLeft || start == 0 || !isWordRune(lastRune(text[:start]))
		if leftOK && (!needRight || rightBoundary(text[end:], last)) {
			return true
		}
		from = start + utf8.RuneLen(first)
	}
	return false
}

// rightBoundary reports whether rest (the text after a match) starts at a
// word boundary, allowing an English plural suffix.
func rightBoundary(rest string, last rune) bool {
	if rest == "" || !isWordRune(firstRune(rest)) {
		return true
	}
	if last < 0x80 && unicode.IsLetter(last) {
		for _, suffix := range []string{"s", "es"} {
			if after, ok := strings.CutPrefix(rest, suffix); ok && (after == "" || !isWordRune(firstRune(after))) {
				return true
			}
		}
	}
	return false
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_'
}

// isUnspacedScript reports scripts written without spaces between words (or
// with particles glued on), where a keyword is matched as a substring.
func isUnspacedScript(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// followerFraction favours mid-sized accounts, where a reply is seen but not
// drowned: 0 for no followers, rising linearly to 0.5 at 100 and to 1 at
// 1 000, full up to 10 000, then falling linearly to 0.25 at 100 000 and
// staying there.
func followerFraction(f int64) float64 {
	x := float64(f)
	switch {
	case f <= 0:
		return 0
	case f < 100:
		return x / 200
	case f < 1000:
		return 0.5 + (x-100)/1800
	case f <= 10000:
		return 1
	case f <= 100000:
		return 1 - 0.75*(x-10000)/90000
	default:
		return 0.25
	}
}

// Recency decays smoothly: full marks for the first 5 minutes, then linear
// between these points, reaching zero at 12 hours. Timestamps up to
// futureSkew ahead of the clock count as brand new (clock skew); further in
// the future, or missing, they score zero.
var recencyCurve = [...]struct {
	age  time.Duration
	frac float64
}{
	{0, 1},
	{5 * time.Minute, 1},
	{30 * time.Minute, 0.8},
	{time.Hour, 0.5},
	{6 * time.Hour, 0.25},
	{12 * time.Hour, 0},
}

const futureSkew = 5 * time.Minute

func recencyFraction(created, now time.Time) float64 {
	if created.IsZero() {
		return 0
	}
	age := now.Sub(created)
	if age < -futureSkew {
		return 0
	}
	age = max(age, 0)
	for i := 1; i < len(recencyCurve); i++ {
		a, b := recencyCurve[i-1], recencyCurve[i]
		if age <= b.age {
			t := float64(age-a.age) / float64(b.age-a.age)
			return a.frac + (b.frac-a.frac)*t
		}
	}
	return 0
}

// Engagement rate: likes, retweets, replies and quotes per impression when X
// reports impressions, else per follower; fullEngagementRate earns full
// marks.
const fullEngagementRate = 0.05

func engagementFraction(in Input) float64 {
	// Summed as floats: X's counters are int64 and may be absurd in bad data.
	engaged := float64(nonNeg(in.Likes)) + float64(nonNeg(in.Retweets)) +
		float64(nonNeg(in.Replies)) + float64(nonNeg(in.Quotes))
	base := float64(max(nonNeg(in.AuthorFollowers), 1))
	if in.Impressions > 0 {
		base = float64(in.Impressions)
	}
	return min(engaged/base/fullEngagementRate, 1)
}

// Reply count: fewer replies make a reply more visible; crowdedReplies or
// more scores zero.
const crowdedReplies = 20

func replyCountFraction(replies int64) float64 {
	return max(1-float64(nonNeg(replies))/crowdedReplies, 0)
}

// Content type: an original text post is the best thing to reply to. A
// reply deep in someone's thread is half as good; retweets (nothing of the
// author's own to answer), media posts and quote tweets (the context is
// elsewhere) score zero.
func contentTypeFraction(in Input) float64 {
	switch {
	case in.IsRetweet, in.HasMedia, in.IsQuote:
		return 0
	case in.IsReply:
		return 0.5
	default:
		return 1
	}
}

func nonNeg(v int64) int64 { return max(v, 0) }
