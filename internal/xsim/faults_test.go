package xsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawPost sends a create-post request and returns the raw outcome without
// failing on transport errors.
func (e *env) rawPost(ctx context.Context, text string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", e.base+"/2/tweets", strings.NewReader(`{"text":"`+text+`"}`))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := e.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

func TestFaultServerErrorNext(t *testing.T) {
	e := newEnv(t)
	e.s.SetFault("POST /2/tweets", Fault{ErrorNext: 2, ErrorStatus: 502})
	for i := 0; i < 2; i++ {
		r := e.do("POST", "/2/tweets", map[string]any{"text": "flaky"})
		wantProblem(t, r, 502, typeInternalError)
	}
	if e.counter(CountTweetsCreated) != 0 {
		t.Fatal("5xx fault applied the write")
	}
	e.post("flaky")
	if e.counter(CountTweetsCreated) != 1 {
		t.Fatal("fault did not expire")
	}
}

func TestFaultServerErrorProbabilityIsSeeded(t *testing.T) {
	run := func() []int {
		e := newEnv(t)
		e.s.SetFault("GET /2/users/me", Fault{ErrorProbability: 0.5})
		var out []int
		for i := 0; i < 20; i++ {
			out = append(out, e.get("/2/users/me").status)
		}
		return out
	}
	a, b := run(), run()
	fails := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different outcomes: %v vs %v", a, b)
		}
		if a[i] == 503 {
			fails++
		}
	}
	if fails == 0 || fails == 20 {
		t.Fatalf("probability 0.5 gave %d/20 failures", fails)
	}
}

func TestFaultRateLimitBurst(t *testing.T) {
	e := newEnv(t)
	e.s.SetFault("GET /2/users/:id", Fault{RateLimitNext: 1})
	r := e.get("/2/users/" + e.me)
	wantProblem(t, r, 429, typeBlank)
	if r.header.Get("x-rate-limit-remaining") != "0" || r.header.Get("x-rate-limit-reset") == "" {
		t.Fatalf("429 headers: %v", r.header)
	}
	wantStatus(t, e.get("/2/users/"+e.me), 200)
	// Other routes are unaffected.
	e.s.SetFault("GET /2/users/:id", Fault{RateLimitNext: 1})
	wantStatus(t, e.get("/2/tweets/"+e.someTweet()), 200)
}

func TestFaultLatency(t *testing.T) {
	e := newEnv(t)
	// A second of latency: a request the fault still delays takes at least
	// that, which no scheduling delay of a loaded machine is mistaken for.
	e.s.SetFault("GET /2/users/me", Fault{Latency: time.Second})
	start := time.Now()
	wantStatus(t, e.get("/2/users/me"), 200)
	if d := time.Since(start); d < time.Second {
		t.Fatalf("latency not applied: %v", d)
	}
	e.s.ClearFaults()
	start = time.Now()
	e.get("/2/users/me")
	if d := time.Since(start); d >= time.Second {
		t.Fatalf("ClearFaults left latency: %v", d)
	}
}

func TestFaultReset(t *testing.T) {
	e := newEnv(t)
	e.s.SetFault("POST /2/tweets", Fault{ResetNext: 1})
	_, _, err := e.rawPost(context.Background(), "reset me")
	if err == nil {
		t.Fatal("expected a transport error")
	}
	if e.counter(CountTweetsCreated) != 0 {
		t.Fatal("reset fault applied the write")
	}
	e.post("reset me")
}

