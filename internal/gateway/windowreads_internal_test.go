package gateway

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/xrules"
)

// TestWindowReadsShareTheNextRead: calls that ask for the window while a
// read runs wait for one read that starts after it, from the earliest of
// their windows, and each gets the posts of its own window; the running
// read's caller gets its own read.
func TestWindowReadsShareTheNextRead(t *testing.T) {
	base := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	all := []xrules.Posted{{Text: "old", At: ts(at(0))}, {Text: "middle", At: ts(at(10))}, {Text: "new", At: ts(at(20))}}

	var (
		mu     sync.Mutex
		sinces []time.Time
	)
	started, release := make(chan struct{}), make(chan struct{})
	do := func(_ context.Context, since time.Time) ([]xrules.Posted, error) {
		mu.Lock()
		sinces = append(sinces, since)
		first := len(sinces) == 1
		mu.Unlock()
		if first {
			close(started)
			<-release
		}
		var out []xrules.Posted
		for _, p := range all {
			if p.At >= ts(since) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	var w windowReads
	texts := func(ps []xrules.Posted) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Text)
		}
		return out
	}
	type result struct {
		texts []string
		err   error
	}
	ask := func(since time.Time) chan result {
		ch := make(chan result, 1)
		go func() {
			ps, err := w.read(context.Background(), since, do)
			ch <- result{texts(ps), err}
		}()
		return ch
	}
	// waitFor yields until the reads' state satisfies cond.
	waitFor := func(cond func() bool) {
		t.Helper()
		for {
			w.mu.Lock()
			ok := cond()
			w.mu.Unlock()
			if ok {
				return
			}
			runtime.Gosched()
		}
	}

	first := ask(at(20))
	<-started
	later := ask(at(10))
	waitFor(func() bool { return w.next != nil })
	earliest := ask(at(0))
	waitFor(func() bool { return w.next != nil && w.next.since.Equal(at(0)) })
	close(release)

	for _, tc := range []struct {
		name string
		ch   chan result
		want []string
	}{
		{"first", first, []string{"new"}},
		{"later", later, []string{"middle", "new"}},
		{"earliest", earliest, []string{"old", "middle", "new"}},
	} {
		r := <-tc.ch
		if r.err != nil || !slices.Equal(r.texts, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.name, r.texts, r.err, tc.want)
		}
	}
	mu.Lock()
	if want := []time.Time{at(20), at(0)}; !slices.EqualFunc(sinces, want, time.Time.Equal) {
		t.Errorf("reads from %v, want %v: one read for the calls that waited, from the earliest window", sinces, want)
	}
	mu.Unlock()
	// Nothing is left running or waiting.
	waitFor(func() bool { return !w.running && w.next == nil })
}
