package xsim

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
)

// benchLikes likes posts through the handler of an emulator that keeps its
// world in a state file, from clients goroutines per CPU at once: the
// sandbox's hot path when agents work in it.
func benchLikes(b *testing.B, clients int, every time.Duration) {
	opts := DefaultOptions()
	opts.RateLimits = false
	opts.Seed = 42
	opts.World = DemoWorldAt(42, testEpoch)
	opts.Now = clock.NewFake(testEpoch).Now
	opts.StateFile = filepath.Join(b.TempDir(), "world.json")
	opts.SaveEvery = every
	s := New(opts)
	b.Cleanup(func() { _ = s.Close() })
	tok, _, _ := s.IssueToken("", s.AllScopes())
	me := s.DemoUserID()
	var ids []string
	for _, t := range s.World().Tweets {
		if t.AuthorID != me && t.RetweetOf == "" {
			ids = append(ids, t.ID)
		}
	}
	h := s.Handler()
	var n atomic.Int64
	b.SetParallelism(clients)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := ids[int(n.Add(1))%len(ids)]
			req := httptest.NewRequest(http.MethodPost, "/2/users/"+me+"/likes", strings.NewReader(`{"tweet_id":"`+id+`"}`))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Errorf("like: %d %s", rec.Code, rec.Body)
				return
			}
		}
	})
}

func BenchmarkLikesWithStateFile(b *testing.B)           { benchLikes(b, 1, 0) }
func BenchmarkLikesWithStateFileParallel16(b *testing.B) { benchLikes(b, 16, 0) }

// The same with writes coalesced to one per 50 ms.
func BenchmarkLikesCoalesced(b *testing.B)           { benchLikes(b, 1, 50*time.Millisecond) }
func BenchmarkLikesCoalescedParallel16(b *testing.B) { benchLikes(b, 16, 50*time.Millisecond) }
