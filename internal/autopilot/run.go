package autopilot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// LoopResult is what one iteration of a loop did.
type LoopResult struct {
	Loop string `json:"loop"`
	// Skipped says why the loop did not run (outside active hours, breaker
	// open, waiting for a rate-limit reset, stopped).
	Skipped   string    `json:"skipped,omitempty"`
	Summary   string    `json:"summary,omitempty"`
	Posted    int       `json:"posted"`
	Queued    int       `json:"queued"`
	Blocked   int       `json:"blocked"`
	Error     string    `json:"error,omitempty"`
	ErrorCode string    `json:"error_code,omitempty"`
	NextRun   time.Time `json:"next_run,omitzero"`
}

// iter is one iteration of one loop.
type iter struct {
	r    *Runner
	loop string
	// work is never cancelled by the stop signal: a gateway call that has
	// started completes and is recorded. stop is checked between steps.
	work, stop context.Context
	start      time.Time
	res        *LoopResult
	notes      []string
	// nextSend is the earliest the iteration's next post may reach X: the
	// action delay after the last one that did (zero before the first).
	nextSend time.Time
	// retryAt is the earliest the loop may run again (a policy reset).
	retryAt time.Time
	// blocked is set when the loop cannot work until configured.
	blocked string
	// suggested counts the replies handed to a person.
	suggested int
}

func (it *iter) stopping() bool { return it.stop.Err() != nil }

func (it *iter) note(format string, args ...any) {
	it.notes = append(it.notes, fmt.Sprintf(format, args...))
}

// paced makes one call that may post, through send, which hands notBefore
// to the gateway (gateway.Call.NotBefore). The pause between posts is for
// X: a call the policy only queues for approval is answered at once and
// never waits, while one it would send to X before the iteration's pause is
// over is held by the gateway, unrecorded, and sent again when the pause
// ends. send reports whether its post reached X (or may have), which starts
// the next pause. ok is false when the runner stopped before the post was
// sent; err is send's.
func (it *iter) paced(send func(notBefore time.Time) (reachedX bool, err error)) (ok bool, err error) {
	for {
		if it.stopping() {
			return false, nil
		}
		reached, err := send(it.nextSend)
		var held *gateway.PacedError
		if !errors.As(err, &held) {
			if reached {
				it.nextSend = it.r.now().Add(it.r.actionDelay())
			}
			return true, err
		}
		if it.r.sleep(it.stop, held.Until.Sub(it.r.now())) != nil {
			return false, nil
		}
	}
}

// prepare loads the persisted state and repairs what a crash left behind.
func (r *Runner) prepare(ctx context.Context) error {
	if err := r.loadState(ctx); err != nil {
		return err
	}
	r.authStop = ""
	for _, st := range r.state {
		// A state a previous process left is stale: it was running when it
		// died, or it stopped on a token that `tuitbot auth` may have
		// replaced since.
		if st.State == StateRunning || st.State == StateStopped {
			st.State = StateIdle
			if err := r.saveState(ctx, st); err != nil {
				return err
			}
		}
	}
	return r.recoverPublishing(ctx)
}

// Run is the daemon: it runs every loop when due until ctx is done, then
// returns after the iteration in progress has finished its current step
// (a gateway call that started completes and is recorded). It returns an
// error only when it cannot continue (database failure, or every enabled
// loop needs X and X rejected the token).
func (r *Runner) Run(ctx context.Context) error {
	if err := r.prepare(ctx); err != nil {
		return err
	}
	mode, approval := r.cfg.Mode, r.cfg.EffectiveApprovalMode()
	r.log.Info("autopilot started", "loops", strings.Join(r.loops, ","), "mode", mode, "approval_mode", approval,
		"active_hours", r.sched.describe())
	for {
		if ctx.Err() != nil {
			r.log.Info("autopilot stopped")
			return nil
		}
		name, at := r.nextDue()
		if name == "" {
			return apperr.New(apperr.XAuthExpired, "%s; no loop is left to run", r.authStop)
		}
		if d := at.Sub(r.now()); d > 0 {
			_ = r.sleep(ctx, d)
			continue
		}
		if r.guard != nil {
			// The lock is checked right before each iteration, so no loop
			// starts after another runner may have taken the account over.
			if err := r.guard(context.WithoutCancel(ctx)); err != nil {
				return fmt.Errorf("%w: %w", errLockLost, err)
			}
		}
		res, err := r.runOne(ctx, name, false)
		if err != nil {
			return err
		}
		r.tell(res)
	}
}

// tell gives an outcome to Options.Report.
func (r *Runner) tell(res *LoopResult) {
	if r.report != nil {
		r.report(*res)
	}
}

// nextDue picks the loop that is due first; "" when none can run.
func (r *Runner) nextDue() (string, time.Time) {
	var best string
	var at time.Time
	for _, n := range r.loops {
		if r.authStop != "" && usesX(n) {
			continue
		}
		st := r.state[n]
		due := st.NextRun
		if st.PausedUntil.After(due) {
			due = st.PausedUntil
		}
		if best == "" || due.Before(at) {
			best, at = n, due
		}
	}
	return best, at
}

