package content

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// threadOf joins parts with separator lines, as the prompt asks.
func threadOf(parts ...string) string { return strings.Join(parts, "\n---\n") }

func posts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Post %c makes a point.", 'A'+i)
	}
	return out
}

func TestParseThread(t *testing.T) {
	want3 := []string{"Hook line here?", "Middle part with detail.", "Wrap up and ask."}
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"separators", "Hook line here?\n---\nMiddle part with detail.\n---\nWrap up and ask.", want3},
		{"separators with blank lines and stars", "Hook line here?\n\n***\n\nMiddle part with detail.\n\n***\n\nWrap up and ask.", want3},
		{"slash numbering", "1/ Hook line here?\n2/ Middle part with detail.\n3/ Wrap up and ask.", want3},
		{"n of m numbering", "1/3 Hook line here?\n\n2/3 Middle part with detail.\n\n3/3 Wrap up and ask.", want3},
		{"tweet labels", "Tweet 1: Hook line here?\nTweet 2: Middle part with detail.\nTweet 3: Wrap up and ask.", want3},
		{"bold labels", "**Tweet 1:** Hook line here?\n\n**Tweet 2:** Middle part with detail.\n\n**Tweet 3:** Wrap up and ask.", want3},
		{"dot numbering", "1. Hook line here?\n2. Middle part with detail.\n3. Wrap up and ask.", want3},
		{"paren numbering", "(1) Hook line here?\n(2) Middle part with detail.\n(3) Wrap up and ask.", want3},
		{"numbering with separators", "1/ Hook line here?\n---\n2/ Middle part with detail.\n---\n3/ Wrap up and ask.", want3},
		{"trailing counters", "Hook line here? (1/3)\n---\nMiddle part with detail. 2/3\n---\nWrap up and ask. 3/3", want3},
		{"paragraphs", "Hook line here?\n\nMiddle part with detail.\n\nWrap up and ask.", want3},
		{"preamble", "Here's your thread:\nHook line here?\n---\nMiddle part with detail.\n---\nWrap up and ask.", want3},
		{"hashtags and quotes per post", "\"Hook line here?\"\n---\nMiddle part with detail. #tips\n---\nWrap up and ask.\n#DevOps #CI", want3},
		{"empty parts dropped", "---\nHook line here?\n---\n\n---\nMiddle part with detail.\n---\nWrap up and ask.\n---", want3},
		{"crlf", "Hook line here?\r\n---\r\nMiddle part with detail.\r\n---\r\nWrap up and ask.", want3},
		{
			"list inside a post keeps its numbers",
			"Three rules:\n---\n1. Small diffs\n2. Fast rollbacks\n3. Loud alerts\n---\nThat's it.",
			[]string{"Three rules:", "1. Small diffs\n2. Fast rollbacks\n3. Loud alerts", "That's it."},
		},
		{
			"own number stripped, list number kept",
			"1/ Hook line here?\n---\n2/ 1. first item\n---\n3/ Wrap up and ask.",
			[]string{"Hook line here?", "1. first item", "Wrap up and ask."},
		},
		{"nothing", "   ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseThread(tt.in)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseThread(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestGenerateThread(t *testing.T) {
	parts := posts(6)
	p := newScripted(t, "Here is the thread:\n"+threadOf(parts...)+"\n#DevOps")
	got, err := NewGenerator(p, testProfile()).GenerateThread(ctx, "rollbacks", "Mistakes")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, parts) {
		t.Errorf("got %q, want %q", got, parts)
	}
	r := p.calls()[0]
	if r.Operation != OpGenerateThread || r.MaxTokens < 1000 {
		t.Errorf("request = %+v", r)
	}
	mustContain(t, "system prompt", r.System, "5 to 8 posts", "---", "Do not number", "Acme Deploy", `"check out"`)
	mustContain(t, "user message", r.Messages[0].Content, "rollbacks", "Structure (mistakes)")
}

