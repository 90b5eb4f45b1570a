package actions

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xapi"
)

// TestPostOptionsCanonical: the spellings of one intent store the same
// parameters, so they fingerprint alike; a different setting does not.
func TestPostOptionsCanonical(t *testing.T) {
	store := func(o *PostOptions) string {
		t.Helper()
		m := Mutations()[0] // x_post_tweet
		p, err := m.Prepare(PostInput{Text: "same text", Options: o}, Env{})
		if err != nil {
			t.Fatalf("prepare %+v: %v", o, err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	none := store(nil)
	for _, o := range []*PostOptions{{}, {ReplySettings: "everyone"}} {
		if got := store(o); got != none {
			t.Errorf("options %+v stored as %s, want %s like none", o, got, none)
		}
	}
	if got := store(&PostOptions{ReplySettings: "verified"}); got == none {
		t.Errorf("reply_settings verified stored like no options: %s", got)
	}
}

func TestPostBodyCarriesOptions(t *testing.T) {
	p := xapi.PostParams{Text: "t"}
	(&PostOptions{ReplySettings: "mentionedUsers", Poll: &PollSpec{Options: []string{"a", "b"}, DurationMinutes: 5},
		CommunityID: "123", MadeWithAI: true, PaidPartnership: true}).apply(&p)
	b, err := p.Body()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"text":"t","reply_settings":"mentionedUsers","poll":{"options":["a","b"],"duration_minutes":5},"community_id":"123","made_with_ai":true,"paid_partnership":true}`
	if string(b) != want {
		t.Errorf("body %s\nwant %s", b, want)
	}
	if _, err := (xapi.PostParams{Text: "t", MediaIDs: []string{"1"}, Poll: &xapi.Poll{Options: []string{"a", "b"}, DurationMinutes: 5}}).Body(); err == nil {
		t.Error("the client built a body with a poll and media")
	}
}

func TestDescribeOptions(t *testing.T) {
	tests := []struct {
		params string
		want   []string
	}{
		{`{"text":"x"}`, nil},
		{`{"text":"x","options":{"poll":{"options":["A","B"],"duration_minutes":1440},"reply_settings":"following"}}`,
			[]string{"Poll: A / B, 1 day", "Replies: people you follow"}},
		{`{"tweets":["x"],"options":{"poll":{"options":["A","B","C"],"duration_minutes":1565}}}`,
			[]string{"Poll: A / B / C, 1 day 2 hours 5 minutes"}},
		{`{"text":"x","options":{"poll":{"options":["A","B"],"duration_minutes":5}}}`, []string{"Poll: A / B, 5 minutes"}},
		{`{"text":"x","options":{"reply_settings":"verified","community_id":"42","made_with_ai":true,"paid_partnership":true}}`,
			[]string{"Replies: verified accounts", "Community: 42", "Made with AI", "Paid partnership"}},
	}
	for _, tt := range tests {
		if got := DescribeOptions(json.RawMessage(tt.params)); !slices.Equal(got, tt.want) {
			t.Errorf("DescribeOptions(%s) = %q, want %q", tt.params, got, tt.want)
		}
	}
}
