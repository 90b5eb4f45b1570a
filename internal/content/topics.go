package content

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// Where SuggestTopics found its topics.
const (
	SourcePerformance = "performance"
	SourceLLM         = "llm"
)

// Topic count limits for SuggestTopics.
const (
	DefaultTopicCount = 5
	MaxTopicCount     = 20
)

// TopicScore is one measured topic (from the content scores the analytics
// loop keeps).
type TopicScore struct {
	Topic          string
	AvgPerformance float64
	Posts          int
}

// SuggestedTopic is one suggestion. AvgPerformance and Posts are set for
// measured topics only.
type SuggestedTopic struct {
	Topic          string  `json:"topic"`
	Reason         string  `json:"reason"`
	AvgPerformance float64 `json:"avg_performance,omitempty"`
	Posts          int     `json:"posts,omitempty"`
}

// Suggestions are topic ideas and where they came from.
type Suggestions struct {
	// Source is SourcePerformance when measured topics were ranked, or
	// SourceLLM when the model proposed topics from the profile.
	Source string           `json:"source"`
	Topics []SuggestedTopic `json:"topics"`
}

// SuggestTopics returns up to count topics (0 means DefaultTopicCount). When
// measured holds any usable topic, the best performers are returned without
// calling the LLM; otherwise the LLM proposes topics from the profile's
// content pillars, industry topics and keywords.
func (g *Generator) SuggestTopics(ctx context.Context, count int, measured []TopicScore) (*Suggestions, error) {
	if count == 0 {
		count = DefaultTopicCount
	}
	if count < 0 || count > MaxTopicCount {
		return nil, apperr.New(apperr.InvalidInput, "count must be between 1 and %d, got %d", MaxTopicCount, count)
	}
	if ranked := rankMeasured(measured); len(ranked) > 0 {
		if len(ranked) > count {
			ranked = ranked[:count]
		}
		out := &Suggestions{Source: SourcePerformance, Topics: make([]SuggestedTopic, len(ranked))}
		for i, r := range ranked {
			out.Topics[i] = SuggestedTopic{
				Topic:          r.Topic,
				Reason:         fmt.Sprintf("average performance %.2f over %d posts", r.AvgPerformance, r.Posts),
				AvgPerformance: r.AvgPerformance,
				Posts:          r.Posts,
			}
		}
		return out, nil
	}
	return g.suggestFromProfile(ctx, count)
}

// rankMeasured drops unusable rows, merges duplicates (case-insensitive,
// post-weighted average) and sorts best first: performance, then posts,
// then name for a stable order.
func rankMeasured(measured []TopicScore) []TopicScore {
	idx := map[string]int{}
	var out []TopicScore
	for _, m := range measured {
		t := strings.TrimSpace(m.Topic)
		if t == "" || math.IsNaN(m.AvgPerformance) || math.IsInf(m.AvgPerformance, 0) || m.Posts < 0 {
			continue
		}
		k := strings.ToLower(t)
		if i, ok := idx[k]; ok {
			a := &out[i]
			if total := a.Posts + m.Posts; total > 0 {
				a.AvgPerformance = (a.AvgPerformance*float64(a.Posts) + m.AvgPerformance*float64(m.Posts)) / float64(total)
			} else {
				a.AvgPerformance = math.Max(a.AvgPerformance, m.AvgPerformance)
			}
			a.Posts += m.Posts
			continue
		}
		idx[k] = len(out)
		out = append(out, TopicScore{Topic: t, AvgPerformance: m.AvgPerformance, Posts: m.Posts})
	}
	slices.SortStableFunc(out, func(a, b TopicScore) int {
		if c := cmp.Compare(b.AvgPerformance, a.AvgPerformance); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Posts, a.Posts); c != 0 {
			return c
		}
		return strings.Compare(a.Topic, b.Topic)
	})
	return out
}

func (g *Generator) suggestFromProfile(ctx context.Context, count int) (*Suggestions, error) {
	p := g.prof
	var user strings.Builder
	line(&user, "Content pillars: ", joinNonBlank(p.ContentPillars, ", "))
	line(&user, "Industry topics: ", joinNonBlank(p.IndustryTopics, ", "))
	line(&user, "Product keywords: ", joinNonBlank(p.ProductKeywords, ", "))
	if user.Len() == 0 {
		return nil, apperr.New(apperr.TopicError,
			"no measured topics yet and nothing to suggest from; set business.content_pillars, industry_topics or product_keywords")
	}
	line(&user, "Competitors (do not promote them): ", joinNonBlank(p.CompetitorKeywords, ", "))
	fmt.Fprintf(&user, "\nSuggest %d topics.", count)
	if err := g.ready(); err != nil {
		return nil, err
	}
	t := 0.9
	resp, err := g.p.Complete(ctx, llm.Request{
		System:      g.topicsSystemPrompt(count),
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: user.String()}},
		MaxTokens:   400,
		Temperature: &t,
		Operation:   OpSuggestTopics,
	})
	if err != nil {
		return nil, asLLMError(OpSuggestTopics, err)
	}
	topics := parseTopics(resp.Text)
	var kept []SuggestedTopic
	for _, tp := range topics {
		if g.findBanned(tp) != "" {
			continue
		}
		kept = append(kept, SuggestedTopic{Topic: tp, Reason: "suggested by the LLM from the profile's themes"})
		if len(kept) == count {
			break
		}
	}
	if len(kept) == 0 {
		return nil, apperr.New(apperr.TopicError, "the model returned no usable topics")
	}
	return &Suggestions{Source: SourceLLM, Topics: kept}, nil
}

