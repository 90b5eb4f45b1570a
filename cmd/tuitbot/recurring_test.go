package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// recurringList runs `recurring list --json` and decodes it.
func recurringList(t *testing.T, h *home, extra ...string) []workflow.RecurringPost {
	t.Helper()
	var l struct {
		Posts    []workflow.RecurringPost `json:"recurring_posts"`
		Count    int                      `json:"count"`
		Timezone string                   `json:"timezone"`
	}
	r := h.ok(t, append([]string{"recurring", "list", "--json", "--sandbox"}, extra...)...)
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || l.Count != len(l.Posts) || l.Timezone != "UTC" {
		t.Fatalf("recurring list --json = %+v, %v\n%s", l, err, r.stdout)
	}
	return l.Posts
}

// TestRecurringCommands: a recurring post goes through create, list, pause,
// resume and delete from the command line, for the account --account names
// and no other, in a table and as JSON.
func TestRecurringCommands(t *testing.T) {
	h := newHome(t)
	var created workflow.RecurringPost
	r := h.ok(t, "recurring", "create", "--sandbox", "--text", "Weekly tip: pin your best post.", "--every", "1w",
		"--weekdays", "mon", "--time", "09:30", "--ends-after", "10", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &created); err != nil {
		t.Fatalf("recurring create --json: %v\n%s", err, r.stdout)
	}
	if created.ID == 0 || created.Every != (workflow.Every{N: 1, Unit: "week"}) || strings.Join(created.Weekdays, ",") != "mon" ||
		created.Time != "09:30" || created.EndsAfter != 10 || created.Status != workflow.RecurringActive || created.NextAt == "" {
		t.Fatalf("recurring create = %+v", created)
	}
	id := strconv.FormatInt(created.ID, 10)
	other := h.ok(t, "recurring", "create", "--sandbox", "--account", "brand_b", "--text", "News from brand B.", "--every", "2w", "--time", "10:00")
	mustContain(t, "create for brand_b", other.stdout, "created recurring post", "every 2 weeks", "at 10:00, active", "next: ")

	table := h.ok(t, "recurring", "list", "--sandbox").stdout
	mustContain(t, "recurring list", table, "ID  STATUS", "active", "week", "mon", "09:30", "0/10", `"Weekly tip: pin your best post."`)
	if strings.Contains(table, "brand B") {
		t.Errorf("the default account's list shows brand_b's post:\n%s", table)
	}
	if ps := recurringList(t, h, "--account", "brand_b"); len(ps) != 1 || ps[0].Texts[0] != "News from brand B." {
		t.Errorf("brand_b's list = %+v", ps)
	}

	mustContain(t, "pause", h.ok(t, "recurring", "pause", id, "--sandbox").stdout, "paused recurring post "+id, "paused")
	if ps := recurringList(t, h); len(ps) != 1 || ps[0].Status != workflow.RecurringPaused || ps[0].NextAt != "" {
		t.Fatalf("after pause: %+v", ps)
	}
	mustContain(t, "resume", h.ok(t, "recurring", "resume", id, "--sandbox").stdout, "resumed recurring post "+id, "next: ")
	if ps := recurringList(t, h); len(ps) != 1 || ps[0].Status != workflow.RecurringActive || ps[0].NextAt == "" {
		t.Fatalf("after resume: %+v", ps)
	}

	// Another account's rule is not this account's to change.
	brandB := recurringList(t, h, "--account", "brand_b")[0].ID
	r = h.fails(t, "recurring", "pause", strconv.FormatInt(brandB, 10), "--sandbox")
	if r.code != 1 || !strings.Contains(r.stderr, "not_found") {
		t.Errorf("pausing brand_b's rule as default: %s", r)
	}

	var del struct {
		Deleted bool  `json:"deleted"`
		ID      int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(h.ok(t, "recurring", "delete", id, "--sandbox", "--json").stdout), &del); err != nil || !del.Deleted || del.ID != created.ID {
		t.Fatalf("recurring delete --json = %+v, %v", del, err)
	}
	if ps := recurringList(t, h); len(ps) != 0 {
		t.Fatalf("after delete: %+v", ps)
	}
	mustContain(t, "empty list", h.ok(t, "recurring", "list", "--sandbox").stdout, "no recurring posts")
	r = h.fails(t, "recurring", "delete", id, "--sandbox")
	if r.code != 1 || !strings.Contains(r.stderr, "not_found") {
		t.Errorf("deleting it again: %s", r)
	}
}

