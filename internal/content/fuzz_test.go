package content

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"Here's a tweet:\n\"Ship it. #DevOps #CI\"",
	"1/ Hook?\n2/ Middle.\n3/ End. 3/3",
	"Tweet 1: a\n---\nTweet 2: b",
	"**1/5** bold\n\n**2/5** more",
	"```\n- one\n- two\n```",
	"“«'\"nested\"'»”",
	"#a #b\n#c",
	"(1) x\n(2) y\n2/1 z",
	"\xff\xfe #\u0301 ＃タグ",
	"1. Topic: a — b\n2) \"c\"\n* d:",
}

func FuzzCleanText(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := cleanText(s)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		if got != strings.TrimSpace(got) {
			t.Fatalf("untrimmed result %q", got)
		}
		if len(got) > len(s) {
			t.Fatalf("cleaning grew %q to %q", s, got)
		}
	})
}

func FuzzParseThread(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, p := range parseThread(s) {
			if p == "" || p != strings.TrimSpace(p) || !utf8.ValidString(p) {
				t.Fatalf("part %d of %q is %q", i, s, p)
			}
			if patterns().separator.MatchString(p) {
				t.Fatalf("separator survived in part %d: %q", i, p)
			}
		}
	})
}

func FuzzParseTopics(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seen := map[string]bool{}
		for _, tp := range parseTopics(s) {
			if tp == "" || !utf8.ValidString(tp) || utf8.RuneCountInString(tp) > maxTopicRunes || strings.Contains(tp, "\n") {
				t.Fatalf("bad topic %q from %q", tp, s)
			}
			k := strings.ToLower(tp)
			if seen[k] {
				t.Fatalf("duplicate topic %q from %q", tp, s)
			}
			seen[k] = true
		}
	})
}

func FuzzJaccard(f *testing.F) {
	f.Add("ship small ship often", "Ship often!")
	f.Add("小さく出す", "")
	f.Add("\xff a", "A \xff")
	f.Fuzz(func(t *testing.T, a, b string) {
		j := Jaccard(a, b)
		if j < 0 || j > 1 || j != j {
			t.Fatalf("Jaccard(%q, %q) = %v", a, b, j)
		}
		if j != Jaccard(b, a) {
			t.Fatalf("not symmetric for %q, %q", a, b)
		}
		if len(wordSet(a)) > 0 && Jaccard(a, a) != 1 {
			t.Fatalf("Jaccard(%q, itself) = %v", a, Jaccard(a, a))
		}
	})
}
