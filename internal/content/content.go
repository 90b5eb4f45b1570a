// Package content drafts posts, replies, threads and topic ideas with an LLM
// and checks every draft before handing it out: X's weighted length (one
// stricter regeneration, then a sentence-boundary trim), the profile's
// banned phrases, and for replies, similarity to the account's recent
// replies. Nothing here posts; drafts go through the gateway like any other
// text.
package content

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// Profile is what prompts know about the account (the [business] config
// section plus the banned phrases from [limits]).
type Profile struct {
	ProductName        string
	ProductDescription string
	ProductURL         string
	TargetAudience     string
	BrandVoice         string
	ReplyStyle         string
	ContentStyle       string
	PersonaOpinions    []string
	PersonaExperiences []string
	ContentPillars     []string
	ProductKeywords    []string
	CompetitorKeywords []string
	IndustryTopics     []string
	BannedPhrases      []string
}

// Generator drafts content for one profile. It is safe for concurrent use.
type Generator struct {
	p    llm.Provider
	prof Profile
}

// NewGenerator returns a generator. p may be nil: every method then fails
// with llm_not_configured (SuggestTopics still ranks measured topics).
func NewGenerator(p llm.Provider, prof Profile) *Generator {
	return &Generator{p: p, prof: prof}
}

// Operation names recorded with LLM usage.
const (
	OpGenerateTweet      = "generate_tweet"
	OpGenerateReply      = "generate_reply"
	OpGenerateThread     = "generate_thread"
	OpGenerateThreadPlan = "generate_thread_plan"
	OpSuggestTopics      = "suggest_topics"
)

// Thread length the model is asked for and held to.
const (
	MinThreadTweets = 5
	MaxThreadTweets = 8
)

// maxTopicInputRunes bounds a caller-supplied topic or objective.
const maxTopicInputRunes = 500

// maxReplyContextRunes bounds how much of the post being answered is sent.
const maxReplyContextRunes = 4000

type named struct{ name, instruction string }

// formats are the tweet formats GenerateTweet accepts.
var formats = []named{
	{"list", "Write it as a short list: one opening line, then 3 to 5 brief items, each on its own line starting with \"-\"."},
	{"tip", "Share one specific, actionable tip the reader can use today, with the reason it works."},
	{"question", "Ask the audience one thought-provoking question that invites replies, after a line of context."},
	{"story", "Tell a very short first-person story: one concrete moment and what it taught you."},
	{"contrarian", "Respectfully take the opposite side of a belief most people in the field hold, and give the reason."},
	{"observation", "Share a sharp observation about a pattern you keep seeing, stated plainly and specifically."},
}

// structures are the thread structures GenerateThread accepts.
var structures = []named{
	{"transformation", "A before-and-after arc: where things started, what changed, the steps in between, and the result."},
	{"framework", "A step-by-step method: introduce it, then one post per step, then how to start."},
	{"mistakes", "Common mistakes: one mistake per post, each with what to do instead."},
	{"analysis", "A breakdown: what happened or how it works, why it matters, and the takeaways."},
}

// Formats lists the tweet formats GenerateTweet accepts.
func Formats() []string { return names(formats) }

// Structures lists the thread structures GenerateThread accepts.
func Structures() []string { return names(structures) }

func names(ns []named) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.name
	}
	return out
}

// pick validates an optional choice. "" means none (the model decides).
func pick(field, value string, ns []named) (named, error) {
	v := strings.ToLower(strings.TrimSpace(value))
	if v == "" {
		return named{}, nil
	}
	for _, n := range ns {
		if n.name == v {
			return n, nil
		}
	}
	return named{}, apperr.New(apperr.InvalidInput, "%s must be one of %s (or empty), got %q",
		field, strings.Join(names(ns), ", "), value)
}

