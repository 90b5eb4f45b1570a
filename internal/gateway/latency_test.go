package gateway

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// Approval latency is queued to decided, p50 and p90 overall and per
// review channel (every Telegram user one channel, each link channel its
// own).
func TestApprovalLatencyPerChannel(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		start := e.clock.Now()
		decide := func(text string, wait time.Duration, reviewer string) {
			t.Helper()
			id := e.queue(`{"text":"` + text + `"}`)
			e.clock.Advance(wait)
			if _, err := e.g.Reject(e.ctx, id, reviewer, ""); err != nil {
				t.Fatal(err)
			}
		}
		for i, w := range []time.Duration{10, 20, 30, 40, 100} {
			decide("link"+string(rune('a'+i)), w*time.Second, "link:phone")
		}
		decide("t1", time.Minute, "telegram:42")
		decide("t2", 3*time.Minute, "telegram:43")
		decide("c1", time.Hour, "alice")
		e.queue(`{"text":"still waiting"}`)
		stats, err := e.g.ApprovalLatency(e.ctx, start)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]LatencyStat{}
		for _, s := range stats {
			got[s.Channel] = s
		}
		b, _ := json.Marshal(stats)
		if stats[0].Channel != "all" || got["all"].Count != 8 {
			t.Fatalf("stats %s", b)
		}
		if l := got["link:phone"]; l.Count != 5 || l.P50 != 30 || l.P90 != 100 {
			t.Fatalf("link:phone %+v", l)
		}
		if tg := got["telegram"]; tg.Count != 2 || tg.P50 != 60 || tg.P90 != 180 {
			t.Fatalf("telegram %+v", tg)
		}
		if o := got["other"]; o.Count != 1 || o.P50 != 3600 {
			t.Fatalf("other %+v (stats %s)", o, b)
		}
	})
}
