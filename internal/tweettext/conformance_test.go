package tweettext

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tuitbot/tuitbot/internal/xspec"
)

// The official twitter-text conformance files are not part of this
// repository; xspec.File finds them through TUITBOT_CONFORMANCE_DIR, and
// skips (or, under TUITBOT_REQUIRE_CONFORMANCE, fails) without it.
func conformanceFile(t *testing.T, rel string) []byte {
	t.Helper()
	return xspec.File(t, rel)
}

type counterCase struct {
	Description string `yaml:"description"`
	Text        string `yaml:"text"`
	Expected    struct {
		WeightedLength    *int  `yaml:"weightedLength"`
		Valid             *bool `yaml:"valid"`
		Permillage        *int  `yaml:"permillage"`
		DisplayRangeStart *int  `yaml:"displayRangeStart"`
		DisplayRangeEnd   *int  `yaml:"displayRangeEnd"`
		ValidRangeStart   *int  `yaml:"validRangeStart"`
		ValidRangeEnd     *int  `yaml:"validRangeEnd"`
	} `yaml:"expected"`
}

func TestConformanceWeightedCounter(t *testing.T) {
	raw := conformanceFile(t, "twitter-text/validate.yml")
	// Other sections expect plain booleans; decode only the counter ones.
	var doc struct {
		Tests map[string]yaml.Node `yaml:"tests"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse validate.yml: %v", err)
	}
	suites := []struct {
		name  string
		emoji bool
	}{
		// The plain counter predates emoji parsing (the v2 configuration,
		// which differs from v3 only there).
		{"WeightedTweetsCounterTest", false},
		{"WeightedTweetsWithDiscountedEmojiCounterTest", true},
		{"UnicodeDirectionalMarkerCounterTest", true},
	}
	for _, s := range suites {
		node, ok := doc.Tests[s.name]
		if !ok {
			t.Fatalf("validate.yml has no tests.%s", s.name)
		}
		var cases []counterCase
		if err := node.Decode(&cases); err != nil {
			t.Fatalf("decode tests.%s: %v", s.name, err)
		}
		if len(cases) == 0 {
			t.Fatalf("validate.yml has no cases under tests.%s", s.name)
		}
		t.Run(s.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.Description, func(t *testing.T) {
					got := parse(c.Text, s.emoji, MaxWeightedLength)
					e := c.Expected
					if e.WeightedLength == nil || e.Valid == nil {
						t.Fatalf("case lacks weightedLength or valid")
					}
					check := func(field string, want *int, got int) {
						t.Helper()
						if want != nil && *want != got {
							t.Errorf("%s = %d, want %d", field, got, *want)
						}
					}
					check("weightedLength", e.WeightedLength, got.WeightedLength)
					if got.Valid != *e.Valid {
						t.Errorf("valid = %v, want %v", got.Valid, *e.Valid)
					}
					check("permillage", e.Permillage, got.Permillage)
					check("displayRangeStart", e.DisplayRangeStart, got.DisplayRange[0])
					check("displayRangeEnd", e.DisplayRangeEnd, got.DisplayRange[1])
					check("validRangeStart", e.ValidRangeStart, got.ValidRange[0])
					check("validRangeEnd", e.ValidRangeEnd, got.ValidRange[1])
					if t.Failed() {
						t.Logf("text: %q", truncateForLog(c.Text))
					}
				})
			}
		})
	}
}

// TestConformanceTLDTable checks that every TLD in the hand-written table is
// one twitter-text knows, in the same category, and that a link on it is
// extracted whole.
func TestConformanceTLDTable(t *testing.T) {
	raw := conformanceFile(t, "twitter-text/tlds.yml")
	var doc struct {
		Tests map[string][]struct {
			Text     string   `yaml:"text"`
			Expected []string `yaml:"expected"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse tlds.yml: %v", err)
	}
	known := map[string]string{}
	for cat, cases := range doc.Tests {
		for _, c := range cases {
			_, tld, ok := strings.Cut(c.Text, "twitter.")
			if !ok {
				t.Fatalf("unexpected tlds.yml case %q", c.Text)
			}
			known[strings.ToLower(tld)] = cat
		}
	}
	tables := []struct {
		cat string
		set map[string]struct{}
	}{{"country", tlds().cc}, {"generic", tlds().g}}
	covered := 0
	for _, tb := range tables {
		for tld := range tb.set {
			cat, ok := known[tld]
			if !ok {
				t.Errorf("%s TLD %q is not in twitter-text's list", tb.cat, tld)
				continue
			}
			if cat != tb.cat {
				t.Errorf("TLD %q is %s in twitter-text, %s here", tld, cat, tb.cat)
			}
			covered++
			text := "https://twitter." + tld
			if got := WeightedLength(text); got != transformedURLLength {
				t.Errorf("WeightedLength(%q) = %d, want %d", text, got, transformedURLLength)
			}
		}
	}
	t.Logf("table covers %d of the %d TLDs twitter-text knows", covered, len(known))
}

func truncateForLog(s string) string {
	return TruncateRunes(s, 200)
}