func TestGenerateThreadStructureValidation(t *testing.T) {
	for _, s := range Structures() {
		p := newScripted(t, threadOf(posts(5)...))
		if _, err := NewGenerator(p, testProfile()).GenerateThread(ctx, "x", s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	p := newScripted(t)
	_, err := NewGenerator(p, testProfile()).GenerateThread(ctx, "x", "listicle")
	ae := wantCode(t, err, apperr.InvalidInput)
	mustContain(t, "error", ae.Message, "structure", `"listicle"`, "transformation, framework, mistakes, analysis")
	if len(p.calls()) != 0 {
		t.Error("an invalid structure must not reach the LLM")
	}
}

func TestGenerateThreadCount(t *testing.T) {
	t.Run("too few then right", func(t *testing.T) {
		p := newScripted(t, threadOf(posts(3)...), threadOf(posts(7)...))
		got, err := NewGenerator(p, testProfile()).GenerateThread(ctx, "x", "")
		if err != nil || len(got) != 7 {
			t.Fatalf("got %d posts, %v", len(got), err)
		}
		mustContain(t, "correction", p.lastUser(1), "It has 3 posts", "5 to 8")
	})
	t.Run("wrong twice", func(t *testing.T) {
		p := newScripted(t, threadOf(posts(3)...), threadOf(posts(12)...))
		_, err := NewGenerator(p, testProfile()).GenerateThread(ctx, "x", "")
		ae := wantCode(t, err, apperr.LLMError)
		mustContain(t, "error", ae.Message, "12 posts", "5 to 8")
	})
}

func TestGenerateThreadOverflowTrimmed(t *testing.T) {
	long := sentences(12)
	first := posts(5)
	first[2] = long
	second := posts(6)
	second[4] = long + " " + long
	p := newScripted(t, threadOf(first...), threadOf(second...))
	got, err := NewGenerator(p, testProfile()).GenerateThread(ctx, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("want the regenerated thread, got %d posts", len(got))
	}
	for i, s := range got {
		if n := tweettext.WeightedLength(s); n > tweettext.MaxWeightedLength {
			t.Errorf("post %d is %d weighted characters", i, n)
		}
	}
	if got[4] != tweettext.FitWeighted(second[4], tweettext.MaxWeightedLength) {
		t.Errorf("post 4 = %q", got[4])
	}
	mustContain(t, "correction", p.lastUser(1), "Post 3 is", "MUST stay under 280")
}

func TestGenerateThreadBanned(t *testing.T) {
	first := posts(5)
	first[1] = "This is a game-changer."
	second := posts(5)
	second[3] = "Seriously, check out the docs."
	p := newScripted(t, threadOf(first...), threadOf(second...))
	_, err := NewGenerator(p, testProfile()).GenerateThread(ctx, "x", "")
	ae := wantCode(t, err, apperr.ValidationError)
	if ae.Extra["phrase"] != "check out" || ae.Extra["tweet_index"] != 3 {
		t.Errorf("extra = %v", ae.Extra)
	}
}

func TestGenerateThreadPlan(t *testing.T) {
	tests := []struct {
		name      string
		in        PlanInput
		first     string
		hook      string
		structure string
		perf      string
	}{
		{"question on theme", PlanInput{Topic: "platform engineering for startups", Structure: "framework"},
			"Why do small teams drown in YAML?", HookQuestion, "framework", "high"},
		{"contrarian off theme", PlanInput{Topic: "knitting"},
			"Unpopular opinion: patterns are overrated.", HookContrarian, StructureFreeform, "medium"},
		{"story", PlanInput{Topic: "observability"},
			"Last year we lost a weekend to one missing alert.", HookStory, StructureFreeform, "high"},
		{"statement", PlanInput{Topic: "gardening"},
			"Three numbers tell you if a deploy is healthy.", HookStatement, StructureFreeform, "medium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := posts(5)
			parts[0] = tt.first
			p := newScripted(t, threadOf(parts...))
			plan, err := NewGenerator(p, testProfile()).GenerateThreadPlan(ctx, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(plan.Tweets, parts) || plan.HookType != tt.hook || plan.Structure != tt.structure ||
				plan.EstimatedPerformance != tt.perf || plan.FirstTweetPreview != tt.first {
				t.Errorf("plan = %+v", plan)
			}
			if p.calls()[0].Operation != OpGenerateThreadPlan {
				t.Errorf("operation = %q", p.calls()[0].Operation)
			}
		})
	}
}

func TestGenerateThreadPlanPromptAndPreview(t *testing.T) {
	parts := posts(5)
	parts[0] = strings.Repeat("word ", 50) + "end."
	p := newScripted(t, threadOf(parts...))
	plan, err := NewGenerator(p, testProfile()).GenerateThreadPlan(ctx, PlanInput{
		Topic: "rollbacks", Objective: "get newsletter signups", TargetAudience: "CTOs of seed-stage startups", Structure: "analysis",
	})
	if err != nil {
		t.Fatal(err)
	}
	r := p.calls()[0]
	mustContain(t, "system prompt", r.System, "Audience: CTOs of seed-stage startups")
	mustNotContain(t, "system prompt", r.System, "indie developers")
	mustContain(t, "user message", r.Messages[0].Content, "rollbacks", "Objective: get newsletter signups", "Structure (analysis)")
	if n := len([]rune(plan.FirstTweetPreview)); n != previewRunes || !strings.HasSuffix(plan.FirstTweetPreview, "…") {
		t.Errorf("preview = %q (%d runes)", plan.FirstTweetPreview, n)
	}
}

func TestGenerateThreadPlanValidation(t *testing.T) {
	g := NewGenerator(newScripted(t), testProfile())
	tests := []struct {
		in      PlanInput
		mention string
	}{
		{PlanInput{}, "topic"},
		{PlanInput{Topic: "x", Structure: "essay"}, "structure"},
		{PlanInput{Topic: "x", Objective: strings.Repeat("o", maxTopicInputRunes+1)}, "objective"},
	}
	for _, tt := range tests {
		_, err := g.GenerateThreadPlan(ctx, tt.in)
		ae := wantCode(t, err, apperr.InvalidInput)
		mustContain(t, "error", ae.Message, tt.mention)
	}
}

func TestSuggestTopicsFromPerformance(t *testing.T) {
	p := newScripted(t) // any LLM call fails the test
	measured := []TopicScore{
		{Topic: "rollbacks", AvgPerformance: 4, Posts: 2},
		{Topic: "feature flags", AvgPerformance: 9, Posts: 3},
		{Topic: "Rollbacks", AvgPerformance: 10, Posts: 2}, // merges with "rollbacks" to 7 over 4 posts
		{Topic: "", AvgPerformance: 100, Posts: 1},
		{Topic: "nan", AvgPerformance: math.NaN(), Posts: 1},
		{Topic: "canaries", AvgPerformance: 7, Posts: 1},
		{Topic: "on-call", AvgPerformance: 1, Posts: 9},
	}
	s, err := NewGenerator(p, testProfile()).SuggestTopics(ctx, 3, measured)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != SourcePerformance {
		t.Errorf("source = %q", s.Source)
	}
	var got []string
	for _, tp := range s.Topics {
		got = append(got, tp.Topic)
	}
	if want := []string{"feature flags", "rollbacks", "canaries"}; !reflect.DeepEqual(got, want) {
		t.Errorf("topics = %q, want %q", got, want)
	}
	if s.Topics[1].AvgPerformance != 7 || s.Topics[1].Posts != 4 || s.Topics[1].Reason == "" {
		t.Errorf("merged topic = %+v", s.Topics[1])
	}
	if len(p.calls()) != 0 {
		t.Error("ranking measured topics must not call the LLM")
	}
}

func TestSuggestTopicsFromLLM(t *testing.T) {
	answer := "Here are some topics:\n1. Zero-downtime database migrations\n2) \"Feature flags as a rollback tool\"\n- Why canary releases beat big-bang deploys — cheap insurance\n* Check out our platform\n• zero-downtime database migrations\n\n## Bonus\nOn-call without burnout"
	p := newScripted(t, answer)
	s, err := NewGenerator(p, testProfile()).SuggestTopics(ctx, 0, []TopicScore{{Topic: " ", AvgPerformance: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != SourceLLM {
		t.Errorf("source = %q", s.Source)
	}
	var got []string
	for _, tp := range s.Topics {
		got = append(got, tp.Topic)
	}
	want := []string{"Zero-downtime database migrations", "Feature flags as a rollback tool",
		"Why canary releases beat big-bang deploys", "Bonus", "On-call without burnout"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("topics = %q\nwant %q", got, want)
	}
	r := p.calls()[0]
	if r.Operation != OpSuggestTopics {
		t.Errorf("operation = %q", r.Operation)
	}
	mustContain(t, "system prompt", r.System, fmt.Sprintf("exactly %d", DefaultTopicCount))
	mustContain(t, "user message", r.Messages[0].Content, "deployment, observability", "DevOps, platform engineering", "continuous delivery")

	p = newScripted(t, answer)
	s, err = NewGenerator(p, testProfile()).SuggestTopics(ctx, 2, nil)
	if err != nil || len(s.Topics) != 2 {
		t.Errorf("count 2: %+v, %v", s, err)
	}
}

func TestSuggestTopicsErrors(t *testing.T) {
	_, err := NewGenerator(newScripted(t), Profile{}).SuggestTopics(ctx, 3, nil)
	ae := wantCode(t, err, apperr.TopicError)
	mustContain(t, "error", ae.Message, "content_pillars")

	_, err = NewGenerator(newScripted(t, "Topics:\n\n"), testProfile()).SuggestTopics(ctx, 3, nil)
	wantCode(t, err, apperr.TopicError)

	for _, c := range []int{-1, MaxTopicCount + 1} {
		_, err = NewGenerator(newScripted(t), testProfile()).SuggestTopics(ctx, c, nil)
		ae = wantCode(t, err, apperr.InvalidInput)
		mustContain(t, "error", ae.Message, "count")
	}
}

func TestClassifyHook(t *testing.T) {
	tests := []struct{ in, want string }{
		{"What if your deploys took 30 seconds?", HookQuestion},
		{"Hot take: staging environments are a lie.", HookContrarian},
		{"Most people think more tests mean safer deploys. They don't.", HookContrarian},
		{"I broke production on my first day.", HookStory},
		{"In 2019 our pager went off 400 times.", HookStory},
		{"Three numbers tell you if a deploy is healthy.", HookStatement},
	}
	for _, tt := range tests {
		if got := classifyHook(tt.in); got != tt.want {
			t.Errorf("classifyHook(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseTopics(t *testing.T) {
	in := "Topic 1: Fast rollbacks\n- **Feature flags**\n3. Fast rollbacks.\nA heading:\n" + strings.Repeat("long ", 40) + "\n«Blue-green deploys»"
	want := []string{"Fast rollbacks", "Feature flags", "Blue-green deploys"}
	if got := parseTopics(in); !reflect.DeepEqual(got, want) {
		t.Errorf("parseTopics = %q, want %q", got, want)
	}
}