// TestRecurringDuplicateContentRisk: a daily rule that repeats one text
// within X's duplicate window is refused with duplicate_content_risk and the
// hint worded with the flag; two --variant make a three-day run of distinct
// texts acceptable.
func TestRecurringDuplicateContentRisk(t *testing.T) {
	h := newHome(t)
	daily := []string{"recurring", "create", "--sandbox", "--text", "Good morning!", "--every", "1d", "--time", "08:00"}
	variants := []string{"--variant", "Morning, all!", "--variant", "Hello, early risers."}
	for _, tc := range []struct {
		name  string
		extra []string
		wants []string
	}{
		{"identical daily", nil, []string{"duplicate_content_risk", "--variant: the same text would be posted again", "hint: give --variant"}},
		{"two variants, no end", variants, []string{"duplicate_content_risk", "3 days later", "add more variants", "hint: give --variant"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.fails(t, append(append([]string{}, daily...), tc.extra...)...)
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			mustContain(t, "refusal", r.stderr, tc.wants...)
		})
	}
	var js struct {
		Error failureBody `json:"error"`
	}
	r := h.fails(t, append(append([]string{}, daily...), "--json")...)
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil || js.Error.Code != "duplicate_content_risk" || !strings.Contains(js.Error.Hint, "--variant") {
		t.Errorf("refusal with --json = %+v, %v\n%s", js, err, r)
	}
	if ps := recurringList(t, h); len(ps) != 0 {
		t.Fatalf("a refused rule was stored: %+v", ps)
	}

	var p workflow.RecurringPost
	r = h.ok(t, append(append(append([]string{}, daily...), variants...), "--ends-after", "3", "--json")...)
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	if want := []string{"Good morning!", "Morning, all!", "Hello, early risers."}; strings.Join(p.Texts, "|") != strings.Join(want, "|") || p.Every.Unit != "day" {
		t.Errorf("accepted rule = %+v, want texts %q", p, want)
	}
}

