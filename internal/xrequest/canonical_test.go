package xrequest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func canonical(t *testing.T, r Request) string {
	t.Helper()
	b, err := CanonicalJSON(mustCheck(t, r))
	if err != nil {
		t.Fatalf("CanonicalJSON: %v", err)
	}
	if !json.Valid(b) {
		t.Fatalf("CanonicalJSON output is not JSON: %s", b)
	}
	return string(b)
}

func TestCanonicalJSONExact(t *testing.T) {
	got := canonical(t, Request{
		Method:  "POST",
		Host:    "API.X.COM",
		Path:    "/2/tweets",
		Query:   []KV{{"b", "0"}, {"a", "2"}, {"a", "1"}},
		Headers: []KV{{"User-Agent", "abc"}},
		Body:    `{ "text": "hi", "reply": {"z": 1, "in_reply_to_tweet_id": "9"} }`,
	})
	want := `{"method":"POST","host":"api.x.com","path":"/2/tweets","query":[["a","1"],["a","2"],["b","0"]],` +
		`"body":{"reply":{"in_reply_to_tweet_id":"9","z":1},"text":"hi"}}`
	if got != want {
		t.Fatalf("CanonicalJSON =\n%s\nwant\n%s", got, want)
	}
	got = canonical(t, Request{Method: "GET", Path: "/2/users/me"})
	want = `{"method":"GET","host":"api.x.com","path":"/2/users/me","query":[]}`
	if got != want {
		t.Fatalf("CanonicalJSON =\n%s\nwant\n%s", got, want)
	}
}

func TestCanonicalJSONEqual(t *testing.T) {
	base := Request{Method: "POST", Path: "/2/tweets", Body: `{"a":1,"b":2}`}
	tests := []struct {
		name string
		a, b Request
	}{
		{"key order", base, Request{Method: "POST", Path: "/2/tweets", Body: `{"b":2,"a":1}`}},
		{"whitespace", base, Request{Method: "POST", Path: "/2/tweets", Body: "{\n  \"b\" : 2 ,\t\"a\":1 }"}},
		{"nested key order",
			Request{Method: "POST", Path: "/2/tweets", Body: `{"x":{"p":[1,{"m":1,"n":2}],"q":true}}`},
			Request{Method: "POST", Path: "/2/tweets", Body: `{"x":{"q":true,"p":[1,{"n":2,"m":1}]}}`}},
		{"string escapes", Request{Method: "POST", Path: "/2/tweets", Body: `{"t":"A\u00e9"}`},
			Request{Method: "POST", Path: "/2/tweets", Body: `{"t":"Aé"}`}},
		{"query order", Request{Method: "GET", Path: "/2/x", Query: []KV{{"a", "1"}, {"b", "2"}, {"a", "0"}}},
			Request{Method: "GET", Path: "/2/x", Query: []KV{{"b", "2"}, {"a", "0"}, {"a", "1"}}}},
		{"header values ignored", Request{Method: "PUT", Path: "/2/x", Headers: []KV{{"User-Agent", "one"}}},
			Request{Method: "PUT", Path: "/2/x", Headers: []KV{{"User-Agent", "two"}}}},
		{"host case and default", Request{Method: "DELETE", Host: "API.x.com", Path: "/2/tweets/1"},
			Request{Method: "DELETE", Path: "/2/tweets/1"}},
		{"encoded path", Request{Method: "DELETE", Path: "/2/tweets/%31"}, Request{Method: "DELETE", Path: "/2/tweets/1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a, b := canonical(t, tt.a), canonical(t, tt.b); a != b {
				t.Fatalf("fingerprints differ:\n%s\n%s", a, b)
			}
		})
	}
}