// GenerateTweet drafts one post about topic in the given format (one of
// Formats(), or "" to let the model choose). An empty topic falls back to
// the profile's first industry topic, content pillar or product keyword.
// A draft whose words overlap one of recent (the account's latest posts,
// newest first) by SimilarityThreshold or more is regenerated once and
// then rejected with validation_error.
func (g *Generator) GenerateTweet(ctx context.Context, topic, format string, recent ...string) (string, error) {
	f, err := pick("format", format, formats)
	if err != nil {
		return "", err
	}
	topic, err = g.topicOrDefault(topic)
	if err != nil {
		return "", err
	}
	if err := g.ready(); err != nil {
		return "", err
	}
	var user strings.Builder
	fmt.Fprintf(&user, "Write one post about: %s", topic)
	if f.name != "" {
		fmt.Fprintf(&user, "\nFormat (%s): %s", f.name, f.instruction)
	}
	writeRecentPosts(&user, recent)
	return g.single(ctx, spec{
		op: OpGenerateTweet, system: g.postSystemPrompt(), user: user.String(),
		maxTokens: 300, temperature: 0.8,
	}, recent)
}

// RecentPostsShown is how many of the account's latest posts a post
// prompt shows the model, so that it does not repeat itself.
const RecentPostsShown = 5

// asPostData keeps a post quoted into a prompt from closing the tag that
// marks it as data: posts are untrusted.
func asPostData(s string) string {
	return strings.NewReplacer("<post>", "‹post›", "</post>", "‹/post›").Replace(s)
}

// writeRecentPosts adds the account's latest posts to a prompt as data the
// new post must differ from.
func writeRecentPosts(b *strings.Builder, recent []string) {
	if len(recent) > RecentPostsShown {
		recent = recent[:RecentPostsShown]
	}
	if len(recent) == 0 {
		return
	}
	b.WriteString("\nThe account's latest posts; say something different, in other words:")
	for _, r := range recent {
		r = strings.Join(strings.Fields(tweettext.TruncateRunes(r, 280)), " ")
		r = asPostData(r)
		fmt.Fprintf(b, "\n<post>%s</post>", r)
	}
}

// ReplyInput is the post to answer and what the reply must not repeat.
type ReplyInput struct {
	TweetText   string
	TweetAuthor string
	// MentionProduct allows the reply to mention the product where it
	// genuinely helps; otherwise the model is told not to mention any.
	MentionProduct bool
	// RecentReplies are the account's recent replies, newest first. The
	// first RecentRepliesCompared are compared with the draft.
	RecentReplies []string
}

// GenerateReply drafts a reply to in.TweetText. A draft whose words overlap
// a recent reply by SimilarityThreshold or more is regenerated once and
// then rejected with validation_error.
func (g *Generator) GenerateReply(ctx context.Context, in ReplyInput) (string, error) {
	text := strings.TrimSpace(in.TweetText)
	if text == "" {
		return "", apperr.New(apperr.InvalidInput, "tweet_text must not be empty")
	}
	if err := g.ready(); err != nil {
		return "", err
	}
	text = tweettext.TruncateRunes(text, maxReplyContextRunes)
	// The post is untrusted: it must not be able to close the tag that
	// marks it as data.
	text = asPostData(text)
	author := strings.TrimPrefix(strings.TrimSpace(in.TweetAuthor), "@")
	var user strings.Builder
	if author != "" {
		fmt.Fprintf(&user, "Post by @%s:\n", tweettext.TruncateRunes(author, 50))
	} else {
		user.WriteString("Post:\n")
	}
	fmt.Fprintf(&user, "<post>\n%s\n</post>\n\nWrite the reply.", text)
	return g.single(ctx, spec{
		op: OpGenerateReply, system: g.replySystemPrompt(in.MentionProduct), user: user.String(),
		maxTokens: 300, temperature: 0.7, reply: true,
	}, in.RecentReplies)
}

// GenerateThread drafts a thread of MinThreadTweets to MaxThreadTweets
// posts about topic with the given structure (one of Structures(), or "").
func (g *Generator) GenerateThread(ctx context.Context, topic, structure string) ([]string, error) {
	st, err := pick("structure", structure, structures)
	if err != nil {
		return nil, err
	}
	topic, err = g.topicOrDefault(topic)
	if err != nil {
		return nil, err
	}
	if err := g.ready(); err != nil {
		return nil, err
	}
	return g.thread(ctx, OpGenerateThread, g.threadUserPrompt(topic, st, "", ""), "")
}

func (g *Generator) threadUserPrompt(topic string, st named, objective, audience string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Write a thread about: %s", topic)
	if st.name != "" {
		fmt.Fprintf(&b, "\nStructure (%s): %s", st.name, st.instruction)
	}
	if objective != "" {
		fmt.Fprintf(&b, "\nObjective: %s", objective)
	}
	if audience != "" {
		fmt.Fprintf(&b, "\nWrite it for: %s", audience)
	}
	return b.String()
}

