package describe

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestFieldsOpenUpEveryObject: nested objects, lists and a body that
// holds JSON become one line each, so nothing is shown as JSON.
func TestFieldsOpenUpEveryObject(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		want         []Field
	}{
		{"flat", `{"name":"Go people","private":true}`, []Field{{"name", "Go people"}, {"private", "yes"}}},
		{"nested", `{"options":{"poll":{"options":["A","B"],"duration_minutes":60}}}`,
			[]Field{{"options, poll, duration minutes", "60"}, {"options, poll, options", "A, B"}}},
		{"raw body", `{"method":"PUT","body":"{\"hidden\":true}"}`, []Field{{"body, hidden", "yes"}, {"method", "PUT"}}},
		{"list of lists", `{"media_ids":[["1"],[]]}`, []Field{{"media ids, 1", "1"}, {"media ids, 2", "(none)"}}},
		{"empty and null", `{"alt_text":"","x":null,"o":{}}`, []Field{{"alt text", "(empty)"}, {"o", "(none)"}, {"x", "(none)"}}},
		{"not an object", `[1,2]`, nil},
	} {
		if got := Fields(json.RawMessage(tc.params)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Fields = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestThreadOf: a thread's posts in order with each one's media; any
// other call is no thread.
func TestThreadOf(t *testing.T) {
	posts, ok := ThreadOf(json.RawMessage(`{"tweets":["a","b"],"media_ids":[["9"]]}`))
	if want := []ThreadPost{{"a", []string{"9"}}, {"b", nil}}; !ok || !reflect.DeepEqual(posts, want) {
		t.Errorf("ThreadOf = %v %v, want %v", posts, ok, want)
	}
	if _, ok := ThreadOf(json.RawMessage(`{"text":"a"}`)); ok {
		t.Error("a post read as a thread")
	}
}
