package actions

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xrequest"
)

func TestAuditSummaryNeverHoldsHeaderValues(t *testing.T) {
	e := newXEnv(t)
	const secret = "trace-secret-987"
	p := RawParams{Method: "POST", Host: "api.x.com", Path: "/2/tweets", Body: `{"text":"with a header"}`,
		Headers: []xrequest.KV{{Key: "User-Agent", Value: secret}},
		Query:   []xrequest.KV{{Key: "expansions", Value: "author_id"}}}
	r := e.do("x_post", p)
	summary := e.auditSummary(r.CorrelationID)
	if strings.Contains(summary, secret) {
		t.Fatalf("params_summary holds a header value: %s", summary)
	}
	var s struct {
		Method      string              `json:"method"`
		Path        string              `json:"path"`
		HeaderNames []string            `json:"header_names"`
		Query       []map[string]string `json:"query"`
		BodyBytes   int                 `json:"body_bytes"`
	}
	if err := json.Unmarshal([]byte(summary), &s); err != nil {
		t.Fatalf("params_summary is not JSON: %v: %s", err, summary)
	}
	if s.Method != "POST" || s.Path != "/2/tweets" || len(s.HeaderNames) != 1 || !strings.EqualFold(s.HeaderNames[0], "user-agent") ||
		s.BodyBytes == 0 || len(s.Query) != 1 || s.Query[0]["value"] != "author_id" {
		t.Fatalf("params_summary %s", summary)
	}
	// With an allowing policy nothing else stores the parameters either.
	if strings.Contains(storetest.AllText(t, e.ctx, e.db.DB), secret) {
		t.Fatal("a header value reached the database")
	}
}

func TestAuditSummaryOfLongCJKAndEmojiThreadIsValidUTF8(t *testing.T) {
	e := newXEnv(t)
	for _, tc := range []struct {
		unit string
		n    int
	}{
		{"漢", 140}, {"😀", 140},
		// A ZWJ family weighs 2 for twitter-text; the emulator counts each
		// code point, so stay within its stricter count.
		{"👩‍👩‍👧", 35},
	} {
		tweet := strings.Repeat(tc.unit, tc.n)
		if err := CheckText("tweet", tweet, -1, false); err != nil {
			t.Fatalf("test tweet of %q: %v", tc.unit, err)
		}
		tweets := make([]string, 6)
		for i := range tweets {
			tweets[i] = string(rune('a'+i)) + tweet[len(tc.unit):]
		}
		r := e.do("x_post_thread", ThreadParams{Tweets: tweets})
		s := e.auditSummary(r.CorrelationID)
		if !utf8.ValidString(s) || len(s) > 1000 || len(s) < 990 {
			t.Fatalf("%q: params_summary of %d bytes, valid UTF-8 %v", tc.unit, len(s), utf8.ValidString(s))
		}
		if !strings.HasPrefix(s, `{"tweets":["a`) {
			t.Fatalf("%q: params_summary starts %q", tc.unit, s[:20])
		}
	}
}

// FuzzActionParams feeds arbitrary stored parameters to every action's
// parsing hooks: they read agent input and database rows, and must answer
// with an error, never a panic.
func FuzzActionParams(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi"}`, `{"text":"hi","media_ids":["1","2"]}`, `{"tweet_id":"123"}`, `{"target_user_id":"9"}`,
		`{"tweets":["a","b"],"media_ids":[["1"],[]]}`,
		`{"method":"POST","host":"api.x.com","path":"/2/tweets","body":"{\"text\":\"x\"}","headers":[{"key":"X-A","value":"b"}]}`,
		`{"method":"DELETE","host":"api.x.com","path":"/2/tweets/123"}`, `{"text":1}`, `[]`, `null`, `{`,
	} {
		f.Add([]byte(s))
	}
	var acts = All(Deps{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		params := json.RawMessage(raw)
		for _, a := range acts {
			if a.Tool == "x_upload_media" {
				continue // resolves paths on the file system
			}
			_ = a.Validate(params)
			if a.Classify != nil {
				_ = a.Classify(params)
			}
			if a.Cost != nil {
				_ = a.Cost(params)
			}
			if a.Summary != nil {
				if _, err := json.Marshal(a.Summary(params)); err != nil {
					t.Fatalf("%s summary cannot be encoded: %v", a.Tool, err)
				}
			}
			if a.Fingerprint != nil {
				_, _ = a.Fingerprint(params)
			}
		}
	})
}