// Tick runs one iteration of each of the runner's loops, skipping those
// outside the active hours, paused by the breaker or waiting for a rate-limit
// reset. The error is for failures that stop the tick itself (database).
func (r *Runner) Tick(ctx context.Context) ([]LoopResult, error) {
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	var out []LoopResult
	for _, n := range r.loops {
		if ctx.Err() != nil {
			break
		}
		res, err := r.runOne(ctx, n, true)
		if err != nil {
			return out, err
		}
		r.tell(res)
		out = append(out, *res)
	}
	return out, nil
}

// runOne runs one iteration of a loop with its gates and records the
// outcome in loop_state. The error is a database failure only; the loop's
// own failure is in the result and the state.
func (r *Runner) runOne(ctx context.Context, name string, tick bool) (*LoopResult, error) {
	st := r.state[name]
	now := r.now()
	res := &LoopResult{Loop: name}
	// State writes must land even when the stop signal arrives meanwhile.
	dbctx := context.WithoutCancel(ctx)
	held, err := r.held(dbctx, name)
	if err != nil {
		return nil, err
	}
	if held {
		st.State = StateHeld
		res.Skipped = "paused by a person; resume it to run again"
		st.NextRun = now.Add(r.interval(name))
		res.NextRun = st.NextRun
		return res, r.saveState(dbctx, st)
	}
	switch {
	case r.authStop != "" && usesX(name):
		res.Skipped = r.authStop
		st.State, st.LastError = StateStopped, r.authStop
		return res, r.saveState(dbctx, st)
	case tick && st.PausedUntil.After(now):
		if breakerState(st, r.cfg.Breaker.ErrorThreshold, now) == "open" {
			res.Skipped = fmt.Sprintf("circuit breaker open after %s; paused until %s", plural(st.ConsecutiveErrors, "consecutive error", "consecutive errors"), ts(st.PausedUntil))
		} else {
			res.Skipped = "waiting for the rate-limit reset at " + ts(st.PausedUntil)
		}
		res.NextRun = st.PausedUntil
		return res, nil
	case posts(name) && !r.sched.active(now):
		next := r.sched.nextActive(now)
		res.Skipped = "outside active hours (" + r.sched.describe() + ")"
		if next.IsZero() {
			next = now.Add(24 * time.Hour)
		} else {
			res.Skipped += "; next window " + ts(next)
		}
		st.State, st.NextRun, res.NextRun = StateOutsideHours, next, next
		r.logOutcome(tick, res, "")
		return res, r.saveState(dbctx, st)
	}
	st.State = StateRunning
	if err := r.saveState(dbctx, st); err != nil {
		return nil, err
	}
	it := &iter{r: r, loop: name, work: dbctx, stop: ctx, start: now, res: res}
	err = r.safely(it)
	res.Summary = strings.Join(it.notes, "; ")
	r.finish(it, st, err)
	res.NextRun = st.NextRun
	if err != nil {
		e := apperr.As(err)
		res.Error, res.ErrorCode = e.Message, string(e.Code)
	}
	r.logOutcome(tick, res, it.blocked)
	return res, r.saveState(dbctx, st)
}

// logOutcome says at info level what each daemon iteration did or why it
// did nothing, so `tuitbot run` is not silent while it works (or while it
// cannot); at debug level when Options.Report shows the outcome instead.
// Failures are logged where the breaker counts them; tick prints its own
// results.
func (r *Runner) logOutcome(tick bool, res *LoopResult, blocked string) {
	level := slog.LevelInfo
	if r.report != nil {
		level = slog.LevelDebug
	}
	ctx := context.Background()
	switch {
	case tick || res.Error != "":
	case res.Skipped != "":
		r.log.Log(ctx, level, "autopilot loop skipped", "loop", res.Loop, "because", res.Skipped, "next_run", ts(res.NextRun))
	case blocked != "":
		r.log.Log(ctx, level, "autopilot loop skipped", "loop", res.Loop, "because", blocked, "next_run", ts(res.NextRun))
	default:
		did := res.Summary
		if did == "" {
			did = "nothing to do"
		}
		r.log.Log(ctx, level, "autopilot loop ran", "loop", res.Loop, "did", did, "posted", res.Posted, "queued", res.Queued,
			"blocked", res.Blocked, "next_run", ts(res.NextRun))
	}
}

// safely runs the loop; a panic in one loop is that loop's failure (the
// breaker counts it), not the end of the daemon.
func (r *Runner) safely(it *iter) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("autopilot loop panicked", "loop", it.loop, "panic", fmt.Sprint(p))
			err = apperr.New(apperr.InternalError, "the %s loop failed unexpectedly: %v", it.loop, p)
		}
	}()
	l, _ := loopByName(it.loop)
	err = l.run(r, it)
	r.log.Debug("autopilot loop ran", "loop", it.loop, "posted", it.res.Posted, "queued", it.res.Queued,
		"blocked", it.res.Blocked, "summary", strings.Join(it.notes, "; "), "error", err)
	return err
}

