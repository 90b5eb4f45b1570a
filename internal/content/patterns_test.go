package content

import (
	"slices"
	"sync"
	"testing"
)

// TestPatternsOnConcurrentFirstUse: the cleaning patterns are compiled on
// first use; answers cleaned at once from many goroutines (several drafts
// in flight) all get every pattern applied.
func TestPatternsOnConcurrentFirstUse(t *testing.T) {
	const answer = "Here's a tweet:\n```\nTweet 1: shipping today"
	thread := "1/3 first\n2/3 second\n3/3 third"
	topics := "- Topic 1: pricing\n- idea: onboarding"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := cleanText(answer); got != "shipping today" {
				t.Errorf("cleanText = %q, want %q", got, "shipping today")
			}
			if got := parseThread(thread); !slices.Equal(got, []string{"first", "second", "third"}) {
				t.Errorf("parseThread = %q", got)
			}
			if got := parseTopics(topics); !slices.Equal(got, []string{"pricing", "onboarding"}) {
				t.Errorf("parseTopics = %q", got)
			}
		})
	}
	wg.Wait()
}
