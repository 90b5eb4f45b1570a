package xapi

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// FuzzClassify feeds arbitrary statuses, reset headers and bodies to the
// classifier: it must never panic, and its message must stay short, valid
// UTF-8, free of control characters and free of fields X did not put in
// title/detail/type/message.
func FuzzClassify(f *testing.F) {
	f.Add(429, "1773144900", []byte(`{"title":"Too Many Requests","detail":"Too Many Requests","type":"about:blank","status":429}`))
	f.Add(403, "", []byte(`{"detail":"You are not allowed to create a Tweet with duplicate content.","type":"about:blank","title":"Forbidden","status":403}`))
	f.Add(403, "", []byte(`{"errors":[{"message":"Your account is suspended and is not permitted to access this feature","code":64}]}`))
	f.Add(401, "", []byte(`{"title":"Unauthorized","type":"about:blank","status":401,"detail":"Unauthorized"}`))
	f.Add(404, "", []byte(`{"errors":[{"code":"34","message":5}],"title":null}`))
	f.Add(500, "x", []byte(`<html>oops</html>`))
	f.Add(400, "", []byte(`{"error":"invalid_request","error_description":"Value passed for the token was invalid."}`))
	f.Add(0, "-1", []byte(`{"title":"\u0000\n\r","status":"403"}`))
	f.Fuzz(func(t *testing.T, status int, reset string, body []byte) {
		h := http.Header{}
		h.Set("x-rate-limit-reset", reset)
		h.Set("x-rate-limit-remaining", "0")
		e := Classify(status, h, body, testEpoch)
		if e == nil {
			t.Fatal("nil error")
		}
		if !utf8.ValidString(e.Message) {
			t.Fatalf("invalid UTF-8: %q", e.Message)
		}
		if strings.ContainsAny(e.Message, "\n\r\x00\x1b") {
			t.Fatalf("control character in %q", e.Message)
		}
		// Fixed lead text plus at most maxXMessage bytes from X.
		if len(e.Message) > maxXMessage+160 {
			t.Fatalf("message too long (%d): %q", len(e.Message), e.Message)
		}
		if strings.Contains(e.Message, "SECRET-FIELD") && !strings.Contains(string(body), "SECRET-FIELD") {
			t.Fatalf("invented text")
		}
		want := map[int]apperr.Code{429: apperr.XRateLimited, 401: apperr.XAuthExpired, 404: apperr.XNotFound}
		if c, ok := want[status]; ok && e.Code != c {
			t.Fatalf("status %d classified %s", status, e.Code)
		}
		if status == 403 && e.Code != apperr.XForbidden && e.Code != apperr.XDuplicateContent && e.Code != apperr.XAccountRestricted {
			t.Fatalf("403 classified %s", e.Code)
		}
		if v, ok := e.Extra["retry_after_ms"]; ok {
			if ms, _ := v.(int64); ms < 0 {
				t.Fatalf("negative retry_after_ms %v", v)
			}
		}
	})
}

// A field X sends outside title/detail/type/message never reaches the
// message, whatever else the body holds.
func TestClassifyIgnoresOtherFields(t *testing.T) {
	e := Classify(403, nil, []byte(`{"title":"Forbidden","client_id":"SECRET-FIELD","registration_url":"SECRET-FIELD","errors":[{"parameters":{"SECRET-FIELD":1}}]}`), testEpoch)
	if strings.Contains(e.Message, "SECRET-FIELD") {
		t.Fatalf("message %q carries a non-message field", e.Message)
	}
}