// TestRecurringBadInputNamesTheFlag: each bad value is a usage error (exit
// 2) that names the flag it came from, and nothing is stored.
func TestRecurringBadInputNamesTheFlag(t *testing.T) {
	h := newHome(t)
	base := func(extra ...string) []string {
		return append([]string{"recurring", "create", "--sandbox", "--text", "A post.", "--every", "1w", "--time", "09:00"}, extra...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{base("--every", "3m"), `--every "3m": a count and d (days) or w (weeks)`},
		{base("--every", "0d"), "--every: must be 1-365 days"},
		{base("--every", "53w"), "--every: must be 1-52 weeks"},
		{base("--weekdays", "mon,fu"), `--weekdays: "fu" is not a day`},
		{base("--weekdays", "mon,mon"), `--weekdays: "mon" is given twice`},
		{base("--time", "25:00"), "--time: "},
		{[]string{"recurring", "create", "--sandbox", "--text", "A post.", "--every", "1w"}, "--time: required"},
		{[]string{"recurring", "create", "--sandbox", "--text", "A post.", "--time", "09:00"}, "--every: required"},
		{[]string{"recurring", "create", "--sandbox", "--every", "1w", "--time", "09:00"}, "--draft: required (or pass --text)"},
		{base("--draft", "1"), "--draft, --text: give a --draft or --text, not both"},
		{base("--ends-on", "2001-01-01"), "--ends-on: 2001-01-01 is in the past"},
		{base("--ends-on", "soon"), `--ends-on: "soon" is not a YYYY-MM-DD date`},
		{base("--ends-after", "-1"), "--ends-after: must be 1-10000"},
		{base("--variant", ""), "--variant #1: must not be empty"},
		{base("--variant", "Another post.", "--variant", "another  POST."), "--variant #2: the same text as --variant #1"},
		{base("--variant", "a post."), "--variant #1: the same text as the rule's text"},
		{[]string{"recurring", "pause", "x", "--sandbox"}, `"x" is not a recurring post id`},
		{[]string{"recurring", "delete", "0", "--sandbox"}, `"0" is not a recurring post id`},
	} {
		t.Run(strings.Join(tc.args[2:], " "), func(t *testing.T) {
			r := h.fails(t, tc.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2 (usage)\n%s", r.code, r)
			}
			mustContain(t, "stderr", r.stderr, "error: "+tc.want)
		})
	}
	if ps := recurringList(t, h); len(ps) != 0 {
		t.Fatalf("bad input stored a rule: %+v", ps)
	}
}

// demoPost picks the demo account's own original post with the most likes
// from the sandbox world, with the engagement X reports for it (likes +
// reposts + replies + quotes, the base counts plus what happened inside
// the world).
func demoPost(t *testing.T, h *home) (xsim.Tweet, int64) {
	t.Helper()
	w, err := xsim.LoadWorld(h.path(filepath.Join("sandbox", "world.json")))
	if err != nil {
		t.Fatal(err)
	}
	var best xsim.Tweet
	for _, tw := range w.Tweets {
		if tw.AuthorID == w.DemoUserID && tw.RetweetOf == "" && tw.InReplyToTweetID == "" && tw.QuoteOf == "" && tw.LikeBase > best.LikeBase {
			best = tw
		}
	}
	if best.ID == "" {
		t.Fatal("the sandbox world has no original post by the demo account")
	}
	n := best.LikeBase + best.RetweetBase + best.ReplyBase + best.QuoteBase
	for _, e := range w.Likes {
		if e.To == best.ID {
			n++
		}
	}
	for _, tw := range w.Tweets {
		for _, ref := range []string{tw.RetweetOf, tw.InReplyToTweetID, tw.QuoteOf} {
			if ref == best.ID {
				n++
			}
		}
	}
	return best, n
}

// TestEvergreenCommands: evergreen mark reads the post's engagement from
// the emulator and posts nothing; list shows it with the [evergreen]
// settings, for the account it was marked for only; unmark forgets it; bad
// input names what was wrong.
func TestEvergreenCommands(t *testing.T) {
	h := newHome(t)
	mustContain(t, "empty list", h.ok(t, "evergreen", "list", "--sandbox").stdout, "[evergreen] enabled=false", "mode=repost", "no evergreen posts")
	post, engagement := demoPost(t, h)
	if engagement == 0 {
		t.Fatalf("post %s has no engagement to read", post.ID)
	}
	before, err := xsim.LoadWorld(h.path(filepath.Join("sandbox", "world.json")))
	if err != nil {
		t.Fatal(err)
	}

	var m struct {
		Evergreen workflow.EvergreenPost `json:"evergreen"`
		Settings  map[string]any         `json:"settings"`
	}
	r := h.ok(t, "evergreen", "mark", post.ID, "--sandbox", "--variant", "Still worth reading.", "--variant", "Worth a second look.", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("evergreen mark --json: %v\n%s", err, r.stdout)
	}
	if m.Evergreen.TweetID != post.ID || m.Evergreen.Text != post.Text || m.Evergreen.Engagement != engagement ||
		len(m.Evergreen.Variants) != 2 || m.Evergreen.Status != workflow.EvergreenActive || m.Settings["mode"] != "repost" {
		t.Fatalf("evergreen mark = %+v, want post %s with engagement %d", m, post.ID, engagement)
	}
	after, err := xsim.LoadWorld(h.path(filepath.Join("sandbox", "world.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Tweets) != len(before.Tweets) {
		t.Errorf("evergreen mark posted: %d posts before, %d after", len(before.Tweets), len(after.Tweets))
	}

	table := h.ok(t, "evergreen", "list", "--sandbox").stdout
	mustContain(t, "evergreen list", table, "TWEET", post.ID, "active", strconv.FormatInt(engagement, 10), "+2 variants")
	mustContain(t, "brand_b's list", h.ok(t, "evergreen", "list", "--sandbox", "--account", "brand_b").stdout, "no evergreen posts")
	var l struct {
		Evergreen []workflow.EvergreenPost `json:"evergreen"`
		Count     int                      `json:"count"`
	}
	if err := json.Unmarshal([]byte(h.ok(t, "evergreen", "list", "--sandbox", "--json").stdout), &l); err != nil || l.Count != 1 || l.Evergreen[0].TweetID != post.ID {
		t.Fatalf("evergreen list --json = %+v, %v", l, err)
	}

	mustContain(t, "unmark", h.ok(t, "evergreen", "unmark", post.ID, "--sandbox").stdout, "unmarked "+post.ID)
	mustContain(t, "list after unmark", h.ok(t, "evergreen", "list", "--sandbox").stdout, "no evergreen posts")

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"unmark", post.ID}, 1, "not_found: tweet_id: post " + post.ID + " is not marked evergreen"},
		{[]string{"mark", "abc"}, 2, `TWEET_ID: "abc" is not an X id`},
		{[]string{"unmark", "12x"}, 2, `TWEET_ID: "12x" is not an X id`},
		{[]string{"mark", "123"}, 1, "x_not_found: tweet_id: X has no post 123"},
		{[]string{"mark", post.ID, "--variant", post.Text}, 2, "--variant #1: the same text as the post"},
		{[]string{"mark", post.ID, "--variant", "One.", "--variant", "one. "}, 2, "--variant #2: the same text as --variant #1"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := h.fails(t, append(append([]string{"evergreen"}, tc.args...), "--sandbox")...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.code, r)
			}
			mustContain(t, "stderr", r.stderr, "error: "+tc.want)
		})
	}
}
