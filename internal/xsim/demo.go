package xsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// DemoUsername is the handle of the account the sandbox acts as.
const DemoUsername = "tuitbot_demo"

// DemoBrands are the sandbox's further accounts (account name and handle),
// so a sandbox home shows several accounts served at once.
var DemoBrands = []struct{ Account, Username, Name string }{
	{"brand_b", "tuitbot_brand_b", "Tuitbot Brand B"},
	{"brand_c", "tuitbot_brand_c", "Tuitbot Brand C"},
}

// DemoWorld generates the demo world anchored at the current hour. Use
// DemoWorldAt for a fully reproducible world.
func DemoWorld(seed int64) *World {
	return DemoWorldAt(seed, time.Now().UTC().Truncate(time.Hour))
}

type demoPerson struct {
	handle, name, bio, location string
	topics                      []string
}

func demoPeople() []demoPerson {
	return []demoPerson{
		{"rustacean_rae", "Rae Okafor", "Systems programmer. Rust, embedded, coffee.", "Berlin", []string{"rust", "devtools"}},
		{"gopher_gabe", "Gabe Lindqvist", "Go at work, Go at home. Ex-SRE.", "Stockholm", []string{"golang", "infra"}},
		{"ai_agent_ana", "Ana Ruiz", "Building AI agents that do real work.", "Madrid", []string{"ai", "agents"}},
		{"founder_fin", "Finn Walsh", "2x founder. Writing about startups and fundraising.", "Dublin", []string{"startup", "growth"}},
		{"devtools_dana", "Dana Kim", "DX engineer. CLIs, editors, build systems.", "Seoul", []string{"devtools", "golang"}},
		{"llm_lucas", "Lucas Martin", "LLM evals and inference.", "Paris", []string{"ai", "llm"}},
		{"ship_it_sam", "Sam Patel", "Indie maker shipping weekly.", "London", []string{"startup", "devtools"}},
		{"oss_olivia", "Olivia Chen", "Open source maintainer.", "Toronto", []string{"opensource", "rust"}},
		{"kube_kai", "Kai Müller", "Kubernetes and platform engineering.", "Munich", []string{"infra", "golang"}},
		{"typed_tina", "Tina Rossi", "TypeScript, types, more types.", "Milan", []string{"typescript", "devtools"}},
		{"sqlite_sid", "Sid Rao", "SQLite is all you need.", "Bangalore", []string{"databases", "golang"}},
		{"vc_victor", "Victor Hale", "Seed investor. Dev tools and AI infra.", "San Francisco", []string{"startup", "ai"}},
		{"bootstrapped_bo", "Bo Jensen", "Bootstrapped SaaS, profitable.", "Copenhagen", []string{"startup", "growth"}},
		{"prompt_priya", "Priya Nair", "Prompt engineering is software engineering.", "Pune", []string{"llm", "agents"}},
		{"infra_ivan", "Ivan Petrov", "Infra at scale.", "Sofia", []string{"infra", "rust"}},
		{"frontend_fay", "Fay Adams", "Frontend, performance and accessibility.", "Austin", []string{"typescript", "devtools"}},
		{"data_dmitri", "Dmitri Sokolov", "Data engineering and pipelines.", "Tallinn", []string{"databases", "ai"}},
		{"ml_mei", "Mei Tanaka", "ML research engineer.", "Tokyo", []string{"ai", "llm"}},
		{"indie_ian", "Ian Brooks", "Indie hacker. Building in public.", "Lisbon", []string{"startup", "devtools"}},
		{"cli_carla", "Carla Gómez", "I write CLIs so you don't have to.", "Mexico City", []string{"golang", "devtools"}},
		{"perf_pete", "Pete Novak", "Profilers, flame graphs, benchmarks.", "Prague", []string{"rust", "golang"}},
		{"sec_sara", "Sara Haddad", "AppSec. Supply chain. Secrets management.", "Amsterdam", []string{"security", "devtools"}},
		{"product_paul", "Paul Mensah", "Product at a developer tools startup.", "Accra", []string{"startup", "devtools"}},
		{"growth_gwen", "Gwen Li", "Growth for B2B dev products.", "Singapore", []string{"growth", "startup"}},
		{"wasm_will", "Will Harper", "WebAssembly everywhere.", "Seattle", []string{"rust", "typescript"}},
		{"edge_emma", "Emma Novak", "Edge compute and serverless.", "Vienna", []string{"infra", "typescript"}},
		{"db_diego", "Diego Silva", "Postgres person.", "São Paulo", []string{"databases", "infra"}},
		{"api_amir", "Amir Karimi", "API design and developer platforms.", "Dubai", []string{"devtools", "ai"}},
		{"yc_yara", "Yara Haddad", "Founder, AI agents for ops teams.", "New York", []string{"agents", "startup"}},
		{"hn_hank", "Hank Meyer", "Reads every comment thread so you don't.", "Chicago", []string{"opensource", "startup"}},
	}
}

