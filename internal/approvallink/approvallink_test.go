package approvallink

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// reviewPolicy routes every call to approval and lets the approved replay
// run, as the real engine does.
type reviewPolicy struct{}

func (reviewPolicy) Reserve(_ context.Context, _ *sql.Tx, req policy.Request) (policy.Decision, policy.Reservation, error) {
	if req.BypassApproval {
		return policy.Decision{Outcome: policy.Allow}, policy.Reservation{}, nil
	}
	return policy.Decision{Outcome: policy.RequireApproval, RuleID: "user:review", Reason: "review"}, policy.Reservation{}, nil
}

func (reviewPolicy) Release(context.Context, policy.Reservation) error { return nil }

// gwQueue decides through a real gateway.
type gwQueue struct{ g *gateway.Gateway }

func (q gwQueue) Item(ctx context.Context, _ string, id int64) (*gateway.ApprovalItem, error) {
	return q.g.Item(ctx, id)
}

func (q gwQueue) Decide(ctx context.Context, _ string, id int64, approve bool, d gateway.Decision) (*gateway.ApprovalItem, error) {
	if approve {
		it, _, err := q.g.ApproveWith(ctx, id, d)
		return it, err
	}
	return q.g.RejectWith(ctx, id, d)
}

type env struct {
	t        *testing.T
	ctx      context.Context
	clk      *clock.Fake
	g        *gateway.Gateway
	svc      *Service
	executed atomic.Int64
	mu       sync.Mutex
	posted   []string // the text of every executed post, in order
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	db := storetest.Open(t, store.Options{Now: clk.Now})
	e := &env{t: t, ctx: context.Background(), clk: clk}
	g, err := gateway.New(e.ctx, gateway.Options{DB: db, Policy: reviewPolicy{}, Now: clk.Now, AccountID: "default",
		Mode: func() (string, bool) { return policy.ModeAutopilot, true }, LockDir: filepath.Join(t.TempDir(), "locks")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	g.Register(&gateway.Action{Tool: "x_post_tweet", Category: policy.CatWrite, EditableText: "text",
		Execute: func(_ context.Context, params json.RawMessage) (gateway.Result, error) {
			var p struct{ Text string }
			if err := json.Unmarshal(params, &p); err != nil {
				return gateway.Result{}, err
			}
			e.mu.Lock()
			e.posted = append(e.posted, p.Text)
			e.mu.Unlock()
			e.executed.Add(1)
			return gateway.Result{Data: map[string]string{"id": "1"}}, nil
		}})
	e.g = g
	e.svc, err = New(Options{DB: db, KeyPath: filepath.Join(t.TempDir(), KeyFile), BaseURL: "https://phone.example/", TTL: time.Hour,
		Queue: gwQueue{g}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// queue routes a post to approval and returns the item.
func (e *env) queue(text string) *gateway.ApprovalItem {
	e.t.Helper()
	r, err := e.g.Do(e.ctx, gateway.Call{Tool: "x_post_tweet", Params: map[string]string{"text": text}})
	if err != nil || r.ApprovalID == 0 {
		e.t.Fatalf("queue: %+v %v", r, err)
	}
	it, err := e.g.Item(e.ctx, r.ApprovalID)
	if err != nil {
		e.t.Fatal(err)
	}
	return it
}

func tokenOf(t *testing.T, u string) string {
	t.Helper()
	_, tok, ok := strings.Cut(u, "/a/")
	if !ok || !strings.HasPrefix(u, "https://phone.example/a/") {
		t.Fatalf("link %q", u)
	}
	return tok
}

func refusal(t *testing.T, err error, status int, words string) {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) || r.Status != status || !strings.Contains(r.Message, words) {
		t.Fatalf("err = %v, want %d saying %q", err, status, words)
	}
}

// A view link shows without changing anything, and its POST decides once,
// recorded as link:<channel>; the link then says it was used.
func TestViewThenApproveOnce(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		it := e.queue("from my phone")
		links, err := e.svc.Links(e.ctx, "default", it, "phone")
		if err != nil {
			t.Fatal(err)
		}
		view := tokenOf(t, links.View)
		for i := 0; i < 3; i++ { // prefetchers and scanners open it too
			l, err := e.svc.Check(e.ctx, view)
			if err != nil || l.Action != View || l.Item.ID != it.ID || l.Channel != "phone" {
				t.Fatalf("check: %+v %v", l, err)
			}
		}
		if got, _ := e.g.Item(e.ctx, it.ID); got.Status != gateway.ApprovalPending || e.executed.Load() != 0 {
			t.Fatal("viewing changed the item")
		}
		l, _ := e.svc.Check(e.ctx, view)
		if _, err := e.svc.Act(e.ctx, view, "wrong", Approve); err == nil {
			t.Fatal("a POST without the link's CSRF value acted")
		}
		done, err := e.svc.Act(e.ctx, view, l.CSRF, Approve)
		if err != nil || done.Status != gateway.ApprovalExecuted || done.ReviewedBy != "link:phone" || e.executed.Load() != 1 {
			t.Fatalf("act: %+v %v executed %d", done, err, e.executed.Load())
		}
		_, err = e.svc.Check(e.ctx, view)
		refusal(t, err, http.StatusGone, "already used")
		_, err = e.svc.Check(e.ctx, tokenOf(t, links.Approve))
		refusal(t, err, http.StatusGone, "already decided")
	})
}

// A forged or damaged token is 404, whatever part was changed.
func TestForgedLinksAreNotFound(t *testing.T) {
	e := newEnv(t)
	it := e.queue("forge me")
	links, err := e.svc.Links(e.ctx, "default", it, "phone")
	if err != nil {
		t.Fatal(err)
	}
	tok := tokenOf(t, links.Approve)
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	for name, bad := range map[string]string{
		"mac":      flip(len(raw) - 1),
		"action":   flip(1),
		"item":     flip(9),
		"expiry":   flip(17),
		"nonce":    flip(20),
		"garbage":  "not-a-token",
		"empty":    "",
		"too long": strings.Repeat("A", 500),
	} {
		_, err := e.svc.Check(e.ctx, bad)
		if name == "nonce" {
			refusal(t, err, http.StatusNotFound, "not valid")
			continue
		}
		refusal(t, err, http.StatusNotFound, "not valid")
		if _, err := e.svc.Act(e.ctx, bad, "x", Approve); err == nil {
			t.Errorf("%s: acted", name)
		}
	}
	if e.executed.Load() != 0 {
		t.Fatal("a forged link executed")
	}
}

// Any edit kills every outstanding link: 410 saying so.
func TestEditKillsLinks(t *testing.T) {
	e := newEnv(t)
	it := e.queue("before")
	links, err := e.svc.Links(e.ctx, "default", it, "phone")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.g.Edit(e.ctx, it.ID, "after"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{links.View, links.Approve, links.Reject} {
		_, err := e.svc.Check(e.ctx, tokenOf(t, u))
		refusal(t, err, http.StatusGone, "edited")
	}
	_, err = e.svc.Act(e.ctx, tokenOf(t, links.Approve), links.ApproveCSRF, "")
	refusal(t, err, http.StatusGone, "edited")
	if e.executed.Load() != 0 {
		t.Fatal("a link from before the edit executed")
	}
	// Links issued after the edit work.
	cur, _ := e.g.Item(e.ctx, it.ID)
	fresh, err := e.svc.Links(e.ctx, "default", cur, "phone")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Act(e.ctx, tokenOf(t, fresh.Reject), fresh.RejectCSRF, ""); err != nil {
		t.Fatal(err)
	}
}

// Expiry (the TTL, never past the item's own), revocation and key
// rotation each stop a link, with their own answer.
func TestExpiryRevocationRotation(t *testing.T) {
	e := newEnv(t)
	it := e.queue("expires")
	links, err := e.svc.Links(e.ctx, "default", it, "phone")
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(61 * time.Minute)
	_, err = e.svc.Check(e.ctx, tokenOf(t, links.View))
	refusal(t, err, http.StatusGone, "expired")

	it2 := e.queue("revoked")
	l2, _ := e.svc.Links(e.ctx, "default", it2, "phone")
	if n, err := e.svc.Revoke(e.ctx, "default", it2.ID); err != nil || n != 3 {
		t.Fatalf("revoke: %d %v", n, err)
	}
	_, err = e.svc.Check(e.ctx, tokenOf(t, l2.View))
	refusal(t, err, http.StatusGone, "revoked")

	it3 := e.queue("rotated")
	l3, _ := e.svc.Links(e.ctx, "default", it3, "phone")
	if n, err := e.svc.RotateKey(e.ctx); err != nil || n != 3 {
		t.Fatalf("rotate: %d %v", n, err)
	}
	_, err = e.svc.Check(e.ctx, tokenOf(t, l3.Approve))
	refusal(t, err, http.StatusNotFound, "not valid")
	st, err := os.Stat(e.svc.o.KeyPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v %v", st.Mode(), err)
	}
	// The item's expiry caps a link's.
	e.svc.o.TTL = 48 * time.Hour
	it4 := e.queue("short")
	l4, _ := e.svc.Links(e.ctx, "default", it4, "phone")
	l, err := e.svc.Check(e.ctx, tokenOf(t, l4.View))
	if err != nil {
		t.Fatal(err)
	}
	if exp, _ := store.ParseTime(it4.ExpiresAt); l.Expires.After(exp) {
		t.Fatalf("link expires %v after the item %v", l.Expires, exp)
	}
}

// Two devices tapping two links of one item at once give one decision.
func TestTwoDevicesOneDecision(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		it := e.queue("race")
		a, _ := e.svc.Links(e.ctx, "default", it, "phone")
		b, _ := e.svc.Links(e.ctx, "default", it, "laptop")
		taps := []struct{ tok, csrf string }{
			{tokenOf(t, a.Approve), a.ApproveCSRF}, {tokenOf(t, b.Approve), b.ApproveCSRF},
			{tokenOf(t, a.Approve), a.ApproveCSRF}, {tokenOf(t, b.Reject), b.RejectCSRF},
		}
		var wg sync.WaitGroup
		var ok atomic.Int64
		start := make(chan struct{})
		for _, tap := range taps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, err := e.svc.Act(context.Background(), tap.tok, tap.csrf, ""); err == nil {
					ok.Add(1)
				} else {
					var r *Refusal
					if !errors.As(err, &r) || r.Status != http.StatusGone {
						t.Errorf("losing tap: %v", err)
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		if ok.Load() != 1 || e.executed.Load() > 1 {
			t.Fatalf("%d taps decided, %d executions; want one decision", ok.Load(), e.executed.Load())
		}
	})
}

// A Telegram button's data fits 64 bytes and its MAC covers the item's
// current content.
func TestCallbackMAC(t *testing.T) {
	e := newEnv(t)
	it := e.queue("tg")
	data, err := e.svc.SignCallback("default", it, 123456789, true)
	if err != nil || len(data) > 64 {
		t.Fatalf("callback data %q (%d bytes) %v", data, len(data), err)
	}
	mac := data[strings.LastIndex(data, ":")+1:]
	if !e.svc.CheckCallback("default", it, 123456789, true, mac) {
		t.Fatal("own MAC refused")
	}
	for name, ok := range map[string]bool{
		"other press": e.svc.CheckCallback("default", it, 123456789, false, mac),
		"other row":   e.svc.CheckCallback("default", it, 123456780, true, mac),
		"other acct":  e.svc.CheckCallback("brand_b", it, 123456789, true, mac),
	} {
		if ok {
			t.Errorf("%s accepted", name)
		}
	}
	edited := *it
	edited.Params = json.RawMessage(`{"text":"changed"}`)
	if e.svc.CheckCallback("default", &edited, 123456789, true, mac) {
		t.Fatal("a MAC over the old content accepted after an edit")
	}
}

func TestLimiter(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	l := NewLimiter(clk.Now)
	for i := 0; i < 10; i++ {
		if l.Blocked("1.2.3.4") {
			t.Fatalf("blocked after %d failures", i)
		}
		l.Fail("1.2.3.4")
	}
	if !l.Blocked("1.2.3.4") || l.Blocked("5.6.7.8") {
		t.Fatal("the eleventh try is not refused, or another client is")
	}
	clk.Advance(time.Minute)
	if l.Blocked("1.2.3.4") {
		t.Fatal("still refused after the minute")
	}
}
