package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestHandOffCheckOneProcessAtATime: the periodic check of an account's
// hand-offs reads X only while it holds the account's check lock, so a
// second process of the home (holding it here) leaves it alone: no read
// reaches X. Once the lock is free the check reads and records its look.
func TestHandOffCheckOneProcessAtATime(t *testing.T) {
	ctx := context.Background()
	a, h := likeHandedOff(t, Options{Sandbox: true, RequireDB: true})
	_, srv := a.Sim.Current()
	reads := func() int64 {
		var n int64
		for ep, c := range srv.Billing().Requests {
			if strings.HasPrefix(ep, "GET ") {
				n += c
			}
		}
		return n
	}
	other, err := a.homeLock("handoffs:check:default", "handoff-check-default.lock")(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := reads()
	if err := a.CheckAllHandOffs(ctx); err != nil {
		t.Fatal(err)
	}
	if n := reads() - before; n != 0 {
		t.Fatalf("%d reads of X while another process holds the account's check", n)
	}
	if got, _ := a.Gateway.GetHandOff(ctx, h.ID); got.CheckedAt != "" {
		t.Fatalf("the hand-off was checked while another process holds the check: %+v", got)
	}
	other.Release()
	if err := a.CheckAllHandOffs(ctx); err != nil {
		t.Fatal(err)
	}
	if reads() == before {
		t.Fatal("no read of X once the lock is free")
	}
	if got, _ := a.Gateway.GetHandOff(ctx, h.ID); got.CheckedAt == "" {
		t.Fatalf("the look is not recorded: %+v", got)
	}
}

// TestHeldHandOffCheckWaitsForRelease: a server's services started with
// HoldBackground make their first hand-off check when the first answer is
// out (ReleaseBackground), not as they start: the check reads the
// database and X beside the call that waited for the start.
func TestHeldHandOffCheckWaitsForRelease(t *testing.T) {
	ctx := context.Background()
	a, h := likeHandedOff(t, Options{Sandbox: true, RequireDB: true, HoldBackground: true})
	if err := a.StartNotifications(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Gateway.GetHandOff(ctx, h.ID); got.CheckedAt != "" {
		t.Fatalf("the hand-off was checked before the release: %+v", got)
	}
	a.ReleaseBackground()
	if got, _ := a.Gateway.GetHandOff(ctx, h.ID); got.CheckedAt == "" {
		t.Fatalf("the release made no hand-off check: %+v", got)
	}
}

// likeHandedOff is a pay-per-use sandbox app built with opts, closed when
// the test ends, and a like of another user's post handed off to a person.
func likeHandedOff(t *testing.T, opts Options) (*App, *gateway.HandOff) {
	t.Helper()
	ctx := context.Background()
	cfg := config.Default()
	cfg.Home = filepath.Join(t.TempDir(), "sandbox")
	cfg.XAPI.Access = config.AccessPayPerUse
	a, err := New(ctx, &cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	_, srv := a.Sim.Current()
	w := srv.World()
	post := ""
	for _, p := range w.Tweets {
		if p.AuthorID != w.DemoUserID && p.RetweetOf == "" {
			post = p.ID
		}
	}
	h, err := a.Gateway.HandOff(ctx, gateway.HandOffRequest{Effect: "x_like_tweet", TweetID: post, Reason: "a person likes"})
	if err != nil {
		t.Fatal(err)
	}
	return a, h
}
