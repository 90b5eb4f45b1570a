package xapi

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func TestClassifyRealXBodies(t *testing.T) {
	now := testEpoch
	rl := http.Header{}
	rl.Set("x-rate-limit-limit", "100")
	rl.Set("x-rate-limit-remaining", "0")
	rl.Set("x-rate-limit-reset", strconv.FormatInt(now.Add(90*time.Second).Unix(), 10))
	cases := []struct {
		name    string
		status  int
		header  http.Header
		body    string
		code    apperr.Code
		has     []string
		hasNot  []string
		retryMS int64
	}{
		{"429 problem", 429, rl,
			`{"title":"Too Many Requests","detail":"Too Many Requests","type":"about:blank","status":429}`,
			apperr.XRateLimited, []string{"Too Many Requests"}, nil, 90000},
		{"401 problem", 401, nil,
			`{"title":"Unauthorized","type":"about:blank","status":401,"detail":"Unauthorized"}`,
			apperr.XAuthExpired, []string{"tuitbot auth", "Unauthorized"}, nil, 0},
		{"403 duplicate", 403, nil,
			`{"detail":"You are not allowed to create a Tweet with duplicate content.","type":"about:blank","title":"Forbidden","status":403}`,
			apperr.XDuplicateContent, []string{"duplicate content"}, nil, 0},
		{"403 duplicate legacy", 403, nil,
			`{"errors":[{"code":187,"message":"Status is a duplicate."}]}`,
			apperr.XDuplicateContent, []string{"Status is a duplicate. (code 187)"}, nil, 0},
		{"403 suspended legacy", 403, nil,
			`{"errors":[{"message":"Your account is suspended and is not permitted to access this feature","code":64}]}`,
			apperr.XAccountRestricted, []string{"suspended"}, nil, 0},
		{"403 locked legacy", 403, nil,
			`{"errors":[{"code":326,"message":"To protect our users from spam and other malicious activity, this account is temporarily locked. Please log in to https://twitter.com to unlock your account."}]}`,
			apperr.XAccountRestricted, []string{"temporarily locked"}, nil, 0},
		{"403 client not enrolled", 403, nil,
			`{"client_id":"2912345","detail":"When authenticating requests to the Twitter API v2 endpoints, you must use keys and tokens from a Twitter developer App that is attached to a Project. You can create a project via the developer portal.","registration_url":"https://developer.twitter.com/en/docs/projects/overview","title":"Client Forbidden","required_enrollment":"Appropriate Level of API Access","reason":"client-not-enrolled","type":"https://api.twitter.com/2/problems/client-forbidden"}`,
			apperr.XForbidden, []string{"Client Forbidden"}, []string{"2912345"}, 0},
		{"403 feature outside the access level", 403, nil,
			`{"client_id":"2912345","detail":"You currently have access to a subset of X API V2 endpoints and limited v1.1 endpoints (e.g. media post, oauth) only. If you need access to this endpoint, you may need a different access level. You can learn more here: https://developer.x.com/en/portal/product","registration_url":"https://developer.x.com/en/portal/product","title":"Client Forbidden","required_enrollment":"Appropriate Level of API Access","reason":"client-not-enrolled","type":"https://api.x.com/2/problems/client-forbidden","status":403}`,
			apperr.XFeatureUnavailable, []string{"higher API access level", "different access level"}, []string{"2912345"}, 0},
		{"403 without the dm scopes", 403, nil,
			`{"title":"Forbidden","detail":"Forbidden: the access token is missing the required scope(s): dm.write. Re-authorize the app with the required scopes (insufficient scope).","type":"about:blank","status":403}`,
			apperr.XForbidden, []string{"dm.write"}, nil, 0},
		{"403 unsupported authentication", 403, nil,
			`{"title":"Unsupported Authentication","detail":"Authenticating with OAuth 2.0 Application-Only is forbidden for this endpoint.  Supported authentication types are [OAuth 1.0a User Context, OAuth 2.0 User Context].","type":"https://api.twitter.com/2/problems/unsupported-authentication","status":403}`,
			apperr.XForbidden, []string{"Unsupported Authentication"}, nil, 0},
		{"403 blocked is not locked", 403, nil,
			`{"detail":"You cannot like this Tweet because you have been blocked by the author.","type":"about:blank","title":"Forbidden","status":403}`,
			apperr.XForbidden, []string{"blocked by the author"}, nil, 0},
		{"403 not permitted", 403, nil,
			`{"detail":"You are not permitted to perform this action.","type":"about:blank","title":"Forbidden","status":403}`,
			apperr.XForbidden, []string{"not permitted"}, nil, 0},
		{"404 problem", 404, nil,
			`{"title":"Not Found Error","detail":"Could not find user with id: [1].","type":"https://api.twitter.com/2/problems/resource-not-found","resource_type":"user","resource_id":"1","parameter":"id","value":"1"}`,
			apperr.XNotFound, []string{"Could not find user"}, nil, 0},
		{"400 invalid request", 400, nil,
			`{"errors":[{"parameters":{"max_results":["1"]},"message":"The max_results query parameter value [1] is not between 10 and 100"}],"title":"Invalid Request","detail":"One or more parameters to your request was invalid.","type":"https://api.twitter.com/2/problems/invalid-request"}`,
			apperr.XAPIError, []string{"Invalid Request", "X answered 400", "invalid-request"}, nil, 0},
		{"400 oauth", 400, nil,
			`{"error":"invalid_request","error_description":"Value passed for the token was invalid."}`,
			apperr.XAPIError, []string{"invalid_request", "token was invalid"}, nil, 0},
		{"503 problem", 503, nil,
			`{"title":"Service Unavailable","detail":"Service is temporarily unavailable.","type":"about:blank","status":503}`,
			apperr.XAPIError, []string{"503", "Service Unavailable"}, nil, 0},
		{"502 html", 502, http.Header{"Set-Cookie": {"guest_id=SECRETCOOKIE"}},
			`<html><body>upstream secret-internal-hostname</body></html>`,
			apperr.XAPIError, []string{"X answered 502"}, []string{"secret-internal-hostname", "SECRETCOOKIE", "<html>"}, 0},
		{"429 without headers", 429, nil, ``, apperr.XRateLimited, nil, nil, -1},
		{"301", 301, http.Header{"Location": {"https://elsewhere.example"}}, ``, apperr.XAPIError, []string{"redirect"}, []string{"elsewhere"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := Classify(tc.status, tc.header, []byte(tc.body), now)
			if e.Code != tc.code {
				t.Fatalf("code = %s, want %s (%s)", e.Code, tc.code, e.Message)
			}
			for _, s := range tc.has {
				if !strings.Contains(e.Error(), s) {
					t.Errorf("message %q lacks %q", e.Message, s)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(e.Message, s) {
					t.Errorf("message %q leaks %q", e.Message, s)
				}
			}
			if e.Extra["http_status"] != tc.status {
				t.Errorf("http_status = %v", e.Extra["http_status"])
			}
			switch {
			case tc.retryMS > 0:
				if e.Extra["retry_after_ms"] != tc.retryMS {
					t.Errorf("retry_after_ms = %v, want %d", e.Extra["retry_after_ms"], tc.retryMS)
				}
				if e.Extra["rate_limit_reset"] != now.Add(90*time.Second).Format(time.RFC3339) {
					t.Errorf("rate_limit_reset = %v", e.Extra["rate_limit_reset"])
				}
			case tc.retryMS < 0:
				if _, ok := e.Extra["retry_after_ms"]; ok {
					t.Errorf("retry_after_ms invented without a reset header")
				}
			}
			if !e.Retryable() && e.Code == apperr.XRateLimited {
				t.Errorf("x_rate_limited must be retryable")
			}
		})
	}
}

func TestClassifyTruncatesRuneSafely(t *testing.T) {
	detail := strings.Repeat("日本語の投稿🙂", 200)
	e := Classify(403, nil, []byte(`{"title":"Forbidden","detail":"`+detail+`"}`), testEpoch)
	if !utf8.ValidString(e.Message) {
		t.Fatalf("message is not valid UTF-8")
	}
	xpart := e.Message[strings.Index(e.Message, ": ")+2:]
	if len(xpart) > maxXMessage {
		t.Fatalf("X part is %d bytes, cap %d", len(xpart), maxXMessage)
	}
	if !strings.HasSuffix(e.Message, "…") {
		t.Fatalf("truncation not marked: %q", e.Message)
	}
}

func TestClassifyStripsControlCharacters(t *testing.T) {
	e := Classify(400, nil, []byte(`{"title":"Bad\nINFO forged log line\r\u001b[31m","detail":"x"}`), testEpoch)
	if strings.ContainsAny(e.Message, "\n\r\x1b") {
		t.Fatalf("control characters kept: %q", e.Message)
	}
}

func TestClassifyProblemsOfLookups(t *testing.T) {
	cases := []struct {
		typ  string
		code apperr.Code
	}{
		{"https://api.twitter.com/2/problems/resource-not-found", apperr.XNotFound},
		{"https://api.x.com/2/problems/not-authorized-for-resource", apperr.XForbidden},
		{"https://api.x.com/2/problems/resource-unavailable", apperr.XForbidden},
		{"https://api.x.com/2/problems/internal-error", apperr.XAPIError},
	}
	for _, tc := range cases {
		e := classifyProblems([]Problem{{Title: "T", Detail: "D", Type: tc.typ}})
		if e.Code != tc.code {
			t.Errorf("%s: code %s, want %s", tc.typ, e.Code, tc.code)
		}
	}
	if classifyProblems(nil).Code != apperr.XAPIError {
		t.Errorf("empty problems must be an api error")
	}
}

func TestTruncate(t *testing.T) {
	cases := []struct {
		in  string
		max int
	}{{"hello", 10}, {"hello world", 5}, {"ééééé", 4}, {"🙂🙂🙂", 5}, {"abc", 0}}
	for _, tc := range cases {
		got := truncate(tc.in, tc.max)
		if !utf8.ValidString(got) {
			t.Errorf("truncate(%q,%d) = %q invalid", tc.in, tc.max, got)
		}
		if len(tc.in) <= tc.max && got != tc.in {
			t.Errorf("truncate changed a short string: %q", got)
		}
		if len(tc.in) > tc.max && len(got) > max(tc.max, len("…")) {
			t.Errorf("truncate(%q,%d) = %q too long", tc.in, tc.max, got)
		}
	}
}

// TestMissingDMScopesSayHowToGrantThem: X's 403 for a token without the
// optional direct-message scopes tells how to log in with them.
func TestMissingDMScopesSayHowToGrantThem(t *testing.T) {
	body := `{"title":"Forbidden","detail":"Forbidden: the access token is missing the required scope(s): dm.write. Re-authorize the app with the required scopes (insufficient scope).","type":"about:blank","status":403}`
	e := Classify(403, nil, []byte(body), testEpoch)
	if e.Code != apperr.XForbidden || !strings.Contains(e.Error(), "tuitbot auth --scopes +dm") {
		t.Fatalf("classified as %s: %q, want x_forbidden with the +dm login hint", e.Code, e.Error())
	}
	other := `{"title":"Forbidden","detail":"Forbidden: the access token is missing the required scope(s): tweet.write. Re-authorize the app with the required scopes (insufficient scope).","type":"about:blank","status":403}`
	if e := Classify(403, nil, []byte(other), testEpoch); strings.Contains(e.Error(), "+dm") {
		t.Fatalf("a missing tweet.write scope hints %q", e.Error())
	}
}
