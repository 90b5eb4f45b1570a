package xapi

import (
	"context"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/xsim"
)

// cpuNow is the process's user+system CPU time. Reported per op next to
// ns/op because wall time on a shared machine swings with other load, while
// CPU time measures the work done (client and in-process emulator alike).
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.Helper()
	if n := b.N; n > 0 {
		b.ReportMetric(float64(cpuNow()-start)/float64(n), "cpu-ns/op")
	}
}

type nopRecorder struct{}

func (nopRecorder) RecordXUsage(context.Context, Usage) error { return nil }

// benchTarget starts the emulator without rate limits and returns its base
// URL, a token and a post id to fetch.
func benchTarget(b *testing.B) (base, token, id string) {
	b.Helper()
	srv := xsim.New(xsim.Options{World: xsim.DemoWorld(1), Seed: 1, RateLimits: false})
	ctx, cancel := context.WithCancel(context.Background())
	base, err := srv.Start(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		_ = srv.Close()
	})
	token, _, _ = srv.IssueToken(srv.DemoUserID(), srv.AllScopes())
	w := srv.World()
	return base, token, w.Tweets[len(w.Tweets)/2].ID
}

// BenchmarkClientGetTweet measures the client's whole path: validation,
// request building, send, rate-limit tracking, classification, usage
// recording (no-op recorder) and decoding.
func BenchmarkClientGetTweet(b *testing.B) {
	base, token, id := benchTarget(b)
	c, err := New(Options{
		BaseURLs: map[string]string{HostAPI: base},
		Tokens:   &fakeTokens{token: token},
		Usage:    nopRecorder{},
		Timeout:  10 * time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := c.GetTweet(ctx, id); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuNow()
	for b.Loop() {
		if _, _, err := c.GetTweet(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkBareHTTPGetTweet is the floor: a plain net/http GET of the same
// URL with the same bearer header, reading the body.
func BenchmarkBareHTTPGetTweet(b *testing.B) {
	base, token, id := benchTarget(b)
	u, _ := parseBaseURL(base)
	target := buildURL(u, "/2/tweets/"+id, tweetQuery())
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	get := func() {
		req, err := http.NewRequest("GET", target, nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("status %d, %v", resp.StatusCode, err)
		}
	}
	get()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuNow()
	for b.Loop() {
		get()
	}
	reportCPU(b, start)
}
