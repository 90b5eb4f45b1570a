package xspec

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLoadRealSpec(t *testing.T) {
	start := time.Now()
	s := FromEnv(t)
	t.Logf("loaded in %v", time.Since(start))
	if !s.HasOperation("GET", "/2/tweets/{id}") || s.HasOperation("GET", "/2/nope") {
		t.Fatal("HasOperation")
	}
	r, _ := http.NewRequest("GET", "http://127.0.0.1:1/2/tweets/123?tweet.fields=author_id", nil)
	if err := s.ValidateRequest(r, nil); err != nil {
		t.Fatal(err)
	}
	r, _ = http.NewRequest("GET", "http://127.0.0.1:1/2/tweets/abc", nil)
	if err := s.ValidateRequest(r, nil); err == nil {
		t.Fatal("non-numeric id accepted")
	}
	r, _ = http.NewRequest("POST", "http://127.0.0.1:1/2/tweets", strings.NewReader(`{"text":"hi"}`))
	r.Header.Set("Content-Type", "application/json")
	if err := s.ValidateRequest(r, []byte(`{"text":"hi"}`)); err != nil {
		t.Fatal(err)
	}
}

func TestResponseViolationsAreCaught(t *testing.T) {
	s := FromEnv(t)
	get, _ := http.NewRequest("GET", "http://127.0.0.1:1/2/tweets/123", nil)
	post, _ := http.NewRequest("POST", "http://127.0.0.1:1/2/tweets", nil)
	jsonH := http.Header{"Content-Type": {"application/json"}}
	probH := http.Header{"Content-Type": {"application/problem+json"}}
	cases := []struct {
		name   string
		req    *http.Request
		status int
		header http.Header
		body   string
		ok     bool
	}{
		{"good tweet", get, 200, jsonH, `{"data":{"id":"123","text":"hi","edit_history_tweet_ids":["123"]}}`, true},
		{"metrics missing required", get, 200, jsonH, `{"data":{"id":"123","text":"hi","public_metrics":{"like_count":1}}}`, false},
		{"data wrong type", get, 200, jsonH, `{"data":[1,2]}`, false},
		{"create without id", post, 201, jsonH, `{"data":{"text":"x"}}`, false},
		{"good create", post, 201, jsonH, `{"data":{"id":"1","text":"x"}}`, true},
		{"spec problem ok", get, 400, probH, `{"type":"https://api.x.com/2/problems/invalid-request","title":"Invalid Request","detail":"bad"}`, true},
		{"spec problem missing detail", get, 400, probH, `{"type":"https://api.x.com/2/problems/invalid-request","title":"Invalid Request"}`, false},
		{"blank problem ok", get, 401, probH, `{"type":"about:blank","title":"Unauthorized","detail":"Unauthorized","status":401}`, true},
		{"blank problem wrong status", get, 401, probH, `{"type":"about:blank","title":"Unauthorized","detail":"Unauthorized","status":403}`, false},
		{"blank problem no title", get, 429, probH, `{"type":"about:blank","detail":"x"}`, false},
		{"error json without code", get, 500, jsonH, `{"message":"x"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.ValidateResponse(tc.req, tc.status, tc.header, []byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				var v *Violation
				if !errors.As(err, &v) || !v.Response || v.Status != tc.status {
					t.Fatalf("not a response violation: %#v", err)
				}
			}
		})
	}
}

func TestUnknownRouteIsAViolation(t *testing.T) {
	s := FromEnv(t)
	r, _ := http.NewRequest("GET", "http://127.0.0.1:1/2/not/a/route", nil)
	err := s.ValidateRequest(r, nil)
	var v *Violation
	if !errors.As(err, &v) || v.Response {
		t.Fatalf("err = %v", err)
	}
	if !IsRouteError(err) {
		t.Fatalf("not a route error: %v", err)
	}
	if _, err := s.Route(r); err == nil {
		t.Fatal("Route found a missing operation")
	}
}

func TestRoundTripperReportsAndPassesThrough(t *testing.T) {
	s := FromEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "POST" {
			w.WriteHeader(201)
			// Echo proves the body reached the server intact; "id" is missing
			// on purpose.
			fmt.Fprintf(w, `{"data":{"text":%q}}`, body)
			return
		}
		fmt.Fprint(w, `{"data":{"id":"5","text":"ok"}}`)
	}))
	defer srv.Close()
	var mu sync.Mutex
	var got []error
	hc := &http.Client{Transport: s.RoundTripper(nil, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, err)
	})}
	res, err := hc.Get(srv.URL + "/2/tweets/5")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if len(got) != 0 {
		t.Fatalf("valid exchange reported: %v", got)
	}
	res, err = hc.Post(srv.URL+"/2/tweets", "application/json", strings.NewReader(`{"text":"hello","bogus":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), `bogus`) {
		t.Fatalf("request body did not reach the server: %s", b)
	}
	if len(got) != 2 {
		t.Fatalf("want a request and a response violation, got %v", got)
	}
	var req, rsp *Violation
	errors.As(got[0], &req)
	errors.As(got[1], &rsp)
	if req == nil || req.Response || rsp == nil || !rsp.Response {
		t.Fatalf("violations = %v", got)
	}
}

func newReq(t *testing.T, method, path string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, "http://127.0.0.1:1"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }
