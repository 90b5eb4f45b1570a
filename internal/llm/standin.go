package llm

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// The sandbox stand-in: a deterministic local generator used in sandbox mode
// when no real LLM is configured, so that the content tools and the
// autopilot's drafting loops show what they would do without an API key.
const (
	// ProviderStandIn is the stand-in's Name.
	ProviderStandIn = "sandbox-stand-in"
	// StandInModel is the model the stand-in reports in Response.Model.
	StandInModel = "stand-in"
	// StandInLabel starts every text the stand-in writes (every post of a
	// thread, every suggested topic), so that neither an agent nor a human
	// can mistake it for model output, in a tool result, an approval item
	// or the sandbox timeline alike.
	StandInLabel = "[sandbox stand-in]"
)

// standInMaxTopicRunes bounds how much of a caller's topic is echoed, so a
// long topic cannot push the label out of a post.
const standInMaxTopicRunes = 60

// Operations the stand-in recognises. They are the operation names the
// content package sends; any other operation gets a short labelled answer.
const (
	standInOpTweet      = "generate_tweet"
	standInOpReply      = "generate_reply"
	standInOpThread     = "generate_thread"
	standInOpThreadPlan = "generate_thread_plan"
	standInOpTopics     = "suggest_topics"
)

// StandIn is the sandbox's local stand-in for an LLM. It never leaves the
// process and spends nothing: it records no usage, and its responses carry
// zero tokens and a known cost of 0. The same request always gets the same
// answer (the seed is a hash of the whole request), and different requests
// get different ones.
type StandIn struct{}

// NewStandIn returns the stand-in provider.
func NewStandIn() *StandIn { return &StandIn{} }

// Name implements Provider.
func (*StandIn) Name() string { return ProviderStandIn }

// IsStandIn reports whether p is the sandbox stand-in.
func IsStandIn(p Provider) bool {
	_, ok := p.(*StandIn)
	return ok
}

// Complete implements Provider.
func (s *StandIn) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, apperr.Wrap(apperr.LLMError, err, "%s request cancelled", ProviderStandIn)
	}
	if len(req.Messages) == 0 || req.Messages[0].Role != RoleUser {
		return nil, apperr.New(apperr.InvalidInput, "messages must start with a %q message", RoleUser)
	}
	rng := rand.New(rand.NewPCG(seed(req)))
	// The first user message holds the task; later turns are corrections,
	// which change the seed and therefore the wording.
	task := req.Messages[0].Content
	var text string
	switch req.Operation {
	case standInOpTweet:
		text = standInTweet(rng, task)
	case standInOpReply:
		text = standInReply(rng, task)
	case standInOpThread, standInOpThreadPlan:
		text = standInThread(rng, task)
	case standInOpTopics:
		text = standInTopics(rng, task)
	default:
		text = StandInLabel + " OK"
	}
	return &Response{Text: text, Model: StandInModel, CostKnown: true}, nil
}

// seed hashes everything that makes up the request.
func seed(req Request) (uint64, uint64) {
	h := fnv.New128a()
	write := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	write(req.Operation)
	write(req.System)
	for _, m := range req.Messages {
		write(m.Role)
		write(m.Content)
	}
	sum := h.Sum(nil)
	return binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:])
}

// labelled prefixes the label and fits the result into one post.
func labelled(body string) string {
	return tweettext.FitWeighted(StandInLabel+" "+strings.TrimSpace(body), tweettext.MaxWeightedLength)
}

func pickOne(rng *rand.Rand, list []string) string { return list[rng.IntN(len(list))] }

// field returns the rest of the first line of task that starts with prefix.
func field(task, prefix string) string {
	for _, l := range strings.Split(task, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

var choiceRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\(([a-z_]+)\)`) })

// choice reads the name in a "Format (tip): ..." style line.
func choice(task, prefix string) string {
	if m := choiceRe().FindStringSubmatch(field(task, prefix)); m != nil {
		return m[1]
	}
	return ""
}

// topicOf is the topic a task names, shortened and without a label copied
// from an earlier stand-in answer (a suggested topic used as a topic).
func topicOf(task, prefix string) string {
	t := strings.TrimSpace(strings.TrimPrefix(field(task, prefix), StandInLabel))
	if t == "" {
		t = "this topic"
	}
	if utf8.RuneCountInString(t) > standInMaxTopicRunes {
		t = strings.TrimSpace(tweettext.TruncateRunes(t, standInMaxTopicRunes-1)) + "…"
	}
	return t
}

var (
	standInActions = []string{
		"write down the one step you repeat every week and automate only that",
		"measure before you change anything, then change one thing at a time",
		"start from the smallest version that works and grow it from real use",
		"keep a short log of what broke and read it every Friday",
		"cut the setup to one command a newcomer can run",
		"ask two users what they skipped, then fix the first thing they name",
	}
	standInReasons = []string{
		"Small loops teach faster than big plans.",
		"Feedback you get this week beats a perfect plan next month.",
		"Most waste hides in the steps nobody questions.",
		"What you measure is what improves.",
		"Clarity compounds; complexity does too.",
		"The boring fix usually outlasts the clever one.",
	}
	standInOpeners = []string{
		"Three things that help with", "What actually moved the needle on", "A short checklist for",
		"Before you ship anything about", "Lessons from a year of",
	}
	standInItems = []string{
		"a written goal", "one metric", "a weekly review", "fewer moving parts", "honest defaults",
		"a rollback plan", "plain words", "real examples", "short feedback loops", "a clear owner",
	}
	standInQuestions = []string{
		"What is the one habit that made the biggest difference for you",
		"Which part do you still do by hand, and why",
		"What would you tell someone starting today",
		"What did you stop doing that helped most",
	}
	standInStories = []string{
		"Last month a tiny change to how we handle %s saved us hours.",
		"Years ago I spent a week on %s and got nowhere until I asked for help.",
		"Yesterday a reader asked me where to begin with %s.",
		"The first time I tried to explain %s, I used far too many words.",
	}
	standInLessons = []string{
		"The lesson: simple and repeatable wins.", "It taught me to test the assumption first.",
		"Since then I write the plan in one sentence.", "Now I always start with the user's words.",
	}
	standInClaims = []string{
		"more tooling rarely fixes it; fewer steps do", "the advice to go faster is usually wrong; go clearer",
		"best practices are a starting point, not a finish line", "the hard part is not technical, it is deciding",
	}
	standInObservations = []string{
		"the teams that write things down move faster", "the simplest setup tends to survive longest",
		"people copy what they can see working", "the first five minutes decide whether anyone comes back",
	}
)

func standInTweet(rng *rand.Rand, task string) string {
	topic := topicOf(task, "Write one post about:")
	format := choice(task, "Format")
	if format == "" {
		format = pickOne(rng, []string{"tip", "list", "question", "story", "contrarian", "observation"})
	}
	var body string
	switch format {
	case "list":
		items := rng.Perm(len(standInItems))[:3]
		body = fmt.Sprintf("%s %s:\n- %s\n- %s\n- %s", pickOne(rng, standInOpeners), topic,
			standInItems[items[0]], standInItems[items[1]], standInItems[items[2]])
	case "question":
		body = fmt.Sprintf("Thinking about %s today. %s?", topic, pickOne(rng, standInQuestions))
	case "story":
		body = fmt.Sprintf(pickOne(rng, standInStories), topic) + " " + pickOne(rng, standInLessons)
	case "contrarian":
		body = fmt.Sprintf("Unpopular view on %s: %s.", topic, pickOne(rng, standInClaims))
	case "observation":
		body = fmt.Sprintf("A pattern I keep seeing with %s: %s.", topic, pickOne(rng, standInObservations))
	default:
		body = fmt.Sprintf("One tip on %s: %s. %s", topic, pickOne(rng, standInActions), pickOne(rng, standInReasons))
	}
	return labelled(body)
}

var (
	standInReplyOpeners = []string{
		"Good point about", "Agreed on", "Interesting take on", "This matches what I saw with", "Curious about",
		"Useful thread on", "Nice framing of",
	}
	standInReplyBodies = []string{
		"what helped us was writing the steps down first.",
		"the detail that mattered most for us was the feedback loop.",
		"did you measure it before and after?",
		"the second-order effects are the interesting part.",
		"small defaults end up mattering more than big features.",
		"how long did it take before it paid off?",
		"we learned the same thing the slow way.",
	}
)

// keywords picks up to n longer words from the post, in order, so that a
// reply visibly answers the post it was asked about.
func keywords(post string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(post) {
		w = strings.Trim(w, ".,;:!?\"'()[]{}…“”‘’")
		lw := strings.ToLower(w)
		if utf8.RuneCountInString(w) < 5 || strings.ContainsAny(w, "@#/") || seen[lw] {
			continue
		}
		seen[lw] = true
		out = append(out, w)
		if len(out) == n {
			break
		}
	}
	return out
}

func standInReply(rng *rand.Rand, task string) string {
	post := task
	if _, after, ok := strings.Cut(task, "<post>"); ok {
		post, _, _ = strings.Cut(after, "</post>")
	}
	kw := keywords(post, 4)
	about := "this"
	if len(kw) > 0 {
		about = `"` + strings.Join(kw, " ") + `"`
	}
	return labelled(fmt.Sprintf("%s %s: %s", pickOne(rng, standInReplyOpeners), about, pickOne(rng, standInReplyBodies)))
}

var standInThreadSteps = []string{
	"Start with the problem in one sentence. If you cannot, you are not ready to fix it.",
	"Write down how it works today, step by step. The waste is usually obvious on paper.",
	"Pick one step to change. Only one, so you can tell whether it helped.",
	"Measure the same number before and after. Feelings are not a benchmark.",
	"Share the result, including what did not work. Others learn most from that.",
	"Keep what worked as the new default and drop the rest.",
	"Repeat next week with the next step. Small loops add up.",
	"Common mistake: changing everything at once. You learn nothing from it.",
	"Common mistake: skipping the write-up. Next quarter nobody remembers why.",
}

func standInThread(rng *rand.Rand, task string) string {
	topic := topicOf(task, "Write a thread about:")
	n := 5 + rng.IntN(4)
	parts := make([]string, 0, n)
	hook := fmt.Sprintf("A short thread on %s: what works, what does not, and how to start.", topic)
	if st := choice(task, "Structure"); st != "" {
		hook = fmt.Sprintf("A short thread on %s, as a %s: what works and how to start.", topic, st)
	}
	parts = append(parts, labelled(hook))
	steps := rng.Perm(len(standInThreadSteps))[:n-2]
	for _, i := range steps {
		parts = append(parts, labelled(standInThreadSteps[i]))
	}
	parts = append(parts, labelled(fmt.Sprintf("That is the gist of %s. What would you add?", topic)))
	return strings.Join(parts, "\n---\n")
}

var standInAngles = []string{
	"beginner mistakes in", "a checklist for", "what changed this year in", "myths about",
	"how to measure", "a week of", "tools for", "lessons learned from", "getting started with", "the hidden costs of",
}

var countRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Suggest (\d+) topics`) })

func standInTopics(rng *rand.Rand, task string) string {
	count := 5
	if m := countRe().FindStringSubmatch(task); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 && n <= 50 {
			count = n
		}
	}
	var themes []string
	for _, prefix := range []string{"Content pillars:", "Industry topics:", "Product keywords:"} {
		for _, t := range strings.Split(field(task, prefix), ",") {
			if t = strings.TrimSpace(t); t != "" {
				themes = append(themes, tweettext.TruncateRunes(t, 40))
			}
		}
	}
	if len(themes) == 0 {
		themes = []string{"your field"}
	}
	seen := map[string]bool{}
	var lines []string
	for _, ai := range rng.Perm(len(standInAngles)) {
		for _, ti := range rng.Perm(len(themes)) {
			l := StandInLabel + " " + standInAngles[ai] + " " + themes[ti]
			if !seen[l] {
				seen[l] = true
				lines = append(lines, l)
				break
			}
		}
		if len(lines) == count {
			break
		}
	}
	return strings.Join(lines, "\n")
}