func TestFaultTimeoutHangsUntilClientGivesUp(t *testing.T) {
	e := newEnv(t)
	e.s.SetFault("POST /2/tweets", Fault{TimeoutNext: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	_, _, err := e.rawPost(ctx, "slow")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	// Measured against the deadline itself: a start time taken after the
	// context was made would be a little late and could make an on-time
	// return look early.
	if now := time.Now(); now.Before(deadline) {
		t.Fatalf("returned %v before the client deadline", deadline.Sub(now))
	}
	if e.counter(CountTweetsCreated) != 0 {
		t.Fatal("timeout fault applied the write")
	}
}

func TestFaultTimeoutReleasedByClose(t *testing.T) {
	// The handler's log line is written when it returns: Close must end
	// the hang itself, not only drop the client's connection.
	handled := make(chan string, 4)
	e := newEnv(t, func(o *Options) {
		o.Logf = func(format string, args ...any) { handled <- fmt.Sprintf(format, args...) }
	})
	arrived := make(chan struct{})
	e.s.SetFault("GET /2/users/me", Fault{TimeoutNext: 1, OnArrive: func(context.Context) { close(arrived) }})
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("GET", e.base+"/2/users/me", nil)
		req.Header.Set("Authorization", "Bearer "+e.token)
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never reached the emulator")
	}
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	for done != nil || handled != nil {
		select {
		case <-done:
			done = nil
		case line := <-handled:
			if !strings.Contains(line, "/2/users/me") {
				t.Fatalf("unexpected request logged: %s", line)
			}
			handled = nil
		case <-time.After(5 * time.Second):
			t.Fatalf("hung request not released by Close (client released: %t, handler returned: %t)", done == nil, handled == nil)
		}
	}
}

func TestFaultTruncatedAndMalformed(t *testing.T) {
	e := newEnv(t)
	for _, f := range []Fault{{TruncateNext: 1}, {MalformedNext: 1}} {
		e.s.SetFault("POST /2/tweets", f)
		before := e.counter(CountTweetsCreated)
		res, body, err := e.rawPost(context.Background(), "broken body "+time.Now().String())
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 201 {
			t.Fatalf("status = %d", res.StatusCode)
		}
		var v any
		if json.Unmarshal(body, &v) == nil {
			t.Fatalf("body is valid JSON: %s", body)
		}
		if e.counter(CountTweetsCreated) != before+1 {
			t.Fatal("write not applied under a body fault")
		}
	}
}

func TestFaultApplyThenFail(t *testing.T) {
	e := newEnv(t)
	e.s.SetFault("POST /2/tweets", Fault{ApplyThenFailNext: 1})
	res, _, err := e.rawPost(context.Background(), "applied anyway")
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 503 {
		t.Fatalf("status = %d", res.StatusCode)
	}
	if e.counter(CountTweetsCreated) != 1 {
		t.Fatal("apply-then-fail did not apply")
	}
	// A naive retry would now be refused as a duplicate: proof it happened.
	r := e.do("POST", "/2/tweets", map[string]any{"text": "applied anyway"})
	wantProblem(t, r, 403, typeBlank)

	e.s.SetFault("POST /2/users/:id/likes", Fault{ApplyThenFailNext: 1, ApplyThenReset: true})
	_, err = e.hc.Do(func() *http.Request {
		req, _ := http.NewRequest("POST", e.base+"/2/users/"+e.me+"/likes", strings.NewReader(`{"tweet_id":"`+e.someTweet()+`"}`))
		req.Header.Set("Authorization", "Bearer "+e.token)
		req.Header.Set("Content-Type", "application/json")
		return req
	}())
	if err == nil {
		t.Fatal("expected a reset")
	}
	if e.counter(CountLikes) != 1 {
		t.Fatal("apply-then-reset did not apply")
	}
}

func TestFaultClientNotEnrolledPerRoute(t *testing.T) {
	e := newEnv(t)
	e.s.SetFault("GET /2/tweets/search/recent", Fault{ClientNotEnrolled: true})
	wantProblem(t, e.get("/2/tweets/search/recent?query=rust"), 403, typeClientForbidden)
	wantStatus(t, e.get("/2/users/me"), 200)
}

func TestFaultPatternMatching(t *testing.T) {
	cases := []struct {
		pattern, method, path string
		want                  bool
	}{
		{"POST /2/tweets", "POST", "/2/tweets", true},
		{"POST /2/tweets", "GET", "/2/tweets", false},
		{"/2/tweets", "GET", "/2/tweets", true},
		{"* /2/users/*/likes", "POST", "/2/users/1/likes", true},
		{"DELETE /2/users/:id/likes/:tweet_id", "DELETE", "/2/users/1/likes/2", true},
		{"DELETE /2/users/{id}/likes/{tweet_id}", "DELETE", "/2/users/1/likes", false},
		{"GET /2/users/{id}", "GET", "/2/users/me", true},
	}
	for _, tc := range cases {
		s := New(Options{World: DemoWorldAt(1, testEpoch), Now: func() time.Time { return testEpoch }})
		s.SetFault(tc.pattern, Fault{})
		if got := s.faults[0].matches(tc.method, tc.path); got != tc.want {
			t.Errorf("%q vs %s %s = %v", tc.pattern, tc.method, tc.path, got)
		}
	}
}

func TestFaultOnOAuthToken(t *testing.T) {
	e := newEnv(t)
	_, refresh, _ := e.s.IssueToken("", []string{"tweet.read", "users.read", "offline.access"})
	e.s.SetFault("POST /2/oauth2/token", Fault{ApplyThenFailNext: 1})
	form := "grant_type=refresh_token&client_id=" + DefaultClientID + "&refresh_token=" + refresh
	req, _ := http.NewRequest("POST", e.base+"/2/oauth2/token", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r := e.send(req)
	wantStatus(t, r, 503)
	// The refresh was consumed even though the answer was lost.
	req, _ = http.NewRequest("POST", e.base+"/2/oauth2/token", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	wantStatus(t, e.send(req), 400)
}
