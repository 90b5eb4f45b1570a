package app

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// extraChecks covers the services outside the database.
func (a *App) extraChecks(ctx context.Context) []Check {
	out := []Check{a.tokenCheck(), a.llmCheck(ctx), a.xCheck(ctx)}
	if c, ok := a.disclosureCheck(ctx); ok {
		out = append(out, c)
	}
	return out
}

// XLoginProblem says why nothing can reach X for the account: no token
// file, or one others can read. It is "" when the login is there, and in
// the sandbox, whose emulator needs none.
func (a *App) XLoginProblem() string {
	if a.Sim != nil {
		return ""
	}
	if c := a.tokenCheck(); c.Status != "ok" {
		return c.Message
	}
	return ""
}

func (a *App) tokenCheck() Check {
	path := a.Cfg.TokenFileFor(a.Account)
	st, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		// A sandbox process runs against the emulator already: telling it
		// to sign in or to use --sandbox would send it in a circle.
		sandboxed := func(flag string) bool { return flag == "--sandbox" && a.Sim != nil }
		msg := "no token file at " + path
		if h := apperr.JoinHints(apperr.Applicable(apperr.SignIn(), sandboxed)); h != "" {
			msg += ": " + h
		}
		return Check{Name: "token", Status: "not_configured", Message: msg}
	case err != nil:
		return Check{Name: "token", Status: "error", Message: err.Error()}
	case st.Mode().Perm()&0o077 != 0:
		return Check{Name: "token", Status: "error", Message: fmt.Sprintf("%s is readable by others; run `chmod 600 %s`", path, path)}
	}
	return Check{Name: "token", Status: "ok", Message: path}
}

// xProbeTTL spaces out X probes: GET /2/users/me has a small rate limit
// and agents may call health_check often.
const xProbeTTL = 30 * time.Second

// xCheck asks X who we are, with a short timeout, so a dead token or an
// unreachable X shows up as one honest line.
func (a *App) xCheck(ctx context.Context) Check {
	x, err := a.XClient()
	if err != nil {
		return Check{Name: "x", Status: "not_configured", Message: apperr.As(err).Message}
	}
	a.xProbe.mu.Lock()
	defer a.xProbe.mu.Unlock()
	if !a.xProbe.at.IsZero() && a.Now().Sub(a.xProbe.at) < xProbeTTL {
		return a.xProbe.check
	}
	chk, sub, bio := a.probeX(ctx, x)
	a.xProbe.at, a.xProbe.check, a.xProbe.subscription, a.xProbe.bio = a.Now(), chk, sub, bio
	return chk
}

// autopilotWrites are the loops that post or reply for the account.
var autopilotWrites = []string{"content", "discovery", "mentions", "targets", "threads"}

// disclosureCheck warns when the autopilot writes for an account whose bio
// (read by the X probe from /2/users/me) does not say it is automated: X's
// developer guidelines require the "Automated" label, which the API cannot
// read, and a bio that says so and who runs the account. No line when the
// autopilot writes nothing or X cannot be asked.
func (a *App) disclosureCheck(ctx context.Context) (Check, bool) {
	var loops []string
	for _, n := range autopilotWrites {
		if slices.Contains(a.Cfg.Intervals.EnabledLoops, n) {
			loops = append(loops, n)
		}
	}
	if len(loops) == 0 || a.xCheck(ctx).Status != "ok" {
		return Check{}, false
	}
	a.xProbe.mu.Lock()
	bio := a.xProbe.bio
	a.xProbe.mu.Unlock()
	if xrules.DisclosesAutomation(bio) {
		return Check{}, false
	}
	return Check{Name: "disclosure", Status: "degraded", Message: fmt.Sprintf(
		"the autopilot writes for this account (%s) but its bio does not say it is automated: X requires the \"Automated\" profile label and a bio that says so and who runs it (for example \"Automated account run by @you\")",
		strings.Join(loops, ", "))}, true
}

// xSubscription is the account's X subscription as the (cached) X probe
// read it from /2/users/me; empty when X cannot be asked.
func (a *App) xSubscription(ctx context.Context) string {
	if a.xCheck(ctx).Status != "ok" {
		return ""
	}
	a.xProbe.mu.Lock()
	defer a.xProbe.mu.Unlock()
	return a.xProbe.subscription
}

func (a *App) probeX(ctx context.Context, x *xapi.Client) (Check, string, string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	me, _, err := x.Me(ctx)
	if err != nil {
		e := apperr.As(err)
		if e.Code == apperr.XNotConfigured {
			// The token check already says why and what to do.
			return Check{Name: "x", Status: "not_configured", Message: "not authenticated"}, "", ""
		}
		return Check{Name: "x", Status: "error", Message: string(e.Code) + ": " + e.Message}, "", ""
	}
	where := "X"
	if a.Sim != nil {
		where = "the sandbox emulator"
	}
	return Check{Name: "x", Status: "ok", Message: "authenticated as @" + me.Username + " on " + where}, me.SubscriptionType, me.Description
}