// demoTopics holds post templates per topic; {n} is a small number and {x}
// a topic noun.
func demoTopics() map[string][]string {
	return map[string][]string{
		"rust": {
			"The Rust borrow checker caught {n} bugs in my {x} before CI did. #rust",
			"Rewrote our {x} in Rust: {n}x less memory and zero segfaults.",
			"Hot take: Rust async is fine once you stop fighting Pin.",
			"Rust 2024 edition migration done in {n} hours. Cargo fix did most of it.",
			"If your {x} needs to be fast and correct, Rust is a great default. #rustlang",
		},
		"golang": {
			"Go generics finally made our {x} readable. #golang",
			"Shipped a new {x} in Go today. One static binary, no drama.",
			"Go tip: pass context.Context through every I/O call, your future self says thanks. #golang",
			"The Go race detector found {n} data races in our {x}. Run tests with -race!",
			"golang + SQLite is an underrated stack for a small {x}.",
		},
		"ai": {
			"AI agents are only as good as their tools. Give them safe, narrow APIs.",
			"We put an AI model in front of our {x} and support tickets dropped {n}0%.",
			"Evaluating LLM output is the hard part of shipping AI features.",
			"Every AI demo works. Production AI needs retries, budgets and audit logs.",
		},
		"agents": {
			"AI agents need guardrails: approval queues, rate limits, idempotency keys.",
			"Our AI agents now draft replies and a human approves. Best of both worlds.",
			"Agents that can post on your behalf need an audit trail. Non-negotiable.",
			"Built an agent that triages our {x} issues. Saved {n} hours this week.",
		},
		"llm": {
			"Prompt caching cut our LLM bill by {n}0%.",
			"Structured output from LLMs is finally reliable enough for our {x}.",
			"Local LLMs on a laptop are good enough for {x} summarisation now.",
		},
		"startup": {
			"Startup lesson #{n}: talk to users before writing the {x}.",
			"We hit {n}k MRR with a tiny {x}. Focus beats features.",
			"Fundraising is a full-time job. Startup founders, plan for {n} months.",
			"The best startup marketing for developer tools is great docs.",
		},
		"growth": {
			"Growth for dev tools = docs + examples + a free tier that actually works.",
			"Our {x} launch got {n}00 signups from one good thread.",
		},
		"devtools": {
			"A good CLI explains its errors. A great one tells you the fix. #devtools",
			"Developer tools that respect your time: fast startup, clear errors, no telemetry surprises.",
			"Shipped a dry-run mode for our {x}. Users love seeing what would happen first.",
			"The best devtools feature is a helpful error message.",
		},
		"infra": {
			"Moved our {x} to a single VM and the bill dropped {n}x.",
			"Kubernetes is great until you need to debug DNS at 3am.",
		},
		"typescript": {
			"TypeScript strict mode found {n} bugs in our {x} on day one.",
			"Types are documentation that the compiler checks.",
		},
		"databases": {
			"SQLite in WAL mode handles our whole {x} workload.",
			"Postgres can do that. Whatever it is, Postgres can probably do it.",
		},
		"opensource": {
			"Maintaining open source: {n} issues, {n} PRs, 0 sponsors. Still worth it.",
			"Open source tip: a CONTRIBUTING.md with a 5-minute setup gets you more PRs.",
		},
		"security": {
			"Never log tokens. Not even at debug level. Especially not at debug level.",
			"Secrets in files should be 0600 and written atomically.",
		},
	}
}