func TestCanonicalJSONDiffers(t *testing.T) {
	tests := []struct {
		name string
		a, b Request
	}{
		{"body value", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"a"}`},
			Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"b"}`}},
		// Only the full body catches a difference past the first bytes.
		{"body tail", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"` + strings.Repeat("x", 500) + `a"}`},
			Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"` + strings.Repeat("x", 500) + `b"}`}},
		{"absent vs null body", Request{Method: "POST", Path: "/2/tweets"}, Request{Method: "POST", Path: "/2/tweets", Body: "null"}},
		{"number spelling", Request{Method: "POST", Path: "/2/x", Body: `{"n":1}`}, Request{Method: "POST", Path: "/2/x", Body: `{"n":1.0}`}},
		{"large numbers exact", Request{Method: "POST", Path: "/2/x", Body: `{"n":12345678901234567890123}`},
			Request{Method: "POST", Path: "/2/x", Body: `{"n":12345678901234567890124}`}},
		{"array order", Request{Method: "POST", Path: "/2/x", Body: `[1,2]`}, Request{Method: "POST", Path: "/2/x", Body: `[2,1]`}},
		{"query value", Request{Method: "GET", Path: "/2/x", Query: []KV{{"a", "1"}}}, Request{Method: "GET", Path: "/2/x", Query: []KV{{"a", "2"}}}},
		{"query present", Request{Method: "GET", Path: "/2/x"}, Request{Method: "GET", Path: "/2/x", Query: []KV{{"a", ""}}}},
		{"query pair boundary", Request{Method: "GET", Path: "/2/x", Query: []KV{{"a", "b"}}}, Request{Method: "GET", Path: "/2/x", Query: []KV{{"ab", ""}}}},
		{"method", Request{Method: "PUT", Path: "/2/x"}, Request{Method: "POST", Path: "/2/x"}},
		{"host", Request{Method: "POST", Host: "upload.x.com", Path: "/2/x"}, Request{Method: "POST", Host: "upload.twitter.com", Path: "/2/x"}},
		{"path", Request{Method: "DELETE", Path: "/2/tweets/1"}, Request{Method: "DELETE", Path: "/2/tweets/2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a, b := canonical(t, tt.a), canonical(t, tt.b); a == b {
				t.Fatalf("fingerprints equal: %s", a)
			}
		})
	}
	if got := canonical(t, Request{Method: "POST", Path: "/2/x", Body: `{"n":12345678901234567890123}`}); !strings.Contains(got, "12345678901234567890123") {
		t.Fatalf("large number not kept exactly: %s", got)
	}
}

func TestCanonicalJSONHidesHeaders(t *testing.T) {
	got := canonical(t, Request{Method: "POST", Path: "/2/x", Headers: []KV{{"If-None-Match", "s3cr3t"}}})
	if strings.Contains(got, "s3cr3t") || strings.Contains(got, "If-None-Match") {
		t.Fatalf("fingerprint carries header data: %s", got)
	}
}

func TestCanonicalJSONErrors(t *testing.T) {
	_, err := CanonicalJSON(nil)
	if apperr.CodeOf(err) != apperr.InternalError {
		t.Fatalf("nil: err = %v, want internal_error", err)
	}
	// A Checked built by hand, not by Check, can hold anything.
	for _, body := range []string{"{", `{"a":1,"a":2}`, "\xff"} {
		_, err := CanonicalJSON(&Checked{Method: "POST", Host: "api.x.com", Path: "/2/x", Body: []byte(body)})
		wantBlocked(t, err, "body")
	}
}

