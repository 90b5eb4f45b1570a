package xapi

import (
	"encoding/json"
	"testing"
)

func TestMentionsRoute(t *testing.T) {
	for _, tc := range []struct {
		path string
		user string
		ok   bool
	}{
		{"/2/users/12/mentions", "12", true},
		{"/2/users/12/mentions/", "12", true},
		{"/2/users/me/mentions", "", false},
		{"/2/users/12/tweets", "", false},
		{"/2/users/12/mentions/extra", "", false},
		{"/1.1/users/12/mentions", "", false},
	} {
		user, ok := mentionsRoute(tc.path)
		if user != tc.user || ok != tc.ok {
			t.Errorf("mentionsRoute(%q) = %q, %t; want %q, %t", tc.path, user, ok, tc.user, tc.ok)
		}
	}
}

// FuzzParseMentions: whatever the body, ParseMentions keeps only posts
// with a numeric id and author and a text, and errs only on a body that
// is not a JSON object with a data list.
func FuzzParseMentions(f *testing.F) {
	f.Add([]byte(`{"data":[{"id":"1580705921830768642","author_id":"906948460078698496","text":"@tuitbot stop","edit_history_tweet_ids":["1580705921830768642"]}],"meta":{"result_count":1}}`))
	f.Add([]byte(`{"data":[{"id":"1","text":"no author"},{"id":"3","author_id":"4"}]}`))
	f.Add([]byte(`{"data":[{"id":1,"author_id":"2","text":"x"},{"id":"3","author_id":["4"],"text":"y"},{"id":"5","author_id":"6","text":7}]}`))
	f.Add([]byte(`{"data":null,"errors":[{"title":"Not Found"}]}`))
	f.Add([]byte(`{"data":{"id":"1","author_id":"2","text":"x"}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ms, err := ParseMentions(body)
		if err != nil {
			if ms != nil {
				t.Fatalf("mentions %v with error %v", ms, err)
			}
			return
		}
		var raw struct {
			Data []map[string]json.RawMessage `json:"data"`
		}
		if json.Unmarshal(body, &raw) != nil {
			t.Fatalf("parsed %q, which is not a list of posts", body)
		}
		if len(ms) > len(raw.Data) {
			t.Fatalf("%d mentions out of %d posts", len(ms), len(raw.Data))
		}
		for _, m := range ms {
			if !isXID(m.ID) || !isXID(m.AuthorID) {
				t.Fatalf("kept a mention with id %q and author %q", m.ID, m.AuthorID)
			}
		}
	})
}
