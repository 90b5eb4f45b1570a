package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// handOffReadSize is how many of the account's latest posts, likes and
// follows a hand-off check reads: owned reads cost $0.001 a resource, so
// a check costs at most 3 × this, and a person does a hand-off soon after
// it is made, or it is among the newest anyway.
const handOffReadSize = 20

// intentBase is where X's Web Intents of this process live: the
// sandbox's emulator, which serves them, or x_api.intent_base_url.
func (a *App) intentBase() string {
	if s := a.top().Sim; s != nil {
		if cur, _ := s.Current(); cur != "" {
			return cur
		}
	}
	return a.Cfg.XAPI.IntentBaseURL
}

// username is the handle of a user id as tuitbot knows it (the authors
// discovery saw), for a follow's hand-off link: X's follow intent takes a
// handle. It reads nothing from X: a refusal costs nothing, and without
// the handle the link opens the profile, whose Follow button does the same.
func (a *App) username(wf *workflow.Service) func(ctx context.Context, id string) (string, error) {
	return func(ctx context.Context, id string) (string, error) {
		if wf.Discovery == nil {
			return "", nil
		}
		return wf.Discovery.Username(ctx, id)
	}
}

// ownedReads reads what a hand-off check needs through the account's
// client: its own latest posts, likes and follows.
type ownedReads struct{ x *xapi.Client }

func (o ownedReads) OwnPosts(ctx context.Context) ([]gateway.OwnPost, error) {
	p, err := o.x.UserTweets(ctx, "", xapi.ListParams{MaxResults: handOffReadSize})
	if err != nil {
		return nil, err
	}
	out := make([]gateway.OwnPost, 0, len(p.Data))
	for _, t := range p.Data {
		op := gateway.OwnPost{ID: t.ID, CreatedAt: t.CreatedAt}
		for _, r := range t.ReferencedTweets {
			switch r.Type {
			case "replied_to":
				op.RepliesTo = r.ID
			case "quoted":
				op.Quotes = r.ID
			}
		}
		out = append(out, op)
	}
	return out, nil
}

func (o ownedReads) LikedPosts(ctx context.Context) ([]string, error) {
	p, err := o.x.LikedTweets(ctx, "", xapi.ListParams{MaxResults: handOffReadSize})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(p.Data))
	for i, t := range p.Data {
		ids[i] = t.ID
	}
	return ids, nil
}

func (o ownedReads) Following(ctx context.Context) ([]string, error) {
	p, err := o.x.Following(ctx, "", xapi.ListParams{MaxResults: handOffReadSize})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(p.Data))
	for i, u := range p.Data {
		ids[i] = u.ID
	}
	return ids, nil
}

// CheckHandOffs looks on X whether a person did this account's open
// hand-offs (see gateway.CheckHandOffs); force checks each now.
func (a *App) CheckHandOffs(ctx context.Context, force bool) ([]gateway.HandOff, error) {
	g, err := a.RequireGateway()
	if err != nil {
		return nil, err
	}
	x, err := a.XClient()
	if err != nil {
		return nil, err
	}
	return g.CheckHandOffs(ctx, ownedReads{x}, force)
}

// startHandOffChecks runs the periodic hand-off check of the home in
// this process until ctx ends or the app closes. Every long-running
// process where hand-offs are made starts it (mcp serve on either
// transport, run, web), so a person's act is found whether or not
// notifications or the autopilot run. Each account's pass holds that
// account's lock (a file on SQLite, a session lock on PostgreSQL), so
// one process at a time reads X for it, and each hand-off's last check
// time keeps the next process from reading again before
// x_api.handoff_check_seconds.
func (a *App) startHandOffChecks(ctx context.Context) {
	if a.DB == nil {
		return
	}
	every := time.Duration(a.Cfg.XAPI.HandOffCheckS) * time.Second
	if every <= 0 {
		every = 5 * time.Minute
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	check := func() {
		if err := a.CheckAllHandOffs(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("hand-offs: the periodic check failed; the next one tries again", "error", err)
		}
	}
	// A held start (a server before its first answer) makes the first
	// check at the release, in the releasing goroutine; the rest follow
	// from here.
	a.held.whenReleased(func(atRelease bool) {
		if atRelease {
			check()
		}
		wg.Go(func() {
			t := time.NewTicker(every)
			defer t.Stop()
			if !atRelease {
				check()
			}
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				check()
			}
		})
	})
	a.OnClose(func() error {
		a.held.close()
		cancel()
		wg.Wait()
		return nil
	})
}

// CheckAllHandOffs runs the periodic check for every account this
// process serves that has open hand-offs, each under the account's check
// lock (an account another process is checking right now is left to it),
// and logs each hand-off it resolves.
func (a *App) CheckAllHandOffs(ctx context.Context) error {
	r := a.top()
	var errs []error
	for _, name := range r.Cfg.AccountNames() {
		acc, err := r.ForAccount(name)
		if err != nil || acc.Gateway == nil {
			// Not served by this process: its own process checks it.
			continue
		}
		open, err := acc.Gateway.HandOffs(ctx, gateway.HandOffOpen, 1)
		if err != nil {
			errs = append(errs, fmt.Errorf("account %s: %w", name, err))
			continue
		}
		if len(open) == 0 {
			continue
		}
		lease, err := r.homeLock("handoffs:check:"+name, "handoff-check-"+name+".lock")(ctx)
		if err != nil {
			continue
		}
		done, err := acc.CheckHandOffs(ctx, false)
		lease.Release()
		if err != nil {
			errs = append(errs, fmt.Errorf("account %s: %w", name, err))
		}
		for _, h := range done {
			r.Log.Info("hand-off resolved", "account", name, "handoff_id", h.ID, "effect", h.Effect, "status", h.Status)
		}
	}
	return errors.Join(errs...)
}
