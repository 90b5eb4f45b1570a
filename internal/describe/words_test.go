package describe_test

// The table's completeness is checked from outside the package: the
// mutations are defined in internal/actions, whose gateway records what
// describe says of each call.

import (
	"reflect"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/describe"
)

// TestEveryMutationHasWords: a new mutation tool fails here until it says
// what it does, and a tool acting on one post or account names it.
func TestEveryMutationHasWords(t *testing.T) {
	known := map[string]bool{}
	for _, m := range actions.Mutations() {
		known[m.Name] = true
		w, ok := describe.WordsOf(m.Name)
		if !ok {
			t.Errorf("%s has no words in describe's table", m.Name)
			continue
		}
		if w.Name == "" || w.Effect == "" || w.Verb == "" || w.Plural == "" {
			t.Errorf("%s: every field of its words must be set: %+v", m.Name, w)
		}
		switch m.Input {
		case reflect.TypeFor[actions.TweetIDParams]():
			if w.Kind != describe.KindPost || w.Param != "tweet_id" {
				t.Errorf("%s acts on one post (tweet_id) but its words name %q %q", m.Name, w.Kind, w.Param)
			}
		case reflect.TypeFor[actions.UserIDParams]():
			if w.Kind != describe.KindUser || w.Param != "target_user_id" {
				t.Errorf("%s acts on one account (target_user_id) but its words name %q %q", m.Name, w.Kind, w.Param)
			}
		}
	}
	for _, tool := range describe.Tools() {
		if !known[tool] {
			t.Errorf("describe's table names %s, which is no mutation tool", tool)
		}
	}
}