// demoAccountTopics are what the demo account itself posts about: a key of
// demoTopics and the name a person would give it.
func demoAccountTopics() []struct{ key, name string } {
	return []struct{ key, name string }{
		{"devtools", "developer tools"}, {"agents", "AI agents"}, {"golang", "Go"}, {"startup", "startups"},
	}
}

// DemoPillars are the demo account's subjects, for a sandbox whose
// configuration names no topics: its content and thread loops then write
// about what the demo account does.
func DemoPillars() []string {
	var out []string
	for _, t := range demoAccountTopics() {
		out = append(out, t.name)
	}
	return out
}

// DemoKeywords are words the demo world's posts use about the demo
// account's subjects, for a sandbox whose configuration names no keywords:
// its discovery loop then finds posts to answer.
func DemoKeywords() []string {
	var out []string
	for _, t := range demoAccountTopics() {
		out = append(out, t.key)
	}
	return out
}

func demoNouns() []string {
	return []string{"CLI", "parser", "scheduler", "API gateway", "web app", "build tool", "queue worker", "search index", "billing service", "side project"}
}

func demoLinks() []string {
	return []string{"https://example.com/blog/post", "https://example.org/release-notes", "https://example.net/guide"}
}

// DemoWorldAt generates a reproducible demo world whose posts span the
// seven days before now (and the demo account's 200-post history in the
// 90 days before that): the demo account "tuitbot_demo", 30 other accounts
// with follower counts, ~300 posts with engagement (some mentioning the demo
// account, some replies, quotes, reposts and links), follows, likes and
// bookmarks, on developer tools, AI, Go, Rust and startups.
func DemoWorldAt(seed int64, now time.Time) *World {
	now = now.UTC()
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7475697462))
	st := newState(&World{})
	people := demoPeople()
	topics := demoTopics()
	nouns := demoNouns()
	links := demoLinks()
	var ownTopics []string
	for _, t := range demoAccountTopics() {
		ownTopics = append(ownTopics, t.key)
	}

	mkUser := func(i int, handle, name, bio, loc string, followers int64, created time.Time) *User {
		u := &User{
			ID: fmt.Sprint(1_600_000_000_000 + int64(i)*7919), Username: handle, Name: name, Description: bio,
			Location: loc, CreatedAt: created, FollowersBase: followers, FollowingBase: int64(rng.IntN(800)),
			ListedCount: followers / 200, ProfileImageURL: "https://pbs.twimg.com/profile_images/" + handle + "_normal.jpg",
			Verified: followers > 50_000,
		}
		st.users[u.ID] = u
		st.byName[lower(handle)] = u.ID
		return u
	}
	demo := mkUser(0, DemoUsername, "Tuitbot Demo", "Building tools for developers. Automated sandbox account run by @tuitbot.", "Internet", 1200,
		time.Date(2021, 3, 14, 9, 0, 0, 0, time.UTC))
	demo.URL = "https://example.com"
	st.demoUserID = demo.ID
	users := []*User{}
	for i, p := range people {
		followers := int64(math.Exp(rng.Float64()*math.Log(250_000.0/50.0)) * 50)
		created := time.Date(2009+rng.IntN(14), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 12, 0, 0, 0, time.UTC)
		users = append(users, mkUser(i+1, p.handle, p.name, p.bio, p.location, followers, created))
	}
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	fill := func(tpl string) string {
		s := strings.ReplaceAll(tpl, "{n}", fmt.Sprint(2+rng.IntN(9)))
		return strings.ReplaceAll(s, "{x}", pick(nouns))
	}
	start := now.Add(-7 * 24 * time.Hour).Add(30 * time.Minute)
	span := now.Add(-10*time.Minute).Sub(start) / 300
	var all []*Tweet
	for i := 0; i < 300; i++ {
		at := start.Add(time.Duration(i)*span + time.Duration(rng.Int64N(int64(span/2))))
		var author *User
		var topic string
		if i%20 == 7 {
			author, topic = demo, pick(ownTopics)
		} else {
			pi := rng.IntN(len(people))
			author, topic = users[pi], pick(people[pi].topics)
		}
		text := fill(pick(topics[topic]))
		t := &Tweet{AuthorID: author.ID, CreatedAt: at, Lang: "en", Source: "Twitter Web App"}
		roll := rng.IntN(100)
		switch {
		case author != demo && roll < 7:
			text = "@" + DemoUsername + " " + pick([]string{
				"have you tried this with Go?", "this is exactly the AI agents problem we hit.",
				"what does your approval flow look like?", "love the dry-run idea for devtools.",
				"would this work for a startup with no ops team?", "how do you handle rate limits?",
			})
		case roll < 20 && len(all) > 5:
			parent := all[len(all)-1-rng.IntN(min(len(all), 40))]
			if parent.RetweetOf == "" {
				t.InReplyToTweetID = parent.ID
				t.InReplyToUserID = parent.AuthorID
				t.ConversationID = parent.ConversationID
				text = "@" + st.users[parent.AuthorID].Username + " " + fill(pick(topics[topic]))
			}
		case roll < 24 && len(all) > 5:
			orig := all[rng.IntN(len(all))]
			if orig.RetweetOf == "" && orig.AuthorID != author.ID {
				t.RetweetOf = orig.ID
				text = "RT @" + st.users[orig.AuthorID].Username + ": " + orig.Text
			}
		case roll < 27 && len(all) > 5:
			orig := all[rng.IntN(len(all))]
			if orig.RetweetOf == "" {
				t.QuoteOf = orig.ID
				text = pick([]string{"This.", "Worth reading.", "Strong agree.", "Hard disagree, but good points."}) + " " + fill(pick(topics[topic]))
			}
		case roll < 45:
			text += " " + pick(links)
		}
		if i%37 == 11 {
			t.Lang = pick([]string{"es", "de", "ja"})
		}
		if t.RetweetOf != "" {
			if _, dup := st.retweets[t.RetweetOf][author.ID]; dup {
				t.RetweetOf = ""
				text = fill(pick(topics[topic]))
			}
		}
		t.Text = text
		t.ID = st.nextID(at)
		if t.ConversationID == "" {
			t.ConversationID = t.ID
		}
		if t.RetweetOf == "" {
			reach := float64(author.FollowersBase)
			t.LikeBase = int64(rng.Float64() * reach / 40)
			t.RetweetBase = t.LikeBase / int64(4+rng.IntN(8))
			t.ReplyBase = t.LikeBase / int64(6+rng.IntN(10))
			t.QuoteBase = t.RetweetBase / 5
			t.BookmarkBase = t.LikeBase / 10
			t.ImpressionBase = int64(reach*(0.2+rng.Float64())) + 50
		}
		st.addTweet(t)
		all = append(all, t)
	}
	// Follows: the demo account follows a dozen accounts; about 18 follow it.
	edgeAt := func() time.Time { return now.Add(-time.Duration(8+rng.IntN(300)) * 24 * time.Hour) }
	perm := rng.Perm(len(users))
	for _, i := range perm[:12] {
		st.follow(Edge{From: demo.ID, To: users[i].ID, At: edgeAt()})
	}
	for _, i := range rng.Perm(len(users))[:18] {
		st.follow(Edge{From: users[i].ID, To: demo.ID, At: edgeAt()})
	}
	for _, u := range users {
		for k := 0; k < 3+rng.IntN(6); k++ {
			if v := users[rng.IntN(len(users))]; v != u {
				st.follow(Edge{From: u.ID, To: v.ID, At: edgeAt()})
			}
		}
	}
	// Likes and bookmarks.
	after := func(t time.Time) time.Time { return minTime(t.Add(time.Duration(1+rng.IntN(120))*time.Minute), now) }
	for k := 0; k < 20; k++ {
		t := all[rng.IntN(len(all))]
		if t.AuthorID != demo.ID {
			st.like(Edge{From: demo.ID, To: t.ID, At: after(t.CreatedAt)})
		}
	}
	for k := 0; k < 400; k++ {
		t := all[rng.IntN(len(all))]
		u := users[rng.IntN(len(users))]
		if u.ID != t.AuthorID {
			st.like(Edge{From: u.ID, To: t.ID, At: after(t.CreatedAt)})
		}
	}
	for k := 0; k < 5; k++ {
		t := all[rng.IntN(len(all))]
		st.bookmark(Edge{From: demo.ID, To: t.ID, At: after(t.CreatedAt)})
	}
	if ids := st.byAuthor[demo.ID]; len(ids) > 0 {
		demo.PinnedTweetID = ids[0]
	}
	// The brand accounts come last and draw nothing from rng, so every
	// other part of a seed's world is what it was before they existed.
	st.demoAccounts = map[string]string{"default": demo.ID}
	for i, b := range DemoBrands {
		u := &User{ID: fmt.Sprint(1_600_000_000_000 + int64(len(people)+1+i)*7919), Username: b.Username, Name: b.Name,
			Description: "Another brand run from the same tuitbot home. Automated sandbox account.", Location: "Internet",
			CreatedAt: time.Date(2022, 6, 1, 9, 0, 0, 0, time.UTC), FollowersBase: 300 + int64(i)*150,
			ProfileImageURL: "https://pbs.twimg.com/profile_images/" + b.Username + "_normal.jpg"}
		if i == 0 {
			// One brand pays for X Premium and may write long posts; the
			// others, the default account among them, may not.
			u.SubscriptionType = "Premium"
		}
		st.users[u.ID] = u
		st.byName[lower(u.Username)] = u.ID
		st.demoAccounts[b.Account] = u.ID
	}
	demoLists(st, users, now)
	// Two communities: the demo account belongs to the first only, so a
	// post in the second shows X's refusal. One person takes messages only
	// from the accounts they follow. Like the brands, these draw nothing
	// from rng.
	byHandle := func(h string) string { return st.byName[lower(h)] }
	st.communities["1700000000000000001"] = &Community{ID: "1700000000000000001", Name: "Go developers",
		Description: "Go, its tooling and the people who build with it.", CreatedAt: time.Date(2023, 9, 1, 12, 0, 0, 0, time.UTC),
		MemberIDs: []string{demo.ID, byHandle("gopher_gabe"), byHandle("cli_carla"), byHandle("kube_kai")}, MemberBase: 18_400}
	st.communities["1700000000000000002"] = &Community{ID: "1700000000000000002", Name: "AI agents in production",
		Description: "Builders of AI agents that do real work, with guardrails.", CreatedAt: time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC),
		MemberIDs: []string{byHandle("ai_agent_ana"), byHandle("yc_yara"), byHandle("prompt_priya")}, MemberBase: 9_100}
	victor := byHandle("vc_victor")
	st.users[victor].DMsFromFollowedOnly = true
	st.unfollow(victor, demo.ID)
	// So does the demo account's posting history, older than the week
	// above: it draws from a generator of its own.
	addHistory(st, seed, demo, now)
	w := st.snapshot(now)
	w.SavedAt = time.Time{}
	return w
}

// demoLists gives the first demo person a public List of three accounts
// and a private one, so List reads have something to show and a private
// List something to hide. Like the brands, it draws nothing from rng.
func demoLists(st *state, users []*User, now time.Time) {
	if len(users) < 5 {
		return
	}
	owner := users[0].ID
	at := now.Add(-30 * 24 * time.Hour).UTC()
	pub := &List{ID: st.nextID(at), OwnerID: owner, Name: "Go and agents", Description: "People worth reading on Go and AI agents.",
		CreatedAt: at, Members: []string{users[1].ID, users[2].ID, users[3].ID}, FollowerBase: 42}
	priv := &List{ID: st.nextID(at), OwnerID: owner, Name: "Watching", Private: true, CreatedAt: at, Members: []string{users[4].ID}}
	st.lists[pub.ID], st.lists[priv.ID] = pub, priv
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