// finish updates the state after an iteration: pacing, rate-limit waits,
// the circuit breaker and the auth stop.
func (r *Runner) finish(it *iter, st *loopState, err error) {
	end := r.now()
	st.LastRun = it.start
	st.Runs++
	st.LastResult = it.res.Summary
	next := r.plannedNext(it.loop, it.start, end)
	threshold := r.cfg.Breaker.ErrorThreshold
	wasOpen := breakerState(st, threshold, it.start) != "closed"
	code := apperr.CodeOf(err)
	switch {
	case err == nil:
		if wasOpen {
			r.log.Info("circuit breaker closed: the probe run succeeded", "loop", it.loop)
		}
		st.ConsecutiveErrors, st.PausedUntil, st.BreakerOpenedAt, st.LastError = 0, time.Time{}, time.Time{}, ""
		st.State = StateIdle
		if it.blocked != "" {
			st.State, st.LastError = StateBlocked, it.blocked
		}
	case code == apperr.XAuthExpired || code == apperr.XNotConfigured:
		st.Errors++
		r.authStop = fmt.Sprintf("X loops stopped: %s (run `tuitbot auth`, then restart the autopilot)", apperr.As(err).Message)
		st.State, st.LastError = StateStopped, r.authStop
		r.log.Error("X rejected the credentials; the X loops are stopped", "loop", it.loop, "next_step", "run `tuitbot auth`, then restart the autopilot", "error", apperr.As(err).Message)
	case isPolicyDenial(code):
		// The operator's own policy said no: not a fault of X, so the
		// breaker does not count it; wait for the policy window if known.
		st.State, st.LastError = StateIdle, describeErr(err)
		if reset := resetOf(err, end); !reset.IsZero() {
			st.State, st.PausedUntil = StateRateLimited, reset
		}
		r.log.Info("the policy denied an autopilot action", "loop", it.loop, "error", describeErr(err))
	default:
		st.Errors++
		st.ConsecutiveErrors++
		st.LastError = describeErr(err)
		st.State = StateError
		st.PausedUntil = time.Time{}
		if code == apperr.XRateLimited {
			reset := resetOf(err, end)
			if reset.IsZero() {
				reset = end.Add(15 * time.Minute)
			}
			st.State, st.PausedUntil = StateRateLimited, reset
			r.log.Warn("X rate limit reached; the loop waits for X's reset", "loop", it.loop, "until", ts(reset))
		} else {
			r.log.Warn("autopilot loop failed", "loop", it.loop, "consecutive_errors", st.ConsecutiveErrors, "error", st.LastError)
		}
		if threshold > 0 && st.ConsecutiveErrors >= threshold {
			until := end.Add(time.Duration(r.cfg.Breaker.CooldownSeconds) * time.Second)
			if until.After(st.PausedUntil) {
				st.PausedUntil = until
			}
			if !wasOpen {
				st.BreakerOpenedAt = end
			}
			st.State = StatePaused
			r.log.Warn("circuit breaker open: loop paused", "loop", it.loop, "consecutive_errors", st.ConsecutiveErrors,
				"paused_until", ts(st.PausedUntil), "last_error", st.LastError)
		}
	}
	if it.retryAt.After(next) {
		next = it.retryAt
	}
	st.NextRun = next
}

// plannedNext is when a loop runs next in its normal rhythm: its interval
// plus jitter from the start of this run, or the next preferred slot for
// the content loop, never before the run ended.
func (r *Runner) plannedNext(loop string, start, end time.Time) time.Time {
	next := start.Add(r.jitter(r.interval(loop)))
	if loop == LoopContent {
		if slot, ok := r.sched.nextSlot(end); ok {
			next = slot.Add(r.jitter(10*time.Minute) - 10*time.Minute)
			if !next.After(end) {
				next = slot
			}
		}
	}
	if next.Before(end) {
		next = end
	}
	return next
}

func isPolicyDenial(c apperr.Code) bool {
	switch c {
	case apperr.PolicyBlocked, apperr.PolicyRateLimited, apperr.PolicyHardRule, apperr.PolicyUserRule, apperr.PolicyBudget:
		return true
	}
	return false
}

func describeErr(err error) string {
	e := apperr.As(err)
	return string(e.Code) + ": " + e.Message
}

// resetOf reads when a rate limit resets from an error's extras.
func resetOf(err error, now time.Time) time.Time {
	e := apperr.As(err)
	if e == nil || e.Extra == nil {
		return time.Time{}
	}
	switch v := e.Extra["retry_after_ms"].(type) {
	case int64:
		return now.Add(time.Duration(v) * time.Millisecond)
	case int:
		return now.Add(time.Duration(v) * time.Millisecond)
	case float64:
		return now.Add(time.Duration(v) * time.Millisecond)
	}
	if s, ok := e.Extra["rate_limit_reset"].(string); ok {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
