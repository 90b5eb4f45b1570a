package xsim

import (
	"testing"
	"time"
)

func TestBillingReadsDedupPerUTCDay(t *testing.T) {
	e := newEnv(t)
	id := e.someTweet()
	p := Prices()
	e.get("/2/tweets/" + id)
	e.get("/2/tweets/" + id) // same post, same day: free
	b := e.s.Billing()
	if b.Units[BillPostRead] != 1 || b.Micros != p[BillPostRead] {
		t.Fatalf("after two reads of one post: %+v", b)
	}
	// Expanding the author bills one user read.
	e.get("/2/tweets/" + id + "?expansions=author_id")
	if b := e.s.Billing(); b.Units[BillUserRead] != 1 || b.Units[BillPostRead] != 1 {
		t.Fatalf("expansion billing: %+v", b)
	}
	// Next UTC day the same post is billed again.
	e.clock.Advance(13 * time.Hour)
	e.token, _, _ = e.s.IssueToken("", e.s.AllScopes())
	e.get("/2/tweets/" + id)
	if b := e.s.Billing(); b.Units[BillPostRead] != 2 {
		t.Fatalf("next day: %+v", b)
	}
	// Errors are free.
	before := e.s.Billing().Micros
	e.get("/2/tweets/1")
	e.get("/2/tweets/search/recent?query=(")
	if e.s.Billing().Micros != before {
		t.Fatal("failed reads were billed")
	}
}

func TestBillingWrites(t *testing.T) {
	e := newEnv(t)
	p := Prices()
	e.post("plain post")
	e.post("post with https://example.com link")
	id := e.someTweet()
	e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": id})
	e.do("DELETE", "/2/users/"+e.me+"/likes/"+id, nil)
	e.do("POST", "/2/users/"+e.me+"/bookmarks", map[string]any{"tweet_id": id})
	b := e.s.Billing()
	want := map[string]int64{BillContentCreate: 1, BillContentURL: 1, BillInteraction: 1, BillInteractionDel: 1, BillBookmark: 1}
	var total int64
	for k, n := range want {
		if b.Units[k] != n {
			t.Errorf("%s units = %d, want %d", k, b.Units[k], n)
		}
		total += n * p[k]
	}
	if b.Micros != total {
		t.Fatalf("total = %d, want %d", b.Micros, total)
	}
	if p[BillContentURL] <= p[BillContentCreate] {
		t.Fatal("posts with a URL must cost more")
	}
	// Refused writes are free.
	e.do("POST", "/2/tweets", map[string]any{"text": "plain post"})
	if e.s.Billing().Micros != total {
		t.Fatal("refused duplicate was billed")
	}
}

func TestUsageEndpoint(t *testing.T) {
	e := newEnv(t)
	e.get("/2/tweets/search/recent?query=rust&max_results=10")
	e.post("usage check")
	r := e.get("/2/usage/tweets")
	wantStatus(t, r, 200)
	d := r.data()
	days := d["daily_project_usage"].(map[string]any)["usage"].([]any)
	if len(days) != 7 {
		t.Fatalf("days = %d", len(days))
	}
	last := days[6].(map[string]any)
	if last["date"] != "2026-03-10T00:00:00.000Z" || last["usage"] == "0" {
		t.Fatalf("today = %v", last)
	}
	bill := d["billing"].(map[string]any)
	want := formatUSD(e.s.Billing().Micros)
	if bill["total_usd"] != want || bill["currency"] != "USD" {
		t.Fatalf("billing = %v, want total %s", bill, want)
	}
	if d["project_usage"] != last["usage"] {
		t.Fatalf("project_usage %v vs today %v", d["project_usage"], last["usage"])
	}
	wantProblem(t, e.get("/2/usage/tweets?days=0"), 400, typeInvalidRequest)
	wantProblem(t, e.get("/2/usage/tweets?usage.fields=nope"), 400, typeInvalidRequest)
	if r := e.get("/2/usage/tweets?days=1"); len(r.data()["daily_project_usage"].(map[string]any)["usage"].([]any)) != 1 {
		t.Fatalf("days=1: %s", r.raw)
	}
}

func TestFormatUSD(t *testing.T) {
	for micros, want := range map[int64]string{0: "0.000000", 5000: "0.005000", 1_200_000: "1.200000"} {
		if got := formatUSD(micros); got != want {
			t.Errorf("formatUSD(%d) = %s, want %s", micros, got, want)
		}
	}
}
