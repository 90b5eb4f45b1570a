package xsim

import (
	"strings"
	"testing"
	"time"
)

func TestParseQueryStructure(t *testing.T) {
	cases := []struct{ q, want string }{
		{"rust", `"rust"`},
		{"AI agents", `AND("ai" "agents")`},
		{`"open source" -spam`, `AND("open source" NOT("spam"))`},
		{"a OR b c", `OR("a" AND("b" "c"))`},
		{"(a OR b) c", `AND(OR("a" "b") "c")`},
		{"from:Gopher_Gabe is:reply", `AND(from:gopher_gabe is:reply)`},
		{"-(a b) c", `AND(NOT(AND("a" "b")) "c")`},
		{"has:links lang:EN", `AND(has:links lang:en)`},
		{"node.js", `"node js"`},
		{"https://example.com/x", `"https://example.com/x"`},
		{"#golang", `"#golang"`},
	}
	for _, tc := range cases {
		n, err := parseQuery(tc.q)
		if err != nil {
			t.Errorf("%q: %v", tc.q, err)
			continue
		}
		if got := n.String(); got != tc.want {
			t.Errorf("%q = %s, want %s", tc.q, got, tc.want)
		}
	}
}

func TestParseQueryErrors(t *testing.T) {
	for _, q := range []string{
		"", "   ", "-a", "-(a b)", "a OR", "OR a", "(a", "a)", "()", `"abc`, `""`, "foo:bar", "is:cat", "has:", "from:",
		"from:not-a-name!", "a - b", "!!!", strings.Repeat("a ", 300), strings.Repeat("(", 40) + "a" + strings.Repeat(")", 40),
		"a\xffb",
	} {
		if _, err := parseQuery(q); err == nil {
			t.Errorf("%q parsed", q)
		}
	}
}

func TestQueryMatching(t *testing.T) {
	st := newState(DemoWorldAt(1, testEpoch))
	author := st.users[st.demoUserID]
	tw := &Tweet{ID: "1", AuthorID: author.ID, Text: "Loving #golang and Rust for AI agents https://example.com/post", Lang: "en"}
	m := st.matchCtxFor(tw)
	cases := map[string]bool{
		"golang":                         true,
		"#golang":                        true,
		"#rust":                          false,
		"rust":                           true,
		"RUST":                           true,
		"trust":                          false,
		`"ai agents"`:                    true,
		`"agents ai"`:                    false,
		"golang -rust":                   false,
		"python OR rust":                 true,
		"(python OR java) golang":        false,
		"has:links":                      true,
		"has:media":                      false,
		"has:hashtags":                   true,
		"from:" + DemoUsername:           true,
		"from:" + author.ID:              true,
		"from:someone_else":              false,
		"is:reply":                       false,
		"-is:retweet golang":             true,
		"lang:en":                        true,
		"url:example.com":                true,
		"conversation_id:2 golang":       false,
		"to:" + DemoUsername + " golang": false,
	}
	for q, want := range cases {
		n, err := parseQuery(q)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if got := n.match(m); got != want {
			t.Errorf("%q matched %v, want %v", q, got, want)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"rust", "AI agents", `"open source" -spam`, "(a OR b) c", "from:x to:y is:reply has:links lang:en",
		"-(a b) c", "((((a))))", `"unterminated`, "a OR OR b", "@tuitbot_demo #golang $TSLA", "url:https://x.y",
		"is:retweet -is:quote", "conversation_id:123", "-", "()", "\xff",
	} {
		f.Add(s)
	}
	st := newState(DemoWorldAt(1, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)))
	sample := []*matchCtx{}
	for i, id := range st.order {
		if i%50 == 0 {
			sample = append(sample, st.matchCtxFor(st.tweets[id]))
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		n, err := parseQuery(q)
		if err != nil {
			if n != nil {
				t.Fatal("node and error both set")
			}
			var qe *queryError
			if e, ok := err.(*queryError); !ok || e.Pos < 0 || e.Pos > len(q)+maxQueryLen {
				t.Fatalf("bad error %#v", err)
			} else {
				qe = e
			}
			_ = qe.Error()
			return
		}
		if !n.positive() {
			t.Fatal("accepted a query without a positive term")
		}
		// Parsing is deterministic and matching never panics.
		n2, err := parseQuery(q)
		if err != nil || n2.String() != n.String() {
			t.Fatalf("non-deterministic parse of %q", q)
		}
		for _, m := range sample {
			_ = n.match(m)
		}
	})
}