// PlanInput describes the thread GenerateThreadPlan drafts.
type PlanInput struct {
	Topic          string
	Objective      string
	TargetAudience string
	Structure      string
}

// ThreadPlan is a drafted thread with a heuristic read of it.
type ThreadPlan struct {
	Tweets []string `json:"thread_tweets"`
	// Structure is the structure asked for, or StructureFreeform.
	Structure string `json:"structure_used"`
	// HookType classifies the first post: question, contrarian, story or
	// statement.
	HookType          string `json:"hook_type"`
	FirstTweetPreview string `json:"first_tweet_preview"`
	// EstimatedPerformance is a heuristic, not a prediction: "high" when the
	// topic matches the profile's industry topics, pillars or keywords,
	// otherwise "medium".
	EstimatedPerformance string `json:"estimated_performance"`
}

// Hook types reported in ThreadPlan.HookType.
const (
	HookQuestion   = "question"
	HookContrarian = "contrarian"
	HookStory      = "story"
	HookStatement  = "statement"
)

// StructureFreeform is ThreadPlan.Structure when no structure was asked for.
const StructureFreeform = "freeform"

// previewRunes bounds ThreadPlan.FirstTweetPreview.
const previewRunes = 120

// GenerateThreadPlan drafts a thread for a stated objective and audience
// and describes it.
func (g *Generator) GenerateThreadPlan(ctx context.Context, in PlanInput) (*ThreadPlan, error) {
	topic := strings.TrimSpace(in.Topic)
	if topic == "" {
		return nil, apperr.New(apperr.InvalidInput, "topic must not be empty")
	}
	for _, f := range [][2]string{{"topic", topic}, {"objective", in.Objective}, {"target_audience", in.TargetAudience}} {
		if utf8.RuneCountInString(f[1]) > maxTopicInputRunes {
			return nil, apperr.New(apperr.InvalidInput, "%s must be at most %d characters", f[0], maxTopicInputRunes)
		}
	}
	st, err := pick("structure", in.Structure, structures)
	if err != nil {
		return nil, err
	}
	if err := g.ready(); err != nil {
		return nil, err
	}
	tweets, err := g.thread(ctx, OpGenerateThreadPlan,
		g.threadUserPrompt(topic, st, strings.TrimSpace(in.Objective), strings.TrimSpace(in.TargetAudience)),
		in.TargetAudience)
	if err != nil {
		return nil, err
	}
	plan := &ThreadPlan{
		Tweets:               tweets,
		Structure:            st.name,
		HookType:             classifyHook(tweets[0]),
		FirstTweetPreview:    preview(tweets[0]),
		EstimatedPerformance: "medium",
	}
	if plan.Structure == "" {
		plan.Structure = StructureFreeform
	}
	if g.onTheme(topic) {
		plan.EstimatedPerformance = "high"
	}
	return plan, nil
}

func preview(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= previewRunes {
		return s
	}
	return strings.TrimRight(tweettext.TruncateRunes(s, previewRunes-1), " ") + "…"
}

// onTheme reports whether topic mentions one of the profile's themes or a
// theme mentions the topic.
func (g *Generator) onTheme(topic string) bool {
	t := matchForm(topic)
	for _, list := range [][]string{g.prof.IndustryTopics, g.prof.ContentPillars, g.prof.ProductKeywords} {
		for _, th := range list {
			th = matchForm(th)
			if th != "" && (strings.Contains(t, th) || strings.Contains(th, t)) {
				return true
			}
		}
	}
	return false
}

var (
	contrarianCues = []string{
		"unpopular opinion", "hot take", "contrary to", "stop ", "is overrated", "are overrated", "myth",
		"wrong", "most people think", "everyone says", "nobody tells you", "don't ", "isn't", "aren't", "never ",
	}
	storyCues = []string{
		"i ", "i'", "when i", "my ", "last year", "last week", "yesterday", "years ago", "in 20", "we ", "our ",
	}
)

// classifyHook labels the first post of a thread.
func classifyHook(first string) string {
	s := matchForm(first)
	sentence := s
	if i := strings.IndexAny(s, ".!\n"); i >= 0 {
		sentence = s[:i+1]
	}
	switch {
	case strings.Contains(sentence, "?"):
		return HookQuestion
	case containsAny(sentence, contrarianCues):
		return HookContrarian
	case hasAnyPrefix(s, storyCues):
		return HookStory
	default:
		return HookStatement
	}
}

func containsAny(s string, cues []string) bool {
	for _, c := range cues {
		if strings.Contains(s, c) {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, cues []string) bool {
	for _, c := range cues {
		if strings.HasPrefix(s, c) {
			return true
		}
	}
	return false
}

func asLLMError(op string, err error) error {
	if ae := apperr.As(err); ae.Code != apperr.InternalError {
		return ae
	}
	return apperr.Wrap(apperr.LLMError, err, "%s: the LLM call failed", op)
}