func (g *Generator) ready() error {
	if g.p == nil {
		return apperr.New(apperr.LLMNotConfigured, "no LLM provider is configured; set llm.provider and llm.model")
	}
	return nil
}

// topicOrDefault validates a caller's topic or picks the profile's first.
func (g *Generator) topicOrDefault(topic string) (string, error) {
	topic = strings.TrimSpace(topic)
	if topic == "" {
		for _, list := range [][]string{g.prof.IndustryTopics, g.prof.ContentPillars, g.prof.ProductKeywords} {
			if t := firstNonBlank(list); t != "" {
				return t, nil
			}
		}
		return "", apperr.New(apperr.InvalidInput,
			"topic is required (or set business.industry_topics, content_pillars or product_keywords)")
	}
	if utf8.RuneCountInString(topic) > maxTopicInputRunes {
		return "", apperr.New(apperr.InvalidInput, "topic must be at most %d characters", maxTopicInputRunes)
	}
	return topic, nil
}

func firstNonBlank(list []string) string {
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// spec is one generation task.
type spec struct {
	op          string
	system      string
	user        string
	maxTokens   int
	temperature float64
	reply       bool // strip leading @mentions the model adds
}

func (g *Generator) ask(ctx context.Context, s spec, msgs []llm.Message) (string, error) {
	t := s.temperature
	resp, err := g.p.Complete(ctx, llm.Request{
		System: s.system, Messages: msgs, MaxTokens: s.maxTokens, Temperature: &t, Operation: s.op,
	})
	if err != nil {
		return "", asLLMError(s.op, err)
	}
	return resp.Text, nil
}

// retryMessages continues the conversation with the model's previous answer
// and a correction, so the model sees what it is asked to fix.
func retryMessages(first string, prev string, correction string) []llm.Message {
	if strings.TrimSpace(prev) == "" {
		return []llm.Message{{Role: llm.RoleUser, Content: first + "\n\n" + correction}}
	}
	return []llm.Message{
		{Role: llm.RoleUser, Content: first},
		{Role: llm.RoleAssistant, Content: prev},
		{Role: llm.RoleUser, Content: correction},
	}
}

// verdict is what is wrong with one draft; the zero value means nothing.
type verdict struct {
	empty      bool
	weighted   int    // set when over the limit
	banned     string // the first banned phrase found
	similarity float64
	tweetIndex int // for threads: which post the problem is in
	count      int // for threads: set when the count is out of range
}

func (v verdict) ok() bool {
	return !v.empty && v.weighted == 0 && v.banned == "" && v.similarity == 0 && v.count == 0
}

// correction words the stricter instruction for a regeneration.
func (g *Generator) correction(v verdict, thread bool) string {
	var b strings.Builder
	b.WriteString("That does not work yet.")
	if v.empty {
		b.WriteString(" The answer had no usable text.")
	}
	if v.count != 0 {
		fmt.Fprintf(&b, " It has %d posts; write %d to %d, with a line containing only --- between posts.",
			v.count, MinThreadTweets, MaxThreadTweets)
	}
	if v.weighted != 0 {
		if thread {
			fmt.Fprintf(&b, " Post %d is %d characters as X counts them.", v.tweetIndex+1, v.weighted)
		} else {
			fmt.Fprintf(&b, " It is %d characters as X counts them.", v.weighted)
		}
		fmt.Fprintf(&b, " Important: every post MUST stay under %d characters (aim for 240 or fewer); links count 23, emoji and CJK characters count 2. Be more concise.",
			tweettext.MaxWeightedLength)
	}
	if v.banned != "" {
		fmt.Fprintf(&b, " It uses the phrase %q, which is not allowed.", v.banned)
		if list := g.bannedList(); list != "" {
			fmt.Fprintf(&b, " Never use any of these phrases: %s.", list)
		}
	}
	if v.similarity != 0 {
		b.WriteString(" It repeats something the account already posted. Take a different angle with different wording.")
	}
	b.WriteString(" Rewrite it. Output only the text.")
	return b.String()
}

// single runs one tweet-sized generation: ask, clean, check; on any problem
// regenerate once with a stricter instruction; trim what is still too long;
// reject banned phrases and repeats.
func (g *Generator) single(ctx context.Context, s spec, recent []string) (string, error) {
	clean := cleanText
	if s.reply {
		clean = func(t string) string { return stripLeadingMentions(cleanText(t)) }
	}
	first := []llm.Message{{Role: llm.RoleUser, Content: s.user}}
	raw1, err := g.ask(ctx, s, first)
	if err != nil {
		return "", err
	}
	t1 := clean(raw1)
	v1 := g.check(t1, recent)
	if v1.ok() {
		return t1, nil
	}
	candidates := []string{t1}
	raw2, err2 := g.ask(ctx, s, retryMessages(s.user, raw1, g.correction(v1, false)))
	if err2 == nil {
		// The regenerated draft is preferred; the first is the fallback.
		candidates = []string{clean(raw2), t1}
	}
	var last verdict
	for i, t := range candidates {
		final := t
		if tweettext.WeightedLength(final) > tweettext.MaxWeightedLength {
			final = tweettext.FitWeighted(final, tweettext.MaxWeightedLength)
		}
		v := g.check(final, recent)
		if v.ok() {
			return final, nil
		}
		if i == 0 {
			last = v
		}
	}
	if err2 != nil && !last.blocking() {
		return "", err2
	}
	return "", g.rejection(s.op, last, false)
}

// blocking reports a problem that is the draft's fault rather than the
// model's: a banned phrase or a repeat.
func (v verdict) blocking() bool { return v.banned != "" || v.similarity != 0 }

func (g *Generator) rejection(op string, v verdict, thread bool) error {
	switch {
	case v.banned != "":
		e := apperr.New(apperr.ValidationError,
			"the generated text contains the banned phrase %q (limits.banned_phrases) even after regenerating", v.banned).
			With("phrase", v.banned)
		if thread {
			e = e.With("tweet_index", v.tweetIndex)
		}
		return e
	case v.similarity != 0:
		return apperr.New(apperr.ValidationError,
			"the generated text is too similar to a recent post of the account (word overlap %.2f, limit %.2f) even after regenerating",
			v.similarity, SimilarityThreshold).With("similarity", v.similarity)
	case v.count != 0:
		return apperr.New(apperr.LLMError, "%s: the model wrote %d posts; a thread needs %d to %d",
			op, v.count, MinThreadTweets, MaxThreadTweets)
	default:
		return apperr.New(apperr.LLMError, "%s: the model returned no usable text", op)
	}
}

// check finds what is wrong with one draft.
func (g *Generator) check(t string, recent []string) verdict {
	var v verdict
	if strings.TrimSpace(t) == "" {
		v.empty = true
		return v
	}
	if n := tweettext.WeightedLength(t); n > tweettext.MaxWeightedLength {
		v.weighted = n
	}
	v.banned = g.findBanned(t)
	if s := mostSimilar(t, recent); s >= SimilarityThreshold {
		v.similarity = s
	}
	return v
}

// findBanned returns the first configured banned phrase that occurs in t,
// ignoring case, Unicode normalisation, quote style and spacing.
func (g *Generator) findBanned(t string) string {
	nt := matchForm(t)
	for _, p := range g.prof.BannedPhrases {
		np := matchForm(p)
		if np != "" && strings.Contains(nt, np) {
			return strings.TrimSpace(p)
		}
	}
	return ""
}

func (g *Generator) bannedList() string {
	var qs []string
	for _, p := range g.prof.BannedPhrases {
		if p = strings.TrimSpace(p); p != "" {
			qs = append(qs, fmt.Sprintf("%q", p))
		}
	}
	return strings.Join(qs, ", ")
}

var quoteFolder = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`)

func matchForm(s string) string {
	s = strings.ToLower(norm.NFC.String(s))
	s = quoteFolder.Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// stripLeadingMentions drops the "@author " a model puts at the start of a
// reply; X threads the reply without it.
func stripLeadingMentions(s string) string {
	for {
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, "@") {
			return s
		}
		end := 1
		for end < len(s) && (isHandleByte(s[end])) {
			end++
		}
		if end == 1 || end == len(s) {
			return s
		}
		s = strings.TrimLeft(s[end:], ",:")
	}
}

func isHandleByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
