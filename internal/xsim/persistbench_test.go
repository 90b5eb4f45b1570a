package xsim

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
)

// grownWorld is the demo world with extra posts by the demo user's
// neighbours, up to about posts in all: the world a sandbox reaches after
// agents have worked in it for a while.
func grownWorld(posts int) *World {
	w := DemoWorldAt(42, testEpoch)
	var authors []string
	for _, u := range w.Users {
		if u.ID != w.DemoUserID {
			authors = append(authors, u.ID)
		}
	}
	next := w.Sequence
	for _, t := range w.Tweets {
		if n, _ := strconv.ParseInt(t.ID, 10, 64); n > next {
			next = n
		}
	}
	at := testEpoch.Add(-time.Hour)
	for i := len(w.Tweets); i < posts; i++ {
		next++
		id := strconv.FormatInt(next, 10)
		w.Tweets = append(w.Tweets, Tweet{ID: id, AuthorID: authors[i%len(authors)], ConversationID: id, Lang: "en",
			Text: fmt.Sprintf("post %d of a grown world, long enough to look like a real one about Go and agents", i), CreatedAt: at})
	}
	w.Sequence = next
	return w
}

// likeTargets are up to a thousand posts the demo user may like in w,
// the newest: however large the world, the user's own likes stay as many,
// so that what is measured is the world's size alone.
func likeTargets(w *World) []string {
	var ids []string
	for i := len(w.Tweets) - 1; i >= 0 && len(ids) < 1000; i-- {
		if t := w.Tweets[i]; t.AuthorID != w.DemoUserID && t.RetweetOf == "" {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// likeServer starts an emulator on a fresh state file holding w.
func likeServer(b *testing.B, w *World) (s *Server, base, tok string) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "world.json")
	if err := SaveWorld(path, w); err != nil {
		b.Fatal(err)
	}
	loaded, err := LoadWorld(path)
	if err != nil {
		b.Fatal(err)
	}
	opts := DefaultOptions()
	opts.RateLimits = false
	opts.World = loaded
	opts.Now = clock.NewFake(testEpoch).Now
	opts.StateFile = path
	s = New(opts)
	base, err = s.Start(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	tok, _, _ = s.IssueToken("", s.AllScopes())
	return s, base, tok
}

// likeOnce likes the n-th target, or takes the like back on the rounds
// after one that liked it, so every call changes the world.
func likeOnce(hc *http.Client, base, tok, me string, ids []string, n int) error {
	id := ids[n%len(ids)]
	var req *http.Request
	if (n/len(ids))%2 == 0 {
		req, _ = http.NewRequest(http.MethodPost, base+"/2/users/"+me+"/likes", strings.NewReader(`{"tweet_id":"`+id+`"}`))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req, _ = http.NewRequest(http.MethodDelete, base+"/2/users/"+me+"/likes/"+id, nil)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	var buf [512]byte
	for {
		if _, err := res.Body.Read(buf[:]); err != nil {
			break
		}
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("like %s: %d", id, res.StatusCode)
	}
	return nil
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOneLikeByWorldSize is one like over loopback HTTP into an
// emulator that keeps its world in a state file, at a small world and a
// large one: what a like costs must not grow with the world.
func BenchmarkOneLikeByWorldSize(b *testing.B) {
	for _, posts := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("posts=%d", posts), func(b *testing.B) {
			w := grownWorld(posts)
			ids := likeTargets(w)
			s, base, tok := likeServer(b, w)
			me := s.DemoUserID()
			hc := &http.Client{Timeout: time.Minute}
			b.ResetTimer()
			cpu := cpuTime()
			for i := range b.N {
				if err := likeOnce(hc, base, tok, me, ids, i); err != nil {
					b.Fatal(err)
				}
			}
			// On a shared machine the wall clock measures the neighbours
			// too; the process's CPU time is this work's own.
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

// BenchmarkLikesP50 is the sandbox's busy hour: clients liking posts at
// once over loopback HTTP, each waiting for its answer before the next.
// It reports the median latency of one like (p50-ms) beside ns/op.
func BenchmarkLikesP50(b *testing.B) {
	for _, posts := range []int{1_000, 100_000} {
		for _, clients := range []int{1, 32} {
			b.Run(fmt.Sprintf("posts=%d/clients=%d", posts, clients), func(b *testing.B) {
				w := grownWorld(posts)
				ids := likeTargets(w)
				s, base, tok := likeServer(b, w)
				me := s.DemoUserID()
				hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
				var (
					n   atomic.Int64
					mu  sync.Mutex
					lat []time.Duration
					wg  sync.WaitGroup
				)
				b.ResetTimer()
				for range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var mine []time.Duration
						for {
							i := int(n.Add(1)) - 1
							if i >= b.N {
								break
							}
							start := time.Now()
							if err := likeOnce(hc, base, tok, me, ids, i); err != nil {
								b.Error(err)
								return
							}
							mine = append(mine, time.Since(start))
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					}()
				}
				wg.Wait()
				b.StopTimer()
				if len(lat) > 0 {
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				}
			})
		}
	}
}