func TestSummary(t *testing.T) {
	long := strings.Repeat("é", 300) // 600 bytes: the cut must land on a rune boundary
	c := mustCheck(t, Request{
		Method:  "POST",
		Path:    "/2/tweets",
		Query:   []KV{{"z", "last"}, {"access_token", "tok-secret"}, {"pagination_token", "cursor1"}, {"long", long}, {"a", "first"}},
		Headers: []KV{{"user-agent", "hv-secret-1"}, {"Accept", "hv-secret-2"}},
		Body:    `{"text":"hello"}`,
	})
	s := Summary(c)
	if s["method"] != "POST" || s["host"] != "api.x.com" || s["path"] != "/2/tweets" || s["body_bytes"] != 16 {
		t.Fatalf("Summary scalars = %v", s)
	}
	if got, want := s["header_names"], []string{"Accept", "User-Agent"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("header_names = %v, want %v", got, want)
	}
	q, ok := s["query"].([]map[string]string)
	if !ok || len(q) != 5 {
		t.Fatalf("query = %#v", s["query"])
	}
	wantKeys := []string{"a", "access_token", "long", "pagination_token", "z"}
	for i, kv := range q {
		if kv["key"] != wantKeys[i] {
			t.Fatalf("query[%d] key = %q, want %q", i, kv["key"], wantKeys[i])
		}
	}
	if q[1]["value"] != "[redacted]" {
		t.Fatalf("access_token value = %q, want redacted", q[1]["value"])
	}
	if q[3]["value"] != "cursor1" || q[0]["value"] != "first" {
		t.Fatalf("plain values changed: %v", q)
	}
	if v := q[2]["value"]; len(v) > maxSummaryValue+len("…") || !utf8.ValidString(v) || !strings.HasSuffix(v, "…") {
		t.Fatalf("long value not cut safely: %d bytes, valid=%v", len(v), utf8.ValidString(v))
	}
	dump := fmt.Sprint(s)
	for _, secret := range []string{"hv-secret-1", "hv-secret-2", "tok-secret", "hello"} {
		if strings.Contains(dump, secret) {
			t.Fatalf("Summary leaks %q: %s", secret, dump)
		}
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatalf("Summary is not JSON-encodable: %v", err)
	}
	empty := Summary(mustCheck(t, Request{Method: "GET", Path: "/2/x"}))
	if empty["body_bytes"] != 0 || len(empty["query"].([]map[string]string)) != 0 || len(empty["header_names"].([]string)) != 0 {
		t.Fatalf("empty Summary = %v", empty)
	}
	if len(Summary(nil)) != 0 {
		t.Fatal("Summary(nil) not empty")
	}
}

func TestSecretKey(t *testing.T) {
	for k, want := range map[string]bool{
		"access_token": true, "Refresh_Token": true, "client_secret": true, "password": true, "api_key": true,
		"oauth_signature": true, "pagination_token": false, "next_token": false, "query": false, "ids": false,
	} {
		if got := secretKey(k); got != want {
			t.Errorf("secretKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// reversedJSON re-encodes a JSON document with object keys in descending
// order, to show canonicalisation does not depend on the input order.
func reversedJSON(t testing.TB, b []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	var buf bytes.Buffer
	writeReversed(t, &buf, v)
	return buf.Bytes()
}

func writeReversed(t testing.TB, buf *bytes.Buffer, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Descending order, the opposite of json.Marshal's.
		for i := 0; i < len(keys); i++ {
			for j := i + 1; j < len(keys); j++ {
				if keys[j] > keys[i] {
					keys[i], keys[j] = keys[j], keys[i]
				}
			}
		}
		buf.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(" , ")
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteString(" : ")
			writeReversed(t, buf, x[k])
		}
		buf.WriteString(" }")
	case []any:
		buf.WriteString("[")
		for i, e := range x {
			if i > 0 {
				buf.WriteString(",")
			}
			writeReversed(t, buf, e)
		}
		buf.WriteString("]")
	default:
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatalf("marshal %v: %v", x, err)
		}
		buf.Write(b)
	}
}

func TestReversedJSONHelper(t *testing.T) {
	got := string(reversedJSON(t, []byte(`{"a":1,"c":{"x":[1,{"m":2,"n":3}]},"b":"s"}`)))
	want := `{ "c" : { "x" : [1,{ "n" : 3 , "m" : 2 }] } , "b" : "s" , "a" : 1 }`
	if got != want {
		t.Fatalf("reversedJSON = %s, want %s", got, want)
	}
}
